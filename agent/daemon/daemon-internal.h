/* Shared by the daemon's files: daemon.c (start, stop, signals, systemd,
 * transport callbacks), daemon-pump.c (the journal's order of work),
 * daemon-cancel.c (cancelling a plan, daemon-cancel.h),
 * daemon-work.c (its work items on the thread pool, daemon-work.h),
 * daemon-notify.c (sd_notify) and daemon-watchdog.c (systemd's watchdog).
 * Everything here is touched on the loop thread only, except what a
 * uv_work_t's work callback reads and writes in its own DaemonWork, and
 * the DaemonWatchdog's atomics, which the transport's I/O thread shares. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "config/config.h"
#include "daemon/daemon-observe.h"
#include "journal/journal.h"
#include "runner/runner.h"
#include "signature/signature.h"
#include "transport/transport.h"

/* A pending disk problem (ENOSPC, EIO) is retried this often. */
#define DAEMON_RETRY_MS 5000

/* How long a start waits for the journal's lock held by an agent that is
 * still ending (daemon.c open_journal(), docs/daemon.md), and how often it
 * tries again meanwhile. */
#define DAEMON_LOCK_WAIT_MS 10000U
#define DAEMON_LOCK_POLL_MS 20U

/* While the broker stays away the transport tries again about once a
 * second; a failure with the reason last logged is logged as a warning
 * again only after this long, and at debug level meanwhile. */
#define DAEMON_LOST_LOG_MS 60000U

/* A test hook: the point it fires at (NULL: off) and how many more times
 * that point is reached before it does. */
typedef struct DaemonHook {
        const char *point;
        unsigned countdown;
} DaemonHook;

/* The daemon's own life. It only moves forward, in daemon_stage_move();
 * the stop goes STOPPING, CLOSING, STOPPED, and a start that fails after
 * RUNNING goes to STOPPED at once. */
typedef enum DaemonStage {
        DAEMON_STARTING, /* the signals and timers are not initialised yet */
        DAEMON_RUNNING,  /* they are: the pump works */
        DAEMON_STOPPING, /* SIGTERM or SIGINT came; the plan, the disk work and the
                          * publish lane are awaited; no plan starts */
        DAEMON_CLOSING,  /* all that is over: transport_stop() was called */
        DAEMON_STOPPED,  /* the handles are closing: the loop ends */
} DaemonStage;

/* The plan lane: one plan at a time is checked, run and its result stored.
 * It moves one step forward, or back to idle from any step, in
 * plan_lane_move() (daemon-pump.c) only. */
typedef enum DaemonPlanLane {
        PLAN_IDLE,     /* free: the next pending or interrupted entry may be taken up */
        PLAN_CHECKING, /* its WORK_PREPARE or WORK_INTERRUPTED item is on the pool */
        PLAN_RUNNING,  /* the runner has it */
        PLAN_STORING,  /* its result's WORK_RESULT item is on the pool, or stalled */
} DaemonPlanLane;

/* The publish lane: one result at a time is published, confirmed and
 * removed. It moves in pub_lane_move() (daemon-pump.c) only. */
typedef enum DaemonPubLane {
        PUB_IDLE,       /* free: the next unsent result may be published */
        PUB_CONFIRMING, /* published as publish_seq; its confirm is awaited */
        PUB_REMOVING,   /* confirmed: its WORK_REMOVE item is on the pool */
        PUB_DROPPING,   /* the result is no document: its WORK_DROP item is on the pool */
} DaemonPubLane;

/* The transport calls the daemon makes once the transport is started, as
 * transport.h has them. A table so that the pump's unit test
 * (tests/test-daemon-pump.c) can stand in for the broker; the daemon uses
 * daemon_transport_sys. */
typedef struct DaemonTransportOps {
        int (*publish)(Transport *t, const char *exchange, const char *routing_key,
                       const char *message_id, const void *body, size_t len, uint64_t *ret_seq);
        int (*ack)(Transport *t, uint64_t tag);
        int (*reject)(Transport *t, uint64_t tag, bool requeue);
        bool (*is_ready)(const Transport *t);
        int (*stop)(Transport *t, transport_stopped_cb stopped);
        size_t (*outstanding)(const Transport *t); /* may be NULL: progress is then not sent */
} DaemonTransportOps;

extern const DaemonTransportOps daemon_transport_sys;

/* systemd's watchdog (daemon-watchdog.c); all zero and off until
 * daemon_watchdog_start() turns it on. */
typedef struct DaemonWatchdog {
        uv_loop_t *loop;
        uint64_t interval_ns;  /* $WATCHDOG_USEC; 0 = off */
        uint64_t last_ping_ns; /* atomic: uv_hrtime() of the last WATCHDOG=1 */
        uint64_t busy_base_ns; /* atomic: the loop's busy time when it last waited */
        int timer_fd;          /* the fallback's timerfd */
        uv_prepare_t prepare;  /* runs before the loop waits */
        uv_poll_t fallback;    /* on timer_fd */
} DaemonWatchdog;

typedef struct Daemon {
        uv_loop_t *loop;
        const Config *cfg;
        Journal *journal;
        Runner *runner;
        Transport *transport;
        const DaemonTransportOps *tops; /* the calls made on transport */
        SignatureKey *key;              /* NULL when engine_key is empty */

        uv_signal_t sigterm;
        uv_signal_t sigint;
        uv_signal_t sighup;
        DaemonWatchdog watchdog;
        uv_timer_t retry;      /* re-runs the pump after a disk error or a nacked result */
        uv_timer_t trim;       /* gives the heap's free memory back once idle (daemon-pump.c) */
        uv_timer_t space;      /* looks for room again while the storage is full (daemon-space.c) */
        uv_timer_t checkpoint; /* the log's checkpoint once idle (daemon-checkpoint.c) */

        /* The storage was full: a plan could not be stored and was
         * answered with ErrorCode 104 instead (or not even that). Cleared
         * once the journal's reserve is whole and space_need bytes are
         * free again. */
        bool space_full;
        uint64_t space_need; /* room the last refused plan needed, bytes */
        int space_errno;     /* why it was refused */
        bool space_stored;   /* a plan was stored since */

        /* Written on the loop thread by daemon_stage_move() only, and read
         * on the pool too (daemon_stop_requested()). */
        DaemonStage stage;

        /* The pump works in the reference's order, on two lanes: one plan
         * at a time is checked, run and its result stored, and one result
         * at a time is published, confirmed and removed. The next plan may
         * start while the last result awaits its confirm; a result not yet
         * published still goes before any plan. */
        DaemonPlanLane plan;
        char busy_ts[JOURNAL_TS_MAX]; /* the plan lane's entry, "" when idle */
        char *busy_id;                /* its plan's ID once it runs, for the log; else NULL */
        DaemonPubLane pub;
        char pub_ts[JOURNAL_TS_MAX]; /* the publish lane's entry, "" when idle */
        char *pub_id;                /* its result's SourceID once published; else NULL */
        uint64_t publish_seq;        /* PUB_CONFIRMING: the confirm awaited */

        unsigned work_in_flight;    /* uv_work_t items not yet completed */
        unsigned drops_in_flight;   /* of them WORK_DROP: no plan starts meanwhile */
        struct DaemonWork *stalled; /* work waiting for the retry timer (disk errors) */
        /* READY=1 went to systemd. A one-time fact of the connection's
         * history (the first on_ready), whatever the stage. */
        bool ready_notified;
        int exit_status;
        uint64_t n_plans;        /* plans finished since start, for STATUS= */
        char *lost_reason;       /* the last reason on_lost logged as a warning */
        uint64_t lost_logged_ms; /* and when (uv_now) */
        bool trimmed;            /* nothing ran since the last trim: a fact of the heap */

        /* Cancel requests in order, the first one being worked on
         * (daemon-cancel.c); cancel_working: its WORK_CANCEL is on the pool. */
        struct DaemonCancel *cancels;
        bool cancel_working;

        /* The MURANOAGENT_CRASH_AT and _STOP_AT test hooks (daemon-crash.c). */
        DaemonHook crash;
        DaemonHook stop_hook;
        uv_thread_t loop_thread;

        /* status, the control socket, progress (daemon-observe.h) */
        DaemonObserve observe;
} Daemon;

/* daemon-pump.c */
void daemon_work_free_all(Daemon *d); /* at exit: stalled work, the lanes' IDs */
void daemon_pump(Daemon *d);
void daemon_store_delivery(Daemon *d, TransportDelivery *dl);
void daemon_on_confirm(Daemon *d, uint64_t seq, TransportConfirm status);
/* Nothing in flight: no work item, no plan, no publish. */
bool daemon_idle(const Daemon *d);
/* Called when everything the stop waits for is over. */
void daemon_maybe_finish_stop(Daemon *d);

/* daemon-pump.c: hand w to the thread pool; its after-work callback
 * carries on. Returns 0 or a libuv error. */
int daemon_queue_work(Daemon *d, struct DaemonWork *w);
/* daemon-pump.c: run the pump again after DAEMON_RETRY_MS (a disk error). */
void daemon_retry_later(Daemon *d);

/* daemon-space.c: the storage-full condition. daemon_space_refused():
 * a plan of need bytes could not be stored for errno err; shows the
 * condition in the log and STATUS= and looks for room every
 * DAEMON_RETRY_MS until it has come back. daemon_space_checked(): the
 * WORK_SPACE item w is back. daemon_status_idle(): the STATUS= line of an
 * idle agent, with the condition while it lasts. */
void daemon_space_refused(Daemon *d, int err, uint64_t need);
void daemon_space_checked(Daemon *d, struct DaemonWork *w);
/* A plan was stored: the condition may be over. */
void daemon_space_stored(Daemon *d);
void daemon_status_idle(Daemon *d);

/* daemon-checkpoint.c: the write-ahead log's checkpoint.
 * daemon_checkpoint_later(): a removal is done; checkpoint once the agent
 * has been idle for a moment. daemon_checkpoint_log(): log the outcome rc
 * of journal_checkpoint() (a failure is a warning). */
void daemon_checkpoint_later(Daemon *d);
void daemon_checkpoint_log(int rc);

/* daemon-crash.c: the MURANOAGENT_CRASH_AT=POINT[:N] and
 * MURANOAGENT_STOP_AT=POINT[:N] test hooks, off unless the variables are
 * set. daemon_crash_point() kills the agent with SIGKILL (or sends it
 * SIGTERM) the N-th time POINT is reached. Call daemon_crash_init() on the
 * loop thread. */
void daemon_crash_init(Daemon *d);
void daemon_crash_point(Daemon *d, const char *point);
/* The MURANOAGENT_SLOW_FSYNC_MS=N test hook: when it is set, jo's file
 * operations (its own and its write-ahead log's) with every flush N ms
 * slower; else jo is left as it is (the system calls). */
void daemon_test_journal_ops(JournalOptions *jo);

/* daemon.c: move the daemon's stage forward to to; on the loop thread. */
void daemon_stage_move(Daemon *d, DaemonStage to);

/* Whether a stop was asked for (SIGTERM or SIGINT); safe on any thread. */
static inline bool daemon_stop_requested(const Daemon *d)
{
        return __atomic_load_n(&d->stage, __ATOMIC_ACQUIRE) >= DAEMON_STOPPING;
}

/* daemon.c: the transport's callbacks, and what daemon_start() does once
 * the journal, the runner and the transport are made and before the
 * transport starts: the runner's idle callback, the signals, the timers
 * and the watchdog (DAEMON_RUNNING). The pump's unit test calls them with
 * a transport of its own. */
extern const TransportCallbacks daemon_transport_callbacks;
void daemon_begin(Daemon *d);

/* daemon-notify.c: systemd's notify protocol (sd_notify(3)) without
 * libsystemd, a no-op outside systemd. daemon_notify_send() sends text as
 * one datagram to $NOTIFY_SOCKET (a path, or an abstract name after '@'):
 * 0 when sent or when the variable is unset, -EAFNOSUPPORT for an address
 * of another kind, or another negative errno. The daemon ignores failures,
 * as it did with sd_notify(). */
int daemon_notify_send(const char *text);
/* READY=1 with the first call, then STATUS=status. */
void daemon_notify_ready(Daemon *d, const char *status);
/* STATUS= with the formatted text, cut at 255 bytes. */
void daemon_notify_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void daemon_notify_stopping(void);
/* sd_watchdog_enabled(0, ...): 1 and *ret (microseconds, from
 * $WATCHDOG_USEC) when the watchdog is on for this process, 0 when it is off
 * or meant for another ($WATCHDOG_PID), -EINVAL for a malformed variable. */
int daemon_watchdog_usec(uint64_t *ret);

/* daemon-watchdog.c: WATCHDOG=1 pings on the wake-ups the agent already
 * has, while the loop is healthy, and a fallback timer when none comes in
 * time. daemon_watchdog_start() turns them on, on the loop thread before
 * it runs, when daemon_watchdog_usec() says so: 1 when on, 0 when off, or
 * a negative errno (the watchdog is then off). The prepare and poll handles
 * it starts do not keep the loop alive; daemon_watchdog_close() closes
 * them, after the last daemon_watchdog_offer() (the transport stopped). */
int daemon_watchdog_start(DaemonWatchdog *w, uv_loop_t *loop);
void daemon_watchdog_close(DaemonWatchdog *w);
/* A wake-up on any thread (data: the DaemonWatchdog): pings when the last
 * ping is a quarter of the interval old and the loop is waiting, or busy
 * for less than a quarter. Thread safe, never blocks, the transport's
 * TransportOptions.awake. */
void daemon_watchdog_offer(void *data);
