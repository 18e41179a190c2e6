/* muranoagent-sandbox: the tiny program that stands between the agent and a
 * plan's script. The agent spawns it with a command line built by
 * sandbox_build() (sandbox.c); it applies what it was asked for in a fixed
 * order, then execs PROGRAM. It links libc only and does nothing else: no
 * configuration files, no logging, no state. docs/sandbox.md documents the
 * command line; sandbox-protocol.h the exit codes and the status line.
 *
 * Every step that was asked for and fails ends the helper with a status
 * line and SANDBOX_EXIT_SETUP, before PROGRAM ever runs: a feature is never
 * dropped quietly. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox-helper.h"
#include "sandbox-protocol.h"

/* Later opens must never land on 0, 1 or 2 and become PROGRAM's stdio by
 * accident, so a closed standard descriptor is filled with /dev/null. */
static void ensure_std_fds(void)
{
        for (int fd = 0; fd < 3; fd++)
                if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) != fd)
                        helper_die(errno, "open /dev/null as fd %d", fd);
}

/* Its own session makes the helper and everything PROGRAM starts one process
 * group, which the agent can signal as a whole, with no controlling
 * terminal. A spawner that already called setsid() (libuv's
 * UV_PROCESS_DETACHED) leaves nothing to do. */
static void new_session(void)
{
        if (getsid(0) != getpid() && setsid() < 0)
                helper_die(errno, "setsid");
}

/* The agent's signal handlers are gone after exec anyway, but ignored
 * signals and the blocked mask would be inherited. The reference resets
 * SIGPIPE in its preexec_fn; we reset everything. */
static void reset_signals(void)
{
        struct sigaction sa = {.sa_handler = SIG_DFL};
        sigset_t none;

        /* SIGKILL, SIGSTOP and the C library's own real-time signals refuse
         * a new disposition; that is expected and harmless. */
        for (int sig = 1; sig < NSIG; sig++)
                (void)sigaction(sig, &sa, NULL);
        sigemptyset(&none);
        if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
                helper_die(errno, "reset the signal mask");
}

/* Nothing the agent had open may reach PROGRAM. close_range() exists since
 * Linux 5.9; older kernels get a loop up to the descriptor limit. */
static void close_other_fds(int keep)
{
        unsigned first = 3;

        if (keep > 3 && close_range(first, (unsigned)keep - 1, 0) < 0)
                goto fallback;
        if (keep >= 3)
                first = (unsigned)keep + 1;
        if (close_range(first, ~0U, 0) == 0)
                return;
fallback:
        if (errno != ENOSYS)
                helper_die(errno, "close_range");
        for (int fd = 3; fd < (int)sysconf(_SC_OPEN_MAX); fd++)
                if (fd != keep)
                        close(fd);
}

/* A failed shared step (sandbox-steps.c) ends the helper with its line. */
static void check_step(int r, const SandboxStepError *e)
{
        if (r < 0)
                sandbox_steps_fail(helper_status_fd, SANDBOX_EXIT_SETUP, e);
}

/* The cgroup is joined before anything else can fork, so that every
 * process of the run is counted against its limits and can be killed with
 * it, and before the mount namespace, where /sys/fs/cgroup may turn
 * read-only. */
static void join_cgroups(const HelperOptions *o)
{
        SandboxStepError e;

        check_step(sandbox_steps_join_cgroups((const char *const *)o->cgroups, o->n_cgroups, &e),
                   &e);
}

/* A new network namespace has only a loopback device, and it is down. */
static void loopback_up(void)
{
        struct ifreq ifr = {0};
        int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

        strcpy(ifr.ifr_name, "lo");
        if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
                helper_die(errno, "network namespace: loopback");
        ifr.ifr_flags |= IFF_UP;
        if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
                helper_die(errno, "network namespace: loopback up");
        close(fd);
}

static helper_noreturn_ void exec_program(HelperOptions *o)
{
        SandboxStepError e;
        int err;

        /* execvp() searches the PATH of environ, not of an envp argument, so
         * the new environment is installed first. */
        environ = o->env;
        execvp(o->command[0], o->command);
        err = errno;
        sandbox_steps_exec_error(o->command[0], err, &e);
        sandbox_steps_fail(helper_status_fd, sandbox_steps_exec_status(err), &e);
}

int main(int argc, char **argv)
{
        pid_t parent = getppid();
        HelperOptions o = {0};
        SandboxIdentity id = {0};
        SandboxStepError e;
        int alive_fd = -1;

        ensure_std_fds();
        helper_options_parse(&o, argc, argv);

        /* Leave the agent's process group and drop what it left behind
         * before anything else runs. */
        new_session();
        reset_signals();
        close_other_fds(helper_status_fd);
        /* Looked up before any namespace or mount changes what
         * /etc/passwd says. */
        check_step(sandbox_identity_resolve(o.user, o.group, &id, &e), &e);
        /* With a pid namespace this process stays outside as supervisor and
         * never changes its credentials, so its parent-death signal can be
         * set now and holds. */
        if (o.die_with_parent && (o.unshare & CLONE_NEWPID))
                check_step(sandbox_steps_die_with_parent(parent, -1, &e), &e);
        join_cgroups(&o);
        /* Before the fork of --unshare-pid, so that the supervisor goes with
         * pid 1, and before the mounts, which may make /proc read-only. */
        if (o.set_oom_score_adj)
                check_step(sandbox_steps_oom_score_adj(-1, o.oom_score_adj, &e), &e);

        if (o.unshare && unshare(o.unshare) < 0)
                helper_die(errno, "unshare");
        if (o.unshare & CLONE_NEWPID)
                helper_fork_pid1(&alive_fd);
        if (o.unshare & CLONE_NEWNS)
                helper_mounts_apply(&o.mounts);
        if (o.unshare & CLONE_NEWNET)
                loopback_up();

        /* Limits are set after the fork, so that they bind PROGRAM and not
         * the supervisor, and while still privileged, so that they may
         * exceed the current hard limits. */
        check_step(sandbox_steps_rlimits(o.rlimits, o.n_rlimits, &e), &e);
        /* The bounding set needs CAP_SETPCAP, which the identity change
         * takes away from a user other than root. */
        check_step(sandbox_steps_caps_bound(o.drop_caps, &e), &e);

        /* Credentials go last among the privileged steps: mounts, cgroups
         * and limits above all need root. */
        check_step(sandbox_steps_identity(&id, &e), &e);
        /* After the identity change, which needs CAP_SETUID and
         * CAP_SETGID, and before no_new_privs and the exec. */
        check_step(sandbox_steps_caps_drop(o.drop_caps, &e), &e);
        /* no_new_privs only changes what execve() may grant, so it does not
         * hinder the identity change above; it is set once nothing but the
         * exec of PROGRAM is left. */
        if (o.no_new_privs)
                check_step(sandbox_steps_no_new_privs(&e), &e);
        /* pid 1 always dies with its supervisor: without it nobody would
         * report its end to the agent. */
        if (alive_fd >= 0)
                check_step(sandbox_steps_die_with_parent(0, alive_fd, &e), &e);
        else if (o.die_with_parent)
                check_step(sandbox_steps_die_with_parent(parent, -1, &e), &e);

        /* chdir comes after the mounts, so that the working directory is the
         * writable bind and not the read-only directory beneath it, and
         * after the identity change, so that a directory the user may not
         * enter fails here and not inside the script. */
        if (o.chdir)
                check_step(sandbox_steps_chdir(o.chdir, &e), &e);
        exec_program(&o);
}
