/* Emptying and removing a run's cgroup (see cgroup.h). v2 kernels since 5.14
 * offer cgroup.kill, which kills every process of the cgroup at once,
 * including those forking at that moment. Elsewhere the listed processes get
 * SIGKILL one by one, over and over until the list stays empty: a process
 * that forks between the reading and the kill shows up on the next round,
 * and after SIGKILL nothing returns to user space to fork again. */
#include "sandbox/cgroup.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/cgroup-internal.h"

/* Pids are pinned with pidfds in batches of this many, to stay well within
 * the descriptor limit whatever the size of the list. */
#define KILL_BATCH 128

static bool pid_listed(const pid_t *pids, size_t n, pid_t pid)
{
        for (size_t i = 0; i < n; i++)
                if (pids[i] == pid)
                        return true;
        return false;
}

/* SIGKILL pids[0..n), all read from dir/cgroup.procs. A pid read from the
 * list may belong to a process that has exited and been replaced by an
 * unrelated one by the time we signal. To never hit that one, each pid is
 * first pinned with a pidfd, then the list is read again: a pid still listed
 * now names a process in the cgroup, and the pidfd refers to that same
 * process or to one that has exited, which the kernel then refuses to
 * signal. Kernels without pidfds (before 5.3) get plain kill(). */
static int kill_batch(const char *dir, const pid_t *pids, size_t n)
{
        int fds[KILL_BATCH];
        _cleanup_free_ pid_t *now = NULL;
        size_t n_now = 0;
        int r = 0;

        for (size_t i = 0; i < n; i++) {
                fds[i] = pidfd_open(pids[i], 0);
                if (fds[i] < 0 && errno == ENOSYS) {
                        for (size_t j = 0; j < n; j++)
                                (void)kill(pids[j], SIGKILL);
                        for (size_t j = 0; j < i; j++)
                                if (fds[j] >= 0)
                                        close(fds[j]);
                        return 0;
                }
        }
        r = cgroup_procs_read(dir, &now, &n_now);
        for (size_t i = 0; i < n; i++) {
                if (fds[i] < 0)
                        continue;
                if (r == 0 && pid_listed(now, n_now, pids[i]))
                        (void)pidfd_send_signal(fds[i], SIGKILL, NULL, 0);
                close(fds[i]);
        }
        return r;
}

/* Kill what dir lists (unless the kernel does it for us), and say whether
 * anything was listed. */
static int sweep(const char *dir, bool send_kill, bool *populated)
{
        _cleanup_free_ pid_t *pids = NULL;
        size_t n;
        int r = cgroup_procs_read(dir, &pids, &n);

        if (r < 0)
                return r;
        if (n > 0)
                *populated = true;
        for (size_t i = 0; send_kill && i < n; i += KILL_BATCH) {
                r = kill_batch(dir, pids + i, n - i < KILL_BATCH ? n - i : KILL_BATCH);
                if (r < 0)
                        return r;
        }
        return 0;
}

static uint64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Whether the run has cgroup.kill: v2, and a kernel from 5.14 on. */
static int has_kill_file(const CgroupRun *run, bool *ret)
{
        _cleanup_free_ char *path = NULL;

        if (run->version != CGROUP_VERSION_2) {
                *ret = false;
                return 0;
        }
        if (asprintf(&path, "%s/cgroup.kill", run->dirs[0]) < 0)
                return -ENOMEM;
        *ret = access(path, F_OK) == 0;
        return 0;
}

int cgroup_run_kill_and_remove(CgroupRun *run, unsigned timeout_ms)
{
        uint64_t deadline = now_ms() + timeout_ms;
        unsigned delay_us = 500;
        bool kill_file;
        int r;

        if (run->n == 0)
                return 0;
        if ((r = has_kill_file(run, &kill_file)) < 0)
                return r;
        for (;;) {
                bool populated = false, busy = false;

                /* cgroup.kill also takes the processes that fork while it
                 * works; it is written again on each round only for a
                 * process that was moved into the cgroup from outside. */
                if (kill_file && (r = cgroup_file_write(run->dirs[0], "cgroup.kill", "1")) < 0)
                        return r;
                for (size_t i = 0; i < run->n; i++)
                        if ((r = sweep(run->dirs[i], !kill_file, &populated)) < 0)
                                return r;
                /* The counts, for cgroup_run_events() after the removal:
                 * read once nothing is left that could add to them. */
                if (!populated && !run->events_kept) {
                        if ((r = cgroup_run_events_read(run, &run->events)) < 0)
                                return r;
                        run->events_kept = true;
                }
                /* rmdir can still say EBUSY for a moment after the list has
                 * emptied, while the last exits are accounted. */
                for (size_t i = run->n; !populated && i > 0; i--) {
                        if (rmdir(run->dirs[i - 1]) < 0 && errno != ENOENT) {
                                if (errno != EBUSY)
                                        return -errno;
                                busy = true;
                                break;
                        }
                        free(run->dirs[i - 1]);
                        run->dirs[i - 1] = NULL;
                        run->n--;
                }
                if (!populated && !busy)
                        return 0;
                if (now_ms() >= deadline)
                        return CGROUP_BUSY;
                usleep(delay_us);
                if (delay_us < 16000)
                        delay_us *= 2;
        }
}
