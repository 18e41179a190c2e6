/* Cancelling a plan by its ID (see daemon-cancel.h): requests in order,
 * the running plan through the runner, a queued plan answered in the
 * journal on the pool, and the cancel messages of the input queue. */
#include "daemon/daemon-cancel.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/daemon-work.h"
#include "log/log.h"
#include "plan/plan-cancel.h"
#include "result/result.h"
#include "util/macro.h"
#include "util/pyjson.h"

typedef struct DaemonCancel {
        char *plan_id;
        DaemonCancelSource source;
        uint64_t tag;        /* DAEMON_CANCEL_REMOTE: the message's delivery tag */
        daemon_cancel_cb cb; /* NULL for a cancel message */
        void *userdata;
        struct DaemonCancel *next;
} DaemonCancel;

/* Who asked, as the result's message and the log say it. */
static const char *cancel_by(DaemonCancelSource source)
{
        return source == DAEMON_CANCEL_LOCAL ? "a local request (muranoagent cancel)"
                                             : "a remote request";
}

static void cancel_free(DaemonCancel *c)
{
        if (!c)
                return;
        free(c->plan_id);
        free(c);
}

/* A cancel message is acked once it is settled: a queued plan's answer is
 * on disk by then (daemon-cancel.h). */
static void settle_message(Daemon *d, uint64_t tag)
{
        int rc = d->tops->ack(d->transport, tag);

        if (rc < 0)
                log_warning(NULL, "ack of a cancel message failed: %s", strerror(-rc));
}

/* The first request is settled: log it, tell its caller, and go on. */
static void cancel_settle(Daemon *d, DaemonCancelOutcome outcome, const char *fmt, ...)
        _printf_(3, 4);
static void cancel_settle(Daemon *d, DaemonCancelOutcome outcome, const char *fmt, ...)
{
        DaemonCancel *c = d->cancels;
        _cleanup_free_ char *text = NULL;
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&text, fmt, ap) < 0)
                text = NULL;
        va_end(ap);
        d->cancels = c->next;
        log_write(outcome == DAEMON_CANCEL_STOPPING || outcome == DAEMON_CANCEL_ANSWERED
                          ? LOG_LEVEL_WARNING
                          : LOG_LEVEL_INFO,
                  c->plan_id, "%s", text ? text : "cancel request settled");
        if (c->cb)
                c->cb(d, outcome, text ? text : "", c->userdata);
        else if (d->stage < DAEMON_CLOSING)
                settle_message(d, c->tag);
        cancel_free(c);
}

static int cancel_add(Daemon *d, const char *plan_id, DaemonCancelSource source, uint64_t tag,
                      daemon_cancel_cb cb, void *userdata)
{
        DaemonCancel *c = calloc(1, sizeof(*c)), **tail;

        if (!c || !(c->plan_id = strdup(plan_id))) {
                free(c);
                return -ENOMEM;
        }
        c->source = source;
        c->tag = tag;
        c->cb = cb;
        c->userdata = userdata;
        for (tail = &d->cancels; *tail; tail = &(*tail)->next)
                ;
        *tail = c;
        daemon_cancel_pump(d);
        return 0;
}

int daemon_cancel(Daemon *d, const char *plan_id, DaemonCancelSource source, daemon_cancel_cb cb,
                  void *userdata)
{
        return cancel_add(d, plan_id, source, 0, cb, userdata);
}

bool daemon_cancel_busy(const Daemon *d)
{
        return d->cancel_working;
}

/* The plan runs: the runner stops it. Returns false when it is not the
 * running plan. */
static bool cancel_running(Daemon *d, DaemonCancel *c)
{
        _cleanup_free_ char *during = NULL;
        int rc = runner_cancel_plan(d->runner, c->plan_id, cancel_by(c->source), &during);

        if (rc == -ESRCH)
                return false;
        if (rc == 0)
                daemon_observe_plan_cancelled(d, cancel_by(c->source));
        if (rc == 0)
                cancel_settle(d, DAEMON_CANCEL_STOPPING,
                              "cancelled by %s during %s: stopping its scripts (SIGTERM, "
                              "SIGKILL after %u s); its result will say ErrorCode %d",
                              cancel_by(c->source), during, d->cfg->agent.kill_grace,
                              RESULT_CODE_CANCELLED);
        else if (rc == RUNNER_CANCEL_ENDING)
                cancel_settle(d, DAEMON_CANCEL_FINISHED,
                              "%s to cancel it came while it was already ending (timed out, "
                              "stopping, or cancelled); nothing changed",
                              cancel_by(c->source));
        else
                cancel_settle(d, DAEMON_CANCEL_FAILED, "cannot cancel it: %s", strerror(-rc));
        return true;
}

void daemon_cancel_pump(Daemon *d)
{
        DaemonCancel *c;
        DaemonWork *w;

        while ((c = d->cancels) && !d->cancel_working) {
                /* The runner and the timers are going: nothing is cancelled
                 * now (an unacked message comes again at the next start). */
                if (d->stage >= DAEMON_CLOSING) {
                        cancel_settle(d, DAEMON_CANCEL_FAILED, "the agent is stopping");
                        continue;
                }
                /* While a plan is checked its ID is not known yet, and while
                 * a result is stored it is not in the journal yet: wait for
                 * the lane's next step, which pumps again. */
                if (d->plan == PLAN_CHECKING || d->plan == PLAN_STORING)
                        return;
                if (d->plan == PLAN_RUNNING && cancel_running(d, c))
                        continue;
                w = daemon_work_new(WORK_CANCEL, NULL);
                if (w) {
                        w->cancel = c;
                        if (daemon_queue_work(d, w) == 0) {
                                d->cancel_working = true;
                                return;
                        }
                }
                daemon_work_free(w);
                cancel_settle(d, DAEMON_CANCEL_FAILED, "cannot cancel it: out of memory");
        }
}

/* ---- on the pool ------------------------------------------------------- */

/* The ID of entry ts's plan as text matches: the body's ID, else the
 * message's (spec 4.3), as the plan would be answered. A body that does
 * not hold the ID's text, under a message_id that is not it, is not read. */
static bool entry_is(Journal *j, const char *ts, const char *plan_id, JournalPlan **ret)
{
        _cleanup_(journal_plan_freep) JournalPlan *jp = NULL;
        _cleanup_free_ char *error = NULL;
        _cleanup_json_ json_t *plan = NULL;
        const json_t *id;

        if (journal_load_plan(j, ts, &jp, &error) != 0)
                return false; /* the plan lane answers or drops it, as ever */
        if (!memmem(jp->body, jp->body_len, plan_id, strlen(plan_id)) &&
            !result_source_id_is(jp->id, plan_id))
                return false;
        plan = pyjson_loadb(jp->body, jp->body_len, JSON_REJECT_DUPLICATES, NULL);
        id = json_is_object(plan) ? json_object_get(plan, "ID") : NULL;
        if (!result_source_id_is(id ? id : jp->id, plan_id))
                return false;
        *ret = TAKE_PTR(jp);
        return true;
}

/* Answer entry ts, whose plan never ran: ErrorCode 107, stored durably. */
static int answer_queued(DaemonWork *w, const char *ts, const JournalPlan *jp)
{
        const DaemonCancel *c = w->cancel;
        _cleanup_json_ json_t *doc = NULL, *plan = NULL;
        _cleanup_free_ char *text = NULL, *msg = NULL;
        const json_t *rt;
        JournalResultIds ids;
        int rc;

        plan = pyjson_loadb(jp->body, jp->body_len, 0, NULL);
        rt = json_object_get(plan, "ReplyTo");
        if (asprintf(&msg, "The plan was cancelled by %s before it ran; it was not run",
                     cancel_by(c->source)) < 0)
                return -ENOMEM;
        /* Its SourceID is the ID it was found by; ReplyTo as for a plan
         * refused before it ran (ErrorCodes 2, 105). */
        rc = daemon_error_result_text(w->d, json_object_get(plan, "ID") ?: jp->id,
                                      rt ? rt : jp->reply_to, false, RESULT_CODE_CANCELLED, msg,
                                      &text, &doc);
        if (rc < 0)
                return rc;
        ids = daemon_result_ids(doc);
        return journal_put_result(w->d->journal, ts, text, strlen(text), &ids);
}

void daemon_cancel_work(DaemonWork *w)
{
        Journal *j = w->d->journal;
        _cleanup_json_ json_t *id = json_string(w->cancel->plan_id);
        _cleanup_free_ JournalEntry *entries = NULL;
        _cleanup_free_ char *done = NULL;
        size_t n = 0;
        int rc;

        w->outcome = OUTCOME_NONE;
        if (!id) {
                w->rc = -ENOMEM;
                return;
        }
        /* A result, sent or waiting to be: the plan has ended. */
        rc = journal_done_lookup(j, id, &done);
        if (rc != 0) {
                w->rc = rc < 0 ? rc : DAEMON_CANCEL_FINISHED;
                return;
        }
        rc = journal_list(j, &entries, &n);
        if (rc < 0) {
                w->rc = rc;
                return;
        }
        for (size_t i = 0; i < n; i++) {
                _cleanup_(journal_plan_freep) JournalPlan *jp = NULL;

                if ((entries[i].state != JOURNAL_PENDING &&
                     entries[i].state != JOURNAL_INTERRUPTED) ||
                    !entry_is(j, entries[i].ts, w->cancel->plan_id, &jp))
                        continue;
                /* Running when the agent last stopped: it is answered as
                 * interrupted, and never runs again. */
                if (entries[i].state == JOURNAL_INTERRUPTED) {
                        w->rc = DAEMON_CANCEL_FINISHED;
                        return;
                }
                snprintf(w->ts, sizeof(w->ts), "%s", entries[i].ts);
                rc = answer_queued(w, entries[i].ts, jp);
                w->rc = rc < 0 ? rc : DAEMON_CANCEL_ANSWERED;
                return;
        }
        w->rc = DAEMON_CANCEL_UNKNOWN;
}

/* ---- back on the loop -------------------------------------------------- */

void daemon_cancel_after(Daemon *d, DaemonWork *w)
{
        const char *by = cancel_by(w->cancel->source);

        d->cancel_working = false;
        switch (w->rc) {
        case DAEMON_CANCEL_ANSWERED:
                daemon_observe_plan_answered(d, w->cancel->plan_id, RESULT_CODE_CANCELLED);
                cancel_settle(d, DAEMON_CANCEL_ANSWERED,
                              "cancelled by %s before it ran (entry %s): answered with ErrorCode "
                              "%d, it will not run",
                              by, w->ts, RESULT_CODE_CANCELLED);
                break;
        case DAEMON_CANCEL_FINISHED:
                cancel_settle(d, DAEMON_CANCEL_FINISHED,
                              "%s to cancel it came after its end (it has its result); nothing "
                              "changed",
                              by);
                break;
        case DAEMON_CANCEL_UNKNOWN:
                cancel_settle(d, DAEMON_CANCEL_UNKNOWN,
                              "%s to cancel it: no such plan here (not received yet, or finished "
                              "long ago); nothing changed",
                              by);
                break;
        default:
                /* Not settled: the request stays first and is tried again. */
                log_error(w->cancel->plan_id,
                          "cannot look for the plan to cancel: %s; retrying "
                          "in %d s",
                          strerror(-w->rc), DAEMON_RETRY_MS / 1000);
                daemon_retry_later(d);
                return;
        }
        daemon_pump(d);
}

/* ---- cancel messages --------------------------------------------------- */

bool daemon_cancel_delivery(Daemon *d, TransportDelivery *dl)
{
        _cleanup_free_ char *plan_id = NULL, *error = NULL;
        const char *mid = dl->message_id[0] ? dl->message_id : "none";
        int rc;

        rc = dl->oversize
                     ? 0
                     : plan_cancel_parse((const char *)dl->body, dl->body_len, &plan_id, &error);
        if (rc == 0)
                return false;
        if (d->key) {
                /* Signed like a plan, or refused like one: rejected without
                 * requeue, and nothing is cancelled. */
                int sr = dl->signature_kind != TRANSPORT_SIGNATURE_BYTES
                                 ? SIGNATURE_MISSING
                                 : signature_verify(d->key, d->cfg->rabbitmq.input_queue, dl->body,
                                                    dl->body_len, dl->signature, dl->signature_len);
                if (sr != 0) {
                        log_error(plan_id, "rejecting a cancel message (message_id %s): %s", mid,
                                  sr == SIGNATURE_MISSING ? "required signature was not found"
                                  : sr == SIGNATURE_BAD   ? "invalid signature"
                                                          : strerror(-sr));
                        d->tops->reject(d->transport, dl->tag, false);
                        return true;
                }
        }
        if (rc == -ENOMEM) {
                /* Back to the queue, as a plan that cannot be taken now. */
                d->tops->reject(d->transport, dl->tag, true);
                return true;
        }
        if (rc == PLAN_CANCEL_INVALID) {
                log_error(NULL, "dropping a control message (message_id %s): %s", mid, error);
                d->tops->ack(d->transport, dl->tag);
                return true;
        }
        log_info(plan_id, "cancel message (message_id %s) received", mid);
        if (cancel_add(d, plan_id, DAEMON_CANCEL_REMOTE, dl->tag, NULL, NULL) < 0)
                d->tops->reject(d->transport, dl->tag, true);
        return true;
}

json_t *daemon_cancel_json(const Daemon *d)
{
        json_t *v = json_array();

        for (const DaemonCancel *c = d->cancels; v && c; c = c->next)
                if (json_array_append_new(
                            v, json_pack("{ss ss ss}", "plan_id", c->plan_id, "from",
                                         c->source == DAEMON_CANCEL_LOCAL ? "local" : "remote",
                                         "state",
                                         c == d->cancels && d->cancel_working ? "searching"
                                                                              : "waiting")) < 0)
                        v = (json_decref(v), NULL);
        return v;
}

void daemon_cancel_free_all(Daemon *d)
{
        DaemonCancel *c;

        while ((c = d->cancels)) {
                d->cancels = c->next;
                cancel_free(c);
        }
}

/* ---- muranoagent cancel -------------------------------------------------- */

static const char *const outcome_names[] = {
        [DAEMON_CANCEL_STOPPING] = "stopping", [DAEMON_CANCEL_ANSWERED] = "answered",
        [DAEMON_CANCEL_FINISHED] = "finished", [DAEMON_CANCEL_UNKNOWN] = "unknown",
        [DAEMON_CANCEL_FAILED] = "failed",
};

static void on_local_settled(Daemon *d, DaemonCancelOutcome outcome, const char *text,
                             void *userdata)
{
        _cleanup_json_ json_t *body = NULL;

        if (outcome == DAEMON_CANCEL_FAILED) {
                daemon_control_answer(userdata, NULL, text);
                return;
        }
        body = json_pack("{ssss}", "outcome", outcome_names[outcome], "message", text);
        daemon_control_answer(userdata, body, body ? NULL : "out of memory");
}

int daemon_cancel_command(Daemon *d, const json_t *request, struct ControlConn *k,
                          const char **ret_error)
{
        const json_t *id = json_object_get(request, "plan_id");

        if (!json_is_string(id) || json_string_length(id) == 0 ||
            json_string_length(id) > PLAN_CANCEL_ID_MAX) {
                *ret_error = "cancel needs a plan_id: a non-empty string of at most 255 bytes";
                return -EINVAL;
        }
        log_info(json_string_value(id), "cancel requested on the control socket");
        if (cancel_add(d, json_string_value(id), DAEMON_CANCEL_LOCAL, 0, on_local_settled, k) < 0) {
                *ret_error = "out of memory";
                return -ENOMEM;
        }
        return 0;
}

static void settled_nowhere(Daemon *d, DaemonCancelOutcome outcome, const char *text,
                            void *userdata)
{
}

void daemon_cancel_detach(Daemon *d, void *userdata)
{
        for (DaemonCancel *c = d->cancels; c; c = c->next)
                if (c->cb && c->userdata == userdata) {
                        c->cb = settled_nowhere;
                        c->userdata = NULL;
                }
}
