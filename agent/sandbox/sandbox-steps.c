/* The shared sandbox steps (see sandbox-steps.h). Built into the helper and
 * into agent-core; links libc only. */
#include "sandbox-steps.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/userdb.h"

/* ---- async-signal-safe text ---- */

typedef struct StepText {
        char *buf;
        size_t len, max; /* max excludes the room kept for the newline */
} StepText;

static void text_puts(StepText *t, const char *s)
{
        while (*s && t->len < t->max)
                t->buf[t->len++] = *s++;
}

static void text_putu(StepText *t, unsigned long long n)
{
        char digits[24];
        size_t k = sizeof(digits) - 1;

        digits[k] = '\0';
        do
                digits[--k] = (char)('0' + n % 10);
        while ((n /= 10) > 0);
        text_puts(t, digits + k);
}

/* Start e->what with s. */
static StepText step_begin(SandboxStepError *e, const char *s, int err)
{
        StepText t = {e->what, 0, sizeof(e->what) - 1};

        e->err = err;
        text_puts(&t, s);
        e->what[t.len] = '\0';
        return t;
}

static void step_end(SandboxStepError *e, StepText *t)
{
        e->what[t->len] = '\0';
}

static int step_fail(SandboxStepError *e, const char *what, int err)
{
        (void)step_begin(e, what, err);
        return -1;
}

static int step_fail_num(SandboxStepError *e, const char *what, unsigned long long n, int err)
{
        StepText t = step_begin(e, what, err);

        text_putu(&t, n);
        step_end(e, &t);
        return -1;
}

/* ---- identity (the parent's side) ---- */

/* e->what = a + b + c, for the messages that quote a name. */
static int fail3(SandboxStepError *e, const char *a, const char *b, const char *c)
{
        StepText t = step_begin(e, a, 0);

        text_puts(&t, b);
        text_puts(&t, c);
        step_end(e, &t);
        return -1;
}

int sandbox_identity_resolve(const char *user, const char *group, SandboxIdentity *id,
                             SandboxStepError *e)
{
        UserdbUser pw = {0};
        bool have_pw = false;
        unsigned n = 0;
        int r = 0;

        *id = (SandboxIdentity){0};
        if (user) {
                /* A number needs no passwd entry; a name does. */
                have_pw = userdb_user(user, &pw) == 0;
                if (!have_pw && !userdb_parse_id(user, &n))
                        return fail3(e, "user '", user, "': no such user");
                id->uid = have_pw ? pw.uid : (uid_t)n;
                id->set_uid = true;
        }
        if (group) {
                if (userdb_group(group, &id->gid) < 0) {
                        r = fail3(e, "group '", group, "': no such group");
                        goto out;
                }
        } else if (user) {
                if (!have_pw)
                        return fail3(e, "user ", user,
                                     ": no passwd entry to take a group from; give --group");
                id->gid = pw.gid;
        } else {
                return 0;
        }
        id->set_gid = true;

        /* A user with a passwd entry gets the groups it is a member of; a
         * bare number, or a group without a user, gets that one group and
         * nothing else. The first getgrouplist() call only counts. */
        id->n_groups = 0;
        if (have_pw)
                (void)getgrouplist(pw.name, id->gid, NULL, &id->n_groups);
        if (id->n_groups < 1)
                id->n_groups = 1;
        id->groups = calloc((size_t)id->n_groups, sizeof(gid_t));
        if (!id->groups) {
                r = step_fail(e, "supplementary groups", ENOMEM);
                goto out;
        }
        id->groups[0] = id->gid;
        if (have_pw && getgrouplist(pw.name, id->gid, id->groups, &id->n_groups) < 0) {
                sandbox_identity_clear(id);
                r = fail3(e, "user '", user, "': cannot list its groups");
        }
out:
        userdb_user_clear(&pw);
        return r;
}

void sandbox_identity_clear(SandboxIdentity *id)
{
        free(id->groups);
        *id = (SandboxIdentity){0};
}

/* ---- the steps (async-signal-safe) ---- */

int sandbox_steps_oom_score_adj(int proc_fd, int value, SandboxStepError *e)
{
        char text[16];
        StepText t = {text, 0, sizeof(text) - 1};
        int fd, err = 0;
        ssize_t n;

        if (value < 0) {
                text_puts(&t, "-");
                text_putu(&t, (unsigned long long)-(long long)value);
        } else {
                text_putu(&t, (unsigned long long)value);
        }
        text[t.len++] = '\n';
        fd = proc_fd >= 0 ? openat(proc_fd, "self/oom_score_adj", O_WRONLY | O_CLOEXEC)
                          : open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                err = errno;
        else if ((n = write(fd, text, t.len)) != (ssize_t)t.len)
                err = n < 0 ? errno : EIO;
        if (fd >= 0)
                (void)close(fd);
        if (proc_fd >= 0)
                (void)close(proc_fd);
        if (err != 0) {
                StepText s = step_begin(e, "oom_score_adj ", err);

                text[--t.len] = '\0';
                text_puts(&s, text);
                step_end(e, &s);
                return -1;
        }
        return 0;
}

int sandbox_steps_rlimits(const SandboxRlimit *l, size_t n, SandboxStepError *e)
{
        for (size_t i = 0; i < n; i++) {
                struct rlimit rl = {l[i].value, l[i].value};

                if (setrlimit(l[i].resource, &rl) < 0) {
                        StepText t = step_begin(e, "rlimit ", errno);

                        text_puts(&t, l[i].name);
                        text_puts(&t, " ");
                        text_putu(&t, (unsigned long long)rl.rlim_cur);
                        step_end(e, &t);
                        return -1;
                }
        }
        if (setrlimit(RLIMIT_CORE, &(struct rlimit){0, 0}) < 0)
                return step_fail(e, "rlimit core 0", errno);
        return 0;
}

int sandbox_steps_identity(const SandboxIdentity *id, SandboxStepError *e)
{
        if (!id->set_gid)
                return 0;
        if (syscall(SYS_setgroups, (size_t)id->n_groups, id->groups) < 0)
                return step_fail(e, "setgroups", errno);
        if (syscall(SYS_setresgid, id->gid, id->gid, id->gid) < 0)
                return step_fail_num(e, "setresgid ", id->gid, errno);
        if (id->set_uid && syscall(SYS_setresuid, id->uid, id->uid, id->uid) < 0)
                return step_fail_num(e, "setresuid ", id->uid, errno);
        return 0;
}

int sandbox_steps_caps_bound(uint64_t mask, SandboxStepError *e)
{
        for (unsigned n = 0; n < 64; n++) {
                if (!((mask >> n) & 1))
                        continue;
                /* EINVAL: a capability newer than this kernel, which no
                 * process can hold. */
                if (prctl(PR_CAPBSET_DROP, (unsigned long)n, 0, 0, 0) < 0 && errno != EINVAL)
                        return step_fail_num(e, "drop capability ", n, errno);
        }
        return 0;
}

int sandbox_steps_caps_drop(uint64_t mask, SandboxStepError *e)
{
        struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
        struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

        if (mask == 0)
                return 0;
        /* The ambient set (Linux 4.3 and later; EINVAL before: none). */
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
                return step_fail(e, "clear ambient capabilities", errno);
        if (syscall(SYS_capget, &hdr, data) < 0)
                return step_fail(e, "capget", errno);
        for (unsigned i = 0; i < _LINUX_CAPABILITY_U32S_3; i++) {
                uint32_t keep = ~(uint32_t)(mask >> (32 * i));

                data[i].effective &= keep;
                data[i].permitted &= keep;
                data[i].inheritable &= keep;
        }
        if (syscall(SYS_capset, &hdr, data) < 0)
                return step_fail(e, "capset", errno);
        return 0;
}

int sandbox_steps_no_new_privs(SandboxStepError *e)
{
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return step_fail(e, "no_new_privs", errno);
        return 0;
}

int sandbox_steps_die_with_parent(pid_t parent, int alive_fd, SandboxStepError *e)
{
        struct pollfd p = {alive_fd, POLLIN, 0};

        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                return step_fail(e, "die with parent", errno);
        /* Inside a pid namespace getppid() is 0 whoever the parent is, so
         * pid 1 watches the supervisor's end of a pipe instead. */
        if (alive_fd >= 0 ? poll(&p, 1, 0) != 0 : getppid() != parent)
                return step_fail(e, "die with parent: the parent has exited", 0);
        return 0;
}

int sandbox_steps_chdir(const char *dir, SandboxStepError *e)
{
        if (chdir(dir) < 0) {
                StepText t = step_begin(e, "chdir ", errno);

                text_puts(&t, dir);
                step_end(e, &t);
                return -1;
        }
        return 0;
}

/* Write "0" (the writer) to dir/name: 0, or an errno. */
static int write_zero(const char *dir, const char *name)
{
        size_t len = strlen(dir), name_len = strlen(name);
        char path[PATH_MAX];
        int fd, err;

        if (len + 1 + name_len + 1 > sizeof(path))
                return ENAMETOOLONG;
        memcpy(path, dir, len);
        path[len] = '/';
        memcpy(path + len + 1, name, name_len + 1);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return errno;
        err = write(fd, "0", 1) == 1 ? 0 : errno ? errno : EIO;
        close(fd);
        return err;
}

int sandbox_steps_join_cgroups(const char *const *dirs, size_t n, SandboxStepError *e)
{
        for (size_t i = 0; i < n; i++) {
                /* A v1 cgroup has "tasks", which moves the writing thread
                 * alone, without the lock on every thread group that
                 * cgroup.procs takes and its RCU grace period (10 ms per
                 * hierarchy on the CI machine when scripts are spaced
                 * out). The caller has one thread, so that moves the
                 * process. A v2 cgroup has no "tasks". */
                int err = write_zero(dirs[i], "tasks");

                if (err == ENOENT)
                        err = write_zero(dirs[i], "cgroup.procs");
                if (err) {
                        StepText t = step_begin(e, "cgroup ", err);

                        text_puts(&t, dirs[i]);
                        step_end(e, &t);
                        return -1;
                }
        }
        return 0;
}

void sandbox_steps_exec_error(const char *program, int err, SandboxStepError *e)
{
        StepText t = step_begin(e, "exec ", err);

        text_puts(&t, program);
        step_end(e, &t);
}

int sandbox_steps_exec_status(int err)
{
        return err == ENOENT ? SANDBOX_EXIT_NOT_FOUND : SANDBOX_EXIT_CANNOT_EXEC;
}

static void write_ignoring_errors(int fd, const char *s, size_t n)
{
        while (n > 0) {
                ssize_t k = write(fd, s, n);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return;
                s += k;
                n -= (size_t)k;
        }
}

void sandbox_steps_fail(int status_fd, int code, const SandboxStepError *e)
{
        char line[SANDBOX_STATUS_MAX];
        StepText t = {line, 0, sizeof(line) - 1};
        struct sigaction ign = {.sa_handler = SIG_IGN};

        /* A reader that went away must not turn our exit into SIGPIPE. */
        (void)sigaction(SIGPIPE, &ign, NULL);
        text_puts(&t, SANDBOX_STATUS_PREFIX);
        text_puts(&t, e->what);
        if (e->err != 0) {
                const char *reason = strerrordesc_np(e->err);

                text_puts(&t, ": ");
                if (reason) {
                        text_puts(&t, reason);
                } else {
                        text_puts(&t, "Unknown error ");
                        text_putu(&t, (unsigned long long)e->err);
                }
        }
        line[t.len++] = '\n';
        /* One write each, so that a reader sees the whole line at once. A
         * failed write cannot be reported anywhere else. */
        if (status_fd >= 0)
                write_ignoring_errors(status_fd, line, t.len);
        write_ignoring_errors(STDERR_FILENO, line, t.len);
        _exit(code);
}
