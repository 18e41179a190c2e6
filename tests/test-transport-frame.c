/* Unit tests of the transport's frame assembly (transport-frame.c), fed
 * with synthetic frames as rabbitmq-c decodes them: whole deliveries with
 * every property the agent reads, bodies split over frames (2 MiB in the
 * broker's frame size), oversize bodies, confirms, cancels, closes, and
 * the protocol errors that end a connection. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport/transport-internal.h"
#include "util/macro.h"
#include "test-lib.h"

/* ---- frame assembly ---- */

static amqp_frame_t method_frame(uint16_t channel, amqp_method_number_t id, void *decoded)
{
        return (amqp_frame_t){.frame_type = AMQP_FRAME_METHOD,
                              .channel = channel,
                              .payload.method = {.id = id, .decoded = decoded}};
}

static amqp_frame_t header_frame(uint16_t channel, uint64_t size, amqp_basic_properties_t *p)
{
        return (amqp_frame_t){.frame_type = AMQP_FRAME_HEADER,
                              .channel = channel,
                              .payload.properties = {.class_id = AMQP_BASIC_CLASS,
                                                     .body_size = size,
                                                     .decoded = p}};
}

static amqp_frame_t body_frame(uint16_t channel, void *bytes, size_t len)
{
        return (amqp_frame_t){.frame_type = AMQP_FRAME_BODY,
                              .channel = channel,
                              .payload.body_fragment = {.len = len, .bytes = bytes}};
}

/* Feed f, which must be taken: what it brought. */
static TransportFrameInfo feed_info(TransportAssembler *a, amqp_frame_t f)
{
        TransportFrameInfo info;
        ck_assert_int_eq(transport_assembler_feed(a, &f, &info), 0);
        return info;
}

static TransportFrameKind feed_ok(TransportAssembler *a, amqp_frame_t f)
{
        return feed_info(a, f).kind;
}

static int feed_err(TransportAssembler *a, amqp_frame_t f, const char *text)
{
        TransportFrameInfo info;
        int r = transport_assembler_feed(a, &f, &info);
        ck_assert_str_eq(info.text, text);
        return r;
}

START_TEST(test_assemble_delivery)
{
        TransportAssembler a;
        TransportMessage m;
        char exchange[] = "", rk[] = "e1-h2", mid[] = "5b1f0c", rt[] = "replies";
        uint8_t sig[4] = {0xff, 0x00, 0xc3, 0x28}; /* not UTF-8 */
        char part1[] = "{\"Body\": ", part2[] = "\"return\"}";
        amqp_basic_deliver_t d = {.consumer_tag = amqp_cstring_bytes("amq.ctag-1"),
                                  .delivery_tag = 7,
                                  .redelivered = 1,
                                  .exchange = amqp_cstring_bytes(exchange),
                                  .routing_key = amqp_cstring_bytes(rk)};
        amqp_table_entry_t h = {
                .key = amqp_cstring_bytes("signature"),
                .value = {.kind = AMQP_FIELD_KIND_UTF8, .value.bytes = {sizeof(sig), sig}}};
        amqp_basic_properties_t p = {._flags = AMQP_BASIC_MESSAGE_ID_FLAG |
                                               AMQP_BASIC_REPLY_TO_FLAG | AMQP_BASIC_HEADERS_FLAG,
                                     .message_id = amqp_cstring_bytes(mid),
                                     .reply_to = amqp_cstring_bytes(rt),
                                     .headers = {.num_entries = 1, .entries = &h}};
        size_t len = strlen(part1) + strlen(part2);

        transport_assembler_init(&a, 1, 1000);
        ck_assert_int_eq(feed_ok(&a, method_frame(1, AMQP_BASIC_DELIVER_METHOD, &d)),
                         TRANSPORT_FRAME_NONE);
        ck_assert_int_eq(feed_ok(&a, header_frame(1, len, &p)), TRANSPORT_FRAME_NONE);
        /* The library recycles its memory after each frame: scribble over
         * what was fed to prove that everything was copied. */
        memset(mid, 'X', strlen(mid));
        memset(rt, 'X', strlen(rt));
        memset(rk, 'X', strlen(rk));
        sig[0] = 0;
        /* A heartbeat and a channel-0 frame may come between body frames. */
        ck_assert_int_eq(feed_ok(&a, body_frame(1, part1, strlen(part1))), TRANSPORT_FRAME_NONE);
        ck_assert_int_eq(feed_ok(&a, (amqp_frame_t){.frame_type = AMQP_FRAME_HEARTBEAT}),
                         TRANSPORT_FRAME_NONE);
        memset(part1, 'X', strlen(part1));
        ck_assert_int_eq(feed_ok(&a, body_frame(1, part2, strlen(part2))),
                         TRANSPORT_FRAME_DELIVERY);
        ck_assert_int_eq(a.state, TRANSPORT_ASSEMBLER_DONE);

        transport_assembler_take(&a, &m);
        ck_assert_int_eq(a.state, TRANSPORT_ASSEMBLER_IDLE);
        ck_assert_uint_eq(m.amqp_tag, 7);
        ck_assert(m.redelivered);
        ck_assert(!m.oversize);
        ck_assert_uint_eq(m.body_len, len);
        ck_assert_str_eq((char *)m.body, "{\"Body\": \"return\"}");
        ck_assert_str_eq(m.exchange, "");
        ck_assert_str_eq(m.routing_key, "e1-h2");
        ck_assert_str_eq(m.message_id, "5b1f0c");
        ck_assert_str_eq(m.reply_to, "replies");
        ck_assert_int_eq(m.signature_kind, TRANSPORT_SIGNATURE_BYTES);
        ck_assert_uint_eq(m.signature_len, 4);
        ck_assert_mem_eq(m.signature, "\xff\x00\xc3\x28", 4);
        transport_message_done(&m);
        transport_assembler_reset(&a);
}
END_TEST

START_TEST(test_assemble_empty_and_absent)
{
        TransportAssembler a;
        TransportMessage m;
        amqp_basic_deliver_t d = {.delivery_tag = 1,
                                  .exchange = amqp_cstring_bytes("x"),
                                  .routing_key = amqp_cstring_bytes("q")};
        amqp_basic_properties_t p = {._flags = 0};

        transport_assembler_init(&a, 1, 1000);
        ck_assert_int_eq(feed_ok(&a, method_frame(1, AMQP_BASIC_DELIVER_METHOD, &d)),
                         TRANSPORT_FRAME_NONE);
        /* No body frames at all for an empty body. */
        ck_assert_int_eq(feed_ok(&a, header_frame(1, 0, &p)), TRANSPORT_FRAME_DELIVERY);
        transport_assembler_take(&a, &m);
        ck_assert_ptr_nonnull(m.body);
        ck_assert_uint_eq(m.body_len, 0);
        ck_assert_str_eq((char *)m.body, "");
        ck_assert(!m.redelivered);
        ck_assert_str_eq(m.message_id, ""); /* absent -> "" as the reference */
        ck_assert_ptr_null(m.reply_to);     /* absent -> None */
        ck_assert_int_eq(m.signature_kind, TRANSPORT_SIGNATURE_ABSENT);
        ck_assert_ptr_null(m.signature);
        transport_message_done(&m);
}
END_TEST

START_TEST(test_assemble_oversize)
{
        TransportAssembler a;
        TransportMessage m;
        char data[15] = "abcdefghijklmn";
        amqp_basic_deliver_t d = {.delivery_tag = 3};
        amqp_basic_properties_t p = {._flags = 0};

        transport_assembler_init(&a, 1, 10);
        feed_ok(&a, method_frame(1, AMQP_BASIC_DELIVER_METHOD, &d));
        ck_assert_int_eq(feed_ok(&a, header_frame(1, 20, &p)), TRANSPORT_FRAME_NONE);
        ck_assert_int_eq(feed_ok(&a, body_frame(1, data, 15)), TRANSPORT_FRAME_NONE);
        ck_assert_int_eq(feed_ok(&a, body_frame(1, data, 5)), TRANSPORT_FRAME_DELIVERY);
        transport_assembler_take(&a, &m);
        ck_assert(m.oversize);
        ck_assert_ptr_null(m.body);
        ck_assert_uint_eq(m.body_len, 20);
        ck_assert_uint_eq(m.amqp_tag, 3);
        transport_message_done(&m);

        /* Exactly at the limit is kept. */
        feed_ok(&a, method_frame(1, AMQP_BASIC_DELIVER_METHOD, &d));
        feed_ok(&a, header_frame(1, 10, &p));
        ck_assert_int_eq(feed_ok(&a, body_frame(1, data, 10)), TRANSPORT_FRAME_DELIVERY);
        transport_assembler_take(&a, &m);
        ck_assert(!m.oversize);
        ck_assert_str_eq((char *)m.body, "abcdefghij");
        transport_message_done(&m);
}
END_TEST

START_TEST(test_assemble_large)
{
        /* A 2 MiB plan in frames of the negotiated size, as the broker
         * sends it. */
        const size_t size = 2 * 1024 * 1024, chunk = TRANSPORT_FRAME_MAX - 8;
        TransportAssembler a;
        TransportMessage m;
        amqp_basic_deliver_t d = {.delivery_tag = 1};
        amqp_basic_properties_t p = {._flags = 0};
        uint8_t *src = malloc(size);
        size_t off = 0, frames = 0;

        for (size_t i = 0; i < size; i++)
                src[i] = (uint8_t)(i * 7 + (i >> 13));
        transport_assembler_init(&a, 1, 64 * 1024 * 1024);
        feed_ok(&a, method_frame(1, AMQP_BASIC_DELIVER_METHOD, &d));
        feed_ok(&a, header_frame(1, size, &p));
        while (off < size) {
                size_t n = size - off < chunk ? size - off : chunk;
                TransportFrameKind k = feed_ok(&a, body_frame(1, src + off, n));
                off += n;
                frames++;
                ck_assert_int_eq(k, off == size ? TRANSPORT_FRAME_DELIVERY : TRANSPORT_FRAME_NONE);
        }
        ck_assert_uint_eq(frames, 17);
        transport_assembler_take(&a, &m);
        ck_assert_uint_eq(m.body_len, size);
        ck_assert_mem_eq(m.body, src, size);
        ck_assert_uint_eq(m.body[size], 0);
        transport_message_done(&m);
        free(src);
}
END_TEST

START_TEST(test_assemble_events)
{
        TransportAssembler a;
        TransportFrameInfo info;
        amqp_basic_ack_t ack = {.delivery_tag = 12, .multiple = 1};
        amqp_basic_nack_t nack = {.delivery_tag = 13, .multiple = 0, .requeue = 0};
        amqp_basic_cancel_t cancel = {.consumer_tag = amqp_cstring_bytes("amq.ctag-9")};
        amqp_connection_close_t cclose = {
                .reply_code = 320,
                .reply_text = amqp_cstring_bytes("CONNECTION_FORCED - broker forced connection "
                                                 "closure with reason 'shutdown'")};
        amqp_connection_blocked_t blocked = {.reason = amqp_cstring_bytes("low on memory")};

        transport_assembler_init(&a, 1, 1000);

        info = feed_info(&a, method_frame(1, AMQP_BASIC_ACK_METHOD, &ack));
        ck_assert_int_eq(info.kind, TRANSPORT_FRAME_CONFIRM);
        ck_assert_uint_eq(info.tag, 12);
        ck_assert(info.multiple);
        ck_assert(info.ack);

        info = feed_info(&a, method_frame(1, AMQP_BASIC_NACK_METHOD, &nack));
        ck_assert_int_eq(info.kind, TRANSPORT_FRAME_CONFIRM);
        ck_assert_uint_eq(info.tag, 13);
        ck_assert(!info.multiple);
        ck_assert(!info.ack);

        info = feed_info(&a, method_frame(1, AMQP_BASIC_CANCEL_METHOD, &cancel));
        ck_assert_int_eq(info.kind, TRANSPORT_FRAME_CANCELLED);
        ck_assert_str_eq(info.text, "amq.ctag-9");

        info = feed_info(&a, method_frame(1, AMQP_BASIC_CANCEL_OK_METHOD, NULL));
        ck_assert_int_eq(info.kind, TRANSPORT_FRAME_CANCEL_OK);

        info = feed_info(&a, method_frame(0, AMQP_CONNECTION_CLOSE_METHOD, &cclose));
        ck_assert_int_eq(info.kind, TRANSPORT_FRAME_CONNECTION_CLOSE);
        ck_assert_uint_eq(info.reply_code, 320);
        ck_assert_str_eq(info.text, "CONNECTION_FORCED - broker forced connection closure with "
                                    "reason 'shutdown'");

        info = feed_info(&a, method_frame(0, AMQP_CONNECTION_BLOCKED_METHOD, &blocked));
        ck_assert_int_eq(info.kind, TRANSPORT_FRAME_BLOCKED);
        ck_assert_str_eq(info.text, "low on memory");
        info = feed_info(&a, method_frame(0, AMQP_CONNECTION_UNBLOCKED_METHOD, NULL));
        ck_assert_int_eq(info.kind, TRANSPORT_FRAME_UNBLOCKED);
}
END_TEST

START_TEST(test_assemble_channel_close_midway)
{
        TransportAssembler a;
        TransportFrameInfo info;
        char data[] = "abc";
        amqp_basic_deliver_t d = {.delivery_tag = 1};
        amqp_basic_properties_t p = {._flags = 0};
        amqp_channel_close_t c = {
                .reply_code = 406,
                .reply_text = amqp_cstring_bytes("PRECONDITION_FAILED - unknown delivery tag 9")};
        amqp_frame_t f = method_frame(1, AMQP_CHANNEL_CLOSE_METHOD, &c);

        transport_assembler_init(&a, 1, 1000);
        feed_ok(&a, method_frame(1, AMQP_BASIC_DELIVER_METHOD, &d));
        feed_ok(&a, header_frame(1, 10, &p));
        feed_ok(&a, body_frame(1, data, 3));
        ck_assert_int_eq(transport_assembler_feed(&a, &f, &info), 0);
        ck_assert_int_eq(info.kind, TRANSPORT_FRAME_CHANNEL_CLOSE);
        ck_assert_uint_eq(info.reply_code, 406);
        ck_assert_str_eq(info.text, "PRECONDITION_FAILED - unknown delivery tag 9");
        ck_assert_int_eq(a.state, TRANSPORT_ASSEMBLER_IDLE); /* the half message is gone */
        ck_assert_ptr_null(a.msg.body);
}
END_TEST

START_TEST(test_assemble_protocol_errors)
{
        TransportAssembler a;
        char data[] = "abcdef";
        amqp_basic_deliver_t d = {.delivery_tag = 1};
        amqp_basic_properties_t p = {._flags = 0};
        amqp_basic_qos_ok_t qos_ok = {.dummy = 0};

        transport_assembler_init(&a, 1, 1000);
        ck_assert_int_eq(feed_err(&a, header_frame(1, 3, &p),
                                  "content without basic.deliver on "
                                  "channel 1"),
                         -EPROTO);
        ck_assert_int_eq(feed_err(&a, body_frame(1, data, 3),
                                  "content without basic.deliver on "
                                  "channel 1"),
                         -EPROTO);
        ck_assert_int_eq(feed_err(&a, body_frame(0, data, 3), "content on channel 0"), -EPROTO);
        ck_assert_int_eq(feed_err(&a, method_frame(2, AMQP_BASIC_DELIVER_METHOD, &d),
                                  "a frame on channel 2"),
                         -EPROTO);
        ck_assert_int_eq(feed_err(&a, method_frame(1, AMQP_BASIC_RETURN_METHOD, NULL),
                                  "unexpected AMQP_BASIC_RETURN_METHOD on channel 1"),
                         -EPROTO);
        ck_assert_int_eq(feed_err(&a, method_frame(0, AMQP_CHANNEL_OPEN_METHOD, NULL),
                                  "unexpected AMQP_CHANNEL_OPEN_METHOD on channel 0"),
                         -EPROTO);
        /* Replies to RPCs pass quietly. */
        ck_assert_int_eq(feed_ok(&a, method_frame(1, AMQP_BASIC_QOS_OK_METHOD, &qos_ok)),
                         TRANSPORT_FRAME_NONE);

        feed_ok(&a, method_frame(1, AMQP_BASIC_DELIVER_METHOD, &d));
        ck_assert_int_eq(feed_err(&a, body_frame(1, data, 3),
                                  "no content header after basic.deliver on channel 1"),
                         -EPROTO);
        transport_assembler_reset(&a);

        feed_ok(&a, method_frame(1, AMQP_BASIC_DELIVER_METHOD, &d));
        feed_ok(&a, header_frame(1, 4, &p));
        ck_assert_int_eq(feed_err(&a, body_frame(1, data, 5),
                                  "more body than the content header announced on channel 1"),
                         -EPROTO);
        ck_assert_int_eq(feed_err(&a, method_frame(1, AMQP_BASIC_DELIVER_METHOD, &d),
                                  "a message cut short on channel 1"),
                         -EPROTO);
        ck_assert_int_eq(feed_ok(&a, body_frame(1, data, 4)), TRANSPORT_FRAME_DELIVERY);
        /* The owner must take the message before the next frame. */
        ck_assert_int_eq(feed_err(&a, method_frame(1, AMQP_BASIC_DELIVER_METHOD, &d),
                                  "a frame before the last message was taken on channel 1"),
                         -EPROTO);
        transport_assembler_reset(&a);
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_test(tc, test_assemble_delivery);
        tcase_add_test(tc, test_assemble_empty_and_absent);
        tcase_add_test(tc, test_assemble_oversize);
        tcase_add_test(tc, test_assemble_large);
        tcase_add_test(tc, test_assemble_events);
        tcase_add_test(tc, test_assemble_channel_close_midway);
        tcase_add_test(tc, test_assemble_protocol_errors);
}

int main(void)
{
        return check_main_one("transport-frame", "assemble", NULL, NULL, 60, add_tests);
}
