/* The contained floor's scripts (see bench-daemon-consumer.h): each runs
 * through the agent's own runner, runner_run_command(), as the agent runs a
 * plan's script with its default configuration (profile compatible,
 * cgroup = auto with the default memory and pids limits): a cgroup made
 * for the run, the child started inside it with clone3() and an audit
 * session of its own, the sandbox's steps (rlimits, oom_score_adj, the
 * clean environment) in the child or through muranoagent-sandbox where the
 * host needs the helper (cgroup v1), stdout and stderr captured, then the
 * cgroup killed and removed and /proc swept for the run's session. The
 * runner's log entries for each script go to stderr, as the agent's go to
 * its log. The command is the agent's for an Application script,
 * /bin/sh -c './"echo.sh" ' (agent/exec/exec-app.c: the reference's form,
 * one shell more than the floor's `sh ./echo.sh`), so that what the script
 * sees is what the agent gives it too. So the contained floor gives a
 * script what the agent gives it, and the difference between the two
 * floors is the price of that containment and of that shell.
 *
 * A run that was not contained stops the consumer (exit status 1): no
 * cgroup (none usable, or one that could not be made) or no audit session
 * (no audit in the kernel, a loginuid that may not be changed). Figures
 * from a floor that contains less than the agent would flatter it. Run it
 * as root, as the agent runs. muranoagent-sandbox is found as the agent
 * finds it ($MURANOAGENT_SANDBOX first, which bench-daemon sets to the
 * helper beside the agent it measures). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "bench-daemon-consumer.h"
#include "config/config.h"
#include "log/log.h"
#include "runner/runner.h"
#include "util/macro.h"

/* Weak: the compatible floor, which runs its scripts as this file does,
 * has a name of its own. */
__attribute__((weak)) const char consumer_name[] = "bench-daemon-contained";

static uv_loop_t loop;
static Config *cfg;
static Runner *runner;
static char cwd[PATH_MAX];

int consumer_script_setup(void)
{
        _cleanup_free_ char *warning = NULL, *error = NULL;
        int rc;

        if (!getcwd(cwd, sizeof(cwd))) {
                fprintf(stderr, "%s: cannot tell the current directory: %m\n", consumer_name);
                return -1;
        }
        rc = log_open(NULL, false);
        if (rc == 0)
                rc = uv_loop_init(&loop) == 0 ? 0 : -ENOMEM;
        if (rc == 0)
                rc = config_new_default(&cfg);
        if (rc == 0)
                rc = runner_new(&loop, cfg, cwd, &runner, &warning, &error);
        if (warning)
                log_warning(NULL, "%s", warning);
        if (rc != 0) {
                fprintf(stderr, "%s: cannot prepare the runner: %s\n", consumer_name,
                        rc == RUNNER_UNAVAILABLE && error ? error : strerror(-rc));
                return -1;
        }
        return 0;
}

int contained_run(const char *id, const char *dir, const char *script, char *out, size_t size)
{
        char command[NAME_MAX + 8], what[NAME_MAX + 16];
        const char *argv[] = {"/bin/sh", "-c", command, NULL};
        ProcRequest req = {.argv = argv,
                           .cwd = dir,
                           .capture_stdout = true,
                           .capture_stderr = true,
                           .what = what};
        _cleanup_(proc_result_clear) ProcResult res = {0};
        RunnerContainment held = {0};
        size_t len;
        int rc;

        /* A Name is one file name (the compatible floor's checks). */
        if (strlen(script) > NAME_MAX)
                return -1;
        snprintf(command, sizeof(command), "./\"%s\" ", script);
        snprintf(what, sizeof(what), "script %s", script);
        rc = runner_run_command(runner, id, &req, &res, &held);
        if (rc < 0) {
                fprintf(stderr, "%s: %s: cannot run %s: %s\n", consumer_name, id, what,
                        strerror(-rc));
                return CONSUMER_SCRIPT_FATAL;
        }
        if (res.failure_kind == PROC_FAIL_SPAWN || !held.cgroup || !held.session) {
                fprintf(stderr, "%s: %s: %s was not contained as the agent contains it: %s\n",
                        consumer_name, id, what,
                        res.failure_kind == PROC_FAIL_SPAWN ? res.failure
                        : !held.cgroup                      ? "no cgroup"
                                                            : "no audit session of its own");
                return CONSUMER_SCRIPT_FATAL;
        }
        if (res.failure || res.exit_code != 0 || !res.out)
                return -1;
        len = res.out_len < size - 1 ? res.out_len : size - 1;
        memcpy(out, res.out, len);
        out[len] = '\0';
        return 0;
}

int consumer_script_run(const char *id, const char *script, char *out, size_t size)
{
        return contained_run(id, cwd, script, out, size);
}

void consumer_script_cleanup(void)
{
        runner_free(runner);
        runner = NULL;
        /* The runner's handles close on the loop. */
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
        cfg = config_free(cfg);
        log_close();
}
