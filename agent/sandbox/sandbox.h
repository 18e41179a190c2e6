/* The sandbox builder: from the [sandbox] settings and the facts of one run,
 * the command line that runs a script through muranoagent-sandbox
 * (sandbox-helper.c), the script's clean environment, and a line for the log
 * saying which features apply. The builder is pure: it makes no system call,
 * so tests check its exact output without root. The two lookups that do
 * touch the system (where the helper is, a user's home) are at the end of
 * this header and live in sandbox-system.c. docs/sandbox.md has the rest. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "config/config.h"
#include "sandbox/sandbox-protocol.h"
#include "util/macro.h"

/* PATH for scripts when the agent's environment has none to pass through:
 * Debian's default for root. */
#define SANDBOX_DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
/* LANG for scripts when the agent's environment has none to pass through. */
#define SANDBOX_DEFAULT_LANG "C.UTF-8"
/* HOME for scripts when the caller gives none. */
#define SANDBOX_DEFAULT_HOME "/root"

/* One run. Every pointer is borrowed for the duration of the call. */
typedef struct SandboxRun {
        const char *helper;          /* path of muranoagent-sandbox, from sandbox_helper_path() */
        const char *workdir;         /* the script's working directory; NULL = inherit */
        const char *const *writable; /* directories the script may write when the mount
                                      * namespace is on (the workdir always may) */
        size_t n_writable;
        const char *const *agent_paths; /* the agent's storage, config and log files, hidden
                                         * from the script with hide_agent */
        size_t n_agent_paths;
        const char *const *cgroups; /* cgroup directories to join, from cgroup_run_dirs() */
        size_t n_cgroups;
        bool cgroups_at_spawn;        /* the spawn starts the helper inside cgroups[] already
                                       * (clone3 with CLONE_INTO_CGROUP): no --cgroup */
        const char *const *agent_env; /* the agent's environ, NULL-terminated; NULL = empty */
        const char *home;             /* HOME for the script; NULL = SANDBOX_DEFAULT_HOME */
        int status_fd;                /* where the helper writes its status line; -1 = none */
        bool oom_score_adj;           /* start the script at SANDBOX_OOM_SCORE_ADJ */
        int proc_fd;                  /* in process: the child's descriptor of /proc for that
                                       * (closed before the exec); 0 = open /proc by path */
        bool force_helper;            /* use the helper even where the in-process path would do */
        bool keep_network;            /* the command needs the network: no network namespace
                                       * (the agent's downloads of plan files) */
        const char *const *command;   /* program and arguments, NULL-terminated, not empty */
} SandboxRun;

/* What to execute: argv[0] is the program (the helper, or with the sandbox
 * off the command itself), and envp its whole environment. */
typedef struct SandboxCommand {
        char **argv;     /* owned, NULL-terminated */
        char **envp;     /* owned, NULL-terminated */
        bool in_process; /* no helper: argv is the command and envp its clean environment,
                          * and the agent's child applies the steps itself
                          * (sandbox_direct_new() in sandbox-direct.h) */
} SandboxCommand;

/* Whether the run needs the helper as a separate program: a namespace or a
 * mount option (hide_agent, hide_paths, protect_kernel), a cgroup to join (v1, or v2 on a kernel
 * that cannot start a process inside it), or run->force_helper. Everything else (rlimits,
 * no_new_privs, user and group, environment, working directory, the status
 * line) the agent's child applies itself, with the same code
 * (sandbox-steps.c). False when the sandbox is off. */
bool sandbox_uses_helper(const struct ConfigSandbox *cfg, const SandboxRun *run);

/* Build the command for one run. With cfg->enabled and
 * sandbox_uses_helper() the result is
 *   helper --die-with-parent [--status-fd N] [--cgroup DIR]... [--unshare-*]...
 *   [[--private-tmp --read-only /] --writable DIR...] [--mask PATH]... [--protect-kernel]
 *   [--rlimit-* N]... [--drop-capabilities MASK] [--user U --group G] [--no-new-privs]
 *   [--chdir DIR] --env NAME=VALUE... -- command...
 * with an empty envp: the script's environment travels in --env, computed by
 * sandbox_environment(). --user and --group are left out when both name
 * root: the agent runs as root, so the script keeps its identity, as in the
 * reference. --cgroup is left out when run->cgroups_at_spawn says the
 * agent started the helper inside the run's cgroup. With cfg->enabled but
 * no need for the helper, argv is the command, envp the clean environment
 * and in_process is set. Without cfg->enabled the command is run as the
 * reference runs it: argv is the command and envp the agent's whole environment. The
 * masks are run->agent_paths (with cfg->hide_agent), then cfg->hide_paths;
 * without mount_namespace they still go to the helper, which refuses them:
 * a protection asked for is never dropped quietly. Returns 0 or
 * -ENOMEM, or -EINVAL when run->command or run->helper is missing. *ret is written only on success.
 */
int sandbox_build(const struct ConfigSandbox *cfg, const SandboxRun *run, SandboxCommand **ret);

SandboxCommand *sandbox_command_free(SandboxCommand *c);
DEFINE_CLEANUP(SandboxCommand, sandbox_command_free)

/* The script's clean environment, NULL-terminated, in this order: each name
 * of cfg->env_passthrough that agent_env has, with its value; then PATH,
 * HOME and LANG with the defaults above when not already there. Nothing else
 * of the agent's environment reaches a script. Returns 0 or -ENOMEM. */
int sandbox_environment(const struct ConfigSandbox *cfg, const char *const *agent_env,
                        const char *home, char ***ret);

/* One line for the log naming the features sandbox_build() applies, and
 * which path applies them, such as "sandbox: user=root group=root
 * no_new_privs rlimits=nofile:1024,core:0 namespaces=mount,pid
 * mounts=read-only:/,private-tmp,writable:2 cgroups=2 env=PATH,HOME,LANG
 * path=helper" (or "path=in-process"). Environment values are never shown: a proxy setting may
 * hold a password. Returns 0 or -ENOMEM. */
int sandbox_describe(const struct ConfigSandbox *cfg, const SandboxRun *run, char **ret);

/* The path of muranoagent-sandbox: $MURANOAGENT_SANDBOX when set (and then
 * nothing else), else the first executable of
 * <dir of /proc/self/exe>/sandbox/muranoagent-sandbox (the build tree),
 * <dir of /proc/self/exe>/muranoagent-sandbox and
 * <libexecdir>/muranoagent/muranoagent-sandbox. Returns 0, -ENOENT when none
 * is executable (or the errno of access() for $MURANOAGENT_SANDBOX), or
 * -ENOMEM. */
int sandbox_helper_path(char **ret);

/* The home directory of user (a name or a number) from the passwd database.
 * Returns 0, -ENOENT when there is no such user, or a negative errno. */
int sandbox_user_home(const char *user, char **ret);

/* Whether the user and group scripts run as (cfg->user and group, as
 * sandbox_build() applies them: root:root changes nothing and gives 0) may
 * read path, by its owner, group and mode bits (the directories above it
 * are not considered). Returns 1, 0, or a negative errno (-ENOENT also for
 * a user or group that does not exist). */
int sandbox_user_may_read(const struct ConfigSandbox *cfg, const char *path);
