/* Shared between the runner's loop side (runner.c, runner-proc.c) and its
 * plan thread (runner-plan.c). The comments say which thread may touch
 * what; "locked" fields are guarded by Runner.lock. */
#pragma once

#include <jansson.h>
#include <stdatomic.h>
#include <uv.h>

#include "child/child.h"
#include "child/child-session.h"
#include "config/config.h"
#include "proc/proc.h"
#include "runner/runner.h"
#include "sandbox/cgroup.h"

enum {
        RUNNER_CANCEL_NONE = 0,
        RUNNER_CANCEL_TIMEOUT = 1, /* the plan's time is up */
        RUNNER_CANCEL_STOP = 2,    /* the agent is stopping */
        RUNNER_CANCEL_REQUEST = 3, /* runner_cancel_plan(): someone asked */
        RUNNER_CANCEL_LATE = 4,    /* the plan thread made its result: it stands */
};

typedef enum RunnerRequestState {
        REQUEST_IDLE,
        REQUEST_PENDING, /* posted by the plan thread, not yet seen by the loop */
        REQUEST_RUNNING, /* the loop thread is running it */
        REQUEST_DONE,    /* *res is filled; the plan thread may go on */
} RunnerRequestState;

typedef struct RunnerJob {
        Runner *runner;

        /* Set before the plan thread starts, then read-only. */
        json_t *plan;               /* owned */
        json_t *source_id;          /* owned: SourceID of the result */
        json_t *reply_to;           /* owned: ReplyTo of the result */
        char *id;                   /* owned: the plan ID as text (pyjson_id_text()), for the log */
        char *dir;                  /* owned: the plan ID, or a fresh one, safe as a file name */
        unsigned timeout;           /* seconds for the whole plan, 0 = none */
        char *calls_dir;            /* owned: the entry whose call log records the Body, or NULL */
        JournalCallsKey *calls_key; /* owned: what seals that log */
        PlanText *plan_text;        /* owned: runner_set_plan_text(), or NULL */
        runner_done_cb done;
        void *userdata;
        uv_thread_t thread;

        /* Written by the loop thread, polled by the plan thread. */
        atomic_int cancel; /* RUNNER_CANCEL_* */
        /* RUNNER_CANCEL_REQUEST: the result's message, written by the loop
         * thread before it sets cancel, read by the plan thread after it
         * saw the flag; owned. */
        char *cancel_message;

        /* locked: one request at a time from the plan thread */
        RunnerRequestState state;
        const ProcRequest *req;
        ProcResult *res;
        int req_rc;
        bool result_ready; /* the result is posted; the thread cleans up */
        bool thread_done;  /* the thread has ended: join it */
        json_t *result;    /* written by the plan thread before result_ready */
        const char *call;  /* the script the Body is calling (borrowed from plan), or NULL */
        bool suspended;    /* likewise: no result, the plan resumes at the next start */
        /* Written by the plan thread before its first request, read by the
         * loop thread while it runs requests (the lock orders the two). */
        char *cache_dir; /* the plan's files directory, writable in the sandbox */

        /* loop thread only */
        bool thread_started; /* false while the last plan's thread cleans up */
        Child *child;
        CgroupRun *cg_run;
        bool cg_events_logged; /* kill_run_cgroup() has spoken for this run */
        int status_fd;         /* read end of the sandbox helper's status pipe, -1 if none */
        /* The run's audit session, CHILD_SESSION_NONE for none. */
        uint32_t session;
} RunnerJob;

struct Runner {
        uv_loop_t *loop;
        const Config *cfg; /* borrowed */
        char *storage;     /* owned */
        char *helper;      /* owned: muranoagent-sandbox, NULL when the sandbox is off */
        char *home;        /* owned: HOME for scripts */
        char *fetcher;     /* owned: muranoagent-fetch, NULL when not found */
        int proc_fd;       /* owned: O_PATH of /proc, opened at start; -1 = none (no
                            * /proc then, or the sandbox is off) */
        bool set_owner;    /* scripts run as someone else: the owner of their files */
        uid_t owner_uid;   /* [sandbox] user, looked up */
        gid_t owner_gid;   /* [sandbox] group, looked up */
        Cgroup *cgroup;    /* owned, NULL when cgroups are off */
        uv_async_t wake;   /* the plan thread wakes the loop with it */
        /* The agent's own audit session: a run that kept it has none. */
        uint32_t own_session;
        uid_t audit_uid; /* the loginuid scripts get (child_session_uid()) */
        uv_timer_t plan_timer;
        uv_timer_t stop_timer;
        uv_mutex_t lock;
        uv_cond_t cond;
        RunnerJob *job; /* the running plan, NULL when idle */
        /* The last plan: its result is delivered, its thread still removes
         * the plan's files. A plan started meanwhile gets its thread when
         * this one has ended. NULL when none. */
        RunnerJob *finishing;
        char *next_calls_dir; /* owned: runner_set_call_log() for the next start */
        JournalCallsKey *next_calls_key;
        PlanText *next_plan_text; /* owned: runner_set_plan_text() for the next start */
        runner_idle_cb idle_cb;
        void *idle_userdata;
        RunnerObserver observer;
        void *observer_userdata;
        bool stopping;
        int open_handles;
        /* owned: the storage and the config files, which hide_agent hides */
        char **agent_paths;
        size_t n_agent_paths;
};

/* runner-plan.c: the plan thread's main function (arg is the RunnerJob). */
void runner_plan_main(void *arg);

/* runner-plan.c: an error result for job (NULL when out of memory). */
json_t *runner_job_error(RunnerJob *job, int code, const char *message);

/* runner-plan.c: the ProcRunner the plan thread hands to executors and
 * file downloads; blocks until the loop thread has run the request. */
int runner_proc_run(void *userdata, const ProcRequest *req, ProcResult *ret);

/* runner-proc.c: start the pending request of job on the loop thread. */
void runner_proc_start(RunnerJob *job);

/* runner-proc.c: end the running request's child (timeout or stop). */
void runner_proc_cancel(RunnerJob *job);

/* runner.c: hand a finished request back to the plan thread. */
void runner_request_finish(RunnerJob *job, int rc);
