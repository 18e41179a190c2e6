/* muranoagent-send: the engine's side of one plan, for operators and tests.
 * Wiring only: read the plan, build it (send-plan), or a cancel message
 * (plan-cancel), sign it (send-sign), publish it and wait for its result
 * (send-broker, send-result). */
#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan/plan-cancel.h"
#include "plan/plan.h"
#include "progress/progress.h"
#include "send/send-broker.h"
#include "send/send-cli.h"
#include "send/send-plan.h"
#include "send/send-result.h"
#include "send/send-sign.h"
#include "util/fileio.h"
#include "util/hexid.h"
#include "util/macro.h"
#include "util/pyjson.h"

#define PASSWORD_MAX 4096

static void message_clearp(SendMessage *m)
{
        send_message_clear(m);
}

static int say(int status, const char *fmt, ...) _printf_(2, 3);
static int say(int status, const char *fmt, ...)
{
        va_list ap;

        fputs("muranoagent-send: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        return status;
}

/* What went wrong, for a failure that may have come without a message. */
static const char *why(const char *error, int r)
{
        return error ? error : strerror(-r);
}

static int write_out(FILE *f, const void *data, size_t len)
{
        if (fwrite(data, 1, len, f) != len || fflush(f) != 0)
                return say(SEND_EXIT_USAGE, "cannot write the output: %s", strerror(errno));
        return SEND_EXIT_OK;
}

/* The password is the first line of the file, so that a trailing newline
 * left by an editor is not part of it. */
static int read_password(const char *path, char **ret)
{
        _cleanup_free_ char *data = NULL;
        int r = file_read_all(path, PASSWORD_MAX, &data, NULL);

        if (r < 0)
                return say(SEND_EXIT_USAGE, "cannot read the password file %s: %s", path,
                           strerror(-r));
        data[strcspn(data, "\r\n")] = '\0';
        *ret = TAKE_PTR(data);
        return SEND_EXIT_OK;
}

/* Read, build and serialise the plan; *ret_body is what goes on the wire. */
static int prepare(const SendArgs *a, char **ret_body, char **ret_message_id, json_t **ret_key)
{
        _cleanup_plan_error_ PlanError perr = PLAN_ERROR_INIT;
        _cleanup_json_ json_t *doc = NULL;
        _cleanup_json_ json_t *plan = NULL;
        _cleanup_json_ json_t *key = NULL;
        _cleanup_free_ char *error = NULL;
        _cleanup_free_ char *dir = NULL;
        _cleanup_free_ char *body = NULL;
        _cleanup_free_ char *message_id = NULL;
        SendPlanEnv env = {.resources = a->resources};
        int r;

        r = plan_parse_file(a->plan_file, NULL, &doc, &perr);
        if (r == PLAN_INVALID)
                return say(SEND_EXIT_USAGE, "%s: %s", a->plan_file, why(perr.message, -EINVAL));
        if (r < 0)
                return say(SEND_EXIT_USAGE, "cannot read %s: %s", a->plan_file, strerror(-r));

        if (a->raw)
                plan = json_incref(doc);
        else {
                if (!env.resources) {
                        dir = strdup(a->plan_file);
                        if (!dir)
                                return say(SEND_EXIT_USAGE, "out of memory");
                        env.resources = dirname(dir);
                }
                r = send_plan_build(doc, &env, &plan, &error);
                if (r == SEND_PLAN_INVALID)
                        return say(SEND_EXIT_USAGE, "%s: %s", a->plan_file, why(error, -EINVAL));
                if (r < 0)
                        return say(SEND_EXIT_USAGE, "cannot build the plan: %s", strerror(-r));
        }
        r = send_plan_message_id(plan, &env, &message_id, &key, &error);
        if (r == SEND_PLAN_INVALID)
                return say(SEND_EXIT_USAGE, "%s: %s", a->plan_file, why(error, -EINVAL));
        if (r < 0)
                return say(SEND_EXIT_USAGE, "cannot build the plan: %s", strerror(-r));
        r = pyjson_dumps(plan, &body);
        if (r < 0)
                return say(SEND_EXIT_USAGE, "%s: cannot write the plan as JSON: %s", a->plan_file,
                           strerror(-r));
        *ret_body = TAKE_PTR(body);
        *ret_message_id = TAKE_PTR(message_id);
        *ret_key = TAKE_PTR(key);
        return SEND_EXIT_OK;
}

/* The cancel message for --cancel (plan-cancel.h), under a fresh message
 * id; the result waited for is the cancelled plan's. */
static int prepare_cancel(const SendArgs *a, char **ret_body, char **ret_message_id,
                          json_t **ret_key)
{
        _cleanup_free_ char *message_id = malloc(33);
        json_t *key = json_string(a->cancel);
        int r;

        if (!message_id || !key || hexid_new(message_id) < 0 ||
            (r = plan_cancel_build(a->cancel, message_id, ret_body)) < 0) {
                json_decref(key);
                return say(SEND_EXIT_USAGE, "cannot build the cancel message: out of memory");
        }
        *ret_message_id = TAKE_PTR(message_id);
        *ret_key = key;
        return SEND_EXIT_OK;
}

/* Connect, and when results are wanted declare their queue first, as the
 * engine's listener does before the plan goes out, so that the broker keeps
 * a result that comes back before we consume; likewise the queue of the
 * progress events with --follow. */
static int open_session(const SendArgs *a, const char *results, SendBroker **ret, char **error)
{
        _cleanup_(send_broker_freep) SendBroker *b = NULL;
        int r;

        r = send_broker_connect(&a->broker, &b, error);
        if (r >= 0 && results)
                r = send_broker_declare(b, results, error);
        if (r >= 0 && results && a->follow)
                r = send_broker_follow(b, a->exchange ? a->exchange : "", a->follow, error);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(b);
        return 0;
}

/* After losing the broker while waiting: try again, with growing pauses,
 * until connected or the deadline passes. The results queue is durable and
 * results are persistent, so nothing published meanwhile is lost. */
static int reopen_session(const SendArgs *a, int64_t deadline, SendBroker **ret)
{
        int64_t pause = 250;

        for (;;) {
                _cleanup_free_ char *error = NULL;
                int64_t left = deadline - send_broker_now_ms();

                if (left <= 0)
                        return SEND_BROKER_TIMEOUT;
                usleep((useconds_t)(pause < left ? pause : left) * 1000);
                if (open_session(a, a->results_queue, ret, &error) == 0) {
                        if (send_broker_consume(*ret, a->results_queue, &error) == 0 &&
                            (!a->follow || send_broker_follow_consume(*ret, &error) == 0))
                                return 0;
                        send_broker_free(*ret);
                        *ret = NULL;
                }
                pause = pause * 2 > 5000 ? 5000 : pause * 2;
        }
}

/* --follow: print the events of this plan that a message holds (an array
 * of them) on stderr, and say so when events were missed (dropped by the
 * agent, or sent while we were away). */
static void show_progress(const SendMessage *m, const char *plan, json_int_t *last_seq)
{
        _cleanup_json_ json_t *doc = json_loadb(m->body, m->body_len, 0, NULL);
        json_t *event;
        size_t i;

        json_array_foreach (doc, i, event) {
                _cleanup_free_ char *text = NULL;
                json_int_t seq;

                if (!progress_is_event(event, plan) || progress_describe(event, &text) < 0)
                        continue;
                seq = json_integer_value(json_object_get(event, "seq"));
                if (seq > *last_seq + 1)
                        fprintf(stderr, "(%" JSON_INTEGER_FORMAT " progress event(s) missed)\n",
                                seq - *last_seq - 1);
                if (seq > *last_seq)
                        *last_seq = seq;
                fputs(text, stderr);
        }
        fflush(stderr);
}

static int wait_result(const SendArgs *a, SendBroker **b, const char *message_id, const json_t *key)
{
        int64_t deadline = send_broker_now_ms() + a->timeout * 1000;
        json_int_t last_seq = 0;

        for (;;) {
                _cleanup_(message_clearp) SendMessage m = {0};
                _cleanup_json_ json_t *doc = NULL;
                _cleanup_free_ char *error = NULL;
                int r = send_broker_next(*b, deadline, &m, &error);

                if (r == SEND_BROKER_TIMEOUT) {
                        fprintf(stderr, "The murano-agent did not respond within %ld seconds\n",
                                a->timeout);
                        return SEND_EXIT_TIMEOUT;
                }
                if (r < 0) {
                        say(0, "plan %s: lost the broker (%s); reconnecting", message_id,
                            why(error, r));
                        send_broker_free(*b);
                        *b = NULL;
                        if (reopen_session(a, deadline, b) != 0)
                                return say(SEND_EXIT_BROKER,
                                           "plan %s: could not reach the broker again within "
                                           "%ld seconds",
                                           message_id, a->timeout);
                        continue;
                }
                if (m.progress) {
                        show_progress(&m, message_id, &last_seq);
                        continue;
                }
                r = send_result_match(m.body, m.body_len, m.message_id ? m.message_id : "", key,
                                      &doc);
                if (r < 0)
                        return say(SEND_EXIT_BROKER, "out of memory");
                if (r == 0)
                        continue;
                r = write_out(stdout, m.body, m.body_len);
                if (r != SEND_EXIT_OK)
                        return r;
                return send_result_failed(doc) ? SEND_EXIT_FAILED : SEND_EXIT_OK;
        }
}

static int run_send(const SendArgs *a)
{
        _cleanup_(send_broker_freep) SendBroker *b = NULL;
        _cleanup_free_ char *body = NULL;
        _cleanup_free_ char *message_id = NULL;
        _cleanup_free_ unsigned char *sig = NULL;
        _cleanup_free_ char *error = NULL;
        _cleanup_json_ json_t *key = NULL;
        size_t sig_len = 0;
        int r;

        r = a->cancel ? prepare_cancel(a, &body, &message_id, &key)
                      : prepare(a, &body, &message_id, &key);
        if (r != SEND_EXIT_OK)
                return r;
        if (a->dry_run)
                return write_out(stdout, body, strlen(body));
        if (a->sign_key) {
                r = send_sign(a->sign_key, a->queue, body, strlen(body), &sig, &sig_len, &error);
                if (r == SEND_SIGN_INVALID)
                        return say(SEND_EXIT_USAGE, "%s", why(error, -EINVAL));
                if (r < 0)
                        return say(SEND_EXIT_USAGE, "cannot sign: %s", strerror(-r));
        }

        r = open_session(a, a->results_queue, &b, &error);
        if (r >= 0)
                r = send_broker_declare(b, a->queue, &error);
        if (r >= 0)
                r = send_broker_publish(b, a->queue, body, strlen(body), message_id, sig, sig_len,
                                        &error);
        if (r >= 0 && a->results_queue)
                r = send_broker_consume(b, a->results_queue, &error);
        if (r >= 0 && a->follow)
                r = send_broker_follow_consume(b, &error);
        if (r < 0)
                return say(SEND_EXIT_BROKER, "%s %s: %s", a->cancel ? "cancel message" : "plan",
                           message_id, why(error, r));
        if (!a->results_queue) {
                printf("%s\n", message_id);
                return fflush(stdout) == 0 ? SEND_EXIT_OK : SEND_EXIT_USAGE;
        }
        return wait_result(a, &b, message_id, key);
}

static int save_file(const char *dir, const char *name, const void *data, size_t len)
{
        _cleanup_free_ char *path = NULL;
        _cleanup_fclose_ FILE *f = NULL;

        if (asprintf(&path, "%s/%s", dir, name) < 0)
                return say(SEND_EXIT_USAGE, "out of memory");
        f = fopen(path, "we");
        if (!f)
                return say(SEND_EXIT_USAGE, "cannot write %s: %s", path, strerror(errno));
        return write_out(f, data, len);
}

static int run_consume(const SendArgs *a)
{
        _cleanup_(send_broker_freep) SendBroker *b = NULL;
        _cleanup_(message_clearp) SendMessage m = {0};
        _cleanup_free_ char *error = NULL;
        int r;

        r = send_broker_connect(&a->broker, &b, &error);
        if (r >= 0)
                r = send_broker_consume(b, a->consume, &error);
        if (r >= 0)
                r = send_broker_next(b, send_broker_now_ms() + a->timeout * 1000, &m, &error);
        if (r == SEND_BROKER_TIMEOUT)
                return say(SEND_EXIT_TIMEOUT, "no message on %s within %ld seconds", a->consume,
                           a->timeout);
        if (r < 0)
                return say(SEND_EXIT_BROKER, "%s", why(error, r));
        if (a->save_dir) {
                r = save_file(a->save_dir, "body", m.body, m.body_len);
                if (r == SEND_EXIT_OK)
                        r = save_file(a->save_dir, "properties", m.properties,
                                      strlen(m.properties));
                if (r == SEND_EXIT_OK && m.signature)
                        r = save_file(a->save_dir, "signature", m.signature, m.signature_len);
                if (r != SEND_EXIT_OK)
                        return r;
        }
        return write_out(stdout, m.body, m.body_len);
}

int main(int argc, char **argv)
{
        _cleanup_free_ char *password = NULL;
        SendArgs a;
        int r;

        r = send_cli_parse(argc, argv, &a);
        if (r != 0)
                return r > 0 ? SEND_EXIT_OK : SEND_EXIT_USAGE;
        if (a.password_file) {
                r = read_password(a.password_file, &password);
                if (r != SEND_EXIT_OK)
                        return r;
                a.broker.password = password;
        }
        return a.consume ? run_consume(&a) : run_send(&a);
}
