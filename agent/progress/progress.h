/* progress: the live progress events of a plan (floor 1), our extension
 * of the protocol: opt-in with [agent] progress_routing_key, published by
 * the daemon (agent/daemon/daemon-progress.c) to the result exchange with
 * that routing key, and printed by muranoagent-send --follow. A stock
 * engine never binds that key, so it never sees one. docs/operations.md
 * describes the events; docs/compatibility.md the extension.
 *
 * A message is a JSON array of one or more events of one plan, in order;
 * an event is a JSON object:
 *
 *   {"progress": 1, "plan": ID, "seq": N, "event": KIND, "time": ISO8601,
 *    ...the kind's fields}
 *
 * Events are gathered for up to PROGRESS_BATCH_MS (and at most
 * PROGRESS_BATCH_EVENTS events or PROGRESS_BATCH_BYTES bytes) and sent as
 * one message; the daemon sends a plan's last events right before its
 * result. A burst of short plans then costs one message per plan, sent
 * with the result, not one per event.
 *
 * "seq" counts a plan's events from 1, so a reader sees what it missed.
 * The kinds and their fields:
 *
 *   accepted         (none): the plan passed its checks and starts
 *   script_started   "script", "pid"
 *   output           "script", "stream" ("stdout"/"stderr"), "text",
 *                    "dropped" (bytes of the stream left out before this
 *                    chunk by the limits below)
 *   script_finished  "script", "exit_code", "duration_ms", "failure"
 *                    (a sentence, or null when it ran to its own end)
 *   plan_finished    "error_code", "duration_ms"
 *
 * Output is bounded: a chunk holds at most PROGRESS_CHUNK_MAX bytes of one
 * stream, and each stream sends at most one chunk per PROGRESS_INTERVAL_MS;
 * what comes faster is counted in the next chunk's "dropped". */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROGRESS_FORMAT       1
#define PROGRESS_CHUNK_MAX    4096
#define PROGRESS_INTERVAL_MS  250
#define PROGRESS_BATCH_MS     100
#define PROGRESS_BATCH_EVENTS 32
#define PROGRESS_BATCH_BYTES  16384

typedef enum ProgressKind {
        PROGRESS_ACCEPTED,
        PROGRESS_SCRIPT_STARTED,
        PROGRESS_OUTPUT,
        PROGRESS_SCRIPT_FINISHED,
        PROGRESS_PLAN_FINISHED,
} ProgressKind;

typedef struct ProgressEvent {
        ProgressKind kind;
        const char *plan; /* the plan's ID */
        uint64_t seq;
        int64_t time_ms;      /* wall clock, milliseconds since the epoch */
        const char *script;   /* SCRIPT_STARTED, OUTPUT, SCRIPT_FINISHED */
        pid_t pid;            /* SCRIPT_STARTED */
        int stream;           /* OUTPUT: 1 stdout, 2 stderr */
        const char *text;     /* OUTPUT: bytes, made valid UTF-8 (U+FFFD) */
        size_t text_len;      /* OUTPUT */
        uint64_t dropped;     /* OUTPUT */
        int exit_code;        /* SCRIPT_FINISHED */
        const char *failure;  /* SCRIPT_FINISHED: NULL when none */
        int error_code;       /* PLAN_FINISHED */
        uint64_t duration_ms; /* SCRIPT_FINISHED, PLAN_FINISHED */
} ProgressEvent;

/* The message body of e in *ret (malloc'ed, NUL-terminated, compact JSON),
 * its length in *ret_len. Returns 0, -EINVAL for a kind out of range, or
 * -ENOMEM. */
int progress_encode(const ProgressEvent *e, char **ret, size_t *ret_len);

/* The events waiting to go as one message. */
typedef struct ProgressBatch {
        char *text; /* owned: "[" and the events so far, comma-separated */
        size_t len, cap;
        unsigned n;
} ProgressBatch;

/* Encode e and add it to b. Returns 0, or as progress_encode(). */
int progress_batch_add(ProgressBatch *b, const ProgressEvent *e);

/* It holds PROGRESS_BATCH_EVENTS events or PROGRESS_BATCH_BYTES bytes. */
bool progress_batch_full(const ProgressBatch *b);

/* The message of the events added since the last take: *ret points into
 * b, valid until the next call on b; NULL when there are none. The batch
 * is empty afterwards. */
void progress_batch_take(ProgressBatch *b, const char **ret, size_t *ret_len);

/* Free what b holds; it may be used again. */
void progress_batch_clear(ProgressBatch *b);

/* Whether doc is a progress event of plan (NULL: of any plan). */
bool progress_is_event(const json_t *doc, const char *plan);

/* A line for people (malloc'ed, several lines for output, each ending in a
 * newline) describing event doc, which progress_is_event() accepted:
 *
 *   08:15:02.120 #1 accepted
 *   08:15:02.131 #2 script deploy started (pid 1234)
 *   08:15:02.380 #3 script deploy | a line of its output
 *   08:15:05.402 #4 script deploy finished: exit code 0 in 3.3 s
 *   08:15:05.410 #5 plan finished: ErrorCode 0 in 3.3 s
 *
 * (times in UTC). Returns 0 or -ENOMEM. */
int progress_describe(const json_t *doc, char **ret);

/* The pending output of one stream: at most PROGRESS_CHUNK_MAX bytes wait
 * for the next chunk; what comes beyond is counted as dropped. */
typedef struct ProgressOutput {
        char buf[PROGRESS_CHUNK_MAX];
        size_t len;
        uint64_t dropped;
} ProgressOutput;

/* Offer len more bytes of the stream. */
void progress_output_add(ProgressOutput *po, const char *data, size_t len);

/* Take the next chunk into out (PROGRESS_CHUNK_MAX bytes), its length in
 * *ret_len and the bytes dropped before it in *ret_dropped. The end of a
 * UTF-8 sequence that has not all arrived stays for the next chunk, unless
 * final (the stream is over). Returns true when there is a chunk to send
 * (text or a drop count). */
bool progress_output_take(ProgressOutput *po, bool final, char *out, size_t *ret_len,
                          uint64_t *ret_dropped);
