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
#include <grp.h>
#include <limits.h>
#include <net/if.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox-helper.h"
#include "sandbox-protocol.h"

/* The credentials --user and --group resolve to, looked up before any
 * namespace or mount changes what /etc/passwd says. */
typedef struct Identity {
        bool set_uid;
        bool set_gid;
        uid_t uid;
        gid_t gid;
        gid_t *groups; /* supplementary groups */
        int n_groups;
} Identity;

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

static bool parse_id(const char *s, unsigned long *ret)
{
        char *end;

        if (*s < '0' || *s > '9')
                return false;
        errno = 0;
        *ret = strtoul(s, &end, 10);
        return errno == 0 && *end == '\0' && *ret < (unsigned long)(uid_t)-1;
}

static void resolve_identity(const HelperOptions *o, Identity *id)
{
        struct passwd *pw = NULL;
        unsigned long n;

        if (o->user) {
                if (parse_id(o->user, &n))
                        pw = getpwuid((uid_t)n);
                else if (!(pw = getpwnam(o->user)))
                        helper_die(0, "user '%s': no such user", o->user);
                id->uid = pw ? pw->pw_uid : (uid_t)n;
                id->set_uid = true;
        }
        if (o->group) {
                struct group *gr = NULL;

                if (!parse_id(o->group, &n) && !(gr = getgrnam(o->group)))
                        helper_die(0, "group '%s': no such group", o->group);
                id->gid = gr ? gr->gr_gid : (gid_t)n;
        } else if (o->user) {
                if (!pw)
                        helper_die(0,
                                   "user %s: no passwd entry to take a group from; "
                                   "give --group",
                                   o->user);
                id->gid = pw->pw_gid;
        } else {
                return;
        }
        id->set_gid = true;

        /* A user with a passwd entry gets the groups it is a member of; a
         * bare number, or a group without a user, gets that one group and
         * nothing else. The first getgrouplist() call only counts. */
        id->n_groups = 0;
        if (pw && o->user)
                (void)getgrouplist(pw->pw_name, id->gid, NULL, &id->n_groups);
        if (id->n_groups < 1)
                id->n_groups = 1;
        id->groups = calloc((size_t)id->n_groups, sizeof(gid_t));
        if (!id->groups)
                helper_die(ENOMEM, "supplementary groups");
        id->groups[0] = id->gid;
        if (pw && o->user && getgrouplist(pw->pw_name, id->gid, id->groups, &id->n_groups) < 0)
                helper_die(0, "user '%s': cannot list its groups", o->user);
}

/* Groups first, then the group id, then the user id: each step needs the
 * privilege that the next one gives up. */
static void set_identity(const Identity *id)
{
        if (!id->set_gid)
                return;
        if (setgroups((size_t)id->n_groups, id->groups) < 0)
                helper_die(errno, "setgroups");
        if (setresgid(id->gid, id->gid, id->gid) < 0)
                helper_die(errno, "setresgid %u", (unsigned)id->gid);
        if (id->set_uid && setresuid(id->uid, id->uid, id->uid) < 0)
                helper_die(errno, "setresuid %u", (unsigned)id->uid);
}

/* The cgroup is joined before anything else can fork, so that every
 * process of the run is counted against its limits and can be killed with
 * it, and before the mount namespace, where /sys/fs/cgroup may turn
 * read-only. */
static void join_cgroups(const HelperOptions *o)
{
        char path[PATH_MAX], pid[32];
        int len = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());

        for (size_t i = 0; i < o->n_cgroups; i++) {
                int fd;

                if (snprintf(path, sizeof(path), "%s/cgroup.procs", o->cgroups[i]) >=
                    (int)sizeof(path))
                        helper_die(ENAMETOOLONG, "cgroup %s", o->cgroups[i]);
                fd = open(path, O_WRONLY | O_CLOEXEC);
                if (fd < 0 || write(fd, pid, (size_t)len) != len)
                        helper_die(errno, "cgroup %s", o->cgroups[i]);
                close(fd);
        }
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

/* PR_SET_PDEATHSIG is cleared by every credential change, so this runs after
 * set_identity(). It fires when the parent exits from now on; the check
 * after it covers a parent that exited before. */
static void die_with_parent(pid_t parent, int alive_fd)
{
        struct pollfd p = {alive_fd, POLLIN, 0};

        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                helper_die(errno, "die with parent");
        /* Inside a pid namespace getppid() is 0 whoever the parent is, so
         * pid 1 watches the supervisor's end of a pipe instead. */
        if (alive_fd >= 0 ? poll(&p, 1, 0) != 0 : getppid() != parent)
                helper_die(0, "die with parent: the parent has exited");
}

static helper_noreturn_ void exec_program(HelperOptions *o)
{
        int err;

        /* execvp() searches the PATH of environ, not of an envp argument, so
         * the new environment is installed first. */
        environ = o->env;
        execvp(o->command[0], o->command);
        err = errno;
        helper_exit(err == ENOENT ? SANDBOX_EXIT_NOT_FOUND : SANDBOX_EXIT_CANNOT_EXEC, err,
                    "exec %s", o->command[0]);
}

int main(int argc, char **argv)
{
        pid_t parent = getppid();
        HelperOptions o = {0};
        Identity id = {0};
        int alive_fd = -1;

        ensure_std_fds();
        helper_options_parse(&o, argc, argv);

        /* Leave the agent's process group and drop what it left behind
         * before anything else runs. */
        new_session();
        reset_signals();
        close_other_fds(helper_status_fd);
        resolve_identity(&o, &id);
        /* With a pid namespace this process stays outside as supervisor and
         * never changes its credentials, so its parent-death signal can be
         * set now and holds. */
        if (o.die_with_parent && (o.unshare & CLONE_NEWPID))
                die_with_parent(parent, -1);
        join_cgroups(&o);

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
        for (size_t i = 0; i < o.n_rlimits; i++) {
                struct rlimit rl = {o.rlimits[i].value, o.rlimits[i].value};

                if (setrlimit(o.rlimits[i].resource, &rl) < 0)
                        helper_die(errno, "rlimit %s %llu", o.rlimits[i].name,
                                   (unsigned long long)rl.rlim_cur);
        }
        if (setrlimit(RLIMIT_CORE, &(struct rlimit){0, 0}) < 0)
                helper_die(errno, "rlimit core 0");

        /* Credentials go last among the privileged steps: mounts, cgroups
         * and limits above all need root. */
        set_identity(&id);
        /* no_new_privs only changes what execve() may grant, so it does not
         * hinder the identity change above; it is set once nothing but the
         * exec of PROGRAM is left. */
        if (o.no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                helper_die(errno, "no_new_privs");
        /* pid 1 always dies with its supervisor: without it nobody would
         * report its end to the agent. */
        if (alive_fd >= 0)
                die_with_parent(0, alive_fd);
        else if (o.die_with_parent)
                die_with_parent(parent, -1);

        /* chdir comes after the mounts, so that the working directory is the
         * writable bind and not the read-only directory beneath it, and
         * after the identity change, so that a directory the user may not
         * enter fails here and not inside the script. */
        if (o.chdir && chdir(o.chdir) < 0)
                helper_die(errno, "chdir %s", o.chdir);
        exec_program(&o);
}
