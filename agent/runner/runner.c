/* The runner's loop side: starting a plan on its thread, carrying its
 * requests, its time limits, and handing its result back (see runner.h). */
#include "runner/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "files/files.h"
#include "log/log.h"
#include "result/result.h"
#include "runner/runner-internal.h"
#include "sandbox/sandbox.h"
#include "util/hexid.h"
#include "util/macro.h"
#include "util/pyjson.h"
#include "util/strv.h"
#include "util/userdb.h"

/* What runner_new() sets up before the loop's handles: freed when the last
 * handle has closed, or by runner_new() when it fails. */
static void runner_free_setup(Runner *r)
{
        cgroup_free(r->cgroup);
        free(r->storage);
        free(r->next_calls_dir);
        journal_calls_key_free(r->next_calls_key);
        plan_text_free(r->next_plan_text);
        free(r->helper);
        free(r->home);
        free(r->fetcher);
        strv_free(r->agent_paths);
        if (r->proc_fd >= 0)
                close(r->proc_fd);
        free(r);
}

static void runner_on_close(uv_handle_t *h)
{
        Runner *r = h->data;

        if (--r->open_handles > 0)
                return;
        uv_mutex_destroy(&r->lock);
        uv_cond_destroy(&r->cond);
        runner_free_setup(r);
}

static void job_free(RunnerJob *job)
{
        if (!job)
                return;
        json_decref(job->plan);
        json_decref(job->source_id);
        json_decref(job->reply_to);
        json_decref(job->result);
        free(job->cancel_message);
        free(job->cache_dir);
        free(job->calls_dir);
        journal_calls_key_free(job->calls_key);
        plan_text_free(job->plan_text);
        free(job->id);
        free(job->dir);
        free(job);
}

/* body_run() may need about 1 MiB of stack on hostile input; do not
 * depend on the default, which RLIMIT_STACK decides. */
static int runner_thread_create(RunnerJob *job)
{
        int rc = uv_thread_create_ex(
                &job->thread,
                &(uv_thread_options_t){.flags = UV_THREAD_HAS_STACK_SIZE, .stack_size = 8u << 20},
                runner_plan_main, job);

        if (rc == 0)
                job->thread_started = true;
        return rc;
}

/* The running plan is over: its timers stop, and result goes to its done
 * callback, which may start the next plan. */
static void runner_hand_over(Runner *r, json_t *result)
{
        RunnerJob *job = r->job;

        uv_timer_stop(&r->plan_timer);
        uv_timer_stop(&r->stop_timer);
        r->job = NULL;
        job->done(r, result, job->userdata);
}

/* Nothing runs and nothing is being removed: the loop may end, and a stop
 * waiting for the runner may go on. */
static void runner_went_idle(Runner *r)
{
        uv_unref((uv_handle_t *)&r->wake);
        if (r->idle_cb)
                r->idle_cb(r, r->idle_userdata);
}

/* The plan's result is in: hand it over. Its thread goes on removing the
 * plan's files (runner_plan_main) and is joined by runner_reap(); a plan
 * started meanwhile waits for that. */
static void runner_deliver(Runner *r)
{
        r->finishing = r->job;
        runner_hand_over(r, TAKE_PTR(r->job->result));
}

/* A plan started while the last one's thread was still cleaning up gets
 * its thread now. Should that fail, it ends at once with an error result. */
static void runner_start_deferred(Runner *r)
{
        RunnerJob *job = r->job;
        char msg[128];
        json_t *result;
        int rc;

        rc = runner_thread_create(job);
        if (rc == 0)
                return;
        snprintf(msg, sizeof(msg), "cannot start the plan's thread: %s", uv_strerror(rc));
        log_error(job->id, "%s", msg);
        result = runner_job_error(job, 1, msg);
        runner_hand_over(r, result);
        job_free(job);
        if (!r->job)
                runner_went_idle(r);
}

/* The last plan's thread has ended. */
static void runner_reap(Runner *r)
{
        RunnerJob *job = r->finishing;

        uv_thread_join(&job->thread);
        r->finishing = NULL;
        job_free(job);
        if (r->job && !r->job->thread_started)
                runner_start_deferred(r);
        else if (!r->job)
                runner_went_idle(r);
}

void runner_set_idle_cb(Runner *r, runner_idle_cb cb, void *userdata)
{
        r->idle_cb = cb;
        r->idle_userdata = userdata;
}

void runner_set_observer(Runner *r, const RunnerObserver *obs, void *userdata)
{
        r->observer = obs ? *obs : (RunnerObserver){0};
        r->observer_userdata = userdata;
}

/* The plan thread posted a request, its result, or ended. */
static void runner_on_wake(uv_async_t *a)
{
        Runner *r = a->data;
        RunnerJob *job = r->job;
        bool start = false, ready = false, ended;

        uv_mutex_lock(&r->lock);
        if (job && job->thread_started) {
                if (job->state == REQUEST_PENDING) {
                        job->state = REQUEST_RUNNING;
                        start = true;
                }
                ready = job->result_ready;
        }
        uv_mutex_unlock(&r->lock);

        if (start)
                runner_proc_start(job);
        if (ready)
                runner_deliver(r);
        /* Looked at after the delivery: one wake-up may carry both the
         * result and the end of the thread. */
        uv_mutex_lock(&r->lock);
        ended = r->finishing && r->finishing->thread_done;
        uv_mutex_unlock(&r->lock);
        if (ended)
                runner_reap(r);
}

void runner_request_finish(RunnerJob *job, int rc)
{
        Runner *r = job->runner;

        uv_mutex_lock(&r->lock);
        job->req_rc = rc;
        job->state = REQUEST_DONE;
        uv_cond_broadcast(&r->cond);
        uv_mutex_unlock(&r->lock);
}

static void runner_cancel(Runner *r, int why)
{
        RunnerJob *job = r->job;
        int none = RUNNER_CANCEL_NONE;

        if (!job)
                return;
        /* The first reason wins: a plan that timed out while the agent was
         * stopping still reports the timeout. */
        atomic_compare_exchange_strong(&job->cancel, &none, why);
        runner_proc_cancel(job);
}

/* What the plan is doing, as a phrase after "during": the command that
 * runs, the script the Body calls, or the Body itself. */
static char *job_during(RunnerJob *job)
{
        Runner *r = job->runner;
        char *text = NULL;
        int rc;

        uv_mutex_lock(&r->lock);
        if (job->state != REQUEST_IDLE && job->req)
                rc = asprintf(&text, "%s", job->req->what);
        else if (job->call)
                rc = asprintf(&text, "the call of script %s", job->call);
        else
                rc = asprintf(&text, "its Body, while no script was running");
        uv_mutex_unlock(&r->lock);
        return rc < 0 ? NULL : text;
}

int runner_cancel_plan(Runner *r, const char *plan_id, const char *by, char **ret_during)
{
        RunnerJob *job = r->job;
        _cleanup_free_ char *during = NULL;
        char *msg = NULL;

        if (!job || !result_source_id_is(job->source_id, plan_id))
                return -ESRCH;
        if (atomic_load(&job->cancel) != RUNNER_CANCEL_NONE)
                return RUNNER_CANCEL_ENDING;
        during = job_during(job);
        if (!during || asprintf(&msg, "The plan was cancelled by %s during %s", by, during) < 0)
                return -ENOMEM;
        free(job->cancel_message);
        job->cancel_message = msg;
        /* The message is in place before the plan thread can see the flag,
         * which it reads only once set. The plan thread may have made its
         * result meanwhile (RUNNER_CANCEL_LATE): then nothing changes. */
        if (!atomic_compare_exchange_strong(&job->cancel, &(int){RUNNER_CANCEL_NONE},
                                            RUNNER_CANCEL_REQUEST))
                return RUNNER_CANCEL_ENDING;
        runner_proc_cancel(job);
        if (ret_during)
                *ret_during = TAKE_PTR(during);
        return 0;
}

static void runner_on_plan_timeout(uv_timer_t *t)
{
        Runner *r = t->data;

        log_warning(r->job ? r->job->id : NULL, "the plan timed out after %u seconds",
                    r->job ? r->job->timeout : 0);
        runner_cancel(r, RUNNER_CANCEL_TIMEOUT);
}

static void runner_on_stop_grace(uv_timer_t *t)
{
        Runner *r = t->data;

        log_warning(r->job ? r->job->id : NULL,
                    "stop grace time is over: killing the running script");
        runner_cancel(r, RUNNER_CANCEL_STOP);
}

/* Scripts that run as someone else than the agent must reach their files,
 * which the files module then gives to that user (FilesOptions.set_owner;
 * docs/sandbox.md, "Running scripts as another user"). A group that does
 * not exist is an error here rather than at every script's start. */
static int runner_setup_owner(Runner *r, char **ret_error)
{
        const struct ConfigSandbox *sb = &r->cfg->sandbox;
        const char *what = "user", *value = sb->user;
        UserdbUser u;
        int rc;

        if (!sb->enabled)
                return 0;
        rc = userdb_user(sb->user, &u);
        if (rc == 0) {
                r->owner_uid = u.uid;
                userdb_user_clear(&u);
                what = "group";
                value = sb->group;
                rc = userdb_group(sb->group, &r->owner_gid);
        }
        if (rc < 0) {
                if (asprintf(ret_error, "[sandbox] %s = %s: %s%s", what, value,
                             rc == -ENOENT ? "no such " : strerror(-rc),
                             rc == -ENOENT ? what : "") < 0)
                        *ret_error = NULL;
                return RUNNER_UNAVAILABLE;
        }
        /* root:root adds no --user/--group (sandbox_build()): the script
         * keeps the agent's identity, whatever it is, and so do its files. */
        r->set_owner = (r->owner_uid != 0 || r->owner_gid != 0) &&
                       (r->owner_uid != geteuid() || r->owner_gid != getegid());
        return 0;
}

/* memory_max = auto: this share of the machine's RAM, which leaves the
 * rest (a fifth; about 100 MiB on a 512 MiB VM) to the agent, the system's
 * services and the kernel, while a package install, whose peak is well
 * under that (docs/sandbox.md, "What holds by default"), still fits. */
#define RUNNER_MEMORY_AUTO_PERCENT 80

/* The memory limit of memory_max = auto, or 0 when the RAM is not known. */
static uint64_t memory_max_auto(void)
{
        struct sysinfo si;

        if (sysinfo(&si) < 0)
                return 0;
        return (uint64_t)si.totalram * si.mem_unit / 100 * RUNNER_MEMORY_AUTO_PERCENT;
}

/* Cgroups are set up once, at start: where they go, and whether a feature
 * that was asked for is missing (an error) or merely unavailable under
 * cgroup = auto (a warning). The limits of `auto` are defaults, not asked
 * for: a cgroup without their controllers only costs them (a warning). */
static int runner_setup_cgroup(Runner *r, char **ret_warning, char **ret_error)
{
        const struct ConfigSandbox *sb = &r->cfg->sandbox;
        CgroupOptions o = {0};
        char *reason = NULL;
        bool asked;
        int rc;

        o.mode = sb->enabled ? sb->cgroup : CONFIG_CGROUP_OFF;
        o.memory_optional = sb->memory_max == CONFIG_MEMORY_MAX_AUTO;
        o.memory_max = o.memory_optional ? memory_max_auto() : sb->memory_max;
        o.pids_optional = sb->pids_max == CONFIG_PIDS_MAX_AUTO;
        o.pids_max = o.pids_optional ? RUNNER_PIDS_MAX_AUTO : sb->pids_max;
        asked = (o.memory_max > 0 && !o.memory_optional) || (o.pids_max > 0 && !o.pids_optional);
        rc = cgroup_setup(&o, &r->cgroup, &reason);
        if (rc == CGROUP_UNAVAILABLE) {
                if (asprintf(ret_error, "[sandbox] cgroup = %s cannot be applied: %s",
                             config_cgroup_name(sb->cgroup),
                             reason ? reason : "unknown reason") < 0)
                        *ret_error = NULL;
                free(reason);
                return RUNNER_UNAVAILABLE;
        }
        if (rc < 0)
                return rc;
        if (reason) {
                if (asked && cgroup_version(r->cgroup) == CGROUP_VERSION_NONE) {
                        /* Limits were asked for; without a cgroup nobody
                         * would enforce them. */
                        if (asprintf(ret_error, "[sandbox] memory_max/pids_max need a cgroup: %s",
                                     reason) < 0)
                                *ret_error = NULL;
                        free(reason);
                        return RUNNER_UNAVAILABLE;
                }
                if (ret_warning)
                        *ret_warning = reason;
                else
                        free(reason);
        }
        return 0;
}

/* Kept for the agent's life: the child of an in-process run raises its OOM
 * score through it, so a script that unmounts /proc cannot take that away
 * from the scripts after it. Without /proc at start, scripts keep the
 * agent's score, and the warning says so. */
static int runner_setup_proc(Runner *r, char **ret_warning)
{
        char *both = NULL;
        struct statfs fs;
        int err;

        if (!r->cfg->sandbox.enabled)
                return 0;
        r->proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
        err = r->proc_fd < 0 ? errno : 0;
        /* The directory stays when a script unmounts what was on it. */
        if (r->proc_fd >= 0 && (fstatfs(r->proc_fd, &fs) < 0 || fs.f_type != PROC_SUPER_MAGIC)) {
                err = ENOENT;
                close(r->proc_fd);
                r->proc_fd = -1;
        }
        if (r->proc_fd >= 0 || !ret_warning)
                return 0;
        if (asprintf(&both, "%s%s/proc is not mounted (%s): scripts keep the agent's OOM score",
                     *ret_warning ? *ret_warning : "", *ret_warning ? "; " : "",
                     err == ENOENT ? "no procfs there" : strerror(err)) < 0)
                return -ENOMEM;
        free(*ret_warning);
        *ret_warning = both;
        return 0;
}

/* What hide_agent hides from scripts: the storage (the journal, its key,
 * the stamp, every plan's files; the helper keeps the plan's own
 * directory), the files the configuration came from and the daemon's log
 * file (plan IDs, and what scripts printed), by absolute path: resolved
 * when it exists, else made absolute (the storage of `muranoagent run` is
 * made with the first plan). */
static int runner_setup_agent_paths(Runner *r)
{
        const ConfigStrv *files = &r->cfg->files;
        char cwd[PATH_MAX], buf[PATH_MAX];
        const char *log = config_log_path(r->cfg, buf, sizeof(buf));

        r->agent_paths = calloc(files->n + 3, sizeof(char *));
        if (!r->agent_paths)
                return -ENOMEM;
        for (size_t i = 0; i <= files->n + 1; i++) {
                const char *path = i == 0 ? r->storage : i <= files->n ? files->items[i - 1] : log;
                char *p;

                if (!path)
                        break;
                p = realpath(path, NULL);

                if (!p && errno == ENOMEM)
                        return -ENOMEM;
                if (!p && path[0] == '/')
                        p = strdup(path);
                else if (!p && getcwd(cwd, sizeof(cwd)) && asprintf(&p, "%s/%s", cwd, path) < 0)
                        p = NULL;
                if (!p)
                        return -ENOMEM;
                r->agent_paths[r->n_agent_paths++] = p;
        }
        return 0;
}

int runner_new(uv_loop_t *loop, const Config *cfg, const char *storage, Runner **ret,
               char **ret_warning, char **ret_error)
{
        Runner *r = calloc(1, sizeof(*r));
        int rc;

        if (ret_warning)
                *ret_warning = NULL;
        *ret_error = NULL;
        if (!r)
                return -ENOMEM;
        r->loop = loop;
        r->cfg = cfg;
        r->proc_fd = -1;
        r->storage = strdup(storage ? storage : cfg->storage);
        /* Looked up once. When it is missing, the files module looks again
         * for each plan and fails only the plans with HTTP(S) downloads. */
        rc = files_fetch_program_path(&r->fetcher);
        if (!r->storage || rc == -ENOMEM) {
                rc = -ENOMEM;
                goto fail;
        }
        if (cfg->sandbox.enabled) {
                rc = sandbox_helper_path(&r->helper);
                if (rc < 0) {
                        if (asprintf(ret_error,
                                     "the sandbox is enabled but muranoagent-sandbox "
                                     "cannot be found: %s",
                                     strerror(-rc)) < 0)
                                *ret_error = NULL;
                        rc = RUNNER_UNAVAILABLE;
                        goto fail;
                }
                rc = sandbox_user_home(cfg->sandbox.user, &r->home);
                if (rc < 0) {
                        if (asprintf(ret_error, "[sandbox] user = %s: %s", cfg->sandbox.user,
                                     rc == -ENOENT ? "no such user" : strerror(-rc)) < 0)
                                *ret_error = NULL;
                        rc = RUNNER_UNAVAILABLE;
                        goto fail;
                }
        }
        rc = runner_setup_owner(r, ret_error);
        if (rc != 0)
                goto fail;
        if (cfg->sandbox.enabled && !cfg->sandbox.mount_namespace &&
            (cfg->sandbox.hide_agent || cfg->sandbox.hide_paths.n > 0 ||
             cfg->sandbox.protect_kernel)) {
                /* Hiding is done with mounts: without the namespace the
                 * scripts would run with nothing hidden. */
                *ret_error = strdup("[sandbox] hide_agent, hide_paths and protect_kernel need "
                                    "mount_namespace = true");
                rc = RUNNER_UNAVAILABLE;
                goto fail;
        }
        rc = runner_setup_cgroup(r, ret_warning, ret_error);
        if (rc != 0)
                goto fail;
        rc = runner_setup_proc(r, ret_warning);
        if (rc == 0)
                rc = runner_setup_agent_paths(r);
        if (rc != 0)
                goto fail;
        r->own_session =
                r->proc_fd >= 0 ? child_session_of(r->proc_fd, getpid()) : CHILD_SESSION_NONE;
        r->audit_uid = r->proc_fd >= 0 ? child_session_uid(r->proc_fd) : getuid();

        uv_mutex_init(&r->lock);
        uv_cond_init(&r->cond);
        uv_async_init(loop, &r->wake, runner_on_wake);
        uv_timer_init(loop, &r->plan_timer);
        uv_timer_init(loop, &r->stop_timer);
        r->wake.data = r->plan_timer.data = r->stop_timer.data = r;
        /* The runner must not keep the loop alive when idle. */
        uv_unref((uv_handle_t *)&r->wake);
        r->open_handles = 3;
        *ret = r;
        return 0;

fail:
        runner_free_setup(r);
        return rc;
}

/* The plan's ID as a directory name. The reference uses the ID as it is,
 * so an empty ID made it remove <storage>/files itself; an ID that is not
 * a safe file name (files_component_problem()) gets a fresh one for the
 * directory (the result and the log still carry the real ID). */
static char *safe_id(const json_t *plan, const json_t *source_id)
{
        const json_t *id = json_object_get(plan, "ID");
        const char *s = pyjson_is_string(id)          ? json_string_value(id)
                        : pyjson_is_string(source_id) ? json_string_value(source_id)
                                                      : "";
        char fresh[33];

        if (!files_component_problem(s, strlen(s)))
                return strdup(s);
        if (hexid_new(fresh) < 0)
                return NULL;
        return strdup(fresh);
}

/* Seconds the whole plan may take: the smaller of plan_timeout and the
 * plan's own Timeout, where set. */
static unsigned plan_timeout(const Config *cfg, const json_t *plan)
{
        const json_t *t = json_object_get(plan, "Timeout");
        unsigned limit = cfg->agent.plan_timeout;

        if (json_is_number(t) && json_number_value(t) > 0) {
                double v = ceil(json_number_value(t));
                unsigned own = v >= (double)UINT_MAX ? UINT_MAX : (unsigned)v;
                if (limit == 0 || own < limit)
                        limit = own;
        }
        return limit;
}

int runner_start(Runner *r, const json_t *plan, const json_t *source_id, const json_t *reply_to,
                 runner_done_cb done, void *userdata)
{
        RunnerJob *job;
        int rc;

        if (r->stopping)
                return -ESHUTDOWN;
        if (r->job)
                return -EBUSY;
        job = calloc(1, sizeof(*job));
        if (!job)
                return -ENOMEM;
        job->runner = r;
        job->status_fd = -1;
        job->done = done;
        job->userdata = userdata;
        /* A reference, not a copy: the plan's thread only reads the plan,
         * and jansson's reference counts are atomic, so the caller may drop
         * its own reference at once. A deep copy of a plan that carries a
         * 2 MiB file costs 2.8 MB of fresh pages on the loop thread. */
        job->plan = json_incref((json_t *)plan);
        job->source_id = source_id ? json_deep_copy(source_id) : json_string("");
        job->reply_to = reply_to ? json_deep_copy(reply_to) : json_null();
        job->dir = safe_id(plan, source_id);
        /* As the daemon names the plan: its ID, else the message's. */
        job->id = pyjson_id_text(json_object_get(plan, "ID") ?: source_id);
        atomic_init(&job->cancel, RUNNER_CANCEL_NONE);
        if (!job->plan || !job->source_id || !job->reply_to || !job->dir || !job->id) {
                job_free(job);
                return -ENOMEM;
        }
        job->timeout = plan_timeout(r->cfg, plan);
        job->calls_dir = TAKE_PTR(r->next_calls_dir);
        job->calls_key = TAKE_PTR(r->next_calls_key);
        job->plan_text = TAKE_PTR(r->next_plan_text);
        /* Should the last plan's thread still be removing its files, this
         * one's thread starts when that has ended (runner_reap). */
        if (!r->finishing) {
                rc = runner_thread_create(job);
                if (rc < 0) {
                        job_free(job);
                        return rc;
                }
        }
        r->job = job;
        /* While a plan runs, its thread may wake the loop at any time, so
         * the loop must not end between two script calls. */
        uv_ref((uv_handle_t *)&r->wake);
        if (job->timeout > 0)
                uv_timer_start(&r->plan_timer, runner_on_plan_timeout,
                               (uint64_t)job->timeout * 1000, 0);
        return 0;
}

int runner_set_call_log(Runner *r, const char *dir, JournalCallsKey *key)
{
        free(r->next_calls_dir);
        journal_calls_key_free(r->next_calls_key);
        r->next_calls_key = dir ? key : NULL;
        if (!dir)
                journal_calls_key_free(key);
        r->next_calls_dir = dir ? strdup(dir) : NULL;
        return !dir || (r->next_calls_dir && key) ? 0 : -ENOMEM;
}

void runner_set_plan_text(Runner *r, PlanText *text)
{
        plan_text_free(r->next_plan_text);
        r->next_plan_text = text;
}

bool runner_busy(const Runner *r)
{
        return r->job != NULL || r->finishing != NULL;
}

const char *runner_plan_id(const Runner *r)
{
        return r && r->job ? r->job->id : NULL;
}

void runner_stop(Runner *r, unsigned grace_seconds)
{
        r->stopping = true;
        if (!r->job)
                return;
        if (grace_seconds == 0)
                runner_cancel(r, RUNNER_CANCEL_STOP);
        else
                uv_timer_start(&r->stop_timer, runner_on_stop_grace, (uint64_t)grace_seconds * 1000,
                               0);
}

void runner_free(Runner *r)
{
        if (!r)
                return;
        /* The last plan's thread may still be removing its files when the
         * caller did not run the loop until the runner was idle. */
        if (r->finishing) {
                uv_thread_join(&r->finishing->thread);
                r->finishing = (job_free(r->finishing), NULL);
        }
        uv_close((uv_handle_t *)&r->wake, runner_on_close);
        uv_close((uv_handle_t *)&r->plan_timer, runner_on_close);
        uv_close((uv_handle_t *)&r->stop_timer, runner_on_close);
}
