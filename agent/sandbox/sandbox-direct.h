/* The sandbox without the helper program: for a run that needs no
 * namespace and no cgroup to join (sandbox_uses_helper() false), the agent's
 * own child applies the helper's remaining steps between clone3() and
 * execve(), in the helper's order and with the helper's code
 * (sandbox-steps.c): rlimits and the core size 0, the supplementary groups,
 * group and user, no_new_privs, the parent-death signal, the working
 * directory; then it executes the command with the clean environment. A
 * step that fails writes the helper's status line
 * ("muranoagent-sandbox: <step>: <reason>") to the status descriptor and to
 * stderr and exits SANDBOX_EXIT_SETUP; a command that cannot be executed
 * exits 126 or 127 with an "exec" line; the status descriptor is closed at
 * the exec. So the agent reads the outcome exactly as from the helper.
 *
 * sandbox_direct_new() does everything that needs memory or NSS (the user
 * and group lookups) in the agent, before the clone; the two hooks then
 * only make async-signal-safe calls on that memory.
 *
 * The same hook also carries the shortcut that runs an Application script
 * without /bin/sh when the shell would only have started it
 * (sandbox_direct_shortcut(), docs/executors.md "Direct execution"). */
#pragma once

#include "config/config.h"
#include "sandbox/sandbox.h"
#include "util/macro.h"

typedef struct SandboxDirect SandboxDirect;

/* The steps of one run, from the same settings and run facts as
 * sandbox_build(); status_fd is the descriptor number the child has. A
 * lookup that fails (no such user) is not an error here: the child reports
 * it with the helper's line, as the helper would. Returns 0 or -ENOMEM. */
int sandbox_direct_new(const struct ConfigSandbox *cfg, const SandboxRun *run, SandboxDirect **ret);

SandboxDirect *sandbox_direct_free(SandboxDirect *d);
DEFINE_CLEANUP(SandboxDirect, sandbox_direct_free)

/* For the sandbox turned off: no steps at all, only the shortcut below
 * (the pre_exec hook alone: the agent's child reports a failed exec of the
 * command itself). */
int sandbox_direct_new_plain(SandboxDirect **ret);

/* sandbox_direct_shortcut() and sandbox_direct_dash_environment(): the
 * environment is not one whose exported form dash is sure to leave as
 * computed here; run the command through the shell. */
#define SANDBOX_DIRECT_NO_SHORTCUT 1

/* The environment dash exports to what it executes, when it starts with
 * envp in a directory without an inherited PWD: each entry as it is, in
 * dash's order (its variable table: 39 buckets by a hash of the name, PATH
 * first in its bucket as one of dash's own variables, the rest in envp's
 * order), with PWD=<pwd> added last in its bucket. Returns 0 with a new
 * NULL-terminated vector (its strings borrowed from envp, but PWD's, which
 * is ret's last allocation: free the vector with sandbox_direct_env_free),
 * SANDBOX_DIRECT_NO_SHORTCUT when envp holds an entry that is not NAME=value
 * with a portable name, a name twice, or one dash sets or reads itself
 * (PWD, PPID, IFS, OPTIND, LINENO, MAIL, MAILPATH, PS1, PS2, PS4, TERM,
 * HISTSIZE, ATTY), or -ENOMEM. */
int sandbox_direct_dash_environment(char *const *envp, const char *pwd, char ***ret);
void sandbox_direct_env_free(char **env);

/* Arm the shortcut for a command that is /bin/sh -c running argv (argv[0]
 * a path) and nothing else. In the child, after the steps, argv is started
 * with vfork() and the environment dash would give it in pwd (the working
 * directory's physical path), and the child takes dash's place: it waits
 * for the program and exits as dash would (its status, or 128 + N and
 * dash's line on stderr for a death by signal N). Only when that execve()
 * fails does the child go on to the command, /bin/sh -c, with envp
 * unchanged, which reports the failure in its own words. Returns 0,
 * SANDBOX_DIRECT_NO_SHORTCUT (nothing armed) or -ENOMEM. */
int sandbox_direct_shortcut(SandboxDirect *d, const char *const *argv, char *const *envp,
                            const char *pwd);

/* The hooks for ChildSpec.pre_exec and exec_failed, with d as exec_data. */
void sandbox_direct_pre_exec(void *d);
void sandbox_direct_exec_failed(void *d, int err);
