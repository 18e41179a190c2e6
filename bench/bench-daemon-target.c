/* The consumers bench-daemon starts and stops (see bench-daemon-target.h).
 *
 * They are started with fork() and execvp() rather than posix_spawn(),
 * because only a forked child can ask for PR_SET_PDEATHSIG before it
 * executes: an interrupted bench must not leave agents consuming. The
 * fork copies a small process (the 2 MiB plan is built later), so it adds
 * well under a millisecond to the measured start-up.
 *
 * Each one leads a process group of its own, and is stopped through it:
 * under a wrapper (strace, perf) the agent is the wrapper's child, and
 * strace only detaches from it on SIGTERM. */
#include "bench-daemon-target.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench-util.h"

#define MAX_ARGS 32

static double clock_ms(clockid_t id)
{
        struct timespec ts;

        clock_gettime(id, &ts);
        return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static char *path_join(const char *dir, const char *name)
{
        char *p = NULL;

        return asprintf(&p, "%s/%s", dir, name) < 0 ? NULL : p;
}

static int write_agent_config(const Target *t, const TargetSetup *s)
{
        char *text = NULL;
        int rc;

        if (asprintf(&text,
                     "[DEFAULT]\n"
                     "storage = %s\n"
                     "debug = %s\n"
                     "[rabbitmq]\n"
                     "host = 127.0.0.1\n"
                     "port = %d\n"
                     "input_queue = %s\n"
                     "result_routing_key = %s\n"
                     "%s",
                     t->storage, s->debug ? "true" : "false", s->port, t->queue, t->results,
                     s->config_extra ? s->config_extra : "") < 0)
                return -ENOMEM;
        /* 0600: the agent warns about a configuration others can read. */
        rc = bench_write_file(t->config, text, strlen(text), 0600);
        free(text);
        return rc;
}

/* ---- the CPU accounting cgroup -------------------------------------------
 *
 * Each consumer is the first process of a cgroup of its own, so that its
 * CPU is that of everything it started, in ns or µs, whoever reaps
 * it (docs/benchmarks.md, "How CPU is measured"). cgroup v1's cpuacct
 * hierarchy first: the agent makes its scripts' cgroups in the memory and
 * pids hierarchies (or v2's), so they stay in this one. Else v2, where the
 * agent makes them below its own cgroup, which is this one. Made below this
 * process's own cgroup in that hierarchy. */

/* Whether the comma-separated list holds word. */
static bool list_has(const char *list, const char *word)
{
        size_t n = strlen(word);

        for (const char *p = list; (p = strstr(p, word)); p += n)
                if ((p == list || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
                        return true;
        return false;
}

/* Where the hierarchy is mounted (v1 with cpuacct, or v2), or NULL. */
static char *cgroup_mount(bool v2)
{
        char line[4096], *found = NULL;
        FILE *f = fopen("/proc/self/mountinfo", "re");

        while (f && !found && fgets(line, sizeof(line), f)) {
                char point[2048], type[64], opts[1024], *dash = strstr(line, " - ");

                if (!dash || sscanf(line, "%*s %*s %*s %*s %2047s", point) != 1 ||
                    sscanf(dash + 3, "%63s %*s %1023s", type, opts) != 2)
                        continue;
                if (v2 ? strcmp(type, "cgroup2") == 0
                       : strcmp(type, "cgroup") == 0 && list_has(opts, "cpuacct"))
                        found = strdup(point);
        }
        if (f)
                fclose(f);
        return found;
}

/* This process's cgroup in the hierarchy ("/" or "/a/b"), or NULL. */
static char *cgroup_own(bool v2)
{
        char line[4096], *found = NULL;
        FILE *f = fopen("/proc/self/cgroup", "re");

        while (f && !found && fgets(line, sizeof(line), f)) {
                char *ctls = strchr(line, ':'), *path = ctls ? strchr(ctls + 1, ':') : NULL;

                if (!path)
                        continue;
                *ctls++ = '\0';
                *path++ = '\0';
                path[strcspn(path, "\n")] = '\0';
                if (v2 ? strcmp(line, "0") == 0 && *ctls == '\0' : list_has(ctls, "cpuacct"))
                        found = strdup(path);
        }
        if (f)
                fclose(f);
        return found;
}

static int cgroup_make(Target *t, bool v2)
{
        char *mount = cgroup_mount(v2), *own = cgroup_own(v2), *dir = NULL, *probe = NULL;
        int rc = -ENOENT;

        if (mount && own &&
            asprintf(&dir, "%s%s/%s", mount, strcmp(own, "/") == 0 ? "" : own, t->queue) >= 0) {
                rc = mkdir(dir, 0755) < 0 ? -errno : 0;
                if (rc == 0 &&
                    (asprintf(&probe, "%s/%s", dir, v2 ? "cpu.stat" : "cpuacct.usage") < 0 ||
                     access(probe, R_OK) < 0 ||
                     asprintf(&t->cgroup_join, "%s/%s", dir, v2 ? "cgroup.procs" : "tasks") < 0)) {
                        rmdir(dir);
                        rc = -ENOENT;
                }
        }
        if (rc == 0) {
                t->cgroup = dir;
                t->cgroup_v2 = v2;
        } else {
                free(dir);
        }
        free(probe);
        free(mount);
        free(own);
        return rc;
}

static int remove_dir(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st;
        (void)ftw;
        if (flag == FTW_DP && rmdir(path) < 0)
                fprintf(stderr, "bench-daemon: cannot remove the cgroup %s: %m\n", path);
        return 0;
}

/* In the child: join t's cgroup (async-signal-safe). */
static int cgroup_join(const Target *t)
{
        int fd = open(t->cgroup_join, O_WRONLY | O_CLOEXEC);
        int rc = fd >= 0 && write(fd, "0", 1) == 1 ? 0 : -1;

        if (fd >= 0)
                close(fd);
        return rc;
}

static int read_text(const char *dir, const char *name, char *buf, size_t size)
{
        char path[PATH_MAX];
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = read(fd, buf, size - 1);
        close(fd);
        if (n <= 0)
                return -EIO;
        buf[n] = '\0';
        return 0;
}

static int cgroup_cpu_ms(const Target *t, double *ret)
{
        char buf[1024], *p;
        unsigned long long v;
        int rc =
                read_text(t->cgroup, t->cgroup_v2 ? "cpu.stat" : "cpuacct.usage", buf, sizeof(buf));

        if (rc < 0)
                return rc;
        if (t->cgroup_v2) {
                p = strstr(buf, "usage_usec ");
                if (!p || sscanf(p, "usage_usec %llu", &v) != 1)
                        return -EIO;
                *ret = (double)v / 1e3;
        } else {
                if (sscanf(buf, "%llu", &v) != 1)
                        return -EIO;
                *ret = (double)v / 1e6;
        }
        return 0;
}

int target_prepare(Target *t, const TargetSetup *s, const char *dir, const char *storage,
                   const char *queue_prefix)
{
        char *p;
        int rc;

        t->dir = strdup(dir);
        t->storage = storage ? strdup(storage) : NULL;
        t->log = path_join(dir, "log");
        if (asprintf(&t->queue, "%s-%c", queue_prefix, t->tag) < 0)
                t->queue = NULL;
        if (asprintf(&t->results, "%s-%c-results", queue_prefix, t->tag) < 0)
                t->results = NULL;
        if (!t->dir || (storage && !t->storage) || !t->log || !t->queue || !t->results)
                return -ENOMEM;
        /* Without one (not root, no such hierarchy), the CPU figures are
         * /proc/PID/stat's, and the report says so. */
        if (cgroup_make(t, false) < 0)
                (void)cgroup_make(t, true);
        if (t->kind == TARGET_AGENT) {
                t->config = path_join(dir, "agent.conf");
                if (!t->config)
                        return -ENOMEM;
                return write_agent_config(t, s);
        }
        p = path_join(dir, "echo.sh");
        rc = p ? bench_write_file(p, TARGET_ECHO_SCRIPT, strlen(TARGET_ECHO_SCRIPT), 0755)
               : -ENOMEM;
        free(p);
        if (rc < 0)
                return rc;
        p = path_join(dir, "sha.sh");
        rc = p ? bench_write_file(p, TARGET_SHA_SCRIPT, strlen(TARGET_SHA_SCRIPT), 0755) : -ENOMEM;
        free(p);
        return rc;
}

void target_clear(Target *t)
{
        free(t->dir);
        free(t->storage);
        free(t->queue);
        free(t->results);
        free(t->config);
        free(t->log);
        /* Empty once the consumer is stopped; under v2 the agent may have
         * left cgroups of its own inside. */
        if (t->cgroup)
                nftw(t->cgroup, remove_dir, 16, FTW_DEPTH | FTW_PHYS);
        free(t->cgroup);
        free(t->cgroup_join);
        t->dir = t->storage = t->queue = t->results = t->config = t->log = NULL;
        t->cgroup = t->cgroup_join = NULL;
}

/* In the child, between fork and exec: only async-signal-safe calls. The
 * time the cgroup's join took goes to join_fd, for the start-up figure. */
static void child_exec(const Target *t, char *const *argv, int log_fd, int join_fd)
{
        int null_fd = open("/dev/null", O_RDONLY);
        double before = clock_ms(CLOCK_MONOTONIC), took;

        if (t->cgroup && cgroup_join(t) < 0)
                _exit(126);
        took = clock_ms(CLOCK_MONOTONIC) - before;
        if (write(join_fd, &took, sizeof(took)) != (ssize_t)sizeof(took))
                _exit(126);
        if (null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(log_fd, 1) < 0 || dup2(log_fd, 2) < 0)
                _exit(126);
        if (setpgid(0, 0) < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || chdir(t->dir) < 0)
                _exit(126);
        execvp(argv[0], argv);
        _exit(127);
}

int target_start(Target *t, const TargetSetup *s, double *ret_t0_ms, double *ret_wall_ms)
{
        char port[16], *argv[MAX_ARGS];
        double t0, wall, join_ms = 0;
        size_t n = 0;
        bool set_helper;
        int log_fd, fork_errno, join_pipe[2];
        pid_t pid;

        for (size_t i = 0; t->kind == TARGET_AGENT && s->wrap && s->wrap[i]; i++)
                if (n < MAX_ARGS - 6)
                        argv[n++] = (char *)s->wrap[i];
        argv[n++] = (char *)s->program;
        if (t->kind == TARGET_AGENT) {
                argv[n++] = (char *)"--config-file";
                argv[n++] = t->config;
        } else {
                snprintf(port, sizeof(port), "%d", s->port);
                argv[n++] = port;
                argv[n++] = t->queue;
                argv[n++] = t->results;
        }
        argv[n] = NULL;

        log_fd = open(t->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (log_fd < 0)
                return -errno;
        if (pipe2(join_pipe, O_CLOEXEC) < 0) {
                int rc = -errno;
                close(log_fd);
                return rc;
        }
        /* The agent reports readiness to systemd when NOTIFY_SOCKET is set;
         * a bench started from a unit must not pass its own on. */
        unsetenv("NOTIFY_SOCKET");
        /* The contained floor's helper, unless the caller chose one for
         * everybody: set for the fork only (this process has one thread). */
        set_helper = s->helper && !getenv("MURANOAGENT_SANDBOX");
        if (set_helper && setenv("MURANOAGENT_SANDBOX", s->helper, 1) < 0) {
                int rc = -errno;
                close(log_fd);
                close(join_pipe[0]);
                close(join_pipe[1]);
                return rc;
        }
        t0 = clock_ms(CLOCK_MONOTONIC);
        wall = clock_ms(CLOCK_REALTIME);
        pid = fork();
        if (pid == 0)
                child_exec(t, argv, log_fd, join_pipe[1]);
        fork_errno = errno;
        if (set_helper)
                unsetenv("MURANOAGENT_SANDBOX");
        close(join_pipe[1]);
        if (pid > 0 && read(join_pipe[0], &join_ms, sizeof(join_ms)) != (ssize_t)sizeof(join_ms))
                join_ms = 0; /* the child failed; its exit status says so */
        close(join_pipe[0]);
        if (pid < 0) {
                close(log_fd);
                return -fork_errno;
        }
        /* Also here, so that the group exists whichever side runs first. */
        (void)setpgid(pid, pid);
        close(log_fd);
        t->pid = pid;
        *ret_t0_ms = t0 + join_ms;
        *ret_wall_ms = wall;
        return 0;
}

int target_exited(Target *t, int *ret_status)
{
        int status = 0;
        pid_t r;

        if (t->pid <= 0)
                return -ECHILD;
        r = waitpid(t->pid, &status, WNOHANG);
        if (r < 0)
                return -errno;
        if (r == 0)
                return 0;
        t->pid = 0;
        *ret_status = status;
        return 1;
}

/* Whether anything is left in the process group led by pgid. */
static bool group_alive(pid_t pgid)
{
        return kill(-pgid, 0) == 0 || errno == EPERM;
}

int target_stop(Target *t, int timeout_ms, int *ret_status)
{
        struct timespec step = {.tv_nsec = 5 * 1000 * 1000};
        pid_t pgid = t->pid;
        int waited = 0, status = 0, rc;

        if (t->pid <= 0)
                return -ECHILD;
        if (kill(-pgid, SIGTERM) < 0)
                return -errno;
        /* The program itself, then whatever else was in its group (an
         * agent whose wrapper ended first). */
        for (; waited < timeout_ms; waited += 5) {
                rc = t->pid > 0 ? target_exited(t, &status) : 1;
                if (rc < 0)
                        return rc;
                if (rc == 1 && !group_alive(pgid))
                        break;
                nanosleep(&step, NULL);
        }
        if (waited >= timeout_ms) {
                fprintf(stderr, "bench-daemon: %s did not stop within %d ms; killing it\n", t->name,
                        timeout_ms);
                kill(-pgid, SIGKILL);
                if (t->pid > 0 && waitpid(t->pid, &status, 0) < 0)
                        return -errno;
                t->pid = 0;
        }
        *ret_status = status;
        return 0;
}

int target_memory(const Target *t, TargetMemory *ret)
{
        TargetMemory m = {0};
        char path[64], line[256];
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/status", (int)t->pid);
        f = fopen(path, "re");
        if (!f)
                return -errno;
        while (fgets(line, sizeof(line), f)) {
                sscanf(line, "VmRSS: %ld", &m.rss_kib);
                sscanf(line, "RssAnon: %ld", &m.anon_kib);
                sscanf(line, "RssFile: %ld", &m.file_kib);
                sscanf(line, "RssShmem: %ld", &m.shmem_kib);
                sscanf(line, "Threads: %d", &m.threads);
        }
        fclose(f);
        if (m.rss_kib == 0)
                return -ENODATA;
        *ret = m;
        return 0;
}

int target_cpu_ms(const Target *t, double *ret)
{
        unsigned long long utime, stime;
        long long cutime, cstime;
        char dir[32], buf[1024], *p;
        int rc;

        if (t->cgroup)
                return cgroup_cpu_ms(t, ret);
        snprintf(dir, sizeof(dir), "/proc/%d", (int)t->pid);
        rc = read_text(dir, "stat", buf, sizeof(buf));
        if (rc < 0)
                return rc;
        /* The command name may hold spaces and parentheses; the fields
         * after the last ')' do not. utime is field 14, after it stime,
         * cutime and cstime. */
        p = strrchr(buf, ')');
        if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld %lld",
                         &utime, &stime, &cutime, &cstime) != 4)
                return -EIO;
        *ret = (double)(utime + stime + (unsigned long long)(cutime + cstime)) * 1e3 /
               (double)sysconf(_SC_CLK_TCK);
        return 0;
}

/* "2025-01-31 08:56:11.123 ...": the log's local time, as epoch ms. */
static int parse_stamp(const char *line, double *ret)
{
        struct tm tm = {0};
        int ms;

        if (sscanf(line, "%d-%d-%d %d:%d:%d.%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                   &tm.tm_min, &tm.tm_sec, &ms) != 7)
                return -EINVAL;
        tm.tm_year -= 1900;
        tm.tm_mon -= 1;
        tm.tm_isdst = -1;
        *ret = (double)mktime(&tm) * 1e3 + ms;
        return 0;
}

/* The lines of the agent's log that counted() takes, at most max of them:
 * how many, or -errno. */
static int log_count(const Target *t, int max, bool (*counted)(const char *line, double *ms),
                     double *ms)
{
        char line[1024];
        int n = 0;
        FILE *f;

        f = fopen(t->log, "re");
        if (!f)
                return -errno;
        while (n < max && fgets(line, sizeof(line), f))
                if (counted(line, ms ? &ms[n] : NULL))
                        n++;
        fclose(f);
        return n;
}

static bool is_consuming(const char *line, double *ms)
{
        return strstr(line, " INFO muranoagent consuming '") && parse_stamp(line, ms) == 0;
}

static bool is_problem(const char *line, double *ms)
{
        (void)ms;
        return strstr(line, " ERROR muranoagent ") || strstr(line, " WARNING muranoagent ");
}

int target_log_consuming(const Target *t, double *ret_ms, int max)
{
        return log_count(t, max, is_consuming, ret_ms);
}

int target_log_problems(const Target *t)
{
        return log_count(t, INT_MAX, is_problem, NULL);
}

void target_log_tail(const Target *t, int lines)
{
        char cmd[4096];

        fprintf(stderr, "--- the last lines of %s:\n", t->log);
        fflush(stderr);
        snprintf(cmd, sizeof(cmd), "tail -n %d '%s' >&2", lines, t->log);
        if (system(cmd) != 0)
                fprintf(stderr, "(cannot show it)\n");
}
