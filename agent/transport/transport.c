/* The transport's loop-thread half: the public API, the queues to and from
 * the I/O thread (transport-io.c), and the bookkeeping that lets the owner
 * rely on simple promises: every publish is confirmed, nacked or reported
 * lost exactly once; an ack either goes out or says why not; nothing is
 * reported after stop but confirms.
 *
 * Why a thread and not uv_poll on the socket: rabbitmq-c writes a message
 * with blocking semantics (it polls until the socket takes all of it), so a
 * large result, or a broker that stops reading while a memory alarm is up,
 * would stall the loop inside amqp_basic_publish(); connect, the TLS
 * handshake and login are blocking round trips as well. A thread that owns
 * the connection keeps all of that off the loop, keeps heartbeats going
 * whatever the loop does, and lets rabbitmq-c be used as it was designed.
 * The price is two wake-ups per round trip (an eventfd write to the thread,
 * a uv_async_send back), each a few microseconds.
 *
 * libuv's memory rule: the async and timer handles live in the Transport,
 * so its memory is freed only after both close callbacks have run. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "transport/transport-internal.h"
#include "util/macro.h"

/* AMQP short strings (exchange, routing key, message_id) hold 255 bytes. */
#define SHORTSTR_MAX 255

void transport_options_from_config(TransportOptions *ret, const Config *c)
{
        *ret = (TransportOptions){
                .brokers = c->rabbitmq.hosts,
                .n_brokers = c->rabbitmq.n_hosts,
                .login = c->rabbitmq.login,
                .password = c->rabbitmq.password,
                .virtual_host = c->rabbitmq.virtual_host,
                .queue = c->rabbitmq.input_queue,
                .declare_queue = c->agent.declare_queue,
                .heartbeat = c->agent.heartbeat,
                .ssl = c->rabbitmq.ssl,
                .ssl_version = c->rabbitmq.ssl_version,
                .ca_certs = c->rabbitmq.ca_certs,
                .insecure = c->rabbitmq.insecure,
                .verify_hostname = c->agent.verify_hostname,
                .reconnect_initial_ms = TRANSPORT_RECONNECT_INITIAL_MS,
                .reconnect_max_ms = (uint64_t)c->agent.reconnect_max_delay * 1000,
                .connect_timeout_ms = TRANSPORT_CONNECT_TIMEOUT_MS,
                .stop_confirm_ms = TRANSPORT_STOP_CONFIRM_MS,
                .max_body_size = c->agent.max_plan_size,
        };
}

void transport_cmd_free(TransportCmd *c)
{
        if (!c)
                return;
        free(c->exchange);
        free(c->routing_key);
        free(c->message_id);
        free(c->body);
        free(c);
}

void transport_event_free(TransportEvent *e)
{
        if (!e)
                return;
        free(e->text);
        transport_message_done(&e->msg);
        free(e);
}

static void options_done(Transport *t)
{
        for (size_t i = 0; t->brokers && i < t->opts.n_brokers; i++)
                free(t->brokers[i].host);
        free(t->brokers);
        free((char *)t->opts.login);
        free((char *)t->opts.password);
        free((char *)t->opts.virtual_host);
        free((char *)t->opts.queue);
        free((char *)t->opts.ca_certs);
}

static int options_copy(Transport *t, const TransportOptions *o)
{
        t->opts = *o;
        t->opts.brokers = NULL;
        t->opts.login = strdup(o->login ? o->login : "");
        t->opts.password = strdup(o->password ? o->password : "");
        /* kombu takes an empty virtual host as the default one. */
        t->opts.virtual_host =
                strdup(o->virtual_host && o->virtual_host[0] ? o->virtual_host : "/");
        t->opts.queue = strdup(o->queue);
        t->opts.ca_certs = strdup(o->ca_certs ? o->ca_certs : "");
        t->brokers = calloc(o->n_brokers, sizeof(*t->brokers));
        if (!t->opts.login || !t->opts.password || !t->opts.virtual_host || !t->opts.queue ||
            !t->opts.ca_certs || !t->brokers)
                return -ENOMEM;
        for (size_t i = 0; i < o->n_brokers; i++) {
                t->brokers[i].port = o->brokers[i].port;
                t->brokers[i].host = strdup(o->brokers[i].host);
                if (!t->brokers[i].host)
                        return -ENOMEM;
        }
        t->opts.brokers = t->brokers;
        if (t->opts.max_body_size == 0)
                t->opts.max_body_size = UINT64_MAX;
        if (t->opts.connect_timeout_ms == 0)
                t->opts.connect_timeout_ms = TRANSPORT_CONNECT_TIMEOUT_MS;
        if (t->opts.reconnect_initial_ms == 0)
                t->opts.reconnect_initial_ms = TRANSPORT_RECONNECT_INITIAL_MS;
        return 0;
}

static bool options_valid(const TransportOptions *o, const TransportCallbacks *cb)
{
        if (!o->brokers || o->n_brokers == 0 || !o->queue || !o->queue[0] ||
            strlen(o->queue) > SHORTSTR_MAX || o->heartbeat > UINT16_MAX)
                return false;
        for (size_t i = 0; i < o->n_brokers; i++)
                if (!o->brokers[i].host || !o->brokers[i].host[0] || o->brokers[i].port == 0 ||
                    o->brokers[i].port > 65535)
                        return false;
        return cb->on_ready && cb->on_lost && cb->on_delivery && cb->on_confirm;
}

int transport_new(uv_loop_t *loop, const TransportOptions *opts,
                  const TransportCallbacks *callbacks, void *userdata, Transport **ret)
{
        Transport *t;
        int r;

        if (!options_valid(opts, callbacks))
                return -EINVAL;
        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->loop = loop;
        t->cb = *callbacks;
        t->userdata = userdata;
        t->cmds_tail = &t->cmds;
        t->events_tail = &t->events;
        t->sock_fd = -1;
        t->wake_fd = -1;
        t->io.held_tail = &t->io.held;
        t->io.next_broker_tag = 1;
        r = uv_mutex_init(&t->lock);
        if (r < 0) {
                free(t);
                return r;
        }
        r = options_copy(t, opts);
        if (r < 0)
                goto fail;
        t->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (t->wake_fd < 0) {
                r = -errno;
                goto fail;
        }
        transport_backoff_init(&t->io.backoff, t->opts.reconnect_initial_ms,
                               t->opts.reconnect_max_ms);
        t->io.rng = transport_random_seed();
        transport_assembler_init(&t->io.assembler, TRANSPORT_CHANNEL, t->opts.max_body_size);
        *ret = t;
        return 0;
fail:
        transport_free(t);
        return r;
}

static void wake_thread(Transport *t)
{
        uint64_t one = 1;
        /* EAGAIN means the counter is already non-zero: awake either way. */
        (void)!write(t->wake_fd, &one, sizeof(one));
}

static void enqueue(Transport *t, TransportCmd *c)
{
        bool was_empty;

        uv_mutex_lock(&t->lock);
        was_empty = !t->cmds;
        *t->cmds_tail = c;
        t->cmds_tail = &c->next;
        uv_mutex_unlock(&t->lock);
        /* The thread empties the eventfd before it takes the queue, so one
         * write per empty-to-non-empty change is never lost. */
        if (was_empty)
                wake_thread(t);
}

TransportCmd *transport_take_cmds(Transport *t, bool *ret_stop)
{
        TransportCmd *c;

        uv_mutex_lock(&t->lock);
        c = t->cmds;
        t->cmds = NULL;
        t->cmds_tail = &t->cmds;
        *ret_stop = t->stop_requested;
        uv_mutex_unlock(&t->lock);
        return c;
}

void transport_post_event(Transport *t, TransportEvent *e)
{
        uv_mutex_lock(&t->lock);
        *t->events_tail = e;
        t->events_tail = &e->next;
        uv_mutex_unlock(&t->lock);
        (void)uv_async_send(&t->async);
}

/* The connection the loop knew is gone: its publishes are lost, and its
 * unsettled deliveries are kept only to answer -ENOTCONN once. */
static void loop_lost(Transport *t)
{
        TransportIdMap pending;
        size_t kept = 0;

        t->ready = false;
        for (size_t i = 0; i < t->unsettled.n; i++)
                if (t->unsettled.items[i].epoch == t->epoch)
                        t->unsettled.items[kept++] = t->unsettled.items[i];
        t->unsettled.n = kept;

        /* Taken out first: on_confirm may publish again (and gets -ENOTCONN). */
        transport_idmap_take(&t->outstanding, &pending);
        for (size_t i = 0; i < pending.n; i++)
                t->cb.on_confirm(t, pending.items[i].key, TRANSPORT_CONFIRM_LOST, t->userdata);
        transport_idmap_done(&pending);
}

static void deliver(Transport *t, TransportEvent *e)
{
        TransportMessage *m = &e->msg;
        TransportDelivery d;
        uint64_t tag;

        if (t->stopping || !t->ready || e->epoch != t->epoch)
                return; /* never acked: the broker delivers it again */
        tag = ++t->next_tag;
        if (transport_idmap_append(&t->unsettled, tag, m->amqp_tag, e->epoch) < 0) {
                /* Without a way to settle it, hand it back, or prefetch 1
                 * would stop the consumer for good. */
                TransportCmd *c = calloc(1, sizeof(*c));
                if (c) {
                        *c = (TransportCmd){.kind = TRANSPORT_CMD_REJECT,
                                            .epoch = e->epoch,
                                            .amqp_tag = m->amqp_tag,
                                            .requeue = true};
                        enqueue(t, c);
                }
                return;
        }
        d = (TransportDelivery){
                .tag = tag,
                .redelivered = m->redelivered,
                .body = m->body,
                .body_len = m->body_len,
                .oversize = m->oversize,
                .message_id = m->message_id,
                .reply_to = m->reply_to,
                .signature_kind = m->signature_kind,
                .signature = m->signature,
                .signature_len = m->signature_len,
                .exchange = m->exchange,
                .routing_key = m->routing_key,
        };
        t->cb.on_delivery(t, &d, t->userdata);
        /* The callee may have taken the body. */
        m->body = d.body;
}

static void on_handle_closed(uv_handle_t *h)
{
        Transport *t = h->data;

        if (--t->handles_open > 0)
                return;
        if (t->free_requested)
                transport_free(t);
        else if (t->stopped)
                t->stopped(t, t->userdata); /* the last use of t: it may be freed */
}

static void finish(Transport *t)
{
        TransportIdMap pending;

        (void)uv_thread_join(&t->thread);
        t->exited = true;
        t->ready = false;
        transport_idmap_take(&t->outstanding, &pending);
        for (size_t i = 0; i < pending.n; i++)
                t->cb.on_confirm(t, pending.items[i].key, TRANSPORT_CONFIRM_LOST, t->userdata);
        transport_idmap_done(&pending);
        uv_close((uv_handle_t *)&t->async, on_handle_closed);
        uv_close((uv_handle_t *)&t->force_timer, on_handle_closed);
}

static void dispatch(Transport *t, TransportEvent *e)
{
        switch (e->kind) {
        case TRANSPORT_EVENT_READY: {
                if (t->ready)
                        loop_lost(t); /* its LOST could not be posted */
                if (t->stopping)
                        break;
                TransportReady r = {
                        .broker = e->text, .heartbeat = e->heartbeat, .connection = e->epoch};
                t->ready = true;
                t->epoch = e->epoch;
                t->cb.on_ready(t, &r, t->userdata);
                break;
        }
        case TRANSPORT_EVENT_LOST: {
                if (t->ready)
                        loop_lost(t);
                if (t->stopping)
                        break;
                TransportLoss l = {.reason = e->text ? e->text : "out of memory",
                                   .error = e->error,
                                   .was_ready = e->was_ready,
                                   .retry_ms = e->retry_ms};
                t->cb.on_lost(t, &l, t->userdata);
                break;
        }
        case TRANSPORT_EVENT_DELIVERY:
                deliver(t, e);
                break;
        case TRANSPORT_EVENT_CONFIRM:
                if (transport_idmap_remove(&t->outstanding, e->seq, NULL) == 0)
                        t->cb.on_confirm(t, e->seq,
                                         e->ack ? TRANSPORT_CONFIRM_ACK : TRANSPORT_CONFIRM_NACK,
                                         t->userdata);
                break;
        case TRANSPORT_EVENT_EXITED:
                finish(t);
                break;
        }
}

static void on_async(uv_async_t *a)
{
        Transport *t = a->data;
        TransportEvent *e;

        uv_mutex_lock(&t->lock);
        e = t->events;
        t->events = NULL;
        t->events_tail = &t->events;
        uv_mutex_unlock(&t->lock);

        while (e) {
                TransportEvent *next = e->next;
                bool exited = e->kind == TRANSPORT_EVENT_EXITED;
                dispatch(t, e);
                transport_event_free(e);
                if (exited)
                        return; /* the last event; handles are closing */
                e = next;
        }
}

static void on_force(uv_timer_t *timer)
{
        Transport *t = timer->data;

        /* The thread is stuck in a write the broker does not read, or in a
         * close that does not end: take the socket from under it. */
        uv_mutex_lock(&t->lock);
        if (t->sock_fd >= 0)
                (void)shutdown(t->sock_fd, SHUT_RDWR);
        uv_mutex_unlock(&t->lock);
}

int transport_start(Transport *t)
{
        int r;

        if (t->started)
                return -EALREADY;
        t->exit_event = calloc(1, sizeof(*t->exit_event));
        if (!t->exit_event)
                return -ENOMEM;
        t->exit_event->kind = TRANSPORT_EVENT_EXITED;
        r = uv_async_init(t->loop, &t->async, on_async);
        if (r < 0)
                goto fail;
        t->async.data = t;
        r = uv_timer_init(t->loop, &t->force_timer);
        if (r < 0) {
                t->handles_open = 1;
                uv_close((uv_handle_t *)&t->async, on_handle_closed);
                goto fail;
        }
        t->force_timer.data = t;
        t->handles_open = 2;
        r = uv_thread_create(&t->thread, transport_io_main, t);
        if (r < 0) {
                uv_close((uv_handle_t *)&t->async, on_handle_closed);
                uv_close((uv_handle_t *)&t->force_timer, on_handle_closed);
                goto fail;
        }
        t->started = true;
        return 0;
fail:
        free(t->exit_event);
        t->exit_event = NULL;
        return r;
}

/* Copy a command's strings; -EINVAL for those AMQP cannot carry. */
static int cmd_new_publish(const char *exchange, const char *routing_key, const char *message_id,
                           const void *body, size_t len, TransportCmd **ret)
{
        TransportCmd *c;

        if (!exchange || !routing_key || !message_id || (!body && len > 0))
                return -EINVAL;
        if (strlen(exchange) > SHORTSTR_MAX || strlen(routing_key) > SHORTSTR_MAX ||
            strlen(message_id) > SHORTSTR_MAX)
                return -EINVAL;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->kind = TRANSPORT_CMD_PUBLISH;
        c->exchange = strdup(exchange);
        c->routing_key = strdup(routing_key);
        c->message_id = strdup(message_id);
        c->body = malloc(len ? len : 1);
        if (!c->exchange || !c->routing_key || !c->message_id || !c->body) {
                transport_cmd_free(c);
                return -ENOMEM;
        }
        if (len)
                memcpy(c->body, body, len);
        c->body_len = len;
        *ret = c;
        return 0;
}

int transport_publish(Transport *t, const char *exchange, const char *routing_key,
                      const char *message_id, const void *body, size_t len, uint64_t *ret_seq)
{
        TransportCmd *c;
        int r;

        if (t->stopping)
                return -ESHUTDOWN;
        if (!t->ready)
                return -ENOTCONN;
        r = cmd_new_publish(exchange, routing_key, message_id, body, len, &c);
        if (r < 0)
                return r;
        c->epoch = t->epoch;
        c->seq = t->next_seq + 1;
        r = transport_idmap_append(&t->outstanding, c->seq, 0, t->epoch);
        if (r < 0) {
                transport_cmd_free(c);
                return r;
        }
        t->next_seq++;
        /* c belongs to the I/O thread once queued. */
        enqueue(t, TAKE_PTR(c));
        *ret_seq = t->next_seq;
        return 0;
}

static int settle(Transport *t, uint64_t tag, TransportCmdKind kind, bool requeue)
{
        TransportIdEntry e;
        TransportCmd *c;

        if (t->stopping)
                return -ESHUTDOWN;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        if (transport_idmap_remove(&t->unsettled, tag, &e) < 0) {
                free(c);
                return -ENOENT;
        }
        if (!t->ready || e.epoch != t->epoch) {
                free(c);
                return -ENOTCONN;
        }
        *c = (TransportCmd){
                .kind = kind, .epoch = e.epoch, .amqp_tag = e.value, .requeue = requeue};
        enqueue(t, c);
        return 0;
}

int transport_ack(Transport *t, uint64_t tag)
{
        return settle(t, tag, TRANSPORT_CMD_ACK, false);
}

int transport_reject(Transport *t, uint64_t tag, bool requeue)
{
        return settle(t, tag, TRANSPORT_CMD_REJECT, requeue);
}

size_t transport_outstanding(const Transport *t)
{
        return t->outstanding.n;
}

bool transport_is_ready(const Transport *t)
{
        return t->ready && !t->stopping;
}

int transport_stop(Transport *t, transport_stopped_cb stopped)
{
        uint64_t force_ms;

        if (!t->started)
                return -EINVAL;
        if (t->stopping)
                return -EALREADY;
        t->stopping = true;
        t->stopped = stopped;
        uv_mutex_lock(&t->lock);
        t->stop_requested = true;
        uv_mutex_unlock(&t->lock);
        wake_thread(t);
        /* A stop normally ends within stop_confirm_ms plus a few round trips.
         * The timer repeats because the socket it shuts down may be one
         * that did not exist yet the first time. */
        force_ms = t->opts.connect_timeout_ms + t->opts.stop_confirm_ms;
        (void)uv_timer_start(&t->force_timer, on_force, force_ms, t->opts.connect_timeout_ms);
        return 0;
}

Transport *transport_free(Transport *t)
{
        if (!t)
                return NULL;
        /* A started transport is freed only once stopped; one whose start
         * failed waits for its handles to close (on_handle_closed). */
        if (t->started && !t->exited)
                abort();
        if (t->handles_open > 0) {
                t->free_requested = true;
                return NULL;
        }
        while (t->cmds) {
                TransportCmd *c = t->cmds;
                t->cmds = c->next;
                transport_cmd_free(c);
        }
        while (t->events) {
                TransportEvent *e = t->events;
                t->events = e->next;
                transport_event_free(e);
        }
        transport_event_free(t->exit_event);
        transport_idmap_done(&t->outstanding);
        transport_idmap_done(&t->unsettled);
        transport_idmap_done(&t->io.confirms);
        transport_assembler_reset(&t->io.assembler);
        free(t->io.broker_name);
        free(t->io.consumer_tag);
        options_done(t);
        if (t->wake_fd >= 0)
                close(t->wake_fd);
        uv_mutex_destroy(&t->lock);
        free(t);
        return NULL;
}
