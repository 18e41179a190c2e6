/* Tests for child/: the bounded capture, and what becomes of a child
 * process on a libuv loop: its exit status or signal, its output (binary,
 * capped, not captured), timeouts with the kill of its grandchildren, pipes
 * a grandchild holds, child_cancel(), and many children at once. How a
 * child is started (descriptors, signals, environment, PATH, spawn errors,
 * cgroup, the clone3() fallback) is in test-child-spawn.c; the fixtures
 * are in test-child.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "child/child-capture.h"
#include "test-child.h"
#include "util/fileio.h"

/* ---- helper mode: what the children do ---- */

/* Write the pid to path atomically, so that a reader never sees half. */
static void helper_write_pid(const char *path, pid_t pid)
{
        char tmp[PATH_MAX], text[32];
        int fd, n;

        snprintf(tmp, sizeof(tmp), "%s.tmp", path);
        n = snprintf(text, sizeof(text), "%d\n", (int)pid);
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0)
                _exit(98);
        helper_write_all(fd, text, (size_t)n);
        close(fd);
        if (rename(tmp, path) < 0)
                _exit(98);
}

/* The byte at offset i of the flood helper's output. */
static unsigned char flood_byte(uint64_t i)
{
        return (unsigned char)(i % 251);
}

static void helper_flood(uint64_t n)
{
        static unsigned char buf[65536];
        uint64_t i = 0;

        while (i < n) {
                size_t k = n - i < sizeof(buf) ? (size_t)(n - i) : sizeof(buf);

                for (size_t j = 0; j < k; j++)
                        buf[j] = flood_byte(i + j);
                helper_write_all(STDOUT_FILENO, buf, k);
                i += k;
        }
}

/* Wait for a signal, but not for ever: a helper that a failed test left
 * behind goes away by itself within a minute. */
_noreturn_ static void helper_linger(void)
{
        sleep(60);
        _exit(0);
}

static int helper_main(const char *name, int argc, char **argv)
{
        if (streq(name, "exit3"))
                return 3;
        if (streq(name, "signal9"))
                raise(SIGKILL);
        if (streq(name, "ignore-term"))
                signal(SIGTERM, SIG_IGN);
        if (streq(name, "sleep") || streq(name, "ignore-term"))
                helper_linger();
        if (streq(name, "binary")) {
                helper_write_all(STDOUT_FILENO, "a\0b\n\xff", 5);
                helper_write_all(STDERR_FILENO, "err\0\x01", 5);
                return 0;
        }
        if (streq(name, "echo") && argc == 5) {
                helper_write_all(STDOUT_FILENO, argv[2], strlen(argv[2]));
                helper_write_all(STDERR_FILENO, argv[3], strlen(argv[3]));
                return atoi(argv[4]);
        }
        if (streq(name, "flood") && argc == 3) {
                helper_flood(strtoull(argv[2], NULL, 10));
                return 0;
        }
        if (streq(name, "ignore-term-grandchild") && argc >= 3) {
                /* The grandchild inherits the ignored SIGTERM; the child
                 * itself takes SIGTERM's default again. "quiet" sends the
                 * grandchild's output elsewhere, so that it holds no pipe. */
                pid_t pid;

                signal(SIGTERM, SIG_IGN);
                pid = fork();
                if (pid < 0)
                        return 96;
                if (pid == 0) {
                        if (argc == 4 && streq(argv[3], "quiet")) {
                                int null = open("/dev/null", O_WRONLY);

                                dup2(null, STDOUT_FILENO);
                                dup2(null, STDERR_FILENO);
                        }
                        helper_linger();
                }
                signal(SIGTERM, SIG_DFL);
                helper_write_pid(argv[2], pid);
                helper_write_all(STDOUT_FILENO, "ready\n", 6);
                helper_linger();
        }
        if (streq(name, "hold-pipe") && argc == 3) {
                pid_t pid = fork();

                if (pid < 0)
                        return 96;
                if (pid == 0)
                        helper_linger();
                helper_write_pid(argv[2], pid);
                helper_write_all(STDOUT_FILENO, "hello\n", 6);
                return 0;
        }
        fprintf(stderr, "unknown helper %s\n", name);
        return 95;
}

/* ---- the bounded capture ---- */

static const char capture_text[] = "0123456789abcdefghij";

static const struct {
        size_t limit;
        const char *text;
} capture_cases[] = {
        {20, "0123456789abcdefghij"},
        {25, "0123456789abcdefghij"},
        {10, "01234\n[... 10 bytes omitted by muranoagent ...]\nfghij"},
        {11, "01234\n[... 9 bytes omitted by muranoagent ...]\nefghij"},
        {1, "\n[... 19 bytes omitted by muranoagent ...]\nj"},
        {0, "\n[... 20 bytes omitted by muranoagent ...]\n"},
        {4, "01\n[... 16 bytes omitted by muranoagent ...]\nij"},
};

/* Every case, fed in reads of 1 to 21 bytes, gives the same text. */
START_TEST(test_capture_table)
{
        size_t limit = capture_cases[_i / 21].limit;
        size_t chunk = (size_t)(_i % 21) + 1, n = strlen(capture_text);
        const char *want = capture_cases[_i / 21].text;
        ChildCapture cap;
        ChildOutput o = {0};

        child_capture_init(&cap, limit);
        for (size_t i = 0; i < n; i += chunk)
                ck_assert_int_eq(
                        child_capture_append(&cap, capture_text + i, n - i < chunk ? n - i : chunk),
                        0);
        ck_assert_int_eq(child_capture_finish(&cap, &o), 0);
        ck_assert_str_eq(o.data, want);
        ck_assert_uint_eq(o.len, strlen(want));
        ck_assert_uint_eq(o.total, 20);
        ck_assert(o.truncated == (limit < 20));
        ck_assert(!o.cut);
        free(o.data);
        child_capture_clear(&cap);
}
END_TEST

START_TEST(test_capture_empty)
{
        ChildCapture cap;
        ChildOutput o = {0};

        child_capture_init(&cap, 100);
        ck_assert_int_eq(child_capture_append(&cap, "", 0), 0);
        ck_assert_int_eq(child_capture_finish(&cap, &o), 0);
        ck_assert_str_eq(o.data, "");
        ck_assert_uint_eq(o.len, 0);
        ck_assert_uint_eq(o.total, 0);
        ck_assert(!o.truncated);
        free(o.data);
}
END_TEST

START_TEST(test_exit_code_mapping)
{
        ChildResult r = {.exit_status = 3};

        ck_assert_int_eq(child_result_exit_code(&r), 3);
        r = (ChildResult){.term_signal = SIGKILL};
        ck_assert_int_eq(child_result_exit_code(&r), -9);
        r = (ChildResult){.spawn_error = -ENOENT};
        ck_assert_int_eq(child_result_exit_code(&r), 127);
}
END_TEST

/* ---- children on a loop ---- */

static void run_hook(void *userdata, int sig)
{
        Run *run = userdata;

        if (run->hook_calls < (int)ELEMENTSOF(run->hook_sigs))
                run->hook_sigs[run->hook_calls] = sig;
        run->hook_calls++;
}

START_TEST(test_exit_status)
{
        Run run = {0};

        run_helper("--helper=exit3", &run);
        ck_assert_int_gt(run.pid, 0);
        ck_assert_int_eq(run.r.exit_status, 3);
        ck_assert_int_eq(run.r.term_signal, 0);
        ck_assert_int_eq(child_result_exit_code(&run.r), 3);
        ck_assert_int_eq(run.r.spawn_error, 0);
        ck_assert_int_eq(run.r.error, 0);
        ck_assert(!run.r.timed_out && !run.r.cancelled);
        ck_assert_str_eq(run.r.out.data, "");
        ck_assert_str_eq(run.r.err.data, "");
        run_free(&run);
}
END_TEST

START_TEST(test_death_by_signal)
{
        Run run = {0};

        run_helper("--helper=signal9", &run);
        ck_assert_int_eq(run.r.term_signal, SIGKILL);
        ck_assert_int_eq(child_result_exit_code(&run.r), -9);
        run_free(&run);
}
END_TEST

START_TEST(test_binary_output)
{
        Run run = {0};

        run_helper("--helper=binary", &run);
        ck_assert_int_eq(run.r.exit_status, 0);
        ck_assert_uint_eq(run.r.out.len, 5);
        ck_assert_uint_eq(run.r.out.total, 5);
        ck_assert_mem_eq(run.r.out.data, "a\0b\n\xff", 6); /* NUL-terminated too */
        ck_assert_uint_eq(run.r.err.len, 5);
        ck_assert_mem_eq(run.r.err.data, "err\0\x01", 6);
        ck_assert(!run.r.out.truncated && !run.r.out.cut && !run.r.err.cut);
        run_free(&run);
}
END_TEST

/* Scripts write to /dev/stdout and /dev/stderr, which a socketpair would
 * refuse (ENXIO): the streams must be real pipes. */
START_TEST(test_dev_stdout)
{
        ChildSpec spec = HELPER_SPEC("x");
        Run run = {0};

        spec.argv = ARGV("/bin/sh", "-c", "echo hi >/dev/stdout; echo e >/dev/stderr");
        run_spec(&spec, &run);
        ck_assert_int_eq(run.r.exit_status, 0);
        ck_assert_str_eq(run.r.out.data, "hi\n");
        ck_assert_str_eq(run.r.err.data, "e\n");
        run_free(&run);
}
END_TEST

START_TEST(test_capture_off)
{
        ChildSpec spec = HELPER_SPEC("--helper=echo", "to-out\n", "to-err\n", "4");
        char path[] = "/tmp/test-child-XXXXXX";
        Run run = {0}, mixed = {0};
        _cleanup_free_ char *text = NULL;
        int fd;

        /* Nowhere: /dev/null. */
        spec.capture_stdout = spec.capture_stderr = false;
        run_spec(&spec, &run);
        ck_assert_int_eq(run.r.exit_status, 4);
        ck_assert_ptr_null(run.r.out.data);
        ck_assert_ptr_null(run.r.err.data);
        ck_assert_uint_eq(run.r.out.total, 0);

        /* stdout captured, stderr through to the agent's descriptor. */
        fd = mkostemp(path, O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        spec.capture_stdout = true;
        spec.passthrough_fd = fd;
        run_spec(&spec, &mixed);
        ck_assert_str_eq(mixed.r.out.data, "to-out\n");
        ck_assert_ptr_null(mixed.r.err.data);
        close(fd);
        ck_assert_int_eq(file_read_all(path, 1024, &text, NULL), 0);
        ck_assert_str_eq(text, "to-err\n");
        unlink(path);
        run_free(&mixed);
}
END_TEST

/* 50 MiB through a 1 MiB cap: the head and the tail exactly, the marker
 * with the count, and the agent's peak memory far below the flood. */
START_TEST(test_flood_capped)
{
        const uint64_t total = 50 << 20;
        const size_t limit = 1 << 20, half = limit / 2;
        ChildSpec spec = HELPER_SPEC("--helper=flood", "52428800");
        const char *marker = "\n[... 51380224 bytes omitted by muranoagent ...]\n";
        size_t mlen = strlen(marker);
        struct rusage before, after;
        Run run = {0};

        ck_assert_int_eq(getrusage(RUSAGE_SELF, &before), 0);
        spec.output_limit = limit;
        run_spec(&spec, &run);
        ck_assert_int_eq(getrusage(RUSAGE_SELF, &after), 0);

        ck_assert_int_eq(run.r.exit_status, 0);
        ck_assert_uint_eq(run.r.out.total, total);
        ck_assert(run.r.out.truncated);
        ck_assert_uint_eq(run.r.out.len, limit + mlen);
        for (size_t i = 0; i < half; i++)
                if ((unsigned char)run.r.out.data[i] != flood_byte(i))
                        ck_abort_msg("head differs at %zu", i);
        ck_assert_mem_eq(run.r.out.data + half, marker, mlen);
        for (size_t i = 0; i < half; i++)
                if ((unsigned char)run.r.out.data[half + mlen + i] != flood_byte(total - half + i))
                        ck_abort_msg("tail differs at %zu", i);
        ck_assert_int_eq(run.r.out.data[run.r.out.len], '\0');
        /* ru_maxrss is in KiB: the flood would add 51200 if it were kept. */
        ck_assert_int_lt(after.ru_maxrss - before.ru_maxrss, 16 * 1024);
        run_free(&run);
}
END_TEST

START_TEST(test_timeout_term)
{
        ChildSpec spec = HELPER_SPEC("--helper=sleep");
        Run run = {0};

        spec.timeout_ms = 200;
        spec.kill_tree = run_hook;
        spec.kill_userdata = &run;
        run_spec(&spec, &run);
        ck_assert(run.r.timed_out);
        ck_assert(!run.r.cancelled);
        ck_assert_int_eq(run.r.term_signal, SIGTERM);
        ck_assert_int_eq(child_result_exit_code(&run.r), -15);
        /* The group was empty once the child died of SIGTERM: no grace to
         * wait for, and SIGKILL went to the hook at once. */
        ck_assert_int_ge(run.end_ms - run.start_ms, 190);
        ck_assert_int_lt(run.end_ms - run.start_ms, 2000);
        ck_assert_int_eq(run.hook_calls, 2);
        ck_assert_int_eq(run.hook_sigs[0], SIGTERM);
        ck_assert_int_eq(run.hook_sigs[1], SIGKILL);
        run_free(&run);
}
END_TEST

START_TEST(test_timeout_kill_after_grace)
{
        ChildSpec spec = HELPER_SPEC("--helper=ignore-term");
        Run run = {0};

        spec.timeout_ms = 200;
        spec.kill_grace_ms = 300;
        run_spec(&spec, &run);
        ck_assert(run.r.timed_out);
        ck_assert_int_eq(run.r.term_signal, SIGKILL);
        ck_assert_int_eq(child_result_exit_code(&run.r), -9);
        ck_assert_int_ge(run.end_ms - run.start_ms, 490);
        ck_assert_int_lt(run.end_ms - run.start_ms, 3000);
        run_free(&run);
}
END_TEST

static pid_t read_pid_file(const char *path)
{
        _cleanup_free_ char *text = NULL;

        ck_assert_int_eq(file_read_all(path, 64, &text, NULL), 0);
        unlink(path);
        return (pid_t)atoi(text);
}

/* Reap pid (reparented to this subreaper) within a second and return how
 * it ended; a process that is still alive fails the test. */
static int reap(pid_t pid)
{
        int status = 0;

        for (int i = 0; i < 100; i++) {
                pid_t r = waitpid(pid, &status, WNOHANG);

                ck_assert_int_ne(r, -1);
                if (r == pid) {
                        ck_assert_int_eq(kill(pid, 0), -1); /* gone, not even a zombie */
                        ck_assert_int_eq(errno, ESRCH);
                        return status;
                }
                usleep(10000);
        }
        ck_abort_msg("process %d is still alive", (int)pid);
        return -1;
}

/* A grandchild that ignores SIGTERM is killed at the timeout, SIGKILL after
 * the grace, whether it holds the output pipes ("loud") or not ("quiet").
 * The quiet one is the case where the exit and end of file are both in
 * before SIGKILL: the child must still wait for it. */
START_TEST(test_timeout_grandchild)
{
        const char *mode = _i == 0 ? "loud" : "quiet";
        char pidfile[] = "/tmp/test-child-pid-XXXXXX";
        ChildSpec spec;
        Run run = {0};
        int fd, status;
        pid_t gpid;

        fd = mkstemp(pidfile);
        ck_assert_int_ge(fd, 0);
        close(fd);
        spec = HELPER_SPEC("--helper=ignore-term-grandchild", pidfile, mode);
        spec.timeout_ms = 300;
        spec.kill_grace_ms = 300;
        run_spec(&spec, &run);
        ck_assert(run.r.timed_out);
        ck_assert_int_eq(run.r.term_signal, SIGTERM); /* the child itself died of it */
        ck_assert_str_eq(run.r.out.data, "ready\n");
        ck_assert(!run.r.out.cut && !run.r.err.cut);
        ck_assert_int_ge(run.end_ms - run.start_ms, 590);
        ck_assert_int_lt(run.end_ms - run.start_ms, 1900); /* before eof_grace could cut */

        gpid = read_pid_file(pidfile);
        ck_assert_int_gt(gpid, 0);
        status = reap(gpid);
        ck_assert(WIFSIGNALED(status));
        ck_assert_int_eq(WTERMSIG(status), SIGKILL);
        run_free(&run);
}
END_TEST

/* A grandchild that keeps the pipes open after the child exited does not
 * hold the report: the pipes are cut after eof_grace_ms. It is not killed. */
START_TEST(test_grandchild_holds_pipe)
{
        char pidfile[] = "/tmp/test-child-pid-XXXXXX";
        ChildSpec spec;
        Run run = {0};
        int fd, status;
        pid_t gpid;

        fd = mkstemp(pidfile);
        ck_assert_int_ge(fd, 0);
        close(fd);
        spec = HELPER_SPEC("--helper=hold-pipe", pidfile);
        spec.eof_grace_ms = 200;
        run_spec(&spec, &run);
        ck_assert_int_eq(run.r.exit_status, 0);
        ck_assert_int_eq(run.r.term_signal, 0);
        ck_assert(!run.r.timed_out);
        ck_assert_str_eq(run.r.out.data, "hello\n");
        ck_assert(run.r.out.cut && run.r.err.cut);
        ck_assert(!run.r.out.truncated);
        ck_assert_int_ge(run.end_ms - run.start_ms, 190);
        ck_assert_int_lt(run.end_ms - run.start_ms, 2000);

        gpid = read_pid_file(pidfile);
        ck_assert_int_eq(kill(gpid, 0), 0); /* left alone */
        ck_assert_int_eq(kill(gpid, SIGKILL), 0);
        status = reap(gpid);
        ck_assert_int_eq(WTERMSIG(status), SIGKILL);
        run_free(&run);
}
END_TEST

static void cancel_on_timer(uv_timer_t *t)
{
        Run *run = t->data;

        child_cancel(run->child);
        child_cancel(run->child); /* a second call changes nothing */
        uv_close((uv_handle_t *)t, NULL);
}

/* child_cancel() after 100 ms; _i selects the grace: 1000 ms (SIGTERM, which
 * the helper dies of) or 0 (SIGKILL alone). */
START_TEST(test_cancel)
{
        ChildSpec spec = HELPER_SPEC("--helper=sleep");
        uv_loop_t loop;
        uv_timer_t timer;
        Run run = {0};

        spec.kill_grace_ms = _i == 0 ? 1000 : 0;
        spec.timeout_ms = 10000;
        spec.kill_tree = run_hook;
        spec.kill_userdata = &run;
        ck_assert_int_eq(uv_loop_init(&loop), 0);
        run.start_ms = now_ms();
        ck_assert_int_eq(child_spawn(&loop, &spec, run_on_done, &run, &run.child), 0);
        ck_assert_int_eq(uv_timer_init(&loop, &timer), 0);
        timer.data = &run;
        ck_assert_int_eq(uv_timer_start(&timer, cancel_on_timer, 100, 0), 0);
        ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
        ck_assert_int_eq(run.calls, 1);
        ck_assert_int_eq(uv_loop_close(&loop), 0);

        ck_assert(run.r.cancelled);
        ck_assert(!run.r.timed_out);
        ck_assert_int_lt(run.end_ms - run.start_ms, 900);
        if (_i == 0) {
                ck_assert_int_eq(run.r.term_signal, SIGTERM);
                ck_assert_int_eq(run.hook_calls, 2);
                ck_assert_int_eq(run.hook_sigs[0], SIGTERM);
                ck_assert_int_eq(run.hook_sigs[1], SIGKILL);
        } else {
                ck_assert_int_eq(run.r.term_signal, SIGKILL);
                ck_assert_int_eq(run.hook_calls, 1);
                ck_assert_int_eq(run.hook_sigs[0], SIGKILL);
        }
        run_free(&run);
}
END_TEST

#define PARALLEL 64

START_TEST(test_parallel)
{
        static Run runs[PARALLEL];
        char out[PARALLEL][16], err[PARALLEL][16], code[PARALLEL][8];
        uv_loop_t loop;

        memset(runs, 0, sizeof(runs));
        ck_assert_int_eq(uv_loop_init(&loop), 0);
        for (int i = 0; i < PARALLEL; i++) {
                ChildSpec spec;

                snprintf(out[i], sizeof(out[i]), "out %d", i);
                snprintf(err[i], sizeof(err[i]), "err %d", i);
                snprintf(code[i], sizeof(code[i]), "%d", i % 7);
                spec = HELPER_SPEC("--helper=echo", out[i], err[i], code[i]);
                ck_assert_int_eq(child_spawn(&loop, &spec, run_on_done, &runs[i], &runs[i].child),
                                 0);
        }
        ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
        ck_assert_int_eq(uv_loop_close(&loop), 0);
        for (int i = 0; i < PARALLEL; i++) {
                ck_assert_int_eq(runs[i].calls, 1);
                ck_assert_str_eq(runs[i].r.out.data, out[i]);
                ck_assert_str_eq(runs[i].r.err.data, err[i]);
                ck_assert_int_eq(runs[i].r.exit_status, i % 7);
                run_free(&runs[i]);
        }
}
END_TEST

static void add_loop_tests(TCase *tl)
{
        tcase_add_test(tl, test_exit_status);
        tcase_add_test(tl, test_death_by_signal);
        tcase_add_test(tl, test_binary_output);
        tcase_add_test(tl, test_dev_stdout);
        tcase_add_test(tl, test_capture_off);
        tcase_add_test(tl, test_flood_capped);
        tcase_add_test(tl, test_timeout_term);
        tcase_add_test(tl, test_timeout_kill_after_grace);
        tcase_add_loop_test(tl, test_timeout_grandchild, 0, 2);
        tcase_add_test(tl, test_grandchild_holds_pipe);
        tcase_add_loop_test(tl, test_cancel, 0, 2);
        tcase_add_test(tl, test_parallel);
}

static Suite *child_suite(void)
{
        Suite *s = suite_create("child");
        TCase *tc = tcase_create("capture");

        tcase_add_loop_test(tc, test_capture_table, 0, (int)ELEMENTSOF(capture_cases) * 21);
        tcase_add_test(tc, test_capture_empty);
        tcase_add_test(tc, test_exit_code_mapping);
        suite_add_tcase(s, tc);
        child_loop_tcases(s, add_loop_tests);
        return s;
}

int main(int argc, char **argv)
{
        return child_test_main(argc, argv, helper_main, child_suite);
}
