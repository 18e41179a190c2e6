/* The agent as a service: start, the transport's callbacks, signals, and a
 * clean stop (see daemon.h). */
#include "daemon/daemon.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "daemon/daemon-cancel.h"
#include "daemon/daemon-internal.h"
#include "log/log.h"
#include "sandbox/sandbox.h"
#include "util/macro.h"

/* ---- the transport's callbacks ------------------------------------------ */

static void on_ready(Transport *t, const TransportReady *ready, void *userdata)
{
        Daemon *d = userdata;
        char status[256];

        daemon_observe_broker_ready(d, ready);
        log_info(NULL, "consuming '%s' on %s (connection %u, heartbeat %u s)",
                 d->cfg->rabbitmq.input_queue, ready->broker, ready->connection, ready->heartbeat);
        snprintf(status, sizeof(status), "consuming from %s on %s", d->cfg->rabbitmq.input_queue,
                 ready->broker);
        daemon_notify_ready(d, status);
        daemon_pump(d);
}

static void on_lost(Transport *t, const TransportLoss *loss, void *userdata)
{
        Daemon *d = userdata;
        uint64_t now = uv_now(d->loop);
        LogLevel level = LOG_LEVEL_WARNING;

        daemon_observe_broker_lost(d, loss);
        if (!loss->was_ready && d->lost_reason && streq(d->lost_reason, loss->reason) &&
            now - d->lost_logged_ms < DAEMON_LOST_LOG_MS) {
                level = LOG_LEVEL_DEBUG;
        } else {
                free(d->lost_reason);
                d->lost_reason = strdup(loss->reason);
                d->lost_logged_ms = now;
        }
        log_write(level, NULL, "%s %s; next attempt in %.1f s",
                  loss->was_ready ? "connection lost:" : "cannot connect:", loss->reason,
                  (double)loss->retry_ms / 1000);
        daemon_notify_status("waiting for the broker: %s", loss->reason);
}

static void on_delivery(Transport *t, TransportDelivery *dl, void *userdata)
{
        Daemon *d = userdata;
        int rc;

        if (daemon_stop_requested(d)) {
                /* Left unsettled: the broker delivers it again after the
                 * connection closes. */
                return;
        }
        if (daemon_cancel_delivery(d, dl))
                return;
        if (d->key) {
                /* The reference's Windows agent and the message-signing spec:
                 * an unsigned or badly signed message is rejected, not
                 * requeued, and never runs. */
                rc = dl->signature_kind != TRANSPORT_SIGNATURE_BYTES
                             ? SIGNATURE_MISSING
                             : signature_verify(d->key, d->cfg->rabbitmq.input_queue, dl->body,
                                                dl->body_len, dl->signature, dl->signature_len);
                if (rc != 0) {
                        log_error(dl->message_id[0] ? dl->message_id : NULL,
                                  "rejecting a message: %s",
                                  rc == SIGNATURE_MISSING ? "required signature was not found"
                                  : rc == SIGNATURE_BAD   ? "invalid signature"
                                                          : strerror(-rc));
                        d->tops->reject(t, dl->tag, false);
                        return;
                }
        }
        daemon_store_delivery(d, dl);
}

static void on_confirm(Transport *t, uint64_t seq, TransportConfirm status, void *userdata)
{
        daemon_on_confirm(userdata, seq, status);
}

const TransportCallbacks daemon_transport_callbacks = {on_ready, on_lost, on_delivery, on_confirm};

const DaemonTransportOps daemon_transport_sys = {transport_publish, transport_ack,
                                                 transport_reject,  transport_is_ready,
                                                 transport_stop,    transport_outstanding};

/* ---- the daemon's stage -------------------------------------------------- */

void daemon_stage_move(Daemon *d, DaemonStage to)
{
        assert(to > d->stage);
        /* Read by the checks on the thread pool too (daemon_stop_requested). */
        __atomic_store_n(&d->stage, to, __ATOMIC_RELEASE);
}

/* ---- stopping ------------------------------------------------------------ */

static void close_handles(Daemon *d)
{
        daemon_stage_move(d, DAEMON_STOPPED);
        daemon_control_stop(d);
        daemon_progress_stop(d);
        uv_close((uv_handle_t *)&d->sigterm, NULL);
        uv_close((uv_handle_t *)&d->sigint, NULL);
        uv_close((uv_handle_t *)&d->sighup, NULL);
        daemon_watchdog_close(&d->watchdog);
        uv_close((uv_handle_t *)&d->retry, NULL);
        uv_close((uv_handle_t *)&d->trim, NULL);
        uv_close((uv_handle_t *)&d->space, NULL);
        uv_close((uv_handle_t *)&d->checkpoint, NULL);
        runner_free(d->runner);
        d->runner = NULL;
}

static void on_transport_stopped(Transport *t, void *userdata)
{
        close_handles(userdata);
}

/* The stop waits for the running plan (its result is journaled) and for
 * work on the disk; results that can still be published are, then the
 * connection closes. */
void daemon_maybe_finish_stop(Daemon *d)
{
        if (d->stage != DAEMON_STOPPING || !daemon_idle(d) || runner_busy(d->runner))
                return;
        daemon_stage_move(d, DAEMON_CLOSING);
        log_info(NULL, "stopped; %llu plans done since start", (unsigned long long)d->n_plans);
        if (d->tops->stop(d->transport, on_transport_stopped) < 0)
                on_transport_stopped(d->transport, d);
}

static void on_runner_idle(Runner *r, void *userdata)
{
        daemon_maybe_finish_stop(userdata);
}

static void on_signal(uv_signal_t *s, int signum)
{
        Daemon *d = s->data;

        if (signum == SIGHUP) {
                log_info(NULL, "SIGHUP: the configuration is read at start only; restart the "
                               "agent to apply changes");
                return;
        }
        if (daemon_stop_requested(d)) {
                log_warning(runner_plan_id(d->runner), "%s again: killing the running script now",
                            strsignal(signum));
                runner_stop(d->runner, 0);
                return;
        }
        log_info(NULL, "%s: stopping (a running script gets %u s)", strsignal(signum),
                 d->cfg->agent.stop_grace);
        daemon_stage_move(d, DAEMON_STOPPING);
        daemon_notify_stopping();
        runner_stop(d->runner, d->cfg->agent.stop_grace);
        /* Results already journaled may still go out before the connection
         * closes; new plans wait in the journal for the next start. */
        daemon_pump(d);
        daemon_maybe_finish_stop(d);
}

/* ---- start --------------------------------------------------------------- */

/* The broker password lives in the configuration; warn when other users
 * can read it (peer agents leave secrets readable, spec notes), and at
 * every start when the user scripts run as can (docs/image-builders.md). */
static void check_config_modes(const Config *cfg, const char *const *paths)
{
        struct stat st;

        for (size_t i = 0; paths && paths[i]; i++) {
                if (stat(paths[i], &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & S_IROTH))
                        log_warning(NULL,
                                    "%s is readable by other users and holds the broker "
                                    "password; chmod 600 it",
                                    paths[i]);
                if (sandbox_user_may_read(&cfg->sandbox, paths[i]) == 1)
                        log_warning(NULL,
                                    "%s is readable by [sandbox] user %s, whom scripts run as, "
                                    "and holds the broker password; make it root's, mode 0600",
                                    paths[i], cfg->sandbox.user);
        }
}

static int check_config(const Config *cfg)
{
        if (!*cfg->rabbitmq.input_queue) {
                log_error(NULL, "[rabbitmq] input_queue is not set: there is no queue to consume");
                return 2;
        }
        if (!cfg->rabbitmq.result_routing_key && !cfg->enable_dynamic_result_queue)
                /* The reference publishes to routing key "None" then, which
                 * loses every result. */
                log_warning(NULL, "[rabbitmq] result_routing_key is not set: results go to "
                                  "routing key 'None', as the reference agent does");
        return 0;
}

/* "process 1234", or "another process" when /proc/locks does not say. */
static const char *lock_holder(const char *storage, char *buf, size_t size)
{
        pid_t pid;

        if (journal_lock_holder(storage, &pid) != 0)
                return "another process";
        snprintf(buf, size, "process %d", (int)pid);
        return buf;
}

/* The journal's lock outlives an agent by a moment: a kill returns before
 * the killed agent has ended, and its lock goes only with its last thread
 * (one in an fsync finishes that first). So a start right after a kill
 * waits for the lock, up to DAEMON_LOCK_WAIT_MS; what holds it longer is
 * another agent on the same storage, and the start fails. */
static int open_journal(Daemon *d, const JournalOptions *jo)
{
        const char *storage = d->cfg->storage;
        uint64_t start = uv_hrtime(), waited_ms = 0;
        char holder[64];
        int rc;

        for (;;) {
                rc = journal_open(storage, jo, &d->journal);
                if (rc != -EBUSY || waited_ms >= DAEMON_LOCK_WAIT_MS)
                        break;
                if (waited_ms == 0)
                        log_warning(NULL,
                                    "the journal in %s/plans is locked by %s (an agent that is "
                                    "still ending, or another agent on this storage); waiting "
                                    "up to %u s",
                                    storage, lock_holder(storage, holder, sizeof(holder)),
                                    DAEMON_LOCK_WAIT_MS / 1000);
                uv_sleep(DAEMON_LOCK_POLL_MS);
                waited_ms = (uv_hrtime() - start) / 1000000;
                if (waited_ms == 0)
                        waited_ms = 1;
        }
        if (rc == -EBUSY) {
                log_error(NULL,
                          "cannot open the journal in %s/plans: %s still holds its lock after "
                          "%u s; another agent is using this storage",
                          storage, lock_holder(storage, holder, sizeof(holder)),
                          DAEMON_LOCK_WAIT_MS / 1000);
                return 1;
        }
        if (rc == -EBADMSG) {
                log_error(NULL,
                          "cannot open the journal in %s/plans: %s/journal.key is not the "
                          "agent's key (a regular file of 32 bytes, the agent's own)",
                          storage, storage);
                return 1;
        }
        if (rc < 0) {
                log_error(NULL, "cannot open the journal in %s/plans: %s", storage, strerror(-rc));
                return 1;
        }
        if (waited_ms > 0)
                log_info(NULL, "the journal's lock was released after %.2f s",
                         (double)(uv_hrtime() - start) / 1e9);
        return 0;
}

void daemon_begin(Daemon *d)
{
        int rc;

        /* A stop waits for the last plan's files to be removed too. */
        runner_set_idle_cb(d->runner, on_runner_idle, d);
        daemon_observe_init(d);
        daemon_stage_move(d, DAEMON_RUNNING);
        uv_signal_init(d->loop, &d->sigterm);
        uv_signal_init(d->loop, &d->sigint);
        uv_signal_init(d->loop, &d->sighup);
        uv_timer_init(d->loop, &d->retry);
        uv_timer_init(d->loop, &d->trim);
        uv_timer_init(d->loop, &d->space);
        uv_timer_init(d->loop, &d->checkpoint);
        d->sigterm.data = d->sigint.data = d->sighup.data = d->retry.data = d;
        d->trim.data = d->space.data = d->checkpoint.data = d;
        uv_signal_start(&d->sigterm, on_signal, SIGTERM);
        uv_signal_start(&d->sigint, on_signal, SIGINT);
        uv_signal_start(&d->sighup, on_signal, SIGHUP);
        /* A malformed $WATCHDOG_USEC or $WATCHDOG_PID leaves the watchdog
         * off, as sd_watchdog_enabled() did; a missing timerfd is worth a
         * word, as systemd will then restart the agent. */
        rc = daemon_watchdog_start(&d->watchdog, d->loop);
        if (rc < 0 && rc != -EINVAL)
                log_warning(NULL, "cannot start the systemd watchdog's pings: %s", strerror(-rc));
}

static int daemon_start(Daemon *d, const char *const *config_paths)
{
        const Config *cfg = d->cfg;
        _cleanup_free_ char *warning = NULL, *error = NULL;
        JournalOptions jo = JOURNAL_OPTIONS_DEFAULT;
        TransportOptions to;
        const JournalOpenReport *rep;
        int rc;

        check_config_modes(cfg, config_paths);
        daemon_crash_init(d);
        rc = check_config(cfg);
        if (rc != 0)
                return rc;
        if (cfg->engine_key && *cfg->engine_key) {
                rc = signature_key_new(cfg->engine_key, &d->key, &error);
                if (rc != 0) {
                        log_error(NULL, "engine_key: %s", error ? error : strerror(-rc));
                        return 2;
                }
                log_info(NULL, "plans must be signed (engine key: RSA %u bits)",
                         signature_key_bits(d->key));
        }

        daemon_test_journal_ops(&jo);
        jo.max_plan_file = journal_plan_file_max(cfg->agent.max_plan_size);
        jo.wal = cfg->agent.journal_log;
        rc = open_journal(d, &jo);
        if (rc != 0)
                return rc;
        rep = journal_open_report(d->journal);
        if (rep->n_interrupted)
                log_warning(NULL,
                            "%u plan(s) were running when the agent last stopped; they "
                            "%s",
                            rep->n_interrupted,
                            cfg->agent.durable_calls
                                    ? "resume from their call logs (or, without one, are "
                                      "answered as interrupted)"
                                    : "will be answered as interrupted");
        if (rep->n_temp_removed || rep->n_empty_removed)
                log_info(NULL, "journal: removed %u unfinished write(s) and %u empty entr(ies)",
                         rep->n_temp_removed, rep->n_empty_removed);
        if (rep->stamp_recovered)
                log_warning(NULL,
                            "journal: the stamp file was %s; last stamp %lld recovered from a "
                            "plan that was running",
                            rep->stamp_damaged ? "damaged" : "behind", (long long)rep->last_stamp);
        else if (rep->stamp_damaged)
                log_warning(NULL, "journal: the stamp file held no number; last stamp %lld",
                            (long long)rep->last_stamp);
        if (rep->seal_unsupported)
                log_warning(NULL,
                            "journal: %s/plans has no extended attributes; its entries "
                            "are not sealed, and a planted entry cannot be told apart",
                            cfg->storage);
        else if (rep->seal_created)
                log_info(NULL,
                         "journal: made the key %s/journal.key; %u file(s) of an earlier "
                         "version accepted and sealed",
                         cfg->storage, rep->n_sealed);
        if (rep->stamp_forged)
                log_warning(NULL,
                            "journal: the stamp file does not carry the agent's seal; "
                            "ignored (last stamp %lld)",
                            (long long)rep->last_stamp);
        if (rep->n_forged_records)
                log_error(NULL, "journal: %u done record(s) without the agent's seal ignored",
                          rep->n_forged_records);
        if (rep->stamp_ahead)
                log_warning(NULL,
                            "journal: the last stamp %lld is more than a day ahead of this "
                            "machine's clock (no engine stamped it); the next stamped plan "
                            "replaces it",
                            (long long)rep->last_stamp);
        if (rep->wal_reset)
                log_warning(NULL,
                            "journal: %s/journal.log could not be read (damaged, or written "
                            "under another key) and was begun afresh; what only it held is lost",
                            cfg->storage);
        if (rep->wal_errno)
                log_warning(NULL,
                            "journal: cannot make %s/journal.log: %s; the journal works "
                            "without its write-ahead log (each call flushes its own files)",
                            cfg->storage, strerror(rep->wal_errno));
        if (rep->n_wal_records)
                log_info(NULL, "journal: %u record(s) of %s/journal.log replayed into plans/",
                         rep->n_wal_records, cfg->storage);

        rc = runner_new(d->loop, cfg, NULL, &d->runner, &warning, &error);
        if (warning)
                log_warning(NULL, "%s", warning);
        if (rc == RUNNER_UNAVAILABLE) {
                log_error(NULL, "%s", error);
                return 2;
        }
        if (rc < 0) {
                log_error(NULL, "cannot prepare the runner: %s", strerror(-rc));
                return 1;
        }
        transport_options_from_config(&to, cfg);
        to.awake = daemon_watchdog_offer;
        to.awake_data = &d->watchdog;
        rc = transport_new(d->loop, &to, &daemon_transport_callbacks, d, &d->transport);
        if (rc < 0) {
                log_error(NULL, "cannot prepare the transport: %s", strerror(-rc));
                return rc == -EINVAL ? 2 : 1;
        }

        daemon_begin(d);
        /* Without it the agent still works; only `status` cannot answer. */
        (void)daemon_control_start(d);
        /* A key that cannot be used leaves progress off, and plans run. */
        (void)daemon_progress_start(d);
        rc = transport_start(d->transport);
        if (rc < 0) {
                log_error(NULL, "cannot start the transport: %s", strerror(-rc));
                return 1;
        }
        log_info(NULL, "muranoagent started: queue '%s', storage %s", cfg->rabbitmq.input_queue,
                 cfg->storage);
        /* Unsent results and pending plans from an earlier run do not wait
         * for the broker: plans run now, results go out once connected. */
        daemon_pump(d);
        return 0;
}

int daemon_run(const Config *cfg, const char *const *config_paths)
{
        Daemon d = {.cfg = cfg, .tops = &daemon_transport_sys};
        uv_loop_t loop;
        int rc;

        rc = uv_loop_init(&loop);
        if (rc < 0) {
                log_error(NULL, "cannot create the event loop: %s", uv_strerror(rc));
                return 1;
        }
        d.loop = &loop;
        rc = daemon_start(&d, config_paths);
        if (rc == 0)
                rc = d.exit_status;
        else if (d.stage == DAEMON_RUNNING)
                close_handles(&d);
        else
                runner_free(d.runner);
        uv_run(&loop, UV_RUN_DEFAULT);
        transport_free(d.transport);
        daemon_work_free_all(&d);
        daemon_cancel_free_all(&d);
        /* A clean stop leaves the log empty and plans/ durable (off the
         * loop, which has ended); journal_free() would make it too, but
         * says nothing of a failure. */
        if (d.journal)
                daemon_checkpoint_log(journal_checkpoint(d.journal));
        journal_free(d.journal);
        signature_key_free(d.key);
        free(d.lost_reason);
        daemon_observe_done(&d);
        if (uv_loop_close(&loop) != 0)
                log_error(NULL, "the event loop did not close cleanly");
        return rc;
}
