/* The I/O thread: it owns the rabbitmq-c connection from birth to death and
 * is the only thread that calls into rabbitmq-c.
 *
 * Its life is a loop of connection attempts (transport-connect.c), each
 * followed, when it succeeds, by a session: poll() on the socket and on the
 * eventfd the loop thread writes when it queues a command; run the queued
 * publishes, acks and rejects; then read frames with
 * amqp_simple_wait_frame_noblock() and a zero timeout until it says
 * AMQP_STATUS_TIMEOUT. Reading until then, rather than once per poll()
 * wake-up, also empties what rabbitmq-c buffered (amqp_data_in_buffer(),
 * amqp_frames_enqueued(): frames it read while it waited for an RPC reply
 * or a write) and what OpenSSL decrypted ahead, neither of which poll() can
 * see. Each frame goes through the assembler (transport-frame.c), which
 * copies what it keeps, and then rabbitmq-c's pool for that channel is
 * recycled with amqp_maybe_release_buffers_on_channel(), which leaves pools
 * with queued frames alone. No envelope API (amqp_consume_message) is used,
 * so there is no amqp_destroy_envelope() to forget.
 *
 * Heartbeats: the thread sends one whenever it is awake and its last one
 * is a quarter of the heartbeat old, and sleeps at most until the next one
 * is due (a heartbeat after the last) or the broker is overdue. An idle
 * broker sends its own heartbeat every heartbeat/2, which wakes the thread,
 * so ours ride on those wake-ups and an idle connection costs the thread
 * two wake-ups per heartbeat and no timer of its own (docs/transport.md,
 * "Heartbeats"). The owner's hook (TransportOptions.awake) runs on every
 * wake-up too, so the daemon's watchdog pings cost no wake-up of their own.
 * A broker that sends nothing at all (not even heartbeats)
 * for twice the heartbeat is declared gone. rabbitmq-c notices that in a
 * read; the thread also keeps the time of the last inbound byte itself, so
 * that the guarantee rests on code here and not on a detail of the
 * library's timers.
 *
 * Commands carry the number of the connection they were made for; one for
 * an earlier connection is dropped, and the loop thread reports its publish
 * as lost when it hears of the loss. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "transport/transport-internal.h"
#include "util/macro.h"

#define NSEC_PER_MSEC 1000000ULL

static uint64_t now_ns(void)
{
        return uv_hrtime();
}

/* The thread is awake, whatever woke it: the owner's hook rides on it. */
static void io_awake(const Transport *t)
{
        if (t->opts.awake)
                t->opts.awake(t->opts.awake_data);
}

static void wake_drain(int fd)
{
        uint64_t v;
        (void)!read(fd, &v, sizeof(v));
}

static void free_cmds(TransportCmd *c)
{
        while (c) {
                TransportCmd *next = c->next;
                transport_cmd_free(c);
                c = next;
        }
}

static int post(Transport *t, TransportEventKind kind, TransportEvent **ret)
{
        TransportEvent *e = calloc(1, sizeof(*e));

        if (!e)
                return -ENOMEM;
        e->kind = kind;
        e->epoch = t->io.epoch;
        *ret = e;
        return 0;
}

static void post_lost(Transport *t, int error, char *reason, bool was_ready, uint64_t retry_ms)
{
        TransportEvent *e;

        if (post(t, TRANSPORT_EVENT_LOST, &e) < 0) {
                /* The loop thread treats the next READY as the end of the
                 * connection it knew, so nothing stays unsettled. */
                free(reason);
                return;
        }
        e->text = reason ? reason : strdup("out of memory");
        e->error = error;
        e->was_ready = was_ready;
        e->retry_ms = retry_ms;
        transport_post_event(t, e);
}

static int post_ready(Transport *t)
{
        TransportEvent *e;

        if (post(t, TRANSPORT_EVENT_READY, &e) < 0)
                return -ENOMEM;
        e->text = strdup(t->io.broker_name);
        e->heartbeat = t->io.heartbeat;
        if (!e->text) {
                transport_event_free(e);
                return -ENOMEM;
        }
        transport_post_event(t, e);
        return 0;
}

static int post_confirm(Transport *t, uint64_t seq, bool ack)
{
        TransportEvent *e;

        if (post(t, TRANSPORT_EVENT_CONFIRM, &e) < 0)
                return -ENOMEM;
        e->seq = seq;
        e->ack = ack;
        transport_post_event(t, e);
        return 0;
}

/* Wait ms (0: just look) for the stop request, dropping the commands that
 * come meanwhile: with no connection they are all for one that is gone.
 * Returns true when stopping. */
static bool io_sleep(Transport *t, uint64_t ms)
{
        uint64_t deadline = now_ns() + ms * NSEC_PER_MSEC;

        for (;;) {
                bool stop;
                struct pollfd p = {.fd = t->wake_fd, .events = POLLIN};
                uint64_t now;

                free_cmds(transport_take_cmds(t, &stop));
                if (stop)
                        return true;
                io_awake(t);
                now = now_ns();
                if (now >= deadline)
                        return false;
                if (poll(&p, 1, (int)((deadline - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC)) > 0)
                        wake_drain(t->wake_fd);
        }
}

static int lost(char **ret_reason, int error, const char *fmt, ...) _printf_(3, 4);
static int lost(char **ret_reason, int error, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(ret_reason, fmt, ap) < 0)
                *ret_reason = NULL;
        va_end(ap);
        return error;
}

static int status_lost(Transport *t, int status, const char *what, char **ret_reason)
{
        return lost(ret_reason, transport_status_errno(status), "%s %s: %s", what,
                    t->io.broker_name, amqp_error_string2(status));
}

static int heartbeat_lost(Transport *t, char **ret_reason)
{
        return lost(ret_reason, -ETIMEDOUT,
                    "no data from %s for %u s, twice the heartbeat: the broker or the network is "
                    "gone",
                    t->io.broker_name, 2 * t->io.heartbeat);
}

static int run_publish(Transport *t, TransportCmd *c, char **ret_reason)
{
        TransportIo *io = &t->io;
        amqp_basic_properties_t props;
        int status, r;

        /* Registered first: the broker numbers every publish on the channel,
         * so this one has the next number whatever happens to it. */
        r = transport_idmap_append(&io->confirms, io->next_broker_tag++, c->seq, io->epoch);
        if (r < 0)
                return lost(ret_reason, r, "out of memory for a publish to %s", io->broker_name);
        transport_props_publish(&props, c->message_id);
        status = amqp_basic_publish(io->conn, TRANSPORT_CHANNEL, amqp_cstring_bytes(c->exchange),
                                    amqp_cstring_bytes(c->routing_key), 0, 0, &props,
                                    (amqp_bytes_t){.len = c->body_len, .bytes = c->body});
        if (status != AMQP_STATUS_OK)
                return status_lost(t, status, "cannot publish to", ret_reason);
        return 0;
}

/* Run (and free) a list of commands. Publishes are held while the broker
 * blocks publishers (connection.blocked), so that a large result cannot
 * stall the thread in a write the broker will not read; acks still go. */
static int run_cmds(Transport *t, TransportCmd *cmds, char **ret_reason)
{
        TransportIo *io = &t->io;
        int r = 0;

        while (cmds) {
                TransportCmd *c = cmds;
                cmds = c->next;
                c->next = NULL;

                if (r < 0 || c->epoch != io->epoch || !io->conn) {
                        transport_cmd_free(c);
                        continue;
                }
                if (c->kind == TRANSPORT_CMD_PUBLISH && io->blocked) {
                        *io->held_tail = c;
                        io->held_tail = &c->next;
                        continue;
                }

                int status = AMQP_STATUS_OK;
                switch (c->kind) {
                case TRANSPORT_CMD_PUBLISH:
                        r = run_publish(t, c, ret_reason);
                        break;
                case TRANSPORT_CMD_ACK:
                        status = amqp_basic_ack(io->conn, TRANSPORT_CHANNEL, c->amqp_tag, 0);
                        break;
                case TRANSPORT_CMD_REJECT:
                        status = amqp_basic_reject(io->conn, TRANSPORT_CHANNEL, c->amqp_tag,
                                                   c->requeue);
                        break;
                }
                if (status != AMQP_STATUS_OK)
                        r = status_lost(t, status, "cannot settle a delivery with", ret_reason);
                transport_cmd_free(c);
        }
        return r;
}

static int run_held(Transport *t, char **ret_reason)
{
        TransportCmd *held = t->io.held;

        t->io.held = NULL;
        t->io.held_tail = &t->io.held;
        return run_cmds(t, held, ret_reason);
}

static int settle_confirms(Transport *t, const TransportFrameInfo *info)
{
        TransportIo *io = &t->io;
        TransportIdEntry *done = NULL, one;
        size_t n = 0;
        int r = 0;

        if (info->multiple) {
                r = transport_idmap_remove_upto(&io->confirms, info->tag, &done, &n);
                if (r < 0)
                        return r;
        } else if (transport_idmap_remove(&io->confirms, info->tag, &one) == 0) {
                done = &one;
                n = 1;
        }
        for (size_t i = 0; i < n && r >= 0; i++)
                r = post_confirm(t, done[i].value, info->ack);
        if (done != &one)
                free(done);
        return r;
}

static int post_delivery(Transport *t, bool stopping)
{
        TransportEvent *e;
        int r;

        if (stopping) {
                /* Never acked, so the broker requeues it when the channel
                 * closes. */
                TransportMessage m;
                transport_assembler_take(&t->io.assembler, &m);
                transport_message_done(&m);
                return 0;
        }
        r = post(t, TRANSPORT_EVENT_DELIVERY, &e);
        if (r < 0)
                return r;
        transport_assembler_take(&t->io.assembler, &e->msg);
        transport_post_event(t, e);
        return 0;
}

/* Act on one frame's meaning. *ret_polite tells whether the connection is
 * still fit for a polite close after an error. */
static int handle_frame(Transport *t, const TransportFrameInfo *info, bool stopping,
                        char **ret_reason, bool *ret_polite)
{
        TransportIo *io = &t->io;
        int r;

        switch (info->kind) {
        case TRANSPORT_FRAME_NONE:
        case TRANSPORT_FRAME_CANCEL_OK:
                return 0;
        case TRANSPORT_FRAME_DELIVERY:
                r = post_delivery(t, stopping);
                return r < 0 ? lost(ret_reason, r, "out of memory for a delivery from %s",
                                    io->broker_name)
                             : 0;
        case TRANSPORT_FRAME_CONFIRM:
                r = settle_confirms(t, info);
                return r < 0 ? lost(ret_reason, r, "out of memory for a confirm from %s",
                                    io->broker_name)
                             : 0;
        case TRANSPORT_FRAME_BLOCKED:
                io->blocked = true;
                return 0;
        case TRANSPORT_FRAME_UNBLOCKED:
                io->blocked = false;
                return run_held(t, ret_reason);
        case TRANSPORT_FRAME_CANCELLED:
                *ret_polite = true;
                return lost(ret_reason, -ECANCELED,
                            "the broker at %s cancelled the consumer of queue '%s' (was the queue "
                            "deleted?)",
                            io->broker_name, t->opts.queue);
        case TRANSPORT_FRAME_CHANNEL_CLOSE: {
                amqp_channel_close_ok_t ok = {.dummy = '\0'};
                (void)amqp_send_method(io->conn, TRANSPORT_CHANNEL, AMQP_CHANNEL_CLOSE_OK_METHOD,
                                       &ok);
                io->channel_open = false;
                *ret_polite = true;
                r = transport_reply_code_errno(info->reply_code);
                return lost(ret_reason, r < 0 ? r : -ECONNRESET,
                            "the broker at %s closed the channel: %s (reply code %u)",
                            io->broker_name, info->text, info->reply_code);
        }
        case TRANSPORT_FRAME_CONNECTION_CLOSE: {
                amqp_connection_close_ok_t ok = {.dummy = '\0'};
                (void)amqp_send_method(io->conn, 0, AMQP_CONNECTION_CLOSE_OK_METHOD, &ok);
                r = transport_reply_code_errno(info->reply_code);
                return lost(ret_reason, r < 0 ? r : -ECONNRESET,
                            "the broker at %s closed the connection: %s (reply code %u)",
                            io->broker_name, info->text, info->reply_code);
        }
        }
        return 0;
}

/* Read and handle every frame there is, without waiting. readable says
 * that the socket may hold bytes: when it does not, and rabbitmq-c holds
 * neither a frame nor bytes of one, there is nothing to read, and the
 * read that would say so (a recv() and a poll() that find nothing) is not
 * made. Over TLS the library may hold decrypted bytes that neither
 * poll() nor amqp_data_in_buffer() can see, so it is always asked. Bytes
 * that come after a read are left to the next poll(), which returns at
 * once for them. */
static int drain(Transport *t, bool readable, bool stopping, char **ret_reason, bool *ret_polite)
{
        TransportIo *io = &t->io;
        struct timeval zero = {0, 0};

        readable = readable || t->opts.ssl;
        for (;;) {
                TransportFrameInfo info;
                amqp_frame_t f;
                int status, r;

                if (!readable && !amqp_frames_enqueued(io->conn) && !amqp_data_in_buffer(io->conn))
                        return 0;
                readable = t->opts.ssl;
                status = amqp_simple_wait_frame_noblock(io->conn, &f, &zero);
                if (status == AMQP_STATUS_TIMEOUT)
                        return 0;
                if (status == AMQP_STATUS_HEARTBEAT_TIMEOUT)
                        return heartbeat_lost(t, ret_reason);
                if (status != AMQP_STATUS_OK)
                        return status_lost(t, status, "lost the connection to", ret_reason);
                io->last_inbound_ns = now_ns();

                r = transport_assembler_feed(&io->assembler, &f, &info);
                amqp_maybe_release_buffers_on_channel(io->conn, f.channel);
                if (r == -EPROTO)
                        return lost(ret_reason, r, "protocol error from %s: %s", io->broker_name,
                                    info.text);
                if (r < 0)
                        return lost(ret_reason, r, "out of memory for a frame from %s",
                                    io->broker_name);
                r = handle_frame(t, &info, stopping, ret_reason, ret_polite);
                if (r < 0)
                        return r;
        }
}

/* Our heartbeat, when the last one is a quarter of the heartbeat old (see
 * the top of the file). amqp_send_frame() also moves rabbitmq-c's own
 * deadline for the next one, so the library sends none of its own. */
static int heartbeat_send(Transport *t, uint64_t now, char **ret_reason)
{
        TransportIo *io = &t->io;
        amqp_frame_t f = {.frame_type = AMQP_FRAME_HEARTBEAT, .channel = 0};
        int status;

        if (io->heartbeat == 0 ||
            now - io->last_heartbeat_ns < (uint64_t)io->heartbeat * 1000 * NSEC_PER_MSEC / 4)
                return 0;
        status = amqp_send_frame(io->conn, &f);
        if (status != AMQP_STATUS_OK)
                return status_lost(t, status, "cannot send a heartbeat to", ret_reason);
        io->last_heartbeat_ns = now;
        return 0;
}

/* The poll() timeout: until our next heartbeat is due or the broker's is
 * overdue, whichever comes first. */
static int session_timeout(const TransportIo *io, uint64_t now)
{
        uint64_t hb_ns, due, dead;

        if (io->heartbeat == 0)
                return -1;
        hb_ns = (uint64_t)io->heartbeat * 1000 * NSEC_PER_MSEC;
        due = io->last_heartbeat_ns + hb_ns;
        dead = io->last_inbound_ns + 2 * hb_ns;
        if (dead < due)
                due = dead;
        if (due <= now)
                return 0;
        return (int)((due - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC);
}

/* Serve the connection until it fails (negative errno, *ret_reason set) or
 * a stop is asked for (0). */
static int io_session(Transport *t, char **ret_reason, bool *ret_polite)
{
        TransportIo *io = &t->io;
        int sock = amqp_get_sockfd(io->conn);

        /* Whether the last poll() found the socket readable (or there was
         * none yet). */
        bool readable = true;

        io->last_inbound_ns = io->last_heartbeat_ns = now_ns();
        for (;;) {
                struct pollfd p[2] = {{.fd = sock, .events = POLLIN},
                                      {.fd = t->wake_fd, .events = POLLIN}};
                bool stop;
                uint64_t now;
                int r;

                r = run_cmds(t, transport_take_cmds(t, &stop), ret_reason);
                if (r < 0)
                        return r;
                r = drain(t, readable, false, ret_reason, ret_polite);
                if (r < 0)
                        return r;
                if (stop)
                        return 0;

                now = now_ns();
                if (io->heartbeat &&
                    now - io->last_inbound_ns >= 2ULL * io->heartbeat * 1000 * NSEC_PER_MSEC)
                        return heartbeat_lost(t, ret_reason);
                r = heartbeat_send(t, now, ret_reason);
                if (r < 0)
                        return r;
                io_awake(t);
                r = poll(p, 2, session_timeout(io, now));
                if (r < 0 && errno != EINTR)
                        return lost(ret_reason, -errno, "poll() failed: %s", strerror(errno));
                readable = r != 0 && (r < 0 || p[0].revents != 0);
                if (r > 0 && p[0].revents)
                        io->last_inbound_ns = now_ns();
                if (r > 0 && (p[1].revents & POLLIN))
                        wake_drain(t->wake_fd);
        }
}

/* Stop politely: cancel the consumer, give outstanding confirms
 * stop_confirm_ms, close channel and connection. */
static void io_finish(Transport *t)
{
        TransportIo *io = &t->io;
        uint64_t deadline = now_ns() + t->opts.stop_confirm_ms * NSEC_PER_MSEC;
        _cleanup_free_ char *reason = NULL;
        bool polite = false;
        int sock = amqp_get_sockfd(io->conn);

        if (!amqp_basic_cancel(io->conn, TRANSPORT_CHANNEL, amqp_cstring_bytes(io->consumer_tag))) {
                transport_disconnect(t, false);
                return;
        }
        while (io->confirms.n > 0) {
                struct pollfd p = {.fd = sock, .events = POLLIN};
                uint64_t now;

                if (drain(t, true, true, &reason, &polite) < 0) {
                        transport_disconnect(t, polite);
                        return;
                }
                now = now_ns();
                if (io->confirms.n == 0 || now >= deadline)
                        break;
                (void)poll(&p, 1, (int)((deadline - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC));
        }
        transport_disconnect(t, true);
}

/* What a connection leaves behind when it ends: the loop thread settles
 * the publishes; the thread forgets them. */
static void session_reset(TransportIo *io)
{
        transport_idmap_done(&io->confirms);
        transport_assembler_reset(&io->assembler);
        free_cmds(io->held);
        io->held = NULL;
        io->held_tail = &io->held;
        io->blocked = false;
        io->next_broker_tag = 1;
}

void transport_io_main(void *arg)
{
        Transport *t = arg;
        TransportIo *io = &t->io;
        size_t n = t->opts.n_brokers;
        uint64_t delay = 0;

        for (;;) {
                char *reason = NULL;
                bool polite = false;
                int r;

                if (io_sleep(t, delay))
                        break;

                r = transport_connect(t, &t->opts.brokers[io->broker_index], &reason);
                if (r >= 0) {
                        io->epoch++;
                        session_reset(io);
                        r = post_ready(t);
                        if (r < 0) {
                                transport_disconnect(t, true);
                                reason = strdup("out of memory");
                        }
                }
                if (r < 0) {
                        /* Brokers in a round are tried one after the other;
                         * the back-off is between rounds, the probe's when
                         * no broker of the round had a listener. */
                        io->broker_index = (io->broker_index + 1) % n;
                        io->listener_in_round |= !io->no_listener;
                        delay = 0;
                        if (++io->failed_in_round >= n) {
                                uint32_t rnd = transport_random_next(&io->rng);

                                delay = io->listener_in_round
                                                ? transport_backoff_next(&io->backoff, rnd)
                                                : transport_backoff_probe(&io->backoff, rnd);
                                io->failed_in_round = 0;
                                io->listener_in_round = false;
                        }
                        post_lost(t, r, reason, false, delay);
                        continue;
                }
                io->failed_in_round = 0;
                io->listener_in_round = false;
                transport_backoff_reset(&io->backoff);

                r = io_session(t, &reason, &polite);
                if (r >= 0) {
                        io_finish(t);
                        break;
                }
                transport_disconnect(t, polite);
                session_reset(io);
                /* The next broker, after a pause even when this one was
                 * healthy a moment ago: a broker that accepts and then drops
                 * the agent must not make it spin. */
                io->broker_index = (io->broker_index + 1) % n;
                delay = transport_backoff_next(&io->backoff, transport_random_next(&io->rng));
                post_lost(t, r, reason, true, delay);
        }

        session_reset(io);
        free(io->broker_name);
        io->broker_name = NULL;
        /* Only this thread touches exit_event between transport_start() and
         * this post. */
        TransportEvent *exited = t->exit_event;
        t->exit_event = NULL;
        transport_post_event(t, exited);
}
