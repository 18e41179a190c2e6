/* runner: one plan's life, from a validated plan document to its result
 * document: files, Body, scripts, result (floor 4).
 *
 * The Body runs synchronously (a script call returns the script's result),
 * but the event loop must keep serving heartbeats, signals and timers while
 * scripts run. So each plan runs on a plan thread of its own, and the loop
 * thread does everything that touches the loop: when the Body calls a
 * script, the plan thread hands a ProcRequest (agent/proc/proc.h) to the
 * loop thread through a uv_async_t and waits on a condition variable; the
 * loop thread runs the command in the sandbox (agent/sandbox/) as a child
 * (agent/child/) and wakes the plan thread with the outcome. Time limits
 * live on the loop thread too: a plan timeout kills the running script's
 * tree and sets a flag the Body interpreter polls, so neither a hanging
 * script nor a spinning Body can outlive it. docs/architecture.md has the
 * picture.
 *
 * One plan at a time, as the reference. All functions are called on the
 * loop thread. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>
#include <uv.h>

#include "config/config.h"
#include "journal/journal-calls.h"
#include "plan/plan.h"
#include "proc/proc.h"

typedef struct Runner Runner;

/* The plan is over. result is a new reference the callee owns: the result
 * document (agent/result/), ready for result_to_text(). */
typedef void (*runner_done_cb)(Runner *r, json_t *result, void *userdata);

/* Prepare a runner on loop. cfg is borrowed and must outlive the runner;
 * storage (may be NULL) overrides cfg->storage. Writes to *ret_warning (may
 * be NULL) a sentence to log when a sandbox feature cannot be had and was
 * not demanded (cgroup = auto with no writable cgroup), NULL otherwise.
 * Returns 0; RUNNER_UNAVAILABLE with *ret_error set when a feature that was
 * asked for cannot be applied (cgroup = v2 on a v1 host, no sandbox helper);
 * or a negative errno. */
#define RUNNER_UNAVAILABLE 1

/* [sandbox] pids_max = auto: the process (and thread) limit of a run's
 * cgroup. systemd gives a service 15% of kernel.pid_max by default (4915
 * of 32768); a package install peaks in the tens (docs/sandbox.md, "What
 * holds by default"). memory_max = auto is a share of the RAM
 * (runner.c). */
#define RUNNER_PIDS_MAX_AUTO 4096

int runner_new(uv_loop_t *loop, const Config *cfg, const char *storage, Runner **ret,
               char **ret_warning, char **ret_error);

/* Start a plan. plan is borrowed: the runner takes a reference of its own,
 * and the caller must not change the plan until the runner is done with it
 * (runner_busy() is false). source_id is the value the result's SourceID
 * takes when the plan has no ID (the AMQP message_id; NULL gives ""),
 * reply_to likewise for ReplyTo. done is called once, later, on the loop
 * thread, as soon as the result is known; the plan's files are
 * removed after that, on the plan's thread, and the runner is busy
 * (runner_busy()) until they are. A plan started meanwhile is accepted: its
 * thread starts once that removal is over. Returns 0, -EBUSY when a plan
 * is running (done not called yet), -ESHUTDOWN after runner_stop(), or a
 * negative errno (then done is never called). */
int runner_start(Runner *r, const json_t *plan, const json_t *source_id, const json_t *reply_to,
                 runner_done_cb done, void *userdata);

/* The next plan started records its Body's calls in the call log of entry
 * directory dir (journal/journal-calls.h), sealed with key (taken, even on
 * failure: only that plan's thread holds it), and resumes from it
 * (runner/runner-durable.h); NULL: no log. Call before runner_start().
 * A plan suspended for a reboot it asked for reaches done with a NULL
 * result: it has none in this run. Returns 0 or -ENOMEM. */
int runner_set_call_log(Runner *r, const char *dir, JournalCallsKey *key);

/* The next plan started reads its Files' bodies from text where the plan
 * keeps them there (plan_parse_json_kept(); taken, and freed with the
 * plan's run); NULL: nowhere but the plan. Call before runner_start(). */
void runner_set_plan_text(Runner *r, PlanText *text);

/* A plan runs, or the last one's files are still being removed. */
bool runner_busy(const Runner *r);

/* The running plan's ID as the runner's log entries name it (its ID, else
 * source_id, as text), or NULL when no plan runs. Valid until the plan's
 * done callback returns. */
const char *runner_plan_id(const Runner *r);

/* cb (NULL: none) is called on the loop thread each time the runner stops
 * being busy, which may be after done was called: what waits for an idle
 * runner (a stop) waits for this. */
typedef void (*runner_idle_cb)(Runner *r, void *userdata);
void runner_set_idle_cb(Runner *r, runner_idle_cb cb, void *userdata);

/* What the runner tells, as it happens, of the running plan's commands
 * (scripts and downloads), for a live view (the daemon's status and
 * progress events). Every member may be NULL; all are called on the loop
 * thread, and their strings are borrowed for the call. */
typedef struct RunnerObserver {
        /* A command was started as pid (what: "script deploy"). */
        void (*started)(void *userdata, const char *what, pid_t pid);
        /* A piece of its captured output: stream 1 is stdout, 2 stderr. */
        void (*output)(void *userdata, int stream, const char *data, size_t len);
        /* It is over: its exit code, and failure (NULL when it ran to its
         * own end) as the plan's result will tell it. */
        void (*finished)(void *userdata, const char *what, int exit_code, const char *failure);
} RunnerObserver;

/* Tell obs (copied; NULL: nobody) from now on. */
void runner_set_observer(Runner *r, const RunnerObserver *obs, void *userdata);

/* Take no new plans; give a running script grace_seconds to finish, then
 * kill its tree. The running plan still reports, with the interrupted error
 * result. */
void runner_stop(Runner *r, unsigned grace_seconds);

/* Cancel the running plan whose ID is plan_id: its SourceID as text (the
 * plan's ID, else the message's message_id; an integer ID in decimal). by
 * says who asked, for the result ("a remote request"). The running script's
 * tree is stopped as at a timeout (SIGTERM to its process group, SIGKILL
 * kill_grace later, then its cgroup and its audit session), no script
 * starts after it, the Body stops, and the plan's one result, through
 * done, is ErrorCode 107 (RESULT_CODE_CANCELLED) with the message "The
 * plan was cancelled by <by> during <call>", where call names what ran:
 * the command (`script deploy`), the script the Body was calling, or the
 * Body between calls; AdditionalInfo is what the Body's own error carried
 * (the stopped script's output). *ret_during (may be NULL) gets that call
 * text, owned. Returns 0; RUNNER_CANCEL_ENDING when that plan is ending
 * already (its time ran out, the agent stops, it was cancelled before, or
 * its result is made and only waits for the loop): nothing changes;
 * -ESRCH when no plan with that ID runs; -ENOMEM. */
#define RUNNER_CANCEL_ENDING 1
int runner_cancel_plan(Runner *r, const char *plan_id, const char *by, char **ret_during);

/* What held for a command run by runner_run_command(): it started in a
 * cgroup of its own (with the run limits), and with an audit session of its
 * own, through which what it left outside the cgroup is found and killed
 * after it. False when the configuration or the kernel does not give it
 * (the runner then logged why, as for a plan's script). */
typedef struct RunnerContainment {
        bool cgroup;
        bool session;
} RunnerContainment;

/* Run one command as a plan's script call runs (runner-proc.c): its
 * cgroup made and killed and removed, its audit session swept, the sandbox
 * (the helper or the in-process steps, with rlimits and oom_score_adj),
 * script_timeout and output_limit, the same log entries; but without a
 * plan: no thread, no hand-off, no Body, no files. It blocks, running the
 * loop until the command is over, so call it on the loop thread while no
 * plan runs (-EBUSY otherwise), with nothing else to serve on the loop.
 * id names the run (the log's plan ID, the cgroup's name). For
 * bench-daemon's contained floor (bench/bench-daemon-contained.c), which
 * prices the containment alone. Returns 0 with *ret filled (ret->failure
 * set when the command did not run to its own end) and *ret_contained (may
 * be NULL), or a negative errno. */
int runner_run_command(Runner *r, const char *id, const ProcRequest *req, ProcResult *ret,
                       RunnerContainment *ret_contained);

/* Free an idle runner; its handles are closed on the loop, so run the loop
 * once more afterwards. Accepts NULL. */
void runner_free(Runner *r);
