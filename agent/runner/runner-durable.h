/* runner-durable: durable Body calls on the plan thread (docs/daemon.md,
 * "Durable calls, resume and reboots").
 *
 * Every script call, and every value the Body draws that is not a pure
 * function of the plan (BodyHost.draw), is recorded in the entry's call
 * log (journal/journal-calls.h) before the Body goes on. When the plan
 * runs again after a crash, the Body runs from the top and the log answers
 * in order: a recorded call returns its recorded result without running,
 * a drawn value is the recorded one. The call that was running when the
 * agent died ends the plan as interrupted, unless its script is marked
 * idempotent; a Body that asks for anything else than the log holds ends
 * it as diverged. A script may ask for a reboot with its exit code. */
#pragma once

#include <jansson.h>
#include <stdbool.h>

#include "body/body.h"
#include "config/config.h"
#include "journal/journal-calls.h"
#include "proc/proc.h"

/* ErrorCodes of plans that durable calls end (docs/results.md). */
#define RUNNER_CODE_DIVERGED    108 /* the Body asked for another call than the log */
#define RUNNER_CODE_REBOOT_FAIL 109 /* too many reboots, or the reboot command failed */

typedef struct RunnerDurable RunnerDurable;

/* How the runner runs one call live: the script, as without a log. */
typedef int (*runner_durable_run_fn)(void *userdata, const BodyCall *call, json_t **ret,
                                     BodyCallError *err);

/* Open the call log of the entry in dir, sealed with key (borrowed, for
 * the log's life), for the plan plan_id (for logs).
 * *cwd is the plan's working directory (exec.h, io_cwd): recorded with
 * each call's end, and set again when the call is replayed. Returns 0
 * with *ret; 1 when the log cannot be used (damaged), with the plan's end
 * set (runner_durable_end()); or -errno. */
int runner_durable_open(const char *dir, const JournalCallsKey *key, const Config *cfg,
                        const json_t *plan, const char *plan_id, char **cwd, RunnerDurable **ret);

/* BodyHost.call_script through the log: replay a recorded call, or run it
 * with run and record it. Asks for a reboot when the script's exit code
 * says so (procs runs the reboot command; cancel is polled while the
 * reboot is awaited). Returns as call_script; -ECANCELED when the plan
 * ends here (runner_durable_end() says how). */
int runner_durable_call(RunnerDurable *d, const BodyCall *call, runner_durable_run_fn run,
                        void *userdata, ProcRunner *procs, const atomic_int *cancel, json_t **ret,
                        BodyCallError *err);

/* BodyHost.draw through the log. */
int runner_durable_draw(RunnerDurable *d, const char *kind, const char *what, char **value,
                        size_t *len);

/* After the Body: a log with records the Body never asked for is a
 * divergence too. Returns true when the plan ends that way. */
bool runner_durable_finish(RunnerDurable *d);

/* How the plan ends, when the log ended it: its ErrorCode and message
 * (borrowed); 0 when it did not. */
int runner_durable_end(const RunnerDurable *d, const char **ret_message);

/* A reboot was asked for and is awaited: the plan has no result in this
 * run, and resumes at the next start. */
bool runner_durable_rebooting(const RunnerDurable *d);

/* Accepts NULL. */
void runner_durable_free(RunnerDurable *d);
