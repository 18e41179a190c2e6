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
 * only make async-signal-safe calls on that memory. */
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

/* The hooks for ChildSpec.pre_exec and exec_failed, with d as exec_data. */
void sandbox_direct_pre_exec(void *d);
void sandbox_direct_exec_failed(void *d, int err);
