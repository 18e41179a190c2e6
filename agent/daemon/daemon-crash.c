/* A test hook for the integration tests' kill -9 runs
 * (tests/integration/kill9.sh): MURANOAGENT_CRASH_AT=POINT[:N] makes the
 * daemon kill itself with SIGKILL the N-th time (default 1) it reaches
 * POINT, so that a test can stop it at an exact step of a plan's life
 * instead of hoping a random sleep lands there. The points, in that order:
 *
 *   stored     the plan is durably in the journal; the ack is not sent
 *   begun      the plan is marked running (and its stamp taken); nothing ran
 *   result     the result is durably in the journal; it is not published
 *   published  the result was handed to the transport; no confirm yet
 *   confirmed  the broker confirmed the result; the entry is not removed
 *
 * Unset (always, outside tests) it costs one branch per point. SIGKILL, not
 * abort(): nothing of ours may run on the way out, exactly as with kill -9
 * from outside, and no core file is written. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/daemon-internal.h"
#include "log/log.h"

static const char *const points[] = {"stored", "begun", "result", "published", "confirmed"};

void daemon_crash_init(Daemon *d)
{
        const char *v = getenv("MURANOAGENT_CRASH_AT");
        size_t len;
        unsigned long n = 1;

        d->crash_point = NULL;
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
                        d->crash_point = points[i];
        if (!d->crash_point) {
                log_warning(NULL,
                            "MURANOAGENT_CRASH_AT=%s is not POINT[:N] with a known point; "
                            "ignoring it",
                            v);
                return;
        }
        d->crash_countdown = (unsigned)n;
        log_warning(NULL, "test hook: the agent kills itself at '%s' (time %lu)", d->crash_point,
                    n);
}

void daemon_crash_point(Daemon *d, const char *point)
{
        if (!d->crash_point || strcmp(d->crash_point, point) != 0)
                return;
        if (--d->crash_countdown > 0)
                return;
        log_warning(NULL, "test hook: killing the agent at '%s'", point);
        raise(SIGKILL);
}
