/* Starting one program with clone3(), for child.c: with CLONE_VM |
 * CLONE_VFORK on a stack of its own where the build has the trampoline
 * (child-clone-vm.h), as a fork elsewhere. The parent prepares everything
 * that needs memory (the PATH candidates, the argument vector for the
 * ENOEXEC fallback) before cloning, so that the child, which shares or
 * copies a multithreaded process, only makes system calls until execve():
 * no malloc, no stdio, no lock that another thread may hold.
 *
 * What the child does, in this order: a new session; stdin, stdout, stderr
 * and the extra descriptors put in place (a source of -1 is /dev/null);
 * every other descriptor closed (close_range(), so nothing of the agent
 * reaches the program, inherited or not, and the child holds none of the
 * agent's files while it runs the steps below); the working directory;
 * every signal's disposition back to the default and an empty signal mask;
 * the caller's pre_exec hook; then the program. A failure of any step before the program runs is
 * sent back as an errno through a close-on-exec pipe, and the child exits 127. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "child/child.h"

/* child_launch(): clone3() is refused by the kernel or a seccomp policy
 * (ENOSYS, EPERM): nothing was started. */
#define CHILD_LAUNCH_NO_CLONE3 1
/* child_launch(): clone3() refuses CLONE_INTO_CGROUP (ENOSYS, EINVAL, E2BIG
 * on kernels before 5.7, or a cgroup it cannot start a process in): nothing
 * was started. */
#define CHILD_LAUNCH_NO_CGROUP 2

typedef struct ChildLaunch {
        char *const *argv; /* argv[0]: a path, or a name looked up in the PATH of envp */
        char *const *envp; /* never NULL: the caller passes environ for "inherit" */
        const char *cwd;   /* NULL keeps the agent's */
        /* The source of the child's descriptor i; -1 means /dev/null. */
        int fds[3 + CHILD_EXTRA_FDS_MAX];
        size_t n_fds;
        int cgroup_fd;      /* a cgroup v2 directory to start in (CLONE_INTO_CGROUP), or -1 */
        int audit_proc_fd;  /* ChildSpec's, or -1 */
        char audit_uid[16]; /* ChildSpec's audit_uid as text */
        void (*pre_exec)(void *data);             /* ChildSpec's, or NULL */
        void (*exec_failed)(void *data, int err); /* ChildSpec's, or NULL */
        void *exec_data;
} ChildLaunch;

/* Start the program. Returns 0 with the pid and a close-on-exec pidfd of the
 * running program, CHILD_LAUNCH_NO_CLONE3 or CHILD_LAUNCH_NO_CGROUP, or a
 * negative errno when the program could not be started (clone3 failed, a
 * step in the child failed, execve failed); a child that was started for it
 * has been reaped then. ret_pid and ret_pidfd are written only on 0. */
int child_launch(const ChildLaunch *l, pid_t *ret_pid, int *ret_pidfd);

/* Whether child_launch() starts the child in the agent's memory (CLONE_VM |
 * CLONE_VFORK): the build has the trampoline and the kernel has not refused
 * the flags (then the fork-like clone3() runs for good). */
bool child_launch_shares_memory(void);

/* Reap the child of pidfd (by pid on kernels without P_PIDFD, before 5.4),
 * waiting for its exit when wait is true. Returns 1 with its exit status
 * and the signal that killed it (0 when it exited), 0 when it is still
 * running (wait false only), or a negative errno. */
int child_launch_reap(int pidfd, pid_t pid, bool wait, int *ret_status, int *ret_signal);
