/* Test hooks for the integration tests' kill -9 and SIGTERM runs
 * (tests/integration/kill9.sh, sigterm.sh): MURANOAGENT_CRASH_AT=POINT[:N]
 * makes the daemon kill itself with SIGKILL the N-th time (default 1) it
 * reaches POINT, so that a test can stop it at an exact step of a plan's
 * life instead of hoping a random sleep lands there; MURANOAGENT_STOP_AT
 * does the same with SIGTERM, a stop request, and where the point is on a
 * thread-pool thread it waits until the loop has taken the request in. The
 * points, in that order:
 *
 *   stored     the plan is durably in the journal; the ack is not sent
 *   checked    the plan passed its checks (thread pool); it is not marked
 *              running yet
 *   begun      the plan is marked running (and its stamp taken); nothing ran
 *   result     the result is durably in the journal; it is not published
 *   published  the result was handed to the transport; no confirm yet
 *   confirmed  the broker confirmed the result; the entry is not removed
 *
 * Unset (always, outside tests) each costs one branch per point. SIGKILL,
 * not abort(): nothing of ours may run on the way out, exactly as with
 * kill -9 from outside, and no core file is written.
 *
 * MURANOAGENT_SLOW_FSYNC_MS=N makes every flush of the journal take N ms
 * more (the fsync(), fdatasync() and syncfs() of its JournalOps, and the
 * fdatasync() of its write-ahead log's JournalLogOps), a slow disk for
 * tests/integration/slow-disk.sh. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/daemon-internal.h"
#include "journal/journal-log.h"
#include "log/log.h"

static const char *const points[] = {"stored", "checked",   "begun",
                                     "result", "published", "confirmed"};

static void hook_init(const char *var, const char *what, DaemonHook *h)
{
        const char *v = getenv(var);
        size_t len;
        unsigned long n = 1;

        h->point = NULL;
        if (!v || !*v)
                return;
        len = strcspn(v, ":");
        if (v[len] == ':') {
                char *end;
                n = strtoul(v + len + 1, &end, 10);
                if (*end || n == 0)
                        n = 0;
        }
        for (size_t i = 0; n > 0 && i < sizeof(points) / sizeof(points[0]); i++)
                if (strlen(points[i]) == len && strncmp(points[i], v, len) == 0)
                        h->point = points[i];
        if (!h->point) {
                log_warning(NULL, "%s=%s is not POINT[:N] with a known point; ignoring it", var, v);
                return;
        }
        h->countdown = (unsigned)n;
        log_warning(NULL, "test hook: the agent %s at '%s' (time %lu)", what, h->point, n);
}

void daemon_crash_init(Daemon *d)
{
        d->loop_thread = uv_thread_self();
        hook_init("MURANOAGENT_CRASH_AT", "kills itself", &d->crash);
        hook_init("MURANOAGENT_STOP_AT", "sends itself SIGTERM", &d->stop_hook);
}

/* Whether h fires at point now. One plan is at one point at a time (the
 * pump's lanes see to that), so the countdown needs no lock. */
static bool hook_fires(DaemonHook *h, const char *point)
{
        if (!h->point || strcmp(h->point, point) != 0)
                return false;
        return --h->countdown == 0;
}

void daemon_crash_point(Daemon *d, const char *point)
{
        if (hook_fires(&d->crash, point)) {
                log_warning(NULL, "test hook: killing the agent at '%s'", point);
                raise(SIGKILL);
        }
        if (hook_fires(&d->stop_hook, point)) {
                log_warning(NULL, "test hook: SIGTERM at '%s'", point);
                kill(getpid(), SIGTERM);
                /* Off the loop thread, wait until the loop has taken the
                 * stop in, as if it had come just before this point. */
                if (!uv_thread_equal(&d->loop_thread, &(uv_thread_t){uv_thread_self()}))
                        for (int i = 0; i < 10000 && !daemon_stop_requested(d); i++)
                                usleep(1000);
        }
}

static unsigned slow_fsync_ms;

static int slow_fsync(int fd)
{
        usleep(slow_fsync_ms * 1000U);
        return fsync(fd);
}

static int slow_fdatasync(int fd)
{
        usleep(slow_fsync_ms * 1000U);
        return fdatasync(fd);
}

static int slow_syncfs(int fd)
{
        usleep(slow_fsync_ms * 1000U);
        return syncfs(fd);
}

void daemon_test_journal_ops(JournalOptions *jo)
{
        static const JournalOps slow = {
                .fsync = slow_fsync, .fdatasync = slow_fdatasync, .syncfs = slow_syncfs};
        static const JournalLogOps slow_log = {.fdatasync = slow_fdatasync};
        const char *v = getenv("MURANOAGENT_SLOW_FSYNC_MS");
        unsigned long ms;
        char *end;

        if (!v || !*v)
                return;
        ms = strtoul(v, &end, 10);
        if (*end || ms == 0 || ms > 60000) {
                log_warning(NULL, "MURANOAGENT_SLOW_FSYNC_MS=%s is not 1 to 60000; ignoring it", v);
                return;
        }
        slow_fsync_ms = (unsigned)ms;
        log_warning(NULL, "test hook: every flush of the journal takes %lu ms more", ms);
        jo->ops = &slow;
        jo->wal_ops = &slow_log;
}
