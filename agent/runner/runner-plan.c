/* The plan thread: one plan's files, executors and Body, ending in its
 * result document (see runner.h). Everything here runs off the loop
 * thread; commands go through runner_proc_run(), which hands them to the
 * loop thread and waits. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "body/body.h"
#include "exec/exec.h"
#include "files/files.h"
#include "log/log.h"
#include "result/result.h"
#include "runner/runner-durable.h"
#include "runner/runner-internal.h"
#include "util/macro.h"
#include "util/pyrepr.h"
#include "util/pyjson.h"

typedef struct PlanScript {
        const char *name; /* borrowed from the plan */
        Exec *exec;
        char *path;  /* files_prepare_script()'s answer */
        bool loaded; /* files are in place for good (exec.h: "loaded") */
} PlanScript;

typedef struct PlanRun {
        RunnerJob *job;
        ProcRunner procs;
        Files *files;
        PlanScript *scripts;
        size_t n_scripts;
        char *cwd;              /* where the reference's os.chdir() would have left the agent */
        RunnerDurable *durable; /* the call log, NULL without durable calls */
} PlanRun;

int runner_proc_run(void *userdata, const ProcRequest *req, ProcResult *ret)
{
        RunnerJob *job = userdata;
        Runner *r = job->runner;
        int rc;

        uv_mutex_lock(&r->lock);
        job->req = req;
        job->res = ret;
        job->state = REQUEST_PENDING;
        uv_mutex_unlock(&r->lock);
        uv_async_send(&r->wake);

        uv_mutex_lock(&r->lock);
        while (job->state != REQUEST_DONE)
                uv_cond_wait(&r->cond, &r->lock);
        job->state = REQUEST_IDLE;
        job->req = NULL;
        job->res = NULL;
        rc = job->req_rc;
        uv_mutex_unlock(&r->lock);
        return rc;
}

static PlanScript *find_script(PlanRun *p, const char *name)
{
        for (size_t i = 0; i < p->n_scripts; i++)
                if (streq(p->scripts[i].name, name))
                        return &p->scripts[i];
        return NULL;
}

static int set_call_error(BodyCallError *err, int code, const char *message)
{
        err->code = code;
        err->message = strdup(message);
        err->additional_info = NULL;
        return err->message ? 1 : -ENOMEM;
}

/* The script the Body calls, for a cancel's message (runner_cancel_plan). */
static void set_call(RunnerJob *job, const char *name)
{
        uv_mutex_lock(&job->runner->lock);
        job->call = name;
        uv_mutex_unlock(&job->runner->lock);
}

/* BodyHost.call_script: files at the script's first call, then its
 * executor, as the reference's ScriptRunner does. */
static int plan_call_script(void *userdata, const BodyCall *call, json_t **ret, BodyCallError *err)
{
        PlanRun *p = userdata;
        PlanScript *s = find_script(p, call->script);
        int rc;

        if (!s)
                return -ENOENT; /* body_run only calls the names it was given */
        rc = exec_check_call(call, err);
        if (rc != 0)
                return rc;
        if (!s->loaded) {
                PlanError perr = {0};

                /* As the reference, files are prepared at every call until
                 * the script is loaded (exec_options_valid()). */
                s->path = (free(s->path), NULL);
                rc = files_prepare_script(p->files, s->name, &s->path, &perr);
                if (rc == FILES_FAILED) {
                        log_error(p->job->id, "files of script %s: %s", s->name, perr.message);
                        rc = set_call_error(err, perr.code, perr.message);
                        plan_error_clear(&perr);
                        return rc;
                }
                if (rc < 0)
                        return rc;
                s->loaded = exec_options_valid(s->exec);
        }
        log_info(p->job->id, "calling script %s", s->name);
        set_call(p->job, s->name);
        rc = exec_run(s->exec, s->path, call, &p->procs, &p->cwd, ret, err);
        set_call(p->job, NULL);
        return rc;
}

/* BodyHost.call_script with durable calls: through the call log. */
static int plan_call_durable(void *userdata, const BodyCall *call, json_t **ret, BodyCallError *err)
{
        PlanRun *p = userdata;

        return runner_durable_call(p->durable, call, plan_call_script, p, &p->procs,
                                   &p->job->cancel, ret, err);
}

static int plan_draw(void *userdata, const char *kind, const char *what, char **value, size_t *len)
{
        PlanRun *p = userdata;

        return runner_durable_draw(p->durable, kind, what, value, len);
}

static const char *plan_cwd(void *userdata)
{
        PlanRun *p = userdata;
        return p->cwd;
}

/* An error result with the plan's SourceID; NULL when out of memory. */
static json_t *error_result(RunnerJob *job, int code, const char *message, const json_t *info)
{
        json_t *res = NULL;

        if (result_new_error(&res, job->source_id, code, message, info) < 0)
                return NULL;
        return res;
}

json_t *runner_job_error(RunnerJob *job, int code, const char *message)
{
        return error_result(job, code, message, NULL);
}

/* Executors are made before the Body runs, as the reference makes its
 * ScriptRunners: an unknown Type fails the plan before anything runs. */
static json_t *plan_make_executors(PlanRun *p)
{
        const json_t *scripts = json_object_get(p->job->plan, "Scripts");
        const char *name;
        json_t *script;
        size_t i = 0;

        p->scripts = calloc(json_object_size(scripts) + 1, sizeof(*p->scripts));
        if (!p->scripts)
                return error_result(p->job, 1, "out of memory", NULL);
        json_object_foreach ((json_t *)scripts, name, script) {
                BodyCallError err = {0};
                int rc;

                p->scripts[i].name = name;
                rc = exec_new(name, script, &p->scripts[i].exec, &err);
                if (rc != 0) {
                        json_t *res = error_result(p->job, rc > 0 ? err.code : 1,
                                                   rc > 0 ? err.message : strerror(-rc),
                                                   err.additional_info);
                        exec_error_clear(&err);
                        p->n_scripts = i;
                        return res;
                }
                i++;
        }
        p->n_scripts = i;
        return NULL;
}

/* The result of a plan that its call log ended. */
static json_t *durable_end_result(PlanRun *p)
{
        const char *message;
        int code = runner_durable_end(p->durable, &message);

        return error_result(p->job, code, message, NULL);
}

static json_t *plan_run_body(PlanRun *p)
{
        RunnerJob *job = p->job;
        const Config *cfg = job->runner->cfg;
        const json_t *body = json_object_get(job->plan, "Body");
        BodyLimits lim = BODY_LIMITS_DEFAULT;
        BodyHost host = {.userdata = p, .call_script = plan_call_script, .cwd = plan_cwd};
        _cleanup_free_ const char **names = calloc(p->n_scripts + 1, sizeof(*names));
        BodyOutcome out = {0};
        json_t *res = NULL;
        char msg[256];
        int rc;

        if (!names)
                return NULL;
        if (!body)
                return error_result(job, 1, "'Body'", NULL);
        if (!pyjson_is_string(body)) {
                snprintf(msg, sizeof(msg), "'%s' object has no attribute 'expandtabs'",
                         pyrepr_type_name(body));
                return error_result(job, 1, msg, NULL);
        }
        for (size_t i = 0; i < p->n_scripts; i++)
                names[i] = p->scripts[i].name;
        lim.max_steps = cfg->agent.body_max_steps;
        lim.max_depth = cfg->agent.body_max_depth;
        lim.max_memory = cfg->agent.body_max_memory;
        lim.open_root = cfg->agent.body_open_root && *cfg->agent.body_open_root
                                ? cfg->agent.body_open_root
                                : NULL;
        lim.cancel = &job->cancel;
        if (p->durable) {
                host.call_script = plan_call_durable;
                host.draw = plan_draw;
        }

        rc = body_run(json_string_value(body), json_string_length(body),
                      json_object_get(job->plan, "Parameters"), names, p->n_scripts, &host, &lim,
                      &out);
        if (p->durable && (rc == -ECANCELED || rc >= 0) && runner_durable_finish(p->durable)) {
                /* The call log ended the plan (interrupted, diverged, a
                 * reboot refused), whatever the Body made of it. */
                body_outcome_clear(&out);
                return durable_end_result(p);
        }
        if (rc < 0)
                res = error_result(job, 1, strerror(-rc), NULL);
        else if (out.error_code == 0)
                rc = result_new_success(&res, job->source_id, out.value);
        else {
                log_warning(job->id, "the Body failed: %s: %s",
                            out.exc_type ? out.exc_type : "error", out.message ? out.message : "");
                res = error_result(job, out.error_code, out.message, out.additional_info);
        }
        body_outcome_clear(&out);
        return res;
}

/* A plan cut short by its time limit, by the agent stopping or by a
 * cancel reports that, whatever the Body made of the failed call. A cancel
 * keeps what the Body's error carried (the stopped script's output). */
static json_t *plan_cancelled_result(RunnerJob *job, const json_t *body_result)
{
        const json_t *info =
                json_object_get(json_object_get(body_result, "Body"), "AdditionalInfo");
        char msg[128];

        switch (atomic_load(&job->cancel)) {
        case RUNNER_CANCEL_REQUEST:
                if (json_integer_value(json_object_get(body_result, "ErrorCode")) == 0)
                        info = NULL;
                return error_result(job, RESULT_CODE_CANCELLED, job->cancel_message,
                                    json_is_object(info) ? info : NULL);
        case RUNNER_CANCEL_TIMEOUT:
                snprintf(msg, sizeof(msg), "Plan timed out after %u seconds", job->timeout);
                return error_result(job, RESULT_CODE_TIMEOUT, msg, NULL);
        case RUNNER_CANCEL_STOP:
                return error_result(job, RESULT_CODE_INTERRUPTED,
                                    "The agent stopped while the plan was running", NULL);
        default:
                return NULL;
        }
}

static json_t *plan_run(PlanRun *p)
{
        RunnerJob *job = p->job;
        FilesOptions fo = FILES_OPTIONS_DEFAULT;
        json_t *res;
        int rc;

        res = plan_make_executors(p);
        if (res)
                return res;
        fo.fetch_program = job->runner->fetcher;
        fo.set_owner = job->runner->set_owner;
        fo.owner_uid = job->runner->owner_uid;
        fo.owner_gid = job->runner->owner_gid;
        fo.plan_text = job->plan_text;
        rc = files_new(job->runner->storage, job->dir, job->plan, &p->procs, &fo, &p->files);
        if (rc < 0) {
                char msg[512];
                snprintf(msg, sizeof(msg),
                         "cannot create the plan's files directory in %s/files: %s",
                         job->runner->storage, strerror(-rc));
                return error_result(job, 1, msg, NULL);
        }
        job->cache_dir = strdup(files_cache_dir(p->files));
        if (!job->cache_dir)
                return error_result(job, 1, "out of memory", NULL);
        if (job->calls_dir) {
                rc = runner_durable_open(job->calls_dir, job->calls_key, job->runner->cfg,
                                         job->plan, job->id, &p->cwd, &p->durable);
                if (rc < 0) {
                        char msg[512];
                        snprintf(msg, sizeof(msg), "cannot open the plan's call log in %s: %s",
                                 job->calls_dir, strerror(-rc));
                        return error_result(job, 1, msg, NULL);
                }
                if (rc > 0)
                        return durable_end_result(p);
        }
        res = plan_run_body(p);
        if (runner_durable_rebooting(p->durable) &&
            atomic_load(&job->cancel) == RUNNER_CANCEL_STOP) {
                /* Stopped for the reboot the plan asked for: no result now;
                 * the plan resumes after the boot. */
                json_decref(res);
                job->suspended = true;
                return NULL;
        }
        /* The result stands from here unless a reason came before: a
         * cancel that comes later is told it is too late, so that none is
         * promised ErrorCode 107 that the result would not say. */
        if (!atomic_compare_exchange_strong(&job->cancel, &(int){RUNNER_CANCEL_NONE},
                                            RUNNER_CANCEL_LATE)) {
                json_t *cancelled = plan_cancelled_result(job, res);

                json_decref(res);
                res = cancelled;
        }
        return res;
}

void runner_plan_main(void *arg)
{
        RunnerJob *job = arg;
        Runner *r = job->runner;
        PlanRun p = {.job = job, .procs = {.userdata = job, .run = runner_proc_run}};
        json_t *res;

        log_info(job->id, "plan started");
        res = plan_run(&p);
        if (res && !json_object_get(res, "ReplyTo") && result_set_reply_to(res, job->reply_to) < 0)
                res = (json_decref(res), NULL);
        if (!res && !job->suspended)
                res = error_result(job, 1, "out of memory", NULL);
        if (job->suspended)
                log_info(job->id, "plan suspended for the reboot it asked for; it resumes at the "
                                  "agent's next start");
        else
                log_info(job->id, "plan finished: ErrorCode %lld",
                         res ? (long long)json_integer_value(json_object_get(res, "ErrorCode"))
                             : -1LL);

        /* The result goes first: removing the plan's files costs a disk
         * some milliseconds (each freed block), which the engine need not
         * wait for. The next plan's thread waits for it instead. */
        uv_mutex_lock(&r->lock);
        job->result = res;
        job->result_ready = true;
        uv_mutex_unlock(&r->lock);
        uv_async_send(&r->wake);

        p.files = files_free(p.files);
        for (size_t i = 0; i < p.n_scripts; i++) {
                exec_free(p.scripts[i].exec);
                free(p.scripts[i].path);
        }
        free(p.scripts);
        free(p.cwd);
        runner_durable_free(p.durable);

        uv_mutex_lock(&r->lock);
        job->thread_done = true;
        uv_mutex_unlock(&r->lock);
        uv_async_send(&r->wake);
}
