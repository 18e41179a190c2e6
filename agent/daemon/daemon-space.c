/* The storage-full condition: a plan that the disk could not hold was
 * answered with ErrorCode 104 (daemon-work.c) and acked, so the queue
 * moves on. Here the condition is shown (the log, the STATUS= line) and
 * watched: every DAEMON_RETRY_MS a WORK_SPACE item asks the journal to
 * take its reserve back and to measure the free room; once the reserve is
 * whole and either the last refused plan would fit or a plan was stored
 * after it (the refused one was only too large for this disk), the
 * condition is over, and says so. Plans are stored as usual all along: a small one behind a
 * refused large one is stored and runs. */
#include <errno.h>
#include <string.h>

#include "daemon/daemon-work.h"
#include "result/result.h"

static void on_space(uv_timer_t *t)
{
        Daemon *d = t->data;
        DaemonWork *w = daemon_work_new(WORK_SPACE, NULL);

        if (!w || daemon_queue_work(d, w) < 0) {
                daemon_work_free(w);
                uv_timer_start(&d->space, on_space, DAEMON_RETRY_MS, 0);
        }
}

void daemon_status_idle(Daemon *d)
{
        if (d->space_full)
                daemon_notify_status("consuming from %s; %llu plans done; storage full (%s): "
                                     "plans over %llu KiB are answered with ErrorCode %d",
                                     d->cfg->rabbitmq.input_queue, (unsigned long long)d->n_plans,
                                     strerror(d->space_errno),
                                     (unsigned long long)(d->space_need >> 10),
                                     RESULT_CODE_NO_SPACE);
        else
                daemon_notify_status("consuming from %s; %llu plans done",
                                     d->cfg->rabbitmq.input_queue, (unsigned long long)d->n_plans);
}

void daemon_space_refused(Daemon *d, int err, uint64_t need)
{
        if (!d->space_full)
                log_warning(NULL,
                            "storage %s is full (%s): plans it cannot hold are answered with "
                            "ErrorCode %d until there is room again",
                            d->cfg->storage, strerror(-err), RESULT_CODE_NO_SPACE);
        d->space_full = true;
        d->space_errno = -err;
        d->space_need = need;
        d->space_stored = false;
        daemon_status_idle(d);
        if (d->stage == DAEMON_RUNNING && !uv_is_active((uv_handle_t *)&d->space))
                uv_timer_start(&d->space, on_space, DAEMON_RETRY_MS, 0);
}

void daemon_space_stored(Daemon *d)
{
        if (!d->space_full || d->space_stored)
                return;
        /* A plan fitted after the last refused one: look now. */
        d->space_stored = true;
        uv_timer_stop(&d->space);
        on_space(&d->space);
}

void daemon_space_checked(Daemon *d, DaemonWork *w)
{
        if (!d->space_full)
                return;
        if (w->rc == 0 && w->space.reserve_whole &&
            (w->space.available >= d->space_need || d->space_stored)) {
                log_info(NULL,
                         "storage %s has room again (%llu KiB free): plans are stored and run "
                         "as usual",
                         d->cfg->storage, (unsigned long long)(w->space.available >> 10));
                d->space_full = false;
                d->space_need = 0;
                daemon_pump(d);
                return;
        }
        if (d->stage == DAEMON_RUNNING)
                uv_timer_start(&d->space, on_space, DAEMON_RETRY_MS, 0);
}
