/* Tests for child/: the bounded capture, and child processes on a libuv
 * loop. Each loop test builds its own loop, counts callbacks and closes the
 * loop cleanly. The loop tests run twice: with clone3() ("loop") and with
 * the uv_spawn() fallback forced ("loop-fork"). The child is this program in helper mode
 * ("--helper=NAME") or a system program. The test process is a child subreaper, so that the
 * grandchildren the helpers leave are reparented to it and a test can tell,
 * with waitpid(), exactly how they died. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child/child-capture.h"
#include "child/child.h"
#include "util/fileio.h"
#include "util/macro.h"

static char self_exe[PATH_MAX];

/* ---- helper mode: what the children do ---- */

static void helper_write_all(int fd, const void *p, size_t n)
{
        const char *s = p;

        while (n > 0) {
                ssize_t k = write(fd, s, n);

                if (k <= 0)
                        _exit(99);
                s += k;
                n -= (size_t)k;
        }
}

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

/* The open descriptors above stderr, in increasing order, as "3 7 " (the
 * listing's own aside). With inherit_only, only those without close-on-exec:
 * what a child of this process inherits. */
static void list_fds(char *buf, size_t size, bool inherit_only)
{
        bool open_fd[1024] = {false};
        DIR *d = opendir("/proc/self/fd");
        struct dirent *e;
        size_t len = 0;

        if (!d)
                _exit(97); /* /proc is not mounted: no test can tell */
        while ((e = readdir(d))) {
                int fd = atoi(e->d_name);

                if (e->d_name[0] == '.' || fd <= 2 || fd == dirfd(d) || fd >= 1024)
                        continue;
                if (inherit_only && (fcntl(fd, F_GETFD) & FD_CLOEXEC))
                        continue;
                open_fd[fd] = true;
        }
        closedir(d);
        buf[0] = '\0';
        for (int fd = 3; fd < 1024; fd++)
                if (open_fd[fd] && len + 12 < size)
                        len += (size_t)snprintf(buf + len, size - len, "%d ", fd);
}

/* Wait for a signal, but not for ever: a helper that a failed test left
 * behind goes away by itself within a minute. */
_noreturn_ static void helper_linger(void)
{
        sleep(60);
        _exit(0);
}

static int helper_main(int argc, char **argv)
{
        const char *name = argv[1] + strlen("--helper=");

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
        if (streq(name, "status")) {
                helper_write_all(3, "status\n", 7);
                return 0;
        }
        if (streq(name, "status2")) {
                helper_write_all(3, "three\n", 6);
                helper_write_all(4, "four\n", 5);
                return 0;
        }
        if (streq(name, "fds")) {
                char buf[4096];

                list_fds(buf, sizeof(buf), false);
                puts(buf);
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

typedef struct Run {
        int calls;
        ChildResult r; /* the report, with the outputs taken */
        Child *child;  /* from child_spawn() */
        pid_t pid;     /* child_get_pid() after the spawn */
        int64_t start_ms, end_ms;
        int hook_sigs[4];
        int hook_calls;
} Run;

static int64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void run_on_done(Child *c, ChildResult *r, void *userdata)
{
        Run *run = userdata;

        ck_assert_ptr_eq(c, run->child);
        run->calls++;
        run->end_ms = now_ms();
        run->r = *r;
        r->out.data = NULL;
        r->err.data = NULL;
        child_cancel(c); /* the end is in: a no-op */
}

static void run_hook(void *userdata, int sig)
{
        Run *run = userdata;

        if (run->hook_calls < (int)ELEMENTSOF(run->hook_sigs))
                run->hook_sigs[run->hook_calls] = sig;
        run->hook_calls++;
}

static void run_free(Run *run)
{
        free(run->r.out.data);
        free(run->r.err.data);
}

/* A NULL-terminated argv of string literals (const under -Wwrite-strings). */
#define ARGV(...) ((char *const *)(const char *const[]){__VA_ARGS__, NULL})

/* A spec for this program in helper mode, capturing both streams. */
#define HELPER_SPEC(...)                                                                           \
        (ChildSpec)                                                                                \
        {                                                                                          \
                .argv = ARGV(self_exe, __VA_ARGS__), .capture_stdout = true,                       \
                .capture_stderr = true, .output_limit = 1 << 20, .kill_grace_ms = 5000             \
        }

static void run_spec(const ChildSpec *spec, Run *run)
{
        uv_loop_t loop;

        ck_assert_int_eq(uv_loop_init(&loop), 0);
        run->start_ms = now_ms();
        ck_assert_int_eq(child_spawn(&loop, spec, run_on_done, run, &run->child), 0);
        run->pid = child_get_pid(run->child);
        ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
        ck_assert_int_eq(run->calls, 1);
        ck_assert_int_eq(uv_loop_close(&loop), 0);
}

START_TEST(test_exit_status)
{
        ChildSpec spec = HELPER_SPEC("--helper=exit3");
        Run run = {0};

        run_spec(&spec, &run);
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
        ChildSpec spec = HELPER_SPEC("--helper=signal9");
        Run run = {0};

        run_spec(&spec, &run);
        ck_assert_int_eq(run.r.term_signal, SIGKILL);
        ck_assert_int_eq(child_result_exit_code(&run.r), -9);
        run_free(&run);
}
END_TEST

START_TEST(test_binary_output)
{
        ChildSpec spec = HELPER_SPEC("--helper=binary");
        Run run = {0};

        run_spec(&spec, &run);
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

START_TEST(test_env_cwd_stdin)
{
        ChildSpec spec = HELPER_SPEC("x");
        Run run = {0};

        spec.argv =
                ARGV("/bin/sh", "-c", "echo \"$FOO\"; pwd; echo \"${HOME-unset}\"; /usr/bin/wc -c");
        spec.envp = ARGV("FOO=bar baz");
        spec.cwd = "/usr";
        run_spec(&spec, &run);
        ck_assert_int_eq(run.r.exit_status, 0);
        ck_assert_str_eq(run.r.out.data, "bar baz\n/usr\nunset\n0\n"); /* stdin is empty */
        ck_assert_str_eq(run.r.err.data, "");
        run_free(&run);
}
END_TEST

/* The child starts with every signal at its default and none blocked, even
 * when the agent ignores SIGPIPE and blocks others; and with none of the
 * agent's descriptors but 0, 1, 2 and those the agent's own parent left
 * without close-on-exec (the loop's and the pipes' read ends stay out). */
START_TEST(test_signals_and_fds_reset)
{
        ChildSpec spec = HELPER_SPEC("x");
        Run run = {0}, fds = {0};
        sigset_t set, old;
        char want[4096];

        signal(SIGPIPE, SIG_IGN);
        sigemptyset(&set);
        sigaddset(&set, SIGUSR1);
        sigprocmask(SIG_BLOCK, &set, &old);
        spec.argv = ARGV("/usr/bin/grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status");
        run_spec(&spec, &run);
        {
                /* Signals 1 to 31 are what libuv resets. glibc reserves 32
                 * and 33 for itself, and a parent such as GNU make may leave
                 * them ignored, which no child can undo: leave them out. */
                unsigned long long blk = 1, ign = 1;
                ck_assert_int_eq(sscanf(run.r.out.data, "SigBlk:\t%llx\nSigIgn:\t%llx", &blk, &ign),
                                 2);
                ck_assert_uint_eq(blk & 0x7fffffffULL, 0);
                ck_assert_uint_eq(ign & 0x7fffffffULL, 0);
        }
        run_free(&run);

        /* clone3() leaves the program nothing but 0, 1 and 2; libuv's fork
         * passes what the test's own parent left inheritable. */
        spec = HELPER_SPEC("--helper=fds");
        if (child_spawn_method() == CHILD_SPAWN_FORK)
                list_fds(want, sizeof(want) - 1, true);
        else
                want[0] = '\0';
        strcat(want, "\n");
        run_spec(&spec, &fds);
        ck_assert_str_eq(fds.r.out.data, want);
        run_free(&fds);
        sigprocmask(SIG_SETMASK, &old, NULL);
        signal(SIGPIPE, SIG_DFL);
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

/* An extra descriptor reaches the child as 3 (the sandbox helper's status
 * descriptor) and keeps its close-on-exec flag in the agent. */
START_TEST(test_extra_fd)
{
        ChildSpec spec = HELPER_SPEC("--helper=status");
        char path[] = "/tmp/test-child-XXXXXX";
        _cleanup_free_ char *text = NULL;
        Run run = {0};
        int fd;

        fd = mkostemp(path, O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        spec.extra_fds = &fd;
        spec.n_extra_fds = 1;
        run_spec(&spec, &run);
        ck_assert_int_eq(run.r.exit_status, 0);
        ck_assert_int_eq(fcntl(fd, F_GETFD), FD_CLOEXEC);
        close(fd);
        ck_assert_int_eq(file_read_all(path, 1024, &text, NULL), 0);
        ck_assert_str_eq(text, "status\n");
        unlink(path);
        run_free(&run);
}
END_TEST

/* Two extra descriptors whose numbers lie inside the child's 0..4 and come
 * in the opposite order: each still lands where the spec says. */
START_TEST(test_extra_fds_shuffled)
{
        ChildSpec spec = HELPER_SPEC("--helper=status2");
        char path3[] = "/tmp/test-child-XXXXXX", path4[] = "/tmp/test-child-XXXXXX";
        _cleanup_free_ char *text3 = NULL, *text4 = NULL;
        int fds[2], saved_in = dup(STDIN_FILENO);
        Run run = {0};

        ck_assert_int_ge(saved_in, 0);
        /* The file for the child's 4 sits at 0 and the one for its 3 at
         * the first free number above. */
        fds[1] = mkostemp(path4, O_CLOEXEC);
        ck_assert_int_ge(fds[1], 0);
        ck_assert_int_eq(dup3(fds[1], STDIN_FILENO, O_CLOEXEC), STDIN_FILENO);
        close(fds[1]);
        fds[1] = STDIN_FILENO;
        fds[0] = mkostemp(path3, O_CLOEXEC);
        ck_assert_int_ge(fds[0], 0);
        spec.extra_fds = fds;
        spec.n_extra_fds = 2;
        run_spec(&spec, &run);
        ck_assert_int_eq(dup2(saved_in, STDIN_FILENO), STDIN_FILENO);
        close(saved_in);
        close(fds[0]);
        ck_assert_int_eq(run.r.exit_status, 0);
        ck_assert_int_eq(run.r.spawn_error, 0);
        ck_assert_int_eq(file_read_all(path3, 64, &text3, NULL), 0);
        ck_assert_int_eq(file_read_all(path4, 64, &text4, NULL), 0);
        ck_assert_str_eq(text3, "three\n");
        ck_assert_str_eq(text4, "four\n");
        unlink(path3);
        unlink(path4);
        run_free(&run);
}
END_TEST

/* A name without a slash is looked up in the PATH of the spec's
 * environment, and a file without a known format runs through /bin/sh, as
 * execvp() does. */
START_TEST(test_path_lookup)
{
        ChildSpec spec = HELPER_SPEC("x");
        char dir[] = "/tmp/test-child-dir-XXXXXX";
        char script[PATH_MAX], path_env[PATH_MAX + 16];
        Run run = {0}, sh = {0}, missing = {0};
        FILE *f;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        snprintf(script, sizeof(script), "%s/plain", dir);
        f = fopen(script, "w");
        ck_assert_ptr_nonnull(f);
        fputs("echo \"plain $1 $0\"\n", f);
        fclose(f);
        ck_assert_int_eq(chmod(script, 0755), 0);
        snprintf(path_env, sizeof(path_env), "PATH=/nonexistent:%s:/bin", dir);

        spec.argv = ARGV("plain", "arg");
        spec.envp = (char *const *)(const char *const[]){path_env, NULL};
        run_spec(&spec, &run);
        ck_assert_int_eq(run.r.spawn_error, 0);
        ck_assert_int_eq(run.r.exit_status, 0);
        {
                char want[PATH_MAX + 32];

                snprintf(want, sizeof(want), "plain arg %s\n", script);
                ck_assert_str_eq(run.r.out.data, want);
        }

        spec.argv = ARGV("sh", "-c", "echo found");
        run_spec(&spec, &sh);
        ck_assert_str_eq(sh.r.out.data, "found\n");

        spec.argv = ARGV("no-such-program-here");
        run_spec(&spec, &missing);
        ck_assert_int_eq(missing.r.spawn_error, -ENOENT);
        ck_assert_int_eq(missing.pid, 0);

        unlink(script);
        rmdir(dir);
        run_free(&run);
        run_free(&sh);
        run_free(&missing);
}
END_TEST

static void run_spawn_error(const ChildSpec *spec, int want)
{
        Run run = {0};

        run_spec(spec, &run);
        ck_assert_int_eq(run.r.spawn_error, want);
        ck_assert_int_eq(child_result_exit_code(&run.r), 127);
        ck_assert_int_eq(run.pid, 0);
        ck_assert_str_eq(run.r.out.data, "");
        run_free(&run);
}

START_TEST(test_spawn_error)
{
        ChildSpec spec = HELPER_SPEC("x");
        uv_loop_t loop;
        Run run = {0};

        spec.argv = ARGV("/nonexistent/program");
        run_spawn_error(&spec, -ENOENT);
        spec.argv = ARGV("/etc/passwd");
        run_spawn_error(&spec, -EACCES);
        spec.argv = ARGV("/bin/true");
        spec.cwd = "/nonexistent";
        run_spawn_error(&spec, -ENOENT);

        /* A spec without a program, or with too many descriptors: an error
         * now, and no callback ever. */
        spec.argv = ARGV(NULL);
        ck_assert_int_eq(uv_loop_init(&loop), 0);
        ck_assert_int_eq(child_spawn(&loop, &spec, run_on_done, &run, NULL), -EINVAL);
        spec.argv = ARGV("/bin/true");
        spec.cwd = NULL;
        spec.extra_fds = (const int[CHILD_EXTRA_FDS_MAX + 1]){0};
        spec.n_extra_fds = CHILD_EXTRA_FDS_MAX + 1;
        ck_assert_int_eq(child_spawn(&loop, &spec, run_on_done, &run, NULL), -EINVAL);
        ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
        ck_assert_int_eq(run.calls, 0);
        ck_assert_int_eq(uv_loop_close(&loop), 0);
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

/* A fresh cgroup v2 directory for a test, or NULL when this system has
 * none that the test may write (not root, no cgroup2). */
static char *cgroup_test_dir(void)
{
        static const char *const roots[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
        _cleanup_free_ char *own = NULL;
        char path[PATH_MAX];

        if (file_read_all("/proc/self/cgroup", 1 << 16, &own, NULL) != 0)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(roots); i++) {
                char *line = strstr(own, "0::/");
                char *dir;

                snprintf(path, sizeof(path), "%s/cgroup.controllers", roots[i]);
                if (!line || (line != own && line[-1] != '\n') || access(path, F_OK) < 0)
                        continue;
                line += 3;
                line[strcspn(line, "\n")] = '\0';
                if (asprintf(&dir, "%s%s%stest-child-%d", roots[i], line,
                             streq(line, "/") ? "" : "/", (int)getpid()) < 0)
                        return NULL;
                if (mkdir(dir, 0755) == 0)
                        return dir;
                free(dir);
                return NULL;
        }
        return NULL;
}

/* With a cgroup fd, the program runs inside that cgroup from the start:
 * its /proc/self/cgroup names it. */
START_TEST(test_cgroup_at_spawn)
{
        _cleanup_free_ char *dir = cgroup_test_dir();
        ChildSpec spec = HELPER_SPEC("x");
        char want[PATH_MAX + 8];
        const char *rel;
        Run run = {0};
        int fd;

        if (!dir)
                return; /* no writable cgroup v2 here: nothing to check */
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        spec.argv = ARGV("/bin/sh", "-c", "grep '^0::' /proc/self/cgroup");
        spec.cgroup_fd = fd;
        if (child_spawn_method() != CHILD_SPAWN_CLONE3_CGROUP) {
                /* Refused at once: no report, nothing left on the loop. */
                uv_loop_t loop;

                ck_assert_int_eq(uv_loop_init(&loop), 0);
                ck_assert_int_eq(child_spawn(&loop, &spec, run_on_done, &run, NULL), -EOPNOTSUPP);
                ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
                ck_assert_int_eq(uv_loop_close(&loop), 0);
                ck_assert_int_eq(run.calls, 0);
        } else {
                run_spec(&spec, &run);
                /* The path below the hierarchy's root. */
                rel = dir + (strncmp(dir, "/sys/fs/cgroup/unified", 22) == 0 ? 22 : 14);
                snprintf(want, sizeof(want), "0::%s\n", rel);
                ck_assert_int_eq(run.r.exit_status, 0);
                ck_assert_str_eq(run.r.out.data, want);
        }
        close(fd);
        ck_assert_int_eq(rmdir(dir), 0);
        run_free(&run);
}
END_TEST

/* A kernel or seccomp policy that refuses clone3 (as Docker's default
 * profile does, with ENOSYS): the first spawn with a cgroup says
 * -EOPNOTSUPP, the method drops to uv_spawn() for good, and children still
 * run. In a process of its own, since the filter cannot be lifted. */
static int fallback_probe(void)
{
        struct sock_filter filter[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = {.len = ELEMENTSOF(filter), .filter = filter};
        ChildSpec spec = HELPER_SPEC("--helper=exit3");
        uv_loop_t loop;
        Run run = {0};

        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
                return 10;
        child_spawn_method_reset();
        if (uv_loop_init(&loop) < 0)
                return 11;
        spec.cgroup_fd =
                open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* clone3 is refused first */
        if (spec.cgroup_fd <= 0)
                return 19;
        if (child_spawn(&loop, &spec, run_on_done, &run, NULL) != -EOPNOTSUPP)
                return 12;
        if (uv_run(&loop, UV_RUN_DEFAULT) != 0 || run.calls != 0)
                return 13;
        if (child_spawn_method() != CHILD_SPAWN_CLONE3)
                return 14;
        spec.cgroup_fd = 0;
        if (child_spawn(&loop, &spec, run_on_done, &run, &run.child) != 0)
                return 15;
        if (uv_run(&loop, UV_RUN_DEFAULT) != 0 || run.calls != 1 || run.r.exit_status != 3)
                return 16;
        if (child_spawn_method() != CHILD_SPAWN_FORK)
                return 17;
        if (uv_loop_close(&loop) != 0)
                return 18;
        run_free(&run);
        return 0;
}

START_TEST(test_fallback_discovered)
{
        int status = -1;
        pid_t pid = fork();

        ck_assert_int_ge(pid, 0);
        if (pid == 0)
                _exit(fallback_probe());
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status));
        ck_assert_int_eq(WEXITSTATUS(status), 0);
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

/* Orphaned grandchildren come to the test process, so tests can reap and
 * examine them. A checked fixture, because fork() does not pass it on. */
static void become_subreaper(void)
{
        ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
}

/* "loop-fork": every loop test again with the uv_spawn() fallback. */
static void force_fork(void)
{
        child_spawn_method_limit(CHILD_SPAWN_FORK);
}

static void method_reset(void)
{
        child_spawn_method_reset();
}

static void add_loop_tests(TCase *tl)
{
        tcase_set_timeout(tl, 30);
        tcase_add_checked_fixture(tl, become_subreaper, NULL);
        tcase_add_test(tl, test_exit_status);
        tcase_add_test(tl, test_death_by_signal);
        tcase_add_test(tl, test_binary_output);
        tcase_add_test(tl, test_dev_stdout);
        tcase_add_test(tl, test_env_cwd_stdin);
        tcase_add_test(tl, test_signals_and_fds_reset);
        tcase_add_test(tl, test_capture_off);
        tcase_add_test(tl, test_extra_fd);
        tcase_add_test(tl, test_extra_fds_shuffled);
        tcase_add_test(tl, test_path_lookup);
        tcase_add_test(tl, test_spawn_error);
        tcase_add_test(tl, test_cgroup_at_spawn);
        tcase_add_test(tl, test_flood_capped);
        tcase_add_test(tl, test_timeout_term);
        tcase_add_test(tl, test_timeout_kill_after_grace);
        tcase_add_loop_test(tl, test_timeout_grandchild, 0, 2);
        tcase_add_test(tl, test_grandchild_holds_pipe);
        tcase_add_loop_test(tl, test_cancel, 0, 2);
        tcase_add_test(tl, test_parallel);
}

int main(int argc, char **argv)
{
        size_t size = sizeof(self_exe);
        Suite *s;
        TCase *tc, *tl, *tf;
        SRunner *sr;
        int failed;

        if (argc > 1 && strncmp(argv[1], "--helper=", 9) == 0)
                return helper_main(argc, argv);
        if (uv_exepath(self_exe, &size) < 0)
                return EXIT_FAILURE;
        s = suite_create("child");
        tc = tcase_create("capture");
        tl = tcase_create("loop");
        tcase_add_loop_test(tc, test_capture_table, 0, (int)ELEMENTSOF(capture_cases) * 21);
        tcase_add_test(tc, test_capture_empty);
        tcase_add_test(tc, test_exit_code_mapping);
        suite_add_tcase(s, tc);

        add_loop_tests(tl);
        tcase_add_test(tl, test_fallback_discovered);
        suite_add_tcase(s, tl);
        tf = tcase_create("loop-fork");
        tcase_add_checked_fixture(tf, force_fork, method_reset);
        add_loop_tests(tf);
        suite_add_tcase(s, tf);

        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
