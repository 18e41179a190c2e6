/* The in-process sandbox path (see sandbox-direct.h). */
#include "sandbox/sandbox-direct.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/sandbox-steps.h"
#include "util/strv.h"

struct SandboxDirect {
        SandboxRlimit rlimits[4];
        size_t n_rlimits;
        SandboxIdentity id;
        bool no_new_privs;
        uint64_t drop_caps;
        bool oom_score_adj;
        int proc_fd;   /* in the child; -1 = by path */
        pid_t parent;  /* the agent: the child dies with it */
        char *chdir;   /* owned, NULL = stay */
        char *program; /* owned: the command's argv[0], for the "exec" line */
        int status_fd; /* in the child; -1 = none */
        bool lookup_failed;
        SandboxStepError lookup_error; /* the lookup's line, reported by the child */
        bool plain;                    /* the sandbox is off: no steps */
        char **try_argv;               /* owned, NULL = no shortcut */
        char **try_envp;               /* owned */
};

/* Both name root, by name or number: the identity is kept, as
 * sandbox_build() leaves --user and --group out then. */
static bool identity_is_root(const struct ConfigSandbox *cfg)
{
        return (streq(cfg->user, "root") || streq(cfg->user, "0")) &&
               (streq(cfg->group, "root") || streq(cfg->group, "0"));
}

int sandbox_direct_new(const struct ConfigSandbox *cfg, const SandboxRun *run, SandboxDirect **ret)
{
        const struct {
                int resource;
                const char *name;
                uint64_t value;
        } limits[] = {
                {RLIMIT_CPU, "cpu", cfg->rlimit_cpu},
                {RLIMIT_AS, "as", cfg->rlimit_as},
                {RLIMIT_NOFILE, "nofile", cfg->rlimit_nofile},
                {RLIMIT_NPROC, "nproc", cfg->rlimit_nproc},
        };
        _cleanup_(sandbox_direct_freep) SandboxDirect *d = NULL;

        if (!run->command || !run->command[0])
                return -EINVAL;
        d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        /* The same order and the same names as the helper's options. */
        for (size_t i = 0; i < ELEMENTSOF(limits); i++)
                if (limits[i].value > 0)
                        d->rlimits[d->n_rlimits++] = (SandboxRlimit){
                                limits[i].resource, limits[i].name, (rlim_t)limits[i].value};
        if (!identity_is_root(cfg) &&
            sandbox_identity_resolve(cfg->user, cfg->group, &d->id, &d->lookup_error) < 0)
                d->lookup_failed = true;
        d->no_new_privs = cfg->no_new_privs;
        d->drop_caps = cfg->drop_capabilities;
        d->oom_score_adj = run->oom_score_adj;
        d->proc_fd = run->proc_fd > STDERR_FILENO ? run->proc_fd : -1;
        d->parent = getpid();
        d->status_fd = run->status_fd;
        d->program = strdup(run->command[0]);
        if (!d->program)
                return -ENOMEM;
        if (run->workdir && !(d->chdir = strdup(run->workdir)))
                return -ENOMEM;
        *ret = TAKE_PTR(d);
        return 0;
}

int sandbox_direct_new_plain(SandboxDirect **ret)
{
        SandboxDirect *d = calloc(1, sizeof(*d));

        if (!d)
                return -ENOMEM;
        d->plain = true;
        d->status_fd = -1;
        *ret = d;
        return 0;
}

/* dash's table size and hash (var.c): the bucket of a name. */
#define DASH_VTABSIZE 39
static unsigned dash_bucket(const char *name, size_t len)
{
        unsigned h = (unsigned)(unsigned char)name[0] << 4;

        for (size_t i = 0; i < len; i++)
                h += (unsigned char)name[i];
        return h % DASH_VTABSIZE;
}

/* The length of the name of a NAME=value entry with a portable name, 0 for
 * anything else. */
static size_t env_name_len(const char *e)
{
        size_t i = 0;

        if (!((e[0] >= 'A' && e[0] <= 'Z') || (e[0] >= 'a' && e[0] <= 'z') || e[0] == '_'))
                return 0;
        while ((e[i] >= 'A' && e[i] <= 'Z') || (e[i] >= 'a' && e[i] <= 'z') ||
               (e[i] >= '0' && e[i] <= '9') || e[i] == '_')
                i++;
        return e[i] == '=' ? i : 0;
}

static bool dash_owns(const char *name, size_t len)
{
        static const char *const own[] = {"PWD",  "PPID",     "IFS", "OPTIND", "LINENO",
                                          "MAIL", "MAILPATH", "PS1", "PS2",    "PS4",
                                          "TERM", "HISTSIZE", "ATTY"};

        for (size_t i = 0; i < ELEMENTSOF(own); i++)
                if (strlen(own[i]) == len && memcmp(own[i], name, len) == 0)
                        return true;
        return false;
}

void sandbox_direct_env_free(char **env)
{
        size_t n = 0;

        if (!env)
                return;
        while (env[n])
                n++;
        /* PWD's entry is the one allocation among borrowed strings. */
        for (size_t i = 0; i < n; i++)
                if (strncmp(env[i], "PWD=", 4) == 0)
                        free(env[i]);
        free(env);
}

int sandbox_direct_dash_environment(char *const *envp, const char *pwd, char ***ret)
{
        size_t n = 0, k = 0;
        _cleanup_free_ unsigned *bucket = NULL;
        _cleanup_free_ char *pwd_entry = NULL;
        char **env;

        while (envp[n])
                n++;
        bucket = calloc(n + 1, sizeof(unsigned));
        if (!bucket || asprintf(&pwd_entry, "PWD=%s", pwd) < 0) {
                pwd_entry = NULL;
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                size_t len = env_name_len(envp[i]);

                if (len == 0 || dash_owns(envp[i], len))
                        return SANDBOX_DIRECT_NO_SHORTCUT;
                for (size_t j = 0; j < i; j++)
                        if (strncmp(envp[j], envp[i], len + 1) == 0)
                                return SANDBOX_DIRECT_NO_SHORTCUT;
                bucket[i] = dash_bucket(envp[i], len);
        }
        bucket[n] = dash_bucket("PWD", 3);
        env = calloc(n + 2, sizeof(char *));
        if (!env)
                return -ENOMEM;
        /* dash enters its own variables first (PATH among them), then the
         * environment's in order, appending each to its bucket's list, and
         * PWD after them; it exports the table bucket by bucket. */
        for (unsigned b = 0; b < DASH_VTABSIZE; b++) {
                for (size_t i = 0; i < n; i++)
                        if (bucket[i] == b && strncmp(envp[i], "PATH=", 5) == 0)
                                env[k++] = envp[i];
                for (size_t i = 0; i < n; i++)
                        if (bucket[i] == b && strncmp(envp[i], "PATH=", 5) != 0)
                                env[k++] = envp[i];
                if (bucket[n] == b)
                        env[k++] = TAKE_PTR(pwd_entry);
        }
        *ret = env;
        return 0;
}

/* dash's line for a command killed by a signal (sprint_status() in its
 * jobs.c): strsignal() in the C locale, cut at 32 bytes, " (core dumped)"
 * when there is a core, and a newline. Made once, in the agent, because
 * strsignal() is no call for the child. */
#define SIGNAL_LINES 65
static struct {
        char plain[48];
        char core[64];
} signal_lines[SIGNAL_LINES];
static pthread_once_t signal_lines_once = PTHREAD_ONCE_INIT;

static void signal_lines_make(void)
{
        for (int sig = 1; sig < SIGNAL_LINES; sig++) {
                const char *desc = sigdescr_np(sig);
                char text[40];

                if (desc)
                        snprintf(text, sizeof(text), "%.32s", desc);
                else if (sig >= SIGRTMIN && sig <= SIGRTMAX)
                        snprintf(text, sizeof(text), "Real-time signal %d", sig - SIGRTMIN);
                else
                        snprintf(text, sizeof(text), "Unknown signal %d", sig);
                snprintf(signal_lines[sig].plain, sizeof(signal_lines[sig].plain), "%s\n", text);
                snprintf(signal_lines[sig].core, sizeof(signal_lines[sig].core),
                         "%s (core dumped)\n", text);
        }
}

int sandbox_direct_shortcut(SandboxDirect *d, const char *const *argv, char *const *envp,
                            const char *pwd)
{
        _cleanup_(strv_freep) char **copy = NULL;
        char **dash_env = NULL, **strings;
        size_t n = 0;
        int r;

        if (!argv || !argv[0])
                return SANDBOX_DIRECT_NO_SHORTCUT;
        pthread_once(&signal_lines_once, signal_lines_make);
        r = sandbox_direct_dash_environment(envp, pwd, &dash_env);
        if (r != 0)
                return r;
        /* The child reads them after the caller's vectors may be gone, so
         * the shortcut owns copies. */
        while (dash_env[n])
                n++;
        strings = calloc(n + 1, sizeof(char *));
        copy = strv_copy(argv);
        for (size_t i = 0; strings && i < n; i++)
                if (!(strings[i] = strdup(dash_env[i]))) {
                        strv_free(strings);
                        strings = NULL;
                }
        sandbox_direct_env_free(dash_env);
        if (!strings || !copy) {
                strv_free(strings);
                return -ENOMEM;
        }
        strv_free(d->try_argv);
        strv_free(d->try_envp);
        d->try_argv = TAKE_PTR(copy);
        d->try_envp = strings;
        return 0;
}

SandboxDirect *sandbox_direct_free(SandboxDirect *d)
{
        if (!d)
                return NULL;
        strv_free(d->try_argv);
        strv_free(d->try_envp);
        sandbox_identity_clear(&d->id);
        free(d->chdir);
        free(d->program);
        free(d);
        return NULL;
}

/* In the child: the helper's steps after its cgroups and namespaces, in its
 * order (sandbox-helper.c main()). */
static void direct_steps(const SandboxDirect *d)
{
        SandboxStepError e;

        if (d->lookup_failed)
                sandbox_steps_fail(d->status_fd, SANDBOX_EXIT_SETUP, &d->lookup_error);
        if ((d->oom_score_adj &&
             sandbox_steps_oom_score_adj(d->proc_fd, SANDBOX_OOM_SCORE_ADJ, &e) < 0) ||
            sandbox_steps_rlimits(d->rlimits, d->n_rlimits, &e) < 0 ||
            sandbox_steps_caps_bound(d->drop_caps, &e) < 0 ||
            sandbox_steps_identity(&d->id, &e) < 0 ||
            sandbox_steps_caps_drop(d->drop_caps, &e) < 0 ||
            (d->no_new_privs && sandbox_steps_no_new_privs(&e) < 0) ||
            sandbox_steps_die_with_parent(d->parent, -1, &e) < 0 ||
            (d->chdir && sandbox_steps_chdir(d->chdir, &e) < 0))
                sandbox_steps_fail(d->status_fd, SANDBOX_EXIT_SETUP, &e);
        if (!d->oom_score_adj && d->proc_fd >= 0)
                (void)close(d->proc_fd);
        /* End of file on the status pipe means "the command runs". */
        if (d->status_fd >= 0 && fcntl(d->status_fd, F_SETFD, FD_CLOEXEC) < 0) {
                e = (SandboxStepError){.what = "status fd", .err = errno};
                sandbox_steps_fail(d->status_fd, SANDBOX_EXIT_SETUP, &e);
        }
}

/* In the child, in place of dash: start the program (vfork(), so the
 * child's memory is not copied) and, when it runs, wait for it and end as
 * dash ends after its last command: with its exit status, or for a signal
 * with 128 + the signal and the signal's line on stderr. When it cannot be
 * executed (no such file, no right to execute, no format the kernel knows,
 * a missing interpreter), return: the caller executes /bin/sh -c, which
 * reports it in its own words. */
static void run_shortcut(const SandboxDirect *d)
{
        volatile int exec_err = 0;
        int status = 0, sig;
        pid_t pid, w;

        pid = vfork();
        if (pid == 0) {
                execve(d->try_argv[0], d->try_argv, d->try_envp);
                /* The parent waits until this exits: memory is shared. */
                exec_err = errno ? errno : EINVAL;
                _exit(127);
        }
        if (pid < 0)
                return;
        if (exec_err != 0) {
                while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                        ;
                return;
        }
        /* The program runs: nothing of the agent stays open in its waiter,
         * as nothing did in dash (the close-on-exec descriptors, the error
         * pipe and the status descriptor among them, which tells the agent
         * that the command runs). */
        if (syscall(SYS_close_range, 3U, ~0U, 0U) < 0)
                for (int fd = 3; fd < 65536; fd++)
                        (void)close(fd);
        do
                w = waitpid(pid, &status, 0);
        while (w < 0 && errno == EINTR);
        if (w < 0)
                _exit(127);
        if (WIFEXITED(status))
                _exit(WEXITSTATUS(status));
        sig = WTERMSIG(status);
        if (sig != SIGINT && sig != SIGPIPE && sig > 0 && sig < SIGNAL_LINES) {
                const char *line =
                        WCOREDUMP(status) ? signal_lines[sig].core : signal_lines[sig].plain;
                ssize_t n;

                do
                        n = write(STDERR_FILENO, line, strlen(line));
                while (n < 0 && errno == EINTR);
        }
        _exit(128 + sig);
}

/* In the child: the steps, then the shortcut when armed. */
void sandbox_direct_pre_exec(void *data)
{
        const SandboxDirect *d = data;

        if (!d->plain)
                direct_steps(d);
        if (d->try_argv)
                run_shortcut(d);
}

void sandbox_direct_exec_failed(void *data, int err)
{
        const SandboxDirect *d = data;
        SandboxStepError e;

        sandbox_steps_exec_error(d->program, err, &e);
        sandbox_steps_fail(d->status_fd, sandbox_steps_exec_status(err), &e);
}
