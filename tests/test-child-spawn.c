/* Tests for how child/ starts a child: with clone3() ("loop") and with the
 * uv_spawn() fallback forced ("loop-fork"), the child gets the descriptors,
 * signals, environment, directory and extra descriptors its spec names and
 * nothing else, a program is looked up in the spec's PATH, a start that
 * fails is reported as spawn_error, a cgroup fd puts the child into that
 * cgroup from the start, and a kernel that refuses clone3 makes the method
 * fall back for good. The fixtures are in test-child.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "child/child-launch.h"
#include "child/child-session.h"
#include "test-child.h"
#include "util/fileio.h"

/* ---- helper mode: what the children do ---- */

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

static int helper_main(const char *name, int argc, char **argv)
{
        if (streq(name, "exit3"))
                return 3;
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
        fprintf(stderr, "unknown helper %s\n", name);
        return 95;
}

/* ---- children on a loop ---- */

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

/* pre_exec hook: exits 42 when the descriptor is still open in the child. */
static void exit_if_open(void *data)
{
        if (fcntl(*(const int *)data, F_GETFD) >= 0)
                _exit(42);
}

/* The child closes the agent's descriptors before anything else runs in
 * it, not at the exec: one the agent leaves behind when it is killed (in
 * its pre_exec steps, or as the stand-in that waits for a script) must not
 * keep a flock() of the agent's, such as the journal's, alive. The hook
 * sees the locked directory's descriptor closed, and the lock stays with
 * the agent. */
START_TEST(test_fds_closed_before_pre_exec)
{
        ChildSpec spec = HELPER_SPEC("x");
        char dir[] = "/tmp/test-child-lock.XXXXXX";
        int fd, other;
        Run probe = {0}, run = {0};

        /* A first child finds the method (clone3 refused under valgrind):
         * pre_exec needs clone3. */
        spec.argv = ARGV("/bin/true");
        run_spec(&spec, &probe);
        run_free(&probe);
        if (child_spawn_method() == CHILD_SPAWN_FORK)
                return;
        ck_assert_ptr_nonnull(mkdtemp(dir));
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
        spec.pre_exec = exit_if_open;
        spec.exec_data = &fd;
        run_spec(&spec, &run);
        ck_assert_int_eq(run.r.spawn_error, 0);
        ck_assert_int_eq(child_result_exit_code(&run.r), 0);
        run_free(&run);
        other = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(other, 0);
        ck_assert_int_eq(flock(other, LOCK_EX | LOCK_NB), -1);
        close(other);
        close(fd);
        ck_assert_int_eq(rmdir(dir), 0);
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

static bool gone_or_zombie(pid_t pid)
{
        char path[64], *text = NULL, *state;
        bool r;

        snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
        if (file_read_all(path, 4096, &text, NULL) < 0)
                return true;
        state = strrchr(text, ')');
        r = state && (state[2] == 'Z' || state[2] == 'X');
        free(text);
        return r;
}

/* audit_proc_fd: the child takes an audit session of its own, which a
 * grandchild in a session of its own (setsid) still carries, and
 * child_session_kill() finds and kills it, and nothing else. */
START_TEST(test_audit_session)
{
        ChildSpec spec = HELPER_SPEC("x");
        int proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
        uint32_t own, session;
        unsigned long s;
        long grandchild;
        Run run = {0};

        ck_assert_int_ge(proc_fd, 0);
        own = child_session_of(proc_fd, getpid());
        spec.argv = ARGV("/bin/sh", "-c",
                         "cat /proc/self/sessionid; echo; setsid sleep 300 </dev/null >/dev/null "
                         "2>&1 & echo $!");
        spec.audit_proc_fd = proc_fd;
        spec.audit_uid = getuid();
        run_spec(&spec, &run);
        ck_assert_int_eq(run.r.exit_status, 0);
        ck_assert_int_eq(sscanf(run.r.out.data, "%lu %ld", &s, &grandchild), 2);
        session = (uint32_t)s;
        if (session == own || session == CHILD_SESSION_NONE) {
                /* No audit, a refused loginuid, or uv_spawn(): no session
                 * of its own, which the runner sees the same way. */
                kill((pid_t)grandchild, SIGKILL);
                run_free(&run);
                close(proc_fd);
                return;
        }
        ck_assert_uint_eq(child_session_of(proc_fd, (pid_t)grandchild), session);
        ck_assert_int_eq(child_session_kill(proc_fd, session), 1);
        /* Dead (a zombie until its new parent reaps it), and then not
         * counted again. */
        for (int i = 0; i < 200 && !gone_or_zombie((pid_t)grandchild); i++)
                usleep(5000);
        ck_assert(gone_or_zombie((pid_t)grandchild));
        ck_assert_int_eq(child_session_kill(proc_fd, session), 0);
        ck_assert_int_eq(child_session_kill(proc_fd, CHILD_SESSION_NONE), -EINVAL);
        run_free(&run);
        close(proc_fd);
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

/* pre_exec hook: fills 64 KiB of its stack with its own pid and reads it
 * back, exiting 42 should anything else have written there meanwhile. */
static void stack_pattern(void *data)
{
        volatile pid_t buf[16384];
        pid_t self = (pid_t)syscall(SYS_getpid);

        for (size_t i = 0; i < ELEMENTSOF(buf); i++)
                buf[i] = self;
        for (int round = 0; round < 20; round++)
                for (size_t i = 0; i < ELEMENTSOF(buf); i++)
                        if (buf[i] != self)
                                _exit(42);
}

static void *launch_many(void *arg)
{
        char *argv[] = {(char *)"/bin/true", NULL};
        ChildLaunch l = {.argv = argv,
                         .envp = environ,
                         .fds = {-1, -1, -1},
                         .n_fds = 3,
                         .cgroup_fd = -1,
                         .audit_proc_fd = -1,
                         .pre_exec = stack_pattern};
        intptr_t failed = 0;

        for (int i = 0; i < 100 && !failed; i++) {
                int pidfd, status, sig, r;
                pid_t pid;

                r = child_launch(&l, &pid, &pidfd);
                if (r == CHILD_LAUNCH_NO_CLONE3)
                        break; /* valgrind: no clone3, nothing to test */
                if (r != 0)
                        failed = 1;
                else {
                        failed = child_launch_reap(pidfd, pid, true, &status, &sig) != 1 ||
                                 status != 0 || sig != 0;
                        close(pidfd);
                }
        }
        return (void *)failed;
}

/* Two threads launching at once: each child, whose steps may run on the
 * agent's memory and a stack made for them (child-launch.c), has that
 * stack to itself until its execve(). */
START_TEST(test_launch_from_two_threads)
{
        pthread_t t[2];
        void *failed[2];

        for (int i = 0; i < 2; i++)
                ck_assert_int_eq(pthread_create(&t[i], NULL, launch_many, NULL), 0);
        for (int i = 0; i < 2; i++) {
                ck_assert_int_eq(pthread_join(t[i], &failed[i]), 0);
                ck_assert_ptr_null(failed[i]);
        }
}
END_TEST

static void add_loop_tests(TCase *tl)
{
        tcase_add_test(tl, test_env_cwd_stdin);
        tcase_add_test(tl, test_signals_and_fds_reset);
        tcase_add_test(tl, test_fds_closed_before_pre_exec);
        tcase_add_test(tl, test_extra_fd);
        tcase_add_test(tl, test_extra_fds_shuffled);
        tcase_add_test(tl, test_path_lookup);
        tcase_add_test(tl, test_spawn_error);
        tcase_add_test(tl, test_cgroup_at_spawn);
        tcase_add_test(tl, test_audit_session);
}

static Suite *child_spawn_suite(void)
{
        Suite *s = suite_create("child-spawn");
        TCase *tl = child_loop_tcases(s, add_loop_tests);

        tcase_add_test(tl, test_fallback_discovered);
        tcase_add_test(tl, test_launch_from_two_threads);
        return s;
}

int main(int argc, char **argv)
{
        return child_test_main(argc, argv, helper_main, child_spawn_suite);
}
