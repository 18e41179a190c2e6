/* The daemon's work, in the reference's order (spec 4.1): unsent results
 * first, then plans, on two lanes (DaemonPlanLane, DaemonPubLane): one plan
 * and one result at a time; storing new deliveries runs beside them. Every journal call that fsyncs
 * runs in a uv_work_t on libuv's thread pool (daemon-work.c); its after-work callback, here,
 * continues on the loop. docs/daemon.md tells the life of a message. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/daemon-cancel.h"
#include "daemon/daemon-work.h"
#include "result/result.h"
#include "util/base64.h"
#include "util/filepages.h"
#include "util/macro.h"
#include "util/pyjson.h"

static void after_work(uv_work_t *req, int status);

int daemon_queue_work(Daemon *d, DaemonWork *w)
{
        int rc;

        w->d = d;
        w->req.data = w;
        rc = uv_queue_work(d->loop, &w->req, daemon_work_run, after_work);
        if (rc == 0)
                d->work_in_flight++;
        return rc;
}

/* Whether entry ts is on the plan lane. */
static bool plan_lane_has(const Daemon *d, const char *ts)
{
        return d->plan != PLAN_IDLE && streq(d->busy_ts, ts);
}

/* ---- back on the loop ------------------------------------------------ */

static void on_retry(uv_timer_t *t)
{
        Daemon *d = t->data;
        DaemonWork *w;

        /* A store or a result that failed on the disk goes again first. */
        while ((w = d->stalled)) {
                d->stalled = w->next;
                w->next = NULL;
                if (daemon_queue_work(d, w) < 0) {
                        w->next = d->stalled;
                        d->stalled = w;
                        uv_timer_start(&d->retry, on_retry, DAEMON_RETRY_MS, 0);
                        return;
                }
        }
        daemon_pump(d);
}

static void retry_later(Daemon *d)
{
        uv_timer_start(&d->retry, on_retry, DAEMON_RETRY_MS, 0);
}

void daemon_retry_later(Daemon *d)
{
        retry_later(d);
}

/* Try w again later, from on_retry: nothing is acked or answered before it
 * is on disk, and nothing is dropped because the disk was full for a while. */
static void stall(Daemon *d, DaemonWork *w)
{
        w->rc = 0;
        w->next = d->stalled;
        d->stalled = w;
        retry_later(d);
}

/* The one place the plan lane moves: from idle to checking entry ts, one
 * step on (checking, running, storing), or back to idle from any step,
 * when the next plan may be taken up. */
static void plan_lane_move(Daemon *d, DaemonPlanLane to, const char *ts)
{
        assert(to == PLAN_IDLE || to == d->plan + 1);
        d->plan = to;
        if (to == PLAN_IDLE) {
                d->busy_ts[0] = '\0';
                free(d->busy_id);
                d->busy_id = NULL;
        } else if (to == PLAN_CHECKING)
                snprintf(d->busy_ts, sizeof(d->busy_ts), "%s", ts);
}

static void plan_lane_free(Daemon *d)
{
        plan_lane_move(d, PLAN_IDLE, NULL);
}

/* Whether the publish lane may move from one step to another. */
static bool pub_lane_may(DaemonPubLane from, DaemonPubLane to)
{
        switch (to) {
        case PUB_CONFIRMING:
        case PUB_DROPPING:
                return from == PUB_IDLE;
        case PUB_REMOVING:
                return from == PUB_CONFIRMING;
        case PUB_IDLE:
        default:
                return true;
        }
}

/* The one place the publish lane moves: from idle to awaiting the confirm
 * of entry ts's result (or to dropping entry ts, whose result is no
 * document), from the confirm on to the removal, and back to idle from any
 * step, when the next result may be published. */
static void pub_lane_move(Daemon *d, DaemonPubLane to, const char *ts)
{
        assert(pub_lane_may(d->pub, to));
        d->pub = to;
        if (to == PUB_IDLE) {
                d->pub_ts[0] = '\0';
                free(d->pub_id);
                d->pub_id = NULL;
        } else if (ts)
                snprintf(d->pub_ts, sizeof(d->pub_ts), "%s", ts);
}

static void pub_lane_free(Daemon *d)
{
        pub_lane_move(d, PUB_IDLE, NULL);
}

static void on_plan_done(Runner *r, json_t *result, void *userdata);

/* Remove entry ts, of plan id (NULL: unknown), without a record, on the
 * pool: the journal's calls that change the disk may wait for another's
 * fsync, and the loop must not. No plan starts until it is gone
 * (daemon_pump), so that the entry is not taken up meanwhile. */
static int drop_entry(Daemon *d, const char *ts, const char *id)
{
        DaemonWork *w = daemon_work_new(WORK_DROP, ts);
        int rc = w ? daemon_queue_work(d, w) : -ENOMEM;

        if (rc < 0) {
                daemon_work_free(w);
                return rc;
        }
        w->msg_id = id ? strdup(id) : NULL;
        d->drops_in_flight++;
        return 0;
}

static void after_drop(Daemon *d, DaemonWork *w)
{
        d->drops_in_flight--;
        if (w->rc < 0)
                log_warning(w->msg_id, "cannot remove entry %s: %s", w->ts, strerror(-w->rc));
        /* A result that was not a document (publish_result) frees the
         * publish lane only now, or it would be picked up again. */
        if (d->pub == PUB_DROPPING && streq(d->pub_ts, w->ts))
                pub_lane_free(d);
        if (w->rc < 0)
                retry_later(d);
        else
                daemon_pump(d);
}

static void after_store(Daemon *d, DaemonWork *w)
{
        const char *mid = w->msg_id ? w->msg_id : "";
        int rc;

        if (w->refused) {
                /* Its plan.json would have needed about this much room. */
                daemon_space_refused(d, w->refused, base64_encoded_len(w->body_len) + 4096);
                if (w->rc == 0)
                        log_error(mid,
                                  "cannot store the plan (%zu bytes): %s; answered it with "
                                  "ErrorCode %d instead of running it",
                                  w->body_len, strerror(-w->refused), RESULT_CODE_NO_SPACE);
                else
                        log_error(mid,
                                  "cannot store the plan (%zu bytes): %s, nor its error result: "
                                  "%s; retrying in %d s",
                                  w->body_len, strerror(-w->refused), strerror(-w->rc),
                                  DAEMON_RETRY_MS / 1000);
        }
        if (w->rc < 0) {
                /* Not acked: the broker keeps the message. It is stored again
                 * when the disk recovers, or redelivered on a new connection. */
                if (!w->refused)
                        log_error(mid, "cannot store the plan: %s; retrying in %d s",
                                  strerror(-w->rc), DAEMON_RETRY_MS / 1000);
                daemon_notify_status("cannot store plans: %s; they wait in the queue, tried "
                                     "again every %d s",
                                     strerror(-w->rc), DAEMON_RETRY_MS / 1000);
                w->refused = 0;
                if (daemon_stop_requested(d)) {
                        d->tops->reject(d->transport, w->tag, true);
                        daemon_work_free(w);
                } else
                        stall(d, w);
                return;
        }
        if (!w->refused && !w->oversize)
                daemon_space_stored(d);
        daemon_crash_point(d, "stored");
        rc = d->tops->ack(d->transport, w->tag);
        if (rc == -ENOTCONN && !plan_lane_has(d, w->ts)) {
                /* The connection that delivered it has gone, so the broker
                 * delivers it again: keep one copy, not two. */
                log_info(mid,
                         "connection lost before the ack of entry %s; the broker redelivers it",
                         w->ts);
                rc = drop_entry(d, w->ts, mid);
                if (rc < 0)
                        log_error(mid, "cannot remove entry %s: %s", w->ts, strerror(-rc));
        } else {
                if (rc < 0)
                        log_warning(mid, "ack of entry %s failed: %s", w->ts, strerror(-rc));
                else
                        log_debug(mid, "plan message stored as entry %s and acked", w->ts);
                if (!w->refused)
                        daemon_observe_plan_stored(d, w->ts, mid);
        }
        daemon_work_free(w);
        daemon_pump(d);
}

static void after_prepare(Daemon *d, DaemonWork *w)
{
        _cleanup_free_ char *id = pyjson_id_text(w->source_id);
        int rc;

        if (w->note)
                log_write(w->note_level, id, "%s", w->note);
        if (w->outcome == OUTCOME_RETRY) {
                log_error(id, "entry %s: %s; retrying in %d s", w->ts, strerror(-w->rc),
                          DAEMON_RETRY_MS / 1000);
                plan_lane_free(d);
                retry_later(d);
                return;
        }
        if (w->outcome != OUTCOME_RUN || daemon_stop_requested(d)) {
                plan_lane_free(d);
                daemon_pump(d);
                return;
        }
        daemon_crash_point(d, "begun");
        rc = 0;
        if (d->cfg->agent.durable_calls) {
                char dir[PATH_MAX];

                JournalCallsKey *key = NULL;

                snprintf(dir, sizeof(dir), "%s/plans/%s", d->cfg->storage, w->ts);
                /* The log is sealed as the journal's files are: the plan
                 * thread gets what seals this entry's log, not the key. */
                rc = journal_calls_key(d->journal, w->ts, &key);
                if (rc == 0)
                        rc = runner_set_call_log(d->runner, dir, key);
        }
        if (rc == 0) {
                runner_set_plan_text(d->runner, TAKE_PTR(w->plan_text));
                rc = runner_start(d->runner, w->plan, w->source_id, w->plan_reply_to, on_plan_done,
                                  d);
        }
        if (rc < 0) {
                log_error(id, "cannot start the plan: %s", strerror(-rc));
                /* Not for whichever plan starts next. */
                runner_set_plan_text(d->runner, NULL);
                plan_lane_free(d);
                retry_later(d);
                return;
        }
        plan_lane_move(d, PLAN_RUNNING, NULL);
        daemon_observe_plan_started(d, id);
        d->busy_id = TAKE_PTR(id);
        daemon_notify_status("running plan %s", d->busy_id ? d->busy_id : "");
        /* A cancel that came while the plan was checked names it now. */
        daemon_cancel_pump(d);
}

static void on_plan_done(Runner *r, json_t *result, void *userdata)
{
        Daemon *d = userdata;
        DaemonWork *w;
        int rc = -ENOMEM;

        if (!result && daemon_stop_requested(d)) {
                /* No result in this run: the plan is suspended for the
                 * reboot it asked for, and resumes at the next start. */
                log_warning(NULL,
                            "entry %s stays in the journal without a result; it resumes at "
                            "the next start",
                            d->busy_ts);
                plan_lane_free(d);
                daemon_maybe_finish_stop(d);
                return;
        }
        w = daemon_work_new(WORK_RESULT, d->busy_ts);

        plan_lane_move(d, PLAN_STORING, NULL);
        d->n_plans++;
        daemon_observe_plan_finished(d, result);
        if (w && result) {
                /* The document goes with its text: the journal takes its
                 * SourceID and ReplyTo from it, for publishing. */
                w->plan = result;
                result = NULL;
                rc = result_to_text(w->plan, &w->text);
        }
        json_decref(result);
        if (rc == 0) {
                w->len = strlen(w->text);
                rc = daemon_queue_work(d, w);
        }
        if (rc < 0) {
                /* The entry keeps its `running` mark: after a restart it is
                 * answered as interrupted, never silently lost. */
                log_error(d->busy_id, "cannot keep the result of entry %s: %s", d->busy_ts,
                          strerror(-rc));
                daemon_work_free(w);
                plan_lane_free(d);
                retry_later(d);
        }
}

static void after_result(Daemon *d, DaemonWork *w)
{
        if (w->rc < 0) {
                /* Keep trying: the result is in memory only. */
                log_error(d->busy_id, "cannot store the result of entry %s: %s; retrying in %d s",
                          w->ts, strerror(-w->rc), DAEMON_RETRY_MS / 1000);
                stall(d, w);
                return;
        }
        daemon_crash_point(d, "result");
        daemon_work_free(w);
        plan_lane_free(d);
        daemon_pump(d);
}

static void after_work(uv_work_t *req, int status)
{
        DaemonWork *w = req->data;
        Daemon *d = w->d;

        d->work_in_flight--;
        switch (w->kind) {
        case WORK_STORE:
                after_store(d, w);
                break;
        case WORK_PREPARE:
        case WORK_INTERRUPTED:
                after_prepare(d, w);
                daemon_work_free(w);
                break;
        case WORK_RESULT:
                after_result(d, w);
                break;
        case WORK_DROP:
                after_drop(d, w);
                daemon_work_free(w);
                daemon_checkpoint_later(d);
                break;
        case WORK_SPACE:
                daemon_space_checked(d, w);
                daemon_work_free(w);
                break;
        case WORK_CANCEL:
                daemon_cancel_after(d, w);
                daemon_work_free(w);
                break;
        case WORK_REMOVE:
                if (w->rc < 0)
                        log_warning(d->pub_id, "cannot remove entry %s: %s", w->ts,
                                    strerror(-w->rc));
                daemon_work_free(w);
                pub_lane_free(d);
                daemon_pump(d);
                daemon_checkpoint_later(d);
                break;
        case WORK_CHECKPOINT:
                daemon_checkpoint_log(w->rc);
                daemon_work_free(w);
                break;
        default:
                daemon_work_free(w);
                break;
        }
        daemon_maybe_finish_stop(d);
}

/* ---- publishing ---------------------------------------------------------- */

/* The body published for result r under enable_dynamic_result_queue:
 * the document without its ReplyTo. Our documents end with it (the runner
 * and the journal's callers append it last), so it is cut from the text;
 * another document (the reference's, after an upgrade) is parsed, and
 * written again without it. Returns 0 or -errno. */
static int body_without_reply_to(const JournalResult *r, char **ret)
{
        _cleanup_free_ char *value = NULL, *tail = NULL;
        _cleanup_json_ json_t *doc = NULL;
        size_t n;

        if (pyjson_dumps(r->reply_to, &value) < 0 || asprintf(&tail, "\"ReplyTo\": %s}", value) < 0)
                return -ENOMEM;
        n = strlen(tail);
        if (r->len > n && memcmp(r->text + r->len - n, tail, n) == 0) {
                size_t keep = r->len - n;

                /* "{" before it, or ", " after the key before it. */
                if (keep >= 3 && memcmp(r->text + keep - 2, ", ", 2) == 0)
                        keep -= 2;
                else if (keep != 1)
                        goto parse;
                *ret = malloc(keep + 2);
                if (!*ret)
                        return -ENOMEM;
                memcpy(*ret, r->text, keep);
                memcpy(*ret + keep, "}", 2);
                return 0;
        }
parse:
        doc = pyjson_loadb(r->text, r->len, 0, NULL);
        if (!json_is_object(doc))
                return -EINVAL;
        json_object_del(doc, "ReplyTo");
        return pyjson_dumps(doc, ret);
}

/* Routing as the reference's _send_result(): result_routing_key, or with
 * enable_dynamic_result_queue the result's ReplyTo, which is then taken out
 * of the body. Where the reference would route to "None" (a null ReplyTo),
 * we keep result_routing_key: a deliberate difference (docs/compatibility.md).
 * The SourceID and ReplyTo are those the journal was given with the result
 * (by the run that made it), or read from result.json of an earlier start. */
static int publish_result(Daemon *d, const char *ts)
{
        _cleanup_(journal_result_freep) JournalResult *res = NULL;
        _cleanup_free_ char *body = NULL, *mid = NULL;
        const Config *cfg = d->cfg;
        const char *rk = cfg->rabbitmq.result_routing_key;
        uint64_t seq;
        int rc;

        rc = journal_get_result(d->journal, ts, &res);
        if (rc == JOURNAL_CORRUPT || rc == JOURNAL_FORGED) {
                log_error(NULL, "entry %s: %s", ts,
                          rc == JOURNAL_CORRUPT
                                  ? "result.json is not a JSON object; dropping it"
                                  : "result.json does not carry the agent's seal (planted or "
                                    "altered by a process without its key); moved to "
                                    "plans/quarantine, never published");
                rc = drop_entry(d, ts, NULL);
                if (rc < 0)
                        goto fail;
                return 1;
        }
        if (rc < 0)
                goto fail;
        mid = pyjson_id_text(res->source_id);
        /* The plan's last progress events go with its result: one wake-up
         * of the broker's thread for both, and ahead of it. */
        daemon_progress_flush(d);
        /* AMQP short strings hold 255 bytes; the engine matches results by
         * the body's SourceID first, so a cut message_id loses nothing. */
        if (mid && strlen(mid) > 255)
                mid[255] = '\0';
        if (cfg->enable_dynamic_result_queue && res->reply_to) {
                const json_t *rt = res->reply_to;
                const char *route = json_is_string(rt) ? json_string_value(rt) : NULL;

                rc = body_without_reply_to(res, &body);
                if (rc < 0)
                        goto fail;
                if (route && *route && strlen(route) <= 255) {
                        rc = d->tops->publish(d->transport, cfg->rabbitmq.result_exchange, route,
                                              mid, body, strlen(body), &seq);
                        goto published;
                }
        }
        rc = d->tops->publish(d->transport, cfg->rabbitmq.result_exchange, rk ? rk : "None", mid,
                              body ? body : res->text, body ? strlen(body) : res->len, &seq);
published:
        if (rc < 0)
                goto fail;
        pub_lane_move(d, PUB_CONFIRMING, ts);
        d->publish_seq = seq;
        d->pub_id = TAKE_PTR(mid);
        daemon_crash_point(d, "published");
        log_debug(d->pub_id, "result of entry %s published (confirm #%llu)", ts,
                  (unsigned long long)seq);
        return 0;
fail:
        log_warning(mid, "cannot publish the result of entry %s: %s", ts, strerror(-rc));
        return rc;
}

void daemon_on_confirm(Daemon *d, uint64_t seq, TransportConfirm status)
{
        DaemonWork *w;

        if (d->pub != PUB_CONFIRMING || seq != d->publish_seq)
                return;
        if (status != TRANSPORT_CONFIRM_ACK) {
                /* LOST: published again after the next on_ready. NACK: the
                 * broker could not take it now; try again shortly. */
                log_warning(d->pub_id, "result of entry %s was %s; it stays in the journal",
                            d->pub_ts,
                            status == TRANSPORT_CONFIRM_NACK
                                    ? "refused by the broker"
                                    : "not confirmed before the connection ended");
                pub_lane_free(d);
                if (status == TRANSPORT_CONFIRM_NACK)
                        retry_later(d);
                daemon_maybe_finish_stop(d);
                return;
        }
        daemon_crash_point(d, "confirmed");
        pub_lane_move(d, PUB_REMOVING, NULL);
        w = daemon_work_new(WORK_REMOVE, d->pub_ts);
        if (!w || daemon_queue_work(d, w) < 0) {
                daemon_work_free(w);
                pub_lane_free(d);
                retry_later(d);
        }
}

/* ---- the pump ----------------------------------------------------------- */

bool daemon_idle(const Daemon *d)
{
        return d->plan == PLAN_IDLE && d->pub == PUB_IDLE && d->work_in_flight == 0;
}

/* Publish the result of entry ts on the publish lane. Returns true when
 * the pump may look for more work at once. */
static bool pump_result(Daemon *d, const char *ts)
{
        int rc;

        if (!d->transport || !d->tops->is_ready(d->transport))
                return false; /* on_ready pumps again */
        rc = publish_result(d, ts);
        if (rc == 0)
                return true;
        if (rc > 0) {
                /* A result that was not a document: the lane waits for its drop. */
                pub_lane_move(d, PUB_DROPPING, ts);
                return false;
        }
        if (rc != -ENOTCONN)
                retry_later(d);
        return false;
}

/* Once the daemon has been idle this long after some work, it gives back
 * the file pages it mapped and never wrote (util/filepages.h: its code's
 * and its libraries', which the idle loop mostly does not run), then the
 * free memory at the top of the heap, which plans leave some of (about
 * 0.1 MiB after the daemon bench's) and reading smaps adds to; an agent
 * spends most of its life idle (docs/footprint.md). Not on the way of
 * any plan: a burst never waits this long between two. */
#define DAEMON_TRIM_MS 500

static void on_trim(uv_timer_t *t)
{
        Daemon *d = t->data;
        FilePagesStats st;
        uint64_t start;
        int rc;

        if (d->trimmed)
                return;
        /* The write-ahead log's checkpoint comes 1 s after the last
         * removal (daemon-checkpoint.c) and runs the journal's code on the
         * pool: the trim waits for it, or the pages it maps would stay
         * mapped for the whole idle time. */
        if (uv_is_active((uv_handle_t *)&d->checkpoint) || d->work_in_flight > 0) {
                uv_timer_start(&d->trim, on_trim, DAEMON_TRIM_MS, 0);
                return;
        }
        if (!daemon_idle(d) || runner_busy(d->runner))
                return;
        start = uv_hrtime();
        rc = filepages_release(&st);
        if (rc < 0)
                log_debug(NULL, "idle: cannot read /proc/self/smaps: %s", strerror(-rc));
        else
                log_debug(NULL,
                          "idle: %" PRIu64 " KiB of file pages given back from %zu mappings "
                          "(%zu refused) in %.0f us",
                          st.kib, st.mappings, st.failed, (double)(uv_hrtime() - start) / 1e3);
        malloc_trim(0);
        d->trimmed = true;
}

/* Start checking pending (or interrupted) entry e on the plan lane. */
static void pump_plan(Daemon *d, const JournalEntry *e)
{
        DaemonWork *w;

        plan_lane_move(d, PLAN_CHECKING, e->ts);
        d->trimmed = false;
        w = daemon_work_new(e->state == JOURNAL_PENDING ? WORK_PREPARE : WORK_INTERRUPTED, e->ts);
        if (w && daemon_queue_work(d, w) == 0)
                return;
        daemon_work_free(w);
        plan_lane_free(d);
        retry_later(d);
}

void daemon_pump(Daemon *d)
{
        JournalEntry e;
        int rc;

        daemon_cancel_pump(d);
        /* Each round starts one thing and looks again, or returns. */
        for (;;) {
                if (uv_is_active((uv_handle_t *)&d->retry))
                        return;
                rc = journal_next_except(d->journal, d->pub != PUB_IDLE ? d->pub_ts : NULL, &e);
                if (rc < 0) {
                        log_error(NULL, "cannot read the journal: %s; retrying in %d s",
                                  strerror(-rc), DAEMON_RETRY_MS / 1000);
                        retry_later(d);
                        return;
                }
                if (rc == 0) {
                        if (d->plan == PLAN_IDLE && d->pub == PUB_IDLE && d->transport &&
                            d->tops->is_ready(d->transport))
                                daemon_status_idle(d);
                        if (!d->trimmed && d->stage == DAEMON_RUNNING && daemon_idle(d))
                                uv_timer_start(&d->trim, on_trim, DAEMON_TRIM_MS, 0);
                        daemon_maybe_finish_stop(d);
                        return;
                }
                switch (e.state) {
                case JOURNAL_RESULT:
                        /* Unsent results go before any plan, one at a time. */
                        if (d->pub != PUB_IDLE || !pump_result(d, e.ts)) {
                                daemon_maybe_finish_stop(d);
                                return;
                        }
                        continue;
                case JOURNAL_PENDING:
                case JOURNAL_INTERRUPTED:
                        /* The plan lane's own entry is PENDING while it is
                         * checked: the lane is busy then, and this waits. */
                        if (d->plan != PLAN_IDLE || d->drops_in_flight > 0 || daemon_cancel_busy(d))
                                return;
                        if (daemon_stop_requested(d)) {
                                /* Plans wait in the journal for the next start. */
                                daemon_maybe_finish_stop(d);
                                return;
                        }
                        pump_plan(d, &e);
                        return;
                case JOURNAL_RUNNING:
                default:
                        /* Only the plan we run ourselves is RUNNING, and then
                         * we are busy; anything else is a bug worth seeing. */
                        log_error(NULL, "entry %s is marked running but no plan runs", e.ts);
                        return;
                }
        }
}

void daemon_store_delivery(Daemon *d, TransportDelivery *dl)
{
        DaemonWork *w = daemon_work_new(WORK_STORE, NULL);

        if (!w)
                goto fail;
        w->tag = dl->tag;
        w->body = dl->body;
        dl->body = NULL; /* ours now */
        w->body_len = dl->oversize ? 0 : dl->body_len;
        w->oversize = dl->oversize;
        w->msg_id = strdup(dl->message_id);
        w->reply_to = dl->reply_to ? strdup(dl->reply_to) : NULL;
        if (dl->signature_kind == TRANSPORT_SIGNATURE_BYTES && dl->signature_len > 0) {
                w->sig = malloc(dl->signature_len);
                if (w->sig) {
                        memcpy(w->sig, dl->signature, dl->signature_len);
                        w->sig_len = dl->signature_len;
                }
        }
        if (!w->msg_id || (dl->reply_to && !w->reply_to) ||
            (dl->signature_kind == TRANSPORT_SIGNATURE_BYTES && dl->signature_len > 0 && !w->sig) ||
            daemon_queue_work(d, w) < 0)
                goto fail;
        return;
fail:
        log_error(dl->message_id, "out of memory storing the plan; returning it to the queue");
        daemon_work_free(w);
        d->tops->reject(d->transport, dl->tag, true);
}

void daemon_work_free_all(Daemon *d)
{
        DaemonWork *w;

        free(d->busy_id);
        d->busy_id = NULL;
        free(d->pub_id);
        d->pub_id = NULL;
        while ((w = d->stalled)) {
                d->stalled = w->next;
                daemon_work_free(w);
        }
}
