/* proc: how plan-level code asks for a command to be run.
 *
 * Executors (Application, Chef, Puppet) and file downloads run commands,
 * but they run on the plan thread, which must not touch the event loop. They
 * describe the command here and call ProcRunner.run, which blocks the plan
 * thread until the command has finished; the runner (agent/runner/) carries
 * the request to the loop thread, where it runs inside the sandbox under the
 * plan's time limits. Tests give a ProcRunner of their own.
 *
 * This header is an interface only: no code. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

typedef struct ProcRequest {
        const char *const *argv; /* the command inside the sandbox, argv[0] looked up in PATH */
        const char *cwd;         /* working directory (absolute) */
        bool capture_stdout;     /* false: the stream is not kept (goes to the agent's log) */
        bool capture_stderr;
        const char *what; /* for logs and errors: "script deploy", "git clone of files/x" */
        bool network;     /* needs the network even under [sandbox] network_namespace:
                           * the agent's own downloads of a plan's files */
} ProcRequest;

typedef struct ProcResult {
        int exit_code;  /* as Python's Popen.returncode: exit status, or -N for signal N */
        char *out;      /* owned, NUL-terminated; NULL when not captured */
        size_t out_len; /* bytes (the text may contain NULs) */
        char *err;      /* likewise for stderr */
        size_t err_len;
        bool truncated; /* output was cut to the configured cap (marked in the text) */
        /* Set when the command did not run to its own end; exit_code is then
         * meaningless. A message for people, owned. */
        char *failure;
        int failure_kind; /* PROC_FAIL_* below, 0 when failure is NULL */
} ProcResult;

enum {
        PROC_FAIL_SPAWN = 1,   /* could not start, or the sandbox could not be applied */
        PROC_FAIL_TIMEOUT = 2, /* script_timeout or plan_timeout expired; the tree was killed */
        PROC_FAIL_STOPPED = 3, /* the agent is stopping; the tree was killed */
        PROC_FAIL_LIMIT = 4,   /* the cgroup's memory or pids limit stopped part of the tree */
};

typedef struct ProcRunner {
        void *userdata;
        /* Run one command to its end. Returns 0 with *ret filled (also when
         * ret->failure is set), or a negative errno when the agent itself
         * failed. Blocking; called on the plan thread. */
        int (*run)(void *userdata, const ProcRequest *req, ProcResult *ret);
} ProcRunner;

static inline void proc_result_clear(ProcResult *r)
{
        free(r->out);
        free(r->err);
        free(r->failure);
        *r = (ProcResult){0};
}
