/* The transport's translations to and from AMQP: the properties of a
 * published result, the signature header of a delivery, broker names, and
 * rabbitmq-c's and the broker's error codes as negative errno values and
 * sentences. rabbitmq-c's codes are translated here and nowhere else.
 *
 * Memory: amqp_bytes_t values in a decoded frame, a table or an RPC reply
 * point into rabbitmq-c's pools; everything here reads them immediately and
 * copies what it returns, except transport_headers_signature(), whose result
 * points into the table it was given. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "transport/transport-internal.h"

void transport_props_publish(amqp_basic_properties_t *ret, const char *message_id)
{
        /* kombu, for a str body and no serializer, sends exactly these six
         * (spec §2.4); an empty headers table is sent, not left out. */
        *ret = (amqp_basic_properties_t){
                ._flags = AMQP_BASIC_CONTENT_TYPE_FLAG | AMQP_BASIC_CONTENT_ENCODING_FLAG |
                          AMQP_BASIC_HEADERS_FLAG | AMQP_BASIC_DELIVERY_MODE_FLAG |
                          AMQP_BASIC_PRIORITY_FLAG | AMQP_BASIC_MESSAGE_ID_FLAG,
                .content_type = amqp_cstring_bytes("text/plain"),
                .content_encoding = amqp_cstring_bytes("utf-8"),
                .headers = {.num_entries = 0, .entries = NULL},
                .delivery_mode = AMQP_DELIVERY_PERSISTENT,
                .priority = 0,
                .message_id = amqp_cstring_bytes(message_id ? message_id : ""),
        };
}

TransportSignature transport_headers_signature(const amqp_table_t *headers, amqp_bytes_t *ret_bytes)
{
        static const char key[] = "signature";

        if (!headers)
                return TRANSPORT_SIGNATURE_ABSENT;
        for (int i = 0; i < headers->num_entries; i++) {
                const amqp_table_entry_t *e = &headers->entries[i];

                if (e->key.len != sizeof(key) - 1 || memcmp(e->key.bytes, key, e->key.len) != 0)
                        continue;
                switch (e->value.kind) {
                case AMQP_FIELD_KIND_VOID:
                        return TRANSPORT_SIGNATURE_VOID;
                /* 'S' (which rabbitmq-c names UTF8 but does not check) is
                 * what py-amqp sends for bytes; 'x' is the byte array type. */
                case AMQP_FIELD_KIND_UTF8:
                case AMQP_FIELD_KIND_BYTES:
                        *ret_bytes = e->value.value.bytes;
                        return TRANSPORT_SIGNATURE_BYTES;
                default:
                        return TRANSPORT_SIGNATURE_OTHER;
                }
        }
        return TRANSPORT_SIGNATURE_ABSENT;
}

const char *transport_connect_host(const char *host)
{
        /* kombu's pyamqp transport connects to 127.0.0.1 for "localhost",
         * which also keeps an IPv6-first resolver from trying ::1. */
        return strcmp(host, "localhost") == 0 ? "127.0.0.1" : host;
}

char *transport_broker_name(const char *host, unsigned port)
{
        char *s;
        int r = strchr(host, ':') ? asprintf(&s, "[%s]:%u", host, port)
                                  : asprintf(&s, "%s:%u", host, port);
        return r < 0 ? NULL : s;
}

int transport_status_errno(int status)
{
        switch (status) {
        case AMQP_STATUS_OK:
                return 0;
        case AMQP_STATUS_NO_MEMORY:
                return -ENOMEM;
        case AMQP_STATUS_BAD_AMQP_DATA:
        case AMQP_STATUS_UNKNOWN_CLASS:
        case AMQP_STATUS_UNKNOWN_METHOD:
        case AMQP_STATUS_INCOMPATIBLE_AMQP_VERSION:
        case AMQP_STATUS_WRONG_METHOD:
        case AMQP_STATUS_UNEXPECTED_STATE:
        case AMQP_STATUS_SSL_ERROR:
        case AMQP_STATUS_SSL_CONNECTION_FAILED:
                return -EPROTO;
        case AMQP_STATUS_HOSTNAME_RESOLUTION_FAILED:
                return -EHOSTUNREACH;
        case AMQP_STATUS_CONNECTION_CLOSED:
        case AMQP_STATUS_SOCKET_CLOSED:
                return -ECONNRESET;
        case AMQP_STATUS_SOCKET_ERROR:
                return -ECONNREFUSED;
        case AMQP_STATUS_TIMEOUT:
        case AMQP_STATUS_HEARTBEAT_TIMEOUT:
                return -ETIMEDOUT;
        case AMQP_STATUS_INVALID_PARAMETER:
        case AMQP_STATUS_TABLE_TOO_BIG:
        case AMQP_STATUS_BAD_URL:
                return -EINVAL;
        case AMQP_STATUS_SOCKET_INUSE:
                return -EBUSY;
        case AMQP_STATUS_UNSUPPORTED:
                return -EOPNOTSUPP;
        case AMQP_STATUS_SSL_HOSTNAME_VERIFY_FAILED:
        case AMQP_STATUS_SSL_PEER_VERIFY_FAILED:
                return -EKEYREJECTED;
        default:
                return -EIO;
        }
}

int transport_reply_code_errno(uint16_t code)
{
        switch (code) {
        case AMQP_REPLY_SUCCESS:
                return 0;
        case AMQP_CONTENT_TOO_LARGE:
                return -EMSGSIZE;
        case AMQP_CONNECTION_FORCED:
                return -ECONNRESET;
        case AMQP_ACCESS_REFUSED:
        case AMQP_NOT_ALLOWED:
                return -EACCES;
        case AMQP_NOT_FOUND:
                return -ENOENT;
        case AMQP_RESOURCE_LOCKED:
                return -EBUSY;
        case AMQP_INVALID_PATH:
        case AMQP_PRECONDITION_FAILED:
                return -EINVAL;
        case AMQP_RESOURCE_ERROR:
                return -EAGAIN;
        case AMQP_NOT_IMPLEMENTED:
                return -EOPNOTSUPP;
        case AMQP_FRAME_ERROR:
        case AMQP_SYNTAX_ERROR:
        case AMQP_COMMAND_INVALID:
        case AMQP_CHANNEL_ERROR:
        case AMQP_UNEXPECTED_FRAME:
                return -EPROTO;
        default:
                return -EIO;
        }
}

void transport_text_copy(char *dst, size_t size, amqp_bytes_t b)
{
        size_t n = b.len < size - 1 ? b.len : size - 1;
        const unsigned char *s = b.bytes;

        /* The text goes into log lines: no control characters. */
        for (size_t i = 0; i < n; i++)
                dst[i] = s[i] < 0x20 || s[i] == 0x7f ? '?' : (char)s[i];
        dst[n] = '\0';
}

char *transport_reply_describe(amqp_rpc_reply_t r, int *ret_error)
{
        char text[256];
        char *s = NULL;
        uint16_t code = 0;

        switch (r.reply_type) {
        case AMQP_RESPONSE_NORMAL:
                *ret_error = 0;
                return strdup("no error");
        case AMQP_RESPONSE_NONE:
                *ret_error = -EPROTO;
                return strdup("no reply from the broker");
        case AMQP_RESPONSE_LIBRARY_EXCEPTION:
                *ret_error = transport_status_errno(r.library_error);
                return strdup(amqp_error_string2(r.library_error));
        case AMQP_RESPONSE_SERVER_EXCEPTION:
                break;
        }

        if (r.reply.id == AMQP_CONNECTION_CLOSE_METHOD && r.reply.decoded) {
                const amqp_connection_close_t *m = r.reply.decoded;
                code = m->reply_code;
                transport_text_copy(text, sizeof(text), m->reply_text);
        } else if (r.reply.id == AMQP_CHANNEL_CLOSE_METHOD && r.reply.decoded) {
                const amqp_channel_close_t *m = r.reply.decoded;
                code = m->reply_code;
                transport_text_copy(text, sizeof(text), m->reply_text);
        } else {
                *ret_error = -EPROTO;
                if (asprintf(&s, "unexpected method 0x%08x from the broker", r.reply.id) < 0)
                        return NULL;
                return s;
        }
        *ret_error = transport_reply_code_errno(code);
        if (*ret_error == 0)
                *ret_error = -ECONNRESET;
        /* RabbitMQ's texts start with the code's name ("NOT_FOUND - ..."). */
        if (asprintf(&s, "%s (reply code %u)", text[0] ? text : "no reason given", code) < 0)
                return NULL;
        return s;
}
