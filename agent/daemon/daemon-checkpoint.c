/* The write-ahead log's checkpoint while the agent runs (docs/journal.md,
 * "The checkpoint"): DAEMON_CHECKPOINT_MS after a removal, when nothing is
 * in flight, a WORK_CHECKPOINT item calls journal_checkpoint() on the
 * thread pool (a syncfs(): never on the loop), so that the next burst
 * finds the log empty and the mirror durable. Each removal puts it off
 * again: a burst pays no checkpoint until it is over. The clean stop makes
 * its own (daemon.c). A failed checkpoint is a warning: after a failed
 * superblock write the log takes no record until one succeeds, which the
 * journal's next call makes; after a failed syncfs() its records stay,
 * and the next checkpoint writes the mirror again from them before it
 * drops them (docs/journal.md, "The checkpoint"). */
#include <string.h>

#include "daemon/daemon-work.h"

#define DAEMON_CHECKPOINT_MS 1000

static void on_checkpoint(uv_timer_t *t)
{
        Daemon *d = t->data;
        DaemonWork *w;

        /* Busy: the next removal asks again. */
        if (d->stage != DAEMON_RUNNING || !daemon_idle(d))
                return;
        w = daemon_work_new(WORK_CHECKPOINT, NULL);
        if (!w || daemon_queue_work(d, w) < 0)
                daemon_work_free(w);
}

void daemon_checkpoint_later(Daemon *d)
{
        if (d->cfg->agent.journal_log && d->stage == DAEMON_RUNNING)
                uv_timer_start(&d->checkpoint, on_checkpoint, DAEMON_CHECKPOINT_MS, 0);
}

void daemon_checkpoint_log(int rc)
{
        if (rc < 0)
                log_warning(NULL,
                            "journal: the checkpoint of the write-ahead log failed: %s; the "
                            "log keeps its records until one succeeds (after a write-back "
                            "error, one that writes plans/ again first)",
                            strerror(-rc));
}
