/* The daemon's work items, done by daemon-work.c: what the pump
 * (daemon-pump.c) hands to libuv's thread pool, one DaemonWork each. On the
 * pool, an item touches only its own DaemonWork and the journal; the pump's
 * after-work callback then carries on, on the loop, with what it left
 * there. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "daemon/daemon-internal.h"
#include "log/log.h"
#include "plan/plan.h"

typedef enum WorkKind {
        WORK_STORE,       /* a delivery: journal_put_plan, then ack */
        WORK_PREPARE,     /* a pending entry: load, check, stamp, validate */
        WORK_INTERRUPTED, /* an entry that was running when the agent died */
        WORK_RESULT,      /* a finished plan's result: journal_put_result */
        WORK_REMOVE,      /* a confirmed result: journal_remove with a done record */
        WORK_DROP,        /* an entry that goes without a record: journal_remove */
        WORK_SPACE,       /* the storage was full: journal_space, has room come back? */
        WORK_CANCEL,      /* a cancel request: find the queued plan, answer it */
        WORK_CHECKPOINT,  /* idle: journal_checkpoint */
} WorkKind;

typedef enum WorkOutcome {
        OUTCOME_NONE,  /* nothing more to do for the entry now */
        OUTCOME_RUN,   /* valid: run it */
        OUTCOME_RETRY, /* a disk error: try again later */
} WorkOutcome;

typedef struct DaemonWork {
        uv_work_t req;
        Daemon *d;
        WorkKind kind;
        char ts[JOURNAL_TS_MAX];
        int rc;

        /* WORK_STORE */
        uint64_t tag;
        uint8_t *body;
        size_t body_len;
        bool oversize;
        /* The plan could not be stored (-ENOSPC, -EDQUOT, -EFBIG), so an
         * answer was stored instead, with rc its outcome; 0 otherwise. */
        int refused;
        char *msg_id; /* WORK_DROP too: the plan's ID, for the log (NULL: none) */
        char *reply_to;
        uint8_t *sig;
        size_t sig_len;

        /* WORK_PREPARE and WORK_INTERRUPTED, out */
        WorkOutcome outcome;
        json_t *plan;        /* OUTCOME_RUN; WORK_RESULT: the result document, in */
        PlanText *plan_text; /* OUTCOME_RUN: where the plan keeps its Files' bodies, or NULL */
        json_t *source_id;   /* OUTCOME_RUN */
        json_t *plan_reply_to;
        bool resume; /* WORK_INTERRUPTED, OUTCOME_RUN: it resumes from its call log */
        char *note;  /* a sentence to log on the loop thread, with its level */
        LogLevel note_level;

        /* WORK_RESULT */
        char *text;
        size_t len;

        /* WORK_SPACE, out */
        JournalSpace space;

        /* WORK_CANCEL: the request (read-only on the pool) */
        struct DaemonCancel *cancel;

        struct DaemonWork *next; /* in Daemon.stalled */
} DaemonWork;

/* A zeroed item of kind for entry ts (NULL: no entry yet), or NULL when out
 * of memory. */
DaemonWork *daemon_work_new(WorkKind kind, const char *ts);
/* Accepts NULL. */
void daemon_work_free(DaemonWork *w);
/* The text of an error result for a plan with source_id and reply_to, as
 * the reference's from_error() words it; with_reply_to: with ReplyTo
 * (executed plans), else only when results are routed by it. *ret_doc
 * (may be NULL) gets the document. Returns 0 or -ENOMEM. */
int daemon_error_result_text(Daemon *d, const json_t *source_id, const json_t *reply_to,
                             bool with_reply_to, int code, const char *message, char **ret,
                             json_t **ret_doc);
/* The SourceID and ReplyTo of result document doc, for journal_put_result()
 * (borrowed from doc). */
JournalResultIds daemon_result_ids(const json_t *doc);
/* uv_queue_work()'s work callback, on a pool thread: the journal work of
 * the item req->data, whose rc, outcome and note tell how it went. */
void daemon_work_run(uv_work_t *req);
