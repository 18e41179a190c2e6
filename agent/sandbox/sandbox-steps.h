/* The sandbox steps that need no separate program, shared by the helper
 * (muranoagent-sandbox, which links libc only) and by the agent, whose
 * child applies them itself between clone3() and execve() when the
 * configuration asks for nothing else (sandbox-direct.c). One code, so one
 * behaviour and one status text, whichever process runs it.
 *
 * Everything here but sandbox_identity_resolve() is async-signal-safe: no
 * malloc, no stdio, no locale, and credentials are changed with the raw
 * system calls, because glibc's set*id() wrappers signal every thread of
 * the process, and the child of a multithreaded agent has (shares or
 * copies) thread records whose threads are not its own. The steps write
 * only their own stack: the child may run in the agent's memory
 * (CLONE_VM, child/child-launch.c). A step that fails fills a
 * SandboxStepError: "what" is the step as the status line names it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "sandbox-protocol.h"

typedef struct SandboxStepError {
        char what[SANDBOX_STATUS_MAX]; /* "chdir /x", "rlimit nofile 64", ... */
        int err;                       /* errno, or 0 when "what" says it all */
} SandboxStepError;

/* The credentials --user and --group resolve to. */
typedef struct SandboxIdentity {
        bool set_uid;
        bool set_gid;
        uid_t uid;
        gid_t gid;
        gid_t *groups; /* owned: supplementary groups */
        int n_groups;
} SandboxIdentity;

/* One resource limit, soft and hard. */
typedef struct SandboxRlimit {
        int resource; /* RLIMIT_* */
        const char *name;
        rlim_t value;
} SandboxRlimit;

/* Look user and group up (NSS; not async-signal-safe): a user alone brings
 * its own group and, with a passwd entry, its supplementary groups; a group
 * alone keeps the uid with that one group. Either may be a number. Both NULL
 * set nothing. Returns 0, or -1 with *e filled; id->groups is then freed. */
int sandbox_identity_resolve(const char *user, const char *group, SandboxIdentity *id,
                             SandboxStepError *e);
void sandbox_identity_clear(SandboxIdentity *id);

/* Write value to the calling process's oom_score_adj: proc_fd is a
 * descriptor of a /proc (opened while it was there: a script may unmount
 * it later), or -1 to open /proc/self/oom_score_adj by path. proc_fd is
 * closed in either case. */
int sandbox_steps_oom_score_adj(int proc_fd, int value, SandboxStepError *e);

/* Each limit, then the core size 0. */
int sandbox_steps_rlimits(const SandboxRlimit *l, size_t n, SandboxStepError *e);

/* Groups, then the group id, then the user id: each step needs the
 * privilege that the next one gives up. */
int sandbox_steps_identity(const SandboxIdentity *id, SandboxStepError *e);

/* Drop the capabilities of mask (bit N = capability N) from the bounding
 * set, so that no execve() can give them back, not even to root; a
 * capability this kernel does not know is skipped. Needs CAP_SETPCAP, so it
 * comes before sandbox_steps_identity(). */
int sandbox_steps_caps_bound(uint64_t mask, SandboxStepError *e);

/* After sandbox_steps_identity(): drop mask from the effective, permitted
 * and inheritable sets too, and clear the ambient set, so that nothing
 * before the exec holds them either. */
int sandbox_steps_caps_drop(uint64_t mask, SandboxStepError *e);

int sandbox_steps_no_new_privs(SandboxStepError *e);

/* PR_SET_PDEATHSIG SIGKILL, then a check that the parent is still there:
 * getppid() == parent, or with alive_fd >= 0 (pid 1 of a namespace, whose
 * getppid() is 0) no end of file on that pipe yet. Credential changes clear
 * the setting, so this comes after sandbox_steps_identity(). */
int sandbox_steps_die_with_parent(pid_t parent, int alive_fd, SandboxStepError *e);

int sandbox_steps_chdir(const char *dir, SandboxStepError *e);

/* Move the calling process, which must have one thread, into each cgroup
 * directory dirs[i]: "0" written to its "tasks" (v1, the cheap way, see
 * sandbox-steps.c), or to its cgroup.procs where there is no "tasks" (v2);
 * "cgroup <dir>" on failure. */
int sandbox_steps_join_cgroups(const char *const *dirs, size_t n, SandboxStepError *e);

/* Fill e with "exec PROGRAM" and err. */
void sandbox_steps_exec_error(const char *program, int err, SandboxStepError *e);

/* The exit status for a failed exec: SANDBOX_EXIT_NOT_FOUND for ENOENT,
 * else SANDBOX_EXIT_CANNOT_EXEC. */
int sandbox_steps_exec_status(int err);

/* Write "muranoagent-sandbox: <what>[: <reason>]\n" (at most
 * SANDBOX_STATUS_MAX bytes) in one write to status_fd (when >= 0) and to
 * stderr, with SIGPIPE ignored, then _exit(code). */
__attribute__((noreturn)) void sandbox_steps_fail(int status_fd, int code,
                                                  const SandboxStepError *e);
