/* systemd's watchdog (WATCHDOG=1) sent on the wake-ups the agent already
 * has, with proof that the loop thread is alive (docs/daemon.md,
 * "systemd"; docs/footprint.md, "Wake-ups").
 *
 * Who pings: whichever thread is awake anyway once the last ping is a
 * quarter of the interval old. That is the transport's I/O thread on the
 * broker's heartbeats (daemon_watchdog_offer(), its TransportOptions hook),
 * and the loop itself before it goes back to sleep (the prepare handle).
 * A ping from another thread is sent only while the loop is healthy: it
 * waits in epoll, or has been busy for less than a quarter of the interval.
 * The loop never waits for the disk (docs/journal.md, "Locking"), so a
 * callback lasts milliseconds; one stuck in a deadlock or an endless loop
 * stops every ping and systemd kills the agent, within 1.25 intervals of
 * the wedge at most (the last ping may certify a loop busy for a quarter).
 *
 * How busy the loop is, without waking it: libuv's idle-time metric
 * (uv_metrics_idle_time(), thread safe) grows while the loop waits in its
 * event provider and stops the moment it returns, before any callback of
 * that iteration. So "time - idle time" is the loop's busy time so far,
 * and the prepare handle, run just before each wait, publishes it; the
 * busy time since is the difference. A uv_check handle would not do: libuv
 * runs the I/O callbacks inside its poll, before the check handles, so a
 * loop wedged in an I/O callback would still look like it was waiting.
 *
 * The fallback, when nothing wakes in time (the broker down, heartbeats
 * off, a heartbeat longer than the watchdog): a timerfd the loop polls,
 * set by every ping to three quarters of the interval later. While the
 * I/O thread pings on the broker's heartbeats (every heartbeat/2, under
 * the interval's three quarters with the defaults), it pushes
 * the timer back each time and the loop never wakes for it; a uv_timer
 * could not be moved from another thread without waking the loop.
 *
 * Atomics: last_ping_ns and busy_base_ns are shared; a compare-and-swap on
 * last_ping_ns makes one thread the sender of each ping. The rest is set
 * by daemon_watchdog_start() before the I/O thread starts and read-only
 * until daemon_watchdog_close(), after it ended. */
#include <errno.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "daemon/daemon-internal.h"

#define NSEC_PER_SEC 1000000000ULL

/* The loop, busy for less than this, is healthy: a quarter of the interval. */
static uint64_t quarter(const DaemonWatchdog *w)
{
        return w->interval_ns / 4;
}

/* The fallback fires this long after the last ping. */
static void fallback_arm(DaemonWatchdog *w, uint64_t last_ping)
{
        uint64_t at = last_ping + w->interval_ns - quarter(w);
        struct itimerspec its = {.it_value = {.tv_sec = (time_t)(at / NSEC_PER_SEC),
                                              .tv_nsec = (long)(at % NSEC_PER_SEC)}};

        (void)timerfd_settime(w->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* Busy since the loop last went to wait, in nanoseconds; on any thread. */
static uint64_t loop_busy_ns(DaemonWatchdog *w)
{
        uint64_t base, idle, now;

        /* Read in this order, each value is at most as late as the next: the
         * result can only be too large, which skips a ping, never certifies
         * a wedged loop. */
        base = __atomic_load_n(&w->busy_base_ns, __ATOMIC_ACQUIRE);
        idle = uv_metrics_idle_time(w->loop);
        now = uv_hrtime();
        return now - idle - base;
}

/* Ping when the last ping is a quarter old; on_loop: the caller is the
 * loop thread, alive by definition. Returns whether this call pinged. */
static bool ping_if_due(DaemonWatchdog *w, bool on_loop)
{
        uint64_t last = __atomic_load_n(&w->last_ping_ns, __ATOMIC_ACQUIRE);
        uint64_t now = uv_hrtime();

        /* now < last: another thread pinged between the two reads. */
        if (now < last || now - last < quarter(w))
                return false;
        if (!on_loop && loop_busy_ns(w) >= quarter(w))
                return false;
        if (!__atomic_compare_exchange_n(&w->last_ping_ns, &last, now, false, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE))
                return false;
        (void)daemon_notify_send("WATCHDOG=1");
        fallback_arm(w, now);
        return true;
}

void daemon_watchdog_offer(void *data)
{
        DaemonWatchdog *w = data;

        if (w->interval_ns)
                (void)ping_if_due(w, false);
}

/* Just before the loop waits: publish its busy time, and ping if due. */
static void on_prepare(uv_prepare_t *p)
{
        DaemonWatchdog *w = p->data;

        __atomic_store_n(&w->busy_base_ns, uv_hrtime() - uv_metrics_idle_time(w->loop),
                         __ATOMIC_RELEASE);
        (void)ping_if_due(w, true);
}

/* Nobody pinged for three quarters of the interval. The prepare handle
 * runs before the loop sleeps again and pings; the timer is set again
 * here in case a thread that pinged a moment ago set it early. */
static void on_fallback(uv_poll_t *p, int status, int events)
{
        DaemonWatchdog *w = p->data;
        uint64_t expirations;

        (void)!read(w->timer_fd, &expirations, sizeof(expirations));
        if (!ping_if_due(w, true))
                fallback_arm(w, __atomic_load_n(&w->last_ping_ns, __ATOMIC_ACQUIRE));
}

int daemon_watchdog_start(DaemonWatchdog *w, uv_loop_t *loop)
{
        uint64_t usec = 0;
        int r;

        *w = (DaemonWatchdog){.loop = loop, .timer_fd = -1};
        r = daemon_watchdog_usec(&usec);
        if (r <= 0)
                return r;
        if (usec > UINT64_MAX / 1000)
                return -EINVAL;
        w->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        if (w->timer_fd < 0)
                return -errno;
        r = uv_loop_configure(loop, UV_METRICS_IDLE_TIME);
        if (r == 0)
                r = uv_poll_init(loop, &w->fallback, w->timer_fd);
        if (r < 0) {
                close(w->timer_fd);
                w->timer_fd = -1;
                return r;
        }
        uv_prepare_init(loop, &w->prepare);
        w->prepare.data = w->fallback.data = w;
        uv_prepare_start(&w->prepare, on_prepare);
        uv_poll_start(&w->fallback, UV_READABLE, on_fallback);
        /* Neither keeps the loop alive: they serve the daemon's life, which
         * its other handles make. */
        uv_unref((uv_handle_t *)&w->prepare);
        uv_unref((uv_handle_t *)&w->fallback);
        /* Until the loop first runs, everything since now is busy time; the
         * first prepare pings, as last_ping_ns is 0. */
        w->busy_base_ns = uv_hrtime() - uv_metrics_idle_time(loop);
        w->interval_ns = usec * 1000;
        return 1;
}

void daemon_watchdog_close(DaemonWatchdog *w)
{
        if (!w->interval_ns)
                return;
        w->interval_ns = 0;
        uv_close((uv_handle_t *)&w->prepare, NULL);
        /* libuv stops watching the descriptor in uv_close() itself. */
        uv_close((uv_handle_t *)&w->fallback, NULL);
        close(w->timer_fd);
        w->timer_fd = -1;
}
