/* Helpers of tests/test-transport-broker.c: the private broker (started
 * with tests/broker.sh, given a TLS listener), a plain blocking rabbitmq-c
 * client ("admin") that plays the engine, and a harness that runs a
 * Transport on a loop of its own and records every callback. */
#pragma once

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <amqp_tcp_socket.h>

#include "transport/transport-internal.h"
#include "util/macro.h"

extern char **environ;

static unsigned shared_port;  /* $BROKER_PORT, else the private broker's */
static unsigned private_port; /* the private broker: plain AMQP */
static unsigned tls_port;     /* the private broker: AMQP over TLS */
static pid_t private_pid;     /* its Erlang VM */
static char work_dir[64];     /* /tmp/muranoagent-transport-XXXXXX */
static char broker_dir[80];
static pid_t main_pid;

/* ---- processes ---- */

static int run(char *const argv[])
{
        pid_t pid;
        int status;

        if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) != 0)
                return -1;
        if (waitpid(pid, &status, 0) < 0)
                return -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int broker(const char *cmd, const char *extra1, const char *extra2)
{
        char *argv[] = {(char *)"/bin/bash",
                        (char *)TEST_DATA_DIR "/../broker.sh",
                        (char *)cmd,
                        broker_dir,
                        (char *)extra1,
                        (char *)extra2,
                        NULL};
        return run(argv);
}

static void stop_private_broker(void)
{
        if (broker_dir[0] && getpid() == main_pid) {
                kill(private_pid, SIGCONT); /* in case a test died with it frozen */
                broker("stop", NULL, NULL);
                char *argv[] = {(char *)"/bin/rm", (char *)"-rf", work_dir, NULL};
                run(argv);
                broker_dir[0] = '\0';
        }
}

static void on_signal(int sig)
{
        stop_private_broker();
        _exit(128 + sig);
}

static unsigned env_file_uint(const char *key)
{
        char path[128], line[512];
        size_t klen = strlen(key);
        unsigned v = 0;
        FILE *f;

        snprintf(path, sizeof(path), "%s/env", broker_dir);
        f = fopen(path, "re");
        if (!f)
                return 0;
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, key, klen) == 0 && line[klen] == '=')
                        v = (unsigned)strtoul(line + klen + 1, NULL, 10);
        fclose(f);
        return v;
}

static unsigned free_port(void)
{
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof(a);
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
            getsockname(fd, (struct sockaddr *)&a, &len) < 0)
                abort();
        close(fd);
        return ntohs(a.sin_port);
}

/* A CA, a server certificate for IP 127.0.0.1 only, a second CA that did
 * not sign it, and an empty file. */
static int make_certs(void)
{
        char script[4096];
        snprintf(script, sizeof(script),
                 "set -e; cd '%s'; "
                 "openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 "
                 "  -subj '/CN=muranoagent test CA' 2>/dev/null; "
                 "openssl req -x509 -newkey rsa:2048 -nodes -keyout other.key -out other-ca.pem "
                 "  -days 2 -subj '/CN=another CA' 2>/dev/null; "
                 "openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr "
                 "  -subj '/CN=muranoagent test broker' 2>/dev/null; "
                 "printf 'subjectAltName=IP:127.0.0.1\\n' > ext; "
                 "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
                 "  -out server.pem -days 2 -extfile ext 2>/dev/null; "
                 ": > empty.pem; chmod 644 server.key",
                 work_dir);
        char *argv[] = {(char *)"/bin/sh", (char *)"-c", script, NULL};
        return run(argv);
}

/* RabbitMQ reads its listeners when the rabbit application starts, so the
 * TLS listener is put into the application's environment and the
 * application restarted; tests/broker.sh needs no TLS knowledge. */
static int add_tls_listener(void)
{
        char eval[2048];
        tls_port = free_port();
        snprintf(eval, sizeof(eval),
                 "application:set_env(rabbit, ssl_listeners, [{\"127.0.0.1\", %u}]), "
                 "application:set_env(rabbit, ssl_options, [{cacertfile, \"%s/ca.pem\"}, "
                 "{certfile, \"%s/server.pem\"}, {keyfile, \"%s/server.key\"}, "
                 "{verify, verify_none}, {fail_if_no_peer_cert, false}]).",
                 tls_port, work_dir, work_dir, work_dir);
        char *argv[] = {(char *)"/bin/bash",
                        (char *)TEST_DATA_DIR "/../broker.sh",
                        (char *)"ctl",
                        broker_dir,
                        (char *)"eval",
                        eval,
                        NULL};
        if (run(argv) != 0)
                return -1;
        return broker("restart", NULL, NULL);
}

/* ---- the engine's side: plain blocking rabbitmq-c ---- */

/* Queues the test made, deleted by admin_done() so that a shared broker
 * is left as it was found. */
static char declared[16][128];
static size_t n_declared;
static unsigned admin_port;

static void admin_forget_queue(const char *q)
{
        if (n_declared < ELEMENTSOF(declared))
                snprintf(declared[n_declared++], sizeof(declared[0]), "%s", q);
}

static amqp_connection_state_t admin_open(unsigned port)
{
        amqp_connection_state_t c = amqp_new_connection();
        amqp_socket_t *s = amqp_tcp_socket_new(c);

        ck_assert_int_eq(amqp_socket_open(s, "127.0.0.1", (int)port), 0);
        ck_assert_int_eq(amqp_login(c, "/", 0, TRANSPORT_FRAME_MAX, 0, AMQP_SASL_METHOD_PLAIN,
                                    "guest", "guest")
                                 .reply_type,
                         AMQP_RESPONSE_NORMAL);
        ck_assert_ptr_nonnull(amqp_channel_open(c, 1));
        admin_port = port;
        return c;
}

static void admin_close(amqp_connection_state_t c)
{
        amqp_connection_close(c, AMQP_REPLY_SUCCESS);
        amqp_destroy_connection(c);
}

/* admin_close(), and delete the queues the test declared. */
static void admin_done(amqp_connection_state_t c)
{
        admin_close(c);
        if (n_declared == 0)
                return;
        /* On a fresh connection: the test may have had its channel closed. */
        c = admin_open(admin_port);
        for (size_t i = 0; i < n_declared; i++)
                amqp_queue_delete(c, 1, amqp_cstring_bytes(declared[i]), 0, 0);
        n_declared = 0;
        amqp_connection_close(c, AMQP_REPLY_SUCCESS);
        amqp_destroy_connection(c);
}

/* As the engine declares an agent's queue (spec §2.2), plus extra
 * arguments. Returns the reply type. */
static int admin_declare_args(amqp_connection_state_t c, const char *q,
                              const amqp_table_entry_t *extra, int n_extra)
{
        amqp_table_entry_t args[4] = {
                {.key = amqp_cstring_bytes("x-ha-policy"),
                 .value = {.kind = AMQP_FIELD_KIND_UTF8, .value.bytes = amqp_cstring_bytes("all")}},
                {.key = amqp_cstring_bytes("x-expires"),
                 .value = {.kind = AMQP_FIELD_KIND_I32, .value.i32 = 86400000}},
        };
        for (int i = 0; i < n_extra; i++)
                args[2 + i] = extra[i];
        amqp_queue_declare(c, 1, amqp_cstring_bytes(q), 0, 1, 0, 0,
                           (amqp_table_t){.num_entries = 2 + n_extra, .entries = args});
        admin_forget_queue(q);
        return amqp_get_rpc_reply(c).reply_type;
}

static void admin_declare(amqp_connection_state_t c, const char *q)
{
        ck_assert_int_eq(admin_declare_args(c, q, NULL, 0), AMQP_RESPONSE_NORMAL);
}

static unsigned admin_count(amqp_connection_state_t c, const char *q)
{
        amqp_queue_declare_ok_t *ok =
                amqp_queue_declare(c, 1, amqp_cstring_bytes(q), 1, 0, 0, 0, amqp_empty_table);
        ck_assert_ptr_nonnull(ok);
        return ok->message_count;
}

typedef enum Sig { SIG_NONE, SIG_VOID, SIG_BYTES, SIG_BYTEARRAY, SIG_OTHER_KEY } Sig;

static void admin_publish(amqp_connection_state_t c, const char *q, const void *body, size_t len,
                          const char *mid, const char *reply_to, Sig sig, const uint8_t *sig_bytes,
                          size_t sig_len)
{
        amqp_table_entry_t h = {
                .key = amqp_cstring_bytes(sig == SIG_OTHER_KEY ? "other" : "signature")};
        amqp_basic_properties_t p = {
                ._flags = AMQP_BASIC_CONTENT_TYPE_FLAG | AMQP_BASIC_CONTENT_ENCODING_FLAG |
                          AMQP_BASIC_DELIVERY_MODE_FLAG | AMQP_BASIC_PRIORITY_FLAG,
                .content_type = amqp_cstring_bytes("text/plain"),
                .content_encoding = amqp_cstring_bytes("utf-8"),
                .delivery_mode = 2};

        if (mid) {
                p._flags |= AMQP_BASIC_MESSAGE_ID_FLAG;
                p.message_id = amqp_cstring_bytes(mid);
        }
        if (reply_to) {
                p._flags |= AMQP_BASIC_REPLY_TO_FLAG;
                p.reply_to = amqp_cstring_bytes(reply_to);
        }
        if (sig != SIG_NONE) {
                p._flags |= AMQP_BASIC_HEADERS_FLAG;
                p.headers = (amqp_table_t){.num_entries = 1, .entries = &h};
                h.value.kind = sig == SIG_BYTES       ? AMQP_FIELD_KIND_UTF8
                               : sig == SIG_BYTEARRAY ? AMQP_FIELD_KIND_BYTES
                                                      : AMQP_FIELD_KIND_VOID;
                h.value.value.bytes = (amqp_bytes_t){sig_len, (void *)sig_bytes};
        }
        ck_assert_int_eq(amqp_basic_publish(c, 1, amqp_empty_bytes, amqp_cstring_bytes(q), 0, 0, &p,
                                            (amqp_bytes_t){len, (void *)body}),
                         0);
}

/* basic.get until a message is there (or 5 s); the caller destroys it. */
static void admin_get(amqp_connection_state_t c, const char *q, amqp_message_t *ret)
{
        for (int i = 0; i < 500; i++) {
                amqp_rpc_reply_t r = amqp_basic_get(c, 1, amqp_cstring_bytes(q), 1);
                ck_assert_int_eq(r.reply_type, AMQP_RESPONSE_NORMAL);
                if (r.reply.id == AMQP_BASIC_GET_OK_METHOD) {
                        r = amqp_read_message(c, 1, ret, 0);
                        ck_assert_int_eq(r.reply_type, AMQP_RESPONSE_NORMAL);
                        return;
                }
                usleep(10000);
        }
        ck_abort_msg("no message in %s", q);
}

/* ---- the transport under test, on its own loop ---- */

typedef struct Got {
        uint64_t tag;
        bool redelivered;
        uint8_t *body; /* taken from the delivery */
        size_t body_len;
        bool oversize;
        char *message_id;
        char *reply_to;
        TransportSignature sig_kind;
        uint8_t sig[512];
        size_t sig_len;
        uint64_t at_ns;
} Got;

typedef struct H {
        uv_loop_t loop;
        uv_timer_t tick;
        Transport *t;
        ConfigHost hosts[2];
        char queue[128];
        int ready, lost, lost_ready, stopped;
        unsigned heartbeat, connection;
        char broker[128];
        char reason[1024];       /* the last on_lost */
        char first_reason[1024]; /* the first on_lost of an established connection */
        int error;
        uint64_t retries[256];
        bool retry_was_ready[256];
        size_t n_retries;
        int events; /* a clock of callbacks, for their order */
        int lost_at, lost_confirm_at;
        Got got[16];
        size_t n_got;
        bool auto_ack;
        uint64_t seqs[1024];
        TransportConfirm status[1024];
        size_t n_confirms;
} H;

static void on_ready(Transport *t, const TransportReady *r, void *u)
{
        H *h = u;
        h->ready++;
        h->events++;
        h->heartbeat = r->heartbeat;
        h->connection = r->connection;
        snprintf(h->broker, sizeof(h->broker), "%s", r->broker);
}

static void on_lost(Transport *t, const TransportLoss *l, void *u)
{
        H *h = u;
        h->lost++;
        h->lost_at = ++h->events;
        h->error = l->error;
        snprintf(h->reason, sizeof(h->reason), "%s", l->reason);
        if (l->was_ready && h->lost_ready++ == 0)
                snprintf(h->first_reason, sizeof(h->first_reason), "%s", l->reason);
        if (h->n_retries < ELEMENTSOF(h->retries)) {
                h->retry_was_ready[h->n_retries] = l->was_ready;
                h->retries[h->n_retries++] = l->retry_ms;
        }
}

static void on_delivery(Transport *t, TransportDelivery *d, void *u)
{
        H *h = u;
        Got *g;

        h->events++;
        ck_assert_uint_lt(h->n_got, ELEMENTSOF(h->got));
        g = &h->got[h->n_got++];
        *g = (Got){.tag = d->tag,
                   .redelivered = d->redelivered,
                   .body = TAKE_PTR(d->body),
                   .body_len = d->body_len,
                   .oversize = d->oversize,
                   .message_id = strdup(d->message_id),
                   .reply_to = d->reply_to ? strdup(d->reply_to) : NULL,
                   .sig_kind = d->signature_kind,
                   .sig_len = d->signature_len,
                   .at_ns = uv_hrtime()};
        ck_assert_uint_le(d->signature_len, sizeof(g->sig));
        if (d->signature_len)
                memcpy(g->sig, d->signature, d->signature_len);
        if (h->auto_ack)
                ck_assert_int_eq(transport_ack(t, d->tag), 0);
}

static void on_confirm(Transport *t, uint64_t seq, TransportConfirm s, void *u)
{
        H *h = u;
        h->events++;
        if (s == TRANSPORT_CONFIRM_LOST && !h->lost_confirm_at)
                h->lost_confirm_at = h->events;
        ck_assert_uint_lt(h->n_confirms, ELEMENTSOF(h->seqs));
        h->seqs[h->n_confirms] = seq;
        h->status[h->n_confirms++] = s;
}

static void on_stopped(Transport *t, void *u)
{
        H *h = u;
        h->stopped++;
}

static const TransportCallbacks callbacks = {on_ready, on_lost, on_delivery, on_confirm};

static void on_tick(uv_timer_t *timer)
{
        uv_stop(timer->loop);
}

#define RUN_UNTIL(h, cond, ms)                                                                     \
        ({                                                                                         \
                uint64_t _end = uv_hrtime() + (uint64_t)(ms)*1000000;                              \
                bool _ok;                                                                          \
                uv_timer_start(&(h)->tick, on_tick, 5, 5);                                         \
                while (!(_ok = (cond)) && uv_hrtime() < _end)                                      \
                        uv_run(&(h)->loop, UV_RUN_DEFAULT);                                        \
                uv_timer_stop(&(h)->tick);                                                         \
                _ok;                                                                               \
        })

static H *h_new(const char *name, unsigned port)
{
        H *h = calloc(1, sizeof(*h));

        ck_assert_int_eq(uv_loop_init(&h->loop), 0);
        ck_assert_int_eq(uv_timer_init(&h->loop, &h->tick), 0);
        snprintf(h->queue, sizeof(h->queue), "tt-%d-%s", (int)getpid(), name);
        h->hosts[0] = (ConfigHost){.host = (char *)"127.0.0.1", .port = port};
        return h;
}

static TransportOptions h_options(H *h)
{
        return (TransportOptions){.brokers = h->hosts,
                                  .n_brokers = 1,
                                  .login = "guest",
                                  .password = "guest",
                                  .virtual_host = "/",
                                  .queue = h->queue,
                                  .heartbeat = 30,
                                  .ca_certs = "",
                                  .reconnect_initial_ms = 200,
                                  .reconnect_max_ms = 1600,
                                  .connect_timeout_ms = 5000,
                                  .stop_confirm_ms = 2000,
                                  .max_body_size = 64 << 20};
}

static void h_start(H *h, const TransportOptions *o)
{
        ck_assert_int_eq(transport_new(&h->loop, o, &callbacks, h, &h->t), 0);
        ck_assert_int_eq(transport_start(h->t), 0);
}

/* The queue of the last harness h_finish() freed, for checks after it. */
static char finished_queue[128];

/* Stop the transport, close the loop, free everything. */
static void h_finish(H *h)
{
        snprintf(finished_queue, sizeof(finished_queue), "%s", h->queue);
        if (h->t) {
                ck_assert_int_eq(transport_stop(h->t, on_stopped), 0);
                ck_assert(RUN_UNTIL(h, h->stopped == 1, 20000));
                transport_free(h->t);
        }
        uv_close((uv_handle_t *)&h->tick, NULL);
        ck_assert_int_eq(uv_run(&h->loop, UV_RUN_DEFAULT), 0);
        ck_assert_int_eq(uv_loop_close(&h->loop), 0);
        for (size_t i = 0; i < h->n_got; i++) {
                free(h->got[i].body);
                free(h->got[i].message_id);
                free(h->got[i].reply_to);
        }
        free(h);
}
