/* One command run as a plan's script call runs, without a plan: the
 * loop-thread half (runner-proc.c) driven from the loop thread itself, so
 * that bench-daemon's contained floor pays for the containment and nothing
 * else (see runner.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runner/runner-internal.h"

int runner_run_command(Runner *r, const char *id, const ProcRequest *req, ProcResult *ret,
                       RunnerContainment *ret_contained)
{
        RunnerJob job = {.runner = r, .req = req, .res = ret, .status_fd = -1};
        RunnerContainment contained = {0};
        RunnerRequestState state;

        if (r->job || r->finishing || r->stopping)
                return -EBUSY;
        job.id = strdup(id);
        job.dir = strdup(id);
        if (!job.id || !job.dir) {
                free(job.id);
                free(job.dir);
                return -ENOMEM;
        }
        atomic_init(&job.cancel, RUNNER_CANCEL_NONE);
        job.state = REQUEST_RUNNING;
        runner_proc_start(&job);
        /* The spawn is synchronous: the child runs now (its done callback
         * comes from the loop), or it failed and its run was released. */
        if (job.child) {
                contained.cgroup = job.cg_run != NULL;
                contained.session = job.session != CHILD_SESSION_NONE;
        }
        /* runner_request_finish() sets the state under the lock, from the
         * child's done callback on this same thread. */
        for (;;) {
                uv_mutex_lock(&r->lock);
                state = job.state;
                uv_mutex_unlock(&r->lock);
                if (state == REQUEST_DONE)
                        break;
                uv_run(r->loop, UV_RUN_ONCE);
        }
        free(job.id);
        free(job.dir);
        if (ret_contained)
                *ret_contained = contained;
        return job.req_rc;
}
