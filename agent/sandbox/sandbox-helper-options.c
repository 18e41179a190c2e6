/* The command line of muranoagent-sandbox (documented in usage() and
 * docs/sandbox.md), and the status line every failure ends with. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox-helper.h"
#include "sandbox-protocol.h"

enum {
        OPT_CHDIR = 256,
        OPT_ENV,
        OPT_RLIMIT_CPU,
        OPT_RLIMIT_AS,
        OPT_RLIMIT_NOFILE,
        OPT_RLIMIT_NPROC,
        OPT_NO_NEW_PRIVS,
        OPT_DROP_CAPS,
        OPT_USER,
        OPT_GROUP,
        OPT_UNSHARE_MOUNT,
        OPT_UNSHARE_PID,
        OPT_UNSHARE_IPC,
        OPT_UNSHARE_UTS,
        OPT_UNSHARE_NET,
        OPT_PRIVATE_TMP,
        OPT_READ_ONLY,
        OPT_WRITABLE,
        OPT_MASK,
        OPT_PROTECT_KERNEL,
        OPT_CGROUP,
        OPT_OOM_SCORE_ADJ,
        OPT_STATUS_FD,
        OPT_DIE_WITH_PARENT,
        OPT_HELP,
};

static const struct option long_options[] = {
        {"chdir", required_argument, NULL, OPT_CHDIR},
        {"env", required_argument, NULL, OPT_ENV},
        {"rlimit-cpu", required_argument, NULL, OPT_RLIMIT_CPU},
        {"rlimit-as", required_argument, NULL, OPT_RLIMIT_AS},
        {"rlimit-nofile", required_argument, NULL, OPT_RLIMIT_NOFILE},
        {"rlimit-nproc", required_argument, NULL, OPT_RLIMIT_NPROC},
        {"no-new-privs", no_argument, NULL, OPT_NO_NEW_PRIVS},
        {"drop-capabilities", required_argument, NULL, OPT_DROP_CAPS},
        {"user", required_argument, NULL, OPT_USER},
        {"group", required_argument, NULL, OPT_GROUP},
        {"unshare-mount", no_argument, NULL, OPT_UNSHARE_MOUNT},
        {"unshare-pid", no_argument, NULL, OPT_UNSHARE_PID},
        {"unshare-ipc", no_argument, NULL, OPT_UNSHARE_IPC},
        {"unshare-uts", no_argument, NULL, OPT_UNSHARE_UTS},
        {"unshare-net", no_argument, NULL, OPT_UNSHARE_NET},
        {"private-tmp", no_argument, NULL, OPT_PRIVATE_TMP},
        {"read-only", required_argument, NULL, OPT_READ_ONLY},
        {"writable", required_argument, NULL, OPT_WRITABLE},
        {"mask", required_argument, NULL, OPT_MASK},
        {"protect-kernel", no_argument, NULL, OPT_PROTECT_KERNEL},
        {"cgroup", required_argument, NULL, OPT_CGROUP},
        {"oom-score-adj", required_argument, NULL, OPT_OOM_SCORE_ADJ},
        {"status-fd", required_argument, NULL, OPT_STATUS_FD},
        {"die-with-parent", no_argument, NULL, OPT_DIE_WITH_PARENT},
        {"help", no_argument, NULL, OPT_HELP},
        {NULL, 0, NULL, 0},
};

static const struct {
        int option;
        int resource;
        const char *name;
} rlimit_options[] = {
        {OPT_RLIMIT_CPU, RLIMIT_CPU, "cpu"},
        {OPT_RLIMIT_AS, RLIMIT_AS, "as"},
        {OPT_RLIMIT_NOFILE, RLIMIT_NOFILE, "nofile"},
        {OPT_RLIMIT_NPROC, RLIMIT_NPROC, "nproc"},
};

static const struct {
        int option;
        int flag;
} unshare_options[] = {
        {OPT_UNSHARE_MOUNT, CLONE_NEWNS}, {OPT_UNSHARE_PID, CLONE_NEWPID},
        {OPT_UNSHARE_IPC, CLONE_NEWIPC},  {OPT_UNSHARE_UTS, CLONE_NEWUTS},
        {OPT_UNSHARE_NET, CLONE_NEWNET},
};

int helper_status_fd = -1;

/* The line itself is written by the code the agent's own child uses too
 * (sandbox-steps.c), so both say a failure the same way. */
void helper_exit(int code, int err, const char *fmt, ...)
{
        SandboxStepError e = {.err = err};
        va_list ap;

        va_start(ap, fmt);
        (void)vsnprintf(e.what, sizeof(e.what), fmt, ap);
        va_end(ap);
        sandbox_steps_fail(helper_status_fd, code, &e);
}

static void usage(void)
{
        fputs("Usage: muranoagent-sandbox [OPTIONS] -- PROGRAM [ARGS...]\n"
              "Apply a sandbox to the current process, then execute PROGRAM.\n"
              "\n"
              "  --chdir DIR            working directory\n"
              "  --env NAME=VALUE       add to the environment (repeatable); nothing is inherited\n"
              "  --rlimit-cpu SECONDS   --rlimit-as BYTES   --rlimit-nofile N   --rlimit-nproc N\n"
              "                         soft and hard limits; the core size is always 0\n"
              "  --no-new-privs         set no_new_privs\n"
              "  --drop-capabilities MASK\n"
              "                         drop these capabilities (hex, bit N = capability N) from\n"
              "                         every set, the bounding set included\n"
              "  --user USER|UID        run as this user (default group: the user's own)\n"
              "  --group GROUP|GID      run with this group\n"
              "  --unshare-mount --unshare-pid --unshare-ipc --unshare-uts --unshare-net\n"
              "                         new namespaces (with pid: PROGRAM is pid 1)\n"
              "  --private-tmp          empty tmpfs on /tmp and /var/tmp (needs --unshare-mount)\n"
              "  --read-only PATH       PATH and all mounts below it read-only (repeatable)\n"
              "  --writable PATH        PATH writable again under a read-only parent (repeatable)\n"
              "  --mask PATH            hide PATH behind an empty view; --writable paths below\n"
              "                         it stay (repeatable)\n"
              "  --protect-kernel       /sys and /proc's kernel knobs read-only, no cgroupfs,\n"
              "                         a /dev without disks\n"
              "  --cgroup DIR           join the cgroup DIR before anything else (repeatable)\n"
              "  --oom-score-adj N      oom_score_adj N (0 to 1000), inherited by PROGRAM's "
              "children\n"
              "  --status-fd FD         on failure write one status line to FD too\n"
              "  --die-with-parent      SIGKILL when the parent exits\n"
              "  --help                 show this text\n"
              "\n"
              "Exit status: PROGRAM's own, or its death signal raised again; 125 when the\n"
              "sandbox cannot be set up, 126 when PROGRAM cannot be executed, 127 when it is\n"
              "not found. Those three come with a line \"muranoagent-sandbox: STEP: REASON\".\n",
              stdout);
}

static unsigned long long parse_number(const char *option, const char *s, unsigned long long max)
{
        unsigned long long v;
        char *end;

        errno = 0;
        if (*s < '0' || *s > '9')
                helper_die(0, "usage: --%s: '%s' is not a number", option, s);
        v = strtoull(s, &end, 10);
        if (errno != 0 || *end != '\0' || v > max)
                helper_die(0, "usage: --%s: '%s' is not a number up to %llu", option, s, max);
        return v;
}

/* "NAME=VALUE"; a later value for the same NAME replaces the earlier one. */
static void env_set(HelperOptions *o, char *assignment)
{
        const char *eq = strchr(assignment, '=');
        size_t name_len = eq ? (size_t)(eq - assignment) : 0;

        if (name_len == 0)
                helper_die(0, "usage: --env: '%s' is not NAME=VALUE", assignment);
        for (size_t i = 0; i < o->n_env; i++)
                if (strncmp(o->env[i], assignment, name_len + 1) == 0) {
                        o->env[i] = assignment;
                        return;
                }
        o->env[o->n_env++] = assignment;
}

static void check_absolute(const char *option, const char *path)
{
        if (path[0] != '/')
                helper_die(0, "usage: --%s: '%s' is not an absolute path", option, path);
}

/* A later value for the same limit replaces the earlier one. */
static void set_rlimit(HelperOptions *o, int option, rlim_t value)
{
        size_t i, j;

        for (i = 0; rlimit_options[i].option != option; i++)
                ;
        for (j = 0; j < o->n_rlimits && o->rlimits[j].resource != rlimit_options[i].resource; j++)
                ;
        o->rlimits[j].resource = rlimit_options[i].resource;
        o->rlimits[j].name = rlimit_options[i].name;
        o->rlimits[j].value = value;
        if (j == o->n_rlimits)
                o->n_rlimits++;
}

/* --status-fd is found in a first pass, so that every later complaint about
 * the command line reaches it too. */
static void find_status_fd(int argc, char **argv)
{
        unsigned long long fd = ULLONG_MAX;
        int c;

        opterr = 0;
        while ((c = getopt_long(argc, argv, "+", long_options, NULL)) != -1)
                if (c == OPT_STATUS_FD)
                        fd = parse_number("status-fd", optarg, INT_MAX);
        optind = 0;
        if (fd == ULLONG_MAX)
                return;
        if (fd < 3)
                helper_die(0, "usage: --status-fd must be 3 or more");
        /* The status fd must not outlive a successful exec: its end of file
         * is how the agent learns that setup went through. */
        if (fcntl((int)fd, F_SETFD, FD_CLOEXEC) < 0)
                helper_die(errno, "usage: --status-fd %llu", fd);
        helper_status_fd = (int)fd;
}

void helper_options_parse(HelperOptions *o, int argc, char **argv)
{
        size_t max = (size_t)argc + 1;
        int c, opt_index = 0;

        find_status_fd(argc, argv);
        o->env = calloc(max, sizeof(*o->env));
        o->cgroups = calloc(max, sizeof(*o->cgroups));
        o->mounts.read_only = calloc(max, sizeof(*o->mounts.read_only));
        o->mounts.writable = calloc(max, sizeof(*o->mounts.writable));
        o->mounts.masks = calloc(max, sizeof(*o->mounts.masks));
        if (!o->env || !o->cgroups || !o->mounts.read_only || !o->mounts.writable ||
            !o->mounts.masks)
                helper_die(ENOMEM, "parse the command line");

        while ((c = getopt_long(argc, argv, "+", long_options, &opt_index)) != -1) {
                const char *name = c >= OPT_CHDIR ? long_options[opt_index].name : "";

                switch (c) {
                case OPT_CHDIR:
                        o->chdir = optarg;
                        break;
                case OPT_ENV:
                        env_set(o, optarg);
                        break;
                case OPT_RLIMIT_CPU:
                case OPT_RLIMIT_AS:
                case OPT_RLIMIT_NOFILE:
                case OPT_RLIMIT_NPROC:
                        set_rlimit(o, c, parse_number(name, optarg, RLIM_INFINITY - 1));
                        break;
                case OPT_NO_NEW_PRIVS:
                        o->no_new_privs = true;
                        break;
                case OPT_DROP_CAPS: {
                        char *end;

                        errno = 0;
                        o->drop_caps = strtoull(optarg, &end, 16);
                        if (errno != 0 || end == optarg || *end != '\0')
                                helper_die(0, "usage: --drop-capabilities: '%s' is not a hex mask",
                                           optarg);
                        break;
                }
                case OPT_USER:
                        o->user = optarg;
                        break;
                case OPT_GROUP:
                        o->group = optarg;
                        break;
                case OPT_UNSHARE_MOUNT:
                case OPT_UNSHARE_PID:
                case OPT_UNSHARE_IPC:
                case OPT_UNSHARE_UTS:
                case OPT_UNSHARE_NET:
                        for (size_t i = 0; i < sizeof(unshare_options) / sizeof(unshare_options[0]);
                             i++)
                                if (unshare_options[i].option == c)
                                        o->unshare |= unshare_options[i].flag;
                        break;
                case OPT_PRIVATE_TMP:
                        o->mounts.private_tmp = true;
                        break;
                case OPT_READ_ONLY:
                        check_absolute("read-only", optarg);
                        o->mounts.read_only[o->mounts.n_read_only++] = optarg;
                        break;
                case OPT_WRITABLE:
                        check_absolute("writable", optarg);
                        o->mounts.writable[o->mounts.n_writable++] = optarg;
                        break;
                case OPT_MASK:
                        check_absolute("mask", optarg);
                        o->mounts.masks[o->mounts.n_masks++] = optarg;
                        break;
                case OPT_PROTECT_KERNEL:
                        o->mounts.protect_kernel = true;
                        break;
                case OPT_CGROUP:
                        check_absolute("cgroup", optarg);
                        o->cgroups[o->n_cgroups++] = optarg;
                        break;
                case OPT_OOM_SCORE_ADJ:
                        o->oom_score_adj = (int)parse_number(name, optarg, 1000);
                        o->set_oom_score_adj = true;
                        break;
                case OPT_STATUS_FD:
                        break;
                case OPT_DIE_WITH_PARENT:
                        o->die_with_parent = true;
                        break;
                case OPT_HELP:
                        usage();
                        exit(EXIT_SUCCESS);
                default:
                        helper_die(0, "usage: unknown option or missing value: '%s'",
                                   argv[optind - 1]);
                }
        }
        if (optind >= argc)
                helper_die(0, "usage: no PROGRAM given (see --help)");
        o->command = argv + optind;
        if (!(o->unshare & CLONE_NEWNS) &&
            (o->mounts.private_tmp || o->mounts.n_read_only > 0 || o->mounts.n_writable > 0 ||
             o->mounts.n_masks > 0 || o->mounts.protect_kernel))
                helper_die(0, "usage: --private-tmp, --read-only, --writable, --mask and "
                              "--protect-kernel need --unshare-mount");
        o->mounts.fresh_proc = (o->unshare & CLONE_NEWNS) && (o->unshare & CLONE_NEWPID);
}
