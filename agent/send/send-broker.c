/* Blocking rabbitmq-c for muranoagent-send (see send-broker.h).
 *
 * rabbitmq-c's memory rules, once: everything a reply or a frame points to
 * lives in the connection's buffer pools until amqp_maybe_release_buffers();
 * an envelope owns its copies until amqp_destroy_envelope(). We copy what we
 * hand out, so both are released before returning.
 *
 * One channel does everything. The caller publishes before it starts
 * consuming (the queues are declared first, so a result that comes early
 * waits in its queue), which keeps publish confirms and deliveries from
 * interleaving: rabbitmq-c 0.11 has no public way to wait for a frame of one
 * channel while keeping the others' for later. */
#include "send/send-broker.h"

#include <amqp.h>
#include <amqp_ssl_socket.h>
#include <amqp_tcp_socket.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/macro.h"
#include "util/strbuf.h"

#define CHANNEL 1

/* The engine's queue arguments (murano/common/messaging/mqclient.py). */
#define QUEUE_TTL_MS 86400000

#define RPC_TIMEOUT_S 30

/* Where Debian keeps the system's trusted certificates, used for --ssl
 * without --ca: rabbitmq-c does not load OpenSSL's default paths. */
#define SYSTEM_CA_FILE "/etc/ssl/certs/ca-certificates.crt"

struct SendBroker {
        amqp_connection_state_t conn;
        bool open; /* logged in and not closed by either side */
        uint64_t next_publish_tag;
        char *follow_queue; /* send_broker_follow()'s queue, NULL when none */
        char *follow_tag;   /* its consumer's tag */
};

int64_t send_broker_now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int fail(char **ret_error, int err, const char *fmt, ...) _printf_(3, 4);
static int fail(char **ret_error, int err, const char *fmt, ...)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        va_list ap;

        if (ret_error) {
                va_start(ap, fmt);
                if (strbuf_vprintf(&b, fmt, ap) >= 0) {
                        free(*ret_error);
                        *ret_error = NULL;
                        if (strbuf_steal(&b, ret_error) < 0)
                                *ret_error = NULL;
                }
                va_end(ap);
        }
        return err;
}

/* Turn a failed RPC reply into -errno and a message. A server-side close is
 * answered with close-ok, as the protocol asks. */
static int reply_error(SendBroker *b, amqp_rpc_reply_t r, const char *what, char **ret_error)
{
        switch (r.reply_type) {
        case AMQP_RESPONSE_NORMAL:
                return 0;
        case AMQP_RESPONSE_NONE:
                b->open = false;
                return fail(ret_error, -EPROTO, "%s: no reply from the broker", what);
        case AMQP_RESPONSE_LIBRARY_EXCEPTION:
                b->open = false;
                return fail(ret_error, r.library_error == AMQP_STATUS_TIMEOUT ? -ETIMEDOUT : -EIO,
                            "%s: %s", what, amqp_error_string2(r.library_error));
        case AMQP_RESPONSE_SERVER_EXCEPTION:
                if (r.reply.id == AMQP_CONNECTION_CLOSE_METHOD) {
                        const amqp_connection_close_t *m = r.reply.decoded;
                        amqp_connection_close_ok_t ok = {0};

                        amqp_send_method(b->conn, 0, AMQP_CONNECTION_CLOSE_OK_METHOD, &ok);
                        b->open = false;
                        return fail(ret_error, -EPROTO,
                                    "%s: the broker closed the connection: %u %.*s", what,
                                    m->reply_code, (int)m->reply_text.len,
                                    (const char *)m->reply_text.bytes);
                }
                if (r.reply.id == AMQP_CHANNEL_CLOSE_METHOD) {
                        const amqp_channel_close_t *m = r.reply.decoded;
                        /* Our channels are fixed; a closed one ends the
                         * session, and the caller starts a new connection. */
                        b->open = false;
                        return fail(ret_error, -EPROTO,
                                    "%s: the broker closed the channel: %u %.*s", what,
                                    m->reply_code, (int)m->reply_text.len,
                                    (const char *)m->reply_text.bytes);
                }
                b->open = false;
                return fail(ret_error, -EPROTO, "%s: unexpected method 0x%08x from the broker",
                            what, r.reply.id);
        }
        return fail(ret_error, -EPROTO, "%s: unknown reply", what);
}

static int check_reply(SendBroker *b, const char *what, char **ret_error)
{
        int r = reply_error(b, amqp_get_rpc_reply(b->conn), what, ret_error);

        amqp_maybe_release_buffers(b->conn);
        return r;
}

void send_broker_free(SendBroker *b)
{
        if (!b)
                return;
        if (b->conn) {
                if (b->open)
                        amqp_connection_close(b->conn, AMQP_REPLY_SUCCESS);
                amqp_destroy_connection(b->conn);
        }
        free(b->follow_queue);
        free(b->follow_tag);
        free(b);
}
int send_broker_connect(const SendBrokerConfig *cfg, SendBroker **ret, char **ret_error)
{
        _cleanup_(send_broker_freep) SendBroker *b = calloc(1, sizeof(*b));
        struct timeval tv = {.tv_sec = RPC_TIMEOUT_S};
        const char *host = cfg->host ? cfg->host : "localhost";
        int port = cfg->port ? cfg->port : 5672;
        amqp_socket_t *sock;
        int status;

        if (!b || !(b->conn = amqp_new_connection()))
                return -ENOMEM;
        sock = cfg->ssl ? amqp_ssl_socket_new(b->conn) : amqp_tcp_socket_new(b->conn);
        if (!sock)
                return fail(ret_error, -ENOMEM, "cannot create a %s socket",
                            cfg->ssl ? "TLS" : "TCP");
        if (cfg->ssl) {
                const char *ca = cfg->ca_file;

                if (!ca && !cfg->insecure && access(SYSTEM_CA_FILE, R_OK) == 0)
                        ca = SYSTEM_CA_FILE;
                if (ca && amqp_ssl_socket_set_cacert(sock, ca) != AMQP_STATUS_OK)
                        return fail(ret_error, -EINVAL, "cannot load CA certificates from %s", ca);
                amqp_ssl_socket_set_verify_peer(sock, !cfg->insecure);
                amqp_ssl_socket_set_verify_hostname(sock, !cfg->insecure && cfg->verify_hostname);
        }
        status = amqp_socket_open_noblock(sock, host, port, &tv);
        if (status != AMQP_STATUS_OK)
                return fail(ret_error, -ECONNREFUSED, "cannot connect to %s:%d: %s", host, port,
                            amqp_error_string2(status));
        b->open = true;
        amqp_set_rpc_timeout(b->conn, &tv);
        status = reply_error(b,
                             amqp_login(b->conn, cfg->vhost ? cfg->vhost : "/", 0,
                                        AMQP_DEFAULT_FRAME_SIZE, cfg->heartbeat,
                                        AMQP_SASL_METHOD_PLAIN, cfg->user ? cfg->user : "guest",
                                        cfg->password ? cfg->password : "guest"),
                             "login", ret_error);
        if (status < 0)
                return status;
        amqp_channel_open(b->conn, CHANNEL);
        status = check_reply(b, "channel.open", ret_error);
        if (status < 0)
                return status;
        amqp_confirm_select(b->conn, CHANNEL);
        status = check_reply(b, "confirm.select", ret_error);
        if (status < 0)
                return status;
        b->next_publish_tag = 1;
        *ret = TAKE_PTR(b);
        return 0;
}

int send_broker_declare(SendBroker *b, const char *queue, char **ret_error)
{
        amqp_table_entry_t args[2] = {
                {.key = amqp_cstring_bytes("x-ha-policy"),
                 .value = {.kind = AMQP_FIELD_KIND_UTF8, .value.bytes = amqp_cstring_bytes("all")}},
                {.key = amqp_cstring_bytes("x-expires"),
                 .value = {.kind = AMQP_FIELD_KIND_I32, .value.i32 = QUEUE_TTL_MS}},
        };
        amqp_table_t table = {.num_entries = 2, .entries = args};

        amqp_queue_declare(b->conn, CHANNEL, amqp_cstring_bytes(queue), 0, 1, 0, 0, table);
        return check_reply(b, "queue.declare", ret_error);
}

/* Wait for the broker's confirm of delivery tag `tag`. */
static int wait_confirm(SendBroker *b, uint64_t tag, char **ret_error)
{
        for (;;) {
                amqp_frame_t frame;
                int status = amqp_simple_wait_frame(b->conn, &frame);

                if (status != AMQP_STATUS_OK) {
                        b->open = false;
                        return fail(ret_error, -EIO, "waiting for the publish confirm: %s",
                                    amqp_error_string2(status));
                }
                if (frame.frame_type != AMQP_FRAME_METHOD)
                        continue;
                switch (frame.payload.method.id) {
                case AMQP_BASIC_ACK_METHOD: {
                        const amqp_basic_ack_t *ack = frame.payload.method.decoded;
                        if (ack->delivery_tag == tag || (ack->multiple && ack->delivery_tag > tag))
                                return 0;
                        break;
                }
                case AMQP_BASIC_NACK_METHOD:
                        return fail(ret_error, -EIO, "the broker refused the message (basic.nack)");
                case AMQP_BASIC_RETURN_METHOD:
                        break;
                case AMQP_CONNECTION_CLOSE_METHOD:
                case AMQP_CHANNEL_CLOSE_METHOD: {
                        amqp_rpc_reply_t r = {.reply_type = AMQP_RESPONSE_SERVER_EXCEPTION,
                                              .reply = frame.payload.method};
                        return reply_error(b, r, "basic.publish", ret_error);
                }
                default:
                        break;
                }
        }
}

int send_broker_publish(SendBroker *b, const char *queue, const void *body, size_t len,
                        const char *message_id, const void *sig, size_t sig_len, char **ret_error)
{
        amqp_table_entry_t header = {.key = amqp_cstring_bytes("signature")};
        amqp_basic_properties_t props = {0};
        int status;

        /* The engine always sends the header: void when unsigned, else the
         * raw signature bytes as a long string (py-amqp writes bytes as 'S'
         * whether or not they are UTF-8). */
        if (sig) {
                header.value.kind = AMQP_FIELD_KIND_UTF8;
                header.value.value.bytes = (amqp_bytes_t){.len = sig_len, .bytes = (void *)sig};
        } else
                header.value.kind = AMQP_FIELD_KIND_VOID;

        props._flags = AMQP_BASIC_CONTENT_TYPE_FLAG | AMQP_BASIC_CONTENT_ENCODING_FLAG |
                       AMQP_BASIC_HEADERS_FLAG | AMQP_BASIC_DELIVERY_MODE_FLAG |
                       AMQP_BASIC_PRIORITY_FLAG | AMQP_BASIC_MESSAGE_ID_FLAG;
        props.content_type = amqp_cstring_bytes("text/plain");
        props.content_encoding = amqp_cstring_bytes("utf-8");
        props.headers = (amqp_table_t){.num_entries = 1, .entries = &header};
        props.delivery_mode = AMQP_DELIVERY_PERSISTENT;
        props.priority = 0;
        props.message_id = amqp_cstring_bytes(message_id);

        status = amqp_basic_publish(b->conn, CHANNEL, amqp_cstring_bytes(""),
                                    amqp_cstring_bytes(queue), 0, 0, &props,
                                    (amqp_bytes_t){.len = len, .bytes = (void *)body});
        if (status != AMQP_STATUS_OK) {
                b->open = false;
                return fail(ret_error, -EIO, "basic.publish: %s", amqp_error_string2(status));
        }
        status = wait_confirm(b, b->next_publish_tag++, ret_error);
        amqp_maybe_release_buffers(b->conn);
        return status;
}

int send_broker_consume(SendBroker *b, const char *queue, char **ret_error)
{
        int r;

        amqp_basic_qos(b->conn, CHANNEL, 0, 1, 0);
        r = check_reply(b, "basic.qos", ret_error);
        if (r < 0)
                return r;
        amqp_basic_consume(b->conn, CHANNEL, amqp_cstring_bytes(queue), amqp_empty_bytes, 0, 0, 0,
                           amqp_empty_table);
        return check_reply(b, "basic.consume", ret_error);
}

int send_broker_follow(SendBroker *b, const char *exchange, const char *key, char **ret_error)
{
        bool named = !*exchange;
        amqp_queue_declare_ok_t *ok;
        int r;

        /* Not durable, exclusive, auto-delete: it lives as long as we do. */
        ok = amqp_queue_declare(b->conn, CHANNEL,
                                named ? amqp_cstring_bytes(key) : amqp_empty_bytes, 0, 0, 1, 1,
                                amqp_empty_table);
        r = check_reply(b, "queue.declare of the progress queue", ret_error);
        if (r < 0)
                return r;
        free(b->follow_queue);
        b->follow_queue = strndup(ok->queue.bytes, ok->queue.len);
        if (!b->follow_queue)
                return -ENOMEM;
        if (named)
                return 0;
        amqp_queue_bind(b->conn, CHANNEL, amqp_cstring_bytes(b->follow_queue),
                        amqp_cstring_bytes(exchange), amqp_cstring_bytes(key), amqp_empty_table);
        return check_reply(b, "queue.bind of the progress queue", ret_error);
}

int send_broker_follow_consume(SendBroker *b, char **ret_error)
{
        amqp_basic_consume_ok_t *ok;
        int r;

        ok = amqp_basic_consume(b->conn, CHANNEL, amqp_cstring_bytes(b->follow_queue),
                                amqp_empty_bytes, 0, 1, 1, amqp_empty_table);
        r = check_reply(b, "basic.consume of the progress queue", ret_error);
        if (r < 0)
                return r;
        free(b->follow_tag);
        b->follow_tag = strndup(ok->consumer_tag.bytes, ok->consumer_tag.len);
        return b->follow_tag ? 0 : -ENOMEM;
}

/* Whether env came to the --follow consumer. */
static bool from_follow(const SendBroker *b, const amqp_envelope_t *env)
{
        return b->follow_tag && env->consumer_tag.len == strlen(b->follow_tag) &&
               memcmp(env->consumer_tag.bytes, b->follow_tag, env->consumer_tag.len) == 0;
}

void send_message_clear(SendMessage *m)
{
        if (!m)
                return;
        free(m->body);
        free(m->message_id);
        free(m->properties);
        free(m->signature);
        *m = (SendMessage){0};
}

static void message_clearp(SendMessage *m)
{
        send_message_clear(m);
}

static int put_bytes(StrBuf *out, const char *name, amqp_bytes_t v)
{
        return strbuf_printf(out, "%s: %.*s\n", name, (int)v.len, (const char *)v.bytes);
}

/* One "name: value" line per property that is set, in the order of the
 * AMQP basic class; headers as "headers.<key>: <type> <value or length>". */
static int describe(const amqp_basic_properties_t *p, SendMessage *m)
{
        _cleanup_strbuf_ StrBuf out = STRBUF_INIT;
        amqp_flags_t f = p->_flags;
        int r = 0;

        if (f & AMQP_BASIC_CONTENT_TYPE_FLAG)
                r = put_bytes(&out, "content_type", p->content_type);
        if (r >= 0 && (f & AMQP_BASIC_CONTENT_ENCODING_FLAG))
                r = put_bytes(&out, "content_encoding", p->content_encoding);
        for (int i = 0; r >= 0 && (f & AMQP_BASIC_HEADERS_FLAG) && i < p->headers.num_entries;
             i++) {
                const amqp_table_entry_t *e = &p->headers.entries[i];
                const amqp_field_value_t *v = &e->value;

                if (v->kind == AMQP_FIELD_KIND_UTF8 || v->kind == AMQP_FIELD_KIND_BYTES)
                        r = strbuf_printf(&out, "headers.%.*s: %c %zu bytes\n", (int)e->key.len,
                                          (const char *)e->key.bytes, v->kind, v->value.bytes.len);
                else
                        r = strbuf_printf(&out, "headers.%.*s: %c\n", (int)e->key.len,
                                          (const char *)e->key.bytes, v->kind);
                if (r < 0 || e->key.len != 9 || memcmp(e->key.bytes, "signature", 9) != 0)
                        continue;
                m->signature_kind = (char)v->kind;
                if (v->kind == AMQP_FIELD_KIND_UTF8 || v->kind == AMQP_FIELD_KIND_BYTES) {
                        m->signature = malloc(v->value.bytes.len + 1);
                        if (!m->signature)
                                return -ENOMEM;
                        memcpy(m->signature, v->value.bytes.bytes, v->value.bytes.len);
                        m->signature_len = v->value.bytes.len;
                }
        }
        if (r >= 0 && (f & AMQP_BASIC_DELIVERY_MODE_FLAG))
                r = strbuf_printf(&out, "delivery_mode: %u\n", p->delivery_mode);
        if (r >= 0 && (f & AMQP_BASIC_PRIORITY_FLAG))
                r = strbuf_printf(&out, "priority: %u\n", p->priority);
        if (r >= 0 && (f & AMQP_BASIC_CORRELATION_ID_FLAG))
                r = put_bytes(&out, "correlation_id", p->correlation_id);
        if (r >= 0 && (f & AMQP_BASIC_REPLY_TO_FLAG))
                r = put_bytes(&out, "reply_to", p->reply_to);
        if (r >= 0 && (f & AMQP_BASIC_EXPIRATION_FLAG))
                r = put_bytes(&out, "expiration", p->expiration);
        if (r >= 0 && (f & AMQP_BASIC_MESSAGE_ID_FLAG)) {
                r = put_bytes(&out, "message_id", p->message_id);
                m->message_id = strndup(p->message_id.bytes, p->message_id.len);
                if (!m->message_id)
                        return -ENOMEM;
        }
        if (r >= 0 && (f & AMQP_BASIC_TIMESTAMP_FLAG))
                r = strbuf_printf(&out, "timestamp: %llu\n", (unsigned long long)p->timestamp);
        if (r >= 0 && (f & AMQP_BASIC_TYPE_FLAG))
                r = put_bytes(&out, "type", p->type);
        if (r >= 0 && (f & AMQP_BASIC_USER_ID_FLAG))
                r = put_bytes(&out, "user_id", p->user_id);
        if (r >= 0 && (f & AMQP_BASIC_APP_ID_FLAG))
                r = put_bytes(&out, "app_id", p->app_id);
        if (r < 0)
                return r;
        return strbuf_steal(&out, &m->properties);
}

/* A frame other than a delivery arrived on the consumer's path: confirms
 * and flow notices are skipped, anything that ends the session is an
 * error. */
static int other_frame(SendBroker *b, char **ret_error)
{
        amqp_frame_t frame;
        int status = amqp_simple_wait_frame(b->conn, &frame);

        if (status != AMQP_STATUS_OK) {
                b->open = false;
                return fail(ret_error, -EIO, "reading from the broker: %s",
                            amqp_error_string2(status));
        }
        if (frame.frame_type != AMQP_FRAME_METHOD)
                return 0;
        switch (frame.payload.method.id) {
        case AMQP_CONNECTION_CLOSE_METHOD:
        case AMQP_CHANNEL_CLOSE_METHOD: {
                amqp_rpc_reply_t r = {.reply_type = AMQP_RESPONSE_SERVER_EXCEPTION,
                                      .reply = frame.payload.method};
                return reply_error(b, r, "consuming", ret_error);
        }
        case AMQP_BASIC_CANCEL_METHOD:
                b->open = false;
                return fail(ret_error, -EIO, "the broker cancelled the consumer (queue deleted?)");
        default:
                return 0;
        }
}

int send_broker_next(SendBroker *b, int64_t deadline_ms, SendMessage *ret, char **ret_error)
{
        for (;;) {
                _cleanup_(message_clearp) SendMessage m = {0};
                int64_t left = deadline_ms - send_broker_now_ms();
                struct timeval tv;
                amqp_envelope_t env;
                amqp_rpc_reply_t reply;
                int r;

                if (left <= 0)
                        return SEND_BROKER_TIMEOUT;
                tv = (struct timeval){.tv_sec = left / 1000, .tv_usec = (left % 1000) * 1000};
                amqp_maybe_release_buffers(b->conn);
                reply = amqp_consume_message(b->conn, &env, &tv, 0);
                if (reply.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
                    reply.library_error == AMQP_STATUS_TIMEOUT)
                        return SEND_BROKER_TIMEOUT;
                if (reply.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
                    reply.library_error == AMQP_STATUS_UNEXPECTED_STATE) {
                        r = other_frame(b, ret_error);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (reply.reply_type != AMQP_RESPONSE_NORMAL)
                        return reply_error(b, reply, "consuming", ret_error);

                /* The engine's listener acks every message first, whatever
                 * it holds; progress events come unacknowledged. */
                m.progress = from_follow(b, &env);
                r = m.progress ? AMQP_STATUS_OK
                               : amqp_basic_ack(b->conn, env.channel, env.delivery_tag, 0);
                if (r == AMQP_STATUS_OK) {
                        m.body = malloc(env.message.body.len + 1);
                        if (m.body) {
                                memcpy(m.body, env.message.body.bytes, env.message.body.len);
                                m.body[env.message.body.len] = '\0';
                                m.body_len = env.message.body.len;
                                r = describe(&env.message.properties, &m);
                        } else
                                r = -ENOMEM;
                } else {
                        b->open = false;
                        r = fail(ret_error, -EIO, "basic.ack: %s", amqp_error_string2(r));
                }
                amqp_destroy_envelope(&env);
                if (r < 0)
                        return r;
                *ret = m;
                m = (SendMessage){0};
                return 0;
        }
}
