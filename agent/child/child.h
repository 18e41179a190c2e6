/* One child process on the libuv loop. The module spawns an exact argv in an
 * exact environment and directory, optionally inside a cgroup v2, reads its
 * stdout and stderr through pipes into bounded captures, ends it on a
 * timeout or on request, and reports once, when it is over. It knows
 * nothing of plans or of the sandbox: in production the argv is the sandbox
 * helper's, followed by the script's command line, or the script's alone
 * with the sandbox's steps as the pre_exec hook (sandbox/sandbox-direct.h).
 *
 * How: clone3() with CLONE_VM | CLONE_VFORK on x86_64 and aarch64 (the
 * child runs in the agent's memory until it executes the program: no page
 * tables copied, no copy-on-write faults; child-launch.c), with fork
 * semantics elsewhere, CLONE_PIDFD, and CLONE_INTO_CGROUP when
 * the spec names a cgroup, so the child is inside the run's cgroup from its
 * first instruction (moving it there later makes the kernel wait for an RCU
 * grace period, ~12 ms). The loop polls the pidfd and reaps the child with
 * waitid(P_PIDFD): no SIGCHLD handler, nobody else's children touched. A
 * kernel that refuses clone3 (ENOSYS, EPERM: before 5.3, or a seccomp
 * policy) gets libuv's uv_spawn() instead, and one that refuses
 * CLONE_INTO_CGROUP (before 5.7) gets clone3 without it; either is decided
 * once, at the first refusal, and child_spawn_method() tells which.
 *
 * A child is over only when both halves of its end have arrived (as in tmux's
 * job.c): libuv's exit callback for the direct child, and end of file on
 * every captured pipe. Reporting at the exit alone would lose output still
 * sitting in the pipes; waiting for end of file alone would wait forever on
 * a grandchild that keeps a pipe open. So after the direct child exits, the
 * pipes get eof_grace_ms to reach end of file; any pipe still open then is
 * closed and its output marked as cut. Nothing is killed for that: a script
 * may leave a background process running, as it could under the reference
 * agent.
 *
 * Ending a child (a timeout or child_cancel()) sends SIGTERM to its process
 * group and through the optional kill_tree hook, then SIGKILL kill_grace_ms
 * later. The child runs in its own session (it calls setsid() before
 * exec), so its process group id is its pid. Once an end has begun, the
 * child is over only after SIGKILL went out, unless the process group is
 * already empty when the rest has arrived: then the SIGKILL goes to the hook
 * alone, at once. No process of a timed-out or
 * cancelled child outlives it, except one that left the process group and
 * is outside what the hook kills.
 *
 * What the child gets: stdin is /dev/null (opened in the child); stdout and
 * stderr are pipes (real pipes, not socketpairs, because scripts write to
 * /dev/stdout and /dev/stderr, which cannot be opened on a socket), or the
 * agent's passthrough descriptor, or /dev/null; the extra descriptors as 3,
 * 4, ... Every signal is reset to SIG_DFL and the signal mask emptied before
 * exec, so SIGPIPE is at its default as the reference made it. No other
 * descriptor reaches the program: the child marks all the others
 * close-on-exec, also those the agent's own parent left inheritable (with
 * the uv_spawn() fallback those few pass, as libuv leaves them). An exec or
 * working directory failure comes back through a close-on-exec error pipe
 * as spawn_error, before child_spawn() returns.
 *
 * Memory: handle memory is freed only in libuv's close callbacks. The Child
 * frees itself after its done callback has returned, so a loop whose
 * children have all reported closes cleanly. No waitpid(-1) and no SIGCHLD
 * handler: the pidfd names the one child to reap (libuv reaps its own in
 * the fallback). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

typedef struct Child Child;

/* The eof_grace_ms used when the spec says 0. */
#define CHILD_EOF_GRACE_DEFAULT_MS 2000

/* The most descriptors ChildSpec.extra_fds may pass. */
#define CHILD_EXTRA_FDS_MAX 8

typedef struct ChildSpec {
        /* argv[0] is the program: a path, or a name looked up in the PATH
         * of envp (execvp). Borrowed, read during child_spawn() only. */
        char *const *argv;
        /* The exact environment; NULL inherits the agent's. Borrowed, read
         * during child_spawn() only. */
        char *const *envp;
        /* The working directory; NULL keeps the agent's. A directory that
         * cannot be entered is a spawn error. */
        const char *cwd;
        /* A stream that is captured goes to a pipe and into the result. One
         * that is not goes to passthrough_fd. */
        bool capture_stdout;
        bool capture_stderr;
        /* The agent's descriptor that an uncaptured stream is written to,
         * for example STDERR_FILENO (the reference let uncaptured output
         * through to its own stdout, the service log; stderr is the same
         * log under systemd and keeps "muranoagent run"'s stdout clean).
         * 0 or less means /dev/null, so a zeroed spec sends it nowhere. */
        int passthrough_fd;
        /* More of the agent's descriptors for the child, which gets them as
         * 3, 4, ... in this order (the sandbox helper's --status-fd, for
         * example). At most CHILD_EXTRA_FDS_MAX; borrowed. */
        const int *extra_fds;
        size_t n_extra_fds;
        /* Bytes kept of each captured stream: the first half and the last
         * half, the middle dropped and marked (see child-capture.h); 0 keeps
         * nothing but the count. */
        size_t output_limit;
        /* Time from the spawn to SIGTERM; 0 means no timeout. */
        uint64_t timeout_ms;
        /* Time from SIGTERM to SIGKILL; 0 sends SIGKILL alone, at once. */
        uint64_t kill_grace_ms;
        /* Time the pipes get to reach end of file after the direct child
         * exited; 0 means CHILD_EOF_GRACE_DEFAULT_MS. */
        uint64_t eof_grace_ms;
        /* Optional: called with SIGTERM and then SIGKILL to kill everything
         * the child started (for example its cgroup), in addition to the
         * kill of its process group. Must stay valid until done. */
        void (*kill_tree)(void *userdata, int sig);
        void *kill_userdata;
        /* A cgroup v2 directory, opened (O_RDONLY | O_DIRECTORY), that the
         * child starts in; borrowed, read during child_spawn() only. 0 or
         * less means none, so a zeroed spec starts in the agent's cgroup. */
        int cgroup_fd;
        /* A descriptor of /proc (O_PATH is enough), borrowed, or 0 or less
         * for none: the child starts an audit session of its own before
         * anything else, by writing audit_uid to <proc>/self/loginuid
         * (child/child-session.h; a refusal is silent: then the child
         * keeps the agent's session). Ignored without clone3()
         * (CHILD_SPAWN_FORK). */
        int audit_proc_fd;
        uid_t audit_uid;
        /* Optional, for the sandbox's own steps (sandbox-direct.c): called
         * in the child right before the program is executed, after the
         * steps above (session, descriptors, working directory, signals).
         * It runs in the agent's memory (CLONE_VM, on a stack of its own of
         * 256 KiB) or in a copy of it, of a multithreaded process either
         * way, so it may only make async-signal-safe calls on memory
         * prepared before child_spawn(), and write nothing but its own
         * stack. To fail, it reports as it likes and calls _exit(). */
        void (*pre_exec)(void *data);
        /* Optional: called in the child, instead of reporting spawn_error,
         * with the errno when the program cannot be executed; must _exit().
         * Same rules as pre_exec. */
        void (*exec_failed)(void *data, int err);
        void *exec_data;
        /* Optional: called on the loop with each piece of a captured
         * stream as it is read (stream 1 is stdout, 2 stderr), before it
         * goes into the capture; data is borrowed for the call. For a live
         * view of the output (the daemon's status and progress events). */
        void (*on_output)(void *userdata, int stream, const char *data, size_t len);
        void *output_userdata;
} ChildSpec;

typedef struct ChildOutput {
        char *data;     /* owned; NUL-terminated; NULL when the stream was not captured */
        size_t len;     /* bytes in data, the terminating NUL aside */
        uint64_t total; /* bytes the child wrote to the stream */
        bool truncated; /* bytes were dropped: data is head, marker and tail */
        bool cut;       /* the pipe was closed before end of file (eof_grace_ms) */
} ChildOutput;

typedef struct ChildResult {
        int exit_status; /* the exit status; meaningful when term_signal is 0 */
        int term_signal; /* the signal that killed the direct child, 0 if none */
        bool timed_out;  /* timeout_ms expired and the end began */
        bool cancelled;  /* child_cancel() was called before the child was over */
        int spawn_error; /* a negative errno when the program never ran (exec, cwd) */
        int error;       /* a negative errno when the agent failed to keep output */
        ChildOutput out; /* stdout */
        ChildOutput err; /* stderr */
} ChildResult;

/* Called once, from the loop, when the child is over and all its handles are
 * closed. The callback may take r->out.data and r->err.data (and set them to
 * NULL); everything else, the Child included, is freed when it returns. */
typedef void (*child_done_cb)(Child *c, ChildResult *r, void *userdata);

/* How child_spawn() starts programs, best first. Each process starts with
 * the best and lowers it for good the first time the kernel refuses.
 * pre_exec and exec_failed need clone3: with CHILD_SPAWN_FORK,
 * child_spawn() refuses a spec with them (-EOPNOTSUPP), and the caller
 * starts a separate program instead. */
typedef enum ChildSpawnMethod {
        CHILD_SPAWN_FORK = 0,          /* uv_spawn(): no clone3; a cgroup_fd is refused */
        CHILD_SPAWN_CLONE3 = 1,        /* clone3() without CLONE_INTO_CGROUP; idem */
        CHILD_SPAWN_CLONE3_CGROUP = 2, /* clone3(), into spec->cgroup_fd when given */
} ChildSpawnMethod;

/* The method in use: CHILD_SPAWN_CLONE3_CGROUP until the kernel refuses. */
ChildSpawnMethod child_spawn_method(void);

/* Whether clone3() starts children in the agent's memory, with CLONE_VM |
 * CLONE_VFORK on a stack of their own (x86_64 and aarch64, not under
 * AddressSanitizer), rather than as a fork: false with CHILD_SPAWN_FORK, and
 * for good once the kernel has refused those flags (child-launch.c). */
bool child_spawn_shares_memory(void);

/* For tests: lower the method to m (never raise it), as if the kernel had
 * refused the better ones, or forget it so that the next call decides
 * again. */
void child_spawn_method_limit(ChildSpawnMethod m);
void child_spawn_method_reset(void);

/* Start the program of spec on loop. Returns 0 and, when ret is not NULL,
 * the Child in *ret, valid until done returns; done is then called exactly
 * once, also when the program could not be started (spawn_error). Returns
 * -EINVAL for a spec without a program or with too many extra_fds, -ENOMEM,
 * or another negative errno when the pipes cannot be made; then done is
 * never called and nothing is left on the loop. Returns -EOPNOTSUPP, also
 * with done never called, when spec->cgroup_fd is given and the kernel
 * cannot start a process inside a cgroup (child_spawn_method() is then
 * below CHILD_SPAWN_CLONE3_CGROUP): the caller moves the child into the
 * cgroup another way and spawns again without cgroup_fd. The same for a spec
 * with pre_exec or exec_failed when the method is CHILD_SPAWN_FORK. */
int child_spawn(uv_loop_t *loop, const ChildSpec *spec, child_done_cb done, void *userdata,
                Child **ret);

/* End the child: SIGTERM to its tree now, SIGKILL after kill_grace_ms, and
 * the result says cancelled. When an end has begun already (a timeout or an
 * earlier call), only the cancelled flag is set. Does nothing once the child
 * is over and only its report is pending (for example from inside done). */
void child_cancel(Child *c);

/* The pid of the direct child, which is also its process group id; 0 when
 * it never ran. */
pid_t child_get_pid(const Child *c);

/* The exitCode the reference reports (Popen.returncode): the exit status,
 * or -N for a death by signal N. 127, what a shell reports for a command it
 * cannot run, when the program never ran. */
int child_result_exit_code(const ChildResult *r);
