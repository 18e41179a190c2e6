/* Tests for the runner's hand-over of a finished plan: the result comes
 * first, the plan's files are removed after it on the plan's thread, the
 * runner stays busy (and a stop waits) until they are gone, and a plan
 * started meanwhile is accepted and runs once the removal is over. And for
 * runner_cancel_plan(): one result, ErrorCode 107, naming who asked and the
 * script that ran, after SIGTERM or, for a script that ignores it, SIGKILL
 * kill_grace later; and too late once the plan's result is made. And for
 * runner_run_command(), one command without a plan. The sandbox is off,
 * so that no cgroup or root is needed. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "test-lib.h"
#include "config/config.h"
#include "journal/journal.h"
#include "result/result.h"
#include "runner/runner-internal.h"
#include "runner/runner.h"
#include "util/fileio.h"
#include "util/macro.h"

#define PLAN_FMT                                                                                   \
        "{\"FormatVersion\": \"2.1.0\", \"ID\": \"%s\", \"Action\": \"Execute\","                  \
        " \"Body\": \"return echo().stdout\","                                                     \
        " \"Scripts\": {\"echo\": {\"Type\": \"Application\", \"Version\": \"1.0.0\","             \
        " \"EntryPoint\": \"f\", \"Files\": [], \"Options\": {\"captureStdout\": true}}},"         \
        " \"Files\": {\"f\": {\"Name\": \"echo.sh\", \"BodyType\": \"Text\","                      \
        " \"Body\": \"#!/bin/sh\\nd=${PWD%%/*}\\necho %s ${d##*/}\\n\"}}}"

typedef struct Fixture {
        uv_loop_t loop;
        Config *cfg;
        Runner *runner;
        char storage[64];
        /* What the callbacks saw. */
        int n_done;
        int n_idle;
        char bodies[2][32];
        bool busy_in_done[2];
        int start_rc; /* the second plan's runner_start(), from the first done */
        bool start_second;
        /* The cancel tests. */
        uv_timer_t poll;
        char marker[128]; /* the script writes its pid here once it runs */
        json_t *result;   /* the one result */
        int cancel_rc[3]; /* runner_cancel_plan(): unknown ID, the plan, again */
        char *during;
        uint64_t cancel_ms; /* when the cancel was asked, and the result came */
        uint64_t done_ms;
} Fixture;

static Fixture fx;

static json_t *plan_new(const char *id, const char *word)
{
        char text[1024];

        snprintf(text, sizeof(text), PLAN_FMT, id, word);
        return json_loads(text, 0, NULL);
}

static bool exists(const char *id)
{
        char path[256];
        struct stat st;

        snprintf(path, sizeof(path), "%s/files/%s", fx.storage, id);
        return lstat(path, &st) == 0;
}

static void on_done(Runner *r, json_t *result, void *userdata)
{
        int k = fx.n_done++;
        const json_t *body = json_object_get(result, "Body");

        ck_assert_int_lt(k, 2);
        ck_assert_int_eq(json_integer_value(json_object_get(result, "ErrorCode")), 0);
        snprintf(fx.bodies[k], sizeof(fx.bodies[k]), "%s",
                 json_is_string(body) ? json_string_value(body) : "?");
        fx.busy_in_done[k] = runner_busy(r);
        json_decref(result);
        if (k == 0 && fx.start_second) {
                _cleanup_json_ json_t *plan = plan_new("second", "two");

                /* The first plan's thread may still be removing its files:
                 * the start is accepted all the same. */
                fx.start_rc = runner_start(r, plan, NULL, NULL, on_done, (void *)"second");
        }
}

static void on_idle(Runner *r, void *userdata)
{
        fx.n_idle++;
        /* Idle means idle: nothing left to remove. */
        ck_assert(!runner_busy(r));
        ck_assert(!exists("first"));
        if (fx.start_second)
                ck_assert(!exists("second"));
}

static void setup(void)
{
        char *warning = NULL, *error = NULL;

        memset(&fx, 0, sizeof(fx));
        snprintf(fx.storage, sizeof(fx.storage), "/tmp/test-runner.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(fx.storage));
        ck_assert_int_eq(config_new_default(&fx.cfg), 0);
        fx.cfg->sandbox.enabled = false;
        ck_assert_int_eq(uv_loop_init(&fx.loop), 0);
        ck_assert_int_eq(runner_new(&fx.loop, fx.cfg, fx.storage, &fx.runner, &warning, &error), 0);
        free(warning);
        free(error);
        runner_set_idle_cb(fx.runner, on_idle, NULL);
}

static void teardown(void)
{
        char path[256];

        runner_free(fx.runner);
        uv_run(&fx.loop, UV_RUN_DEFAULT);
        snprintf(path, sizeof(path), "%s/pid", fx.storage);
        (void)unlink(path);
        ck_assert_int_eq(uv_loop_close(&fx.loop), 0);
        config_free(fx.cfg);
        snprintf(path, sizeof(path), "%s/files", fx.storage);
        (void)rmdir(path);
        ck_assert_int_eq(rmdir(fx.storage), 0);
}

/* One plan: its result arrives while the runner is still busy with its
 * files, which are gone when the loop ends and the idle callback ran. */
START_TEST(test_result_before_removal)
{
        _cleanup_json_ json_t *plan = plan_new("first", "one");

        ck_assert_int_eq(runner_start(fx.runner, plan, NULL, NULL, on_done, (void *)"first"), 0);
        ck_assert(runner_busy(fx.runner));
        ck_assert_int_eq(uv_run(&fx.loop, UV_RUN_DEFAULT), 0);
        ck_assert_int_eq(fx.n_done, 1);
        ck_assert_str_eq(fx.bodies[0], "one first");
        /* Still busy in its done callback: the thread had the files to
         * remove yet (whether it had begun is up to the scheduler). */
        ck_assert(fx.busy_in_done[0]);
        ck_assert_int_eq(fx.n_idle, 1);
        ck_assert(!runner_busy(fx.runner));
        ck_assert(!exists("first"));
}
END_TEST

/* A second plan started from the first one's done callback is accepted,
 * runs after the first one's files are gone, and both answer. */
START_TEST(test_start_while_removing)
{
        _cleanup_json_ json_t *plan = plan_new("first", "one");

        fx.start_second = true;
        ck_assert_int_eq(runner_start(fx.runner, plan, NULL, NULL, on_done, (void *)"first"), 0);
        /* A plan that has not answered yet is running: no second one. */
        ck_assert_int_eq(runner_start(fx.runner, plan, NULL, NULL, on_done, (void *)"first"),
                         -EBUSY);
        ck_assert_int_eq(uv_run(&fx.loop, UV_RUN_DEFAULT), 0);
        ck_assert_int_eq(fx.start_rc, 0);
        ck_assert_int_eq(fx.n_done, 2);
        /* Each script ran in a files directory of its own (its last
         * component is the plan's ID). Whether the second one was still
         * there in its done callback is up to the scheduler, as for the
         * first in test_result_before_removal. */
        ck_assert_str_eq(fx.bodies[0], "one first");
        ck_assert_str_eq(fx.bodies[1], "two second");
        ck_assert_int_eq(fx.n_idle, 1);
        ck_assert(!runner_busy(fx.runner));
}
END_TEST

static void on_cancel_done(Runner *r, json_t *result, void *userdata)
{
        ck_assert_ptr_null(fx.result);
        fx.result = result;
        fx.done_ms = uv_now(&fx.loop);
}

/* Once the script has written its pid, cancel: first an ID that does not
 * run, then the plan, then the plan again. */
static void on_poll(uv_timer_t *t)
{
        FILE *f = fopen(fx.marker, "re");
        int pid = 0;

        if (!f)
                return;
        if (fscanf(f, "%d", &pid) != 1) {
                fclose(f);
                return;
        }
        fclose(f);
        uv_timer_stop(t);
        uv_close((uv_handle_t *)t, NULL);
        fx.cancel_rc[0] = runner_cancel_plan(fx.runner, "other", "a test", NULL);
        fx.cancel_ms = uv_now(&fx.loop);
        fx.cancel_rc[1] = runner_cancel_plan(fx.runner, "slow", "a test", &fx.during);
        fx.cancel_rc[2] = runner_cancel_plan(fx.runner, "slow", "a test", NULL);
}

/* A plan whose script writes its pid to fx.marker and then waits; with
 * ignore_term it ignores SIGTERM. Cancelled as on_poll does it. */
static void run_cancel(bool ignore_term)
{
        char script[512], text[2048];
        _cleanup_json_ json_t *plan = NULL;
        const json_t *body;

        snprintf(fx.marker, sizeof(fx.marker), "%s/pid", fx.storage);
        snprintf(script, sizeof(script), "#!/bin/sh\n%secho $$ > %s\necho started\nsleep 30\n",
                 ignore_term ? "trap '' TERM\n" : "", fx.marker);
        plan = json_pack("{s:s, s:s, s:s, s:s, s:{s:{s:s, s:s, s:s, s:[], s:{s:b}}},"
                         " s:{s:{s:s, s:s, s:s}}}",
                         "FormatVersion", "2.1.0", "ID", "slow", "Action", "Execute", "Body",
                         "return wait().stdout", "Scripts", "wait", "Type", "Application",
                         "Version", "1.0.0", "EntryPoint", "f", "Files", "Options", "captureStdout",
                         1, "Files", "f", "Name", "wait.sh", "BodyType", "Text", "Body", script);
        ck_assert_ptr_nonnull(plan);
        fx.cfg->agent.kill_grace = 1;
        ck_assert_int_eq(uv_timer_init(&fx.loop, &fx.poll), 0);
        ck_assert_int_eq(uv_timer_start(&fx.poll, on_poll, 20, 20), 0);
        /* The daemon gives the plan's ID as the SourceID, as here. */
        ck_assert_int_eq(runner_start(fx.runner, plan, json_object_get(plan, "ID"), NULL,
                                      on_cancel_done, NULL),
                         0);
        ck_assert_int_eq(uv_run(&fx.loop, UV_RUN_DEFAULT), 0);

        ck_assert_int_eq(fx.cancel_rc[0], -ESRCH);
        ck_assert_int_eq(fx.cancel_rc[1], 0);
        ck_assert_int_eq(fx.cancel_rc[2], RUNNER_CANCEL_ENDING);
        ck_assert_str_eq(fx.during, "script wait");
        ck_assert_ptr_nonnull(fx.result);
        ck_assert_int_eq(json_integer_value(json_object_get(fx.result, "ErrorCode")),
                         RESULT_CODE_CANCELLED);
        body = json_object_get(fx.result, "Body");
        ck_assert_str_eq(json_string_value(json_object_get(body, "Message")),
                         "The plan was cancelled by a test during script wait");
        /* What the script wrote before it was stopped. */
        ck_assert_str_eq(json_string_value(json_object_get(json_object_get(body, "AdditionalInfo"),
                                                           "stdout")),
                         "started");
        snprintf(text, sizeof(text), "%s",
                 json_string_value(json_object_get(fx.result, "SourceID")));
        ck_assert_str_eq(text, "slow");
        json_decref(fx.result);
        free(fx.during);
}

/* A script that ends on SIGTERM. (Its sleep, orphaned, counts in the
 * process group until init reaps it, which a container's init may leave
 * to the SIGKILL kill_grace later: no lower bound here.) */
START_TEST(test_cancel_running)
{
        run_cancel(false);
        ck_assert_uint_lt(fx.done_ms - fx.cancel_ms, 5000);
}
END_TEST

/* A script that ignores SIGTERM is killed kill_grace (1 s) later. */
START_TEST(test_cancel_ignores_term)
{
        run_cancel(true);
        ck_assert_uint_ge(fx.done_ms - fx.cancel_ms, 950);
        ck_assert_uint_lt(fx.done_ms - fx.cancel_ms, 5000);
}
END_TEST

/* A cancel that comes once the plan's thread has made its result, before
 * the loop has taken it: too late, the result stands (ErrorCode 0), and the
 * cancel must say so (RUNNER_CANCEL_ENDING), not promise ErrorCode 107. */
START_TEST(test_cancel_after_result)
{
        _cleanup_json_ json_t *plan =
                json_pack("{s:s, s:s, s:s, s:s, s:{}, s:{}}", "FormatVersion", "2.1.0", "ID",
                          "quick", "Action", "Execute", "Body", "return 7", "Scripts", "Files");
        bool ready = false;

        ck_assert_ptr_nonnull(plan);
        ck_assert_int_eq(runner_start(fx.runner, plan, json_object_get(plan, "ID"), NULL,
                                      on_cancel_done, NULL),
                         0);
        /* The loop does not run: the result waits for it. */
        for (int i = 0; i < 4000 && !ready; i++) {
                uv_mutex_lock(&fx.runner->lock);
                ready = fx.runner->job && fx.runner->job->result_ready;
                uv_mutex_unlock(&fx.runner->lock);
                if (!ready)
                        usleep(5000);
        }
        ck_assert(ready);
        ck_assert_int_eq(runner_cancel_plan(fx.runner, "quick", "a test", NULL),
                         RUNNER_CANCEL_ENDING);
        ck_assert_int_eq(uv_run(&fx.loop, UV_RUN_DEFAULT), 0);
        ck_assert_ptr_nonnull(fx.result);
        ck_assert_int_eq(json_integer_value(json_object_get(fx.result, "ErrorCode")), 0);
        ck_assert_int_eq(json_integer_value(json_object_get(fx.result, "Body")), 7);
        json_decref(fx.result);
}
END_TEST

/* Nothing runs: nothing to cancel. */
START_TEST(test_cancel_idle)
{
        ck_assert_int_eq(runner_cancel_plan(fx.runner, "slow", "a test", NULL), -ESRCH);
}
END_TEST

/* --- durable calls (runner-durable.h) ---------------------------------- */

/* A Body that draws a UUID, a hash (the hash key), a file's
 * content, and calls a script that counts its starts. */
#define DURABLE_FMT                                                                                \
        "{\"FormatVersion\": \"2.1.0\", \"ID\": \"d\", \"Action\": \"Execute\","                   \
        " \"Body\": \"import uuid\\nu = str(uuid.uuid4())\\n"                                      \
        "s = hash('abc')\\n"                                                                       \
        "f = open('%s/input').read()\\n"                                                           \
        "x = %s().stdout.strip()\\nreturn [u, s, f, x]\","                                         \
        " \"Scripts\": {\"%s\": {\"Type\": \"Application\", \"Version\": \"1.0.0\","               \
        " \"EntryPoint\": \"f\", \"Files\": [], \"Options\": {\"captureStdout\": true}}},"         \
        " \"Files\": {\"f\": {\"Name\": \"c.sh\", \"BodyType\": \"Text\","                         \
        " \"Body\": \"#!/bin/sh\\necho x >> %s/count\\necho ran\\n\"}}}"

static json_t *durable_result;

static void on_durable_done(Runner *r, json_t *result, void *userdata)
{
        json_decref(durable_result);
        durable_result = result;
}

/* What seals the log of entry "entry": the key of a journal in the
 * storage, as the daemon hands it (journal-calls.h). */
static JournalCallsKey *entry_key(void)
{
        Journal *j = NULL;
        JournalCallsKey *k = NULL;

        ck_assert_int_eq(journal_open(fx.storage, NULL, &j), 0);
        ck_assert_int_eq(journal_calls_key(j, "entry", &k), 0);
        ck_assert(journal_calls_key_sealed(k));
        journal_free(j);
        return k;
}

/* The call log's flushes (journal-calls.c calls fdatasync() on it, and
 * nothing else in this program does on a file of that name): how many,
 * and the file's length at the last one, which is what a power loss
 * leaves of it. The plan thread writes these; the loop thread reads them
 * once the plan's result came, under the runner's lock. */
static unsigned calls_flushes;
static off_t calls_durable;

int fdatasync(int fd)
{
        char link[64], target[PATH_MAX];
        struct stat st;
        ssize_t n;

        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, target, sizeof(target) - 1);
        if (n > 6)
                target[n] = '\0'; /* readlink() does not end it */
        if (n > 6 && streq(target + n - 6, "/calls") && fstat(fd, &st) == 0) {
                calls_flushes++;
                calls_durable = st.st_size;
        }
        return (int)syscall(SYS_fdatasync, fd);
}

/* A journal with the write-ahead log whose entry wal_ts the plan runs
 * from, as the daemon hands it (NULL: "entry", of entry_key()). */
static Journal *wal_journal;
static char wal_ts[JOURNAL_TS_MAX];

static json_t *run_durable_plan(const char *text)
{
        char dir[128];
        JournalCallsKey *key = NULL;
        _cleanup_json_ json_t *plan = json_loads(text, 0, NULL);

        ck_assert_ptr_nonnull(plan);
        snprintf(dir, sizeof(dir), "%s/entry", fx.storage);
        if (wal_journal) {
                snprintf(dir, sizeof(dir), "%s/plans/%s", fx.storage, wal_ts);
                ck_assert_int_eq(journal_calls_key(wal_journal, wal_ts, &key), 0);
        } else {
                key = entry_key();
        }
        ck_assert_int_eq(runner_set_call_log(fx.runner, dir, key), 0);
        ck_assert_int_eq(runner_start(fx.runner, plan, NULL, NULL, on_durable_done, NULL), 0);
        ck_assert_int_eq(uv_run(&fx.loop, UV_RUN_DEFAULT), 0);
        ck_assert_ptr_nonnull(durable_result);
        return json_object_get(durable_result, "Body");
}

static json_t *run_durable(const char *script)
{
        char text[2048];

        snprintf(text, sizeof(text), DURABLE_FMT, fx.storage, script, script, fx.storage);
        return run_durable_plan(text);
}

static void put(const char *name, const char *text)
{
        char path[128];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", fx.storage, name);
        f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fputs(text, f);
        fclose(f);
}

static int starts(void)
{
        char path[128], line[16];
        int n = 0;
        FILE *f;

        snprintf(path, sizeof(path), "%s/count", fx.storage);
        f = fopen(path, "r");
        if (!f)
                return 0;
        while (fgets(line, sizeof(line), f))
                n++;
        fclose(f);
        return n;
}

/* Cut the call log's last record, as a kill during the call leaves it. */
static void cut_last_record(void)
{
        char path[128];
        char *text = NULL, *last;
        size_t len;

        snprintf(path, sizeof(path), "%s/entry/calls", fx.storage);
        ck_assert_int_eq(file_read_all(path, 1 << 20, &text, &len), 0);
        last = strstr(text, "\nE ");
        ck_assert_ptr_nonnull(last);
        ck_assert_int_eq(truncate(path, last + 1 - text), 0);
        free(text);
}

static void durable_teardown(void)
{
        char path[128];

        json_decref(durable_result);
        durable_result = NULL;
        for (const char *const *n = (const char *const[]){"entry/calls", "input", "count", "boot",
                                                          "journal.log", NULL};
             *n; n++) {
                snprintf(path, sizeof(path), "%s/%s", fx.storage, *n);
                (void)unlink(path);
        }
        snprintf(path, sizeof(path), "%s/entry", fx.storage);
        (void)rmdir(path);
        unsetenv("MURANOAGENT_BOOT_ID_FILE");
        /* The journal entry_key() opened. */
        snprintf(path, sizeof(path), "%s/plans", fx.storage);
        (void)rm_rf(path);
        snprintf(path, sizeof(path), "%s/journal.key", fx.storage);
        (void)unlink(path);
}

/* Run again on its call log, the Body gets what it got: the same UUID,
 * hash, file content (though the file changed) and script result, and the
 * script does not start again. */
START_TEST(test_durable_replay)
{
        char dir[128];
        _cleanup_free_ char *first = NULL, *second = NULL;

        snprintf(dir, sizeof(dir), "%s/entry", fx.storage);
        ck_assert_int_eq(mkdir(dir, 0700), 0);
        put("input", "before");
        first = json_dumps(run_durable("c"), JSON_COMPACT);
        ck_assert_int_eq(starts(), 1);
        ck_assert_ptr_nonnull(strstr(first, "\"before\",\"ran\"]"));
        put("input", "after");
        second = json_dumps(run_durable("c"), JSON_COMPACT);
        ck_assert_str_eq(second, first);
        ck_assert_int_eq(starts(), 1);
        durable_teardown();
}
END_TEST

/* A plan its call log ends: a call that has a start and no end was
 * running when the agent died (103 naming it, not run again), and a Body
 * that calls another script than the log holds diverged (108 naming both).
 * The script never starts a second time. */
static const struct {
        const char *again; /* the script the second run's Body calls */
        bool cut;          /* cut the log's end record first */
        int code;
        const char *says;
} end_cases[] = {
        {"c", true, 103, "during call 0, c(), which was not run again"},
        {"other", false, 108, "it asked for call 0, other() where the call log"},
};

START_TEST(test_durable_ends)
{
        char dir[128];
        const json_t *body;

        snprintf(dir, sizeof(dir), "%s/entry", fx.storage);
        ck_assert_int_eq(mkdir(dir, 0700), 0);
        put("input", "x");
        run_durable("c");
        if (end_cases[_i].cut)
                cut_last_record();
        body = run_durable(end_cases[_i].again);
        ck_assert_int_eq(json_integer_value(json_object_get(durable_result, "ErrorCode")),
                         end_cases[_i].code);
        ck_assert_ptr_nonnull(
                strstr(json_string_value(json_object_get(body, "Message")), end_cases[_i].says));
        ck_assert_int_eq(starts(), 1);
        durable_teardown();
}
END_TEST

/* A Body of n calls of script c, idempotent or not, that returns what
 * each printed. */
#define CALLS_FMT                                                                                  \
        "{\"FormatVersion\": \"2.1.0\", \"ID\": \"d\", \"Action\": \"Execute\","                   \
        " \"Body\": \"r = []\\nfor i in range(%d):\\n    r.append(c().stdout.strip())\\n"          \
        "return r\", \"Scripts\": {\"c\": {\"Type\": \"Application\", \"Version\": \"1.0.0\","     \
        " \"EntryPoint\": \"f\", \"Files\": [],"                                                   \
        " \"Options\": {\"captureStdout\": true, \"idempotent\": %s}}},"                           \
        " \"Files\": {\"f\": {\"Name\": \"c.sh\", \"BodyType\": \"Text\","                         \
        " \"Body\": \"#!/bin/sh\\necho x >> %s/count\\necho ran\\n\"}}}"

/* The boot the next run sees (MURANOAGENT_BOOT_ID_FILE). */
static void set_boot(const char *id)
{
        char path[128];

        put("boot", id);
        snprintf(path, sizeof(path), "%s/boot", fx.storage);
        ck_assert_int_eq(setenv("MURANOAGENT_BOOT_ID_FILE", path, 1), 0);
}

/* Run the Body of n calls, counting the call log's flushes. */
static json_t *run_calls(int n, bool idempotent)
{
        char text[2048];

        snprintf(text, sizeof(text), CALLS_FMT, n, idempotent ? "true" : "false", fx.storage);
        calls_flushes = 0;
        return run_durable_plan(text);
}

/* The call log's flushes: one per call, its start's; the end record is
 * made durable by the next start's flush, or needs none once the result is
 * stored. An idempotent script's end is flushed too (a lost one would run
 * the finished call again). */
static const struct {
        int calls;
        bool idempotent;
        unsigned flushes;
} flush_cases[] = {
        {1, false, 1},
        {3, false, 3},
        {1, true, 2},
        {3, true, 6},
};

START_TEST(test_durable_flushes)
{
        char dir[128];
        const json_t *body;

        snprintf(dir, sizeof(dir), "%s/entry", fx.storage);
        ck_assert_int_eq(mkdir(dir, 0700), 0);
        body = run_calls(flush_cases[_i].calls, flush_cases[_i].idempotent);
        ck_assert_int_eq(json_integer_value(json_object_get(durable_result, "ErrorCode")), 0);
        ck_assert_uint_eq(json_array_size(body), (size_t)flush_cases[_i].calls);
        ck_assert_int_eq(starts(), flush_cases[_i].calls);
        ck_assert_uint_eq(calls_flushes, flush_cases[_i].flushes);
        durable_teardown();
}
END_TEST

/* A power loss right after the Body's last call: the call log keeps what
 * its last flush covered (a torn rest is cut at open: test-journal-calls.c)
 * and the VM boots again. The last call's end was not flushed: the plan is
 * answered with 103 naming that call, which does not run again; the calls
 * before it are replayed, their ends made durable by the next start's
 * flush. An idempotent script's end was flushed: the plan resumes whole. */
static const struct {
        int calls;
        bool idempotent;
        int code;
        const char *says;
} loss_cases[] = {
        {1, false, 103, "the VM rebooted during call 0, c(), which was not run again"},
        {3, false, 103, "the VM rebooted during call 2, c(), which was not run again"},
        {3, true, 0, NULL},
};

START_TEST(test_durable_power_loss)
{
        char dir[128], path[128];
        const json_t *body;

        snprintf(dir, sizeof(dir), "%s/entry", fx.storage);
        ck_assert_int_eq(mkdir(dir, 0700), 0);
        set_boot("boot-1");
        run_calls(loss_cases[_i].calls, loss_cases[_i].idempotent);
        ck_assert_int_eq(json_integer_value(json_object_get(durable_result, "ErrorCode")), 0);
        snprintf(path, sizeof(path), "%s/entry/calls", fx.storage);
        ck_assert_int_eq(truncate(path, calls_durable), 0);
        set_boot("boot-2");
        body = run_calls(loss_cases[_i].calls, loss_cases[_i].idempotent);
        ck_assert_int_eq(json_integer_value(json_object_get(durable_result, "ErrorCode")),
                         loss_cases[_i].code);
        if (loss_cases[_i].says)
                ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(body, "Message")),
                                             loss_cases[_i].says));
        else
                ck_assert_uint_eq(json_array_size(body), (size_t)loss_cases[_i].calls);
        ck_assert_int_eq(starts(), loss_cases[_i].calls);
        durable_teardown();
}
END_TEST

/* With the journal's write-ahead log: the call log's records go through
 * journal.log and `calls` is never flushed; after a crash (journal.log as
 * the agent left it, without the checkpoint of a clean stop) whose power
 * loss took `calls`, the open gives it back from the log, and the plan
 * resumes whole: no call runs again, the Body gets what it got. */
START_TEST(test_durable_wal)
{
        JournalOptions o = JOURNAL_OPTIONS_DEFAULT;
        _cleanup_free_ char *first = NULL, *second = NULL, *log = NULL;
        char path[256];
        size_t log_len = 0;
        FILE *f;

        o.wal = true;
        ck_assert_int_eq(journal_open(fx.storage, &o, &wal_journal), 0);
        ck_assert_int_eq(journal_put_plan(wal_journal, "{}", 2, NULL, 0, "d", NULL, wal_ts), 0);
        first = json_dumps(run_calls(3, false), JSON_COMPACT);
        ck_assert_int_eq(json_integer_value(json_object_get(durable_result, "ErrorCode")), 0);
        ck_assert_uint_eq(calls_flushes, 0);
        snprintf(path, sizeof(path), "%s/journal.log", fx.storage);
        ck_assert_int_eq(file_read_all(path, 16 << 20, &log, &log_len), 0);
        journal_free(wal_journal);
        f = fopen(path, "r+");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(log, 1, log_len, f), log_len);
        fclose(f);
        snprintf(path, sizeof(path), "%s/plans/%s/calls", fx.storage, wal_ts);
        ck_assert_int_eq(unlink(path), 0);

        ck_assert_int_eq(journal_open(fx.storage, &o, &wal_journal), 0);
        /* PLAN, the hash key drawn, each call's start and end. */
        ck_assert_uint_eq(journal_open_report(wal_journal)->n_wal_records, 8);
        second = json_dumps(run_calls(3, false), JSON_COMPACT);
        ck_assert_int_eq(json_integer_value(json_object_get(durable_result, "ErrorCode")), 0);
        ck_assert_str_eq(second, first);
        ck_assert_int_eq(starts(), 3);
        wal_journal = journal_free(wal_journal);
        durable_teardown();
}
END_TEST

/* What a power loss may leave of the call log of a Body of three calls,
 * whatever it takes: each record cut at its start, after its first byte,
 * in its middle and before its last byte, and the whole log; resumed on
 * another boot each time. A call whose start is whole in what is left
 * never runs again unless its script is idempotent: the plan is answered
 * with 103 naming the last started call when its end is gone, and else
 * goes on with the recorded results (a call whose end is whole is never
 * run again, idempotent or not). Never 108, never a result of another
 * length. */
START_TEST(test_durable_every_prefix)
{
        bool idempotent = _i == 1;
        char dir[128], path[128], boot[32], says[64];
        _cleanup_free_ char *log = NULL;
        size_t len = 0, cuts[64], n_cuts = 0, start[16], end[16], n_recs = 0;
        char kinds[16];
        const json_t *body;

        snprintf(dir, sizeof(dir), "%s/entry", fx.storage);
        ck_assert_int_eq(mkdir(dir, 0700), 0);
        set_boot("boot-0");
        run_calls(3, idempotent);
        ck_assert_int_eq(json_integer_value(json_object_get(durable_result, "ErrorCode")), 0);
        snprintf(path, sizeof(path), "%s/entry/calls", fx.storage);
        ck_assert_int_eq(file_read_all(path, 1 << 20, &log, &len), 0);

        /* The records: "<kind> <seq> <length> <mac>\n<payload>\n". */
        for (size_t at = 0; at < len; n_recs++) {
                const char *nl = memchr(log + at, '\n', len - at);
                unsigned long plen;

                ck_assert_ptr_nonnull(nl);
                ck_assert_uint_lt(n_recs, ELEMENTSOF(start));
                ck_assert_int_eq(sscanf(log + at, "%c %*u %lu", &kinds[n_recs], &plen), 2);
                start[n_recs] = at;
                at = (size_t)(nl - log) + 1 + plen + 1;
                end[n_recs] = at;
        }
        ck_assert_uint_eq(end[n_recs - 1], len);
        for (size_t i = 0; i < n_recs; i++) {
                size_t k = end[i] - start[i];
                size_t at[] = {start[i], start[i] + 1, start[i] + k / 2, end[i] - 1};

                for (size_t j = 0; j < ELEMENTSOF(at); j++)
                        cuts[n_cuts++] = at[j];
        }
        cuts[n_cuts++] = len;

        for (size_t c = 0; c < n_cuts; c++) {
                int whole_s = 0, whole_e = 0, want_starts, code;
                _cleanup_fclose_ FILE *f = NULL;

                for (size_t i = 0; i < n_recs && end[i] <= cuts[c]; i++) {
                        whole_s += kinds[i] == 'S';
                        whole_e += kinds[i] == 'E';
                }
                f = fopen(path, "w");
                ck_assert_ptr_nonnull(f);
                ck_assert_uint_eq(fwrite(log, 1, cuts[c], f), cuts[c]);
                f = (fclose(f), NULL);
                snprintf(boot, sizeof(boot), "boot-%zu", c + 1);
                set_boot(boot);
                snprintf(path, sizeof(path), "%s/count", fx.storage);
                (void)unlink(path);
                snprintf(path, sizeof(path), "%s/entry/calls", fx.storage);

                body = run_calls(3, idempotent);
                code = (int)json_integer_value(json_object_get(durable_result, "ErrorCode"));
                if (!idempotent && whole_s > whole_e) {
                        snprintf(says, sizeof(says), "during call %d, c(), which was not run",
                                 whole_s - 1);
                        ck_assert_msg(code == 103, "cut at %zu of %zu: ErrorCode %d", cuts[c], len,
                                      code);
                        ck_assert_ptr_nonnull(
                                strstr(json_string_value(json_object_get(body, "Message")), says));
                        want_starts = 0;
                } else {
                        ck_assert_msg(code == 0, "cut at %zu of %zu: ErrorCode %d", cuts[c], len,
                                      code);
                        ck_assert_uint_eq(json_array_size(body), 3);
                        want_starts = 3 - (idempotent ? whole_e : whole_s);
                }
                ck_assert_msg(starts() == want_starts, "cut at %zu of %zu: %d calls ran, not %d",
                              cuts[c], len, starts(), want_starts);
        }
        durable_teardown();
}
END_TEST

/* Rewrite entry/calls as a process without the key can: every record's
 * "ran" made "FORGED" and framed again with a valid CRC-32 (as the log
 * was framed before seals) or the plain SHA-256 chain of a journal
 * without seals. */
static void plant(bool crc)
{
        char path[128];
        _cleanup_free_ char *text = NULL;
        unsigned char prev[JOURNAL_CALLS_MAC_LEN] = {0}, mac[JOURNAL_CALLS_MAC_LEN];
        JournalCallsKey *k = NULL;
        size_t len, at = 0;
        FILE *f;

        snprintf(path, sizeof(path), "%s/entry/calls", fx.storage);
        ck_assert_int_eq(file_read_all(path, 1 << 20, &text, &len), 0);
        ck_assert_int_eq(journal_calls_key(NULL, "entry", &k), 0);
        f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        while (at < len) {
                _cleanup_free_ char *payload = NULL, *head = NULL;
                const char *p = strchr(text + at, '\n') + 1, *ran;
                size_t seq, plen;
                char kind;

                ck_assert_int_eq(sscanf(text + at, "%c %zu %zu", &kind, &seq, &plen), 3);
                ran = memmem(p, plen, "\"ran", 4);
                ck_assert_int_ge(
                        asprintf(&payload, "%.*s%s%.*s", ran ? (int)(ran + 1 - p) : (int)plen, p,
                                 ran ? "FORGED" : "", ran ? (int)(plen - (size_t)(ran + 4 - p)) : 0,
                                 ran ? ran + 4 : ""),
                        0);
                ck_assert_int_ge(asprintf(&head, "%c %zu %zu", kind, seq, strlen(payload)), 0);
                if (crc) {
                        fprintf(f, "%s %08x\n%s\n", head,
                                test_crc32(test_crc32(0, head, strlen(head)), payload,
                                           strlen(payload)),
                                payload);
                } else {
                        journal_calls_mac(k, prev, head, strlen(head), payload, strlen(payload),
                                          mac);
                        fprintf(f, "%s ", head);
                        for (size_t i = 0; i < sizeof(mac); i++)
                                fprintf(f, "%02x", mac[i]);
                        fprintf(f, "\n%s\n", payload);
                        memcpy(prev, mac, sizeof(mac));
                }
                at = (size_t)(p - text) + plen + 1;
        }
        fclose(f);
        journal_calls_key_free(k);
}

/* A call log planted or altered by a process without the journal's key
 * never answers for the script: the log is cut and the script runs (a
 * log that frames as nothing of the agent's), or the plan ends as 103
 * naming the forged record; the forged result is never published. */
START_TEST(test_durable_planted)
{
        bool crc = _i == 0;
        _cleanup_free_ char *body = NULL;
        char dir[128];
        int code;

        snprintf(dir, sizeof(dir), "%s/entry", fx.storage);
        ck_assert_int_eq(mkdir(dir, 0700), 0);
        put("input", "x");
        run_durable("c");
        ck_assert_int_eq(starts(), 1);
        plant(crc);
        body = json_dumps(run_durable("c"), JSON_COMPACT);
        code = (int)json_integer_value(json_object_get(durable_result, "ErrorCode"));
        ck_assert_msg(!strstr(body, "FORGED"), "a forged result published: %s", body);
        if (crc) {
                ck_assert_int_eq(starts(), 2);
                ck_assert_ptr_nonnull(strstr(body, "\"ran"));
        } else {
                ck_assert_int_eq(code, 103);
                ck_assert_int_eq(starts(), 1);
                ck_assert_ptr_nonnull(strstr(body, "the call log is forged at record 0"));
        }
        durable_teardown();
}
END_TEST

/* runner_run_command(): one command without a plan, on the loop thread,
 * its output and exit code kept; with the sandbox off nothing contains it,
 * and the answer says so. A program that cannot start is a failure of the
 * result, not of the call. While a plan runs, the runner is busy. */
START_TEST(test_run_command)
{
        const char *argv[] = {"/bin/sh", "-c", "echo out; echo err >&2; exit 3", NULL};
        const char *missing[] = {"/nonexistent/program", NULL};
        ProcRequest req = {.argv = argv,
                           .cwd = fx.storage,
                           .capture_stdout = true,
                           .capture_stderr = true,
                           .what = "script t"};
        _cleanup_json_ json_t *plan = plan_new("first", "one");
        RunnerContainment held = {.cgroup = true, .session = true};
        ProcResult res = {0};

        ck_assert_int_eq(runner_run_command(fx.runner, "cmd-1", &req, &res, &held), 0);
        ck_assert_int_eq(res.exit_code, 3);
        ck_assert_str_eq(res.out, "out\n");
        ck_assert_str_eq(res.err, "err\n");
        ck_assert_ptr_null(res.failure);
        ck_assert(!held.cgroup);
        ck_assert(!held.session);
        proc_result_clear(&res);

        req.argv = missing;
        ck_assert_int_eq(runner_run_command(fx.runner, "cmd-2", &req, &res, NULL), 0);
        ck_assert_int_eq(res.failure_kind, PROC_FAIL_SPAWN);
        ck_assert_ptr_nonnull(res.failure);
        proc_result_clear(&res);

        req.argv = argv;
        ck_assert_int_eq(runner_start(fx.runner, plan, NULL, NULL, on_done, (void *)"first"), 0);
        ck_assert_int_eq(runner_run_command(fx.runner, "cmd-3", &req, &res, NULL), -EBUSY);
        ck_assert_int_eq(uv_run(&fx.loop, UV_RUN_DEFAULT), 0);
        ck_assert_int_eq(fx.n_done, 1);
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_test(tc, test_result_before_removal);
        tcase_add_test(tc, test_start_while_removing);
        tcase_add_test(tc, test_cancel_running);
        tcase_add_test(tc, test_cancel_ignores_term);
        tcase_add_test(tc, test_cancel_idle);
        tcase_add_test(tc, test_durable_replay);
        tcase_add_loop_test(tc, test_durable_ends, 0, (int)ELEMENTSOF(end_cases));
        tcase_add_loop_test(tc, test_durable_flushes, 0, (int)ELEMENTSOF(flush_cases));
        tcase_add_loop_test(tc, test_durable_power_loss, 0, (int)ELEMENTSOF(loss_cases));
        tcase_add_loop_test(tc, test_durable_every_prefix, 0, 2);
        tcase_add_test(tc, test_durable_wal);
        tcase_add_test(tc, test_cancel_after_result);
        tcase_add_loop_test(tc, test_durable_planted, 0, 2);
        tcase_add_test(tc, test_run_command);
}

int main(void)
{
        return check_main_one("runner", "handover", setup, teardown, 60, add_tests);
}
