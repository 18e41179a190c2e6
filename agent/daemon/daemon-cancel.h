/* daemon-cancel.c: cancelling a plan by its ID, asked by a cancel message
 * on the input queue (remote) or by `muranoagent cancel` (local).
 * docs/daemon.md, "Cancelling a plan", tells the rules:
 *
 *   - the running plan is stopped by the runner (runner_cancel_plan()):
 *     its script tree goes as at a timeout and its one result says
 *     ErrorCode 107;
 *   - a plan stored in the journal and not started yet is answered with
 *     ErrorCode 107 (its result.json, fsync'd) and never runs; the request
 *     is settled (the message acked, the local caller answered) only once
 *     that answer is on disk, so that after a crash the plan is still
 *     answered and never run: the journal holds the decision, in the
 *     reference's own layout (an entry with a result is published, not
 *     run), and no new kind of record is needed;
 *   - a plan that has its result, or whose end has begun, and an ID nobody
 *     sent (or not yet: the agent takes messages in order, so a cancel that
 *     overtook its plan finds nothing) change nothing, and are logged.
 *
 * Requests are taken one at a time, in order. While the plan lane checks a
 * plan or stores a result, a request waits (the plan's ID is not known yet,
 * or its result is not in the journal yet); while one searches the journal
 * on the pool, no plan starts (daemon_cancel_busy()). All on the loop
 * thread, but daemon_cancel_work(). */
#pragma once

#include <jansson.h>
#include <stdbool.h>

#include "daemon/daemon-internal.h"

typedef enum DaemonCancelSource {
        DAEMON_CANCEL_REMOTE, /* a cancel message on the input queue */
        DAEMON_CANCEL_LOCAL,  /* muranoagent cancel, over the local socket */
} DaemonCancelSource;

typedef enum DaemonCancelOutcome {
        DAEMON_CANCEL_STOPPING, /* the running plan is being stopped; its result follows */
        DAEMON_CANCEL_ANSWERED, /* a queued plan was answered cancelled; it never runs */
        DAEMON_CANCEL_FINISHED, /* it has its result, or is ending: nothing changed */
        DAEMON_CANCEL_UNKNOWN,  /* no such plan here: nothing changed */
        DAEMON_CANCEL_FAILED,   /* the agent could not (out of memory) */
} DaemonCancelOutcome;

/* The request is settled: outcome, and a sentence saying what happened
 * (the log line's text, without the plan's ID). Called once, on the loop;
 * not called for requests still waiting when the daemon ends. */
typedef void (*daemon_cancel_cb)(Daemon *d, DaemonCancelOutcome outcome, const char *text,
                                 void *userdata);

/* Ask for plan_id to be cancelled. Returns 0 (cb follows, maybe at once)
 * or -ENOMEM (cb is never called). */
int daemon_cancel(Daemon *d, const char *plan_id, DaemonCancelSource source, daemon_cancel_cb cb,
                  void *userdata);

/* A delivery that may be a cancel message: false when it is not one (a
 * plan: store it); true when it was one and was taken (checked against
 * engine_key as a plan is, then obeyed, or rejected or logged and acked). */
bool daemon_cancel_delivery(Daemon *d, TransportDelivery *dl);

/* Carry on with waiting requests; daemon_pump() calls it. */
void daemon_cancel_pump(Daemon *d);

/* A request searches the journal: no plan may start meanwhile. */
bool daemon_cancel_busy(const Daemon *d);

/* WORK_CANCEL: on the pool, the search of the journal and the answer; and
 * back on the loop. */
void daemon_cancel_work(struct DaemonWork *w);
void daemon_cancel_after(Daemon *d, struct DaemonWork *w);

/* The local side, over the control socket (daemon-control.c):
 * `{"command": "cancel", "plan_id": ID}`, answered once the request is
 * settled with `{"outcome": "stopping" | "answered" | "finished" |
 * "unknown", "message": TEXT}`. A control_async_fn. */
struct ControlConn;
typedef int (*control_async_fn)(Daemon *d, const json_t *request, struct ControlConn *k,
                                const char **ret_error);
int daemon_cancel_command(Daemon *d, const json_t *request, struct ControlConn *k,
                          const char **ret_error);
/* daemon-control.c: the answer of k's async command, once: body (borrowed)
 * as the reply's fields, or error for a refusal. */
void daemon_control_answer(struct ControlConn *k, const json_t *body, const char *error);
/* k's client went away: its requests settle without telling anyone. */
void daemon_cancel_detach(Daemon *d, void *userdata);

/* The requests not settled yet, for `status`: a JSON array of
 * {"plan_id", "from": "local" | "remote", "state": "searching" (the
 * journal, for a queued plan) | "waiting"} in order, or NULL when out of
 * memory. */
json_t *daemon_cancel_json(const Daemon *d);

/* At exit: requests still waiting are dropped (a message unacked goes back
 * to the queue). */
void daemon_cancel_free_all(Daemon *d);
