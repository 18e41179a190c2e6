/* How long one trivial plan takes through the executor: a plan whose Body
 * calls one Application script that echoes,
 *
 *     Body: return echo().stdout          echo.sh: #!/bin/sh / echo hello
 *
 * run through the runner (agent/runner/runner.h) on a libuv loop with the
 * default configuration: the sandbox, cgroups as `auto` finds them,
 * the plan thread, the files laid out and removed again. It is compared, in
 * the same run and interleaved, with the baseline: a plain fork-exec of
 * `sh -c ./echo.sh` (posix_spawn of the same script in a directory on the
 * same file system, its stdout read through a pipe, then waitpid). Prints
 * the median and 99th percentile of both in milliseconds and the ratio of
 * the medians. Targets (issue 4): within 2x of the baseline and below 3 ms.
 * A third row, for explanation only, times what the file system alone
 * costs for the plan's file: writing and removing 22 bytes in DIR. A
 * fourth, interleaved with the others, runs the same plan with durable
 * calls (runner_set_call_log(): its one call and the values its Body draws
 * recorded in a call log in DIR, docs/daemon.md), the call log removed
 * after each: what durable calls cost a plan of one call.
 *
 *     build/bench/bench-exec [--config-file FILE] [N] [DIR]
 *
 * N runs of each (default 300) in a directory made below DIR (default
 * $TMPDIR, else /tmp); FILE replaces the defaults, to see what a sandbox
 * feature costs.
 *
 * Run it as root, as the agent runs: cgroups need it. The runner's log
 * lines go to /dev/null, so that a terminal's speed is not measured. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <jansson.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "bench-util.h"
#include "config/config.h"
#include "log/log.h"
#include "plan/plan.h"
#include "runner/runner.h"

#define TARGET_RATIO 2.0
#define TARGET_MS    3.0
#define WARMUP       10

static const char plan_text[] =
        "{\"FormatVersion\": \"2.1.0\", \"Version\": \"1.0.0\", \"Name\": \"bench\","
        " \"Body\": \"return echo().stdout\","
        " \"Scripts\": {\"echo\": {\"Type\": \"Application\", \"Version\": \"1.0.0\","
        " \"EntryPoint\": \"echoFile\", \"Files\": [],"
        " \"Options\": {\"captureStdout\": true, \"captureStderr\": true}}},"
        " \"Files\": {\"echoFile\": {\"BodyType\": \"Text\", \"Name\": \"echo.sh\","
        " \"Body\": \"#!/bin/sh\\necho hello\\n\"}},"
        " \"ID\": \"bench-exec\", \"Action\": \"Execute\"}";

static const char script_text[] = "#!/bin/sh\necho hello\n";

extern char **environ;

typedef struct Stats {
        double median_ms, p99_ms, max_ms;
} Stats;

typedef struct PlanState {
        json_t *result;
        double t_done;
} PlanState;

static Stats summarise(double *ms, size_t n)
{
        qsort(ms, n, sizeof(*ms), bench_cmp_double);
        return (Stats){.median_ms = ms[n / 2],
                       .p99_ms = ms[(size_t)((double)(n - 1) * 0.99)],
                       .max_ms = ms[n - 1]};
}

static void on_plan_done(Runner *r, json_t *result, void *userdata)
{
        PlanState *st = userdata;

        st->t_done = bench_now_ms();
        st->result = result;
}

/* One plan through the runner; with calls_dir, with durable calls whose
 * log is made there (and removed after). Returns its duration in ms, or a
 * negative value when it failed. */
/* The next plan's call log in calls_dir, framed as in a journal without
 * seals (a SHA-256 where the daemon's has the key's HMAC-SHA256: two
 * compressions less a record). */
static int calls_log(Runner *runner, const char *calls_dir)
{
        const char *ts = strrchr(calls_dir, '/');
        JournalCallsKey *key = NULL;
        int r = journal_calls_key(NULL, ts ? ts + 1 : calls_dir, &key);

        return r < 0 ? r : runner_set_call_log(runner, calls_dir, key);
}

static double run_plan(uv_loop_t *loop, Runner *runner, const json_t *plan, const char *calls_dir)
{
        PlanState st = {0};
        const json_t *code, *body;
        double t0;
        int rc;

        if (calls_dir && (mkdir(calls_dir, 0700) < 0 || calls_log(runner, calls_dir) < 0))
                return -1;
        t0 = bench_now_ms();
        rc = runner_start(runner, plan, NULL, NULL, on_plan_done, &st);
        if (rc < 0) {
                fprintf(stderr, "runner_start: %s\n", strerror(-rc));
                return -1;
        }
        uv_run(loop, UV_RUN_DEFAULT);
        if (!st.result)
                return -1;
        code = json_object_get(st.result, "ErrorCode");
        body = json_object_get(st.result, "Body");
        if (json_integer_value(code) != 0 || !json_is_string(body) ||
            strcmp(json_string_value(body), "hello") != 0) {
                char *text = json_dumps(st.result, 0);
                fprintf(stderr, "unexpected result: %s\n", text ? text : "?");
                free(text);
                json_decref(st.result);
                return -1;
        }
        json_decref(st.result);
        if (calls_dir) {
                char path[PATH_MAX];

                snprintf(path, sizeof(path), "%s/calls", calls_dir);
                if (unlink(path) < 0 || rmdir(calls_dir) < 0)
                        return -1;
        }
        return st.t_done - t0;
}

/* The baseline: sh -c ./echo.sh in dir, stdout through a pipe, stdin
 * /dev/null. Returns its duration in ms, or a negative value. */
static double run_baseline(const char *dir)
{
        static char sh[] = "/bin/sh", dash_c[] = "-c", command[] = "./echo.sh";
        char *const argv[] = {sh, dash_c, command, NULL};
        posix_spawn_file_actions_t fa;
        char buf[64];
        size_t got = 0;
        int fds[2], status = 0, rc;
        double t0 = bench_now_ms();
        ssize_t n;
        pid_t pid;

        if (pipe2(fds, O_CLOEXEC) < 0)
                return -1;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
        posix_spawn_file_actions_addchdir_np(&fa, dir);
        rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        close(fds[1]);
        if (rc != 0) {
                close(fds[0]);
                fprintf(stderr, "posix_spawn: %s\n", strerror(rc));
                return -1;
        }
        while ((n = read(fds[0], buf + got, sizeof(buf) - 1 - got)) > 0 ||
               (n < 0 && errno == EINTR))
                if (n > 0)
                        got += (size_t)n;
        close(fds[0]);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        buf[got] = '\0';
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || strcmp(buf, "hello\n") != 0) {
                fprintf(stderr, "baseline: unexpected output '%s' or status %d\n", buf, status);
                return -1;
        }
        return bench_now_ms() - t0;
}

/* What the file system alone costs: the runner writes the plan's file and
 * removes it again for every plan, which the baseline does not. This writes
 * and removes a file of the same size in dir, for the explanation row.
 * Returns its duration in ms, or a negative value. */
static double run_file_churn(const char *dir)
{
        size_t len = strlen(script_text);
        double t0 = bench_now_ms();
        char path[256];
        int fd;

        if ((size_t)snprintf(path, sizeof(path), "%s/churn", dir) >= sizeof(path))
                return -1;
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 || write(fd, script_text, len) != (ssize_t)len) {
                if (fd >= 0)
                        close(fd);
                return -1;
        }
        if (close(fd) < 0 || unlink(path) < 0)
                return -1;
        return bench_now_ms() - t0;
}

/* root/rel, or NULL when out of memory. */
static char *path_of(const char *root, const char *rel)
{
        char *p;

        return asprintf(&p, "%s/%s", root, rel) < 0 ? NULL : p;
}

/* The baseline's directory: a script folder like the runner's, the script
 * a regular file at mode 0500 (the runner's is reached through a symlink). */
static int make_baseline_dir(const char *dir)
{
        char *path = path_of(dir, "echo.sh");
        size_t len = strlen(script_text);
        int fd, rc = 0;

        if (!path)
                return -ENOMEM;
        if (mkdir(dir, 0755) < 0)
                rc = -errno;
        fd = rc < 0 ? -1 : open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0500);
        if (rc == 0 && fd < 0)
                rc = -errno;
        if (fd >= 0 && write(fd, script_text, len) != (ssize_t)len)
                rc = -EIO;
        if (fd >= 0 && close(fd) < 0 && rc == 0)
                rc = -errno;
        free(path);
        return rc;
}

/* Remove what the bench made below root; the runner removed its cache dirs. */
static void remove_root(const char *root)
{
        static const char *const rel[] = {"baseline/churn", "baseline/echo.sh", "baseline",
                                          "storage/files", "storage"};

        for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
                char *p = path_of(root, rel[i]);

                if (p && (unlink(p) == 0 || rmdir(p) == 0 || errno == ENOENT))
                        free(p);
                else if (p) {
                        fprintf(stderr, "cannot remove %s: %s\n", p, strerror(errno));
                        free(p);
                }
        }
        rmdir(root);
}

/* The runner finds the helper beside the agent's binary; the bench lives in
 * build/bench/, so it points $MURANOAGENT_SANDBOX at the build tree's helper
 * unless that is set already. */
static void find_helper(void)
{
        char exe[4096], *slash, *helper;
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

        if (getenv("MURANOAGENT_SANDBOX") || n <= 0)
                return;
        exe[n] = '\0';
        slash = strrchr(exe, '/');
        if (!slash)
                return;
        *slash = '\0';
        helper = path_of(exe, "../agent/sandbox/muranoagent-sandbox");
        if (helper && access(helper, X_OK) == 0)
                setenv("MURANOAGENT_SANDBOX", helper, 1);
        free(helper);
}

static void print_row(const char *what, const Stats *s)
{
        printf("%-28s %10.3f %10.3f %10.3f\n", what, s->median_ms, s->p99_ms, s->max_ms);
}

/* The configuration: the defaults, or one file over them. Returns 0. */
static int load_config(const char *path, Config **ret)
{
        ConfigSource src = {.path = path};
        ConfigDiag diag = CONFIG_DIAG_INIT;
        int rc;

        if (!path)
                return config_new_default(ret) < 0 ? -ENOMEM : 0;
        rc = config_load(ret, &src, 1, &diag);
        if (rc != 0)
                fprintf(stderr, "%s\n", diag.error ? diag.error : strerror(rc < 0 ? -rc : EINVAL));
        config_diag_done(&diag);
        return rc == 0 ? 0 : -EINVAL;
}

int main(int argc, char **argv)
{
        const char *config_file = NULL;
        int argi = 1;

        if (argc > 2 && strcmp(argv[1], "--config-file") == 0) {
                config_file = argv[2];
                argi = 3;
        }
        size_t n = argc > argi ? strtoul(argv[argi], NULL, 10) : 300;
        const char *tmpdir = argc > argi + 1 ? argv[argi + 1] : getenv("TMPDIR");
        char *root = NULL, *storage = NULL, *dir = NULL, *calls = NULL;
        char *warning = NULL, *error = NULL;
        double *plan_ms = calloc(n ? n : 1, sizeof(double));
        double *base_ms = calloc(n ? n : 1, sizeof(double));
        double *file_ms = calloc(n ? n : 1, sizeof(double));
        double *durable_ms = calloc(n ? n : 1, sizeof(double));
        json_t *plan = json_loads(plan_text, 0, NULL);
        PlanError perr = {0};
        Config *cfg = NULL;
        Runner *runner = NULL;
        Stats ps, bs, fs, ds;
        uv_loop_t loop;
        int rc, status = 1;

        if (n == 0 || !plan_ms || !base_ms || !file_ms || !durable_ms || !plan) {
                fprintf(stderr, "usage: %s [--config-file FILE] [N > 0] [DIR]\n", argv[0]);
                return 2;
        }
        if (plan_validate(plan, &perr) != 0) {
                fprintf(stderr, "the bench plan is invalid: %s\n", perr.message);
                return 1;
        }
        root = path_of(tmpdir && *tmpdir ? tmpdir : "/tmp", "bench-exec.XXXXXX");
        if (!root || !mkdtemp(root)) {
                fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
                return 1;
        }
        storage = path_of(root, "storage");
        dir = path_of(root, "baseline");
        calls = path_of(root, "entry");
        rc = storage && dir && calls ? make_baseline_dir(dir) : -ENOMEM;
        if (rc < 0) {
                fprintf(stderr, "%s: %s\n", dir, strerror(-rc));
                goto out;
        }
        find_helper();
        log_open("/dev/null", false);
        if (load_config(config_file, &cfg) < 0)
                goto out;
        if (uv_loop_init(&loop) < 0) {
                fprintf(stderr, "cannot make the event loop\n");
                goto out;
        }
        rc = runner_new(&loop, cfg, storage, &runner, &warning, &error);
        if (rc != 0) {
                fprintf(stderr, "runner_new: %s\n", rc > 0 ? error : strerror(-rc));
                goto out_loop;
        }

        for (size_t i = 0; i < WARMUP; i++)
                if (run_plan(&loop, runner, plan, NULL) < 0 || run_baseline(dir) < 0 ||
                    run_plan(&loop, runner, plan, calls) < 0)
                        goto out_runner;
        /* Interleaved, alternating which goes first, so that drift in the
         * machine's load or frequency hits both alike. */
        for (size_t i = 0; i < n; i++) {
                if (i % 2 == 0) {
                        plan_ms[i] = run_plan(&loop, runner, plan, NULL);
                        durable_ms[i] = run_plan(&loop, runner, plan, calls);
                        base_ms[i] = run_baseline(dir);
                } else {
                        base_ms[i] = run_baseline(dir);
                        durable_ms[i] = run_plan(&loop, runner, plan, calls);
                        plan_ms[i] = run_plan(&loop, runner, plan, NULL);
                }
                file_ms[i] = run_file_churn(dir);
                if (plan_ms[i] < 0 || base_ms[i] < 0 || file_ms[i] < 0 || durable_ms[i] < 0) {
                        fprintf(stderr, "run %zu failed\n", i);
                        goto out_runner;
                }
        }
        ps = summarise(plan_ms, n);
        bs = summarise(base_ms, n);
        fs = summarise(file_ms, n);
        ds = summarise(durable_ms, n);

        printf("one plan, Body `return echo().stdout`, echo.sh: echo hello\n");
        printf("%zu runs each, interleaved; configuration: %s%s%s\n", n,
               config_file ? config_file : "the defaults (sandbox on, cgroup = auto)",
               warning ? "; " : "", warning ? warning : "");
        printf("%-28s %10s %10s %10s\n", "", "median ms", "p99 ms", "max ms");
        print_row("runner (one plan)", &ps);
        print_row("baseline (sh -c ./echo.sh)", &bs);
        print_row("(write + unlink of a file)", &fs);
        print_row("runner, durable calls", &ds);
        printf("ratio runner / baseline (median): %.2fx, target <= %.0fx: %s\n",
               ps.median_ms / bs.median_ms, TARGET_RATIO,
               ps.median_ms / bs.median_ms <= TARGET_RATIO ? "met" : "NOT met");
        printf("runner median below %.0f ms: %s\n", TARGET_MS,
               ps.median_ms < TARGET_MS ? "met" : "NOT met");
        printf("durable calls cost the plan of one call (median): %+.3f ms\n",
               ds.median_ms - ps.median_ms);
        status = 0;

out_runner:
        runner_free(runner);
        uv_run(&loop, UV_RUN_DEFAULT);
out_loop:
        if (uv_loop_close(&loop) != 0)
                fprintf(stderr, "the loop did not close cleanly\n");
out:
        remove_root(root);
        free(root);
        free(storage);
        free(dir);
        free(calls);
        config_free(cfg);
        log_close();
        free(warning);
        free(error);
        free(plan_ms);
        free(base_ms);
        free(file_ms);
        free(durable_ms);
        json_decref(plan);
        return status;
}
