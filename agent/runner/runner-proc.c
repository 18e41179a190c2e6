/* The loop-thread half of a script call: one ProcRequest run as a child in
 * the sandbox, with its cgroup, its time limit and its status pipe, and its
 * outcome sorted into a ProcResult (see runner.h for the design). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "child/child.h"
#include "log/log.h"
#include "runner/runner-internal.h"
#include "sandbox/sandbox-direct.h"
#include "sandbox/sandbox.h"
#include "util/strbuf.h"

extern char **environ;

/* How long removing a run's cgroup may block the loop. SIGKILLed processes
 * leave within a millisecond; this bound only matters for a stuck kernel. */
#define CGROUP_REMOVE_MS 500

static void set_failure(ProcResult *res, int kind, const char *fmt, ...) _printf_(3, 4);
static void set_failure(ProcResult *res, int kind, const char *fmt, ...)
{
        va_list ap;
        char *text = NULL;

        va_start(ap, fmt);
        if (vasprintf(&text, fmt, ap) < 0)
                text = NULL;
        va_end(ap);
        free(res->failure);
        res->failure = text ? text : strdup("out of memory");
        res->failure_kind = kind;
}

/* What the cgroup's limits did to the run, as one sentence ("3 fork(s)
 * refused at pids_max=4096"), or NULL when they did nothing (or on
 * -ENOMEM). */
static char *describe_events(const RunnerJob *job, const CgroupEvents *ev)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        uint64_t memory_max;
        unsigned pids_max;
        char *text = NULL;
        int r = 0;

        cgroup_limits(job->runner->cgroup, &memory_max, &pids_max);
        if (ev->oom_kills > 0)
                r = strbuf_printf(&b, "%llu process(es) killed at memory_max=%llu",
                                  (unsigned long long)ev->oom_kills,
                                  (unsigned long long)memory_max);
        if (r >= 0 && ev->pids_max > 0)
                r = strbuf_printf(&b, "%s%llu fork(s) refused at pids_max=%u", b.len ? "; " : "",
                                  (unsigned long long)ev->pids_max, pids_max);
        if (r < 0 || b.len == 0 || strbuf_steal(&b, &text) < 0)
                return NULL;
        return text;
}

/* Kill what is left in the run's cgroup and remove it (again: a call after
 * the tree kill finds nothing to do), then say what its limits did, once.
 * The counts are read when the cgroup has emptied (cgroup_run_events()
 * after cgroup_run_kill_and_remove()), so that a fork bomb whose shell
 * exited at once is counted whole. *ret gets the sentence of
 * describe_events(), owned, or NULL. */
static int kill_run_cgroup(RunnerJob *job, char **ret)
{
        CgroupEvents ev = {0};
        int r;

        *ret = NULL;
        if (!job->cg_run)
                return 0;
        r = cgroup_run_kill_and_remove(job->cg_run, CGROUP_REMOVE_MS);
        if (cgroup_run_events(job->cg_run, &ev) != 0)
                return r;
        *ret = describe_events(job, &ev);
        if (*ret && !job->cg_events_logged)
                log_warning(job->id, "%s: %s", job->req->what, *ret);
        job->cg_events_logged = true;
        return r;
}

/* Kill what still carries the run's audit session: a process that left
 * its cgroup (root may write another cgroup.procs) or ran without one. */
static void kill_run_session(RunnerJob *job)
{
        int n;

        if (job->session == CHILD_SESSION_NONE)
                return;
        n = child_session_kill(job->runner->proc_fd, job->session);
        if (n > 0)
                log_warning(job->id,
                            "%s: %d process(es) of the run outside its cgroup killed "
                            "(audit session %u)",
                            job->req->what, n, (unsigned)job->session);
        else if (n < 0)
                log_warning(job->id, "%s: cannot look for the run's processes: %s", job->req->what,
                            strerror(-n));
}

/* The cgroup kills whatever left the process group (a daemonised
 * grandchild), the audit session what left the cgroup. Neither has a
 * SIGTERM of its own, so they join in at SIGKILL. */
static void runner_kill_tree(void *userdata, int sig)
{
        RunnerJob *job = userdata;
        char *events = NULL;

        if (sig != SIGKILL)
                return;
        if (job->cg_run) {
                (void)kill_run_cgroup(job, &events);
                free(events);
        }
        kill_run_session(job);
}

/* The helper's status line, if it wrote one: the sandbox could not be
 * applied. A script may exit 125 itself, so only the line counts. */
static char *read_status_line(int fd)
{
        char buf[512];
        ssize_t n;

        if (fd < 0)
                return NULL;
        n = read(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return NULL;
        buf[n] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        return strdup(buf);
}

/* *ret_events (may be NULL): what the cgroup's limits did, as
 * kill_run_cgroup() says it. */
static void release_run(RunnerJob *job, char **ret_events)
{
        char *events = NULL;

        if (job->status_fd >= 0) {
                close(job->status_fd);
                job->status_fd = -1;
        }
        if (job->cg_run) {
                if (kill_run_cgroup(job, &events) != 0)
                        log_warning(job->id, "%s: its cgroup could not be removed", job->req->what);
                job->cg_run = cgroup_run_free(job->cg_run);
        }
        kill_run_session(job);
        job->session = CHILD_SESSION_NONE;
        if (ret_events)
                *ret_events = events;
        else
                free(events);
}

static void take_output(ChildOutput *o, char **ret, size_t *ret_len)
{
        *ret = o->data;
        *ret_len = o->len;
        o->data = NULL;
}

static void runner_on_child_done(Child *c, ChildResult *cr, void *userdata)
{
        RunnerJob *job = userdata;
        Runner *r = job->runner;
        ProcResult *res = job->res;
        _cleanup_free_ char *status = read_status_line(job->status_fd);
        _cleanup_free_ char *events = NULL;
        int cancel = atomic_load(&job->cancel);
        pid_t group = child_get_pid(c);

        job->child = NULL;
        /* Whatever the script left running in its process group dies with
         * it, as whatever it left in its cgroup does (release_run): no
         * plan leaves orphans behind, cgroup or not (docs/compatibility.md).
         * The group's leader was reaped just now, and a process group lives
         * on only while it has members, so the id names the script's own. */
        if (group > 0)
                kill(-group, SIGKILL);
        res->exit_code = child_result_exit_code(cr);
        take_output(&cr->out, &res->out, &res->out_len);
        take_output(&cr->err, &res->err, &res->err_len);
        res->truncated = cr->out.truncated || cr->err.truncated;

        if (cr->spawn_error < 0)
                set_failure(res, PROC_FAIL_SPAWN, "cannot start %s: %s", job->req->what,
                            strerror(-cr->spawn_error));
        else if (status)
                set_failure(res, PROC_FAIL_SPAWN, "cannot sandbox %s: %s", job->req->what,
                            status + (strncmp(status, SANDBOX_STATUS_PREFIX,
                                              strlen(SANDBOX_STATUS_PREFIX)) == 0
                                              ? strlen(SANDBOX_STATUS_PREFIX)
                                              : 0));
        else if (cr->timed_out)
                set_failure(res, PROC_FAIL_TIMEOUT, "%s timed out after %u seconds", job->req->what,
                            r->cfg->agent.script_timeout);
        else if (cr->cancelled && cancel == RUNNER_CANCEL_TIMEOUT)
                set_failure(res, PROC_FAIL_TIMEOUT,
                            "%s was killed: the plan timed out after %u seconds", job->req->what,
                            job->timeout);
        else if (cr->cancelled && cancel == RUNNER_CANCEL_REQUEST)
                set_failure(res, PROC_FAIL_STOPPED, "%s was killed: the plan was cancelled",
                            job->req->what);
        else if (cr->cancelled)
                set_failure(res, PROC_FAIL_STOPPED, "%s was killed: the agent is stopping",
                            job->req->what);
        if (cr->out.cut || cr->err.cut)
                log_info(job->id,
                         "%s: a background process kept its output open; output after "
                         "the exit was not read",
                         job->req->what);
        if (cr->error < 0)
                log_warning(job->id, "%s: output could not be kept whole: %s", job->req->what,
                            strerror(-cr->error));
        release_run(job, &events);
        /* A limit that stopped part of the run is why it went wrong, more
         * than the exit code it left (a fork bomb's shell exits 0). */
        if (events && !res->failure)
                set_failure(res, PROC_FAIL_LIMIT, "%s reached a limit of its sandbox: %s",
                            job->req->what, events);
        log_info(job->id, "%s finished: exit code %d%s%s", job->req->what, res->exit_code,
                 res->failure ? ", " : "", res->failure ? res->failure : "");
        if (r->observer.finished)
                r->observer.finished(r->observer_userdata, job->req->what, res->exit_code,
                                     res->failure);
        runner_request_finish(job, 0);
}

/* The run's cgroup v2 directory, opened for child_spawn() to start the
 * script inside it (no move afterwards, so no RCU grace period to wait
 * for), or -1: no cgroup, v1 (joined by the helper, one per controller), a
 * kernel that cannot, or a directory that does not open (the helper then
 * joins it and reports what is wrong). */
static int open_spawn_cgroup(const RunnerJob *job)
{
        /* The method is the process's, so the note about it is too. */
        static bool fallback_logged;
        const char *const *dirs;
        size_t n = 0;

        if (!job->cg_run || cgroup_version(job->runner->cgroup) != CGROUP_VERSION_2)
                return -1;
        if (child_spawn_method() != CHILD_SPAWN_CLONE3_CGROUP) {
                if (!fallback_logged)
                        log_info(job->id, "scripts cannot be started inside their cgroup "
                                          "(clone3 with CLONE_INTO_CGROUP is refused); the "
                                          "sandbox helper joins each run's cgroup instead");
                fallback_logged = true;
                return -1;
        }
        dirs = cgroup_run_dirs(job->cg_run, &n);
        if (n != 1)
                return -1;
        return open(dirs[0], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* The session the child took, or CHILD_SESSION_NONE when it kept the
 * agent's (no audit in the kernel, a loginuid it may not change, no
 * clone3): said once, as the method is the process's. */
static uint32_t run_session(const RunnerJob *job)
{
        static bool none_logged;
        uint32_t s = child_session_of(job->runner->proc_fd, child_get_pid(job->child));

        if (s != CHILD_SESSION_NONE && s != job->runner->own_session)
                return s;
        if (!none_logged)
                log_info(job->id, "scripts cannot be given an audit session of their own; a "
                                  "process that leaves its run's cgroup is not found after the "
                                  "run");
        none_logged = true;
        return CHILD_SESSION_NONE;
}

/* Build the command of run and spawn it, with the sandbox's steps as the
 * child's hooks when no helper is needed. Returns child_spawn()'s answer
 * (-EOPNOTSUPP: the kernel refused what the spec needs), or the builder's
 * error. */
static int spawn_built(RunnerJob *job, const SandboxRun *run, int cgroup_fd, int status_w)
{
        Runner *r = job->runner;
        const ProcRequest *req = job->req;
        const struct ConfigSandbox *sb = &r->cfg->sandbox;
        _cleanup_(sandbox_command_freep) SandboxCommand *cmd = NULL;
        _cleanup_(sandbox_direct_freep) SandboxDirect *direct = NULL;
        ChildSpec spec = {0};
        int extra[2], rc;

        rc = sandbox_build(sb, run, &cmd);
        if (rc == 0 && cmd->in_process)
                rc = sandbox_direct_new(sb, run, &direct);
        if (rc < 0)
                return rc;
        spec.argv = cmd->argv;
        spec.envp = cmd->envp;
        spec.cwd = sb->enabled ? NULL : req->cwd;
        spec.capture_stdout = req->capture_stdout;
        spec.capture_stderr = req->capture_stderr;
        spec.passthrough_fd = STDERR_FILENO;
        extra[0] = status_w;
        extra[1] = r->proc_fd;
        spec.extra_fds = sb->enabled ? extra : NULL;
        spec.n_extra_fds = !sb->enabled ? 0 : cmd->in_process && run->oom_score_adj ? 2 : 1;
        spec.output_limit = r->cfg->agent.output_limit;
        spec.timeout_ms = (uint64_t)r->cfg->agent.script_timeout * 1000;
        spec.kill_grace_ms = (uint64_t)r->cfg->agent.kill_grace * 1000;
        spec.kill_tree = runner_kill_tree;
        spec.kill_userdata = job;
        spec.cgroup_fd = cgroup_fd;
        spec.audit_proc_fd = sb->enabled ? r->proc_fd : -1;
        spec.audit_uid = r->audit_uid;
        if (direct) {
                /* Read by the child only, and only until child_spawn()
                 * returns: the program runs by then, or never will. */
                spec.pre_exec = sandbox_direct_pre_exec;
                spec.exec_failed = sandbox_direct_exec_failed;
                spec.exec_data = direct;
        }
        spec.on_output = r->observer.output;
        spec.output_userdata = r->observer_userdata;
        rc = child_spawn(r->loop, &spec, runner_on_child_done, job, &job->child);
        if (rc == 0 && spec.audit_proc_fd >= 0)
                job->session = run_session(job);
        if (rc == 0 && r->observer.started)
                r->observer.started(r->observer_userdata, req->what, child_get_pid(job->child));
        return rc;
}

/* Build the command through the sandbox builder and spawn it. Returns 0
 * when the child runs (its done callback finishes the request), or fills
 * the failure itself and returns a negative errno. */
static int runner_proc_spawn(RunnerJob *job)
{
        Runner *r = job->runner;
        const ProcRequest *req = job->req;
        const struct ConfigSandbox *sb = &r->cfg->sandbox;
        _cleanup_free_ char *summary = NULL;
        const char *writable[1];
        int status_pipe[2] = {-1, -1};
        _cleanup_close_ int cgroup_fd = -1;
        SandboxRun run = {0};
        int rc;

        job->cg_events_logged = false;
        job->session = CHILD_SESSION_NONE;
        if (r->cgroup && cgroup_version(r->cgroup) != CGROUP_VERSION_NONE) {
                rc = cgroup_run_new(r->cgroup, job->dir, &job->cg_run);
                if (rc < 0) {
                        set_failure(job->res, PROC_FAIL_SPAWN, "cannot create a cgroup for %s: %s",
                                    req->what, strerror(-rc));
                        return rc;
                }
        }
        writable[0] = job->cache_dir;

        if (sb->enabled && pipe2(status_pipe, O_CLOEXEC) < 0) {
                rc = -errno;
                set_failure(job->res, PROC_FAIL_SPAWN, "cannot start %s: %s", req->what,
                            strerror(errno));
                return rc;
        }
        run.helper = r->helper;
        run.workdir = req->cwd;
        run.writable = writable;
        run.n_writable = job->cache_dir ? 1 : 0;
        run.agent_paths = (const char *const *)r->agent_paths;
        run.n_agent_paths = r->n_agent_paths;
        run.cgroups = job->cg_run ? cgroup_run_dirs(job->cg_run, &run.n_cgroups) : NULL;
        run.agent_env = (const char *const *)environ;
        run.home = r->home;
        run.status_fd = sb->enabled ? 3 : -1; /* extra_fds[0] arrives as fd 3 */
        run.oom_score_adj = r->proc_fd >= 0;
        run.proc_fd = 4; /* extra_fds[1], given to in-process children only */
        run.command = req->argv;
        run.keep_network = req->network;

        /* Each -EOPNOTSUPP lowers child_spawn_method() for good (a cgroup
         * at the spawn, then clone3 itself), so this ends after at most two
         * refusals, and only the agent's first script ever sees one. */
        cgroup_fd = open_spawn_cgroup(job);
        for (int attempt = 0;; attempt++) {
                run.cgroups_at_spawn = cgroup_fd >= 0;
                run.force_helper = child_spawn_method() == CHILD_SPAWN_FORK;
                rc = spawn_built(job, &run, cgroup_fd, status_pipe[1]);
                if (rc != -EOPNOTSUPP || attempt == 2)
                        break;
                closep(&cgroup_fd);
                cgroup_fd = open_spawn_cgroup(job);
        }
        if (sandbox_describe(sb, &run, &summary) == 0)
                log_info(job->id, "%s: %s", req->what, summary);
        /* The child holds the write end now; ours must go, or reading the
         * status line would wait for ourselves. */
        if (status_pipe[1] >= 0)
                close(status_pipe[1]);
        job->status_fd = status_pipe[0];
        if (rc < 0)
                set_failure(job->res, PROC_FAIL_SPAWN, "cannot start %s: %s", req->what,
                            strerror(-rc));
        return rc;
}

void runner_proc_start(RunnerJob *job)
{
        int cancel = atomic_load(&job->cancel);

        *job->res = (ProcResult){0};
        if (cancel == RUNNER_CANCEL_TIMEOUT) {
                set_failure(job->res, PROC_FAIL_TIMEOUT, "%s was not started: the plan timed out",
                            job->req->what);
                runner_request_finish(job, 0);
        } else if (cancel == RUNNER_CANCEL_STOP) {
                set_failure(job->res, PROC_FAIL_STOPPED,
                            "%s was not started: the agent is stopping", job->req->what);
                runner_request_finish(job, 0);
        } else if (cancel == RUNNER_CANCEL_REQUEST) {
                set_failure(job->res, PROC_FAIL_STOPPED,
                            "%s was not started: the plan was cancelled", job->req->what);
                runner_request_finish(job, 0);
        } else if (runner_proc_spawn(job) < 0) {
                log_error(job->id, "%s", job->res->failure);
                release_run(job, NULL);
                runner_request_finish(job, 0);
        }
}

void runner_proc_cancel(RunnerJob *job)
{
        if (job->child)
                child_cancel(job->child);
}
