/* Unit tests of the transport without a broker: id maps, back-off, the
 * published properties (down to the encoded bytes), the signature header
 * (from headers encoded as the engine's py-amqp encodes them), broker
 * names, error translation, the options from a configuration, and
 * loop-level start and stop against a closed port and a silent listener.
 * tests/test-transport-frame.c tests frame assembly;
 * tests/test-transport-broker.c does the rest against a real RabbitMQ. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config/config.h"
#include "transport/transport-internal.h"
#include "util/macro.h"
#include "test-lib.h"

/* ---- id maps ---- */

START_TEST(test_idmap)
{
        TransportIdMap m = {0}, taken;
        TransportIdEntry e, *arr = NULL;
        size_t n = 99;

        for (uint64_t k = 1; k <= 20; k++)
                ck_assert_int_eq(transport_idmap_append(&m, k * 10, k + 100, (unsigned)k), 0);
        ck_assert_int_eq(transport_idmap_append(&m, 200, 0, 0), -EINVAL); /* not larger */
        ck_assert_int_eq(transport_idmap_append(&m, 5, 0, 0), -EINVAL);
        ck_assert_uint_eq(m.n, 20);

        ck_assert_int_eq(transport_idmap_remove(&m, 70, &e), 0);
        ck_assert_uint_eq(e.key, 70);
        ck_assert_uint_eq(e.value, 107);
        ck_assert_uint_eq(e.epoch, 7);
        ck_assert_int_eq(transport_idmap_remove(&m, 70, &e), -ENOENT);
        ck_assert_int_eq(transport_idmap_remove(&m, 71, NULL), -ENOENT);
        ck_assert_uint_eq(m.n, 19);

        /* "multiple" up to 55: 10..50 (no 70 involved). */
        ck_assert_int_eq(transport_idmap_remove_upto(&m, 55, &arr, &n), 0);
        ck_assert_uint_eq(n, 5);
        for (size_t i = 0; i < n; i++)
                ck_assert_uint_eq(arr[i].key, (i + 1) * 10);
        free(arr);
        /* Up to an existing key includes it: 60 and 80 (70 is gone). */
        ck_assert_int_eq(transport_idmap_remove_upto(&m, 80, &arr, &n), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_uint_eq(arr[0].key, 60);
        ck_assert_uint_eq(arr[1].key, 80);
        free(arr);
        ck_assert_int_eq(transport_idmap_remove_upto(&m, 5, &arr, &n), 0);
        ck_assert_uint_eq(n, 0);
        ck_assert_ptr_null(arr);
        ck_assert_uint_eq(m.n, 12);
        ck_assert_uint_eq(m.items[0].key, 90);

        transport_idmap_take(&m, &taken);
        ck_assert_uint_eq(m.n, 0);
        ck_assert_ptr_null(m.items);
        ck_assert_uint_eq(taken.n, 12);
        ck_assert_int_eq(transport_idmap_append(&m, 1, 0, 0), 0); /* empty again: any key */
        transport_idmap_done(&m);
        transport_idmap_done(&taken);
}
END_TEST

/* ---- back-off ---- */

START_TEST(test_backoff_schedule)
{
        static const uint64_t floor[] = {500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000};
        static const uint64_t ceil[] = {1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000};
        TransportBackoff lo, hi;

        transport_backoff_init(&lo, 1000, 60000);
        transport_backoff_init(&hi, 1000, 60000);
        for (size_t i = 0; i < ELEMENTSOF(floor); i++) {
                ck_assert_uint_eq(transport_backoff_ceiling(&lo), ceil[i]);
                ck_assert_uint_eq(transport_backoff_next(&lo, 0), floor[i]);
                ck_assert_uint_eq(transport_backoff_next(&hi, UINT32_MAX), ceil[i]);
        }
        /* The middle of the range for a middle draw. */
        transport_backoff_reset(&lo);
        ck_assert_uint_eq(transport_backoff_next(&lo, UINT32_MAX / 2), 749);
        /* Reset starts over; thousands of failures neither overflow nor
         * pass the cap. */
        transport_backoff_reset(&hi);
        ck_assert_uint_eq(transport_backoff_next(&hi, UINT32_MAX), 1000);
        for (int i = 0; i < 10000; i++)
                ck_assert_uint_le(transport_backoff_next(&hi, UINT32_MAX), 60000);
        ck_assert_uint_eq(transport_backoff_ceiling(&hi), 60000);

        /* After an attempt that found nothing listening: the first step's
         * wait, however far the schedule went, which stays where it was. */
        transport_backoff_reset(&lo);
        for (int i = 0; i < 5; i++) {
                ck_assert_uint_eq(transport_backoff_probe(&lo, 0), 500);
                ck_assert_uint_eq(transport_backoff_probe(&lo, UINT32_MAX / 2), 749);
                ck_assert_uint_eq(transport_backoff_probe(&lo, UINT32_MAX), 1000);
                ck_assert_uint_eq(transport_backoff_ceiling(&lo), ceil[i]);
                ck_assert_uint_eq(transport_backoff_next(&lo, 0), floor[i]);
        }
        ck_assert_uint_eq(transport_backoff_probe(&hi, UINT32_MAX), 1000);
}
END_TEST

START_TEST(test_backoff_edges)
{
        TransportBackoff b;

        /* An odd ceiling is still reached; a cap below the start is raised
         * to it; a zero start becomes 1 ms. */
        transport_backoff_init(&b, 3, 3);
        ck_assert_uint_eq(transport_backoff_next(&b, 0), 1);
        ck_assert_uint_eq(transport_backoff_next(&b, UINT32_MAX), 3);
        transport_backoff_init(&b, 5000, 1000);
        ck_assert_uint_eq(transport_backoff_next(&b, UINT32_MAX), 5000);
        ck_assert_uint_eq(transport_backoff_next(&b, UINT32_MAX), 5000);
        transport_backoff_init(&b, 0, 4);
        ck_assert_uint_eq(transport_backoff_next(&b, UINT32_MAX), 1);
        ck_assert_uint_eq(transport_backoff_next(&b, UINT32_MAX), 2);
        ck_assert_uint_eq(transport_backoff_next(&b, UINT32_MAX), 4);
        ck_assert_uint_eq(transport_backoff_probe(&b, UINT32_MAX), 1);
        transport_backoff_init(&b, 3, 3);
        ck_assert_uint_eq(transport_backoff_probe(&b, 0), 1);
        ck_assert_uint_eq(transport_backoff_probe(&b, UINT32_MAX), 3);
}
END_TEST

START_TEST(test_random)
{
        uint64_t s1 = 42, s2 = 42, seed = transport_random_seed();
        unsigned high = 0;

        ck_assert_uint_ne(seed, 0);
        for (int i = 0; i < 1000; i++) {
                uint32_t a = transport_random_next(&s1);
                ck_assert_uint_eq(a, transport_random_next(&s2)); /* deterministic */
                high += a >> 31;
        }
        /* Both halves of the range come up (a stuck generator would not). */
        ck_assert_uint_gt(high, 400);
        ck_assert_uint_lt(high, 600);
}
END_TEST

/* ---- properties ---- */

START_TEST(test_props_publish)
{
        amqp_basic_properties_t p;
        uint8_t buf[512];
        int n;
        /* The property list as kombu sends it: flags 0xF880 (content_type,
         * content_encoding, headers, delivery_mode, priority, message_id),
         * then the values in that order. */
        static const uint8_t expect[] = {
                0xf8, 0x80, 10,  't', 'e', 'x', 't', '/', 'p', 'l', 'a', 'i', 'n', 5,   'u',
                't',  'f',  '-', '8', 0,   0,   0,   0,   2,   0,   4,   'a', 'b', 'c', 'd',
        };

        transport_props_publish(&p, "abcd");
        ck_assert_uint_eq(p._flags,
                          AMQP_BASIC_CONTENT_TYPE_FLAG | AMQP_BASIC_CONTENT_ENCODING_FLAG |
                                  AMQP_BASIC_HEADERS_FLAG | AMQP_BASIC_DELIVERY_MODE_FLAG |
                                  AMQP_BASIC_PRIORITY_FLAG | AMQP_BASIC_MESSAGE_ID_FLAG);
        ck_assert_uint_eq(p.delivery_mode, 2);
        ck_assert_uint_eq(p.priority, 0);
        ck_assert_int_eq(p.headers.num_entries, 0);

        n = amqp_encode_properties(AMQP_BASIC_CLASS, &p, (amqp_bytes_t){sizeof(buf), buf});
        ck_assert_int_eq(n, (int)sizeof(expect));
        ck_assert_mem_eq(buf, expect, sizeof(expect));

        transport_props_publish(&p, NULL);
        ck_assert_uint_eq(p.message_id.len, 0);
}
END_TEST

/* ---- the signature header ---- */

/* A headers table on the wire, decoded by rabbitmq-c as a delivery's would
 * be: key "signature" with the type byte and value given. Decoded strings
 * point into the wire bytes, so those stay until the next call. */
static int decode_headers(amqp_pool_t *pool, const uint8_t *value, size_t value_len,
                          amqp_table_t *ret)
{
        static uint8_t wire[600];
        size_t off = 0, len = 1 + 9 + value_len;

        ck_assert_uint_le(4 + len, sizeof(wire));
        wire[0] = (uint8_t)(len >> 24);
        wire[1] = (uint8_t)(len >> 16);
        wire[2] = (uint8_t)(len >> 8);
        wire[3] = (uint8_t)len;
        wire[4] = 9;
        memcpy(wire + 5, "signature", 9);
        memcpy(wire + 14, value, value_len);
        return amqp_decode_table((amqp_bytes_t){4 + len, wire}, pool, ret, &off);
}

START_TEST(test_headers_signature)
{
        amqp_pool_t pool;
        amqp_table_t table;
        amqp_bytes_t got = {0};
        uint8_t sig[256], value[1 + 4 + 256];

        init_amqp_pool(&pool, 4096);

        ck_assert_int_eq(transport_headers_signature(NULL, &got), TRANSPORT_SIGNATURE_ABSENT);
        table = (amqp_table_t){0};
        ck_assert_int_eq(transport_headers_signature(&table, &got), TRANSPORT_SIGNATURE_ABSENT);

        /* Engine observation #1: unsigned plans carry signature = void. */
        ck_assert_int_eq(decode_headers(&pool, (const uint8_t *)"V", 1, &table), 0);
        ck_assert_int_eq(transport_headers_signature(&table, &got), TRANSPORT_SIGNATURE_VOID);

        /* Signed plans: 256 raw bytes as a long string, not UTF-8, with
         * NULs in it. */
        for (size_t i = 0; i < sizeof(sig); i++)
                sig[i] = (uint8_t)(255 - i);
        value[0] = 'S';
        value[1] = 0, value[2] = 0, value[3] = 1, value[4] = 0;
        memcpy(value + 5, sig, sizeof(sig));
        ck_assert_int_eq(decode_headers(&pool, value, sizeof(value), &table), 0);
        ck_assert_int_eq(transport_headers_signature(&table, &got), TRANSPORT_SIGNATURE_BYTES);
        ck_assert_uint_eq(got.len, 256);
        ck_assert_mem_eq(got.bytes, sig, 256);

        /* A byte array ('x') too. */
        value[0] = 'x';
        ck_assert_int_eq(decode_headers(&pool, value, sizeof(value), &table), 0);
        ck_assert_int_eq(transport_headers_signature(&table, &got), TRANSPORT_SIGNATURE_BYTES);
        ck_assert_mem_eq(got.bytes, sig, 256);

        /* A number is something else. */
        ck_assert_int_eq(decode_headers(&pool, (const uint8_t *)"I\0\0\0\7", 5, &table), 0);
        ck_assert_int_eq(transport_headers_signature(&table, &got), TRANSPORT_SIGNATURE_OTHER);

        /* Other keys do not count, nor does a longer name. */
        amqp_table_entry_t entries[] = {
                {.key = amqp_cstring_bytes("signatures"),
                 .value = {.kind = AMQP_FIELD_KIND_UTF8, .value.bytes = amqp_cstring_bytes("x")}},
                {.key = amqp_cstring_bytes("sig"), .value = {.kind = AMQP_FIELD_KIND_VOID}},
        };
        table = (amqp_table_t){.num_entries = 2, .entries = entries};
        ck_assert_int_eq(transport_headers_signature(&table, &got), TRANSPORT_SIGNATURE_ABSENT);

        empty_amqp_pool(&pool);
}
END_TEST

/* ---- names and errors ---- */

START_TEST(test_names)
{
        static const struct {
                const char *host;
                unsigned port;
                const char *name;
                const char *connect;
        } cases[] = {
                {"10.0.0.5", 5672, "10.0.0.5:5672", "10.0.0.5"},
                {"::1", 5671, "[::1]:5671", "::1"},
                {"fe80::1:2", 1, "[fe80::1:2]:1", "fe80::1:2"},
                {"rabbit.example", 65535, "rabbit.example:65535", "rabbit.example"},
                {"localhost", 5672, "localhost:5672", "127.0.0.1"},
                {"LOCALHOST", 5672, "LOCALHOST:5672", "LOCALHOST"}, /* kombu compares exactly */
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *name = transport_broker_name(cases[i].host, cases[i].port);
                ck_assert_str_eq(name, cases[i].name);
                ck_assert_str_eq(transport_connect_host(cases[i].host), cases[i].connect);
        }
}
END_TEST

START_TEST(test_errors)
{
        static const struct {
                int status;
                int error;
        } statuses[] = {
                {AMQP_STATUS_OK, 0},
                {AMQP_STATUS_NO_MEMORY, -ENOMEM},
                {AMQP_STATUS_SOCKET_ERROR, -ECONNREFUSED},
                {AMQP_STATUS_CONNECTION_CLOSED, -ECONNRESET},
                {AMQP_STATUS_HEARTBEAT_TIMEOUT, -ETIMEDOUT},
                {AMQP_STATUS_TIMEOUT, -ETIMEDOUT},
                {AMQP_STATUS_HOSTNAME_RESOLUTION_FAILED, -EHOSTUNREACH},
                {AMQP_STATUS_SSL_PEER_VERIFY_FAILED, -EKEYREJECTED},
                {AMQP_STATUS_SSL_HOSTNAME_VERIFY_FAILED, -EKEYREJECTED},
                {AMQP_STATUS_SSL_CONNECTION_FAILED, -EPROTO},
                {AMQP_STATUS_BAD_AMQP_DATA, -EPROTO},
                {AMQP_STATUS_UNSUPPORTED, -EOPNOTSUPP},
                {-0x7777, -EIO},
        };
        static const struct {
                uint16_t code;
                int error;
        } codes[] = {
                {200, 0},           {311, -EMSGSIZE}, {320, -ECONNRESET}, {403, -EACCES},
                {404, -ENOENT},     {405, -EBUSY},    {406, -EINVAL},     {530, -EACCES},
                {540, -EOPNOTSUPP}, {541, -EIO},      {505, -EPROTO},     {999, -EIO},
        };

        for (size_t i = 0; i < ELEMENTSOF(statuses); i++)
                ck_assert_int_eq(transport_status_errno(statuses[i].status), statuses[i].error);
        for (size_t i = 0; i < ELEMENTSOF(codes); i++)
                ck_assert_int_eq(transport_reply_code_errno(codes[i].code), codes[i].error);
}
END_TEST

START_TEST(test_reply_describe)
{
        amqp_channel_close_t ch = {
                .reply_code = 404,
                .reply_text = amqp_cstring_bytes("NOT_FOUND - no queue 'q' in vhost '/'")};
        amqp_connection_close_t conn = {.reply_code = 403,
                                        .reply_text = amqp_cstring_bytes("ACCESS_REFUSED\n- x")};
        amqp_rpc_reply_t r = {.reply_type = AMQP_RESPONSE_SERVER_EXCEPTION};
        char *s;
        int err = 1;

        r.reply = (amqp_method_t){.id = AMQP_CHANNEL_CLOSE_METHOD, .decoded = &ch};
        s = transport_reply_describe(r, &err);
        ck_assert_str_eq(s, "NOT_FOUND - no queue 'q' in vhost '/' (reply code 404)");
        ck_assert_int_eq(err, -ENOENT);
        free(s);

        /* Control characters never reach a log line. */
        r.reply = (amqp_method_t){.id = AMQP_CONNECTION_CLOSE_METHOD, .decoded = &conn};
        s = transport_reply_describe(r, &err);
        ck_assert_str_eq(s, "ACCESS_REFUSED?- x (reply code 403)");
        ck_assert_int_eq(err, -EACCES);
        free(s);

        r = (amqp_rpc_reply_t){.reply_type = AMQP_RESPONSE_LIBRARY_EXCEPTION,
                               .library_error = AMQP_STATUS_CONNECTION_CLOSED};
        s = transport_reply_describe(r, &err);
        ck_assert_str_eq(s, amqp_error_string2(AMQP_STATUS_CONNECTION_CLOSED));
        ck_assert_int_eq(err, -ECONNRESET);
        free(s);

        r = (amqp_rpc_reply_t){.reply_type = AMQP_RESPONSE_NONE};
        s = transport_reply_describe(r, &err);
        ck_assert_str_eq(s, "no reply from the broker");
        ck_assert_int_eq(err, -EPROTO);
        free(s);
}
END_TEST

/* ---- options and the object ---- */

START_TEST(test_options_from_config)
{
        Config *c = NULL;
        TransportOptions o;

        ck_assert_int_eq(config_new_default(&c), 0);
        transport_options_from_config(&o, c);
        ck_assert_ptr_eq(o.brokers, c->rabbitmq.hosts);
        ck_assert_uint_eq(o.n_brokers, 1);
        ck_assert_str_eq(o.brokers[0].host, "localhost");
        ck_assert_uint_eq(o.brokers[0].port, 5672);
        ck_assert_str_eq(o.login, "guest");
        ck_assert_str_eq(o.password, "guest");
        ck_assert_str_eq(o.virtual_host, "/");
        ck_assert_str_eq(o.queue, "");
        ck_assert(!o.declare_queue);
        ck_assert_uint_eq(o.heartbeat, 60);
        ck_assert(!o.ssl);
        ck_assert_int_eq(o.ssl_version, CONFIG_SSL_DEFAULT);
        ck_assert_str_eq(o.ca_certs, "");
        ck_assert(!o.insecure);
        ck_assert(!o.verify_hostname);
        ck_assert_uint_eq(o.reconnect_initial_ms, 1000);
        ck_assert_uint_eq(o.reconnect_max_ms, 60000);
        ck_assert_uint_eq(o.connect_timeout_ms, 10000);
        ck_assert_uint_eq(o.stop_confirm_ms, 2000);
        ck_assert_uint_eq(o.max_body_size, 64 * 1024 * 1024);
        config_free(c);
}
END_TEST

static void nop_ready(Transport *t, const TransportReady *r, void *u)
{
}
static void nop_delivery(Transport *t, TransportDelivery *d, void *u)
{
}
static void nop_confirm(Transport *t, uint64_t seq, TransportConfirm s, void *u)
{
}

typedef struct Counts {
        int lost;
        int stopped;
        int error;
        bool was_ready;
        uint64_t retry_ms;
        uint64_t max_retry_ms;
        char reason[512];
} Counts;

static void count_lost(Transport *t, const TransportLoss *l, void *u)
{
        Counts *c = u;
        c->lost++;
        c->error = l->error;
        c->was_ready = l->was_ready;
        c->retry_ms = l->retry_ms;
        if (l->retry_ms > c->max_retry_ms)
                c->max_retry_ms = l->retry_ms;
        snprintf(c->reason, sizeof(c->reason), "%s", l->reason);
}

static void count_stopped(Transport *t, void *u)
{
        Counts *c = u;
        c->stopped++;
}

static const TransportCallbacks callbacks = {
        .on_ready = nop_ready,
        .on_lost = count_lost,
        .on_delivery = nop_delivery,
        .on_confirm = nop_confirm,
};

/* A loop with the tick timer RUN_UNTIL needs, and a transport started on
 * it that reports into c. */
static Transport *loop_start(uv_loop_t *loop, uv_timer_t *tick, const TransportOptions *o,
                             Counts *c)
{
        Transport *t = NULL;

        ck_assert_int_eq(uv_loop_init(loop), 0);
        ck_assert_int_eq(uv_timer_init(loop, tick), 0);
        ck_assert_int_eq(transport_new(loop, o, &callbacks, c, &t), 0);
        ck_assert_int_eq(transport_start(t), 0);
        return t;
}

/* Free the stopped t; the loop must then close with nothing left on it. */
static void loop_finish(uv_loop_t *loop, uv_timer_t *tick, Transport *t)
{
        transport_free(t);
        uv_close((uv_handle_t *)tick, NULL);
        ck_assert_int_eq(uv_run(loop, UV_RUN_DEFAULT), 0);
        ck_assert_int_eq(uv_loop_close(loop), 0);
}

static TransportOptions options(const ConfigHost *hosts, size_t n)
{
        return (TransportOptions){.brokers = hosts,
                                  .n_brokers = n,
                                  .login = "guest",
                                  .password = "secret-password",
                                  .virtual_host = "",
                                  .queue = "q",
                                  .heartbeat = 30,
                                  .ca_certs = "",
                                  .reconnect_initial_ms = 1000,
                                  .reconnect_max_ms = 60000};
}

START_TEST(test_new_invalid)
{
        uv_loop_t loop;
        ConfigHost good = {.host = (char *)"127.0.0.1", .port = 5672};
        ConfigHost bad_port = {.host = (char *)"127.0.0.1", .port = 0};
        ConfigHost big_port = {.host = (char *)"127.0.0.1", .port = 65536};
        TransportOptions o;
        TransportCallbacks cb = callbacks;
        Transport *t = NULL;
        uint64_t seq = 0;
        char longname[300];

        ck_assert_int_eq(uv_loop_init(&loop), 0);
        o = options(&good, 0);
        ck_assert_int_eq(transport_new(&loop, &o, &callbacks, NULL, &t), -EINVAL);
        o = options(&bad_port, 1);
        ck_assert_int_eq(transport_new(&loop, &o, &callbacks, NULL, &t), -EINVAL);
        o = options(&big_port, 1);
        ck_assert_int_eq(transport_new(&loop, &o, &callbacks, NULL, &t), -EINVAL);
        o = options(&good, 1);
        o.queue = "";
        ck_assert_int_eq(transport_new(&loop, &o, &callbacks, NULL, &t), -EINVAL);
        memset(longname, 'q', sizeof(longname) - 1);
        longname[sizeof(longname) - 1] = '\0';
        o.queue = longname;
        ck_assert_int_eq(transport_new(&loop, &o, &callbacks, NULL, &t), -EINVAL);
        o = options(&good, 1);
        cb.on_confirm = NULL;
        ck_assert_int_eq(transport_new(&loop, &o, &cb, NULL, &t), -EINVAL);
        ck_assert_ptr_null(t);

        /* A valid one that is never started: nothing to send, nothing to
         * stop, and it frees cleanly. */
        ck_assert_int_eq(transport_new(&loop, &o, &callbacks, NULL, &t), 0);
        ck_assert_str_eq(t->opts.virtual_host, "/"); /* "" is the default vhost */
        ck_assert(!transport_is_ready(t));
        ck_assert_int_eq(transport_publish(t, "", "rk", "id", "x", 1, &seq), -ENOTCONN);
        ck_assert_int_eq(transport_ack(t, 1), -ENOENT);
        ck_assert_int_eq(transport_reject(t, 1, false), -ENOENT);
        ck_assert_int_eq(transport_stop(t, NULL), -EINVAL);
        ck_assert_ptr_null(transport_free(t));
        ck_assert_ptr_null(transport_free(NULL));
        ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

static void on_stop_tick(uv_timer_t *timer)
{
        uv_stop(timer->loop);
}

/* Runs the loop until cond holds or ms pass. */
#define RUN_UNTIL(loop, timer, cond, ms)                                                           \
        ({                                                                                         \
                uint64_t _end = uv_hrtime() + (uint64_t)(ms)*1000000;                              \
                bool _ok;                                                                          \
                uv_timer_start(timer, on_stop_tick, 5, 5);                                         \
                while (!(_ok = (cond)) && uv_hrtime() < _end)                                      \
                        uv_run(loop, UV_RUN_DEFAULT);                                              \
                uv_timer_stop(timer);                                                              \
                _ok;                                                                               \
        })

/* This program's own ERR_clear_error() comes before libcrypto's, for the
 * code under test too: it counts the calls. A plain (TCP) connection must
 * make none, because the first call into OpenSSL's error queue initialises
 * OpenSSL, which such a connection never needs (docs/footprint.md). */
static int err_clear_calls;
void ERR_clear_error(void);
void ERR_clear_error(void)
{
        err_clear_calls++;
}

/* A port on 127.0.0.1 that nobody listens on (bound, then closed). */
static unsigned closed_port(void)
{
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof(a);
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
        ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
        close(fd);
        return ntohs(a.sin_port);
}

/* A started transport whose one broker is a closed port of 127.0.0.1
 * (*ret_port), with a first back-off step of initial_ms. */
static Transport *start_unreachable(uv_loop_t *loop, uv_timer_t *tick, uint64_t initial_ms,
                                    Counts *c, unsigned *ret_port)
{
        char host[] = "127.0.0.1";
        ConfigHost h = {.host = host, .port = closed_port()};
        TransportOptions o = options(&h, 1);

        o.reconnect_initial_ms = initial_ms;
        *ret_port = h.port;
        return loop_start(loop, tick, &o, c);
}

START_TEST(test_start_stop_unreachable)
{
        uv_loop_t loop;
        uv_timer_t tick;
        Counts c = {0};
        char expect[128];
        unsigned port;
        uint64_t seq;
        Transport *t = start_unreachable(&loop, &tick, 1000, &c, &port);

        ck_assert_int_eq(transport_start(t), -EALREADY);

        ck_assert(RUN_UNTIL(&loop, &tick, c.lost >= 1, 5000));
        ck_assert_int_eq(c.lost, 1);
        ck_assert(!c.was_ready);
        ck_assert_int_eq(c.error, -ECONNREFUSED);
        snprintf(expect, sizeof(expect),
                 "cannot connect to 127.0.0.1:%u: a socket error occurred: Connection refused",
                 port);
        ck_assert_str_eq(c.reason, expect);
        ck_assert_ptr_null(strstr(c.reason, "secret-password"));
        ck_assert_int_eq(err_clear_calls, 0);
        /* One broker: every failure ends a round, so the wait is the first
         * back-off step, 0.5 to 1 s. */
        ck_assert_uint_ge(c.retry_ms, 500);
        ck_assert_uint_le(c.retry_ms, 1000);
        ck_assert_int_eq(transport_publish(t, "", "rk", "id", "x", 1, &seq), -ENOTCONN);

        /* Stopping interrupts the back-off wait at once. */
        uint64_t t0 = uv_hrtime();
        ck_assert_int_eq(transport_stop(t, count_stopped), 0);
        ck_assert_int_eq(transport_stop(t, count_stopped), -EALREADY);
        ck_assert_int_eq(transport_publish(t, "", "rk", "id", "x", 1, &seq), -ESHUTDOWN);
        ck_assert_int_eq(transport_ack(t, 1), -ESHUTDOWN);
        ck_assert(RUN_UNTIL(&loop, &tick, c.stopped == 1, 5000));
        ck_assert_uint_lt((uv_hrtime() - t0) / 1000000, 400);
        ck_assert_int_eq(c.lost, 1); /* no on_lost after stop */
        loop_finish(&loop, &tick, t);
}
END_TEST

/* While nothing listens on the broker's port the waits do not grow: every
 * one is the first step's (here 50 to 100 ms), so the agent is back soon
 * after the broker, however long it was away. A listener that never
 * answers is past the TCP connect: there the back-off grows
 * (test_login_timeout). */
START_TEST(test_closed_port_waits_do_not_grow)
{
        uv_loop_t loop;
        uv_timer_t tick;
        Counts c = {0};
        unsigned port;
        Transport *t = start_unreachable(&loop, &tick, 100, &c, &port);

        /* An exponential back-off would be at 6.4 to 12.8 s by the 8th. */
        ck_assert(RUN_UNTIL(&loop, &tick, c.lost >= 8, 5000));
        ck_assert_int_eq(c.error, -ECONNREFUSED);
        ck_assert_uint_ge(c.retry_ms, 50);
        ck_assert_uint_le(c.max_retry_ms, 100);
        ck_assert_int_eq(transport_stop(t, count_stopped), 0);
        ck_assert(RUN_UNTIL(&loop, &tick, c.stopped == 1, 5000));
        loop_finish(&loop, &tick, t);
}
END_TEST

START_TEST(test_login_timeout)
{
        /* A listener that never accepts: the kernel completes the TCP
         * handshake, and the AMQP handshake times out. */
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof(a);
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        uv_loop_t loop;
        uv_timer_t tick;
        char host[] = "127.0.0.1";
        ConfigHost h = {.host = host};
        TransportOptions o;
        Transport *t = NULL;
        Counts c = {0};

        ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
        ck_assert_int_eq(listen(fd, 8), 0);
        ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
        h.port = ntohs(a.sin_port);
        o = options(&h, 1);
        o.connect_timeout_ms = 300;
        o.reconnect_initial_ms = 100;

        t = loop_start(&loop, &tick, &o, &c);
        ck_assert(RUN_UNTIL(&loop, &tick, c.lost >= 1, 5000));
        ck_assert_int_eq(c.error, -ETIMEDOUT);
        ck_assert_msg(strstr(c.reason, "cannot log in to 127.0.0.1:") &&
                              strstr(c.reason, "as 'guest' (virtual host '/')"),
                      "reason: %s", c.reason);
        ck_assert_ptr_null(strstr(c.reason, "secret-password"));
        /* Past the TCP connect, the back-off grows: the third wait is 200
         * to 400 ms. */
        ck_assert(RUN_UNTIL(&loop, &tick, c.lost >= 3, 5000));
        ck_assert_uint_ge(c.retry_ms, 200);
        ck_assert_uint_le(c.retry_ms, 400);
        ck_assert_int_eq(transport_stop(t, count_stopped), 0);
        ck_assert(RUN_UNTIL(&loop, &tick, c.stopped == 1, 5000));
        close(fd);
        loop_finish(&loop, &tick, t);
}
END_TEST

static Suite *transport_suite(void)
{
        Suite *s = suite_create("transport");
        TCase *tc = tcase_create("pure");

        tcase_add_test(tc, test_idmap);
        tcase_add_test(tc, test_backoff_schedule);
        tcase_add_test(tc, test_backoff_edges);
        tcase_add_test(tc, test_random);
        tcase_add_test(tc, test_props_publish);
        tcase_add_test(tc, test_headers_signature);
        tcase_add_test(tc, test_names);
        tcase_add_test(tc, test_errors);
        tcase_add_test(tc, test_reply_describe);
        tcase_add_test(tc, test_options_from_config);
        suite_add_tcase(s, tc);

        tc = tcase_create("loop");
        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, test_new_invalid);
        tcase_add_test(tc, test_start_stop_unreachable);
        tcase_add_test(tc, test_closed_port_waits_do_not_grow);
        tcase_add_test(tc, test_login_timeout);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return check_run(transport_suite());
}
