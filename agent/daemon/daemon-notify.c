/* systemd readiness and liveness (sd_notify). Outside systemd
 * ($NOTIFY_SOCKET unset) every call is a cheap no-op. The watchdog is pinged
 * from a loop timer, so a wedged loop stops the pings and systemd restarts
 * the agent. */
#include <stdarg.h>
#include <stdio.h>
#include <systemd/sd-daemon.h>

#include "daemon/daemon-internal.h"

void daemon_notify_ready(Daemon *d, const char *status)
{
        if (!d->ready_notified) {
                d->ready_notified = true;
                sd_notifyf(0, "READY=1\nSTATUS=%s", status);
        } else
                sd_notifyf(0, "STATUS=%s", status);
}

void daemon_notify_status(const char *fmt, ...)
{
        char text[256];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        sd_notifyf(0, "STATUS=%s", text);
}

void daemon_notify_stopping(void)
{
        sd_notify(0, "STOPPING=1\nSTATUS=stopping");
}

static void on_watchdog(uv_timer_t *t)
{
        sd_notify(0, "WATCHDOG=1");
}

void daemon_watchdog_start(Daemon *d)
{
        uint64_t usec = 0;

        if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0)
                return;
        uv_timer_start(&d->watchdog, on_watchdog, 0, usec / 2000 ? usec / 2000 : 1);
}
