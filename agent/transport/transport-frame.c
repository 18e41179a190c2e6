/* Frame assembly: the frames rabbitmq-c decodes, one at a time, become
 * whole deliveries (basic.deliver, the content header, then body frames up
 * to the announced size) and events (confirms, cancels, closes). A message
 * may arrive over many polls, a 2 MiB plan in 16 body frames, and nothing
 * here waits for the rest.
 *
 * Memory: a frame's decoded method, its properties and its body fragment
 * all live in rabbitmq-c's pool for the channel, which the I/O thread
 * recycles (amqp_maybe_release_buffers_on_channel) right after each frame.
 * So every byte kept is copied here before feed returns; TransportMessage
 * owns only malloc'ed memory. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/transport-internal.h"
#include "util/bigmem.h"

void transport_message_done(TransportMessage *m)
{
        free(m->body);
        free(m->exchange);
        free(m->routing_key);
        free(m->message_id);
        free(m->reply_to);
        free(m->signature);
        *m = (TransportMessage){0};
}

static char *bytes_strdup(amqp_bytes_t b)
{
        char *s = malloc(b.len + 1);

        if (!s)
                return NULL;
        if (b.len)
                memcpy(s, b.bytes, b.len);
        s[b.len] = '\0';
        return s;
}

void transport_assembler_init(TransportAssembler *a, uint16_t channel, uint64_t max_body)
{
        *a = (TransportAssembler){.channel = channel, .max_body = max_body};
}

void transport_assembler_reset(TransportAssembler *a)
{
        transport_message_done(&a->msg);
        a->state = TRANSPORT_ASSEMBLER_IDLE;
        a->body_size = a->body_got = 0;
}

void transport_assembler_take(TransportAssembler *a, TransportMessage *ret)
{
        *ret = a->msg;
        a->msg = (TransportMessage){0};
        a->state = TRANSPORT_ASSEMBLER_IDLE;
        a->body_size = a->body_got = 0;
}

static int protocol_error(TransportFrameInfo *ret, const char *what, uint16_t channel)
{
        snprintf(ret->text, sizeof(ret->text), "%s on channel %u", what, channel);
        return -EPROTO;
}

static int unexpected_method(TransportFrameInfo *ret, amqp_method_number_t id, uint16_t channel)
{
        const char *name = amqp_method_name(id);

        snprintf(ret->text, sizeof(ret->text), "unexpected %s on channel %u",
                 name ? name : "method", channel);
        return -EPROTO;
}

static void close_info(TransportFrameInfo *ret, TransportFrameKind kind, uint16_t code,
                       amqp_bytes_t text)
{
        ret->kind = kind;
        ret->reply_code = code;
        transport_text_copy(ret->text, sizeof(ret->text), text);
}

static int feed_connection_method(const amqp_method_t *m, TransportFrameInfo *ret)
{
        switch (m->id) {
        case AMQP_CONNECTION_CLOSE_METHOD: {
                const amqp_connection_close_t *c = m->decoded;
                close_info(ret, TRANSPORT_FRAME_CONNECTION_CLOSE, c->reply_code, c->reply_text);
                return 0;
        }
        case AMQP_CONNECTION_BLOCKED_METHOD: {
                const amqp_connection_blocked_t *b = m->decoded;
                ret->kind = TRANSPORT_FRAME_BLOCKED;
                transport_text_copy(ret->text, sizeof(ret->text), b->reason);
                return 0;
        }
        case AMQP_CONNECTION_UNBLOCKED_METHOD:
                ret->kind = TRANSPORT_FRAME_UNBLOCKED;
                return 0;
        case AMQP_CONNECTION_CLOSE_OK_METHOD:
                return 0;
        default:
                return unexpected_method(ret, m->id, 0);
        }
}

static int start_delivery(TransportAssembler *a, const amqp_basic_deliver_t *d)
{
        TransportMessage *msg = &a->msg;

        msg->amqp_tag = d->delivery_tag;
        msg->redelivered = d->redelivered;
        msg->exchange = bytes_strdup(d->exchange);
        msg->routing_key = bytes_strdup(d->routing_key);
        if (!msg->exchange || !msg->routing_key)
                return -ENOMEM;
        a->state = TRANSPORT_ASSEMBLER_HEADER;
        return 0;
}

/* A method on our channel between messages. */
static int feed_channel_method(TransportAssembler *a, const amqp_method_t *m,
                               TransportFrameInfo *ret)
{
        switch (m->id) {
        case AMQP_BASIC_DELIVER_METHOD:
                return start_delivery(a, m->decoded);
        case AMQP_BASIC_ACK_METHOD: {
                const amqp_basic_ack_t *ack = m->decoded;
                *ret = (TransportFrameInfo){.kind = TRANSPORT_FRAME_CONFIRM,
                                            .tag = ack->delivery_tag,
                                            .multiple = ack->multiple,
                                            .ack = true};
                return 0;
        }
        case AMQP_BASIC_NACK_METHOD: {
                const amqp_basic_nack_t *nack = m->decoded;
                *ret = (TransportFrameInfo){.kind = TRANSPORT_FRAME_CONFIRM,
                                            .tag = nack->delivery_tag,
                                            .multiple = nack->multiple,
                                            .ack = false};
                return 0;
        }
        case AMQP_BASIC_CANCEL_METHOD: {
                const amqp_basic_cancel_t *c = m->decoded;
                ret->kind = TRANSPORT_FRAME_CANCELLED;
                transport_text_copy(ret->text, sizeof(ret->text), c->consumer_tag);
                return 0;
        }
        case AMQP_BASIC_CANCEL_OK_METHOD:
                ret->kind = TRANSPORT_FRAME_CANCEL_OK;
                return 0;
        /* Replies to requests rabbitmq-c made as RPCs; harmless if one is
         * ever seen here. */
        case AMQP_CHANNEL_OPEN_OK_METHOD:
        case AMQP_CHANNEL_CLOSE_OK_METHOD:
        case AMQP_BASIC_QOS_OK_METHOD:
        case AMQP_BASIC_CONSUME_OK_METHOD:
        case AMQP_CONFIRM_SELECT_OK_METHOD:
        case AMQP_QUEUE_DECLARE_OK_METHOD:
                return 0;
        default:
                /* basic.return included: the agent never publishes with
                 * mandatory set, so none can come. */
                return unexpected_method(ret, m->id, a->channel);
        }
}

static int feed_header(TransportAssembler *a, const amqp_frame_t *f, TransportFrameInfo *ret)
{
        const amqp_basic_properties_t *p = f->payload.properties.decoded;
        TransportMessage *msg = &a->msg;
        amqp_bytes_t sig = {0};

        if (f->payload.properties.class_id != AMQP_BASIC_CLASS)
                return protocol_error(ret, "a content header of another class than basic",
                                      a->channel);

        msg->message_id = bytes_strdup(p->_flags & AMQP_BASIC_MESSAGE_ID_FLAG
                                               ? p->message_id
                                               : (amqp_bytes_t){.len = 0, .bytes = NULL});
        if (!msg->message_id)
                return -ENOMEM;
        if (p->_flags & AMQP_BASIC_REPLY_TO_FLAG) {
                msg->reply_to = bytes_strdup(p->reply_to);
                if (!msg->reply_to)
                        return -ENOMEM;
        }
        msg->signature_kind = transport_headers_signature(
                p->_flags & AMQP_BASIC_HEADERS_FLAG ? &p->headers : NULL, &sig);
        if (msg->signature_kind == TRANSPORT_SIGNATURE_BYTES) {
                /* One byte more, so that an empty signature is not NULL. */
                msg->signature = malloc(sig.len + 1);
                if (!msg->signature)
                        return -ENOMEM;
                if (sig.len)
                        memcpy(msg->signature, sig.bytes, sig.len);
                msg->signature_len = sig.len;
        }

        a->body_size = f->payload.properties.body_size;
        a->body_got = 0;
        msg->body_len = (size_t)a->body_size;
        /* A body larger than the agent would accept is read and dropped,
         * frame by frame, so that the owner can answer it with an error
         * instead of the agent holding gigabytes for it. */
        if (a->body_size <= a->max_body && a->body_size < SIZE_MAX)
                msg->body = big_malloc((size_t)a->body_size + 1);
        /* Memory that cannot be had for a body counts as oversize too: the
         * owner answers the message, and it does not come back forever. */
        if (msg->body) {
                msg->body[a->body_size] = '\0';
        } else {
                msg->oversize = true;
                if (a->body_size >= SIZE_MAX)
                        msg->body_len = SIZE_MAX;
        }

        if (a->body_size == 0) {
                a->state = TRANSPORT_ASSEMBLER_DONE;
                ret->kind = TRANSPORT_FRAME_DELIVERY;
        } else {
                a->state = TRANSPORT_ASSEMBLER_BODY;
        }
        return 0;
}

static int feed_body(TransportAssembler *a, const amqp_frame_t *f, TransportFrameInfo *ret)
{
        amqp_bytes_t frag = f->payload.body_fragment;

        if (frag.len > a->body_size - a->body_got)
                return protocol_error(ret, "more body than the content header announced",
                                      a->channel);
        if (a->msg.body && frag.len)
                memcpy(a->msg.body + a->body_got, frag.bytes, frag.len);
        a->body_got += frag.len;
        if (a->body_got == a->body_size) {
                a->state = TRANSPORT_ASSEMBLER_DONE;
                ret->kind = TRANSPORT_FRAME_DELIVERY;
        }
        return 0;
}

int transport_assembler_feed(TransportAssembler *a, const amqp_frame_t *f, TransportFrameInfo *ret)
{
        *ret = (TransportFrameInfo){.kind = TRANSPORT_FRAME_NONE};

        if (a->state == TRANSPORT_ASSEMBLER_DONE)
                return protocol_error(ret, "a frame before the last message was taken", a->channel);
        if (f->frame_type == AMQP_FRAME_HEARTBEAT)
                return 0;
        if (f->channel == 0) {
                if (f->frame_type != AMQP_FRAME_METHOD)
                        return protocol_error(ret, "content", 0);
                return feed_connection_method(&f->payload.method, ret);
        }
        if (f->channel != a->channel)
                return protocol_error(ret, "a frame", f->channel);

        /* The broker may close the channel in the middle of a message; the
         * message is then lost with the channel, and redelivered. */
        if (f->frame_type == AMQP_FRAME_METHOD &&
            f->payload.method.id == AMQP_CHANNEL_CLOSE_METHOD) {
                const amqp_channel_close_t *c = f->payload.method.decoded;
                transport_assembler_reset(a);
                close_info(ret, TRANSPORT_FRAME_CHANNEL_CLOSE, c->reply_code, c->reply_text);
                return 0;
        }

        switch (a->state) {
        case TRANSPORT_ASSEMBLER_IDLE:
                if (f->frame_type != AMQP_FRAME_METHOD)
                        return protocol_error(ret, "content without basic.deliver", a->channel);
                return feed_channel_method(a, &f->payload.method, ret);
        case TRANSPORT_ASSEMBLER_HEADER:
                if (f->frame_type != AMQP_FRAME_HEADER)
                        return protocol_error(ret, "no content header after basic.deliver",
                                              a->channel);
                return feed_header(a, f, ret);
        case TRANSPORT_ASSEMBLER_BODY:
                if (f->frame_type != AMQP_FRAME_BODY)
                        return protocol_error(ret, "a message cut short", a->channel);
                return feed_body(a, f, ret);
        case TRANSPORT_ASSEMBLER_DONE:
                break;
        }
        return protocol_error(ret, "a frame in an impossible state", a->channel);
}
