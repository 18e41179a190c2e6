/* Audit sessions as the mark of everything a run started, an OS adapter.
 *
 * A run's processes can leave its process group (setsid), its parent chain
 * (a double fork) and, as root, its cgroup (a write to another
 * cgroup.procs). What they cannot leave by accident is the kernel's audit
 * session: the child writes a uid to /proc/self/loginuid before anything
 * else (ChildSpec.audit_proc_fd), which gives it a session ID of its own,
 * fresh from a global counter; every process it starts inherits it, across
 * fork, exec, setsid, cgroup moves, a cleared environment and closed
 * descriptors, and only a process with CAP_AUDIT_CONTROL can take another
 * (by writing loginuid again). After the run, child_session_kill() finds
 * the processes that still carry the run's session and kills them.
 * docs/sandbox.md ("Nothing a plan started outlives it") says what this
 * costs and where it does not hold. Nothing here logs. */
#pragma once

#include <stdint.h>
#include <sys/types.h>

/* No session: the value /proc/<pid>/sessionid reads before any loginuid
 * was written, and what child_session_of() gives when it cannot say. */
#define CHILD_SESSION_NONE UINT32_MAX

/* The audit session of process pid, read through proc_fd (a descriptor of
 * /proc, O_PATH is enough). pid must not be reaped meanwhile (the caller's
 * unreaped child). CHILD_SESSION_NONE when unknown (no audit in the
 * kernel, no such process). */
uint32_t child_session_of(int proc_fd, pid_t pid);

/* The uid for the children's loginuid: the agent's own loginuid when it
 * has one (an agent started from a login keeps that login's name on its
 * scripts in the audit trail), else its uid. */
uid_t child_session_uid(int proc_fd);

/* SIGKILL every process whose audit session is session (never
 * CHILD_SESSION_NONE), found in proc_fd's listing, until a pass over
 * /proc finds none or passes run out. Each pid is pinned with a pidfd and
 * its session read again before the signal, so that a pid reused by an
 * unrelated process in between is never hit. Returns the number of
 * processes signalled (0 or more), or a negative errno. */
int child_session_kill(int proc_fd, uint32_t session);
