/* Tests for sandbox/sandbox.h: the exact helper command line, environment
 * and log line for several configurations, and the two system lookups; and
 * for sandbox/sandbox-direct.h: every step of the in-process path checked
 * from inside a script, and every failure's status line, each the same as
 * the helper's. Only the identity checks need root. The helper itself is tested by
 * test-sandbox-helper.sh, the cgroups by test-sandbox-cgroup.c. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child/child.h"
#include "config/config.h"
#include "sandbox/sandbox-direct.h"
#include "sandbox/sandbox-steps.h"
#include "sandbox/sandbox.h"
#include "util/macro.h"
#include "test-lib.h"

static Config *cfg;

static void cfg_setup(void)
{
        ck_assert_int_eq(config_new_default(&cfg), 0);
}

static void cfg_teardown(void)
{
        cfg = config_free(cfg);
}

static const char *const agent_env[] = {
        "SHELL=/bin/bash",
        "http_proxy=http://user:pw@proxy:3128",
        "PATH=/opt/bin:/usr/bin",
        "SECRET=x",
        "LC_ALL=C",
        NULL,
};
static const char *const command[] = {"/bin/sh", "-c", "./\"deploy.sh\" -v", NULL};
static const char *const cgroups[] = {"/sys/fs/cgroup/memory/muranoagent-p-1",
                                      "/sys/fs/cgroup/pids/muranoagent-p-1"};
static const char *const plan_dirs[] = {"/var/lib/murano/files/p1"};

static SandboxRun base_run(void)
{
        return (SandboxRun){
                .helper = "/usr/libexec/muranoagent/muranoagent-sandbox",
                .workdir = "/var/lib/murano/files/p1/s1",
                .agent_env = agent_env,
                .status_fd = 3,
                .command = command,
                .force_helper = true,
        };
}

static void assert_strv(char **got, const char *const *want)
{
        size_t i = 0;

        for (; want[i]; i++) {
                ck_assert_msg(got[i] != NULL, "item %zu missing, want '%s'", i, want[i]);
                ck_assert_str_eq(got[i], want[i]);
        }
        ck_assert_msg(got[i] == NULL, "extra item %zu: '%s'", i, got[i]);
}

/* The defaults: root kept, nofile 1024, no_new_privs, no namespaces. */
START_TEST(test_build_defaults)
{
        _cleanup_(sandbox_command_freep) SandboxCommand *c = NULL;
        SandboxRun run = base_run();
        static const char *const want[] = {
                "/usr/libexec/muranoagent/muranoagent-sandbox",
                "--die-with-parent",
                "--status-fd=3",
                "--rlimit-nofile=1024",
                "--no-new-privs",
                "--chdir=/var/lib/murano/files/p1/s1",
                "--env=PATH=/opt/bin:/usr/bin",
                "--env=LC_ALL=C",
                "--env=http_proxy=http://user:pw@proxy:3128",
                "--env=HOME=/root",
                "--env=LANG=C.UTF-8",
                "--",
                "/bin/sh",
                "-c",
                "./\"deploy.sh\" -v",
                NULL,
        };
        static const char *const none[] = {NULL};

        ck_assert_int_eq(sandbox_build(&cfg->sandbox, &run, &c), 0);
        assert_strv(c->argv, want);
        assert_strv(c->envp, none);
}
END_TEST

/* A v2 run cgroup that the spawn enters (clone3 with CLONE_INTO_CGROUP):
 * no --cgroup for the helper, and the log line still counts it. */
START_TEST(test_build_cgroup_at_spawn)
{
        _cleanup_(sandbox_command_freep) SandboxCommand *c = NULL, *h = NULL;
        _cleanup_free_ char *line = NULL;
        static const char *const v2[] = {"/sys/fs/cgroup/agent.slice/muranoagent-p-1"};
        SandboxRun run = base_run();

        run.cgroups = v2;
        run.n_cgroups = 1;
        ck_assert_int_eq(sandbox_build(&cfg->sandbox, &run, &h), 0);
        ck_assert_str_eq(h->argv[2], "--status-fd=3");
        ck_assert_str_eq(h->argv[3], "--cgroup=/sys/fs/cgroup/agent.slice/muranoagent-p-1");
        ck_assert_str_eq(h->argv[4], "--rlimit-nofile=1024");
        run.cgroups_at_spawn = true;
        ck_assert_int_eq(sandbox_build(&cfg->sandbox, &run, &c), 0);
        ck_assert_str_eq(c->argv[2], "--status-fd=3");
        ck_assert_str_eq(c->argv[3], "--rlimit-nofile=1024");
        for (size_t i = 0; c->argv[i]; i++)
                ck_assert_msg(strncmp(c->argv[i], "--cgroup", 8) != 0, "%s", c->argv[i]);
        ck_assert_int_eq(sandbox_describe(&cfg->sandbox, &run, &line), 0);
        ck_assert_ptr_nonnull(strstr(line, " cgroups=1 "));
}
END_TEST

/* Without namespaces or a cgroup to join, no helper: the command itself,
 * with the clean environment, and the log line says so. */
START_TEST(test_build_in_process)
{
        _cleanup_(sandbox_command_freep) SandboxCommand *c = NULL, *d = NULL, *e = NULL;
        _cleanup_free_ char *line = NULL;
        struct ConfigSandbox s = cfg->sandbox;
        SandboxRun run = base_run();
        static const char *const env[] = {"PATH=/opt/bin:/usr/bin",
                                          "LC_ALL=C",
                                          "http_proxy=http://user:pw@proxy:3128",
                                          "HOME=/root",
                                          "LANG=C.UTF-8",
                                          NULL};

        run.force_helper = false;
        ck_assert(!sandbox_uses_helper(&s, &run));
        ck_assert_int_eq(sandbox_build(&s, &run, &c), 0);
        ck_assert(c->in_process);
        assert_strv(c->argv, command);
        assert_strv(c->envp, env);
        ck_assert_int_eq(sandbox_describe(&s, &run, &line), 0);
        ck_assert_str_eq(line, "sandbox: user=root group=root no_new_privs "
                               "rlimits=nofile:1024,core:0 namespaces=none cgroups=0 "
                               "env=PATH,LC_ALL,http_proxy,HOME,LANG path=in-process");

        /* A v1 cgroup to join: the child joins it (sandbox_direct_new());
         * the helper does when it is forced. Any namespace: the helper. */
        run.cgroups = cgroups;
        run.n_cgroups = 2;
        ck_assert(!sandbox_uses_helper(&s, &run));
        run.force_helper = true;
        ck_assert(sandbox_uses_helper(&s, &run));
        ck_assert_int_eq(sandbox_build(&s, &run, &d), 0);
        ck_assert(!d->in_process);
        ck_assert_str_eq(d->argv[3], "--cgroup=/sys/fs/cgroup/memory/muranoagent-p-1");
        run.force_helper = false;
        run.n_cgroups = 0;
        s.uts_namespace = true;
        ck_assert(sandbox_uses_helper(&s, &run));
        s.uts_namespace = false;
        s.enabled = false;
        ck_assert(!sandbox_uses_helper(&s, &run));
        ck_assert_int_eq(sandbox_build(&s, &run, &e), 0);
        ck_assert(!e->in_process);
}
END_TEST

/* Every feature on, in the helper's order of operations. */
START_TEST(test_build_everything)
{
        _cleanup_(sandbox_command_freep) SandboxCommand *c = NULL;
        struct ConfigSandbox s = cfg->sandbox; /* a shallow copy: cfg keeps its strings */
        SandboxRun run = base_run();
        static const char *const want[] = {
                "/usr/libexec/muranoagent/muranoagent-sandbox",
                "--die-with-parent",
                "--cgroup=/sys/fs/cgroup/memory/muranoagent-p-1",
                "--cgroup=/sys/fs/cgroup/pids/muranoagent-p-1",
                "--unshare-mount",
                "--unshare-pid",
                "--unshare-ipc",
                "--unshare-uts",
                "--unshare-net",
                "--private-tmp",
                "--read-only=/",
                "--writable=/var/lib/murano/files/p1",
                "--rlimit-cpu=600",
                "--rlimit-as=1073741824",
                "--rlimit-nofile=64",
                "--rlimit-nproc=50",
                "--user=nobody",
                "--group=nogroup",
                "--chdir=/var/lib/murano/files/p1/s1",
                "--env=PATH=" SANDBOX_DEFAULT_PATH,
                "--env=HOME=/nonexistent",
                "--env=LANG=C.UTF-8",
                "--",
                "/bin/sh",
                "-c",
                "./\"deploy.sh\" -v",
                NULL,
        };

        s.user = (char *)"nobody";
        s.group = (char *)"nogroup";
        s.rlimit_cpu = 600;
        s.rlimit_as = 1u << 30;
        s.rlimit_nofile = 64;
        s.rlimit_nproc = 50;
        s.no_new_privs = false;
        s.mount_namespace = s.pid_namespace = s.ipc_namespace = true;
        s.uts_namespace = s.network_namespace = true;
        /* Nothing passed through: HOME comes from the run, the rest are
         * the defaults, and the agent's HOME stays out. */
        s.env_passthrough.n = 0;
        run.status_fd = -1;
        run.cgroups = cgroups;
        run.n_cgroups = 2;
        run.writable = plan_dirs;
        run.n_writable = 1;
        run.home = "/nonexistent";
        run.agent_env = (const char *const[]){"HOME=/root", NULL};

        ck_assert_int_eq(sandbox_build(&s, &run, &c), 0);
        assert_strv(c->argv, want);
}
END_TEST

/* A contained run: writable / (no --read-only, no private /tmp), the plan's
 * directory bound, the agent's paths and hide_paths masked, the kernel
 * protected, capabilities dropped after the rlimits, before the identity. */
START_TEST(test_build_contained)
{
        _cleanup_(sandbox_command_freep) SandboxCommand *c = NULL;
        _cleanup_free_ char *line = NULL;
        struct ConfigSandbox s = cfg->sandbox;
        SandboxRun run = base_run();
        static const char *const agent_paths[] = {"/var/lib/murano", "/etc/murano/agent.conf"};
        static char *const hide[] = {(char *)"/run/dbus/system_bus_socket"};
        static const char *const want[] = {
                "/usr/libexec/muranoagent/muranoagent-sandbox",
                "--die-with-parent",
                "--status-fd=3",
                "--unshare-mount",
                "--unshare-pid",
                "--writable=/var/lib/murano/files/p1",
                "--mask=/var/lib/murano",
                "--mask=/etc/murano/agent.conf",
                "--mask=/run/dbus/system_bus_socket",
                "--protect-kernel",
                "--rlimit-nofile=1024",
                "--drop-capabilities=8200000",
                "--no-new-privs",
                "--chdir=/var/lib/murano/files/p1/s1",
        };

        s.profile = CONFIG_PROFILE_CONTAINED;
        s.mount_namespace = s.pid_namespace = true;
        s.read_only_root = false;
        s.hide_agent = s.protect_kernel = true;
        s.hide_paths = (ConfigStrv){(char **)hide, 1};
        s.drop_capabilities = (UINT64_C(1) << 21) | (UINT64_C(1) << 27);
        run.writable = plan_dirs;
        run.n_writable = 1;
        run.agent_paths = agent_paths;
        run.n_agent_paths = 2;
        ck_assert_int_eq(sandbox_build(&s, &run, &c), 0);
        for (size_t i = 0; i < ELEMENTSOF(want); i++)
                ck_assert_str_eq(c->argv[i], want[i]);
        ck_assert_int_eq(strncmp(c->argv[ELEMENTSOF(want)], "--env=", 6), 0);
        ck_assert_int_eq(sandbox_describe(&s, &run, &line), 0);
        ck_assert_ptr_nonnull(strstr(line, "sandbox: profile=contained user=root group=root "
                                           "no_new_privs drop_capabilities=2 rlimits="));
        ck_assert_ptr_nonnull(strstr(line, " namespaces=mount,pid mounts=writable:1 hidden=3 "
                                           "protect_kernel cgroups=0 "));

        /* The agent's downloads keep the network under network_namespace. */
        s.network_namespace = true;
        sandbox_command_freep(&c);
        ck_assert_int_eq(sandbox_build(&s, &run, &c), 0);
        ck_assert_str_eq(c->argv[5], "--unshare-net");
        run.keep_network = true;
        sandbox_command_freep(&c);
        ck_assert_int_eq(sandbox_build(&s, &run, &c), 0);
        ck_assert_str_eq(c->argv[5], "--writable=/var/lib/murano/files/p1");
        s.network_namespace = run.keep_network = false;

        /* Without the mount namespace the masks still go to the helper,
         * which refuses them rather than run the script unprotected. */
        s.mount_namespace = s.pid_namespace = false;
        run.force_helper = false;
        ck_assert(sandbox_uses_helper(&s, &run));
        s.hide_agent = s.protect_kernel = false;
        s.hide_paths.n = 0;
        ck_assert(!sandbox_uses_helper(&s, &run));
}
END_TEST

/* The working directory is made writable unless a plan directory holds it. */
START_TEST(test_build_writable_workdir)
{
        _cleanup_(sandbox_command_freep) SandboxCommand *c = NULL;
        SandboxRun run = base_run();
        static const char *const others[] = {"/srv/a", "/var/lib/murano/files/p10"};

        cfg->sandbox.mount_namespace = true;
        run.writable = others;
        run.n_writable = 2;
        ck_assert_int_eq(sandbox_build(&cfg->sandbox, &run, &c), 0);
        ck_assert_str_eq(c->argv[2], "--status-fd=3");
        ck_assert_str_eq(c->argv[3], "--unshare-mount");
        ck_assert_str_eq(c->argv[4], "--private-tmp");
        ck_assert_str_eq(c->argv[5], "--read-only=/");
        ck_assert_str_eq(c->argv[6], "--writable=/var/lib/murano/files/p1/s1");
        ck_assert_str_eq(c->argv[7], "--writable=/srv/a");
        ck_assert_str_eq(c->argv[8], "--writable=/var/lib/murano/files/p10");
        ck_assert_str_eq(c->argv[9], "--rlimit-nofile=1024");
}
END_TEST

/* Without the sandbox the reference's way: the command and all of environ. */
START_TEST(test_build_disabled)
{
        _cleanup_(sandbox_command_freep) SandboxCommand *c = NULL;
        SandboxRun run = base_run();
        _cleanup_free_ char *line = NULL;

        cfg->sandbox.enabled = false;
        run.helper = NULL;
        ck_assert_int_eq(sandbox_build(&cfg->sandbox, &run, &c), 0);
        assert_strv(c->argv, command);
        assert_strv(c->envp, agent_env);
        ck_assert_int_eq(sandbox_describe(&cfg->sandbox, &run, &line), 0);
        ck_assert_str_eq(line, "sandbox: disabled (scripts run with the agent's identity, limits "
                               "and environment)");
}
END_TEST

START_TEST(test_build_invalid)
{
        SandboxCommand *c = (SandboxCommand *)0x1;
        SandboxRun run = base_run();

        run.command = (const char *const[]){NULL};
        ck_assert_int_eq(sandbox_build(&cfg->sandbox, &run, &c), -EINVAL);
        run.command = NULL;
        ck_assert_int_eq(sandbox_build(&cfg->sandbox, &run, &c), -EINVAL);
        run = base_run();
        run.helper = NULL;
        ck_assert_int_eq(sandbox_build(&cfg->sandbox, &run, &c), -EINVAL);
        ck_assert_ptr_eq(c, (SandboxCommand *)0x1);
}
END_TEST

/* Table: passthrough list, agent environment, home -> clean environment. */
static const struct {
        const char *passthrough[4];
        const char *env[6];
        const char *home;
        const char *want[8];
} env_cases[] = {
        {{NULL},
         {"PATH=/x", NULL},
         NULL,
         {"PATH=" SANDBOX_DEFAULT_PATH, "HOME=/root", "LANG=C.UTF-8", NULL}},
        {{"PATH", "LANG", NULL},
         {"LANG=de_DE.UTF-8", "PATH=/x", "TERM=xterm", NULL},
         "/home/u",
         {"PATH=/x", "LANG=de_DE.UTF-8", "HOME=/home/u", NULL}},
        {{"A", "A", "HOME", NULL},
         {"A=1", "HOME=/h", "A=2", NULL},
         "/ignored",
         {"A=1", "HOME=/h", "PATH=" SANDBOX_DEFAULT_PATH, "LANG=C.UTF-8", NULL}},
        {{"AB", NULL},
         {"A=1", "ABC=2", "AB=", NULL},
         NULL,
         {"AB=", "PATH=" SANDBOX_DEFAULT_PATH, "HOME=/root", "LANG=C.UTF-8", NULL}},
};

START_TEST(test_environment)
{
        char **env = NULL;
        struct ConfigSandbox s = cfg->sandbox;
        size_t n = 0;

        while (env_cases[_i].passthrough[n])
                n++;
        s.env_passthrough.items = (char **)env_cases[_i].passthrough;
        s.env_passthrough.n = n;
        ck_assert_int_eq(sandbox_environment(&s, env_cases[_i].env, env_cases[_i].home, &env), 0);
        assert_strv(env, env_cases[_i].want);
        for (size_t i = 0; env[i]; i++)
                free(env[i]);
        free(env);
}
END_TEST

START_TEST(test_describe)
{
        _cleanup_free_ char *a = NULL, *b = NULL;
        SandboxRun run = base_run();

        ck_assert_int_eq(sandbox_describe(&cfg->sandbox, &run, &a), 0);
        ck_assert_str_eq(a, "sandbox: user=root group=root no_new_privs rlimits=nofile:1024,core:0 "
                            "namespaces=none cgroups=0 env=PATH,LC_ALL,http_proxy,HOME,LANG "
                            "path=helper");

        cfg->sandbox.mount_namespace = cfg->sandbox.pid_namespace = true;
        cfg->sandbox.no_new_privs = false;
        cfg->sandbox.rlimit_cpu = 5;
        run.cgroups = cgroups;
        run.n_cgroups = 2;
        run.writable = plan_dirs;
        run.n_writable = 1;
        ck_assert_int_eq(sandbox_describe(&cfg->sandbox, &run, &b), 0);
        ck_assert_str_eq(b, "sandbox: user=root group=root rlimits=cpu:5,nofile:1024,core:0 "
                            "namespaces=mount,pid mounts=read-only:/,private-tmp,writable:1 "
                            "cgroups=2 env=PATH,LC_ALL,http_proxy,HOME,LANG path=helper");
}
END_TEST

START_TEST(test_helper_path_env)
{
        _cleanup_free_ char *p = NULL;
        char *q = (char *)0x1, plain[] = "/tmp/test-sandbox-XXXXXX";
        int fd;

        ck_assert_int_eq(setenv("MURANOAGENT_SANDBOX", "/bin/true", 1), 0);
        ck_assert_int_eq(sandbox_helper_path(&p), 0);
        ck_assert_str_eq(p, "/bin/true");
        /* Set but wrong: an error, never another helper. */
        ck_assert_int_eq(setenv("MURANOAGENT_SANDBOX", "/nonexistent/helper", 1), 0);
        ck_assert_int_eq(sandbox_helper_path(&q), -ENOENT);
        /* A file without any execute bit is refused, even for root. */
        fd = mkstemp(plain);
        ck_assert_int_ge(fd, 0);
        close(fd);
        ck_assert_int_eq(setenv("MURANOAGENT_SANDBOX", plain, 1), 0);
        ck_assert_int_eq(sandbox_helper_path(&q), -EACCES);
        ck_assert_ptr_eq(q, (char *)0x1);
        unlink(plain);
        unsetenv("MURANOAGENT_SANDBOX");
}
END_TEST

/* Whether the scripts' user may read a file, by its mode bits. */
START_TEST(test_user_may_read)
{
        struct ConfigSandbox s = cfg->sandbox;
        char path[] = "/tmp/test-sandbox-conf-XXXXXX";
        struct group *gr = getgrnam("nogroup");
        int fd = mkstemp(path);

        ck_assert_int_ge(fd, 0);
        close(fd);
        /* root:root: scripts keep the agent's identity; nothing to say. */
        ck_assert_int_eq(sandbox_user_may_read(&s, path), 0);
        if (geteuid() != 0 || !getpwnam("nobody") || !gr) {
                printf("skipped: sandbox_user_may_read as nobody (not root, or no nobody)\n");
                unlink(path);
                return;
        }
        s.user = (char *)"nobody";
        s.group = (char *)"nogroup";
        ck_assert_int_eq(chown(path, 0, 0), 0);
        ck_assert_int_eq(chmod(path, 0644), 0);
        ck_assert_int_eq(sandbox_user_may_read(&s, path), 1);
        ck_assert_int_eq(chmod(path, 0600), 0);
        ck_assert_int_eq(sandbox_user_may_read(&s, path), 0);
        ck_assert_int_eq(chown(path, 0, gr->gr_gid), 0);
        ck_assert_int_eq(chmod(path, 0640), 0);
        ck_assert_int_eq(sandbox_user_may_read(&s, path), 1);
        s.enabled = false;
        ck_assert_int_eq(sandbox_user_may_read(&s, path), 0);
        s.enabled = true;
        s.user = (char *)"no-such-user-xyz";
        ck_assert_int_eq(sandbox_user_may_read(&s, path), -ENOENT);
        unlink(path);
        ck_assert_int_eq(sandbox_user_may_read(&cfg->sandbox, path), 0);
}
END_TEST

START_TEST(test_user_home)
{
        _cleanup_free_ char *a = NULL, *b = NULL;
        char *c = (char *)0x1;

        ck_assert_int_eq(sandbox_user_home("root", &a), 0);
        ck_assert_str_eq(a, "/root");
        ck_assert_int_eq(sandbox_user_home("0", &b), 0);
        ck_assert_str_eq(b, "/root");
        ck_assert_int_eq(sandbox_user_home("no-such-user-xyz", &c), -ENOENT);
        ck_assert_ptr_eq(c, (char *)0x1);
}
END_TEST

/* The helper beside the agent binary meson names, or in the build tree. */
static void find_helper(char path[static PATH_MAX])
{
        const char *env = getenv("MURANOAGENT_SANDBOX"), *agent = getenv("MURANOAGENT");
        char exe[PATH_MAX] = "";

        if (env)
                snprintf(path, PATH_MAX, "%s", env);
        else if (agent)
                snprintf(path, PATH_MAX, "%s/sandbox/muranoagent-sandbox",
                         dirname(strcpy(exe, agent)));
        else if (readlink("/proc/self/exe", exe, sizeof(exe) - 1) > 0)
                snprintf(path, PATH_MAX, "%s/../agent/sandbox/muranoagent-sandbox", dirname(exe));
}

/* Spawn c and return its stdout; *ret_status gets the wait status. */
static char *spawn(const SandboxCommand *c, int *ret_status)
{
        static char out[4096];
        size_t len = 0;
        ssize_t n;
        int fds[2];
        pid_t pid;

        ck_assert_int_eq(pipe2(fds, O_CLOEXEC), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                dup2(fds[1], STDOUT_FILENO);
                execve(c->argv[0], c->argv, c->envp);
                _exit(99);
        }
        close(fds[1]);
        while (len + 1 < sizeof(out) && (n = read(fds[0], out + len, sizeof(out) - len - 1)) > 0)
                len += (size_t)n;
        out[len] = '\0';
        close(fds[0]);
        ck_assert_int_eq(waitpid(pid, ret_status, 0), pid);
        return out;
}

/* What the builder writes, the helper understands: the defaults run as any
 * user; as root, the namespaces and a run-as user too. */
START_TEST(test_build_runs)
{
        _cleanup_(sandbox_command_freep) SandboxCommand *a = NULL, *b = NULL;
        struct ConfigSandbox s = cfg->sandbox;
        char helper[PATH_MAX], dir[PATH_MAX], exe[PATH_MAX] = "", want[PATH_MAX + 64];
        char nobody_dir[] = "/dev/shm/test-sandbox.XXXXXX";
        SandboxRun run = base_run();
        const char *out;
        int status;

        find_helper(helper);
        ck_assert_int_gt(readlink("/proc/self/exe", exe, sizeof(exe) - 1), 0);
        snprintf(dir, sizeof(dir), "%s", dirname(exe));
        run.helper = helper;
        run.workdir = dir;
        run.status_fd = -1;
        run.command = (const char *const[]){
                "/bin/sh", "-c",
                "echo $HOME $LANG $(ulimit -n) $(pwd) $(id -u); env | cut -d= -f1 | sort | xargs",
                NULL};
        ck_assert_int_eq(sandbox_build(&s, &run, &a), 0);
        /* sh adds PWD itself. */
        snprintf(want, sizeof(want),
                 "/root C.UTF-8 1024 %s %d\nHOME LANG LC_ALL PATH PWD http_proxy\n", dir,
                 (int)geteuid());
        ck_assert_str_eq(spawn(a, &status), want);
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);

        if (geteuid() != 0) {
                printf("skipped: namespaces and --user (not root)\n");
                return;
        }
        /* nobody works in a directory of its own that it can enter: the build
         * directory may be where nobody cannot (a checkout in /root), and the
         * private /tmp would hide one made there. */
        ck_assert_ptr_nonnull(mkdtemp(nobody_dir));
        ck_assert_int_eq(chmod(nobody_dir, 0755), 0);
        s.user = (char *)"nobody";
        s.group = (char *)"nogroup";
        s.mount_namespace = s.pid_namespace = s.ipc_namespace = s.uts_namespace = true;
        run.workdir = nobody_dir;
        run.command = (const char *const[]){
                "/bin/sh", "-c",
                "echo $$ $(id -u) $(pwd) $(ls -A /tmp | wc -l); touch /etc/x 2>/dev/null", NULL};
        ck_assert_int_eq(sandbox_build(&s, &run, &b), 0);
        snprintf(want, sizeof(want), "1 65534 %s 0\n", nobody_dir);
        out = spawn(b, &status);
        ck_assert_int_eq(rmdir(nobody_dir), 0);
        ck_assert_str_eq(out, want);
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1);
}
END_TEST

/* ---- the in-process path against the helper ---- */

typedef struct Outcome {
        int calls;
        int exit_code;
        int spawn_error;
        bool refused; /* in process: the kernel refused clone3 (valgrind does) */
        char *out;    /* owned */
        char status[600];
} Outcome;

static void outcome_done(Child *c, ChildResult *r, void *userdata)
{
        Outcome *o = userdata;

        (void)c;
        o->calls++;
        o->exit_code = child_result_exit_code(r);
        o->spawn_error = r->spawn_error;
        o->out = r->out.data;
        r->out.data = NULL;
}

/* Run the command of run under s, through the helper or in process, as the
 * runner does: the status pipe's write end as the child's fd 3. */
static void run_sandboxed(const struct ConfigSandbox *s, SandboxRun run, bool helper, Outcome *o)
{
        _cleanup_(sandbox_command_freep) SandboxCommand *c = NULL;
        _cleanup_(sandbox_direct_freep) SandboxDirect *d = NULL;
        char path[PATH_MAX];
        ChildSpec spec = {0};
        int status[2], r;
        uv_loop_t loop;
        ssize_t n;

        *o = (Outcome){0};
        find_helper(path);
        run.helper = path;
        run.status_fd = 3;
        run.force_helper = helper;
        ck_assert_int_eq(sandbox_build(s, &run, &c), 0);
        ck_assert(c->in_process == !helper);
        if (!helper)
                ck_assert_int_eq(sandbox_direct_new(s, &run, &d), 0);
        ck_assert_int_eq(pipe2(status, O_CLOEXEC), 0);
        spec.argv = c->argv;
        spec.envp = c->envp;
        spec.capture_stdout = true;
        spec.output_limit = 1 << 16;
        spec.extra_fds = &status[1];
        spec.n_extra_fds = 1;
        spec.kill_grace_ms = 1000;
        spec.pre_exec = d ? sandbox_direct_pre_exec : NULL;
        spec.exec_failed = d ? sandbox_direct_exec_failed : NULL;
        spec.exec_data = d;
        ck_assert_int_eq(uv_loop_init(&loop), 0);
        r = child_spawn(&loop, &spec, outcome_done, o, NULL);
        /* Without clone3 the hooks cannot run: the runner then takes the
         * helper, and so does this test. */
        o->refused = r == -EOPNOTSUPP && !helper;
        if (o->refused)
                ck_assert_int_eq(child_spawn_method(), CHILD_SPAWN_FORK);
        else
                ck_assert_int_eq(r, 0);
        close(status[1]);
        ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
        ck_assert_int_eq(uv_loop_close(&loop), 0);
        ck_assert_int_eq(o->calls, o->refused ? 0 : 1);
        n = read(status[0], o->status, sizeof(o->status) - 1);
        o->status[n > 0 ? n : 0] = '\0';
        close(status[0]);
}

/* Both paths, which must agree on everything; the in-process outcome is
 * returned for the exact checks. */
static void run_both(const struct ConfigSandbox *s, const SandboxRun *run, Outcome *direct)
{
        Outcome helper;

        run_sandboxed(s, *run, true, &helper);
        run_sandboxed(s, *run, false, direct);
        if (direct->refused) {
                printf("skipped: the in-process path (clone3 is refused here)\n");
                *direct = helper;
                return;
        }
        ck_assert_int_eq(direct->spawn_error, 0);
        ck_assert_int_eq(direct->exit_code, helper.exit_code);
        ck_assert_str_eq(direct->status, helper.status);
        ck_assert_str_eq(direct->out, helper.out);
        free(helper.out);
}

/* What a file of dir holds ("" when it is empty or missing). */
static void read_small(const char *dir, const char *name, char *buf, size_t size)
{
        char path[PATH_MAX];
        ssize_t n = 0;
        int fd;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
                n = read(fd, buf, size - 1);
                close(fd);
        }
        buf[n > 0 ? n : 0] = '\0';
}

static void touch(const char *dir, const char *name)
{
        char path[PATH_MAX];
        int fd;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ck_assert_int_ge(fd, 0);
        close(fd);
}

/* A v1 cgroup (it has "tasks") is joined through "tasks", which moves the
 * one thread without the kernel's RCU wait; a v2 one through cgroup.procs;
 * a directory with neither is a failure that names it. Regular files stand
 * in for the cgroup files. */
START_TEST(test_join_cgroups)
{
        char v1[] = "/tmp/test-sandbox-v1-XXXXXX", v2[] = "/tmp/test-sandbox-v2-XXXXXX";
        char none[] = "/tmp/test-sandbox-none-XXXXXX", got[64], want[256];
        SandboxStepError e = {{0}};

        ck_assert_ptr_nonnull(mkdtemp(v1));
        ck_assert_ptr_nonnull(mkdtemp(v2));
        ck_assert_ptr_nonnull(mkdtemp(none));
        touch(v1, "tasks");
        touch(v1, "cgroup.procs");
        touch(v2, "cgroup.procs");
        ck_assert_int_eq(sandbox_steps_join_cgroups((const char *const[]){v1, v2}, 2, &e), 0);
        read_small(v1, "tasks", got, sizeof(got));
        ck_assert_str_eq(got, "0");
        read_small(v1, "cgroup.procs", got, sizeof(got));
        ck_assert_str_eq(got, "");
        read_small(v2, "cgroup.procs", got, sizeof(got));
        ck_assert_str_eq(got, "0");

        ck_assert_int_eq(sandbox_steps_join_cgroups((const char *const[]){v2, none}, 2, &e), -1);
        snprintf(want, sizeof(want), "cgroup %s", none);
        ck_assert_str_eq(e.what, want);
        ck_assert_int_eq(e.err, ENOENT);

        for (int i = 0; i < 2; i++) {
                const char *d = i == 0 ? v1 : v2;
                char path[PATH_MAX];

                snprintf(path, sizeof(path), "%s/tasks", d);
                (void)unlink(path);
                snprintf(path, sizeof(path), "%s/cgroup.procs", d);
                (void)unlink(path);
        }
        ck_assert_int_eq(rmdir(v1), 0);
        ck_assert_int_eq(rmdir(v2), 0);
        ck_assert_int_eq(rmdir(none), 0);
}
END_TEST

/* Every step, seen from inside the script: identity (as root), limits,
 * no_new_privs, the exact environment, the directory, the status fd closed. */
START_TEST(test_direct_features)
{
        struct ConfigSandbox s = cfg->sandbox;
        SandboxRun run = base_run();
        char dir[] = "/tmp/test-sandbox-dir-XXXXXX", want[2048];
        bool root = geteuid() == 0;
        Outcome o;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_int_eq(chmod(dir, 0755), 0);
        if (root) {
                s.user = (char *)"nobody";
                s.group = (char *)"nogroup";
        }
        s.rlimit_cpu = 600;
        s.rlimit_as = 1 << 30;
        s.rlimit_nofile = 64;
        s.rlimit_nproc = 50;
        run.workdir = dir;
        run.command = (const char *const[]){
                "/bin/sh", "-c",
                "id -u; id -g; id -G; grep -E '^Max (cpu time|core file size|processes|open "
                "files|address space) ' /proc/self/limits | tr -s ' '; "
                "grep NoNewPrivs /proc/self/status; env | sort; pwd; "
                "if [ -e /proc/self/fd/3 ]; then echo fd3-open; else echo fd3-closed; fi",
                NULL};
        run_both(&s, &run, &o);
        ck_assert_int_eq(o.exit_code, 0);
        ck_assert_str_eq(o.status, "");
        snprintf(want, sizeof(want),
                 "%d\n%d\n%d\n"
                 "Max cpu time 600 600 seconds \nMax core file size 0 0 bytes \n"
                 "Max processes 50 50 processes \nMax open files 64 64 files \n"
                 "Max address space 1073741824 1073741824 bytes \n"
                 "NoNewPrivs:\t1\n"
                 "HOME=/root\nLANG=C.UTF-8\nLC_ALL=C\nPATH=/opt/bin:/usr/bin\nPWD=%s\n"
                 "http_proxy=http://user:pw@proxy:3128\n%s\nfd3-closed\n",
                 root ? 65534 : (int)geteuid(), root ? 65534 : (int)getegid(),
                 root ? 65534 : (int)getegid(), dir, dir);
        if (!root) /* the supplementary groups stay the test's own: not checked */
                *strchr(strchr(strchr(want, '\n') + 1, '\n') + 1, '\n') = '\0';
        if (root)
                ck_assert_str_eq(o.out, want);
        else
                ck_assert_int_eq(strncmp(o.out, want, strlen(want)), 0);
        free(o.out);
        rmdir(dir);
}
END_TEST

/* drop_capabilities, both ways: gone from the bounding, effective and
 * permitted sets of the script (root keeps the others). */
START_TEST(test_direct_capabilities)
{
        struct ConfigSandbox s = cfg->sandbox;
        SandboxRun run = base_run();
        uint64_t dropped = (UINT64_C(1) << 21) | (UINT64_C(1) << 19) | (UINT64_C(1) << 27);
        unsigned long long bnd, eff, prm;
        Outcome o;

        if (geteuid() != 0) {
                printf("skipped: drop_capabilities (not root)\n");
                return;
        }
        s.drop_capabilities = dropped;
        run.workdir = "/";
        run.command = (const char *const[]){
                "/bin/sh", "-c", "grep -E '^Cap(Bnd|Eff|Prm):' /proc/self/status | cut -f2 | xargs",
                NULL};
        run_both(&s, &run, &o);
        ck_assert_int_eq(o.exit_code, 0);
        ck_assert_int_eq(sscanf(o.out, "%llx %llx %llx", &prm, &eff, &bnd), 3);
        ck_assert_uint_eq(bnd & dropped, 0);
        ck_assert_uint_eq(eff & dropped, 0);
        ck_assert_uint_eq(prm & dropped, 0);
        ck_assert_uint_ne(bnd & (UINT64_C(1) << 0), 0); /* CAP_CHOWN stays */
        free(o.out);
}
END_TEST

static const struct {
        const char *user, *group, *workdir, *program;
        uint64_t nofile;
        const char *status;
        int exit_code;
} failures[] = {
        {NULL, NULL, "/nonexistent-dir", "/bin/true", 0,
         "muranoagent-sandbox: chdir /nonexistent-dir: No such file or directory\n", 125},
        {NULL, NULL, "/", "/nonexistent/prog", 0,
         "muranoagent-sandbox: exec /nonexistent/prog: No such file or directory\n", 127},
        {NULL, NULL, "/", "/etc/passwd", 0,
         "muranoagent-sandbox: exec /etc/passwd: Permission denied\n", 126},
        {"no-such-user-xyz", NULL, "/", "/bin/true", 0,
         "muranoagent-sandbox: user 'no-such-user-xyz': no such user\n", 125},
        {"root", "no-such-group-xyz", "/", "/bin/true", 0,
         "muranoagent-sandbox: group 'no-such-group-xyz': no such group\n", 125},
        {NULL, NULL, "/", "/bin/true", 1 << 30,
         "muranoagent-sandbox: rlimit nofile 1073741824: Operation not permitted\n", 125},
};

/* Each setup failure: the helper's status line and exit status, exactly. */
START_TEST(test_direct_failures)
{
        struct ConfigSandbox s = cfg->sandbox;
        SandboxRun run = base_run();
        Outcome o;

        if (failures[_i].user) {
                s.user = (char *)failures[_i].user;
                s.group = (char *)(failures[_i].group ? failures[_i].group : failures[_i].user);
        }
        if (failures[_i].nofile)
                s.rlimit_nofile = failures[_i].nofile;
        run.workdir = failures[_i].workdir;
        run.command = (const char *const[]){failures[_i].program, NULL};
        run_both(&s, &run, &o);
        ck_assert_str_eq(o.status, failures[_i].status);
        ck_assert_int_eq(o.exit_code, failures[_i].exit_code);
        ck_assert_str_eq(o.out, "");
        free(o.out);
}
END_TEST

/* The OOM killer picks the script: both paths start it at
 * SANDBOX_OOM_SCORE_ADJ, its children inherit that, the helper is told so
 * on its command line, the log says so, and no descriptor of /proc is left
 * to the script. */
START_TEST(test_direct_oom_score_adj)
{
        _cleanup_(sandbox_command_freep) SandboxCommand *c = NULL;
        _cleanup_free_ char *line = NULL;
        struct ConfigSandbox s = cfg->sandbox;
        SandboxRun run = base_run();
        bool found = false;
        Outcome o;

        run.oom_score_adj = true;
        run.force_helper = true;
        ck_assert_int_eq(sandbox_build(&s, &run, &c), 0);
        for (size_t i = 0; c->argv[i] && !streq(c->argv[i], "--"); i++)
                found = found || streq(c->argv[i], "--oom-score-adj=1000");
        ck_assert(found);
        ck_assert_int_eq(sandbox_describe(&s, &run, &line), 0);
        ck_assert_ptr_nonnull(strstr(line, " path=helper oom_score_adj=1000"));

        run.force_helper = false;
        run.workdir = "/";
        run.command = (const char *const[]){
                "/bin/sh", "-c",
                "cat /proc/self/oom_score_adj; sh -c 'cat /proc/self/oom_score_adj'; "
                "ls /proc/self/fd | xargs",
                NULL};
        run_both(&s, &run, &o);
        ck_assert_str_eq(o.status, "");
        ck_assert_int_eq(o.exit_code, 0);
        ck_assert_str_eq(o.out, "1000\n1000\n0 1 2 3\n");
        free(o.out);
}
END_TEST

static Suite *sandbox_suite(void)
{
        Suite *s = suite_create("sandbox");
        TCase *tc = tcase_create("build");

        tcase_add_checked_fixture(tc, cfg_setup, cfg_teardown);
        tcase_add_test(tc, test_build_defaults);
        tcase_add_test(tc, test_build_everything);
        tcase_add_test(tc, test_build_cgroup_at_spawn);
        tcase_add_test(tc, test_build_in_process);
        tcase_add_test(tc, test_build_writable_workdir);
        tcase_add_test(tc, test_build_contained);
        tcase_add_test(tc, test_build_disabled);
        tcase_add_test(tc, test_build_invalid);
        tcase_add_loop_test(tc, test_environment, 0, ELEMENTSOF(env_cases));
        tcase_add_test(tc, test_describe);
        suite_add_tcase(s, tc);

        tc = tcase_create("system");
        tcase_add_checked_fixture(tc, cfg_setup, cfg_teardown);
        tcase_add_test(tc, test_helper_path_env);
        tcase_add_test(tc, test_user_home);
        tcase_add_test(tc, test_user_may_read);
        tcase_add_test(tc, test_build_runs);
        tcase_add_test(tc, test_direct_features);
        tcase_add_test(tc, test_join_cgroups);
        tcase_add_test(tc, test_direct_capabilities);
        tcase_add_loop_test(tc, test_direct_failures, 0, ELEMENTSOF(failures));
        tcase_add_test(tc, test_direct_oom_score_adj);
        tcase_set_timeout(tc, 30);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return check_run(sandbox_suite());
}
