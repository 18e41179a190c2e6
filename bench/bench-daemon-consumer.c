/* The baseline of bench-daemon, the durable floor: the smallest consumer
 * that does what the agent does for a plan and keeps the agent's
 * guarantees, with the fewest flushes. One rabbitmq-c connection and
 * channel in confirm mode; basic.qos prefetch 1 and manual acks, as the
 * agent. For each message:
 *
 *   1. the message (its id and body) is appended to a preallocated log,
 *      LOG_NAME in the current directory, and fdatasync()ed: a plan that
 *      was acked is on the disk (flush 1);
 *   2. the message is acked;
 *   3. a record that the plan begins is appended and fdatasync()ed before
 *      anything runs (flush 2): after a power loss, a plan logged without
 *      it ran nothing and may run, one with it may have run and must be
 *      answered instead, never run again. That is the agent's promise (its
 *      journal's `running`, docs/journal.md "States"); a floor without it
 *      could only run a begun plan twice or answer an unbegun one with an
 *      error, which the agent does not;
 *   4. `sh ./SCRIPT` runs in the current directory through posix_spawn()
 *      with stdin /dev/null and stdout read through a pipe, then waitpid()
 *      (bench-daemon-spawn.c); in the contained floor,
 *      bench-daemon-contained, through the agent's runner instead, contained
 *      as the agent contains a script (bench-daemon-contained.c); in the
 *      compatible floor, bench-daemon-compatible, the plan's own script
 *      from its files, contained as that (bench-daemon-compatible.c);
 *   5. its stdout (without the final newline), as a small JSON result (the
 *      compatible floor's with every field of the agent's), is
 *      appended to the log and fdatasync()ed: a result that is published
 *      can be published again after a crash (flush 3);
 *   6. the result is published to the results queue, with the properties
 *      the agent gives its results, and the broker's confirm is taken when
 *      it comes (the consumer does not wait for it before the next plan,
 *      as the agent does not; it waits for all of them before it stops).
 *
 * The log is written over from its start when a record would not fit: the
 * records before a confirmed result are no longer needed, and the log is
 * many plans long. It is preallocated by writing zeros once (when it is
 * shorter than LOG_SIZE), so that an append changes no file size and no
 * block map, and its fdatasync() flushes the data alone.
 *
 *     bench-daemon-consumer PORT QUEUE RESULTS_QUEUE
 *     bench-daemon-contained PORT QUEUE RESULTS_QUEUE
 *     bench-daemon-compatible PORT QUEUE RESULTS_QUEUE
 *
 * For the durable and the contained floor, SCRIPT is sha.sh for a message
 * whose message_id starts with "sha-" (the bench's 2 MiB plan) and echo.sh
 * otherwise; bench-daemon prepares both, and the file sha.sh reads, in the
 * directory it starts this program in. Those two log the plan as it came
 * and do not parse it: what the agent does with it beyond that is what the
 * comparison shows, and the compatible floor shows the part of it that
 * parses the plan and lays out its files.
 *
 * The floor links librabbitmq only, so that its own start-up and memory are
 * those of a minimal C consumer; the contained floor adds the agent's core
 * library for its runner, and the compatible floor its plan parse. It runs until SIGTERM (exit
 * status 0, after closing the connection), or until the connection fails or a message cannot be
 * handled as above (exit status 1): the contained floor stops so when a script could not be
 * contained. */
#include <amqp.h>
#include <amqp_tcp_socket.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-daemon-consumer.h"

#define CHANNEL    1
#define OUTPUT_MAX 4096
#define LOG_NAME   "floor.log"
#define LOG_SIZE   (32 << 20)

static volatile sig_atomic_t stopping;

static int log_fd = -1;
static off_t log_pos;
/* Publishes so far and the confirms the broker sent for them. */
static uint64_t published, confirmed;

static void on_sigterm(int sig)
{
        stopping = 1;
}

static int fail(const char *what, amqp_rpc_reply_t r)
{
        if (r.reply_type == AMQP_RESPONSE_NORMAL)
                return 0;
        fprintf(stderr, "%s: %s failed (%s)\n", consumer_name, what,
                r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION
                        ? amqp_error_string2(r.library_error)
                        : "the broker refused it");
        return -1;
}

/* The log, made LOG_SIZE bytes of written zeros if it is shorter. */
static int log_open(void)
{
        static const char zeros[1 << 16];
        struct stat st;

        log_fd = open(LOG_NAME, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (log_fd < 0 || fstat(log_fd, &st) < 0)
                return -1;
        if (st.st_size >= LOG_SIZE)
                return 0;
        for (off_t at = 0; at < LOG_SIZE; at += (off_t)sizeof(zeros))
                if (pwrite(log_fd, zeros, sizeof(zeros), at) != (ssize_t)sizeof(zeros))
                        return -1;
        return fsync(log_fd);
}

/* Append one record (kind, the id, the data) and flush it. */
static int log_append(char kind, const char *id, const void *data, size_t len)
{
        uint32_t head[3] = {(uint32_t)kind, (uint32_t)strlen(id), (uint32_t)len};
        struct iovec iov[3] = {{head, sizeof(head)}, {(void *)id, head[1]}, {(void *)data, len}};
        size_t total = sizeof(head) + head[1] + len;

        if (total > LOG_SIZE)
                return -1;
        if (log_pos + (off_t)total > LOG_SIZE)
                log_pos = 0;
        if (pwritev(log_fd, iov, 3, log_pos) != (ssize_t)total)
                return -1;
        log_pos += (off_t)total;
        return fdatasync(log_fd);
}

/* The result document. The message ids and outputs are the bench's own
 * (hex digits, letters, dashes and spaces), so they need no escaping; a
 * character that would need it is replaced, which the bench then reports
 * as a wrong result. */
static void json_safe(char *s)
{
        for (; *s; s++)
                if (*s == '"' || *s == '\\' || (unsigned char)*s < 0x20)
                        *s = '?';
}

/* The floors' plan: their script, prepared in the current directory,
 * chosen by the message id. The compatible floor has its own. */
__attribute__((weak)) int consumer_plan_run(const char *id, const void *plan, size_t len, char *out,
                                            size_t size)
{
        (void)plan;
        (void)len;
        return consumer_script_run(id, strncmp(id, "sha-", 4) == 0 ? "sha.sh" : "echo.sh", out,
                                   size);
}

/* The floors' result: SourceID, ErrorCode and Body, which is what the
 * bench checks (id is already JSON-safe, see handle()). The compatible
 * floor has its own. */
__attribute__((weak)) int consumer_result(const char *id, int code, const char *output, char *buf,
                                          size_t size)
{
        char body[OUTPUT_MAX];
        int n;

        snprintf(body, sizeof(body), "%s", output);
        json_safe(body);
        n = snprintf(buf, size, "{\"SourceID\": \"%s\", \"ErrorCode\": %d, \"Body\": \"%s\"}", id,
                     code, body);
        return n < 0 || (size_t)n >= size ? -1 : n;
}

static int handle(amqp_connection_state_t conn, const amqp_envelope_t *env,
                  const char *results_queue)
{
        const amqp_basic_properties_t *p = &env->message.properties;
        /* The compatible floor's result may escape each byte of the
         * output as \u00XX. */
        char id[256], output[OUTPUT_MAX], result[OUTPUT_MAX * 6 + 512];
        amqp_basic_properties_t props;
        int code = 0, len, rc;

        id[0] = '\0';
        if (p->_flags & AMQP_BASIC_MESSAGE_ID_FLAG)
                snprintf(id, sizeof(id), "%.*s", (int)p->message_id.len,
                         (const char *)p->message_id.bytes);
        json_safe(id);
        if (log_append('p', id, env->message.body.bytes, env->message.body.len) < 0 ||
            amqp_basic_ack(conn, CHANNEL, env->delivery_tag, 0) != 0 ||
            log_append('b', id, NULL, 0) < 0)
                return -1;
        rc = consumer_plan_run(id, env->message.body.bytes, env->message.body.len, output,
                               sizeof(output));
        if (rc == CONSUMER_SCRIPT_FATAL)
                return -1;
        if (rc == 0 && *output && output[strlen(output) - 1] == '\n')
                output[strlen(output) - 1] = '\0';
        if (rc < 0) {
                code = 1;
                snprintf(output, sizeof(output), "the script failed");
        }
        len = consumer_result(id, code, output, result, sizeof(result));
        if (len < 0 || log_append('r', id, result, (size_t)len) < 0)
                return -1;
        props = (amqp_basic_properties_t){
                ._flags = AMQP_BASIC_CONTENT_TYPE_FLAG | AMQP_BASIC_CONTENT_ENCODING_FLAG |
                          AMQP_BASIC_HEADERS_FLAG | AMQP_BASIC_DELIVERY_MODE_FLAG |
                          AMQP_BASIC_PRIORITY_FLAG | AMQP_BASIC_MESSAGE_ID_FLAG,
                .content_type = amqp_cstring_bytes("text/plain"),
                .content_encoding = amqp_cstring_bytes("utf-8"),
                .headers = amqp_empty_table,
                .delivery_mode = AMQP_DELIVERY_PERSISTENT,
                .message_id = amqp_cstring_bytes(id),
        };
        if (amqp_basic_publish(conn, CHANNEL, amqp_empty_bytes, amqp_cstring_bytes(results_queue),
                               0, 0, &props, (amqp_bytes_t){(size_t)len, result}) != 0)
                return -1;
        published++;
        return 0;
}

/* A frame that is not a delivery: a confirm is counted, anything else is
 * none of our business. */
static void take_frame(const amqp_frame_t *f)
{
        if (f->frame_type == AMQP_FRAME_METHOD && f->payload.method.id == AMQP_BASIC_ACK_METHOD) {
                const amqp_basic_ack_t *ack = f->payload.method.decoded;

                confirmed = ack->multiple ? ack->delivery_tag : confirmed + 1;
        }
}

int main(int argc, char **argv)
{
        amqp_connection_state_t conn;
        amqp_socket_t *sock;
        int port;

        /* First thing: the bench may stop us as soon as the broker counts
         * our consumer, before the loop below has started. */
        signal(SIGTERM, on_sigterm);
        if (argc != 4 || (port = atoi(argv[1])) <= 0) {
                fprintf(stderr, "usage: %s PORT QUEUE RESULTS_QUEUE\n", consumer_name);
                return 2;
        }
        if (log_open() < 0) {
                fprintf(stderr, "%s: %s: %m\n", consumer_name, LOG_NAME);
                return 1;
        }
        if (consumer_script_setup() < 0)
                return 1;
        conn = amqp_new_connection();
        sock = amqp_tcp_socket_new(conn);
        if (!sock || amqp_socket_open(sock, "127.0.0.1", port) != AMQP_STATUS_OK) {
                fprintf(stderr, "%s: cannot connect to 127.0.0.1:%d\n", consumer_name, port);
                return 1;
        }
        if (fail("login", amqp_login(conn, "/", 0, AMQP_DEFAULT_FRAME_SIZE, 0,
                                     AMQP_SASL_METHOD_PLAIN, "guest", "guest")) < 0)
                return 1;
        amqp_channel_open(conn, CHANNEL);
        if (fail("channel.open", amqp_get_rpc_reply(conn)) < 0)
                return 1;
        amqp_confirm_select(conn, CHANNEL);
        if (fail("confirm.select", amqp_get_rpc_reply(conn)) < 0)
                return 1;
        amqp_basic_qos(conn, CHANNEL, 0, 1, 0);
        if (fail("basic.qos", amqp_get_rpc_reply(conn)) < 0)
                return 1;
        amqp_basic_consume(conn, CHANNEL, amqp_cstring_bytes(argv[2]), amqp_empty_bytes, 0, 0, 0,
                           amqp_empty_table);
        if (fail("basic.consume", amqp_get_rpc_reply(conn)) < 0)
                return 1;

        /* rabbitmq-c retries a read that a signal interrupts, so the wait
         * for a message has a timeout, after which the flag is looked at.
         * A message that arrives ends the wait at once. */
        while (!stopping) {
                struct timeval tv = {.tv_usec = 100 * 1000};
                amqp_envelope_t env;
                amqp_rpc_reply_t r;
                int rc;

                amqp_maybe_release_buffers(conn);
                r = amqp_consume_message(conn, &env, &tv, 0);
                if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
                    r.library_error == AMQP_STATUS_TIMEOUT)
                        continue;
                if (r.reply_type != AMQP_RESPONSE_NORMAL) {
                        /* Only the end of the connection stops us; frames
                         * other than a delivery are none of our business. */
                        if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
                            r.library_error == AMQP_STATUS_UNEXPECTED_STATE) {
                                amqp_frame_t frame;
                                if (amqp_simple_wait_frame(conn, &frame) == AMQP_STATUS_OK) {
                                        take_frame(&frame);
                                        continue;
                                }
                        }
                        fail("consuming", r);
                        break;
                }
                rc = handle(conn, &env, argv[3]);
                amqp_destroy_envelope(&env);
                if (rc < 0) {
                        fprintf(stderr, "%s: cannot run, publish or ack\n", consumer_name);
                        break;
                }
        }
        /* The results published are confirmed before the connection
         * closes (a few seconds at most). */
        for (int i = 0; stopping && confirmed < published && i < 50; i++) {
                struct timeval tv = {.tv_usec = 100 * 1000};
                amqp_frame_t frame;

                if (amqp_simple_wait_frame_noblock(conn, &frame, &tv) == AMQP_STATUS_OK)
                        take_frame(&frame);
        }
        if (stopping)
                amqp_connection_close(conn, AMQP_REPLY_SUCCESS);
        amqp_destroy_connection(conn);
        consumer_script_cleanup();
        return stopping ? 0 : 1;
}
