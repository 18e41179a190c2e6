/* Tests for the child started in the agent's memory (clone3() with CLONE_VM
 * | CLONE_VFORK, child-launch.c): it shares the parent's memory rather than
 * copying it, so a large parent does not make a launch slower; a handler of
 * the parent never runs in it; a child that changes its user id leaves the
 * parent dumpable; a hook may use a deep stack; and failures still reach
 * the parent. Where the build starts children as a fork (ASan, another
 * architecture) or clone3 is refused (valgrind), the tests check the fork's
 * behaviour or return. The fixtures are in test-child.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "child/child-clone-vm.h"
#include "test-child.h"

static int helper_main(const char *name, int argc, char **argv)
{
        (void)argc;
        (void)argv;
        fprintf(stderr, "unknown helper %s\n", name);
        return 95;
}

/* Start one child, so that the method is decided (clone3 is refused under
 * valgrind). True when children are started with clone3(). */
static bool have_clone3(void)
{
        ChildSpec spec = {.argv = ARGV("/bin/true")};
        Run run = {0};

        run_spec(&spec, &run);
        run_free(&run);
        return child_spawn_method() != CHILD_SPAWN_FORK;
}

/* pre_exec hook: write the child's pid where data points. A hook must not
 * write the parent's memory: this one does, to tell a shared memory from a
 * copy. */
static void write_pid(void *data)
{
        *(volatile pid_t *)data = getpid();
}

/* The child runs in the parent's memory where the build can do it: what the
 * hook writes, the parent sees; a copy would keep it to itself. */
START_TEST(test_vm_shares_memory)
{
        ChildSpec spec = {.argv = ARGV("/bin/true"), .pre_exec = write_pid};
        pid_t seen = 0;
        Run run = {0};

        if (!have_clone3())
                return;
        ck_assert_int_eq(child_spawn_shares_memory(), CHILD_CLONE_VM);
        spec.exec_data = &seen;
        run_spec(&spec, &run);
        ck_assert_int_eq(child_result_exit_code(&run.r), 0);
        ck_assert_int_eq(seen, CHILD_CLONE_VM ? run.pid : 0);
        run_free(&run);
}
END_TEST

static int64_t now_us(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int cmp_i64(const void *a, const void *b)
{
        int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

        return (x > y) - (x < y);
}

#define SPAWNS 15

/* The median time child_spawn() takes to start /bin/true: until the
 * verdict, so until the program runs. */
static int64_t spawn_median_us(void)
{
        ChildSpec spec = {.argv = ARGV("/bin/true")};
        int64_t t[SPAWNS];
        uv_loop_t loop;

        ck_assert_int_eq(uv_loop_init(&loop), 0);
        for (int i = 0; i < SPAWNS; i++) {
                Run run = {0};
                int64_t t0 = now_us();

                ck_assert_int_eq(child_spawn(&loop, &spec, run_on_done, &run, &run.child), 0);
                t[i] = now_us() - t0;
                ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
                ck_assert_int_eq(run.calls, 1);
                run_free(&run);
        }
        ck_assert_int_eq(uv_loop_close(&loop), 0);
        qsort(t, SPAWNS, sizeof(t[0]), cmp_i64);
        return t[SPAWNS / 2];
}

#define BIG_SIZE ((size_t)512 << 20)

/* What a launch costs does not grow with the parent's memory: with 512 MiB
 * touched in small pages, a fork copies 131072 page table entries and
 * write-protects them, to throw them away at the exec (48 ms against 0.5
 * ms without, here); a child in the parent's memory copies none. The bound
 * leaves room for a busy machine. */
START_TEST(test_vm_big_parent_not_slower)
{
        int64_t small, big;
        char *p;

        if (!have_clone3() || !child_spawn_shares_memory())
                return;
        small = spawn_median_us();
        p = mmap(NULL, BIG_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        ck_assert_ptr_ne(p, MAP_FAILED);
        (void)madvise(p, BIG_SIZE, MADV_NOHUGEPAGE);
        memset(p, 1, BIG_SIZE);
        big = spawn_median_us();
        ck_assert_int_eq(munmap(p, BIG_SIZE), 0);
        ck_assert_msg(big < 4 * small + 2000, "%lld us with 512 MiB, %lld us without",
                      (long long)big, (long long)small);
}
END_TEST

static volatile sig_atomic_t handler_calls;

static void count_handler(int sig)
{
        (void)sig;
        handler_calls++;
}

/* pre_exec hook: send the child SIGUSR1, which the parent handles. */
static void send_usr1(void *data)
{
        (void)data;
        (void)kill(getpid(), SIGUSR1);
}

/* A handler of the parent never runs in the child, where it would run on
 * the parent's memory: the child's dispositions are the default before it
 * can take a signal, so SIGUSR1 kills it, and the parent's counter stays. */
START_TEST(test_vm_parent_handler_never_runs)
{
        struct sigaction sa = {.sa_handler = count_handler}, old;
        ChildSpec spec = {.argv = ARGV("/bin/true"), .pre_exec = send_usr1};
        Run run = {0};

        if (!have_clone3())
                return;
        ck_assert_int_eq(sigaction(SIGUSR1, &sa, &old), 0);
        run_spec(&spec, &run);
        ck_assert_int_eq(sigaction(SIGUSR1, &old, NULL), 0);
        ck_assert_int_eq(run.r.term_signal, SIGUSR1);
        ck_assert_int_eq(handler_calls, 0);
        run_free(&run);
}
END_TEST

/* pre_exec hook: become nobody, as the sandbox's steps change identity. */
static void become_nobody(void *data)
{
        (void)data;
        if (syscall(SYS_setresgid, 65534, 65534, 65534) < 0 ||
            syscall(SYS_setresuid, 65534, 65534, 65534) < 0)
                _exit(90);
}

/* A child that changes its user id makes the kernel mark its memory not
 * dumpable; shared, that is the parent's, which is dumpable again when
 * child_spawn() returns. Root only. */
START_TEST(test_vm_parent_stays_dumpable)
{
        ChildSpec spec = {.argv = ARGV("/bin/true"), .pre_exec = become_nobody};
        Run run = {0};

        if (geteuid() != 0 || !have_clone3())
                return;
        ck_assert_int_eq(prctl(PR_GET_DUMPABLE), 1);
        run_spec(&spec, &run);
        ck_assert_int_eq(child_result_exit_code(&run.r), 0);
        ck_assert_int_eq(prctl(PR_GET_DUMPABLE), 1);
        run_free(&run);
}
END_TEST

/* pre_exec hook: use 128 KiB of stack. */
static void deep_stack(void *data)
{
        volatile char buf[128 << 10];

        (void)data;
        memset((char *)buf, 7, sizeof(buf));
        if (buf[sizeof(buf) - 1] != 7)
                _exit(91);
}

START_TEST(test_vm_deep_stack_hook)
{
        ChildSpec spec = {.argv = ARGV("/bin/true"), .pre_exec = deep_stack};
        Run run = {0};

        if (!have_clone3())
                return;
        run_spec(&spec, &run);
        ck_assert_int_eq(child_result_exit_code(&run.r), 0);
        run_free(&run);
}
END_TEST

/* exec_failed hook: the errno to descriptor 3, then exit 127. */
static void report_errno(void *data, int err)
{
        (void)data;
        (void)!write(3, &err, sizeof(err));
        _exit(127);
}

/* Failures reach the parent: a missing program and a working directory
 * that cannot be entered as spawn_error, a missing program with the
 * exec_failed hook as the errno the hook gets. */
START_TEST(test_vm_failures)
{
        ChildSpec spec = {.argv = ARGV("/nonexistent/program")};
        int p[2], err = 0;
        Run run = {0};

        if (!have_clone3())
                return;
        run_spec(&spec, &run);
        ck_assert_int_eq(run.r.spawn_error, -ENOENT);
        run_free(&run);

        memset(&run, 0, sizeof(run));
        spec.argv = ARGV("/bin/true");
        spec.cwd = "/nonexistent";
        run_spec(&spec, &run);
        ck_assert_int_eq(run.r.spawn_error, -ENOENT);
        run_free(&run);

        memset(&run, 0, sizeof(run));
        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        spec.argv = ARGV("no-such-program-here");
        spec.envp = ARGV("PATH=/nonexistent:/bin");
        spec.cwd = NULL;
        spec.extra_fds = &p[1];
        spec.n_extra_fds = 1;
        spec.exec_failed = report_errno;
        run_spec(&spec, &run);
        close(p[1]);
        ck_assert_int_eq(read(p[0], &err, sizeof(err)), (ssize_t)sizeof(err));
        close(p[0]);
        ck_assert_int_eq(err, ENOENT);
        ck_assert_int_eq(child_result_exit_code(&run.r), 127);
        run_free(&run);
}
END_TEST

static Suite *child_vm_suite(void)
{
        Suite *s = suite_create("child-vm");
        TCase *tc = tcase_create("vm");

        tcase_add_checked_fixture(tc, become_subreaper, NULL);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_vm_shares_memory);
        tcase_add_test(tc, test_vm_big_parent_not_slower);
        tcase_add_test(tc, test_vm_parent_handler_never_runs);
        tcase_add_test(tc, test_vm_parent_stays_dumpable);
        tcase_add_test(tc, test_vm_deep_stack_hook);
        tcase_add_test(tc, test_vm_failures);
        suite_add_tcase(s, tc);
        return s;
}

int main(int argc, char **argv)
{
        return child_test_main(argc, argv, helper_main, child_vm_suite);
}
