/* The pid namespace's supervisor: after unshare(CLONE_NEWPID) the helper
 * forks, the child becomes pid 1 of the new namespace and goes on to exec
 * PROGRAM, and the parent stays outside to wait for it and pass its end on
 * to the agent unchanged. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox-helper.h"
#include "sandbox-protocol.h"

/* Exit the way the child did: with its code, or by the same signal, so that
 * the agent sees death by signal N and reports exitCode -N as the reference
 * does. The core limit keeps a re-raised SIGSEGV from dumping our core. */
static helper_noreturn_ void exit_like(int status)
{
        struct rlimit zero = {0, 0};
        struct sigaction sa = {.sa_handler = SIG_DFL};
        sigset_t one;
        int sig;

        if (WIFEXITED(status))
                _exit(WEXITSTATUS(status));
        sig = WTERMSIG(status);
        (void)setrlimit(RLIMIT_CORE, &zero);
        (void)sigaction(sig, &sa, NULL);
        sigemptyset(&one);
        sigaddset(&one, sig);
        kill(getpid(), sig);
        sigprocmask(SIG_UNBLOCK, &one, NULL);
        _exit(128 + sig);
}

/* The helper outside the pid namespace: wait for pid 1 inside and pass on
 * its end. All signals stay blocked here and are taken with sigwaitinfo(),
 * so no handler races with the reaping. Termination signals sent to the
 * helper alone are passed to the child; the agent normally signals the
 * whole process group, which reaches the child directly as well. */
static helper_noreturn_ void supervise(pid_t child)
{
        static const int forwarded[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2};
        sigset_t set;

        sigemptyset(&set);
        sigaddset(&set, SIGCHLD);
        for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
                sigaddset(&set, forwarded[i]);
        for (;;) {
                int sig = sigwaitinfo(&set, NULL), status;
                pid_t r;

                if (sig < 0) {
                        if (errno == EINTR)
                                continue;
                        helper_die(errno, "sigwaitinfo");
                }
                if (sig != SIGCHLD) {
                        kill(child, sig);
                        continue;
                }
                r = waitpid(child, &status, WNOHANG);
                if (r == child)
                        exit_like(status);
                if (r < 0 && errno != EINTR)
                        helper_die(errno, "waitpid");
        }
}

void helper_fork_pid1(int *ret_alive_fd)
{
        sigset_t all, none;
        int alive[2];
        pid_t pid;

        if (pipe2(alive, O_CLOEXEC) < 0)
                helper_die(errno, "pipe");
        /* Blocked before the fork, so that neither SIGCHLD nor a forwarded
         * signal can arrive before supervise() waits for it. */
        sigfillset(&all);
        sigprocmask(SIG_BLOCK, &all, NULL);
        pid = fork();
        if (pid < 0)
                helper_die(errno, "fork");
        if (pid == 0) {
                close(alive[1]);
                sigemptyset(&none);
                sigprocmask(SIG_SETMASK, &none, NULL);
                *ret_alive_fd = alive[0];
                return;
        }
        close(alive[0]);
        /* The child holds the status fd now; the agent's end of file must
         * mean "PROGRAM was executed", so ours goes. */
        if (helper_status_fd >= 0)
                close(helper_status_fd);
        helper_status_fd = -1;
        supervise(pid);
}
