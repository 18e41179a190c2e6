/* integ-amqp: the broker-side tool of the integration tests. It does what
 * the engine and a test need and muranoagent-send does not offer: publish
 * arbitrary bytes (a non-JSON body, a bad signature, a message without
 * headers), publish hundreds of plans on one connection, take every message
 * off a queue while recording all of its AMQP properties exactly, and read a
 * queue's message count without starting rabbitmqctl.
 *
 *   integ-amqp [--port P] declare QUEUE...
 *   integ-amqp [--port P] count QUEUE                 prints "<ready> <consumers>"
 *   integ-amqp [--port P] publish [OPTIONS] QUEUE FILE...
 *       --message-id ID    message_id of every message (default: the file's
 *                          name without its directory and a ".json" ending)
 *       --no-message-id    send no message_id property
 *       --signature FILE   a "signature" header holding FILE's raw bytes
 *       --no-headers       no headers table at all (default: the engine's
 *                          {"signature": void})
 *   integ-amqp [--port P] drain [OPTIONS] QUEUE       consume and ack
 *       --count N          stop after N messages
 *       --idle MS          stop when nothing came for MS ms (default 3000)
 *       --timeout S        stop after S seconds in all (default 120)
 *       --out DIR          write DIR/NNNNN.body and DIR/NNNNN.props
 *     prints the number of messages taken.
 *
 * Queues are declared as the engine declares them (spec 2.2): durable, with
 * x-ha-policy "all" and x-expires 86400000. Publishing goes to the default
 * exchange with the engine's properties (spec 2.6), in confirm mode, and the
 * tool exits only when the broker has confirmed every message. The .props
 * file lists the delivery's exchange, routing key and redelivered flag, then
 * every property that is set, in the AMQP basic class's order, so that a
 * test can compare it with the exact set the reference sends (spec 2.4).
 *
 * Exit status: 0 done; 2 bad usage or unreadable file; 4 broker error. */
#include <amqp.h>
#include <amqp_tcp_socket.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHANNEL  1
#define PREFETCH 50

static amqp_connection_state_t conn;

static int die_broker(const char *what, amqp_rpc_reply_t r)
{
        if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION)
                fprintf(stderr, "integ-amqp: %s: %s\n", what, amqp_error_string2(r.library_error));
        else if (r.reply_type == AMQP_RESPONSE_SERVER_EXCEPTION &&
                 (r.reply.id == AMQP_CHANNEL_CLOSE_METHOD ||
                  r.reply.id == AMQP_CONNECTION_CLOSE_METHOD)) {
                const amqp_channel_close_t *c = r.reply.decoded;
                fprintf(stderr, "integ-amqp: %s: %u %.*s\n", what, c->reply_code,
                        (int)c->reply_text.len, (const char *)c->reply_text.bytes);
        } else
                fprintf(stderr, "integ-amqp: %s: failed\n", what);
        exit(4);
}

static void check_rpc(const char *what)
{
        amqp_rpc_reply_t r = amqp_get_rpc_reply(conn);

        if (r.reply_type != AMQP_RESPONSE_NORMAL)
                die_broker(what, r);
}

static int64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void connect_broker(int port)
{
        amqp_socket_t *sock;
        struct timeval tv = {.tv_sec = 10};
        amqp_rpc_reply_t r;

        conn = amqp_new_connection();
        sock = amqp_tcp_socket_new(conn);
        if (!sock || amqp_socket_open_noblock(sock, "127.0.0.1", port, &tv) != AMQP_STATUS_OK) {
                fprintf(stderr, "integ-amqp: cannot connect to 127.0.0.1:%d\n", port);
                exit(4);
        }
        r = amqp_login(conn, "/", 0, AMQP_DEFAULT_FRAME_SIZE, 0, AMQP_SASL_METHOD_PLAIN, "guest",
                       "guest");
        if (r.reply_type != AMQP_RESPONSE_NORMAL)
                die_broker("login", r);
        amqp_channel_open(conn, CHANNEL);
        check_rpc("channel.open");
}

static void close_broker(void)
{
        amqp_channel_close(conn, CHANNEL, AMQP_REPLY_SUCCESS);
        amqp_connection_close(conn, AMQP_REPLY_SUCCESS);
        amqp_destroy_connection(conn);
}

static void declare(const char *queue)
{
        amqp_table_entry_t args[2] = {
                {.key = amqp_cstring_bytes("x-ha-policy"),
                 .value = {.kind = AMQP_FIELD_KIND_UTF8, .value.bytes = amqp_cstring_bytes("all")}},
                {.key = amqp_cstring_bytes("x-expires"),
                 .value = {.kind = AMQP_FIELD_KIND_I32, .value.i32 = 86400000}},
        };

        amqp_queue_declare(conn, CHANNEL, amqp_cstring_bytes(queue), 0, 1, 0, 0,
                           (amqp_table_t){.num_entries = 2, .entries = args});
        check_rpc("queue.declare");
}

static void count(const char *queue)
{
        amqp_queue_declare_ok_t *ok;

        ok = amqp_queue_declare(conn, CHANNEL, amqp_cstring_bytes(queue), 1, 0, 0, 0,
                                amqp_empty_table);
        check_rpc("queue.declare (passive)");
        printf("%u %u\n", ok->message_count, ok->consumer_count);
}

static char *read_file(const char *path, size_t *ret_len)
{
        FILE *f = fopen(path, "rb");
        char *data = NULL;
        size_t len = 0, cap = 0, n;

        if (!f) {
                fprintf(stderr, "integ-amqp: %s: %s\n", path, strerror(errno));
                exit(2);
        }
        do {
                if (len == cap) {
                        cap = cap ? cap * 2 : 4096;
                        data = realloc(data, cap);
                        if (!data)
                                exit(2);
                }
                n = fread(data + len, 1, cap - len, f);
                len += n;
        } while (n > 0);
        fclose(f);
        *ret_len = len;
        return data;
}

typedef struct PublishOpts {
        const char *message_id; /* NULL: from the file name */
        bool no_message_id;
        const char *signature_file;
        bool no_headers;
} PublishOpts;

/* The basic.ack or basic.nack frames of confirm mode, until every message
 * from 1 to last is confirmed. A confirm may cover one tag or, with
 * "multiple", every tag up to its own. */
static void wait_confirms(uint64_t last)
{
        bool *done = calloc(last + 1, sizeof(*done));
        uint64_t left = last;

        if (!done)
                exit(2);
        while (left > 0) {
                amqp_frame_t frame;
                int st = amqp_simple_wait_frame(conn, &frame);

                if (st != AMQP_STATUS_OK) {
                        fprintf(stderr, "integ-amqp: waiting for confirms: %s\n",
                                amqp_error_string2(st));
                        exit(4);
                }
                if (frame.frame_type != AMQP_FRAME_METHOD)
                        continue;
                if (frame.payload.method.id == AMQP_BASIC_ACK_METHOD) {
                        const amqp_basic_ack_t *a = frame.payload.method.decoded;
                        uint64_t lo = a->multiple ? 1 : a->delivery_tag;

                        for (uint64_t t = lo; t <= a->delivery_tag && t <= last; t++)
                                if (!done[t]) {
                                        done[t] = true;
                                        left--;
                                }
                } else if (frame.payload.method.id == AMQP_BASIC_NACK_METHOD) {
                        fprintf(stderr, "integ-amqp: the broker refused a message\n");
                        exit(4);
                } else if (frame.payload.method.id == AMQP_CHANNEL_CLOSE_METHOD ||
                           frame.payload.method.id == AMQP_CONNECTION_CLOSE_METHOD) {
                        fprintf(stderr, "integ-amqp: the broker closed the channel\n");
                        exit(4);
                }
        }
        free(done);
}

/* "dir/plan-7.json" -> "plan-7" */
static void id_from_path(const char *path, char *buf, size_t size)
{
        const char *base = strrchr(path, '/');
        size_t n;

        base = base ? base + 1 : path;
        n = strlen(base);
        if (n > 5 && strcmp(base + n - 5, ".json") == 0)
                n -= 5;
        snprintf(buf, size, "%.*s", (int)n, base);
}

static void publish(const PublishOpts *o, const char *queue, char **files, int n_files)
{
        amqp_table_entry_t header = {.key = amqp_cstring_bytes("signature")};
        amqp_basic_properties_t props = {0};
        char *sig = NULL;
        size_t sig_len = 0;

        if (o->signature_file) {
                sig = read_file(o->signature_file, &sig_len);
                header.value.kind = AMQP_FIELD_KIND_UTF8;
                header.value.value.bytes = (amqp_bytes_t){.len = sig_len, .bytes = sig};
        } else
                header.value.kind = AMQP_FIELD_KIND_VOID;

        amqp_confirm_select(conn, CHANNEL);
        check_rpc("confirm.select");
        props._flags = AMQP_BASIC_CONTENT_TYPE_FLAG | AMQP_BASIC_CONTENT_ENCODING_FLAG |
                       AMQP_BASIC_DELIVERY_MODE_FLAG | AMQP_BASIC_PRIORITY_FLAG;
        if (!o->no_headers)
                props._flags |= AMQP_BASIC_HEADERS_FLAG;
        if (!o->no_message_id)
                props._flags |= AMQP_BASIC_MESSAGE_ID_FLAG;
        props.content_type = amqp_cstring_bytes("text/plain");
        props.content_encoding = amqp_cstring_bytes("utf-8");
        props.headers = (amqp_table_t){.num_entries = 1, .entries = &header};
        props.delivery_mode = AMQP_DELIVERY_PERSISTENT;
        props.priority = 0;

        for (int i = 0; i < n_files; i++) {
                char id[256];
                size_t len;
                char *body = read_file(files[i], &len);
                int st;

                if (o->message_id)
                        snprintf(id, sizeof(id), "%s", o->message_id);
                else
                        id_from_path(files[i], id, sizeof(id));
                props.message_id = amqp_cstring_bytes(id);
                st = amqp_basic_publish(conn, CHANNEL, amqp_cstring_bytes(""),
                                        amqp_cstring_bytes(queue), 0, 0, &props,
                                        (amqp_bytes_t){.len = len, .bytes = body});
                free(body);
                if (st != AMQP_STATUS_OK) {
                        fprintf(stderr, "integ-amqp: basic.publish: %s\n", amqp_error_string2(st));
                        exit(4);
                }
        }
        wait_confirms((uint64_t)n_files);
        free(sig);
}

static void put_bytes(FILE *f, const char *name, amqp_bytes_t v)
{
        fprintf(f, "%s: \"%.*s\"\n", name, (int)v.len, (const char *)v.bytes);
}

/* Every property that is set, one per line, in the basic class's order. */
static void describe(FILE *f, const amqp_envelope_t *env)
{
        const amqp_basic_properties_t *p = &env->message.properties;
        amqp_flags_t fl = p->_flags;

        put_bytes(f, "exchange", env->exchange);
        put_bytes(f, "routing_key", env->routing_key);
        fprintf(f, "redelivered: %s\n", env->redelivered ? "true" : "false");
        if (fl & AMQP_BASIC_CONTENT_TYPE_FLAG)
                put_bytes(f, "content_type", p->content_type);
        if (fl & AMQP_BASIC_CONTENT_ENCODING_FLAG)
                put_bytes(f, "content_encoding", p->content_encoding);
        if (fl & AMQP_BASIC_HEADERS_FLAG) {
                fputs("headers: {", f);
                for (int i = 0; i < p->headers.num_entries; i++) {
                        const amqp_table_entry_t *e = &p->headers.entries[i];
                        fprintf(f, "%s%.*s: %c", i ? ", " : "", (int)e->key.len,
                                (const char *)e->key.bytes, e->value.kind);
                        if (e->value.kind == AMQP_FIELD_KIND_UTF8 ||
                            e->value.kind == AMQP_FIELD_KIND_BYTES)
                                fprintf(f, " %zu bytes", e->value.value.bytes.len);
                }
                fputs("}\n", f);
        }
        if (fl & AMQP_BASIC_DELIVERY_MODE_FLAG)
                fprintf(f, "delivery_mode: %u\n", p->delivery_mode);
        if (fl & AMQP_BASIC_PRIORITY_FLAG)
                fprintf(f, "priority: %u\n", p->priority);
        if (fl & AMQP_BASIC_CORRELATION_ID_FLAG)
                put_bytes(f, "correlation_id", p->correlation_id);
        if (fl & AMQP_BASIC_REPLY_TO_FLAG)
                put_bytes(f, "reply_to", p->reply_to);
        if (fl & AMQP_BASIC_EXPIRATION_FLAG)
                put_bytes(f, "expiration", p->expiration);
        if (fl & AMQP_BASIC_MESSAGE_ID_FLAG)
                put_bytes(f, "message_id", p->message_id);
        if (fl & AMQP_BASIC_TIMESTAMP_FLAG)
                fprintf(f, "timestamp: %llu\n", (unsigned long long)p->timestamp);
        if (fl & AMQP_BASIC_TYPE_FLAG)
                put_bytes(f, "type", p->type);
        if (fl & AMQP_BASIC_USER_ID_FLAG)
                put_bytes(f, "user_id", p->user_id);
        if (fl & AMQP_BASIC_APP_ID_FLAG)
                put_bytes(f, "app_id", p->app_id);
        if (fl & AMQP_BASIC_CLUSTER_ID_FLAG)
                put_bytes(f, "cluster_id", p->cluster_id);
}

static void save(const char *dir, unsigned n, const amqp_envelope_t *env)
{
        char path[4096];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%05u.body", dir, n);
        f = fopen(path, "wb");
        if (!f ||
            fwrite(env->message.body.bytes, 1, env->message.body.len, f) != env->message.body.len) {
                fprintf(stderr, "integ-amqp: cannot write %s\n", path);
                exit(2);
        }
        fclose(f);
        snprintf(path, sizeof(path), "%s/%05u.props", dir, n);
        f = fopen(path, "w");
        if (!f) {
                fprintf(stderr, "integ-amqp: cannot write %s\n", path);
                exit(2);
        }
        describe(f, env);
        fclose(f);
}

typedef struct DrainOpts {
        unsigned count; /* 0 = no limit */
        int64_t idle_ms;
        int64_t timeout_ms;
        const char *out;
} DrainOpts;

static void drain(const DrainOpts *o, const char *queue)
{
        int64_t start = now_ms(), last = start;
        unsigned n = 0;

        amqp_basic_qos(conn, CHANNEL, 0, PREFETCH, 0);
        check_rpc("basic.qos");
        amqp_basic_consume(conn, CHANNEL, amqp_cstring_bytes(queue), amqp_empty_bytes, 0, 0, 0,
                           amqp_empty_table);
        check_rpc("basic.consume");
        while (!o->count || n < o->count) {
                int64_t now = now_ms();
                int64_t left = last + o->idle_ms - now;
                amqp_envelope_t env;
                amqp_rpc_reply_t r;
                struct timeval tv;

                if (start + o->timeout_ms - now < left)
                        left = start + o->timeout_ms - now;
                if (left <= 0)
                        break;
                tv = (struct timeval){.tv_sec = left / 1000, .tv_usec = (left % 1000) * 1000};
                amqp_maybe_release_buffers(conn);
                r = amqp_consume_message(conn, &env, &tv, 0);
                if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
                    r.library_error == AMQP_STATUS_TIMEOUT)
                        continue;
                if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
                    r.library_error == AMQP_STATUS_UNEXPECTED_STATE) {
                        amqp_frame_t frame;
                        if (amqp_simple_wait_frame(conn, &frame) != AMQP_STATUS_OK ||
                            (frame.frame_type == AMQP_FRAME_METHOD &&
                             (frame.payload.method.id == AMQP_CHANNEL_CLOSE_METHOD ||
                              frame.payload.method.id == AMQP_CONNECTION_CLOSE_METHOD ||
                              frame.payload.method.id == AMQP_BASIC_CANCEL_METHOD))) {
                                fprintf(stderr, "integ-amqp: the broker ended the consumer\n");
                                exit(4);
                        }
                        continue;
                }
                if (r.reply_type != AMQP_RESPONSE_NORMAL)
                        die_broker("consuming", r);
                n++;
                if (o->out)
                        save(o->out, n, &env);
                if (amqp_basic_ack(conn, env.channel, env.delivery_tag, 0) != AMQP_STATUS_OK) {
                        fprintf(stderr, "integ-amqp: basic.ack failed\n");
                        exit(4);
                }
                amqp_destroy_envelope(&env);
                last = now_ms();
        }
        printf("%u\n", n);
}

static int usage(void)
{
        fputs("usage: integ-amqp [--port P] declare QUEUE... | count QUEUE |\n"
              "       publish [--message-id ID|--no-message-id] [--signature FILE] [--no-headers]"
              " QUEUE FILE... |\n"
              "       drain [--count N] [--idle MS] [--timeout S] [--out DIR] QUEUE\n",
              stderr);
        return 2;
}

int main(int argc, char **argv)
{
        const char *port_env = getenv("BROKER_PORT");
        int port = port_env ? atoi(port_env) : 5672;
        PublishOpts po = {0};
        DrainOpts dopt = {.idle_ms = 3000, .timeout_ms = 120000};
        const char *cmd;
        int i = 1;

        if (i + 1 < argc && strcmp(argv[i], "--port") == 0) {
                port = atoi(argv[i + 1]);
                i += 2;
        }
        if (i >= argc)
                return usage();
        cmd = argv[i++];
        for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
                const char *opt = argv[i];
                const char *val = i + 1 < argc ? argv[i + 1] : NULL;

                if (strcmp(opt, "--no-message-id") == 0)
                        po.no_message_id = true;
                else if (strcmp(opt, "--no-headers") == 0)
                        po.no_headers = true;
                else if (!val)
                        return usage();
                else if (strcmp(opt, "--message-id") == 0)
                        po.message_id = val, i++;
                else if (strcmp(opt, "--signature") == 0)
                        po.signature_file = val, i++;
                else if (strcmp(opt, "--count") == 0)
                        dopt.count = (unsigned)atoi(val), i++;
                else if (strcmp(opt, "--idle") == 0)
                        dopt.idle_ms = atoll(val), i++;
                else if (strcmp(opt, "--timeout") == 0)
                        dopt.timeout_ms = atoll(val) * 1000, i++;
                else if (strcmp(opt, "--out") == 0)
                        dopt.out = val, i++;
                else
                        return usage();
        }
        if (i >= argc)
                return usage();

        connect_broker(port);
        if (strcmp(cmd, "declare") == 0)
                for (; i < argc; i++)
                        declare(argv[i]);
        else if (strcmp(cmd, "count") == 0)
                count(argv[i]);
        else if (strcmp(cmd, "publish") == 0 && i + 1 < argc)
                publish(&po, argv[i], argv + i + 1, argc - i - 1);
        else if (strcmp(cmd, "drain") == 0)
                drain(&dopt, argv[i]);
        else
                return usage();
        close_broker();
        return fflush(stdout) == 0 ? 0 : 2;
}
