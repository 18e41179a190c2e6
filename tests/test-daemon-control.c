/* Tests for daemon-control.c, daemon-status.c and daemon-progress.c (the
 * daemon's observe hooks, daemon-observe.h): the control socket served on a
 * real loop (status, an unknown command, a bad and an oversized request,
 * cancel clients that hang up before their answer,
 * the directory's mode, a clean close); the status document the hooks
 * build (broker states, the running plan with its script and output tail,
 * the last DAEMON_RECENT_MAX plans, those of the done records after a
 * restart); and progress events through a fake
 * transport (one message per plan, its routing key, dropped when the
 * broker is away or behind, keys refused). */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "control/control.h"
#include "daemon/daemon-cancel.h"
#include "daemon/daemon-internal.h"
#include "util/macro.h"
#include "test-lib.h"

static char tmpdir[] = "/tmp/test-daemon-control.XXXXXX";

static void make_daemon(Daemon *d, Config *cfg, uv_loop_t *loop)
{
        static char queue[] = "q", none[] = "";

        *cfg = (Config){.storage = tmpdir};
        cfg->rabbitmq.input_queue = queue;
        cfg->rabbitmq.result_exchange = none;
        cfg->agent.progress_routing_key = none;
        *d = (Daemon){.loop = loop, .cfg = cfg, .tops = &daemon_transport_sys};
        ck_assert_int_eq(uv_loop_init(loop), 0);
        daemon_observe_init(d);
}

/* ---- the socket ------------------------------------------------------------ */

typedef struct Client {
        uv_async_t done;
        json_t *status, *unknown, *bad;
        char oversize[256];
        int status_rc;
} Client;

/* One raw request (no newline added), the reply line read back. */
static void raw_request(const char *data, size_t len, char *reply, size_t size)
{
        char dir[4096];
        struct sockaddr_un sa;
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ssize_t n;
        size_t got = 0;

        snprintf(dir, sizeof(dir), "%s/control", tmpdir);
        ck_assert_int_eq(control_address(dir, -1, &sa), 0);
        ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        ck_assert_int_eq(send(fd, data, len, MSG_NOSIGNAL), (ssize_t)len);
        while (got < size - 1 && (n = read(fd, reply + got, size - 1 - got)) > 0)
                got += (size_t)n;
        reply[got] = '\0';
        close(fd);
}

static void *client_main(void *arg)
{
        Client *c = arg;
        _cleanup_json_ json_t *status = json_pack("{ss}", "command", "status");
        _cleanup_json_ json_t *unknown = json_pack("{ss}", "command", "launch");
        _cleanup_json_ json_t *bad = json_pack("{si}", "command", 1);
        _cleanup_free_ char *e1 = NULL, *e2 = NULL, *e3 = NULL;
        static char big[CONTROL_REQUEST_MAX + 10];

        c->status_rc = control_call(tmpdir, status, 2000, &c->status, &e1);
        control_call(tmpdir, unknown, 2000, &c->unknown, &e2);
        control_call(tmpdir, bad, 2000, &c->bad, &e3);
        memset(big, ' ', sizeof(big));
        raw_request(big, sizeof(big), c->oversize, sizeof(c->oversize));
        uv_async_send(&c->done);
        return NULL;
}

static void on_client_done(uv_async_t *a)
{
        Daemon *d = a->data;

        daemon_control_stop(d);
        uv_close((uv_handle_t *)a, NULL);
}

START_TEST(test_socket)
{
        uv_loop_t loop;
        Config cfg;
        Daemon d;
        Client c = {0};
        pthread_t t;
        struct stat st;
        char path[4096];

        make_daemon(&d, &cfg, &loop);
        ck_assert_int_eq(daemon_control_start(&d), 0);
        snprintf(path, sizeof(path), "%s/control", tmpdir);
        ck_assert_int_eq(stat(path, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0700);
        uv_async_init(&loop, &c.done, on_client_done);
        c.done.data = &d;
        ck_assert_int_eq(pthread_create(&t, NULL, client_main, &c), 0);
        uv_run(&loop, UV_RUN_DEFAULT);
        pthread_join(t, NULL);
        ck_assert_int_eq(uv_loop_close(&loop), 0);
        snprintf(path, sizeof(path), "%s/control/muranoagent.sock", tmpdir);
        ck_assert_int_eq(access(path, F_OK), -1);

        ck_assert_int_eq(c.status_rc, 0);
        ck_assert(json_is_true(json_object_get(c.status, "ok")));
        ck_assert_int_eq(json_integer_value(json_object_get(c.status, "protocol")), 1);
        {
                json_t *s = json_object_get(c.status, "status");
                json_t *b = json_object_get(s, "broker");
                ck_assert_str_eq(json_string_value(json_object_get(b, "state")), "connecting");
                ck_assert_str_eq(json_string_value(json_object_get(b, "queue")), "q");
                ck_assert(json_is_null(json_object_get(s, "plan")));
                /* No journal: the counts are unknown, not zero. */
                ck_assert(json_is_null(json_object_get(s, "queued")));
                ck_assert(json_is_null(json_object_get(s, "progress")));
                ck_assert_int_eq(
                        json_integer_value(json_object_get(json_object_get(s, "agent"), "pid")),
                        getpid());
        }
        ck_assert_str_eq(json_string_value(json_object_get(c.unknown, "error")), "unknown command");
        ck_assert_str_eq(json_string_value(json_object_get(c.bad, "error")),
                         "the request has no \"command\" string");
        ck_assert_str_eq(c.oversize,
                         "{\"ok\":false,\"protocol\":1,\"error\":\"the request is too long\"}\n");
        json_decref(c.status);
        json_decref(c.unknown);
        json_decref(c.bad);
        daemon_observe_done(&d);
}
END_TEST

/* Clients that ask for a cancel that has to wait (the plan lane checks a
 * plan) and hang up before the answer: their connections must not stay and
 * fill the CONTROL_CONN_MAX slots, or status answers "busy" for as long as
 * the cancels wait. */
typedef struct Hangup {
        uv_async_t done, settle;
        json_t *status;
        int status_rc;
        char half[256]; /* what the client that only shut its writing side got */
} Hangup;

static void *hangup_main(void *arg)
{
        Hangup *h = arg;
        static const char req[] = "{\"command\": \"cancel\", \"plan_id\": \"p1\"}\n";
        _cleanup_json_ json_t *status = json_pack("{ss}", "command", "status");
        _cleanup_free_ char *error = NULL;
        char dir[4096];
        struct sockaddr_un sa;

        snprintf(dir, sizeof(dir), "%s/control", tmpdir);
        ck_assert_int_eq(control_address(dir, -1, &sa), 0);
        for (int i = 0; i < 2 * 8; i++) {
                int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

                ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
                ck_assert_int_eq(send(fd, req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
                usleep(50 * 1000); /* read by the daemon before the hangup */
                close(fd);
        }
        /* Long enough for the daemon to see the hangups, far less than the
         * cancels wait (for ever here). */
        usleep(1500 * 1000);
        h->status_rc = control_call(tmpdir, status, 2000, &h->status, &error);

        /* A client that shuts its writing side after the request (as
         * `printf ... | socat` does) has not gone: it gets its answer. */
        {
                int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                struct timeval tv = {.tv_sec = 5};
                size_t got = 0;
                ssize_t n;

                ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
                ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
                ck_assert_int_eq(send(fd, req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
                ck_assert_int_eq(shutdown(fd, SHUT_WR), 0);
                usleep(1000 * 1000); /* the daemon checks for hangups meanwhile */
                uv_async_send(&h->settle);
                while (got < sizeof(h->half) - 1 &&
                       (n = read(fd, h->half + got, sizeof(h->half) - 1 - got)) > 0)
                        got += (size_t)n;
                h->half[got] = '\0';
                close(fd);
        }
        uv_async_send(&h->done);
        return NULL;
}

/* The cancels settle: the agent stops, so each is refused. */
static void on_settle(uv_async_t *a)
{
        Daemon *d = a->data;

        daemon_stage_move(d, DAEMON_CLOSING);
        daemon_cancel_pump(d);
        uv_close((uv_handle_t *)a, NULL);
}

START_TEST(test_cancel_client_gone)
{
        uv_loop_t loop;
        Config cfg;
        Daemon d;
        Hangup h = {0};
        pthread_t t;

        make_daemon(&d, &cfg, &loop);
        d.plan = PLAN_CHECKING; /* every cancel waits for the check */
        ck_assert_int_eq(daemon_control_start(&d), 0);
        uv_async_init(&loop, &h.done, on_client_done);
        uv_async_init(&loop, &h.settle, on_settle);
        h.done.data = h.settle.data = &d;
        ck_assert_int_eq(pthread_create(&t, NULL, hangup_main, &h), 0);
        uv_run(&loop, UV_RUN_DEFAULT);
        pthread_join(t, NULL);
        ck_assert_int_eq(uv_loop_close(&loop), 0);
        ck_assert_int_eq(h.status_rc, 0);
        ck_assert_msg(json_is_true(json_object_get(h.status, "ok")), "status refused: %s",
                      json_string_value(json_object_get(h.status, "error")));
        json_decref(h.status);
        ck_assert_str_eq(h.half,
                         "{\"ok\":false,\"protocol\":1,\"error\":\"the agent is stopping\"}\n");
        ck_assert_ptr_null(d.cancels);
        daemon_observe_done(&d);
}
END_TEST

/* ---- the document ------------------------------------------------------------ */

static json_t *get(json_t *doc, const char *a, const char *b)
{
        json_t *v = json_object_get(doc, a);
        return b ? json_object_get(v, b) : v;
}

START_TEST(test_document)
{
        uv_loop_t loop;
        Config cfg;
        Daemon d;
        _cleanup_json_ json_t *s1 = NULL, *s2 = NULL, *s3 = NULL;
        TransportReady ready = {.broker = "127.0.0.1:5672", .heartbeat = 30, .connection = 1};
        TransportLoss loss = {.reason = "connection reset", .was_ready = true};
        char line[64];

        make_daemon(&d, &cfg, &loop);
        daemon_observe_broker_ready(&d, &ready);
        daemon_observe_plan_started(&d, "plan-1");
        daemon_observe_runner.started(&d, "script deploy", 4321);
        /* 30 lines through the 4 KiB ring: the last 10 are shown. */
        for (int i = 1; i <= 30; i++) {
                snprintf(line, sizeof(line), "line %d of the output\n", i);
                daemon_observe_runner.output(&d, i % 2 + 1, line, strlen(line));
        }
        s1 = daemon_status_json(&d);
        ck_assert_str_eq(json_string_value(get(get(s1, "broker", NULL), "state", NULL)),
                         "connected");
        ck_assert_str_eq(json_string_value(get(s1, "broker", "host")), "127.0.0.1:5672");
        ck_assert_int_eq(json_integer_value(get(s1, "broker", "heartbeat_s")), 30);
        ck_assert(json_is_null(get(s1, "broker", "last_error")));
        ck_assert_str_eq(json_string_value(get(s1, "plan", "id")), "plan-1");
        {
                json_t *script = get(s1, "plan", "script");
                json_t *tail = get(s1, "plan", "output_tail");
                ck_assert_str_eq(json_string_value(json_object_get(script, "name")),
                                 "script deploy");
                ck_assert_int_eq(json_integer_value(json_object_get(script, "pid")), 4321);
                ck_assert_uint_eq(json_array_size(tail), DAEMON_TAIL_LINES);
                ck_assert_str_eq(json_string_value(json_array_get(tail, 0)),
                                 "line 21 of the output");
                ck_assert_str_eq(json_string_value(json_array_get(tail, 9)),
                                 "line 30 of the output");
        }
        daemon_observe_runner.finished(&d, "script deploy", 0, NULL);
        daemon_observe_broker_lost(&d, &loss);
        s2 = daemon_status_json(&d);
        ck_assert(json_is_null(get(s2, "plan", "script")));
        ck_assert_str_eq(json_string_value(get(s2, "broker", "state")), "disconnected");
        ck_assert_str_eq(json_string_value(get(s2, "broker", "last_error")), "connection reset");
        ck_assert_int_eq(json_integer_value(get(s2, "broker", "reconnects")), 1);

        /* 25 plans: the last 20 are listed, the most recent first. */
        for (int i = 1; i <= 25; i++) {
                _cleanup_json_ json_t *result = json_pack("{si}", "ErrorCode", i == 25 ? 101 : 0);
                snprintf(line, sizeof(line), "plan-%d", i);
                if (i > 1)
                        daemon_observe_plan_started(&d, line);
                daemon_observe_plan_finished(&d, result);
        }
        s3 = daemon_status_json(&d);
        ck_assert(json_is_null(get(s3, "plan", NULL)));
        {
                json_t *plans = get(s3, "recent", "plans");
                ck_assert_uint_eq(json_array_size(plans), DAEMON_RECENT_MAX);
                ck_assert_str_eq(json_string_value(get(json_array_get(plans, 0), "id", NULL)),
                                 "plan-25");
                ck_assert_int_eq(
                        json_integer_value(get(json_array_get(plans, 0), "error_code", NULL)), 101);
                ck_assert_str_eq(json_string_value(get(json_array_get(plans, 19), "id", NULL)),
                                 "plan-6");
                ck_assert_int_eq(json_integer_value(get(s3, "agent", "plans_done")), 25);
        }
        daemon_observe_done(&d);
        ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

START_TEST(test_output_not_utf8)
{
        uv_loop_t loop;
        Config cfg;
        Daemon d;
        _cleanup_json_ json_t *s = NULL;

        make_daemon(&d, &cfg, &loop);
        daemon_observe_plan_started(&d, "p");
        daemon_observe_runner.output(&d, 1, "ok \xff\xfe\n", 6);
        s = daemon_status_json(&d);
        ck_assert_str_eq(json_string_value(json_array_get(get(s, "plan", "output_tail"), 0)),
                         "ok \xef\xbf\xbd\xef\xbf\xbd");
        daemon_observe_done(&d);
        ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

/* ---- progress events ---------------------------------------------------- */

static struct {
        bool ready;
        size_t outstanding;
        unsigned n_published;
        char key[64];
        char body[8192];
} fake;

static int fake_publish(Transport *t, const char *exchange, const char *routing_key,
                        const char *message_id, const void *body, size_t len, uint64_t *ret_seq)
{
        fake.n_published++;
        snprintf(fake.key, sizeof(fake.key), "%s", routing_key);
        snprintf(fake.body, sizeof(fake.body), "%.*s", (int)len, (const char *)body);
        *ret_seq = fake.n_published;
        return 0;
}

static bool fake_is_ready(const Transport *t)
{
        return fake.ready;
}

static size_t fake_outstanding(const Transport *t)
{
        return fake.outstanding;
}

static const DaemonTransportOps fake_ops = {
        .publish = fake_publish, .is_ready = fake_is_ready, .outstanding = fake_outstanding};

/* One plan's hooks, its script printing text. */
static void run_plan(Daemon *d, const char *id, const char *text)
{
        _cleanup_json_ json_t *result = json_pack("{si}", "ErrorCode", 0);

        daemon_observe_plan_started(d, id);
        daemon_observe_runner.started(d, "script s", 77);
        daemon_observe_runner.output(d, 1, text, strlen(text));
        daemon_observe_runner.finished(d, "script s", 0, NULL);
        daemon_observe_plan_finished(d, result);
        /* The pump does this right before it publishes the result. */
        daemon_progress_flush(d);
}

static json_int_t progress_count(Daemon *d, const char *what)
{
        _cleanup_json_ json_t *s = daemon_status_json(d);
        return json_integer_value(get(s, "progress", what));
}

START_TEST(test_progress)
{
        uv_loop_t loop;
        Config cfg;
        Daemon d;
        static char key[] = "prog", results[] = "results";
        static char transport_stand_in;
        _cleanup_json_ json_t *msg = NULL;

        make_daemon(&d, &cfg, &loop);
        cfg.agent.progress_routing_key = key;
        cfg.rabbitmq.result_routing_key = results;
        d.tops = &fake_ops;
        d.transport = (Transport *)&transport_stand_in;
        memset(&fake, 0, sizeof(fake));
        fake.ready = true;
        ck_assert_int_eq(daemon_progress_start(&d), 0);

        /* A short plan: its five events in one message, on the key. */
        run_plan(&d, "p1", "hello\n");
        ck_assert_uint_eq(fake.n_published, 1);
        ck_assert_str_eq(fake.key, "prog");
        msg = json_loads(fake.body, 0, NULL);
        ck_assert_uint_eq(json_array_size(msg), 5);
        ck_assert_str_eq(json_string_value(get(json_array_get(msg, 2), "event", NULL)), "output");
        ck_assert_str_eq(json_string_value(get(json_array_get(msg, 2), "text", NULL)), "hello\n");
        ck_assert_int_eq(json_integer_value(get(json_array_get(msg, 4), "seq", NULL)), 5);
        ck_assert_int_eq(progress_count(&d, "sent"), 5);

        /* The broker behind: dropped, not queued. */
        fake.outstanding = DAEMON_PROGRESS_BACKLOG_MAX;
        run_plan(&d, "p2", "x\n");
        ck_assert_uint_eq(fake.n_published, 1);
        ck_assert_int_eq(progress_count(&d, "dropped"), 5);
        /* The broker away: likewise. */
        fake.outstanding = 0;
        fake.ready = false;
        run_plan(&d, "p3", "x\n");
        ck_assert_uint_eq(fake.n_published, 1);
        ck_assert_int_eq(progress_count(&d, "dropped"), 10);
        /* Back: the next plan's events go, numbered from 1 again. */
        fake.ready = true;
        run_plan(&d, "p4", "x\n");
        ck_assert_uint_eq(fake.n_published, 2);
        ck_assert_ptr_nonnull(strstr(fake.body, "\"plan\":\"p4\",\"seq\":1,"));

        daemon_progress_stop(&d);
        uv_run(&loop, UV_RUN_DEFAULT);
        daemon_observe_done(&d);
        ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

START_TEST(test_progress_keys_refused)
{
        uv_loop_t loop;
        Config cfg;
        Daemon d;
        static char results[] = "results", queue[] = "q", exchange[] = "x";
        static char long_key[300];

        make_daemon(&d, &cfg, &loop);
        cfg.rabbitmq.result_routing_key = results;
        cfg.agent.progress_routing_key = results;
        ck_assert_int_eq(daemon_progress_start(&d), -EINVAL);
        /* The agent's own queue, through the default exchange. */
        cfg.agent.progress_routing_key = queue;
        ck_assert_int_eq(daemon_progress_start(&d), -EINVAL);
        memset(long_key, 'k', sizeof(long_key) - 1);
        cfg.agent.progress_routing_key = long_key;
        ck_assert_int_eq(daemon_progress_start(&d), -EINVAL);
        ck_assert_ptr_null(d.observe.progress);
        /* On a named exchange the queue's name is just a key. */
        cfg.rabbitmq.result_exchange = exchange;
        cfg.agent.progress_routing_key = queue;
        ck_assert_int_eq(daemon_progress_start(&d), 0);
        ck_assert_ptr_nonnull(d.observe.progress);
        daemon_progress_stop(&d);
        uv_run(&loop, UV_RUN_DEFAULT);
        daemon_observe_done(&d);
        ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

/* What waits: the queued plans by ID (a plan stored before the agent
 * started has none yet; the plans that run or are answered leave the
 * list), the cancel requests not settled, the running plan once cancelled,
 * and a queued plan answered cancelled among the recent plans, not run. */
START_TEST(test_document_waiting)
{
        uv_loop_t loop;
        Config cfg;
        Daemon d;
        _cleanup_json_ json_t *s1 = NULL, *s2 = NULL;
        char storage[4096], ts[4][JOURNAL_TS_MAX];
        json_t *q, *c, *r;

        make_daemon(&d, &cfg, &loop);
        snprintf(storage, sizeof(storage), "%s/waiting", tmpdir);
        ck_assert_int_eq(mkdir(storage, 0700), 0);
        ck_assert_int_eq(journal_open(storage, NULL, &d.journal), 0);
        for (int i = 0; i < 4; i++)
                ck_assert_int_eq(journal_put_plan(d.journal, "{}", 2, NULL, 0, "", NULL, ts[i]), 0);
        /* ts[0] came before the start: no ID kept. */
        daemon_observe_plan_stored(&d, ts[1], "plan-b");
        daemon_observe_plan_stored(&d, ts[3], "plan-d");
        daemon_observe_plan_stored(&d, ts[2], "plan-c"); /* out of order */
        /* ts[1] runs (ts[0] was answered before it). */
        snprintf(d.busy_ts, sizeof(d.busy_ts), "%s", ts[1]);
        d.plan = PLAN_RUNNING;
        daemon_observe_plan_started(&d, "plan-b");
        ck_assert_int_eq(journal_put_result(d.journal, ts[0], "{}", 2, NULL), 0);
        d.plan = PLAN_STORING; /* the cancel waits (no runner here) */
        ck_assert_int_eq(daemon_cancel(&d, "plan-x", DAEMON_CANCEL_LOCAL, NULL, NULL), 0);
        s1 = daemon_status_json(&d);
        ck_assert_int_eq(json_integer_value(get(s1, "queued", NULL)), 2);
        q = get(s1, "queued_plans", NULL);
        ck_assert_uint_eq(json_array_size(q), 2);
        ck_assert_str_eq(json_string_value(get(json_array_get(q, 0), "id", NULL)), "plan-c");
        ck_assert_str_eq(json_string_value(get(json_array_get(q, 0), "entry", NULL)), ts[2]);
        ck_assert_str_eq(json_string_value(get(json_array_get(q, 1), "id", NULL)), "plan-d");
        c = get(s1, "cancels", NULL);
        ck_assert_uint_eq(json_array_size(c), 1);
        ck_assert_str_eq(json_string_value(get(json_array_get(c, 0), "plan_id", NULL)), "plan-x");
        ck_assert_str_eq(json_string_value(get(json_array_get(c, 0), "from", NULL)), "local");
        ck_assert(json_is_null(get(s1, "plan", "cancelled_by")));
        daemon_cancel_free_all(&d);

        daemon_observe_plan_cancelled(&d, "a local request (muranoagent cancel)");
        daemon_observe_plan_answered(&d, "plan-c", 107);
        ck_assert_int_eq(journal_put_result(d.journal, ts[2], "{}", 2, NULL), 0);
        s2 = daemon_status_json(&d);
        ck_assert_str_eq(json_string_value(get(s2, "plan", "cancelled_by")),
                         "a local request (muranoagent cancel)");
        ck_assert_uint_eq(json_array_size(get(s2, "cancels", NULL)), 0);
        q = get(s2, "queued_plans", NULL);
        ck_assert_uint_eq(json_array_size(q), 1);
        ck_assert_str_eq(json_string_value(get(json_array_get(q, 0), "id", NULL)), "plan-d");
        r = json_array_get(get(get(s2, "recent", NULL), "plans", NULL), 0);
        ck_assert_str_eq(json_string_value(json_object_get(r, "id")), "plan-c");
        ck_assert_int_eq(json_integer_value(json_object_get(r, "error_code")), 107);
        ck_assert(json_is_null(json_object_get(r, "duration_ms")));
        ck_assert(json_is_false(json_object_get(r, "before_start")));
        /* The plan of ts[2] is taken up: those up to it leave the list. */
        daemon_observe_plan_finished(&d, NULL);
        snprintf(d.busy_ts, sizeof(d.busy_ts), "%s", ts[3]);
        daemon_observe_plan_started(&d, "plan-d");
        ck_assert_uint_eq(d.observe.n_queued, 0);
        journal_free(d.journal);
        daemon_observe_done(&d);
        ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

/* After a restart the recent list holds the plans of the journal's done
 * records, newest first, without durations; with none it is empty. */
START_TEST(test_recent_after_restart)
{
        uv_loop_t loop;
        Config cfg;
        Daemon d;
        _cleanup_json_ json_t *s1 = NULL, *s2 = NULL;
        char storage[4096], ts[JOURNAL_TS_MAX], result[128];
        json_t *plans, *r;

        snprintf(storage, sizeof(storage), "%s/restart", tmpdir);
        ck_assert_int_eq(mkdir(storage, 0700), 0);
        make_daemon(&d, &cfg, &loop);
        ck_assert_int_eq(journal_open(storage, NULL, &d.journal), 0);
        s1 = daemon_status_json(&d);
        ck_assert_uint_eq(json_array_size(get(get(s1, "recent", NULL), "plans", NULL)), 0);
        for (int i = 1; i <= 25; i++) {
                snprintf(result, sizeof(result), "{\"SourceID\": \"old-%d\", \"ErrorCode\": %d}", i,
                         i == 25 ? 107 : 0);
                ck_assert_int_eq(journal_put_plan(d.journal, "{}", 2, NULL, 0, "", NULL, ts), 0);
                ck_assert_int_eq(journal_put_result(d.journal, ts, result, strlen(result), NULL),
                                 0);
                ck_assert_int_eq(journal_remove(d.journal, ts, true), 0);
        }
        journal_free(d.journal);
        daemon_observe_done(&d);
        ck_assert_int_eq(uv_loop_close(&loop), 0);

        /* The next start. */
        make_daemon(&d, &cfg, &loop);
        daemon_observe_done(&d);
        ck_assert_int_eq(journal_open(storage, NULL, &d.journal), 0);
        daemon_observe_init(&d);
        s2 = daemon_status_json(&d);
        ck_assert_str_eq(json_string_value(get(get(s2, "recent", NULL), "source", NULL)),
                         "the journal's done records at start, then memory");
        plans = get(get(s2, "recent", NULL), "plans", NULL);
        ck_assert_uint_eq(json_array_size(plans), DAEMON_RECENT_MAX);
        r = json_array_get(plans, 0);
        ck_assert_str_eq(json_string_value(json_object_get(r, "id")), "old-25");
        ck_assert_int_eq(json_integer_value(json_object_get(r, "error_code")), 107);
        ck_assert(json_is_null(json_object_get(r, "duration_ms")));
        ck_assert(json_is_true(json_object_get(r, "before_start")));
        r = json_array_get(plans, DAEMON_RECENT_MAX - 1);
        ck_assert_str_eq(json_string_value(json_object_get(r, "id")), "old-6");
        journal_free(d.journal);
        daemon_observe_done(&d);
        ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_test(tc, test_progress);
        tcase_add_test(tc, test_progress_keys_refused);
        tcase_add_test(tc, test_socket);
        tcase_add_test(tc, test_cancel_client_gone);
        tcase_add_test(tc, test_document);
        tcase_add_test(tc, test_document_waiting);
        tcase_add_test(tc, test_recent_after_restart);
        tcase_add_test(tc, test_output_not_utf8);
}

int main(void)
{
        int ret;

        if (!mkdtemp(tmpdir)) {
                perror("mkdtemp");
                return EXIT_FAILURE;
        }
        ret = check_main_one("daemon-control", "core", NULL, NULL, 10, add_tests);
        rm_rf(tmpdir);
        return ret;
}
