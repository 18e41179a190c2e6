/* Tests for sandbox/cgroup.h. The detection and creation logic runs against
 * fake sysfs trees (plain directories and files), with no privilege. The
 * real cases need root and a writable hierarchy, and say "skipped: reason"
 * when they have neither: v1 with a fork bomb held by pids.max and a memory
 * hog held by the memory limit, v2 killing a detached grandchild through
 * cgroup.kill; each checks that nothing is left afterwards. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/cgroup.h"
#include "util/fileio.h"
#include "util/macro.h"
#include "test-lib.h"

static char tmpdir[64];

static void tmp_setup(void)
{
        strcpy(tmpdir, "/tmp/test-cgroup-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void tmp_teardown(void)
{
        rm_rf(tmpdir);
}

/* Write text to tmpdir/rel, making the directories on the way. */
static void put(const char *rel, const char *text)
{
        char path[PATH_MAX];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
        for (char *p = path + strlen(tmpdir) + 1; (p = strchr(p, '/')); p++) {
                *p = '\0';
                ck_assert(mkdir(path, 0755) == 0 || errno == EEXIST);
                *p = '/';
        }
        f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fputs(text, f);
        fclose(f);
}

/* The text of path (absolute, or relative to tmpdir), or NULL. */
static char *slurp(const char *path)
{
        char full[PATH_MAX], *text = NULL;

        snprintf(full, sizeof(full), "%s%s%s", path[0] == '/' ? "" : tmpdir,
                 path[0] == '/' ? "" : "/", path);
        return file_read_all(full, 1 << 20, &text, NULL) == 0 ? text : NULL;
}

static void assert_file(const char *path, const char *want)
{
        _cleanup_free_ char *got = slurp(path);

        ck_assert_msg(got != NULL, "%s is missing", path);
        ck_assert_str_eq(got, want);
}

static CgroupOptions fake_options(ConfigCgroup mode, uint64_t memory_max, unsigned pids_max)
{
        static char sysfs[PATH_MAX], proc[PATH_MAX];

        snprintf(sysfs, sizeof(sysfs), "%s/sys", tmpdir);
        snprintf(proc, sizeof(proc), "%s/proc-self-cgroup", tmpdir);
        return (CgroupOptions){mode, memory_max, pids_max, sysfs, proc, 4242};
}

/* A pure v2 system, the agent alone in its service's cgroup: it moves into
 * a leaf "agent", enables memory and pids, and runs get both limits. */
START_TEST(test_v2_service)
{
        _cleanup_(cgroup_freep) Cgroup *cg = NULL;
        _cleanup_(cgroup_run_freep) CgroupRun *r1 = NULL, *r2 = NULL;
        _cleanup_free_ char *reason = NULL, *line = NULL;
        CgroupOptions o = fake_options(CONFIG_CGROUP_AUTO, 64 << 20, 20);
        const char *const *dirs;
        char want[PATH_MAX];
        size_t n;

        put("proc-self-cgroup", "0::/system.slice/murano-agent.service\n");
        put("sys/cgroup.controllers", "cpuset cpu io memory pids\n");
        put("sys/system.slice/murano-agent.service/cgroup.controllers", "memory pids\n");
        put("sys/system.slice/murano-agent.service/cgroup.subtree_control", "");
        put("sys/system.slice/murano-agent.service/cgroup.type", "domain\n");
        put("sys/system.slice/murano-agent.service/cgroup.procs", "4242\n");

        ck_assert_int_eq(cgroup_setup(&o, &cg, &reason), 0);
        ck_assert_ptr_null(reason);
        ck_assert_int_eq(cgroup_version(cg), CGROUP_VERSION_2);
        assert_file("sys/system.slice/murano-agent.service/agent/cgroup.procs", "4242");
        assert_file("sys/system.slice/murano-agent.service/cgroup.subtree_control",
                    "+memory +pids");
        ck_assert_int_eq(cgroup_describe(cg, &line), 0);
        snprintf(want, sizeof(want),
                 "cgroup v2 in %s/sys/system.slice/murano-agent.service; memory_max=67108864 "
                 "pids_max=20",
                 tmpdir);
        ck_assert_str_eq(line, want);

        ck_assert_int_eq(cgroup_run_new(cg, "../plan id/\xc3\xa9", &r1), 0);
        dirs = cgroup_run_dirs(r1, &n);
        ck_assert_uint_eq(n, 1);
        snprintf(want, sizeof(want),
                 "%s/sys/system.slice/murano-agent.service/muranoagent-.._plan_id___-1", tmpdir);
        ck_assert_str_eq(dirs[0], want);
        ck_assert_ptr_null(dirs[1]);
        assert_file("sys/system.slice/murano-agent.service/muranoagent-.._plan_id___-1/memory.max",
                    "67108864");
        assert_file("sys/system.slice/murano-agent.service/muranoagent-.._plan_id___-1/pids.max",
                    "20");

        /* The next run counts on; a name that exists is skipped. */
        ck_assert_int_eq(mkdir(strcat(strcpy(want, tmpdir), "/sys/system.slice/murano-agent."
                                                            "service/muranoagent-p-2"),
                               0755),
                         0);
        ck_assert_int_eq(cgroup_run_new(cg, "p", &r2), 0);
        snprintf(want, sizeof(want), "%s/sys/system.slice/murano-agent.service/muranoagent-p-3",
                 tmpdir);
        ck_assert_str_eq(cgroup_run_dirs(r2, NULL)[0], want);
}
END_TEST

/* Someone else's process in the agent's cgroup: v2 is not ours to take. */
START_TEST(test_v2_shared_cgroup)
{
        _cleanup_(cgroup_freep) Cgroup *cg = NULL;
        _cleanup_free_ char *reason = NULL, *forced = NULL;
        CgroupOptions o = fake_options(CONFIG_CGROUP_AUTO, 0, 10);
        char want[PATH_MAX];
        Cgroup *untouched = (Cgroup *)0x1;

        put("proc-self-cgroup", "0::/user.slice/session-1.scope\n");
        put("sys/cgroup.controllers", "memory pids\n");
        put("sys/user.slice/session-1.scope/cgroup.controllers", "memory pids\n");
        put("sys/user.slice/session-1.scope/cgroup.subtree_control", "");
        put("sys/user.slice/session-1.scope/cgroup.type", "domain\n");
        put("sys/user.slice/session-1.scope/cgroup.procs", "4242\n777\n");

        ck_assert_int_eq(cgroup_setup(&o, &cg, &reason), 0);
        ck_assert_int_eq(cgroup_version(cg), CGROUP_VERSION_NONE);
        snprintf(want, sizeof(want),
                 "cgroup v2: %s/sys/user.slice/session-1.scope also holds process 777, which is "
                 "not the agent; run the agent in a cgroup of its own (a systemd service with "
                 "Delegate=yes); cgroup v1: no cgroup v1 pids hierarchy in /proc/self/cgroup",
                 tmpdir);
        ck_assert_str_eq(reason, want);
        ck_assert_ptr_null(slurp("sys/user.slice/session-1.scope/agent/cgroup.procs"));

        o.mode = CONFIG_CGROUP_V2;
        ck_assert_int_eq(cgroup_setup(&o, &untouched, &forced), CGROUP_UNAVAILABLE);
        ck_assert_ptr_eq(untouched, (Cgroup *)0x1);
        ck_assert_ptr_nonnull(strstr(forced, "also holds process 777"));
        ck_assert_ptr_null(strstr(forced, "cgroup v1"));
}
END_TEST

/* The root cgroup may hold processes and still hand out controllers. */
START_TEST(test_v2_root)
{
        _cleanup_(cgroup_freep) Cgroup *cg = NULL;
        _cleanup_(cgroup_run_freep) CgroupRun *run = NULL;
        CgroupOptions o = fake_options(CONFIG_CGROUP_V2, 1000000, 0);

        put("proc-self-cgroup", "0::/\n");
        put("sys/cgroup.controllers", "memory pids\n");
        put("sys/cgroup.subtree_control", "");
        put("sys/cgroup.procs", "1\n4242\n");

        ck_assert_int_eq(cgroup_setup(&o, &cg, NULL), 0);
        ck_assert_int_eq(cgroup_version(cg), CGROUP_VERSION_2);
        assert_file("sys/cgroup.subtree_control", "+memory");
        ck_assert_ptr_null(slurp("sys/agent/cgroup.procs"));
        ck_assert_int_eq(cgroup_run_new(cg, "x", &run), 0);
        assert_file("sys/muranoagent-x-1/memory.max", "1000000");
        ck_assert_ptr_null(slurp("sys/muranoagent-x-1/pids.max"));
}
END_TEST

/* A hybrid system like this one: the v2 part has no controllers. With no
 * limit it still serves for the kill; with one, v1 takes over. */
START_TEST(test_hybrid)
{
        _cleanup_(cgroup_freep) Cgroup *a = NULL, *b = NULL;
        _cleanup_(cgroup_run_freep) CgroupRun *run = NULL;
        _cleanup_free_ char *line = NULL;
        CgroupOptions o = fake_options(CONFIG_CGROUP_AUTO, 0, 0);
        CgroupEvents ev;
        char want[PATH_MAX];
        size_t n;

        put("proc-self-cgroup", "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/abc\n"
                                "2:cpu,cpuacct:/\n0::/\n");
        put("sys/unified/cgroup.controllers", "hugetlb\n");
        put("sys/unified/cgroup.subtree_control", "");
        put("sys/unified/cgroup.procs", "4242\n");
        put("sys/pids/cgroup.procs", "");
        put("sys/memory/process_api/abc/cgroup.procs", "");

        ck_assert_int_eq(cgroup_setup(&o, &a, NULL), 0);
        ck_assert_int_eq(cgroup_version(a), CGROUP_VERSION_2);
        snprintf(want, sizeof(want), "cgroup v2 in %s/sys/unified; memory_max=0 pids_max=0",
                 tmpdir);
        ck_assert_int_eq(cgroup_describe(a, &line), 0);
        ck_assert_str_eq(line, want);
        free(line);
        line = NULL;

        o.memory_max = 5 << 20;
        o.pids_max = 7;
        ck_assert_int_eq(cgroup_setup(&o, &b, NULL), 0);
        ck_assert_int_eq(cgroup_version(b), CGROUP_VERSION_1);
        ck_assert_int_eq(cgroup_describe(b, &line), 0);
        snprintf(want, sizeof(want),
                 "cgroup v1 in %s/sys/memory/process_api/abc, %s/sys/pids; memory_max=5242880 "
                 "pids_max=7",
                 tmpdir, tmpdir);
        ck_assert_str_eq(line, want);

        ck_assert_int_eq(cgroup_run_new(b, "plan", &run), 0);
        ck_assert_uint_eq(cgroup_run_dirs(run, &n) != NULL, 1);
        ck_assert_uint_eq(n, 2);
        assert_file("sys/memory/process_api/abc/muranoagent-plan-1/memory.limit_in_bytes",
                    "5242880");
        assert_file("sys/pids/muranoagent-plan-1/pids.max", "7");
        ck_assert_ptr_null(slurp("sys/pids/muranoagent-plan-1/memory.limit_in_bytes"));

        /* Counters as the kernel writes them. */
        put("sys/memory/process_api/abc/muranoagent-plan-1/memory.oom_control",
            "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n");
        put("sys/pids/muranoagent-plan-1/pids.events", "max 41\n");
        ck_assert_int_eq(cgroup_run_events(run, &ev), 0);
        ck_assert_uint_eq(ev.oom_kills, 3);
        ck_assert_uint_eq(ev.pids_max, 41);
}
END_TEST

/* The defaults (optional limits): where a hierarchy offers their
 * controllers they hold as if asked for; where none does, the run still
 * gets a cgroup (for the kill) and the reason names what is left out; a
 * limit that was asked for is never left out. */
START_TEST(test_optional_limits)
{
        _cleanup_(cgroup_freep) Cgroup *a = NULL, *b = NULL, *c = NULL, *d = NULL;
        _cleanup_free_ char *reason = NULL, *line = NULL;
        CgroupOptions o = fake_options(CONFIG_CGROUP_AUTO, 5 << 20, 4096);
        char want[PATH_MAX * 2];
        uint64_t memory_max;
        unsigned pids_max;

        o.memory_optional = o.pids_optional = true;
        /* Hybrid, with v1 pids and memory: v1 holds both. */
        put("proc-self-cgroup", "8:pids:/\n4:memory:/m\n0::/\n");
        put("sys/unified/cgroup.controllers", "");
        put("sys/unified/cgroup.subtree_control", "");
        put("sys/pids/cgroup.procs", "");
        put("sys/memory/m/cgroup.procs", "");
        ck_assert_int_eq(cgroup_setup(&o, &a, &reason), 0);
        ck_assert_ptr_null(reason);
        ck_assert_int_eq(cgroup_version(a), CGROUP_VERSION_1);
        cgroup_limits(a, &memory_max, &pids_max);
        ck_assert_uint_eq(memory_max, 5 << 20);
        ck_assert_uint_eq(pids_max, 4096);

        /* Without the v1 memory hierarchy: v2 for the kill, no limits. */
        put("proc-self-cgroup", "8:pids:/gone\n0::/\n");
        ck_assert_int_eq(cgroup_setup(&o, &b, &reason), 0);
        ck_assert_int_eq(cgroup_version(b), CGROUP_VERSION_2);
        cgroup_limits(b, &memory_max, &pids_max);
        ck_assert_uint_eq(memory_max, 0);
        ck_assert_uint_eq(pids_max, 0);
        snprintf(
                want, sizeof(want),
                "memory_max and pids_max are not applied, as no cgroup offers their "
                "controllers: cgroup v2: the memory controller is not available in %s/sys/unified; "
                "cgroup v1: no cgroup v1 memory hierarchy in /proc/self/cgroup",
                tmpdir);
        ck_assert_str_eq(reason, want);
        ck_assert_int_eq(cgroup_describe(b, &line), 0);
        snprintf(want, sizeof(want), "cgroup v2 in %s/sys/unified; memory_max=0 pids_max=0",
                 tmpdir);
        ck_assert_str_eq(line, want);
        free(reason);
        reason = NULL;

        /* v1 pids without v1 memory: pids_max holds, memory_max is left
         * out. */
        put("proc-self-cgroup", "8:pids:/\n0::/\n");
        ck_assert_int_eq(cgroup_setup(&o, &d, &reason), 0);
        ck_assert_int_eq(cgroup_version(d), CGROUP_VERSION_1);
        cgroup_limits(d, &memory_max, &pids_max);
        ck_assert_uint_eq(memory_max, 0);
        ck_assert_uint_eq(pids_max, 4096);
        ck_assert_ptr_nonnull(strstr(reason, "memory_max is not applied, as no cgroup offers its "
                                             "controller with the others: "));
        free(reason);
        reason = NULL;
        put("proc-self-cgroup", "8:pids:/gone\n0::/\n");

        /* pids_max asked for: there is no cgroup for it, and the reason
         * says what stands in the way of it, not of the default. */
        o.pids_optional = false;
        ck_assert_int_eq(cgroup_setup(&o, &c, &reason), 0);
        ck_assert_int_eq(cgroup_version(c), CGROUP_VERSION_NONE);
        snprintf(want, sizeof(want),
                 "cgroup v2: the pids controller is not available in %s/sys/unified; cgroup v1: "
                 "%s/sys/pids/gone is not a directory",
                 tmpdir, tmpdir);
        ck_assert_str_eq(reason, want);
}
END_TEST

/* Forced v1 without the hierarchy, and no cgroup at all. */
START_TEST(test_unavailable_and_off)
{
        _cleanup_(cgroup_freep) Cgroup *off = NULL, *none = NULL;
        _cleanup_(cgroup_run_freep) CgroupRun *run = NULL;
        _cleanup_free_ char *reason = NULL, *r2 = NULL, *line = NULL;
        CgroupOptions o = fake_options(CONFIG_CGROUP_V1, 1 << 20, 0);
        Cgroup *untouched = (Cgroup *)0x1;
        size_t n = 9;

        put("proc-self-cgroup", "4:memory:/\n0::/\n");
        ck_assert_int_eq(cgroup_setup(&o, &untouched, &reason), CGROUP_UNAVAILABLE);
        ck_assert_ptr_eq(untouched, (Cgroup *)0x1);
        ck_assert_str_eq(reason + strlen(reason) - strlen("/sys/memory is not a directory"),
                         "/sys/memory is not a directory");
        ck_assert_ptr_nonnull(strstr(reason, "cgroup v1: "));

        o.mode = CONFIG_CGROUP_OFF;
        ck_assert_int_eq(cgroup_setup(&o, &off, &r2), 0);
        ck_assert_ptr_null(r2);
        ck_assert_int_eq(cgroup_version(off), CGROUP_VERSION_NONE);
        ck_assert_int_eq(cgroup_describe(off, &line), 0);
        ck_assert_str_eq(line, "cgroup: none");
        ck_assert_int_eq(cgroup_run_new(off, "p", &run), 0);
        ck_assert_ptr_null(cgroup_run_dirs(run, &n)[0]);
        ck_assert_uint_eq(n, 0);
        ck_assert_int_eq(cgroup_run_kill_and_remove(run, 0), 0);

        o.mode = CONFIG_CGROUP_AUTO;
        o.proc_cgroup = "/nonexistent/cgroup";
        ck_assert_int_eq(cgroup_setup(&o, &none, &r2), 0);
        ck_assert_int_eq(cgroup_version(none), CGROUP_VERSION_NONE);
        ck_assert_str_eq(r2, "cannot read /nonexistent/cgroup: No such file or directory");
}
END_TEST

/* ---- Real cgroups, with the real helper ---- */

static char helper[PATH_MAX];

/* MURANOAGENT_SANDBOX, else beside the agent binary meson names. */
static void find_helper(void)
{
        const char *env = getenv("MURANOAGENT_SANDBOX"), *agent = getenv("MURANOAGENT");
        char exe[PATH_MAX] = "";

        if (env)
                snprintf(helper, sizeof(helper), "%s", env);
        else if (agent)
                snprintf(helper, sizeof(helper), "%s/sandbox/muranoagent-sandbox",
                         dirname(strcpy(exe, agent)));
        else if (readlink("/proc/self/exe", exe, sizeof(exe) - 1) > 0)
                snprintf(helper, sizeof(helper), "%s/../agent/sandbox/muranoagent-sandbox",
                         dirname(exe));
}

/* A real cgroup of the version asked for, or NULL after saying why not. */
static Cgroup *real_cgroup(ConfigCgroup mode, uint64_t memory_max, unsigned pids_max)
{
        CgroupOptions o = {mode, memory_max, pids_max, NULL, NULL, 0};
        _cleanup_free_ char *reason = NULL;
        Cgroup *cg = NULL;
        int r;

        if (geteuid() != 0) {
                printf("skipped: real cgroups need root\n");
                return NULL;
        }
        /* A missing helper is a broken build, not a missing feature. */
        ck_assert_msg(access(helper, X_OK) == 0, "no helper at %s", helper);
        r = cgroup_setup(&o, &cg, &reason);
        ck_assert_int_ge(r, 0);
        if (r == CGROUP_UNAVAILABLE) {
                printf("skipped: cgroup %s unavailable: %s\n", config_cgroup_name(mode), reason);
                return NULL;
        }
        return cg;
}

/* Run the helper with --cgroup for each of run's directories and the shell
 * script; its stdout goes to out (read to end of file). Returns the wait
 * status. */
static int run_script(const CgroupRun *run, const char *script, char *out, size_t size)
{
        const char *argv[16];
        char opts[2][PATH_MAX];
        size_t n, argc = 0, len = 0;
        const char *const *dirs = cgroup_run_dirs(run, &n);
        int fds[2], status;
        ssize_t got;
        pid_t pid;

        argv[argc++] = helper;
        for (size_t i = 0; i < n; i++) {
                snprintf(opts[i], sizeof(opts[i]), "--cgroup=%s", dirs[i]);
                argv[argc++] = opts[i];
        }
        argv[argc++] = "--env=PATH=/usr/bin:/bin";
        argv[argc++] = "--";
        argv[argc++] = "/bin/sh";
        argv[argc++] = "-c";
        argv[argc++] = script;
        argv[argc] = NULL;
        ck_assert_int_eq(pipe2(fds, O_CLOEXEC), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                dup2(fds[1], STDOUT_FILENO);
                execv(helper, (char **)argv);
                _exit(99);
        }
        close(fds[1]);
        while (len + 1 < size && (got = read(fds[0], out + len, size - len - 1)) > 0)
                len += (size_t)got;
        out[len] = '\0';
        close(fds[0]);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        return status;
}

/* Dead: gone, or a zombie waiting for init. */
static bool process_dead(pid_t pid)
{
        char path[64], *text = NULL, *paren;
        bool dead;

        snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
        if (file_read_all(path, 4096, &text, NULL) < 0)
                return true;
        paren = strrchr(text, ')');
        dead = paren && paren[1] == ' ' && paren[2] == 'Z';
        free(text);
        return dead;
}

static size_t count_procs(const char *dir, pid_t *pids, size_t max)
{
        char path[PATH_MAX];
        _cleanup_free_ char *text = NULL;
        size_t n = 0;

        snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
        ck_assert_int_eq(file_read_all(path, 1 << 20, &text, NULL), 0);
        for (char *p = text, *end; *p; p = end) {
                long v = strtol(p, &end, 10);

                if (end == p)
                        break;
                if (n < max)
                        pids[n] = (pid_t)v;
                n++;
        }
        return n;
}

/* A run of this process in cg, its directories saved (they are gone from
 * the run once it is removed); returns how many. */
static size_t new_run(Cgroup *cg, CgroupRun **run, char saved[][PATH_MAX])
{
        char id[32];
        size_t n = 0;

        snprintf(id, sizeof(id), "test-%ld", (long)getpid());
        ck_assert_int_eq(cgroup_run_new(cg, id, run), 0);
        for (const char *const *d = cgroup_run_dirs(*run, NULL); *d; d++)
                strcpy(saved[n++], *d);
        return n;
}

static void assert_removed(const CgroupRun *run, char saved[][PATH_MAX], size_t n)
{
        ck_assert_uint_eq(cgroup_run_dirs(run, NULL)[0] == NULL, 1);
        for (size_t i = 0; i < n; i++)
                ck_assert_msg(access(saved[i], F_OK) < 0 && errno == ENOENT, "%s is left",
                              saved[i]);
}

START_TEST(test_real_v1_fork_bomb)
{
        _cleanup_(cgroup_freep) Cgroup *cg = real_cgroup(CONFIG_CGROUP_V1, 0, 20);
        _cleanup_(cgroup_run_freep) CgroupRun *run = NULL;
        char out[256], saved[2][PATH_MAX];
        pid_t pids[64];
        size_t n, n_dirs;
        CgroupEvents ev = {0, 0};
        uint64_t pids_seen;
        int status, r_events, r_kill;

        if (!cg)
                return;
        n_dirs = new_run(cg, &run, saved);
        ck_assert_uint_eq(n_dirs, 1);
        status = run_script(run,
                            "i=0; while [ $i -lt 100 ]; do sleep 60 >/dev/null 2>&1 & "
                            "i=$((i+1)); done 2>/dev/null; echo looped",
                            out, sizeof(out));
        (void)status;
        /* Observe first and assert after the cleanup, so that a failing
         * check leaves no cgroup and no sleeper behind. The shell may give
         * up at the first refused fork; either way at most 20 processes
         * existed, and its sleepers are still there. */
        n = count_procs(saved[0], pids, ELEMENTSOF(pids));
        r_events = cgroup_run_events(run, &ev);
        r_kill = cgroup_run_kill_and_remove(run, 5000);

        ck_assert_int_eq(r_kill, 0);
        assert_removed(run, saved, n_dirs);
        for (size_t i = 0; i < n && i < ELEMENTSOF(pids); i++)
                ck_assert_msg(process_dead(pids[i]), "pid %ld survived", (long)pids[i]);
        ck_assert_uint_ge(n, 10);
        ck_assert_uint_le(n, 20);
        ck_assert_int_eq(r_events, 0);
        ck_assert_uint_ge(ev.pids_max, 1);
        ck_assert_int_eq(cgroup_run_kill_and_remove(run, 0), 0);
        /* After the removal: the counts as the cgroup emptied, at least
         * those seen while it ran. */
        pids_seen = ev.pids_max;
        ck_assert_int_eq(cgroup_run_events(run, &ev), 0);
        ck_assert_uint_ge(ev.pids_max, pids_seen);
}
END_TEST

START_TEST(test_real_v1_memory_hog)
{
        _cleanup_(cgroup_freep) Cgroup *cg = real_cgroup(CONFIG_CGROUP_V1, 48 << 20, 0);
        _cleanup_(cgroup_run_freep) CgroupRun *run = NULL;
        char out[256], saved[2][PATH_MAX];
        size_t n_dirs;
        CgroupEvents ev = {0, 0};
        int status, r_events;

        if (!cg)
                return;
        n_dirs = new_run(cg, &run, saved);
        /* 512 MiB of touched memory against a 48 MiB limit: the kernel's
         * OOM killer ends it with SIGKILL. */
        status = run_script(run, "exec python3 -c 'x = b\"x\" * (512 << 20); print(len(x))'", out,
                            sizeof(out));
        r_events = cgroup_run_events(run, &ev);
        ck_assert_int_eq(cgroup_run_kill_and_remove(run, 5000), 0);
        assert_removed(run, saved, n_dirs);
        ck_assert_str_eq(out, "");
        ck_assert(WIFSIGNALED(status));
        ck_assert_int_eq(WTERMSIG(status), SIGKILL);
        ck_assert_int_eq(r_events, 0);
        ck_assert_uint_ge(ev.oom_kills, 1);
}
END_TEST

/* A grandchild in its own session outlives the script; the cgroup still
 * finds and kills it. */
START_TEST(test_real_v2_detached_grandchild)
{
        _cleanup_(cgroup_freep) Cgroup *cg = real_cgroup(CONFIG_CGROUP_V2, 0, 0);
        _cleanup_(cgroup_run_freep) CgroupRun *run = NULL;
        char out[256], saved[2][PATH_MAX];
        size_t n_dirs;
        pid_t pids[4] = {0};
        long grandchild;
        bool alive;
        int status;
        size_t n;

        if (!cg)
                return;
        n_dirs = new_run(cg, &run, saved);
        status = run_script(run, "setsid sleep 60 </dev/null >/dev/null 2>&1 & echo $!", out,
                            sizeof(out));
        grandchild = strtol(out, NULL, 10);
        alive = grandchild > 1 && !process_dead((pid_t)grandchild);
        n = count_procs(saved[0], pids, ELEMENTSOF(pids));
        ck_assert_int_eq(cgroup_run_kill_and_remove(run, 5000), 0);
        assert_removed(run, saved, n_dirs);

        ck_assert(WIFEXITED(status));
        ck_assert_int_eq(WEXITSTATUS(status), 0);
        ck_assert_msg(alive, "no live grandchild: '%s'", out);
        ck_assert_uint_eq(n, 1);
        ck_assert_int_eq(pids[0], grandchild);
        ck_assert(process_dead((pid_t)grandchild));
}
END_TEST

static Suite *cgroup_suite(void)
{
        Suite *s = suite_create("sandbox-cgroup");
        TCase *tc = tcase_create("fake");

        tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
        tcase_add_test(tc, test_v2_service);
        tcase_add_test(tc, test_v2_shared_cgroup);
        tcase_add_test(tc, test_v2_root);
        tcase_add_test(tc, test_hybrid);
        tcase_add_test(tc, test_unavailable_and_off);
        tcase_add_test(tc, test_optional_limits);
        suite_add_tcase(s, tc);

        tc = tcase_create("real");
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_real_v1_fork_bomb);
        tcase_add_test(tc, test_real_v1_memory_hog);
        tcase_add_test(tc, test_real_v2_detached_grandchild);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        find_helper();
        return check_run(cgroup_suite());
}
