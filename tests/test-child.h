/* Fixtures shared by test-child.c and test-child-spawn.c. The child is
 * the test program itself in helper mode ("--helper=NAME", each program
 * with its own helpers) or a system program. A Run records the one report
 * of a child run on a loop of its own, which is closed cleanly. The loop
 * tests run twice: with clone3() ("loop") and with the uv_spawn() fallback
 * forced ("loop-fork"). The test process is a child subreaper, so that the
 * grandchildren the helpers leave are reparented to it and a test can tell,
 * with waitpid(), exactly how they died. */
#pragma once

#include <check.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "child/child.h"
#include "util/macro.h"
#include "test-lib.h"

static char self_exe[PATH_MAX];

/* ---- helper mode ---- */

/* Write all of p to fd; a helper that cannot exits with 99, which the
 * test that started it sees. */
static inline void helper_write_all(int fd, const void *p, size_t n)
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

static inline int64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void run_on_done(Child *c, ChildResult *r, void *userdata)
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

static inline void run_free(Run *run)
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

static inline void run_spec(const ChildSpec *spec, Run *run)
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

/* run_spec() of this program in helper mode arg ("--helper=NAME"). */
static inline void run_helper(const char *arg, Run *run)
{
        ChildSpec spec = HELPER_SPEC(arg);

        run_spec(&spec, run);
}

/* ---- the programs' suites ---- */

/* Orphaned grandchildren come to the test process, so tests can reap and
 * examine them. A checked fixture, because fork() does not pass it on. */
static inline void become_subreaper(void)
{
        ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
}

/* "loop-fork": every loop test again with the uv_spawn() fallback. */
static inline void force_fork(void)
{
        child_spawn_method_limit(CHILD_SPAWN_FORK);
}

static inline void method_reset(void)
{
        child_spawn_method_reset();
}

/* Add the tcases "loop" and "loop-fork" to s, each with the tests that
 * add_tests() adds, and return "loop" for the tests that run only once. */
static inline TCase *child_loop_tcases(Suite *s, void (*add_tests)(TCase *))
{
        TCase *tl = tcase_create("loop"), *tf = tcase_create("loop-fork");

        tcase_add_checked_fixture(tf, force_fork, method_reset);
        tcase_set_timeout(tl, 30);
        tcase_set_timeout(tf, 30);
        tcase_add_checked_fixture(tl, become_subreaper, NULL);
        tcase_add_checked_fixture(tf, become_subreaper, NULL);
        add_tests(tl);
        add_tests(tf);
        suite_add_tcase(s, tl);
        suite_add_tcase(s, tf);
        return tl;
}

/* main() of both programs: the helper called NAME with --helper=NAME, else
 * the suite that make_suite() builds. */
static inline int child_test_main(int argc, char **argv,
                                  int (*helper)(const char *name, int argc, char **argv),
                                  Suite *(*make_suite)(void))
{
        size_t size = sizeof(self_exe);

        if (argc > 1 && strncmp(argv[1], "--helper=", 9) == 0)
                return helper(argv[1] + strlen("--helper="), argc, argv);
        if (uv_exepath(self_exe, &size) < 0)
                return EXIT_FAILURE;
        return check_run(make_suite());
}
