/* Shared by the daemon's files: daemon.c (start, stop, signals, systemd,
 * transport callbacks), daemon-pump.c (the journal's order of work) and
 * daemon-notify.c (sd_notify). Everything here is touched on the loop
 * thread only, except what a uv_work_t's work callback reads and writes in
 * its own DaemonWork. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "config/config.h"
#include "journal/journal.h"
#include "runner/runner.h"
#include "signature/signature.h"
#include "transport/transport.h"

/* A pending disk problem (ENOSPC, EIO) is retried this often. */
#define DAEMON_RETRY_MS 5000

typedef struct Daemon {
        uv_loop_t *loop;
        const Config *cfg;
        Journal *journal;
        Runner *runner;
        Transport *transport;
        SignatureKey *key; /* NULL when engine_key is empty */

        uv_signal_t sigterm;
        uv_signal_t sigint;
        uv_signal_t sighup;
        uv_timer_t watchdog;
        uv_timer_t retry; /* re-runs the pump after a disk error or a nacked result */

        /* The pump does one thing at a time, in the reference's order. */
        bool busy;
        char busy_ts[JOURNAL_TS_MAX]; /* the entry being worked on */
        bool publishing;              /* busy with a publish awaiting its confirm */
        uint64_t publish_seq;

        unsigned work_in_flight;    /* uv_work_t items not yet completed */
        struct DaemonWork *stalled; /* work waiting for the retry timer (disk errors) */
        bool ready_notified;
        bool stopping;
        bool stop_started;  /* the transport is being stopped */
        bool handles_ready; /* signals and timers are initialised */
        bool transport_stopped;
        int exit_status;
        uint64_t n_plans; /* plans finished since start, for STATUS= */

        /* The MURANOAGENT_CRASH_AT test hook (daemon-crash.c); NULL when off. */
        const char *crash_point;
        unsigned crash_countdown;
} Daemon;

/* daemon-pump.c */
void daemon_work_free_all(Daemon *d); /* at exit: stalled work */
void daemon_pump(Daemon *d);
void daemon_store_delivery(Daemon *d, TransportDelivery *dl);
void daemon_on_confirm(Daemon *d, uint64_t seq, TransportConfirm status);
/* Nothing in flight: no work item, no plan, no publish. */
bool daemon_idle(const Daemon *d);
/* Called when everything the stop waits for is over. */
void daemon_maybe_finish_stop(Daemon *d);

/* daemon-crash.c: the MURANOAGENT_CRASH_AT=POINT[:N] test hook, off unless
 * the variable is set. daemon_crash_point() kills the agent with SIGKILL
 * the N-th time POINT is reached. */
void daemon_crash_init(Daemon *d);
void daemon_crash_point(Daemon *d, const char *point);

/* daemon-notify.c: sd_notify, a no-op outside systemd. */
void daemon_notify_ready(Daemon *d, const char *status);
void daemon_notify_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void daemon_notify_stopping(void);
/* Start WATCHDOG=1 pings at half the interval systemd asked for. */
void daemon_watchdog_start(Daemon *d);
