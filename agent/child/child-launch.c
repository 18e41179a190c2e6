/* clone3() and the child's side up to execve() (see child-launch.h).
 *
 * Why clone3() rather than fork() or libuv's uv_spawn(): CLONE_INTO_CGROUP
 * starts the child inside the run's cgroup, where moving it there later
 * (writing cgroup.procs) makes the kernel wait for an RCU grace period,
 * about 12 ms per script (docs/sandbox.md, "cgroups"); CLONE_PIDFD gives a
 * descriptor the loop can poll and reap with, so no SIGCHLD handling is
 * involved and nobody else's children are touched.
 *
 * The child is a copy of a process with several threads: whatever lock
 * another thread held at the clone stays held in the copy. So between
 * clone3() and execve() the child calls only thin system call wrappers,
 * all async-signal-safe, on memory the parent prepared.
 *
 * On x86_64 the child does not even get a copy: it shares the agent's
 * memory (CLONE_VM | CLONE_VFORK, as posix_spawn() does) on a stack of its
 * own until its execve() or its exit, while the calling thread waits,
 * which it did anyway for the verdict. A copy costs the agent its page
 * tables at the clone and a page fault for every page it writes after it,
 * about 0.5 ms of CPU per script on a VM (docs/sandbox.md). The child
 * writes nothing the agent reads but the calling thread's errno, and its
 * credentials, descriptors, signal handlers and directory stay its own
 * (no CLONE_THREAD, CLONE_FILES, CLONE_SIGHAND or CLONE_FS). */
#include "child/child-launch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/macro.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* glibc's execvp() searches this when the environment has no PATH. */
#define CHILD_DEFAULT_PATH "/bin:/usr/bin"

/* What the parent prepares for the child: the program's candidate paths, in
 * the order execvp() tries them, and the argument vector for running a file
 * without a known format through /bin/sh, as execvp() does. */
typedef struct LaunchPlan {
        char **paths;   /* owned, NULL-terminated */
        char **sh_argv; /* owned vector; its strings are borrowed */
} LaunchPlan;

static void launch_plan_done(LaunchPlan *p)
{
        for (size_t i = 0; p->paths && p->paths[i]; i++)
                free(p->paths[i]);
        free(p->paths);
        free(p->sh_argv);
}

static const char *env_value(char *const *envp, const char *name)
{
        size_t n = strlen(name);

        for (size_t i = 0; envp[i]; i++)
                if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
                        return envp[i] + n + 1;
        return NULL;
}

/* The candidates for argv[0]: itself when it has a slash, else each
 * directory of PATH joined with it (an empty element is the working
 * directory, as for execvp()). */
static int launch_plan_paths(LaunchPlan *p, const char *file, char *const *envp)
{
        const char *path, *s;
        size_t n = 1, k = 0;

        if (strchr(file, '/')) {
                p->paths = calloc(2, sizeof(char *));
                if (!p->paths || !(p->paths[0] = strdup(file)))
                        return -ENOMEM;
                return 0;
        }
        path = env_value(envp, "PATH");
        if (!path)
                path = CHILD_DEFAULT_PATH;
        for (s = path; *s; s++)
                n += *s == ':';
        p->paths = calloc(n + 1, sizeof(char *));
        if (!p->paths)
                return -ENOMEM;
        for (s = path;; s++) {
                size_t len = strcspn(s, ":");
                char *c;

                if (len == 0)
                        c = strdup(file);
                else if (asprintf(&c, "%.*s/%s", (int)len, s, file) < 0)
                        c = NULL;
                if (!c)
                        return -ENOMEM;
                p->paths[k++] = c;
                s += len;
                if (*s == '\0')
                        break;
        }
        return 0;
}

static int launch_plan_make(LaunchPlan *p, const ChildLaunch *l)
{
        size_t argc = 0;
        int r;

        r = launch_plan_paths(p, l->argv[0], l->envp);
        if (r < 0)
                return r;
        while (l->argv[argc])
                argc++;
        /* "/bin/sh", the path (filled in by the child), argv[1..], NULL. */
        p->sh_argv = calloc(argc + 2, sizeof(char *));
        if (!p->sh_argv)
                return -ENOMEM;
        p->sh_argv[0] = (char *)"/bin/sh";
        for (size_t i = 1; i < argc; i++)
                p->sh_argv[i + 1] = l->argv[i];
        return 0;
}

/* ---- the child, between clone3() and execve() ---- */

_noreturn_ static void launch_fail(int err_fd, int e)
{
        ssize_t n;

        do
                n = write(err_fd, &e, sizeof(e));
        while (n < 0 && errno == EINTR);
        _exit(127);
}

/* Try each candidate as execvp() does: go on past the ones that do not
 * exist, remember a permission problem, stop at any other error. */
static int launch_exec(const ChildLaunch *l, LaunchPlan *p)
{
        bool denied = false;

        for (size_t i = 0; p->paths[i]; i++) {
                execve(p->paths[i], l->argv, l->envp);
                if (errno == ENOEXEC) {
                        p->sh_argv[1] = p->paths[i];
                        execve(p->sh_argv[0], p->sh_argv, l->envp);
                        return errno;
                }
                if (errno == EACCES)
                        denied = true;
                else if (errno != ENOENT && errno != ENOTDIR && errno != ESTALE &&
                         errno != ENODEV && errno != ETIMEDOUT)
                        return errno;
        }
        return denied ? EACCES : errno;
}

/* Close every descriptor from `from` up but keep (keep >= from). Kernels
 * before 5.9 lack close_range(): then each descriptor in turn. */
static void launch_close_rest(int from, int keep)
{
        long max;

        if ((keep == from ||
             syscall(SYS_close_range, (unsigned)from, (unsigned)keep - 1, 0U) == 0) &&
            syscall(SYS_close_range, (unsigned)keep + 1, ~0U, 0U) == 0)
                return;
        max = sysconf(_SC_OPEN_MAX);
        for (int fd = from; fd < (max > 0 && max < INT_MAX ? (int)max : 65536); fd++)
                if (fd != keep)
                        (void)close(fd);
}

_noreturn_ static void launch_child(const ChildLaunch *l, LaunchPlan *p, int err_fd)
{
        const int top = (int)l->n_fds;
        int high[3 + CHILD_EXTRA_FDS_MAX];
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        sigset_t none;
        int null_fd = -1, e;

        /* The error pipe and every source move above the target range
         * first, so that no dup2() below overwrites a source it still
         * needs, and no source is its own target (which would keep its
         * close-on-exec flag). */
        e = fcntl(err_fd, F_DUPFD_CLOEXEC, top);
        if (e < 0)
                launch_fail(err_fd, errno);
        err_fd = e;
        if (setsid() < 0)
                launch_fail(err_fd, errno);
        /* First, so that nothing the child starts misses the mark; before
         * the descriptors are closed, which takes the one of /proc. */
        if (l->audit_proc_fd >= 0) {
                int fd = openat(l->audit_proc_fd, "self/loginuid", O_WRONLY | O_CLOEXEC);

                if (fd >= 0) {
                        (void)!write(fd, l->audit_uid, strlen(l->audit_uid));
                        close(fd);
                }
        }
        for (int i = 0; i < top; i++) {
                int src = l->fds[i];

                if (src < 0) {
                        if (null_fd < 0)
                                null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
                        if (null_fd < 0)
                                launch_fail(err_fd, errno);
                        src = null_fd;
                }
                high[i] = fcntl(src, F_DUPFD_CLOEXEC, top);
                if (high[i] < 0)
                        launch_fail(err_fd, errno);
        }
        for (int i = 0; i < top; i++)
                if (dup2(high[i], i) < 0)
                        launch_fail(err_fd, errno);
        /* Nothing else of the agent reaches the program, not even what the
         * agent's own parent left without close-on-exec; and the copies go
         * now rather than at the exec, so that a child the agent leaves
         * behind when it is killed (one still in pre_exec, or the stand-in
         * that waits for the script) holds none of the agent's open files.
         * The journal's flock() above all: it lasts as long as any copy of
         * its descriptor, and a new agent waits for it (docs/daemon.md). */
        launch_close_rest(top, err_fd);
        if (l->cwd && chdir(l->cwd) < 0)
                launch_fail(err_fd, errno);
        /* The parent blocked every signal around the clone, so no handler
         * of the agent runs here; the dispositions go back to the default
         * (SIGPIPE above all, which the agent ignores) before the mask
         * opens. glibc refuses its own two signals: they are left alone. */
        for (int sig = 1; sig < _NSIG; sig++)
                if (sig != SIGKILL && sig != SIGSTOP)
                        (void)sigaction(sig, &dfl, NULL);
        sigemptyset(&none);
        (void)sigprocmask(SIG_SETMASK, &none, NULL);
        if (l->pre_exec)
                l->pre_exec(l->exec_data);
        e = launch_exec(l, p);
        if (l->exec_failed)
                l->exec_failed(l->exec_data, e);
        launch_fail(err_fd, e);
}

/* ---- the parent ---- */

/* The child shares the agent's memory (above) on x86_64, outside ASan
 * builds (gcc says so with __SANITIZE_ADDRESS__, clang with
 * __has_feature). */
#if defined(__SANITIZE_ADDRESS__)
#define LAUNCH_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LAUNCH_ASAN 1
#endif
#endif
#if defined(__x86_64__) && !defined(LAUNCH_ASAN)
#define LAUNCH_SHARED_MEMORY 1
#else
#define LAUNCH_SHARED_MEMORY 0
#endif

typedef struct LaunchArgs {
        const ChildLaunch *l;
        LaunchPlan *p;
        int err_fd;
} LaunchArgs;

#if LAUNCH_SHARED_MEMORY
/* The shared-memory child's stack: made once, used by one launch at a
 * time, with a guard page below it. ASan builds keep the copy: its checks
 * do not expect a stack it did not see made. */
#define LAUNCH_STACK_SIZE ((size_t)256 << 10)

static pthread_mutex_t launch_stack_lock = PTHREAD_MUTEX_INITIALIZER;
static char *launch_stack;

static char *launch_stack_get(void)
{
        char *s;

        if (launch_stack)
                return launch_stack;
        s = mmap(NULL, LAUNCH_STACK_SIZE + 4096, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (s == MAP_FAILED)
                return NULL;
        if (mprotect(s, 4096, PROT_NONE) < 0) {
                munmap(s, LAUNCH_STACK_SIZE + 4096);
                return NULL;
        }
        launch_stack = s + 4096;
        return launch_stack;
}

_noreturn_ static void launch_child_entry(void *arg)
{
        LaunchArgs *a = arg;

        launch_child(a->l, a->p, a->err_fd);
}

/* clone3() whose child calls fn(arg) on the stack in args and never
 * returns (fn ends in execve() or _exit()): the return path of a C
 * function cannot be shared by two processes on one memory. */
static long launch_clone3_vm(struct clone_args *args, size_t size, void (*fn)(void *), void *arg)
{
        register void *r12 __asm__("r12") = (void *)fn;
        register void *r13 __asm__("r13") = arg;
        long ret;

        __asm__ volatile("syscall\n\t"
                         "test %%rax, %%rax\n\t"
                         "jnz 1f\n\t"
                         "mov %%r13, %%rdi\n\t"
                         "call *%%r12\n\t"
                         "mov $231, %%eax\n\t" /* exit_group(127), should fn return */
                         "mov $127, %%edi\n\t"
                         "syscall\n\t"
                         "hlt\n"
                         "1:"
                         : "=a"(ret)
                         : "0"((long)SYS_clone3), "D"(args), "S"(size), "r"(r12), "r"(r13)
                         : "rcx", "r11", "memory");
        return ret;
}
#endif

/* The child runs launch_child(a): on the agent's memory where it can
 * (above), else on a copy of it. */
static int launch_clone(LaunchArgs *a, int *ret_pidfd)
{
        const ChildLaunch *l = a->l;
        struct clone_args args = {
                .flags = CLONE_PIDFD,
                .pidfd = (uint64_t)(uintptr_t)ret_pidfd,
                .exit_signal = SIGCHLD,
        };
        size_t size = CLONE_ARGS_SIZE_VER0;
        int pid;

        if (l->cgroup_fd >= 0) {
                args.flags |= CLONE_INTO_CGROUP;
                args.cgroup = (uint64_t)l->cgroup_fd;
                size = CLONE_ARGS_SIZE_VER2;
        }
#if LAUNCH_SHARED_MEMORY
        pthread_mutex_lock(&launch_stack_lock);
        if (launch_stack_get()) {
                long r;

                args.flags |= CLONE_VM | CLONE_VFORK;
                args.stack = (uint64_t)(uintptr_t)launch_stack;
                args.stack_size = LAUNCH_STACK_SIZE;
                r = launch_clone3_vm(&args, size, launch_child_entry, a);
                pthread_mutex_unlock(&launch_stack_lock);
                if (r < 0) {
                        errno = (int)-r;
                        return -1;
                }
                return (int)r;
        }
        pthread_mutex_unlock(&launch_stack_lock);
#endif
        pid = (int)syscall(SYS_clone3, &args, size);
        if (pid == 0)
                launch_child(a->l, a->p, a->err_fd);
        return pid;
}

/* Wait for the verdict on the error pipe: end of file when the program
 * runs (the pipe closed at execve()), or the errno of the step that failed. */
static int launch_verdict(int err_fd)
{
        int e = 0;
        ssize_t n;

        do
                n = read(err_fd, &e, sizeof(e));
        while (n < 0 && errno == EINTR);
        if (n == 0)
                return 0;
        if (n == (ssize_t)sizeof(e) && e > 0)
                return -e;
        return -EIO;
}

int child_launch(const ChildLaunch *l, pid_t *ret_pid, int *ret_pidfd)
{
        _cleanup_(launch_plan_done) LaunchPlan plan = {0};
        int err[2], pidfd = -1, r, status, sig;
        sigset_t all, old;
        pid_t pid;

        r = launch_plan_make(&plan, l);
        if (r < 0)
                return r;
        if (pipe2(err, O_CLOEXEC) < 0)
                return -errno;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        pid = launch_clone(&(LaunchArgs){l, &plan, err[1]}, &pidfd);
        r = pid < 0 ? -errno : 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        close(err[1]);
        if (r < 0) {
                close(err[0]);
                if (r == -ENOSYS || r == -EPERM)
                        return l->cgroup_fd >= 0 ? CHILD_LAUNCH_NO_CGROUP : CHILD_LAUNCH_NO_CLONE3;
                if (l->cgroup_fd >= 0 && (r == -EINVAL || r == -E2BIG || r == -EOPNOTSUPP))
                        return CHILD_LAUNCH_NO_CGROUP;
                return r;
        }
        r = launch_verdict(err[0]);
        close(err[0]);
        if (r < 0) {
                /* The child exits right after it wrote the errno. */
                (void)child_launch_reap(pidfd, pid, true, &status, &sig);
                close(pidfd);
                return r;
        }
        *ret_pid = pid;
        *ret_pidfd = pidfd;
        return 0;
}

int child_launch_reap(int pidfd, pid_t pid, bool wait, int *ret_status, int *ret_signal)
{
        int options = WEXITED | (wait ? 0 : WNOHANG);
        siginfo_t si = {0};
        int r;

        do
                r = waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, options);
        while (r < 0 && errno == EINTR);
        if (r < 0 && errno == EINVAL) {
                do
                        r = waitid(P_PID, (id_t)pid, &si, options);
                while (r < 0 && errno == EINTR);
        }
        if (r < 0)
                return -errno;
        if (si.si_pid == 0)
                return 0; /* WNOHANG, and still running */
        *ret_status = si.si_code == CLD_EXITED ? si.si_status : 0;
        *ret_signal = si.si_code == CLD_EXITED ? 0 : si.si_status;
        return 1;
}
