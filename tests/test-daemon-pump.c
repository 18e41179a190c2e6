/* Tests for the daemon's pump (daemon-pump.c) without a broker: the real
 * journal in a fresh storage directory, the real runner with the sandbox
 * off, and a fake transport behind DaemonTransportOps that logs every ack,
 * reject, publish and stop. Each test drives deliveries, readiness,
 * confirms and a stop through the daemon's own transport callbacks and its
 * SIGTERM handler, and checks what the pump decided: what is acked and
 * published, in which order, and what stays in the journal. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "test-lib.h"
#include "daemon/daemon-cancel.h"
#include "daemon/daemon-internal.h"
#include "journal/journal-log.h"
#include "log/log.h"
#include "plan/plan-cancel.h"
#include "result/result.h"
#include "util/fileio.h"
#include "util/macro.h"

/* A plan whose Body returns 7, with the message's ID. */
#define PLAN_QUICK                                                                                 \
        "{\"FormatVersion\": \"2.0.0\", \"ID\": \"%s\", \"Action\": \"Execute\","                  \
        " \"Body\": \"return 7\", \"Scripts\": {}, \"Files\": {}}"

/* A plan whose script touches "started" in the storage directory, then
 * sleeps for a minute: a plan that is surely running when the test says. */
#define PLAN_SLOW                                                                                  \
        "{\"FormatVersion\": \"2.0.0\", \"ID\": \"%s\", \"Action\": \"Execute\","                  \
        " \"Body\": \"return slow().exitCode\","                                                   \
        " \"Scripts\": {\"slow\": {\"Type\": \"Application\", \"Version\": \"1.0.0\","             \
        " \"EntryPoint\": \"f\", \"Files\": [], \"Options\": {}}},"                                \
        " \"Files\": {\"f\": {\"Name\": \"slow.sh\", \"BodyType\": \"Text\","                      \
        " \"Body\": \"#!/bin/sh\\ntouch %s/started\\nexec sleep 60\\n\"}}}"

#define LOG_MAX 32

/* What the fake transport is told, and what it answers. */
static struct {
        bool ready;   /* transport_is_ready() */
        int ack_rc;   /* what ack returns */
        uint64_t seq; /* the last sequence number handed out */
        uint64_t tag; /* the last delivery tag used */
        bool stopped; /* stop was called */
        char log[LOG_MAX][96];
        size_t n_log;
        json_t *published[LOG_MAX]; /* the bodies, by sequence number */
} fake;

static uv_loop_t loop;
static uv_timer_t tick;
static Config *cfg;
static Daemon d;
static char storage[64];

static void fake_note(const char *fmt, ...) _printf_(1, 2);
static void fake_note(const char *fmt, ...)
{
        va_list ap;

        ck_assert_uint_lt(fake.n_log, LOG_MAX);
        va_start(ap, fmt);
        vsnprintf(fake.log[fake.n_log++], sizeof(fake.log[0]), fmt, ap);
        va_end(ap);
}

static int fake_publish(Transport *t, const char *exchange, const char *routing_key,
                        const char *message_id, const void *body, size_t len, uint64_t *ret_seq)
{
        if (!fake.ready)
                return -ENOTCONN;
        ck_assert_uint_lt(fake.seq + 1, LOG_MAX);
        fake.seq++;
        fake.published[fake.seq] = json_loadb(body, len, 0, NULL);
        ck_assert_ptr_nonnull(fake.published[fake.seq]);
        fake_note("publish %s to %s as #%llu", message_id, routing_key,
                  (unsigned long long)fake.seq);
        *ret_seq = fake.seq;
        return 0;
}

static int fake_ack(Transport *t, uint64_t tag)
{
        fake_note("ack %llu", (unsigned long long)tag);
        return fake.ack_rc;
}

static int fake_reject(Transport *t, uint64_t tag, bool requeue)
{
        fake_note("reject %llu%s", (unsigned long long)tag, requeue ? " requeue" : "");
        return 0;
}

static bool fake_is_ready(const Transport *t)
{
        return fake.ready;
}

static int fake_stop(Transport *t, transport_stopped_cb stopped)
{
        fake_note("stop");
        fake.stopped = true;
        stopped(t, &d);
        return 0;
}

static const DaemonTransportOps fake_ops = {
        .publish = fake_publish,
        .ack = fake_ack,
        .reject = fake_reject,
        .is_ready = fake_is_ready,
        .stop = fake_stop,
};

/* The transport's pointer: only ever compared with NULL and handed back. */
#define FAKE_TRANSPORT ((Transport *)&fake)

/* ---- driving the daemon ------------------------------------------------ */

/* Wakes the loop now and then, so that run_until() looks at its condition
 * even when the loop has nothing else to do. */
static void on_tick(uv_timer_t *t)
{
}

/* Run the loop until cond() holds, for at most 20 s. */
static void run_until(bool (*cond)(void), const char *what)
{
        uint64_t start = uv_now(&loop);

        while (!cond()) {
                if (uv_now(&loop) - start > 20000)
                        ck_abort_msg("timed out waiting until %s", what);
                uv_run(&loop, UV_RUN_ONCE);
        }
}

/* Hand a message with body text and message_id mid to the daemon, as the
 * transport would, with the next tag. */
static void deliver(const char *mid, const char *text)
{
        TransportDelivery dl = {
                .tag = ++fake.tag,
                .body = (uint8_t *)strdup(text),
                .body_len = strlen(text),
                .message_id = mid,
                .exchange = "",
                .routing_key = "input",
        };

        ck_assert_ptr_nonnull(dl.body);
        daemon_transport_callbacks.on_delivery(FAKE_TRANSPORT, &dl, &d);
        free(dl.body); /* NULL when the daemon took it */
}

static void deliver_quick(const char *id)
{
        char text[256];

        snprintf(text, sizeof(text), PLAN_QUICK, id);
        deliver(id, text);
}

static void connect_ready(void)
{
        TransportReady r = {.broker = "fake:5672", .heartbeat = 0, .connection = 1};

        fake.ready = true;
        daemon_transport_callbacks.on_ready(FAKE_TRANSPORT, &r, &d);
}

static void confirm(uint64_t seq, TransportConfirm status)
{
        daemon_transport_callbacks.on_confirm(FAKE_TRANSPORT, seq, status, &d);
}

/* The connection ends: outstanding publishes are lost first, as
 * transport.h promises. */
static void connection_lost(uint64_t outstanding_seq)
{
        TransportLoss loss = {.reason = "fake loss", .error = -ECONNRESET, .was_ready = true};

        fake.ready = false;
        if (outstanding_seq)
                confirm(outstanding_seq, TRANSPORT_CONFIRM_LOST);
        daemon_transport_callbacks.on_lost(FAKE_TRANSPORT, &loss, &d);
}

/* ---- what the journal holds ------------------------------------------- */

/* The entries' states, one letter each in order: P pending, R running, S
 * a result to send, I interrupted. */
static void journal_states(char *buf, size_t size)
{
        _cleanup_free_ JournalEntry *e = NULL;
        size_t n = 0, k = 0;

        ck_assert_int_eq(journal_list(d.journal, &e, &n), 0);
        for (size_t i = 0; i < n && k + 1 < size; i++)
                buf[k++] = e[i].state == JOURNAL_PENDING       ? 'P'
                           : e[i].state == JOURNAL_RUNNING     ? 'R'
                           : e[i].state == JOURNAL_RESULT      ? 'S'
                           : e[i].state == JOURNAL_INTERRUPTED ? 'I'
                                                               : '?';
        buf[k] = '\0';
}

static bool journal_is(const char *want)
{
        char got[16];

        journal_states(got, sizeof(got));
        return streq(got, want);
}

/* Conditions for run_until(). */
static bool nothing_in_flight(void)
{
        return daemon_idle(&d) && !runner_busy(d.runner);
}

static bool settled_empty(void)
{
        return nothing_in_flight() && journal_is("");
}

static bool nothing_but_the_plan_runs(void)
{
        return d.work_in_flight == 0 && journal_is("RP");
}

static bool settled_one_result(void)
{
        return nothing_in_flight() && journal_is("S");
}

/* Nothing in flight but a publish awaiting its confirm. */
static bool plan_lane_settled(void)
{
        return d.plan == PLAN_IDLE && d.work_in_flight == 0 && !runner_busy(d.runner);
}

static bool confirming_one(void)
{
        return plan_lane_settled() && journal_is("S");
}

/* a's result awaits its confirm, b's is stored behind it. */
static bool confirming_one_stored_one(void)
{
        return plan_lane_settled() && journal_is("SS");
}

static bool settled_result_and_plan(void)
{
        return nothing_in_flight() && journal_is("SP");
}

static bool published_1(void)
{
        return fake.seq >= 1;
}

static bool published_2(void)
{
        return fake.seq >= 2;
}

static bool stopped(void)
{
        return fake.stopped;
}

static bool slow_started(void)
{
        char path[128];
        struct stat st;

        snprintf(path, sizeof(path), "%s/started", storage);
        return stat(path, &st) == 0;
}

static void expect_log(const char *const *want)
{
        size_t n = 0;

        for (; want[n]; n++) {
                ck_assert_msg(n < fake.n_log, "missing: %s", want[n]);
                ck_assert_str_eq(fake.log[n], want[n]);
        }
        ck_assert_msg(fake.n_log == n, "more than expected: %s", fake.log[n]);
}

static void expect_result(uint64_t seq, const char *source_id, int code)
{
        const json_t *r = fake.published[seq];

        ck_assert_ptr_nonnull(r);
        ck_assert_str_eq(json_string_value(json_object_get(r, "SourceID")), source_id);
        ck_assert_int_eq(json_integer_value(json_object_get(r, "ErrorCode")), code);
}

/* ---- fixture ------------------------------------------------------------ */

static void setup(void)
{
        char *warning = NULL, *error = NULL;

        memset(&fake, 0, sizeof(fake));
        memset(&d, 0, sizeof(d));
        snprintf(storage, sizeof(storage), "/tmp/test-daemon-pump.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(storage));
        ck_assert_int_eq(config_new_default(&cfg), 0);
        cfg->sandbox.enabled = false;
        cfg->agent.stop_grace = 0;
        /* The daemon finds a plan's call log in the journal's storage. */
        free(cfg->storage);
        cfg->storage = strdup(storage);
        free(cfg->rabbitmq.result_routing_key);
        cfg->rabbitmq.result_routing_key = strdup("results");
        ck_assert_int_eq(uv_loop_init(&loop), 0);
        uv_timer_init(&loop, &tick);
        uv_timer_start(&tick, on_tick, 20, 20);
        uv_unref((uv_handle_t *)&tick);

        d.loop = &loop;
        d.cfg = cfg;
        d.tops = &fake_ops;
        d.transport = FAKE_TRANSPORT;
        ck_assert_int_eq(journal_open(storage, NULL, &d.journal), 0);
        ck_assert_int_eq(runner_new(&loop, cfg, storage, &d.runner, &warning, &error), 0);
        free(warning);
        free(error);
        daemon_begin(&d);
}

/* A clean stop, as after SIGTERM: a publish still awaiting its confirm is
 * lost with the connection, and the loop must then close cleanly. */
static void teardown(void)
{
        if (!fake.stopped) {
                kill(getpid(), SIGTERM);
                if (d.pub == PUB_CONFIRMING)
                        connection_lost(d.publish_seq);
                run_until(stopped, "the daemon stopped");
        }
        uv_close((uv_handle_t *)&tick, NULL);
        ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
        daemon_work_free_all(&d);
        daemon_cancel_free_all(&d);
        journal_free(d.journal);
        free(d.lost_reason);
        daemon_observe_done(&d);
        ck_assert_int_eq(uv_loop_close(&loop), 0);
        config_free(cfg);
        for (size_t i = 0; i < LOG_MAX; i++)
                json_decref(fake.published[i]);
        rm_rf(storage);
}

/* ---- tests -------------------------------------------------------------- */

/* A plan is stored and acked, runs, and its result is published to the
 * result routing key; only the broker's confirm removes it. */
START_TEST(test_roundtrip)
{
        connect_ready();
        deliver_quick("a");
        run_until(published_1, "a result is published");
        expect_log((const char *[]){"ack 1", "publish a to results as #1", NULL});
        expect_result(1, "a", 0);
        ck_assert_int_eq(json_integer_value(json_object_get(fake.published[1], "Body")), 7);
        /* Not removed before its confirm. */
        run_until(confirming_one, "the plan lane is idle");
        confirm(1, TRANSPORT_CONFIRM_ACK);
        run_until(settled_empty, "the result is removed");
        ck_assert_uint_eq(fake.n_log, 2);
}
END_TEST

/* Once idle after a plan, and after the write-ahead log's checkpoint, the
 * daemon gives back the file pages it mapped and never wrote
 * (util/filepages.h): a read-only mapping of a file, every page of it
 * read, is no longer resident, and reads the same after. */
static bool trimmed(void)
{
        return d.trimmed;
}

START_TEST(test_idle_gives_back_file_pages)
{
        enum { LEN = 64 * 1024 };
        _cleanup_free_ char *data = malloc(LEN);
        uint64_t sum = 0;
        char *m;
        int fd;

        ck_assert_ptr_nonnull(data);
        memset(data, 'f', LEN);
        fd = test_file_of(data, LEN);
        m = mmap(NULL, LEN, PROT_READ, MAP_PRIVATE, fd, 0);
        ck_assert_ptr_ne(m, MAP_FAILED);
        ck_assert_int_eq(close(fd), 0);
        for (size_t i = 0; i < LEN; i += 4096)
                sum += (unsigned char)m[i];
        ck_assert_uint_eq(sum, 'f' * (LEN / 4096));
        ck_assert_uint_eq(smaps_rss_kib(m), LEN / 1024);

        connect_ready();
        deliver_quick("a");
        run_until(confirming_one, "the plan lane is idle");
        confirm(1, TRANSPORT_CONFIRM_ACK);
        run_until(settled_empty, "the result is removed");
        run_until(trimmed, "the daemon gave memory back");
        /* After the write-ahead log's checkpoint, whose pages would
         * otherwise stay mapped. */
        ck_assert(d.cfg->agent.journal_log);
        ck_assert(!uv_is_active((uv_handle_t *)&d.checkpoint));
        ck_assert_uint_eq(smaps_rss_kib(m), 0);
        ck_assert_int_eq(memcmp(m, data, LEN), 0);
        ck_assert_int_eq(munmap(m, LEN), 0);
}
END_TEST

/* Without a connection plans still run; their results wait in the journal
 * and go out when the transport is ready. */
START_TEST(test_results_wait_for_ready)
{
        deliver_quick("a");
        run_until(settled_one_result, "the result is stored");
        expect_log((const char *[]){"ack 1", NULL});
        connect_ready();
        run_until(published_1, "the result is published on ready");
        expect_log((const char *[]){"ack 1", "publish a to results as #1", NULL});
        confirm(1, TRANSPORT_CONFIRM_ACK);
        run_until(settled_empty, "the result is removed");
}
END_TEST

/* An unsent result goes before any plan: while the broker is away, a
 * plan behind a result waits. Then one result at a time: the next plan
 * runs while the last result awaits its confirm, but its result is
 * published only once that confirm came. */
START_TEST(test_results_first_one_at_a_time)
{
        deliver_quick("a");
        run_until(settled_one_result, "a's result is stored");
        deliver_quick("b");
        run_until(settled_result_and_plan, "b waits behind a's result");
        connect_ready();
        run_until(confirming_one_stored_one, "b has run while a's result awaits its confirm");
        expect_log((const char *[]){"ack 1", "ack 2", "publish a to results as #1", NULL});
        confirm(1, TRANSPORT_CONFIRM_ACK);
        run_until(published_2, "b's result is published");
        expect_result(2, "b", 0);
        confirm(2, TRANSPORT_CONFIRM_ACK);
        run_until(settled_empty, "both results are removed");
        expect_log((const char *[]){"ack 1", "ack 2", "publish a to results as #1",
                                    "publish b to results as #2", NULL});
}
END_TEST

/* A nack leaves the result in the journal, and it is published again after
 * the retry delay; a confirm of the earlier sequence number, should one come
 * late, changes nothing. */
START_TEST(test_nack_publishes_again)
{
        connect_ready();
        deliver_quick("a");
        run_until(published_1, "a's result is published");
        confirm(1, TRANSPORT_CONFIRM_NACK);
        run_until(settled_one_result, "the nacked result stays");
        ck_assert_uint_eq(fake.seq, 1);
        run_until(published_2, "the result is published again");
        /* A confirm for the first publish, late: it is not the second's. */
        confirm(1, TRANSPORT_CONFIRM_ACK);
        run_until(confirming_one, "the result stays, awaiting its confirm");
        expect_log((const char *[]){"ack 1", "publish a to results as #1",
                                    "publish a to results as #2", NULL});
        confirm(2, TRANSPORT_CONFIRM_ACK);
        run_until(settled_empty, "the result is removed");
}
END_TEST

/* A lost connection loses the confirm: the result stays, nothing is
 * published while the broker is away, and it goes again on the next
 * on_ready. */
START_TEST(test_reconnect_publishes_again)
{
        connect_ready();
        deliver_quick("a");
        run_until(published_1, "a's result is published");
        connection_lost(1);
        run_until(settled_one_result, "the result stays");
        ck_assert_uint_eq(fake.seq, 1);
        connect_ready();
        run_until(published_2, "the result is published on ready");
        confirm(2, TRANSPORT_CONFIRM_ACK);
        run_until(settled_empty, "the result is removed");
        expect_log((const char *[]){"ack 1", "publish a to results as #1",
                                    "publish a to results as #2", NULL});
}
END_TEST

/* An ack that finds the delivery's connection gone: the broker delivers
 * the message again, so the stored copy is dropped and never runs. */
START_TEST(test_ack_after_loss_drops_the_copy)
{
        fake.ack_rc = -ENOTCONN;
        connect_ready();
        deliver_quick("a");
        run_until(settled_empty, "the copy is dropped");
        expect_log((const char *[]){"ack 1", NULL});
}
END_TEST

/* A result.json that is no JSON object, left by an earlier start, is
 * dropped, not published, and the plan behind it runs and is answered. */
START_TEST(test_result_not_a_document_dropped)
{
        char path[128];
        FILE *f;

        journal_free(d.journal);
        snprintf(path, sizeof(path), "%s/plans/1", storage);
        ck_assert_int_eq(mkdir(path, 0700), 0);
        snprintf(path, sizeof(path), "%s/plans/1/result.json", storage);
        f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fputs("[1]", f);
        ck_assert_int_eq(fclose(f), 0);
        ck_assert_int_eq(journal_open(storage, NULL, &d.journal), 0);
        ck_assert(journal_is("S"));
        deliver_quick("a");
        run_until(settled_result_and_plan, "a waits behind the damaged result");
        connect_ready();
        run_until(published_1, "a's result is published");
        expect_result(1, "a", 0);
        confirm(1, TRANSPORT_CONFIRM_ACK);
        run_until(settled_empty, "both entries are gone");
        expect_log((const char *[]){"ack 1", "publish a to results as #1", NULL});
}
END_TEST

/* A result whose store fails as a disk would (EIO), off the loop thread,
 * is kept in memory, stored again after DAEMON_RETRY_MS, and only then
 * published. The result is written into its slot (opened without O_CREAT;
 * journal_put_plan() made it) or, without one, into a temporary file. */
static unsigned result_opens_failed;
static uv_thread_t result_open_thread;

static bool is_result_open(const char *path, int flags)
{
        const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

        return strcmp(name, ".result.json.tmp") == 0 ||
               (strcmp(name, ".result") == 0 && !(flags & O_CREAT));
}

static int failing_openat(int dirfd, const char *path, int flags, mode_t mode)
{
        if (is_result_open(path, flags) &&
            __atomic_fetch_add(&result_opens_failed, 1, __ATOMIC_SEQ_CST) == 0) {
                result_open_thread = uv_thread_self();
                errno = EIO;
                return -1;
        }
        return openat(dirfd, path, flags, mode);
}

START_TEST(test_result_store_fails_then_retried)
{
        static const JournalOps failing = {.openat = failing_openat};
        JournalOptions jo = JOURNAL_OPTIONS_DEFAULT;
        uv_thread_t loop_thread = uv_thread_self();

        journal_free(d.journal);
        jo.ops = &failing;
        ck_assert_int_eq(journal_open(storage, &jo, &d.journal), 0);
        connect_ready();
        deliver_quick("a");
        run_until(published_1, "a's result is published");
        ck_assert_uint_eq(__atomic_load_n(&result_opens_failed, __ATOMIC_SEQ_CST), 2);
        ck_assert(!uv_thread_equal(&result_open_thread, &loop_thread));
        expect_result(1, "a", 0);
        confirm(1, TRANSPORT_CONFIRM_ACK);
        run_until(settled_empty, "the result is removed");
        expect_log((const char *[]){"ack 1", "publish a to results as #1", NULL});
}
END_TEST

/* SIGTERM while a plan runs: the script is killed, the plan is answered as
 * interrupted, and that result is published and confirmed before the
 * transport stops. The plan behind it stays pending for the next start,
 * and a delivery during the stop is left unsettled. */
START_TEST(test_stop_mid_plan)
{
        char text[1024];

        snprintf(text, sizeof(text), PLAN_SLOW, "slow", storage);
        connect_ready();
        deliver("slow", text);
        run_until(slow_started, "the slow plan runs");
        deliver_quick("next");
        kill(getpid(), SIGTERM);
        run_until(published_1, "the interrupted result is published");
        expect_result(1, "slow", RESULT_CODE_INTERRUPTED);
        deliver_quick("late");
        run_until(plan_lane_settled, "the plan lane is idle");
        /* The stop waits for the confirm. */
        ck_assert(!fake.stopped);
        confirm(1, TRANSPORT_CONFIRM_ACK);
        run_until(stopped, "the transport is stopped");
        expect_log(
                (const char *[]){"ack 1", "ack 2", "publish slow to results as #1", "stop", NULL});
        ck_assert(journal_is("P"));
}
END_TEST

/* SIGTERM while a plan is checked (the MURANOAGENT_STOP_AT hook sends it
 * from the pool, after the checks): the plan is not begun, stays pending
 * for the next start, and the transport stops at once. */
START_TEST(test_stop_while_checking)
{
        ck_assert_int_eq(setenv("MURANOAGENT_STOP_AT", "checked", 1), 0);
        daemon_crash_init(&d);
        connect_ready();
        deliver_quick("a");
        run_until(stopped, "the transport is stopped");
        expect_log((const char *[]){"ack 1", "stop", NULL});
        ck_assert(journal_is("P"));
}
END_TEST

/* A plan whose script prints a line and ends. */
#define PLAN_SCRIPT                                                                                \
        "{\"FormatVersion\": \"2.0.0\", \"ID\": \"%s\", \"Action\": \"Execute\","                  \
        " \"Body\": \"return hello().exitCode\","                                                  \
        " \"Scripts\": {\"hello\": {\"Type\": \"Application\", \"Version\": \"1.0.0\","            \
        " \"EntryPoint\": \"f\", \"Files\": [], \"Options\": {}}},"                                \
        " \"Files\": {\"f\": {\"Name\": \"hello.sh\", \"BodyType\": \"Text\","                     \
        " \"Body\": \"#!/bin/sh\\necho hello\\n\"}}}"

static uint64_t want_seq;

static bool published_want(void)
{
        return fake.seq >= want_seq;
}

/* Wait for publish #seq, confirm it with status, and wait until the pump
 * is done with it. */
static void publish_confirm(uint64_t seq, TransportConfirm status)
{
        want_seq = seq;
        run_until(published_want, "the next result is published");
        run_until(plan_lane_settled, "the plan lane is idle");
        confirm(seq, status);
}

/* Log entries that are about the agent, not a plan (docs/daemon.md, "Logs"). */
static bool about_the_agent(const char *message)
{
        static const char *const prefixes[] = {
                "consuming ", "connection lost: ", "Terminated: stopping", "stopped; "};

        for (size_t i = 0; i < ELEMENTSOF(prefixes); i++)
                if (strncmp(message, prefixes[i], strlen(prefixes[i])) == 0)
                        return true;
        return false;
}

/* Every log entry from a plan's delivery to its result's removal names the
 * plan (docs/daemon.md, "Logs"): plans that run (with a script, and with
 * debug entries on), a result whose confirm is lost and that goes again, a
 * copy dropped after a lost ack, a plan refused by validation, a body that
 * is no JSON (named by its message_id), and a plan stopped by two SIGTERMs.
 * Only the agent's own entries (the connection, the stop) carry no ID. */
START_TEST(test_every_plan_entry_names_its_plan)
{
        static const char *const ids[] = {"q-1", "s-1", "lost-1", "bad-1", "nojson-1", "slow-1"};
        unsigned seen[ELEMENTSOF(ids)] = {0};
        _cleanup_free_ char *text = NULL;
        char path[128], body[1024], *save = NULL;
        size_t n_lines = 0;

        snprintf(path, sizeof(path), "%s/agent.log", storage);
        ck_assert_int_eq(log_open_with(&(LogOptions){
                                 .path = path, .debug = true, .format = LOG_FORMAT_JSON}),
                         0);
        connect_ready();
        deliver_quick("q-1");
        want_seq = 1;
        run_until(published_want, "q-1 is published");
        connection_lost(1);
        connect_ready();
        publish_confirm(2, TRANSPORT_CONFIRM_ACK);

        snprintf(body, sizeof(body), PLAN_SCRIPT, "s-1");
        deliver("s-1", body);
        publish_confirm(3, TRANSPORT_CONFIRM_ACK);

        fake.ack_rc = -ENOTCONN;
        deliver_quick("lost-1");
        run_until(settled_empty, "the copy is dropped");
        fake.ack_rc = 0;

        deliver("bad-1", "{\"FormatVersion\": \"2.0.0\", \"ID\": \"bad-1\", \"Body\": 7}");
        publish_confirm(4, TRANSPORT_CONFIRM_ACK);
        deliver("nojson-1", "not json");
        publish_confirm(5, TRANSPORT_CONFIRM_ACK);
        run_until(settled_empty, "every result is removed");

        cfg->agent.stop_grace = 60;
        snprintf(body, sizeof(body), PLAN_SLOW, "slow-1", storage);
        deliver("slow-1", body);
        run_until(slow_started, "the slow plan runs");
        kill(getpid(), SIGTERM);
        while (!daemon_stop_requested(&d))
                uv_run(&loop, UV_RUN_ONCE);
        kill(getpid(), SIGTERM);
        publish_confirm(6, TRANSPORT_CONFIRM_ACK);
        expect_result(6, "slow-1", RESULT_CODE_INTERRUPTED);
        run_until(stopped, "the transport is stopped");
        log_close();

        ck_assert_int_eq(file_read_all(path, 1 << 20, &text, NULL), 0);
        for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                _cleanup_json_ json_t *o = json_loads(l, 0, NULL);
                const char *id = json_string_value(json_object_get(o, "plan_id"));
                const char *message = json_string_value(json_object_get(o, "message"));
                size_t k = 0;

                ck_assert_msg(message, "not a log entry: %s", l);
                n_lines++;
                if (!id) {
                        ck_assert_msg(about_the_agent(message), "no plan ID: %s", l);
                        continue;
                }
                while (k < ELEMENTSOF(ids) && !streq(ids[k], id))
                        k++;
                ck_assert_msg(k < ELEMENTSOF(ids), "an unknown plan ID: %s", l);
                seen[k]++;
        }
        for (size_t k = 0; k < ELEMENTSOF(ids); k++)
                ck_assert_msg(seen[k] >= 1, "%u entries name %s", seen[k], ids[k]);
        ck_assert_uint_gt(n_lines, 20);
}
END_TEST

/* A cancel message for plan id (plan-cancel.h). */
static void deliver_cancel(const char *id)
{
        _cleanup_free_ char *body = NULL;

        ck_assert_int_eq(plan_cancel_build(id, "0123456789abcdef0123456789abcdef", &body), 0);
        deliver("cancel", body);
}

static bool cancel_acked_3(void)
{
        for (size_t i = 0; i < fake.n_log; i++)
                if (streq(fake.log[i], "ack 3"))
                        return true;
        return false;
}

static bool logged_3(void)
{
        return fake.n_log >= 3;
}

static bool logged_4(void)
{
        return fake.n_log >= 4;
}

static bool running_and_answered(void)
{
        return journal_is("RS");
}

/* A plan queued behind a running one is answered with 107 when its cancel
 * comes, on disk before the cancel message is acked, and never runs; the
 * running plan's cancel is acked at once, and its result, 107 too, comes
 * when its script is gone. A cancel message is never stored. */
START_TEST(test_cancel_queued_and_running)
{
        char text[1024];

        cfg->agent.kill_grace = 1;
        snprintf(text, sizeof(text), PLAN_SLOW, "slow", storage);
        deliver("slow", text);
        run_until(slow_started, "the slow plan runs");
        deliver_quick("q");
        run_until(nothing_but_the_plan_runs, "q is stored");
        deliver_cancel("q");
        run_until(cancel_acked_3, "the cancel of q is acked");
        /* Acked only once q's answer was stored. */
        ck_assert(running_and_answered());
        expect_log((const char *[]){"ack 1", "ack 2", "ack 3", NULL});
        connect_ready();
        run_until(published_1, "q's answer is published");
        expect_result(1, "q", RESULT_CODE_CANCELLED);
        confirm(1, TRANSPORT_CONFIRM_ACK);
        deliver_cancel("slow");
        run_until(published_2, "slow's result is published");
        expect_result(2, "slow", RESULT_CODE_CANCELLED);
        ck_assert_str_eq(json_string_value(json_object_get(
                                 json_object_get(fake.published[2], "Body"), "Message")),
                         "The plan was cancelled by a remote request during script slow");
        confirm(2, TRANSPORT_CONFIRM_ACK);
        run_until(settled_empty, "both are removed");
        expect_log((const char *[]){"ack 1", "ack 2", "ack 3", "publish q to results as #1",
                                    "ack 4", "publish slow to results as #2", NULL});
}
END_TEST

static bool checking(void)
{
        return d.plan == PLAN_CHECKING;
}

/* A cancel that comes while its plan is checked (every fsync 300 ms slower,
 * so the check takes a while) waits for the check: the plan is then the
 * running one, and is stopped; it is never also answered as queued, which
 * would give it two results. */
START_TEST(test_cancel_while_checking)
{
        JournalOptions jo = JOURNAL_OPTIONS_DEFAULT;
        char text[1024];

        journal_free(d.journal);
        ck_assert_int_eq(setenv("MURANOAGENT_SLOW_FSYNC_MS", "300", 1), 0);
        daemon_test_journal_ops(&jo);
        ck_assert_ptr_nonnull(jo.ops);
        ck_assert_int_eq(journal_open(storage, &jo, &d.journal), 0);
        cfg->agent.kill_grace = 1;
        connect_ready();
        snprintf(text, sizeof(text), PLAN_SLOW, "slow", storage);
        deliver("slow", text);
        run_until(checking, "the plan is checked");
        deliver_cancel("slow");
        run_until(published_1, "slow's result is published");
        expect_result(1, "slow", RESULT_CODE_CANCELLED);
        confirm(1, TRANSPORT_CONFIRM_ACK);
        run_until(settled_empty, "it is removed");
        expect_log((const char *[]){"ack 1", "ack 2", "publish slow to results as #1", NULL});
        ck_assert_int_eq(unsetenv("MURANOAGENT_SLOW_FSYNC_MS"), 0);
}
END_TEST

/* An unknown ID, a finished plan's ID and a control message the agent
 * cannot obey are acked and change nothing. */
START_TEST(test_cancel_changes_nothing)
{
        connect_ready();
        deliver_quick("a");
        run_until(published_1, "a's result is published");
        confirm(1, TRANSPORT_CONFIRM_ACK);
        run_until(settled_empty, "a is done");
        /* One at a time, as the broker delivers them (prefetch 1). */
        deliver_cancel("a");
        run_until(logged_3, "the first cancel is acked");
        deliver_cancel("nosuch");
        run_until(logged_4, "the second cancel is acked");
        deliver("stop", "{\"Control\": \"Stop\", \"PlanID\": \"a\"}");
        run_until(settled_empty, "nothing is left");
        expect_log((const char *[]){"ack 1", "publish a to results as #1", "ack 2", "ack 3",
                                    "ack 4", NULL});
}
END_TEST

/* With engine_key, an unsigned cancel is rejected and cancels nothing. */
START_TEST(test_cancel_unsigned_rejected)
{
        _cleanup_free_ char *pem = NULL, *error = NULL;
        char text[1024];

        ck_assert_int_eq(
                file_read_all(TEST_DATA_DIR "/signature/engine-pkcs1.pem", 1 << 16, &pem, NULL), 0);
        ck_assert_int_eq(signature_key_new(pem, &d.key, &error), 0);
        cfg->agent.kill_grace = 1;
        snprintf(text, sizeof(text), PLAN_SLOW, "slow", storage);
        deliver_cancel("slow");
        expect_log((const char *[]){"reject 1", NULL});
        signature_key_free(d.key);
        d.key = NULL;
        /* Unsigned plans are taken again: the plan runs, and goes on. */
        deliver("slow", text);
        run_until(slow_started, "the slow plan runs");
        ck_assert(journal_is("R"));
}
END_TEST

/* The write-ahead log's checkpoints (syncfs() of the storage), and
 * whether one ran on the loop's thread. */
static unsigned n_syncfs;
static bool syncfs_on_loop;
static uv_thread_t loop_thread;
/* The next syncfs() fails (EIO), a write-back error, while set. */
static bool fail_syncfs;

static int counting_syncfs(int fd)
{
        uv_thread_t self = uv_thread_self();

        if (uv_thread_equal(&self, &loop_thread))
                syncfs_on_loop = true;
        __atomic_add_fetch(&n_syncfs, 1, __ATOMIC_SEQ_CST);
        if (__atomic_exchange_n(&fail_syncfs, false, __ATOMIC_SEQ_CST)) {
                errno = EIO;
                return -1;
        }
        return syncfs(fd);
}

/* pwrite()s to done/records, which the journal appends to with write():
 * only the checkpoint's writing of the mirror again uses pwrite() there. */
static unsigned n_records_pwrite;

static ssize_t counting_pwrite(int fd, const void *buf, size_t n, off_t off)
{
        static const char tail[] = "/done/records";
        char link[64], path[PATH_MAX];
        ssize_t k;

        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        k = readlink(link, path, sizeof(path) - 1);
        if (k >= (ssize_t)sizeof(tail) - 1 &&
            memcmp(path + k - (sizeof(tail) - 1), tail, sizeof(tail) - 1) == 0)
                __atomic_add_fetch(&n_records_pwrite, 1, __ATOMIC_SEQ_CST);
        return pwrite(fd, buf, n, off);
}

static bool checkpointed(void)
{
        return __atomic_load_n(&n_syncfs, __ATOMIC_SEQ_CST) >= 2 && nothing_in_flight();
}

/* With the write-ahead log, a moment after the last removal the log is
 * checkpointed on the thread pool: the next burst finds it empty. */
/* The daemon's journal with the write-ahead log (its syncfs() counted;
 * log_ops: the log's file operations), and plan a run, published and
 * removed. */
static void wal_one_plan(const JournalLogOps *log_ops)
{
        static const JournalOps ops = {.syncfs = counting_syncfs, .pwrite = counting_pwrite};
        JournalOptions o = JOURNAL_OPTIONS_DEFAULT;

        o.ops = &ops;
        o.wal = true;
        o.wal_ops = log_ops;
        /* The tests share one process when Check does not fork (valgrind). */
        n_syncfs = 0;
        syncfs_on_loop = false;
        journal_free(d.journal);
        ck_assert_int_eq(journal_open(storage, &o, &d.journal), 0);
        cfg->agent.journal_log = true;
        ck_assert_uint_eq(n_syncfs, 1); /* the open's */
        loop_thread = uv_thread_self();
        connect_ready();
        deliver_quick("a");
        run_until(published_1, "a result is published");
        confirm(1, TRANSPORT_CONFIRM_ACK);
        run_until(settled_empty, "the result is removed");
}

START_TEST(test_checkpoint_when_idle)
{
        uint64_t start;

        wal_one_plan(NULL);
        start = uv_now(&loop);
        ck_assert_uint_eq(n_syncfs, 1);
        run_until(checkpointed, "the log is checkpointed");
        ck_assert_uint_ge(uv_now(&loop) - start, 900);
        ck_assert(!syncfs_on_loop);
        ck_assert_uint_eq(n_syncfs, 2);
        ck_assert_int_eq(journal_checkpoint(d.journal), 0); /* nothing new: no syncfs() */
        ck_assert_uint_eq(n_syncfs, 2);
}
END_TEST

/* The superblock's writes fail while fail_superblock is set. */
static bool fail_superblock;

static ssize_t sb_pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
        if (fail_superblock && off < JOURNAL_LOG_RING_START) {
                errno = EIO;
                return -1;
        }
        return pwritev(fd, iov, n, off);
}

static char warn_path[128];

static bool checkpoint_warned(void)
{
        _cleanup_free_ char *text = NULL;

        return file_read_all(warn_path, 1 << 20, &text, NULL) == 0 &&
               strstr(text, "the checkpoint of the write-ahead log failed: Input/output error");
}

/* A checkpoint that fails is the daemon's warning, and fences the log: the
 * next plan's store checkpoints before its record. */
START_TEST(test_checkpoint_fails)
{
        static const JournalLogOps log_ops = {.pwritev = sb_pwritev};

        snprintf(warn_path, sizeof(warn_path), "%s/agent.log", storage);
        ck_assert_int_eq(log_open_with(&(LogOptions){.path = warn_path}), 0);
        wal_one_plan(&log_ops);
        fail_superblock = true;
        run_until(checkpoint_warned, "the failed checkpoint is a warning");
        fail_superblock = false;
        ck_assert_uint_eq(n_syncfs, 2);
        deliver_quick("b");
        run_until(published_2, "b's result is published");
        ck_assert_uint_eq(n_syncfs, 3);
        log_close();
}
END_TEST

static bool checkpointed_again(void)
{
        return __atomic_load_n(&n_syncfs, __ATOMIC_SEQ_CST) >= 3 && nothing_in_flight();
}

/* A checkpoint whose syncfs() fails (a write-back error) is the daemon's
 * warning; the log keeps its records, plans go on being stored, run and
 * answered, and the next checkpoint writes the mirror again (a's done
 * record among it) before its syncfs() lets the log drop them. */
START_TEST(test_checkpoint_syncfs_fails)
{
        snprintf(warn_path, sizeof(warn_path), "%s/agent.log", storage);
        ck_assert_int_eq(log_open_with(&(LogOptions){.path = warn_path}), 0);
        wal_one_plan(NULL);
        fail_syncfs = true;
        run_until(checkpoint_warned, "the failed checkpoint is a warning");
        ck_assert_uint_eq(n_syncfs, 2);
        ck_assert_uint_eq(n_records_pwrite, 0);
        deliver_quick("b");
        run_until(published_2, "b's result is published");
        confirm(2, TRANSPORT_CONFIRM_ACK);
        run_until(settled_empty, "b's result is removed");
        run_until(checkpointed_again, "the log is checkpointed");
        ck_assert_uint_eq(n_syncfs, 3);
        ck_assert_uint_gt(n_records_pwrite, 0);
        /* Its records dropped: nothing left for another. */
        ck_assert_int_eq(journal_checkpoint(d.journal), 0);
        ck_assert_uint_eq(n_syncfs, 3);
        log_close();
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_test(tc, test_roundtrip);
        tcase_add_test(tc, test_idle_gives_back_file_pages);
        tcase_add_test(tc, test_results_wait_for_ready);
        tcase_add_test(tc, test_results_first_one_at_a_time);
        tcase_add_test(tc, test_nack_publishes_again);
        tcase_add_test(tc, test_reconnect_publishes_again);
        tcase_add_test(tc, test_ack_after_loss_drops_the_copy);
        tcase_add_test(tc, test_result_not_a_document_dropped);
        tcase_add_test(tc, test_result_store_fails_then_retried);
        tcase_add_test(tc, test_stop_mid_plan);
        tcase_add_test(tc, test_stop_while_checking);
        tcase_add_test(tc, test_every_plan_entry_names_its_plan);
        tcase_add_test(tc, test_cancel_queued_and_running);
        tcase_add_test(tc, test_cancel_while_checking);
        tcase_add_test(tc, test_cancel_changes_nothing);
        tcase_add_test(tc, test_cancel_unsigned_rejected);
        tcase_add_test(tc, test_checkpoint_when_idle);
        tcase_add_test(tc, test_checkpoint_fails);
        tcase_add_test(tc, test_checkpoint_syncfs_fails);
}

int main(void)
{
        return check_main_one("daemon-pump", "pump", setup, teardown, 60, add_tests);
}
