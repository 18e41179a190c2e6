/* What the daemon shows of itself while it works (floor 5): the state that
 * `muranoagent status` reports (daemon-status.c), the local control socket
 * that serves it (daemon-control.c), and the opt-in live progress events
 * (daemon-progress.c). The daemon's files call the daemon_observe_*()
 * hooks at the moments they describe; nothing here changes what the daemon
 * does, and nothing here waits for the broker or the disk. All on the
 * loop thread. docs/operations.md has the operator's view. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <uv.h>

#include "journal/journal.h"
#include "runner/runner.h"
#include "transport/transport.h"

struct Daemon;

/* The plans `status` lists, the most recent first, kept in memory since
 * the agent started. */
#define DAEMON_RECENT_MAX 20

/* Bytes of the running script's latest output kept for `status`, and the
 * lines of it shown. */
#define DAEMON_TAIL_BYTES 4096
#define DAEMON_TAIL_LINES 10

/* Queued plans whose IDs `status` lists (the count is always whole), and
 * the entries whose IDs are kept for it at most. */
#define DAEMON_QUEUED_SHOWN 50
#define DAEMON_QUEUED_KEPT  4096

typedef enum DaemonBrokerState {
        BROKER_CONNECTING, /* the first attempt is under way */
        BROKER_CONNECTED,  /* consuming */
        BROKER_LOST,       /* the connection ended or an attempt failed; retrying */
} DaemonBrokerState;

typedef struct DaemonRecent {
        char *id; /* owned */
        int error_code;
        int64_t duration_ms; /* -1: answered without running */
        time_t finished;
        bool before_start; /* from the journal's done records, at start */
} DaemonRecent;

/* A plan stored since the agent started, and the ID its message came with
 * (its AMQP message_id: the engine sets it to the plan's ID). */
typedef struct DaemonQueued {
        char ts[JOURNAL_TS_MAX];
        char *id; /* owned */
} DaemonQueued;

typedef struct DaemonObserve {
        time_t started; /* wall clock, for people */
        uint64_t started_ms;

        DaemonBrokerState broker;
        char *broker_host;  /* owned: the last broker connected to, NULL before */
        char *broker_error; /* owned: why the last attempt failed or the connection ended */
        unsigned heartbeat; /* negotiated seconds of the current connection */
        unsigned connection;
        time_t broker_since; /* the state began */
        uint64_t broker_since_ms;
        uint64_t reconnects; /* connections lost since start */

        /* The running plan; id NULL when none. */
        char *plan_id; /* owned */
        time_t plan_since;
        uint64_t plan_since_ms;
        char *plan_cancelled_by; /* owned: who cancelled it, NULL when nobody */
        /* Its running script; script NULL when none. */
        char *script; /* owned: "script deploy", "git clone of files/x" */
        pid_t script_pid;
        time_t script_since;
        uint64_t script_since_ms;
        uint64_t script_output; /* bytes the script wrote so far */
        /* The newest output of the plan's scripts: a ring of
         * DAEMON_TAIL_BYTES whose oldest byte is at tail_start. */
        char tail[DAEMON_TAIL_BYTES];
        size_t tail_len, tail_start;

        DaemonRecent recent[DAEMON_RECENT_MAX]; /* a ring; recent_next is the next slot */
        size_t n_recent, recent_next;
        size_t n_recent_loaded; /* from the journal's done records at start */
        uint64_t n_plans;       /* finished since start */

        /* Entries stored since start, by ts ascending; those that ran or
         * were answered go when a later plan starts. */
        DaemonQueued *queued;
        size_t n_queued, queued_cap;

        struct DaemonControl *control;   /* daemon-control.c, NULL when not serving */
        struct DaemonProgress *progress; /* daemon-progress.c, NULL when off */
} DaemonObserve;

/* daemon-status.c: the hooks. */
void daemon_observe_init(struct Daemon *d);
void daemon_observe_done(struct Daemon *d);
void daemon_observe_broker_ready(struct Daemon *d, const TransportReady *ready);
void daemon_observe_broker_lost(struct Daemon *d, const TransportLoss *loss);
/* The plan of source_id (its ID, or the message's) starts running. */
void daemon_observe_plan_started(struct Daemon *d, const char *id);
/* It is over, with result (borrowed; may be NULL: out of memory). */
void daemon_observe_plan_finished(struct Daemon *d, const json_t *result);
/* The running plan is being stopped at the request of by (a phrase). */
void daemon_observe_plan_cancelled(struct Daemon *d, const char *by);
/* Plan id, queued, was answered with error_code without running: it is
 * listed among the recent plans, with no duration. */
void daemon_observe_plan_answered(struct Daemon *d, const char *id, int error_code);
/* Entry ts was stored for the message of message_id id ("" none). */
void daemon_observe_plan_stored(struct Daemon *d, const char *ts, const char *id);

/* daemon-status.c: the reply body of the "status" command (a new
 * reference), or NULL when out of memory. Never waits for the disk: the
 * journal's counts come from its index in memory. */
json_t *daemon_status_json(struct Daemon *d);

/* daemon-control.c: serve the control socket in <storage>/control. Returns
 * 0, or a negative errno (logged; the daemon runs on without it). */
int daemon_control_start(struct Daemon *d);
/* Close the socket's handles (from close_handles). */
void daemon_control_stop(struct Daemon *d);

/* daemon-status.c: the runner's observer (runner.h), set by
 * daemon_observe_init(). */
extern const RunnerObserver daemon_observe_runner;

/* daemon-progress.c: the live progress events (progress/progress.h), on
 * when [agent] progress_routing_key is set. Each event is published to the
 * result exchange with that routing key, without waiting for its confirm,
 * and only while the connection is ready and fewer than
 * DAEMON_PROGRESS_BACKLOG_MAX messages await their confirm: otherwise it is
 * dropped (counted, and its seq skipped), so progress never delays or
 * endangers a result. The hooks are no-ops while progress is off. */
#define DAEMON_PROGRESS_BACKLOG_MAX 64

/* Returns 0 (on, or off as configured), or a negative errno (logged: a key
 * that would reach the results or the agent's own queue, or is too long). */
int daemon_progress_start(struct Daemon *d);
void daemon_progress_stop(struct Daemon *d);
void daemon_progress_plan_started(struct Daemon *d, const char *id);
void daemon_progress_script_started(struct Daemon *d, const char *what, pid_t pid);
void daemon_progress_output(struct Daemon *d, int stream, const char *data, size_t len);
void daemon_progress_script_finished(struct Daemon *d, const char *what, int exit_code,
                                     const char *failure, uint64_t duration_ms);
void daemon_progress_plan_finished(struct Daemon *d, int error_code, uint64_t duration_ms);
/* Send the events gathered so far now: the pump calls it right before it
 * publishes a result, so that the plan's last events travel with it. */
void daemon_progress_flush(struct Daemon *d);
/* {"routing_key", "sent", "dropped"} for `status`, or JSON null when off. */
json_t *daemon_progress_json(struct Daemon *d);
