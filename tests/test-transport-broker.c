/* The transport against a real RabbitMQ. Tests that leave the broker as
 * they found it use $BROKER_PORT when the test run provides one; the rest
 * (a broker that goes down, a frozen broker, TLS) use a broker of this
 * program's own, which main() starts with tests/broker.sh (adding a TLS
 * listener with a CA and certificate made by openssl) and stops at the
 * end. A plain blocking rabbitmq-c client plays the engine. */
#include "test-transport-broker.h"
#include "test-lib.h"

static const char plan[] = "{\"Body\": \"return 1\", \"FormatVersion\": \"2.0.0\", "
                           "\"ID\": \"5b1f\", \"Scripts\": {}}";
static const char result[] = "{\"FormatVersion\": \"2.0.0\", \"ID\": \"77\", \"SourceID\": "
                             "\"5b1f\", \"ErrorCode\": 0, \"Body\": 1, \"Time\": \"x\"}";

START_TEST(test_round_trip)
{
        H *h = h_new("rt", shared_port);
        TransportOptions o = h_options(h);
        amqp_connection_state_t a = admin_open(shared_port);
        char results[160], expect[64];
        amqp_message_t m;
        uint64_t seq = 0, t0, t1;

        snprintf(results, sizeof(results), "%s-results", h->queue);
        admin_declare(a, h->queue);
        admin_declare(a, results);
        h_start(h, &o);
        ck_assert(RUN_UNTIL(h, h->ready == 1, 10000));
        snprintf(expect, sizeof(expect), "127.0.0.1:%u", shared_port);
        ck_assert_str_eq(h->broker, expect);
        ck_assert_uint_eq(h->heartbeat, 30); /* ours; the broker offers 60 */
        ck_assert_uint_eq(h->connection, 1);
        ck_assert(transport_is_ready(h->t));

        t0 = uv_hrtime();
        admin_publish(a, h->queue, plan, strlen(plan), "5b1f", NULL, SIG_VOID, NULL, 0);
        ck_assert(RUN_UNTIL(h, h->n_got == 1, 5000));
        Got *g = &h->got[0];
        ck_assert_uint_eq(g->body_len, strlen(plan));
        ck_assert_str_eq((char *)g->body, plan);
        ck_assert_str_eq(g->message_id, "5b1f");
        ck_assert_ptr_null(g->reply_to);
        ck_assert_int_eq(g->sig_kind, TRANSPORT_SIGNATURE_VOID);
        ck_assert(!g->redelivered);
        ck_assert(!g->oversize);
        ck_assert_int_eq(transport_ack(h->t, g->tag), 0);
        ck_assert_int_eq(transport_ack(h->t, g->tag), -ENOENT); /* settled already */

        ck_assert_int_eq(transport_publish(h->t, "", results, "5b1f", result, strlen(result), &seq),
                         0);
        ck_assert_uint_eq(seq, 1);
        ck_assert(RUN_UNTIL(h, h->n_confirms == 1, 5000));
        t1 = uv_hrtime();
        ck_assert_uint_eq(h->seqs[0], 1);
        ck_assert_int_eq(h->status[0], TRANSPORT_CONFIRM_ACK);
        fprintf(stderr,
                "round trip (engine publish -> delivery -> result confirmed): %.2f ms, "
                "delivery after %.2f ms\n",
                (double)(t1 - t0) / 1e6, (double)(g->at_ns - t0) / 1e6);

        /* The result as the engine receives it: body and the reference's
         * properties, nothing more (spec §2.4). */
        admin_get(a, results, &m);
        ck_assert_uint_eq(m.body.len, strlen(result));
        ck_assert_mem_eq(m.body.bytes, result, strlen(result));
        ck_assert_uint_eq(m.properties._flags,
                          AMQP_BASIC_CONTENT_TYPE_FLAG | AMQP_BASIC_CONTENT_ENCODING_FLAG |
                                  AMQP_BASIC_HEADERS_FLAG | AMQP_BASIC_DELIVERY_MODE_FLAG |
                                  AMQP_BASIC_PRIORITY_FLAG | AMQP_BASIC_MESSAGE_ID_FLAG);
        ck_assert_uint_eq(m.properties.content_type.len, 10);
        ck_assert_mem_eq(m.properties.content_type.bytes, "text/plain", 10);
        ck_assert_uint_eq(m.properties.content_encoding.len, 5);
        ck_assert_mem_eq(m.properties.content_encoding.bytes, "utf-8", 5);
        ck_assert_uint_eq(m.properties.delivery_mode, 2);
        ck_assert_uint_eq(m.properties.priority, 0);
        ck_assert_uint_eq(m.properties.message_id.len, 4);
        ck_assert_mem_eq(m.properties.message_id.bytes, "5b1f", 4);
        ck_assert_int_eq(m.properties.headers.num_entries, 0);
        amqp_destroy_message(&m);

        h_finish(h);
        /* Acked: gone from the queue even after the consumer left. */
        ck_assert_uint_eq(admin_count(a, finished_queue), 0);
        admin_done(a);
}
END_TEST

START_TEST(test_signature_and_properties)
{
        H *h = h_new("sig", shared_port);
        TransportOptions o = h_options(h);
        amqp_connection_state_t a = admin_open(shared_port);
        uint8_t sig[256];

        /* RSA-2048 output: arbitrary bytes, NULs and invalid UTF-8. */
        for (size_t i = 0; i < sizeof(sig); i++)
                sig[i] = (uint8_t)((i * 151 + 7) ^ (i >> 3));
        sig[0] = 0xff, sig[1] = 0x00, sig[2] = 0xc3, sig[3] = 0x28;
        admin_declare(a, h->queue);
        admin_publish(a, h->queue, "a", 1, "m-a", "reply-q", SIG_BYTES, sig, sizeof(sig));
        admin_publish(a, h->queue, "b", 1, NULL, NULL, SIG_NONE, NULL, 0);
        admin_publish(a, h->queue, "c", 1, "m-c", NULL, SIG_OTHER_KEY, sig, 4);
        admin_publish(a, h->queue, "d", 1, "m-d", NULL, SIG_BYTEARRAY, sig, sizeof(sig));
        h->auto_ack = true;
        h_start(h, &o);
        ck_assert(RUN_UNTIL(h, h->n_got == 4, 10000));

        ck_assert_str_eq((char *)h->got[0].body, "a");
        ck_assert_int_eq(h->got[0].sig_kind, TRANSPORT_SIGNATURE_BYTES);
        ck_assert_uint_eq(h->got[0].sig_len, 256);
        ck_assert_mem_eq(h->got[0].sig, sig, 256);
        ck_assert_str_eq(h->got[0].message_id, "m-a");
        ck_assert_str_eq(h->got[0].reply_to, "reply-q");

        ck_assert_str_eq((char *)h->got[1].body, "b");
        ck_assert_int_eq(h->got[1].sig_kind, TRANSPORT_SIGNATURE_ABSENT);
        ck_assert_str_eq(h->got[1].message_id, "");
        ck_assert_ptr_null(h->got[1].reply_to);

        ck_assert_int_eq(h->got[2].sig_kind, TRANSPORT_SIGNATURE_ABSENT);
        ck_assert_int_eq(h->got[3].sig_kind, TRANSPORT_SIGNATURE_BYTES);
        ck_assert_mem_eq(h->got[3].sig, sig, 256);
        /* Distinct tags, never 0. */
        ck_assert_uint_ne(h->got[0].tag, 0);
        ck_assert_uint_ne(h->got[0].tag, h->got[1].tag);
        h_finish(h);
        ck_assert_uint_eq(admin_count(a, finished_queue), 0);
        admin_done(a);
}
END_TEST

START_TEST(test_reject)
{
        H *h = h_new("rej", shared_port);
        TransportOptions o = h_options(h);
        amqp_connection_state_t a = admin_open(shared_port);

        admin_declare(a, h->queue);
        admin_publish(a, h->queue, "once", 4, "r1", NULL, SIG_VOID, NULL, 0);
        h_start(h, &o);
        ck_assert(RUN_UNTIL(h, h->n_got == 1, 10000));
        ck_assert(!h->got[0].redelivered);
        ck_assert_int_eq(transport_reject(h->t, h->got[0].tag, true), 0);
        ck_assert(RUN_UNTIL(h, h->n_got == 2, 5000));
        ck_assert(h->got[1].redelivered);
        ck_assert_str_eq((char *)h->got[1].body, "once");
        ck_assert_int_eq(transport_reject(h->t, h->got[0].tag, false), -ENOENT);
        ck_assert_int_eq(transport_reject(h->t, h->got[1].tag, false), 0);
        /* Dropped, not requeued: nothing more comes. */
        ck_assert(!RUN_UNTIL(h, h->n_got == 3, 700));
        h_finish(h);
        ck_assert_uint_eq(admin_count(a, finished_queue), 0);
        admin_done(a);
}
END_TEST

START_TEST(test_stop_requeues_and_waits_for_confirms)
{
        H *h = h_new("stop", shared_port);
        TransportOptions o = h_options(h);
        amqp_connection_state_t a = admin_open(shared_port);
        char results[160];
        uint64_t seq;

        snprintf(results, sizeof(results), "%s-results", h->queue);
        admin_declare(a, h->queue);
        admin_declare(a, results);
        admin_publish(a, h->queue, "keep", 4, "k1", NULL, SIG_VOID, NULL, 0);
        h_start(h, &o);
        ck_assert(RUN_UNTIL(h, h->n_got == 1, 10000));
        /* A result handed over just before the stop is still confirmed. */
        ck_assert_int_eq(transport_publish(h->t, "", results, "k1", "r", 1, &seq), 0);
        ck_assert_int_eq(transport_stop(h->t, on_stopped), 0);
        ck_assert(RUN_UNTIL(h, h->stopped == 1, 10000));
        ck_assert_uint_eq(h->n_confirms, 1);
        ck_assert_int_eq(h->status[0], TRANSPORT_CONFIRM_ACK);
        ck_assert_int_eq(h->lost, 0);
        transport_free(h->t);
        h->t = NULL;
        ck_assert_uint_eq(admin_count(a, results), 1);
        /* Not acked: back in the queue, and redelivered to the next agent. */
        ck_assert_uint_eq(admin_count(a, h->queue), 1);
        h_finish(h);

        h = h_new("stop", shared_port);
        o = h_options(h);
        h_start(h, &o);
        ck_assert(RUN_UNTIL(h, h->n_got == 1, 10000));
        ck_assert(h->got[0].redelivered);
        ck_assert_str_eq((char *)h->got[0].body, "keep");
        ck_assert_int_eq(transport_ack(h->t, h->got[0].tag), 0);
        h_finish(h);
        ck_assert_uint_eq(admin_count(a, finished_queue), 0);
        admin_done(a);
}
END_TEST

START_TEST(test_confirms)
{
        H *h = h_new("conf", shared_port);
        TransportOptions o = h_options(h);
        amqp_connection_state_t a = admin_open(shared_port);
        amqp_table_entry_t overflow[] = {
                {.key = amqp_cstring_bytes("x-max-length"),
                 .value = {.kind = AMQP_FIELD_KIND_I32, .value.i32 = 1}},
                {.key = amqp_cstring_bytes("x-overflow"),
                 .value = {.kind = AMQP_FIELD_KIND_UTF8,
                           .value.bytes = amqp_cstring_bytes("reject-publish")}},
        };
        char results[160], full[160];
        bool seen[210] = {false};
        uint64_t seq = 0;
        const int n = 200;

        snprintf(results, sizeof(results), "%s-results", h->queue);
        snprintf(full, sizeof(full), "%s-full", h->queue);
        admin_declare(a, h->queue);
        admin_declare(a, results);
        ck_assert_int_eq(admin_declare_args(a, full, overflow, 2), AMQP_RESPONSE_NORMAL);
        h_start(h, &o);
        ck_assert(RUN_UNTIL(h, h->ready == 1, 10000));

        /* A burst: each sequence number confirmed exactly once. */
        for (int i = 1; i <= n; i++) {
                ck_assert_int_eq(transport_publish(h->t, "", results, "b", "x", 1, &seq), 0);
                ck_assert_uint_eq(seq, (uint64_t)i);
        }
        ck_assert(RUN_UNTIL(h, h->n_confirms == (size_t)n, 10000));
        for (int i = 0; i < n; i++) {
                ck_assert_int_eq(h->status[i], TRANSPORT_CONFIRM_ACK);
                ck_assert(!seen[h->seqs[i]]);
                seen[h->seqs[i]] = true;
        }
        ck_assert_uint_eq(admin_count(a, results), (unsigned)n);

        /* A queue that refuses: the broker nacks. */
        for (int i = 0; i < 3; i++)
                ck_assert_int_eq(transport_publish(h->t, "", full, "f", "x", 1, &seq), 0);
        ck_assert(RUN_UNTIL(h, h->n_confirms == (size_t)n + 3, 5000));
        /* A nack needs no disk write, so it may overtake the ack. */
        for (int i = n; i < n + 3; i++) {
                ck_assert(!seen[h->seqs[i]]);
                seen[h->seqs[i]] = true;
                ck_assert_int_eq(h->status[i], h->seqs[i] == (uint64_t)n + 1
                                                       ? TRANSPORT_CONFIRM_ACK
                                                       : TRANSPORT_CONFIRM_NACK);
        }

        /* No such exchange: the broker closes the channel; the publish is
         * reported lost before on_lost, and the transport comes back. */
        ck_assert_int_eq(transport_publish(h->t, "no-such-exchange", "rk", "l", "x", 1, &seq), 0);
        ck_assert(RUN_UNTIL(h, h->lost == 1, 5000));
        ck_assert_uint_eq(h->n_confirms, (size_t)n + 4);
        ck_assert_uint_eq(h->seqs[n + 3], seq);
        ck_assert_int_eq(h->status[n + 3], TRANSPORT_CONFIRM_LOST);
        ck_assert_int_lt(h->lost_confirm_at, h->lost_at);
        ck_assert_int_eq(h->error, -ENOENT);
        ck_assert_msg(strstr(h->reason, "closed the channel: NOT_FOUND - no exchange "
                                        "'no-such-exchange'"),
                      "reason: %s", h->reason);
        ck_assert_int_eq(transport_publish(h->t, "", results, "b", "x", 1, &seq), -ENOTCONN);
        ck_assert(RUN_UNTIL(h, h->ready == 2, 5000));
        ck_assert_uint_eq(h->connection, 2);
        ck_assert_int_eq(transport_publish(h->t, "", results, "b", "x", 1, &seq), 0);
        ck_assert(RUN_UNTIL(h, h->n_confirms == (size_t)n + 5, 5000));
        ck_assert_int_eq(h->status[n + 4], TRANSPORT_CONFIRM_ACK);
        h_finish(h);
        admin_done(a);
}
END_TEST

START_TEST(test_large_and_oversize)
{
        const size_t size = 2 * 1024 * 1024;
        H *h = h_new("big", shared_port);
        TransportOptions o = h_options(h);
        amqp_connection_state_t a = admin_open(shared_port);
        char *big = malloc(size + 1);
        char results[160];
        amqp_message_t m;
        uint64_t seq, t0, t1;

        for (size_t i = 0; i <= size; i++)
                big[i] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
                        [(i * 31 + (i >> 11)) % 64];
        snprintf(results, sizeof(results), "%s-results", h->queue);
        admin_declare(a, h->queue);
        admin_declare(a, results);
        o.max_body_size = size;
        h_start(h, &o);
        ck_assert(RUN_UNTIL(h, h->ready == 1, 10000));

        t0 = uv_hrtime();
        admin_publish(a, h->queue, big, size, "big", NULL, SIG_VOID, NULL, 0);
        ck_assert(RUN_UNTIL(h, h->n_got == 1, 10000));
        ck_assert_uint_eq(h->got[0].body_len, size);
        ck_assert(!h->got[0].oversize);
        ck_assert_mem_eq(h->got[0].body, big, size);
        ck_assert_int_eq(transport_ack(h->t, h->got[0].tag), 0);
        ck_assert_int_eq(transport_publish(h->t, "", results, "big", big, size, &seq), 0);
        ck_assert(RUN_UNTIL(h, h->n_confirms == 1, 10000));
        t1 = uv_hrtime();
        ck_assert_int_eq(h->status[0], TRANSPORT_CONFIRM_ACK);
        fprintf(stderr, "2 MiB in and 2 MiB out, confirmed: %.2f ms (delivery %.2f ms)\n",
                (double)(t1 - t0) / 1e6, (double)(h->got[0].at_ns - t0) / 1e6);
        admin_get(a, results, &m);
        ck_assert_uint_eq(m.body.len, size);
        ck_assert_mem_eq(m.body.bytes, big, size);
        amqp_destroy_message(&m);

        /* One byte over the limit: read, dropped, reported with its size. */
        admin_publish(a, h->queue, big, size + 1, "over", NULL, SIG_VOID, NULL, 0);
        ck_assert(RUN_UNTIL(h, h->n_got == 2, 10000));
        ck_assert(h->got[1].oversize);
        ck_assert_ptr_null(h->got[1].body);
        ck_assert_uint_eq(h->got[1].body_len, size + 1);
        ck_assert_str_eq(h->got[1].message_id, "over");
        ck_assert_int_eq(transport_reject(h->t, h->got[1].tag, false), 0);
        free(big);
        h_finish(h);
        admin_done(a);
}
END_TEST

START_TEST(test_failover)
{
        H *h = h_new("hosts", shared_port);
        TransportOptions o = h_options(h);
        amqp_connection_state_t a = admin_open(shared_port);
        unsigned closed = free_port();
        char expect[160];

        admin_declare(a, h->queue);
        /* The first broker is a closed port; "localhost" is reached at
         * 127.0.0.1, as kombu does. */
        h->hosts[0] = (ConfigHost){.host = (char *)"127.0.0.1", .port = closed};
        h->hosts[1] = (ConfigHost){.host = (char *)"localhost", .port = shared_port};
        o.n_brokers = 2;
        h_start(h, &o);
        ck_assert(RUN_UNTIL(h, h->ready == 1, 10000));
        ck_assert_int_eq(h->lost, 1);
        ck_assert_int_eq(h->error, -ECONNREFUSED);
        snprintf(expect, sizeof(expect), "cannot connect to 127.0.0.1:%u: ", closed);
        ck_assert_msg(strncmp(h->reason, expect, strlen(expect)) == 0, "reason: %s", h->reason);
        ck_assert_uint_eq(h->retries[0], 0); /* the next broker at once */
        snprintf(expect, sizeof(expect), "localhost:%u", shared_port);
        ck_assert_str_eq(h->broker, expect);
        admin_publish(a, h->queue, "x", 1, "fo", NULL, SIG_VOID, NULL, 0);
        ck_assert(RUN_UNTIL(h, h->n_got == 1, 5000));
        ck_assert_int_eq(transport_ack(h->t, h->got[0].tag), 0);
        h_finish(h);
        admin_done(a);
}
END_TEST

START_TEST(test_missing_queue)
{
        H *h = h_new("missing", shared_port);
        TransportOptions o = h_options(h);
        amqp_connection_state_t a;
        char expect[256];

        h_start(h, &o);
        ck_assert(RUN_UNTIL(h, h->lost == 3, 10000));
        ck_assert_int_eq(h->ready, 0);
        ck_assert_int_eq(h->error, -ENOENT);
        snprintf(expect, sizeof(expect), "queue '%s' does not exist on 127.0.0.1:%u (the engine",
                 h->queue, shared_port);
        ck_assert_msg(strncmp(h->reason, expect, strlen(expect)) == 0, "reason: %s", h->reason);
        ck_assert_msg(strstr(h->reason, "NOT_FOUND - no queue"), "reason: %s", h->reason);
        /* 200 ms doubling: [100, 200], [200, 400], [400, 800]. */
        for (size_t i = 0; i < 3; i++) {
                ck_assert_uint_ge(h->retries[i], 100u << i);
                ck_assert_uint_le(h->retries[i], 200u << i);
        }
        /* The engine declares it; the agent gets going by itself. */
        a = admin_open(shared_port);
        admin_declare(a, h->queue);
        ck_assert(RUN_UNTIL(h, h->ready == 1, 5000));
        admin_publish(a, h->queue, "x", 1, "mq", NULL, SIG_VOID, NULL, 0);
        ck_assert(RUN_UNTIL(h, h->n_got == 1, 5000));
        ck_assert_int_eq(transport_ack(h->t, h->got[0].tag), 0);

        /* Deleted under the consumer: the broker says so (basic.cancel),
         * and the agent goes back to waiting for the queue. */
        ck_assert_ptr_nonnull(amqp_queue_delete(a, 1, amqp_cstring_bytes(h->queue), 0, 0));
        ck_assert(RUN_UNTIL(h, h->lost_ready == 1, 5000));
        ck_assert_int_eq(h->error, -ECANCELED);
        ck_assert_msg(strstr(h->first_reason, "cancelled the consumer of queue"), "reason: %s",
                      h->first_reason);
        ck_assert(RUN_UNTIL(h, h->lost >= 5, 5000));
        ck_assert_int_eq(h->error, -ENOENT);
        admin_declare(a, h->queue);
        ck_assert(RUN_UNTIL(h, h->ready == 2, 5000));
        h_finish(h);
        admin_done(a);
}
END_TEST

START_TEST(test_declare_queue)
{
        H *h = h_new("declare", shared_port);
        TransportOptions o = h_options(h);
        amqp_connection_state_t a;

        o.declare_queue = true;
        h_start(h, &o);
        ck_assert(RUN_UNTIL(h, h->ready == 1, 10000));
        ck_assert_int_eq(h->lost, 0);
        h_finish(h);
        /* Declared exactly as the engine declares it: the same declaration
         * is accepted, a different one refused (406). */
        a = admin_open(shared_port);
        admin_declare(a, finished_queue);
        ck_assert_uint_eq(admin_count(a, finished_queue), 0);
        amqp_queue_declare(a, 1, amqp_cstring_bytes(finished_queue), 0, 1, 0, 0, amqp_empty_table);
        ck_assert_int_eq(amqp_get_rpc_reply(a).reply_type, AMQP_RESPONSE_SERVER_EXCEPTION);
        admin_done(a);
}
END_TEST

static volatile unsigned storm_sink;

static void on_storm(uv_timer_t *timer)
{
        for (unsigned i = 0; i < 200000; i++)
                storm_sink += i;
}

/* TransportOptions.awake: calls from the I/O thread, never the loop's. */
static unsigned awake_calls;
static uv_thread_t loop_thread;

static void on_awake(void *data)
{
        uv_thread_t self = uv_thread_self();

        ck_assert_ptr_eq(data, &awake_calls);
        ck_assert(!uv_thread_equal(&self, &loop_thread));
        __atomic_add_fetch(&awake_calls, 1, __ATOMIC_RELAXED);
}

static void on_block(uv_timer_t *timer)
{
        unsigned before = __atomic_load_n(&awake_calls, __ATOMIC_RELAXED);

        /* The loop does nothing else for 3.5 heartbeats. */
        usleep(7 * 1000 * 1000);
        /* The broker's heartbeats woke the I/O thread every second, and
         * the hook rode on each wake-up. */
        ck_assert_uint_ge(__atomic_load_n(&awake_calls, __ATOMIC_RELAXED) - before, 5);
}

START_TEST(test_heartbeats_while_loop_busy)
{
        H *h = h_new("hb", shared_port);
        TransportOptions o = h_options(h);
        amqp_connection_state_t a = admin_open(shared_port);
        uv_timer_t storm, block;
        uint64_t t0;

        admin_declare(a, h->queue);
        o.heartbeat = 2;
        o.awake = on_awake;
        o.awake_data = &awake_calls;
        loop_thread = uv_thread_self();
        h_start(h, &o);
        ck_assert(RUN_UNTIL(h, h->ready == 1, 10000));
        ck_assert_uint_eq(h->heartbeat, 2);

        /* 5 s of a busy loop (a 1 ms timer burning CPU), then 7 s of a loop
         * that does not run at all; the broker would close the connection
         * after 4 s without heartbeats. */
        ck_assert_int_eq(uv_timer_init(&h->loop, &storm), 0);
        ck_assert_int_eq(uv_timer_init(&h->loop, &block), 0);
        uv_timer_start(&storm, on_storm, 1, 1);
        uv_timer_start(&block, on_block, 5000, 0);
        t0 = uv_hrtime();
        ck_assert(!RUN_UNTIL(h, h->lost > 0, 13000));
        uv_timer_stop(&storm);
        uv_close((uv_handle_t *)&storm, NULL);
        uv_close((uv_handle_t *)&block, NULL);
        ck_assert_uint_ge((uv_hrtime() - t0) / 1000000, 12000);
        ck_assert_int_eq(h->lost, 0);
        ck_assert_int_eq(h->ready, 1);

        admin_publish(a, h->queue, "alive", 5, "hb", NULL, SIG_VOID, NULL, 0);
        ck_assert(RUN_UNTIL(h, h->n_got == 1, 5000));
        ck_assert_int_eq(transport_ack(h->t, h->got[0].tag), 0);
        h_finish(h);
        admin_done(a);
}
END_TEST

START_TEST(test_broker_down_and_back)
{
        H *h = h_new("down", private_port);
        TransportOptions o = h_options(h);
        amqp_connection_state_t a = admin_open(private_port);
        uint64_t seq;
        size_t i;

        admin_declare(a, h->queue);
        admin_publish(a, h->queue, plan, strlen(plan), "d1", NULL, SIG_VOID, NULL, 0);
        admin_close(a);
        h_start(h, &o);
        ck_assert(RUN_UNTIL(h, h->n_got == 1, 10000));
        /* Not acked yet (the plan is, say, being written to disk). */

        ck_assert_int_eq(broker("down", NULL, NULL), 0);
        ck_assert(RUN_UNTIL(h, h->lost_ready == 1 && h->lost >= 3, 10000));
        ck_assert_msg(strstr(h->first_reason, "CONNECTION_FORCED"), "reason: %s", h->first_reason);
        ck_assert(!transport_is_ready(h->t));
        ck_assert_int_eq(transport_publish(h->t, "", "q", "d1", "r", 1, &seq), -ENOTCONN);
        /* Its connection is gone: the ack cannot go out, and says so. */
        ck_assert_int_eq(transport_ack(h->t, h->got[0].tag), -ENOTCONN);
        ck_assert_int_eq(transport_ack(h->t, h->got[0].tag), -ENOENT);

        ck_assert_int_eq(broker("up", NULL, NULL), 0);
        ck_assert(RUN_UNTIL(h, h->ready == 2, 15000));
        ck_assert_uint_eq(h->connection, 2);
        /* The back-off: the loss waits [100, 200] ms, the first step; so
         * does every attempt after it, each refused at the TCP connect
         * while the broker is down: the waits do not grow. */
        ck_assert(h->retry_was_ready[0]);
        ck_assert_uint_ge(h->n_retries, 3);
        for (i = 0; i < h->n_retries; i++) {
                ck_assert_uint_ge(h->retries[i], 100);
                ck_assert_uint_le(h->retries[i], 200);
                ck_assert(i == 0 || !h->retry_was_ready[i]);
        }

        /* The unacked plan comes again, marked redelivered. */
        ck_assert(RUN_UNTIL(h, h->n_got == 2, 10000));
        ck_assert(h->got[1].redelivered);
        ck_assert_str_eq((char *)h->got[1].body, plan);
        ck_assert_int_eq(transport_ack(h->t, h->got[1].tag), 0);
        ck_assert_int_eq(transport_publish(h->t, "", h->queue, "d1", "r", 1, &seq), 0);
        ck_assert(RUN_UNTIL(h, h->n_confirms == 1, 5000));
        ck_assert_int_eq(h->status[0], TRANSPORT_CONFIRM_ACK);
        h_finish(h);
}
END_TEST

static int set_watermark(const char *fraction)
{
        char *argv[] = {(char *)"/bin/bash",
                        (char *)TEST_DATA_DIR "/../broker.sh",
                        (char *)"ctl",
                        broker_dir,
                        (char *)"set_vm_memory_high_watermark",
                        (char *)fraction,
                        NULL};
        return run(argv);
}

START_TEST(test_blocked_publishers)
{
        /* A memory alarm: the broker stops reading from publishers and
         * says connection.blocked. Results wait in the transport, the loop
         * stays free, and everything is confirmed once the alarm ends. */
        H *h = h_new("blocked", private_port);
        TransportOptions o = h_options(h);
        amqp_connection_state_t a = admin_open(private_port);
        uint64_t seq;

        admin_declare(a, h->queue);
        admin_close(a);
        h_start(h, &o);
        ck_assert(RUN_UNTIL(h, h->ready == 1, 10000));
        ck_assert_int_eq(set_watermark("0.0000001"), 0);
        for (int i = 0; i < 3; i++) {
                ck_assert(!RUN_UNTIL(h, false, 700));
                ck_assert_int_eq(transport_publish(h->t, "", h->queue, "b", "x", 1, &seq), 0);
        }
        ck_assert(!RUN_UNTIL(h, h->n_confirms > 0, 1500));
        ck_assert_int_eq(set_watermark("0.4"), 0);
        ck_assert(RUN_UNTIL(h, h->n_confirms == 3, 10000));
        for (int i = 0; i < 3; i++)
                ck_assert_int_eq(h->status[i], TRANSPORT_CONFIRM_ACK);
        ck_assert_int_eq(h->lost, 0);
        h_finish(h);
}
END_TEST

START_TEST(test_frozen_broker)
{
        /* A frozen node sends nothing, not even a TCP reset (engine
         * observation #11); only heartbeats notice. */
        H *h = h_new("frozen", private_port);
        TransportOptions o = h_options(h);
        amqp_connection_state_t a = admin_open(private_port);
        uint64_t t0, ms;
        bool noticed;

        admin_declare(a, h->queue);
        admin_close(a);
        o.heartbeat = 2;
        h_start(h, &o);
        ck_assert(RUN_UNTIL(h, h->ready == 1, 10000));
        t0 = uv_hrtime();
        ck_assert_int_eq(kill(private_pid, SIGSTOP), 0);
        noticed = RUN_UNTIL(h, h->lost_ready == 1, 10000);
        ms = (uv_hrtime() - t0) / 1000000;
        kill(private_pid, SIGCONT);
        ck_assert(noticed);
        ck_assert_uint_ge(ms, 1500);
        ck_assert_uint_le(ms, 6000);
        ck_assert_int_eq(h->error, -ETIMEDOUT);
        ck_assert_msg(strstr(h->first_reason, "no data from 127.0.0.1:") &&
                              strstr(h->first_reason, "for 4 s"),
                      "reason: %s", h->first_reason);
        ck_assert(RUN_UNTIL(h, h->ready == 2, 20000));
        h_finish(h);
}
END_TEST

/* One TLS attempt: its first outcome. */
static void tls_try(const char *host, const char *ca, bool insecure, bool verify_hostname,
                    unsigned port, bool expect_ready, int expect_error, const char *expect_text)
{
        H *h = h_new("tls", port);
        TransportOptions o = h_options(h);
        char ca_path[128];

        snprintf(ca_path, sizeof(ca_path), "%s/%s", work_dir, ca);
        h->hosts[0].host = (char *)host;
        o.ssl = true;
        o.ca_certs = ca[0] ? ca_path : "";
        o.insecure = insecure;
        o.verify_hostname = verify_hostname;
        o.reconnect_initial_ms = 5000;
        h_start(h, &o);
        ck_assert(RUN_UNTIL(h, h->ready + h->lost > 0, 10000));
        ck_assert_msg(h->ready == expect_ready, "%s ca '%s' insecure %d verify_hostname %d: %s",
                      host, ca, insecure, verify_hostname, h->ready ? "ready" : h->reason);
        if (!expect_ready) {
                ck_assert_int_eq(h->error, expect_error);
                ck_assert_msg(strstr(h->reason, expect_text), "reason: %s", h->reason);
        }
        h_finish(h);
}

START_TEST(test_tls)
{
        H *h = h_new("tls", tls_port);
        TransportOptions o = h_options(h);
        amqp_connection_state_t a = admin_open(private_port);
        char ca_path[128];
        uint64_t seq;

        admin_declare(a, h->queue);
        admin_publish(a, h->queue, plan, strlen(plan), "t1", NULL, SIG_VOID, NULL, 0);

        /* The round trip over TLS, verified against ca_certs. */
        snprintf(ca_path, sizeof(ca_path), "%s/ca.pem", work_dir);
        o.ssl = true;
        o.ca_certs = ca_path;
        h_start(h, &o);
        ck_assert(RUN_UNTIL(h, h->n_got == 1, 10000));
        ck_assert_str_eq((char *)h->got[0].body, plan);
        ck_assert_int_eq(transport_ack(h->t, h->got[0].tag), 0);
        ck_assert_int_eq(transport_publish(h->t, "", h->queue, "t1", "r", 1, &seq), 0);
        ck_assert(RUN_UNTIL(h, h->n_confirms == 1, 5000));
        ck_assert_int_eq(h->status[0], TRANSPORT_CONFIRM_ACK);
        h_finish(h);
        ck_assert_uint_eq(admin_count(a, finished_queue), 1); /* the result */
        admin_close(a);

        /* The reference's rules (spec §2.1). */
        /* The broker sends its CA along: a root the agent does not trust. */
        tls_try("127.0.0.1", "other-ca.pem", false, false, tls_port, false, -EKEYREJECTED,
                "SSL peer cert verification failed: self-signed certificate in certificate "
                "chain");
        /* insecure with ca_certs still verifies (CERT_OPTIONAL). */
        tls_try("127.0.0.1", "other-ca.pem", true, false, tls_port, false, -EKEYREJECTED,
                "self-signed certificate in certificate chain");
        tls_try("127.0.0.1", "", true, false, tls_port, true, 0, NULL);
        /* Not insecure and no ca_certs: the system store, which does not
         * know the test CA. */
        tls_try("127.0.0.1", "", false, false, tls_port, false, -EKEYREJECTED,
                "self-signed certificate in certificate chain");
        /* An empty CA file fails, as Python's load_verify_locations. */
        tls_try("127.0.0.1", "empty.pem", false, false, tls_port, false, -ENOENT,
                "cannot load CA certificates from");
        /* No name check unless asked; then against the name as written. */
        tls_try("localhost", "ca.pem", false, false, tls_port, true, 0, NULL);
        tls_try("127.0.0.1", "ca.pem", false, true, tls_port, true, 0, NULL);
        tls_try("localhost", "ca.pem", false, true, tls_port, false, -EKEYREJECTED,
                "hostname mismatch");
        /* TLS to the plain port. */
        tls_try("127.0.0.1", "ca.pem", false, false, private_port, false, -EPROTO, "SSL");
}
END_TEST

static Suite *broker_suite(void)
{
        Suite *s = suite_create("transport-broker");
        TCase *tc = tcase_create("shared");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_round_trip);
        tcase_add_test(tc, test_signature_and_properties);
        tcase_add_test(tc, test_reject);
        tcase_add_test(tc, test_stop_requeues_and_waits_for_confirms);
        tcase_add_test(tc, test_confirms);
        tcase_add_test(tc, test_large_and_oversize);
        tcase_add_test(tc, test_failover);
        tcase_add_test(tc, test_missing_queue);
        tcase_add_test(tc, test_declare_queue);
        tcase_add_test(tc, test_heartbeats_while_loop_busy);
        suite_add_tcase(s, tc);

        tc = tcase_create("private");
        tcase_set_timeout(tc, 90);
        tcase_add_test(tc, test_broker_down_and_back);
        tcase_add_test(tc, test_blocked_publishers);
        tcase_add_test(tc, test_frozen_broker);
        tcase_add_test(tc, test_tls);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        const char *env = getenv("BROKER_PORT");
        int ret;

        main_pid = getpid();
        signal(SIGTERM, on_signal);
        signal(SIGINT, on_signal);
        snprintf(work_dir, sizeof(work_dir), "/tmp/muranoagent-transport-XXXXXX");
        if (!mkdtemp(work_dir))
                return EXIT_FAILURE;
        snprintf(broker_dir, sizeof(broker_dir), "%s/broker", work_dir);
        if (broker("start", NULL, NULL) != 0) {
                fprintf(stderr, "cannot start a broker with tests/broker.sh\n");
                broker_dir[0] = '\0';
                return EXIT_FAILURE;
        }
        private_port = env_file_uint("BROKER_PORT");
        private_pid = (pid_t)env_file_uint("BROKER_PID");
        if (!private_port || private_pid <= 0 || make_certs() != 0 ||
            (add_tls_listener() != 0 && add_tls_listener() != 0)) {
                fprintf(stderr, "cannot set up the private broker (port %u, pid %d)\n",
                        private_port, (int)private_pid);
                stop_private_broker();
                return EXIT_FAILURE;
        }
        shared_port = env && env[0] ? (unsigned)strtoul(env, NULL, 10) : private_port;

        ret = check_run(broker_suite());
        stop_private_broker();
        return ret;
}
