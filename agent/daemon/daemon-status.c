/* The state `muranoagent status` reports, kept up to date by the daemon's
 * hooks (daemon-observe.h), and its JSON document (docs/operations.md
 * describes every field). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build-config.h"
#include "daemon/daemon-cancel.h"
#include "daemon/daemon-internal.h"
#include "daemon/daemon-observe.h"
#include "log/log.h"
#include "util/macro.h"
#include "util/pyjson.h"
#include "util/utf8.h"

/* uv_now() is the loop's cached time, refreshed once per iteration: close
 * enough for seconds of elapsed time, and free. */
static uint64_t now_ms(const Daemon *d)
{
        return uv_now(d->loop);
}

static void set_text(char **field, const char *text)
{
        free(*field);
        *field = text ? strdup(text) : NULL;
}

static void on_script_started(void *userdata, const char *what, pid_t pid)
{
        Daemon *d = userdata;
        DaemonObserve *o = &d->observe;

        set_text(&o->script, what);
        o->script_pid = pid;
        o->script_since = time(NULL);
        o->script_since_ms = now_ms(d);
        o->script_output = 0;
        daemon_progress_script_started(d, what, pid);
}

/* Keep the newest DAEMON_TAIL_BYTES of the plan's output. */
static void on_script_output(void *userdata, int stream, const char *data, size_t len)
{
        Daemon *d = userdata;
        DaemonObserve *o = &d->observe;

        daemon_progress_output(d, stream, data, len);
        o->script_output += len;
        if (len > DAEMON_TAIL_BYTES) {
                data += len - DAEMON_TAIL_BYTES;
                len = DAEMON_TAIL_BYTES;
        }
        for (size_t i = 0; i < len; i++) {
                if (o->tail_len < DAEMON_TAIL_BYTES)
                        o->tail[(o->tail_start + o->tail_len++) % DAEMON_TAIL_BYTES] = data[i];
                else {
                        o->tail[o->tail_start] = data[i];
                        o->tail_start = (o->tail_start + 1) % DAEMON_TAIL_BYTES;
                }
        }
}

static void on_script_finished(void *userdata, const char *what, int exit_code, const char *failure)
{
        Daemon *d = userdata;
        DaemonObserve *o = &d->observe;

        daemon_progress_script_finished(d, what, exit_code, failure,
                                        now_ms(d) - o->script_since_ms);
        set_text(&o->script, NULL);
        o->script_pid = 0;
}

const RunnerObserver daemon_observe_runner = {on_script_started, on_script_output,
                                              on_script_finished};

/* A plan for the recent list (id taken; NULL: unknown); the slot it went in. */
static DaemonRecent *recent_add(DaemonObserve *o, char *id, int error_code, int64_t duration_ms,
                                time_t finished)
{
        DaemonRecent *r = &o->recent[o->recent_next];

        free(r->id);
        *r = (DaemonRecent){
                .id = id,
                .error_code = error_code,
                .duration_ms = duration_ms,
                .finished = finished,
        };
        o->recent_next = (o->recent_next + 1) % DAEMON_RECENT_MAX;
        if (o->n_recent < DAEMON_RECENT_MAX)
                o->n_recent++;
        return r;
}

/* A done record of an earlier start: its plan, for the recent list. */
static void on_done_record(void *userdata, int64_t time_ns, const char *text, size_t len)
{
        DaemonObserve *o = userdata;
        _cleanup_json_ json_t *doc = pyjson_loadb(text, len, 0, NULL);
        const json_t *sid = json_object_get(doc, "SourceID");
        const json_t *code = json_object_get(doc, "ErrorCode");
        char *id = NULL;

        if (json_is_string(sid))
                id = strdup(json_string_value(sid));
        else if (json_is_integer(sid) &&
                 asprintf(&id, "%" JSON_INTEGER_FORMAT, json_integer_value(sid)) < 0)
                id = NULL;
        if (!id)
                return;
        recent_add(o, id, json_is_integer(code) ? (int)json_integer_value(code) : -1, -1,
                   (time_t)(time_ns / 1000000000))
                ->before_start = true;
        o->n_recent_loaded++;
}

void daemon_observe_init(Daemon *d)
{
        DaemonObserve *o = &d->observe;
        int rc;

        /* Before the loop runs: it reads the journal's done records. */
        if (d->journal) {
                rc = journal_done_newest(d->journal, DAEMON_RECENT_MAX, on_done_record, o);
                if (rc < 0)
                        log_warning(NULL, "cannot read the last plans' done records: %s",
                                    strerror(-rc));
        }

        if (d->runner)
                runner_set_observer(d->runner, &daemon_observe_runner, d);
        o->started = o->broker_since = time(NULL);
        o->started_ms = o->broker_since_ms = now_ms(d);
        o->broker = BROKER_CONNECTING;
}

static void clear_plan(DaemonObserve *o)
{
        set_text(&o->plan_id, NULL);
        set_text(&o->plan_cancelled_by, NULL);
        set_text(&o->script, NULL);
        o->script_pid = 0;
        o->tail_len = o->tail_start = 0;
}

void daemon_observe_done(Daemon *d)
{
        DaemonObserve *o = &d->observe;

        clear_plan(o);
        free(o->broker_host);
        free(o->broker_error);
        for (size_t i = 0; i < DAEMON_RECENT_MAX; i++)
                free(o->recent[i].id);
        for (size_t i = 0; i < o->n_queued; i++)
                free(o->queued[i].id);
        free(o->queued);
        *o = (DaemonObserve){0};
}

static void broker_move(Daemon *d, DaemonBrokerState to)
{
        DaemonObserve *o = &d->observe;

        if (o->broker == to)
                return;
        o->broker = to;
        o->broker_since = time(NULL);
        o->broker_since_ms = now_ms(d);
}

void daemon_observe_broker_ready(Daemon *d, const TransportReady *ready)
{
        DaemonObserve *o = &d->observe;

        broker_move(d, BROKER_CONNECTED);
        set_text(&o->broker_host, ready->broker);
        o->heartbeat = ready->heartbeat;
        o->connection = ready->connection;
}

void daemon_observe_broker_lost(Daemon *d, const TransportLoss *loss)
{
        DaemonObserve *o = &d->observe;

        if (loss->was_ready)
                o->reconnects++;
        /* Until the first connection the state stays "connecting". */
        if (o->broker != BROKER_CONNECTING || loss->was_ready || o->connection > 0)
                broker_move(d, BROKER_LOST);
        set_text(&o->broker_error, loss->reason);
}

void daemon_observe_plan_stored(Daemon *d, const char *ts, const char *id)
{
        DaemonObserve *o = &d->observe;
        size_t at = o->n_queued;
        char *copy;

        if (!*id)
                return; /* a message without message_id: status shows null */
        if (o->n_queued == o->queued_cap) {
                size_t cap = o->queued_cap ? 2 * o->queued_cap : 16;
                DaemonQueued *v;

                if (cap > DAEMON_QUEUED_KEPT || !(v = reallocarray(o->queued, cap, sizeof(*v))))
                        return; /* status shows its ID as unknown */
                o->queued = v;
                o->queued_cap = cap;
        }
        copy = strdup(id);
        if (!copy)
                return;
        /* Stored in order, as a rule: the place is found from the end. */
        while (at > 0 && strcmp(o->queued[at - 1].ts, ts) > 0)
                at--;
        memmove(o->queued + at + 1, o->queued + at, (o->n_queued - at) * sizeof(*o->queued));
        snprintf(o->queued[at].ts, sizeof(o->queued[at].ts), "%s", ts);
        o->queued[at].id = copy;
        o->n_queued++;
}

/* The entries up to ts (the plan that starts) are no longer queued: plans
 * run in the journal's order. */
static void queued_forget_to(DaemonObserve *o, const char *ts)
{
        size_t n = 0;

        if (o->n_queued == 0)
                return; /* o->queued may be NULL: no memmove of it */
        while (n < o->n_queued && strcmp(o->queued[n].ts, ts) <= 0)
                free(o->queued[n++].id);
        memmove(o->queued, o->queued + n, (o->n_queued - n) * sizeof(*o->queued));
        o->n_queued -= n;
}

static const char *queued_id(const DaemonObserve *o, const char *ts)
{
        size_t lo = 0, hi = o->n_queued;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(o->queued[mid].ts, ts);

                if (c == 0)
                        return o->queued[mid].id;
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

void daemon_observe_plan_started(Daemon *d, const char *id)
{
        DaemonObserve *o = &d->observe;

        queued_forget_to(o, d->busy_ts);
        clear_plan(o);
        set_text(&o->plan_id, id ? id : "");
        o->plan_since = time(NULL);
        o->plan_since_ms = now_ms(d);
        daemon_progress_plan_started(d, id);
}

void daemon_observe_plan_finished(Daemon *d, const json_t *result)
{
        DaemonObserve *o = &d->observe;
        json_t *code = json_object_get(result, "ErrorCode");
        DaemonRecent *r = recent_add(o, TAKE_PTR(o->plan_id),
                                     json_is_integer(code) ? (int)json_integer_value(code) : -1,
                                     (int64_t)(now_ms(d) - o->plan_since_ms), time(NULL));

        o->n_plans++;
        daemon_progress_plan_finished(d, r->error_code, (uint64_t)r->duration_ms);
        clear_plan(o);
}

void daemon_observe_plan_answered(Daemon *d, const char *id, int error_code)
{
        recent_add(&d->observe, strdup(id), error_code, -1, time(NULL));
}

void daemon_observe_plan_cancelled(Daemon *d, const char *by)
{
        if (d->observe.plan_id)
                set_text(&d->observe.plan_cancelled_by, by);
}

/* ---- the document --------------------------------------------------------- */

static json_t *iso_time(time_t t)
{
        struct tm tm;
        char buf[32];

        if (!gmtime_r(&t, &tm) || strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
                return json_null();
        return json_string(buf);
}

/* A JSON string of text, or null; bytes that are not UTF-8 become U+FFFD
 * (a script's output is any bytes). */
static json_t *text_json(const char *text, size_t len)
{
        _cleanup_free_ char *clean = NULL;
        size_t n;

        if (!text)
                return json_null();
        if (utf8_sanitize(text, len, &clean, &n) < 0)
                return NULL;
        return json_stringn(clean, n);
}

static const char *broker_state_name(DaemonBrokerState s)
{
        return s == BROKER_CONNECTED ? "connected"
               : s == BROKER_LOST    ? "disconnected"
                                     : "connecting";
}

static const char *stage_name(DaemonStage s)
{
        static const char *const names[] = {"starting", "running", "stopping", "stopping",
                                            "stopping"};
        return names[s];
}

static json_t *broker_json(Daemon *d)
{
        DaemonObserve *o = &d->observe;
        bool up = o->broker == BROKER_CONNECTED;

        return json_pack("{ss ss? ss so sI so? so? sI ss?}", "state", broker_state_name(o->broker),
                         "host", o->broker_host, "queue", d->cfg->rabbitmq.input_queue, "since",
                         iso_time(o->broker_since), "for_ms",
                         (json_int_t)(now_ms(d) - o->broker_since_ms), "heartbeat_s",
                         up ? json_integer(o->heartbeat) : NULL, "connection",
                         o->connection ? json_integer(o->connection) : NULL, "reconnects",
                         (json_int_t)o->reconnects, "last_error", up ? NULL : o->broker_error);
}

/* The last DAEMON_TAIL_LINES lines of the tail ring, oldest first; the
 * first may have lost its beginning to the ring. */
static json_t *tail_json(const DaemonObserve *o)
{
        char buf[DAEMON_TAIL_BYTES];
        size_t len = o->tail_len, start, newlines = 0;
        json_t *lines = json_array();

        if (!lines || len == 0)
                return lines;
        for (size_t i = 0; i < len; i++)
                buf[i] = o->tail[(o->tail_start + i) % DAEMON_TAIL_BYTES];
        if (buf[len - 1] == '\n')
                len--;
        for (start = len; start > 0; start--)
                if (buf[start - 1] == '\n' && ++newlines == DAEMON_TAIL_LINES)
                        break;
        for (size_t i = start; i <= len;) {
                size_t e = i;
                while (e < len && buf[e] != '\n')
                        e++;
                if (json_array_append_new(lines, text_json(buf + i, e - i)) < 0) {
                        json_decref(lines);
                        return NULL;
                }
                i = e + 1;
        }
        return lines;
}

static json_t *plan_json(Daemon *d)
{
        DaemonObserve *o = &d->observe;
        json_t *script = NULL;

        if (!o->plan_id)
                return json_null();
        if (o->script)
                script = json_pack("{ss si so sI sI}", "name", o->script, "pid", (int)o->script_pid,
                                   "since", iso_time(o->script_since), "elapsed_ms",
                                   (json_int_t)(now_ms(d) - o->script_since_ms), "output_bytes",
                                   (json_int_t)o->script_output);
        return json_pack("{so so sI so so so}", "id", text_json(o->plan_id, strlen(o->plan_id)),
                         "since", iso_time(o->plan_since), "elapsed_ms",
                         (json_int_t)(now_ms(d) - o->plan_since_ms), "script",
                         script ? script : json_null(), "output_tail", tail_json(o), "cancelled_by",
                         o->plan_cancelled_by ? json_string(o->plan_cancelled_by) : json_null());
}

static json_t *recent_json(const DaemonObserve *o)
{
        json_t *plans = json_array();

        for (size_t k = 0; plans && k < o->n_recent; k++) {
                size_t i = (o->recent_next + DAEMON_RECENT_MAX - 1 - k) % DAEMON_RECENT_MAX;
                const DaemonRecent *r = &o->recent[i];
                json_t *p =
                        json_pack("{s o si s o s o s o}", "id",
                                  text_json(r->id ? r->id : "", r->id ? strlen(r->id) : 0),
                                  "error_code", r->error_code, "duration_ms",
                                  r->duration_ms >= 0 ? json_integer(r->duration_ms) : json_null(),
                                  "finished", iso_time(r->finished), "before_start",
                                  json_boolean(r->before_start));
                if (json_array_append_new(plans, p) < 0) {
                        json_decref(plans);
                        return NULL;
                }
        }
        return plans;
}

/* How many entries wait to run and how many results wait to be sent, from
 * the journal's index in memory; -1 each when it cannot say now. The first
 * DAEMON_QUEUED_SHOWN of those waiting go to *ret_plans (NULL when out of
 * memory), with the IDs kept since they were stored (null: stored before
 * the agent started, or the message had no message_id). */
static void journal_counts(Daemon *d, json_int_t *ret_queued, json_int_t *ret_unsent,
                           json_t **ret_plans)
{
        _cleanup_free_ JournalEntry *v = NULL;
        size_t n = 0;

        *ret_queued = *ret_unsent = -1;
        *ret_plans = json_array();
        if (!d->journal || journal_list(d->journal, &v, &n) < 0)
                return;
        *ret_queued = *ret_unsent = 0;
        for (size_t i = 0; i < n; i++) {
                const char *id;

                if (v[i].state == JOURNAL_RESULT) {
                        (*ret_unsent)++;
                        continue;
                }
                if (v[i].state == JOURNAL_RUNNING || streq(v[i].ts, d->busy_ts))
                        continue;
                if (*ret_plans && (*ret_queued)++ < DAEMON_QUEUED_SHOWN) {
                        id = queued_id(&d->observe, v[i].ts);
                        if (json_array_append_new(
                                    *ret_plans,
                                    json_pack("{ss so}", "entry", v[i].ts, "id",
                                              id ? text_json(id, strlen(id)) : json_null())) < 0)
                                *ret_plans = (json_decref(*ret_plans), NULL);
                } else if (!*ret_plans)
                        (*ret_queued)++;
        }
}

json_t *daemon_status_json(Daemon *d)
{
        DaemonObserve *o = &d->observe;
        json_int_t queued, unsent;
        json_t *queued_plans;

        journal_counts(d, &queued, &unsent, &queued_plans);
        return json_pack("{s{si ss s o sI ss sI} s o s o s o s o s o s o s{ss s o} s o}", "agent",
                         "pid", (int)getpid(), "version", PACKAGE_VERSION, "started",
                         iso_time(o->started), "uptime_ms", (json_int_t)(now_ms(d) - o->started_ms),
                         "stage", stage_name(d->stage), "plans_done", (json_int_t)o->n_plans,
                         "broker", broker_json(d), "plan", plan_json(d), "queued",
                         queued >= 0 ? json_integer(queued) : json_null(), "queued_plans",
                         queued_plans, "unsent", unsent >= 0 ? json_integer(unsent) : json_null(),
                         "cancels", daemon_cancel_json(d), "recent", "source",
                         o->n_recent_loaded > 0 ? "the journal's done records at start, then memory"
                                                : "memory since the agent started",
                         "plans", recent_json(o), "progress", daemon_progress_json(d));
}
