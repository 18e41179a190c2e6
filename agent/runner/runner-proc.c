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

/* Say what the cgroup's limits did to the run, once: before the cgroup is
 * removed, which happens either at the tree kill or after the exit. */
static void log_run_events(RunnerJob *job)
{
        const struct ConfigSandbox *sb = &job->runner->cfg->sandbox;
        CgroupEvents ev = {0};

        if (!job->cg_run || job->cg_events_logged || cgroup_run_events(job->cg_run, &ev) != 0)
                return;
        job->cg_events_logged = true;
        if (ev.oom_kills > 0)
                log_warning(job->id, "%s: %llu process(es) killed at memory_max=%llu",
                            job->req->what, (unsigned long long)ev.oom_kills,
                            (unsigned long long)sb->memory_max);
        if (ev.pids_max > 0)
                log_warning(job->id, "%s: %llu fork(s) refused at pids_max=%u", job->req->what,
                            (unsigned long long)ev.pids_max, sb->pids_max);
}

/* The cgroup kills whatever left the process group (a daemonised
 * grandchild). It has no SIGTERM of its own, so it joins in at SIGKILL. */
static void runner_kill_tree(void *userdata, int sig)
{
        RunnerJob *job = userdata;

        if (sig == SIGKILL && job->cg_run) {
                log_run_events(job);
                cgroup_run_kill_and_remove(job->cg_run, CGROUP_REMOVE_MS);
        }
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

static void release_run(RunnerJob *job)
{
        if (job->status_fd >= 0) {
                close(job->status_fd);
                job->status_fd = -1;
        }
        if (job->cg_run) {
                log_run_events(job);
                if (cgroup_run_kill_and_remove(job->cg_run, CGROUP_REMOVE_MS) != 0)
                        log_warning(job->id, "%s: its cgroup could not be removed", job->req->what);
                job->cg_run = cgroup_run_free(job->cg_run);
        }
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
        log_info(job->id, "%s finished: exit code %d%s%s", job->req->what, res->exit_code,
                 res->failure ? ", " : "", res->failure ? res->failure : "");
        release_run(job);
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
        if (direct) {
                /* Read by the child only, and only until child_spawn()
                 * returns: the program runs by then, or never will. */
                spec.pre_exec = sandbox_direct_pre_exec;
                spec.exec_failed = sandbox_direct_exec_failed;
                spec.exec_data = direct;
        }
        return child_spawn(r->loop, &spec, runner_on_child_done, job, &job->child);
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
        if (r->cgroup && cgroup_version(r->cgroup) != CGROUP_VERSION_NONE) {
                rc = cgroup_run_new(r->cgroup, job->id, &job->cg_run);
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
        } else if (runner_proc_spawn(job) < 0) {
                log_error(job->id, "%s", job->res->failure);
                release_run(job);
                runner_request_finish(job, 0);
        }
}

void runner_proc_cancel(RunnerJob *job)
{
        if (job->child)
                child_cancel(job->child);
}
