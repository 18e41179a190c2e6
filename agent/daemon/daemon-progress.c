/* The live progress events of the running plan (daemon-observe.h,
 * progress/progress.h): encoded here, gathered for PROGRESS_BATCH_MS into
 * one message (a plan's last events go with its result), published without
 * confirms being waited for, and dropped whenever the broker is not there
 * to take them at once. Output is gathered per stream and sent at most
 * once per PROGRESS_INTERVAL_MS, PROGRESS_CHUNK_MAX bytes at most. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "daemon/daemon-internal.h"
#include "log/log.h"
#include "progress/progress.h"
#include "util/macro.h"

typedef struct DaemonProgress {
        Daemon *d;
        const char *key; /* borrowed from the configuration */
        char *plan_id;   /* owned: the running plan's, NULL when none */
        uint64_t seq;    /* the plan's last event number */
        char *script;    /* owned: the running command's name, NULL when none */
        ProgressOutput out[2];
        ProgressBatch batch;
        uv_timer_t send; /* sends the batch PROGRESS_BATCH_MS after its first event */
        uv_timer_t flush;
        unsigned open_timers;   /* send and flush, until their close callbacks */
        uint64_t last_flush_ms; /* uv_now of the last output chunks */
        uint64_t sent, dropped;
} DaemonProgress;

static int64_t wall_ms(void)
{
        struct timeval tv;

        gettimeofday(&tv, NULL);
        return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

/* Whether the broker can take one more message now without it waiting
 * behind others: connected, and not many publishes unconfirmed. */
static bool room(const Daemon *d)
{
        if (!d->transport || !d->tops->is_ready(d->transport) || !d->tops->outstanding)
                return false;
        return d->tops->outstanding(d->transport) < DAEMON_PROGRESS_BACKLOG_MAX;
}

/* Publish the batch as one message, or drop it. */
static void send_batch(DaemonProgress *p)
{
        Daemon *d = p->d;
        unsigned n = p->batch.n;
        const char *body;
        size_t len;
        uint64_t seq;

        uv_timer_stop(&p->send);
        progress_batch_take(&p->batch, &body, &len);
        if (!body)
                return;
        /* Its confirm, if one comes, matches no result: the pump ignores
         * it. */
        if (room(d) && d->tops->publish(d->transport, d->cfg->rabbitmq.result_exchange, p->key, "",
                                        body, len, &seq) == 0)
                p->sent += n;
        else
                p->dropped += n;
}

static void on_send(uv_timer_t *t)
{
        send_batch(t->data);
}

/* Number e and add it to the batch. */
static void emit(DaemonProgress *p, ProgressEvent *e)
{
        e->plan = p->plan_id;
        e->seq = ++p->seq;
        e->time_ms = wall_ms();
        if (progress_batch_add(&p->batch, e) < 0) {
                p->dropped++;
                return;
        }
        if (progress_batch_full(&p->batch))
                send_batch(p);
        else if (!uv_is_active((uv_handle_t *)&p->send))
                uv_timer_start(&p->send, on_send, PROGRESS_BATCH_MS, 0);
}

/* Send what the streams hold; final: the command is over. */
static void flush_output(DaemonProgress *p, bool final)
{
        char text[PROGRESS_CHUNK_MAX];

        for (int i = 0; i < 2; i++) {
                ProgressEvent e = {.kind = PROGRESS_OUTPUT,
                                   .script = p->script,
                                   .stream = i + 1,
                                   .text = text};
                if (progress_output_take(&p->out[i], final, text, &e.text_len, &e.dropped))
                        emit(p, &e);
        }
        p->last_flush_ms = uv_now(p->d->loop);
}

static void on_flush(uv_timer_t *t)
{
        flush_output(t->data, false);
}

int daemon_progress_start(Daemon *d)
{
        const Config *cfg = d->cfg;
        const char *key = cfg->agent.progress_routing_key;
        const char *rk = cfg->rabbitmq.result_routing_key;
        const char *why = NULL;
        DaemonProgress *p;

        if (!key || !*key)
                return 0;
        if (rk && streq(key, rk))
                why = "is the results' routing key";
        else if (!*cfg->rabbitmq.result_exchange && streq(key, cfg->rabbitmq.input_queue))
                why = "would send the events to the agent's own queue";
        else if (strlen(key) > 255)
                why = "is longer than AMQP's 255 bytes";
        if (why) {
                log_error(NULL, "[agent] progress_routing_key '%.64s' %s; progress events are off",
                          key, why);
                return -EINVAL;
        }
        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->d = d;
        p->key = key;
        uv_timer_init(d->loop, &p->flush);
        uv_timer_init(d->loop, &p->send);
        p->flush.data = p->send.data = p;
        p->open_timers = 2;
        d->observe.progress = p;
        log_info(NULL, "progress events go to exchange '%s' with routing key '%s'",
                 cfg->rabbitmq.result_exchange, key);
        return 0;
}

static void on_timer_closed(uv_handle_t *h)
{
        DaemonProgress *p = h->data;

        if (--p->open_timers > 0)
                return;
        progress_batch_clear(&p->batch);
        free(p->plan_id);
        free(p->script);
        free(p);
}

void daemon_progress_stop(Daemon *d)
{
        DaemonProgress *p = d->observe.progress;

        if (!p)
                return;
        d->observe.progress = NULL;
        uv_close((uv_handle_t *)&p->flush, on_timer_closed);
        uv_close((uv_handle_t *)&p->send, on_timer_closed);
}

void daemon_progress_plan_started(Daemon *d, const char *id)
{
        DaemonProgress *p = d->observe.progress;
        ProgressEvent e = {.kind = PROGRESS_ACCEPTED};

        if (!p)
                return;
        /* A message holds one plan's events. */
        send_batch(p);
        free(p->plan_id);
        p->plan_id = strdup(id ? id : "");
        p->seq = 0;
        emit(p, &e);
}

void daemon_progress_script_started(Daemon *d, const char *what, pid_t pid)
{
        DaemonProgress *p = d->observe.progress;
        ProgressEvent e = {.kind = PROGRESS_SCRIPT_STARTED, .script = what, .pid = pid};

        if (!p)
                return;
        free(p->script);
        p->script = strdup(what);
        memset(p->out, 0, sizeof(p->out));
        emit(p, &e);
}

void daemon_progress_output(Daemon *d, int stream, const char *data, size_t len)
{
        DaemonProgress *p = d->observe.progress;
        uint64_t now, next;

        if (!p || stream < 1 || stream > 2)
                return;
        progress_output_add(&p->out[stream - 1], data, len);
        if (uv_is_active((uv_handle_t *)&p->flush))
                return;
        /* The first output after a quiet spell goes at once; then at most
         * one chunk per stream per interval. */
        now = uv_now(d->loop);
        next = p->last_flush_ms + PROGRESS_INTERVAL_MS;
        uv_timer_start(&p->flush, on_flush, next > now ? next - now : 0, 0);
}

void daemon_progress_script_finished(Daemon *d, const char *what, int exit_code,
                                     const char *failure, uint64_t duration_ms)
{
        DaemonProgress *p = d->observe.progress;
        ProgressEvent e = {.kind = PROGRESS_SCRIPT_FINISHED,
                           .script = what,
                           .exit_code = exit_code,
                           .failure = failure,
                           .duration_ms = duration_ms};

        if (!p)
                return;
        uv_timer_stop(&p->flush);
        flush_output(p, true);
        emit(p, &e);
        free(p->script);
        p->script = NULL;
}

void daemon_progress_plan_finished(Daemon *d, int error_code, uint64_t duration_ms)
{
        DaemonProgress *p = d->observe.progress;
        ProgressEvent e = {.kind = PROGRESS_PLAN_FINISHED,
                           .error_code = error_code,
                           .duration_ms = duration_ms};

        if (!p)
                return;
        emit(p, &e);
        free(p->plan_id);
        p->plan_id = NULL;
}

void daemon_progress_flush(Daemon *d)
{
        if (d->observe.progress)
                send_batch(d->observe.progress);
}

json_t *daemon_progress_json(Daemon *d)
{
        DaemonProgress *p = d->observe.progress;

        if (!p)
                return json_null();
        return json_pack("{ss sI sI}", "routing_key", p->key, "sent", (json_int_t)p->sent,
                         "dropped", (json_int_t)p->dropped);
}
