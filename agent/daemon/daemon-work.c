/* The daemon's work items on libuv's thread pool (daemon-work.h): storing
 * a delivery, preparing a pending entry (load, signature, parse, done
 * record, stamp, validation), answering an interrupted one, and the
 * journal calls for a result and a removal. Each reads the Daemon's
 * configuration and key, works on the journal, and leaves what came of it
 * in its own DaemonWork, with what to log as a note: logging is done on
 * the loop. */
#include <errno.h>
#include <limits.h>
#include <openssl/crypto.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/daemon-cancel.h"
#include "daemon/daemon-work.h"
#include "journal/journal-calls.h"
#include "plan/plan.h"
#include "result/result.h"
#include "util/macro.h"
#include "util/pyjson.h"

DaemonWork *daemon_work_new(WorkKind kind, const char *ts)
{
        DaemonWork *w = calloc(1, sizeof(*w));

        if (w) {
                w->kind = kind;
                if (ts)
                        snprintf(w->ts, sizeof(w->ts), "%s", ts);
        }
        return w;
}

void daemon_work_free(DaemonWork *w)
{
        if (!w)
                return;
        free(w->body);
        free(w->msg_id);
        free(w->reply_to);
        free(w->sig);
        json_decref(w->plan);
        plan_text_free(w->plan_text);
        json_decref(w->source_id);
        json_decref(w->plan_reply_to);
        free(w->note);
        free(w->text);
        free(w);
}

static void note(DaemonWork *w, LogLevel level, const char *fmt, ...) _printf_(3, 4);
static void note(DaemonWork *w, LogLevel level, const char *fmt, ...)
{
        va_list ap;

        free(w->note);
        va_start(ap, fmt);
        if (vasprintf(&w->note, fmt, ap) < 0)
                w->note = NULL;
        va_end(ap);
        w->note_level = level;
}

int daemon_error_result_text(Daemon *d, const json_t *source_id, const json_t *reply_to,
                             bool with_reply_to, int code, const char *message, char **ret,
                             json_t **ret_doc)
{
        _cleanup_json_ json_t *res = NULL;
        int rc;

        rc = result_new_error(&res, source_id, code, message, NULL);
        if (rc == 0 && (with_reply_to || d->cfg->enable_dynamic_result_queue))
                rc = result_set_reply_to(res, reply_to);
        if (rc == 0)
                rc = result_to_text(res, ret);
        if (rc == 0 && ret_doc)
                *ret_doc = TAKE_PTR(res);
        return rc;
}

JournalResultIds daemon_result_ids(const json_t *doc)
{
        return (JournalResultIds){json_object_get(doc, "SourceID"),
                                  json_object_get(doc, "ReplyTo")};
}

/* ---- work done on the thread pool ------------------------------------ */

/* Answer a message whose plan is not kept, with an entry holding only the
 * answer: message for a new error result, unless the plan's ID was
 * answered before (a redelivery), which gets that answer again. The ID and
 * ReplyTo are the body's, where it is a JSON object that has them, else
 * the message's. */
static void answer_unkept(DaemonWork *w, int code, const char *message)
{
        Daemon *d = w->d;
        _cleanup_json_ json_t *body = NULL, *sid = NULL, *rt = NULL;
        _cleanup_free_ char *text = NULL;
        const json_t *id = NULL, *brt = NULL;
        int rc;

        if (w->body && w->body_len > 0)
                body = pyjson_loadb((const char *)w->body, w->body_len, JSON_REJECT_DUPLICATES,
                                    NULL);
        if (json_is_object(body)) {
                id = json_object_get(body, "ID");
                brt = json_object_get(body, "ReplyTo");
        }
        sid = id ? json_incref((json_t *)id) : json_string(w->msg_id ? w->msg_id : "");
        rt = brt           ? json_incref((json_t *)brt)
             : w->reply_to ? json_string(w->reply_to)
                           : json_null();
        if (!sid) {
                w->rc = -ENOMEM;
                return;
        }
        rc = journal_done_lookup(d->journal, sid, &text);
        if (rc == 0)
                rc = daemon_error_result_text(d, sid, rt, false, code, message, &text, NULL);
        if (rc >= 0)
                rc = journal_put_answer(d->journal, text, strlen(text), w->ts);
        w->rc = rc < 0 ? rc : 0;
}

/* A plan the disk cannot hold is answered with an error, so that it does
 * not wait in the queue, and every plan behind it, for as long as the disk
 * stays full. Other errors (EIO, EROFS) leave it unacked: the broker keeps
 * it and the store is tried again. */
static bool store_refused(int rc)
{
        return rc == -ENOSPC || rc == -EDQUOT || rc == -EFBIG;
}

static void work_store(DaemonWork *w)
{
        Daemon *d = w->d;
        char msg[160];

        if (w->oversize) {
                /* The body of an oversized message was never kept, so the
                 * plan is answered at once: the engine learns why instead
                 * of waiting an hour, as it did with the reference. */
                snprintf(msg, sizeof(msg), "Plan is larger than %llu bytes",
                         (unsigned long long)d->cfg->agent.max_plan_size);
                answer_unkept(w, PLAN_CODE_EXCEPTION, msg);
                return;
        }
        /* The transport's body has a NUL after it: the journal may keep it. */
        if (w->body)
                w->rc = journal_put_plan_owned(d->journal, (char **)&w->body, w->body_len, w->sig,
                                               w->sig_len, w->msg_id, w->reply_to, w->ts);
        else
                w->rc = journal_put_plan(d->journal, "", 0, w->sig, w->sig_len, w->msg_id,
                                         w->reply_to, w->ts);
        if (!store_refused(w->rc))
                return;
        w->refused = w->rc;
        snprintf(msg, sizeof(msg),
                 "The plan cannot be stored on the agent's disk (%s); it was not run",
                 strerror(-w->refused));
        answer_unkept(w, RESULT_CODE_NO_SPACE, msg);
}

/* Store an error result for the entry and finish it. */
static void prepare_answer(DaemonWork *w, const json_t *source_id, const json_t *reply_to,
                           bool with_reply_to, int code, const char *message)
{
        _cleanup_free_ char *text = NULL;
        _cleanup_json_ json_t *doc = NULL;
        JournalResultIds ids;

        w->rc = daemon_error_result_text(w->d, source_id, reply_to, with_reply_to, code, message,
                                         &text, &doc);
        ids = daemon_result_ids(doc);
        if (w->rc == 0)
                w->rc = journal_put_result(w->d->journal, w->ts, text, strlen(text), &ids);
        w->outcome = w->rc < 0 ? OUTCOME_RETRY : OUTCOME_NONE;
}

static void drop_entry(DaemonWork *w)
{
        w->rc = journal_remove(w->d->journal, w->ts, false);
        w->outcome = w->rc < 0 ? OUTCOME_RETRY : OUTCOME_NONE;
}

/* Read entry w->ts back into *ret: 0, or 1 when there is nothing to work
 * on (a corrupt entry, dropped, or a disk error, in w->rc). */
static int load_entry(DaemonWork *w, JournalPlan **ret)
{
        _cleanup_free_ char *error = NULL;
        int rc;

        rc = journal_load_plan(w->d->journal, w->ts, ret, &error);
        if (rc == JOURNAL_CORRUPT || rc == JOURNAL_FORGED) {
                note(w, LOG_LEVEL_ERROR, "entry %s: %s; %s", w->ts, error,
                     rc == JOURNAL_FORGED ? "moved to plans/quarantine, never run" : "dropping it");
                drop_entry(w);
                return 1;
        }
        if (rc < 0) {
                w->rc = rc;
                return 1;
        }
        return 0;
}

/* A plan's ID and ReplyTo: the plan's own, else the message's (spec 4.3). */
static void plan_ids(DaemonWork *w, const JournalPlan *jp, const json_t *plan)
{
        const json_t *id = plan ? json_object_get(plan, "ID") : NULL;
        const json_t *rt = plan ? json_object_get(plan, "ReplyTo") : NULL;

        w->source_id = json_deep_copy(id ? id : jp->id);
        w->plan_reply_to = json_deep_copy(rt ? rt : jp->reply_to);
}

/* Whether the entry's plan was answered already, by w->source_id, or with
 * jp, when that is no ID worth a record, by its body: then that answer is
 * stored again (true; w->rc and w->outcome say how it went). */
static bool answered_before(DaemonWork *w, const JournalPlan *jp)
{
        Journal *j = w->d->journal;
        _cleanup_free_ char *done = NULL;
        int rc;

        if (jp && !journal_done_id_ok(w->source_id))
                rc = journal_done_lookup_delivery(j, jp->body, jp->body_len, &done);
        else
                rc = journal_done_lookup(j, w->source_id, &done);
        if (rc == 0)
                return false;
        if (rc == 1) {
                note(w, LOG_LEVEL_WARNING, "plan already answered; sending its result again");
                rc = journal_put_result(j, w->ts, done, strlen(done), NULL);
        }
        w->rc = rc < 0 ? rc : 0;
        w->outcome = rc < 0 ? OUTCOME_RETRY : OUTCOME_NONE;
        return true;
}

/* The plan's Stamp as journal_begin() reads it (a float with a whole
 * value too), or -1 for none. */
static int64_t stamp_value(const json_t *plan)
{
        const json_t *v = json_object_get(plan, "Stamp");

        if (json_is_integer(v))
                return json_integer_value(v);
        return json_is_real(v) ? (int64_t)json_real_value(v) : -1;
}

/* A plan refused for its Stamp. A second copy of a plan still in the
 * journal (redelivered before its answer went out) is dropped: that plan
 * gets its own answer. Any other gets an error result, where the reference
 * sent nothing and the engine waited out its timeout. */
static void refuse_stamp(DaemonWork *w, int64_t stamp, int64_t last)
{
        char msg[192];

        if (journal_stamp_held(w->d->journal, stamp, w->ts)) {
                note(w, LOG_LEVEL_WARNING,
                     "dropping a second copy of a plan in the journal (Stamp %lld)",
                     (long long)stamp);
                return drop_entry(w);
        }
        snprintf(msg, sizeof(msg),
                 "The plan's Stamp %lld is not newer than the last accepted stamp %lld (an old "
                 "or duplicate message); it was not run",
                 (long long)stamp, (long long)last);
        note(w, LOG_LEVEL_WARNING, "%s", msg);
        prepare_answer(w, w->source_id, w->plan_reply_to, false, RESULT_CODE_STAMP, msg);
}

static void work_prepare(DaemonWork *w)
{
        Daemon *d = w->d;
        _cleanup_(journal_plan_freep) JournalPlan *jp = NULL;
        _cleanup_(plan_text_freep) PlanText *plan_text = NULL;
        _cleanup_json_ json_t *plan = NULL;
        PlanLimits lim = {.max_bytes = d->cfg->agent.max_plan_size,
                          .max_depth = d->cfg->agent.max_plan_depth};
        PlanError perr = {0};
        int64_t last;
        int rc;

        w->outcome = OUTCOME_RETRY;
        if (load_entry(w, &jp) != 0)
                return;
        /* Plans journaled before this start (by an earlier one, or by the
         * reference before an upgrade) are checked here; ours were checked
         * on delivery (daemon.c on_delivery), with the same key, so a plan
         * is never run on a signature nobody verified. */
        if (d->key && !jp->stored_here) {
                rc = signature_verify(d->key, d->cfg->rabbitmq.input_queue, jp->body, jp->body_len,
                                      jp->signature, jp->signature_len);
                if (rc != 0) {
                        plan_ids(w, jp, NULL); /* the message's ID, for the log */
                        note(w, LOG_LEVEL_ERROR, "entry %s: %s; dropping the plan", w->ts,
                             rc == SIGNATURE_MISSING ? "required signature was not found"
                                                     : "invalid signature");
                        return drop_entry(w);
                }
        }

        /* The body's text goes with the plan when it keeps a file's body
         * (a Base64 file of 64 KiB or more), which spares the document a
         * copy of it; jp->body is then NULL, and not needed any more. */
        rc = plan_parse_json_kept(&jp->body, jp->body_len, &lim, &plan, &plan_text, &perr);
        if (rc != 0) {
                plan_ids(w, jp, NULL);
                /* The same message delivered again (a crash between its
                 * store and its ack) gets the same document, byte for
                 * byte: under its message_id, or without one under a
                 * digest of its body. */
                if (answered_before(w, jp)) {
                        plan_error_clear(&perr);
                        return;
                }
                note(w, LOG_LEVEL_WARNING, "plan %s: %s", w->ts, perr.message);
                prepare_answer(w, w->source_id, w->plan_reply_to, false, perr.code, perr.message);
                plan_error_clear(&perr);
                return;
        }
        plan_ids(w, jp, plan);

        /* Ours: a plan whose ID was already answered (a redelivery after a
         * broker node died) gets that answer again, and does not run twice. */
        if (answered_before(w, NULL))
                return;

        /* A stop that came while the plan was checked: it stays pending and
         * runs at the next start, rather than be marked running here and
         * answered as interrupted then, though it never ran. */
        daemon_crash_point(d, "checked");
        if (daemon_stop_requested(d)) {
                note(w, LOG_LEVEL_INFO,
                     "stopping: entry %s stays in the journal and runs at the next start", w->ts);
                w->outcome = OUTCOME_NONE;
                return;
        }
        last = journal_last_stamp(d->journal);
        rc = journal_begin(d->journal, w->ts, json_object_get(plan, "Stamp"));
        if (rc == JOURNAL_STAMP_OLD)
                return refuse_stamp(w, stamp_value(plan), last);
        if (rc == 0 && stamp_value(plan) >= 0 && stamp_value(plan) <= last)
                note(w, LOG_LEVEL_WARNING,
                     "the last accepted stamp %lld is more than a day ahead of this machine's "
                     "clock; replaced by the plan's Stamp %lld",
                     (long long)last, (long long)stamp_value(plan));
        if (rc < 0) {
                w->rc = rc;
                return;
        }
        /* JOURNAL_STAMP_INVALID falls through: validation words it. */
        rc = plan_validate(plan, &perr);
        if (rc != 0) {
                note(w, LOG_LEVEL_WARNING, "invalid plan: %s", perr.message);
                prepare_answer(w, w->source_id, w->plan_reply_to, perr.at_run_time, perr.code,
                               perr.message);
                plan_error_clear(&perr);
                return;
        }
        w->plan = TAKE_PTR(plan);
        w->plan_text = TAKE_PTR(plan_text);
        w->outcome = OUTCOME_RUN;
}

/* A plan that ran with durable calls resumes: it was checked, stamped and
 * marked running before it first ran, and its call log answers what it
 * did then (docs/daemon.md, "Durable calls, resume and reboots"). */
static bool resumable(DaemonWork *w, json_t *plan)
{
        Daemon *d = w->d;
        char dir[PATH_MAX];
        PlanError perr = {0};

        snprintf(dir, sizeof(dir), "%s/plans/%s", d->cfg->storage, w->ts);
        if (!d->cfg->agent.durable_calls || !json_is_object(plan) || !journal_calls_exist(dir))
                return false;
        if (plan_validate(plan, &perr) != 0) {
                plan_error_clear(&perr);
                return false;
        }
        note(w, LOG_LEVEL_WARNING,
             "the plan was running when the agent stopped; resuming it from its call log");
        w->resume = true;
        return true;
}

static void work_interrupted(DaemonWork *w)
{
        _cleanup_(journal_plan_freep) JournalPlan *jp = NULL;
        _cleanup_json_ json_t *plan = NULL;

        w->outcome = OUTCOME_RETRY;
        if (load_entry(w, &jp) != 0)
                return;
        plan = pyjson_loadb(jp->body, jp->body_len, 0, NULL);
        plan_ids(w, jp, json_is_object(plan) ? plan : NULL);
        if (resumable(w, plan)) {
                w->plan = TAKE_PTR(plan);
                w->outcome = OUTCOME_RUN;
                return;
        }
        note(w, LOG_LEVEL_WARNING,
             "the plan was running when the agent stopped; answering it as "
             "interrupted instead of running it again");
        prepare_answer(w, w->source_id, w->plan_reply_to, true, RESULT_CODE_INTERRUPTED,
                       "The plan was interrupted: the agent stopped or restarted while it was "
                       "running, and it was not run again");
}

void daemon_work_run(uv_work_t *req)
{
        DaemonWork *w = req->data;

        switch (w->kind) {
        case WORK_STORE:
                work_store(w);
                break;
        case WORK_PREPARE:
                work_prepare(w);
                break;
        case WORK_INTERRUPTED:
                work_interrupted(w);
                break;
        case WORK_RESULT: {
                JournalResultIds ids = daemon_result_ids(w->plan);

                w->rc = journal_put_result(w->d->journal, w->ts, w->text, w->len, &ids);
                break;
        }
        case WORK_REMOVE:
        case WORK_DROP:
                w->rc = journal_remove(w->d->journal, w->ts, w->kind == WORK_REMOVE);
                break;
        case WORK_SPACE:
                w->rc = journal_space(w->d->journal, &w->space);
                break;
        case WORK_CANCEL:
                daemon_cancel_work(w);
                break;
        case WORK_CHECKPOINT:
                w->rc = journal_checkpoint(w->d->journal);
                break;
        default:
                break;
        }
        /* The journal's done records (SHA-256) and signature checks use
         * OpenSSL here, which keeps per-thread state for this thread. libuv
         * joins its pool threads only at exit, after OpenSSL's own atexit
         * clean-up has removed the key that would free that state, so it
         * would be lost (valgrind: 904 bytes "definitely lost" per thread).
         * Freeing it after each item costs a small allocation next time. */
        OPENSSL_thread_stop();
}
