/* The engine's side of bench-daemon (see bench-daemon-client.h).
 *
 * Memory: amqp_bytes_t values in replies and envelopes point into
 * rabbitmq-c's pools; they are copied before the next call, and
 * amqp_maybe_release_buffers() runs before each wait so that the pools do
 * not grow over thousands of messages. */
#include "bench-daemon-client.h"

#include <amqp.h>
#include <amqp_tcp_socket.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

enum {
        CHANNEL_MAIN = 1,  /* publishing plans, consuming results */
        CHANNEL_COUNT = 2, /* passive declares */
};

struct Client {
        amqp_connection_state_t conn;
};

static int check(const char *what, amqp_rpc_reply_t r)
{
        if (r.reply_type == AMQP_RESPONSE_NORMAL)
                return 0;
        if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION)
                fprintf(stderr, "bench-daemon: %s: %s\n", what,
                        amqp_error_string2(r.library_error));
        else if (r.reply_type == AMQP_RESPONSE_SERVER_EXCEPTION &&
                 (r.reply.id == AMQP_CHANNEL_CLOSE_METHOD ||
                  r.reply.id == AMQP_CONNECTION_CLOSE_METHOD)) {
                /* Both close methods start with the code and the text. */
                const amqp_channel_close_t *m = r.reply.decoded;
                fprintf(stderr, "bench-daemon: %s: %u %.*s\n", what, m->reply_code,
                        (int)m->reply_text.len, (const char *)m->reply_text.bytes);
        } else
                fprintf(stderr, "bench-daemon: %s failed\n", what);
        return -EIO;
}

int client_connect(int port, Client **ret)
{
        struct timeval tv = {.tv_sec = 10};
        amqp_socket_t *sock;
        Client *c;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->conn = amqp_new_connection();
        sock = c->conn ? amqp_tcp_socket_new(c->conn) : NULL;
        if (!sock || amqp_socket_open_noblock(sock, "127.0.0.1", port, &tv) != AMQP_STATUS_OK) {
                fprintf(stderr, "bench-daemon: cannot connect to 127.0.0.1:%d\n", port);
                client_free(c);
                return -EIO;
        }
        if (check("login", amqp_login(c->conn, "/", 0, AMQP_DEFAULT_FRAME_SIZE, 0,
                                      AMQP_SASL_METHOD_PLAIN, "guest", "guest")) < 0)
                goto fail;
        amqp_channel_open(c->conn, CHANNEL_MAIN);
        if (check("channel.open", amqp_get_rpc_reply(c->conn)) < 0)
                goto fail;
        amqp_channel_open(c->conn, CHANNEL_COUNT);
        if (check("channel.open", amqp_get_rpc_reply(c->conn)) < 0)
                goto fail;
        *ret = c;
        return 0;
fail:
        client_free(c);
        return -EIO;
}

void client_free(Client *c)
{
        if (!c)
                return;
        if (c->conn) {
                amqp_connection_close(c->conn, AMQP_REPLY_SUCCESS);
                amqp_destroy_connection(c->conn);
        }
        free(c);
}

int client_declare(Client *c, const char *queue)
{
        amqp_table_entry_t args[2] = {
                {.key = amqp_cstring_bytes("x-ha-policy"),
                 .value = {.kind = AMQP_FIELD_KIND_UTF8, .value.bytes = amqp_cstring_bytes("all")}},
                {.key = amqp_cstring_bytes("x-expires"),
                 .value = {.kind = AMQP_FIELD_KIND_I32, .value.i32 = 86400000}},
        };

        amqp_queue_declare(c->conn, CHANNEL_MAIN, amqp_cstring_bytes(queue), 0, 1, 0, 0,
                           (amqp_table_t){.num_entries = 2, .entries = args});
        return check("queue.declare", amqp_get_rpc_reply(c->conn));
}

int client_delete(Client *c, const char *queue)
{
        amqp_queue_delete(c->conn, CHANNEL_MAIN, amqp_cstring_bytes(queue), 0, 0);
        return check("queue.delete", amqp_get_rpc_reply(c->conn));
}

int client_consumers(Client *c, const char *queue, unsigned *ret)
{
        amqp_queue_declare_ok_t *ok;

        ok = amqp_queue_declare(c->conn, CHANNEL_COUNT, amqp_cstring_bytes(queue), 1, 0, 0, 0,
                                amqp_empty_table);
        if (check("queue.declare (passive)", amqp_get_rpc_reply(c->conn)) < 0 || !ok)
                return -EIO;
        *ret = ok->consumer_count;
        return 0;
}

int client_subscribe(Client *c, const char *queue)
{
        amqp_basic_consume(c->conn, CHANNEL_MAIN, amqp_cstring_bytes(queue),
                           amqp_cstring_bytes(queue), 0, 1, 0, amqp_empty_table);
        return check("basic.consume", amqp_get_rpc_reply(c->conn));
}

int client_publish(Client *c, const char *queue, const char *message_id, const char *body,
                   size_t len)
{
        amqp_table_entry_t header = {.key = amqp_cstring_bytes("signature"),
                                     .value = {.kind = AMQP_FIELD_KIND_VOID}};
        amqp_basic_properties_t props = {
                ._flags = AMQP_BASIC_CONTENT_TYPE_FLAG | AMQP_BASIC_CONTENT_ENCODING_FLAG |
                          AMQP_BASIC_HEADERS_FLAG | AMQP_BASIC_DELIVERY_MODE_FLAG |
                          AMQP_BASIC_PRIORITY_FLAG | AMQP_BASIC_MESSAGE_ID_FLAG,
                .content_type = amqp_cstring_bytes("text/plain"),
                .content_encoding = amqp_cstring_bytes("utf-8"),
                .headers = {.num_entries = 1, .entries = &header},
                .delivery_mode = AMQP_DELIVERY_PERSISTENT,
                .priority = 0,
                .message_id = amqp_cstring_bytes(message_id),
        };
        int st;

        st = amqp_basic_publish(c->conn, CHANNEL_MAIN, amqp_empty_bytes, amqp_cstring_bytes(queue),
                                0, 0, &props, (amqp_bytes_t){len, (void *)body});
        if (st != AMQP_STATUS_OK) {
                fprintf(stderr, "bench-daemon: basic.publish: %s\n", amqp_error_string2(st));
                return -EIO;
        }
        return 0;
}

static char *dup_bytes(amqp_bytes_t b)
{
        char *s = malloc(b.len + 1);

        if (s) {
                if (b.len)
                        memcpy(s, b.bytes, b.len);
                s[b.len] = '\0';
        }
        return s;
}

int client_next(Client *c, int timeout_ms, ClientMessage *ret)
{
        struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
        amqp_envelope_t env;
        amqp_rpc_reply_t r;
        ClientMessage m;

        amqp_maybe_release_buffers(c->conn);
        r = amqp_consume_message(c->conn, &env, &tv, 0);
        if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
            r.library_error == AMQP_STATUS_TIMEOUT)
                return 0;
        if (check("waiting for a result", r) < 0)
                return -EIO;
        m = (ClientMessage){.queue = dup_bytes(env.consumer_tag),
                            .body = dup_bytes(env.message.body),
                            .len = env.message.body.len};
        amqp_destroy_envelope(&env);
        if (!m.queue || !m.body) {
                client_message_clear(&m);
                return -ENOMEM;
        }
        *ret = m;
        return 1;
}

void client_message_clear(ClientMessage *m)
{
        free(m->queue);
        free(m->body);
        *m = (ClientMessage){0};
}
