/* cgroups for script runs, an OS adapter. Once, at start: decide where run
 * cgroups go (cgroup v2, v1, or none) and prepare that place. Per run:
 * create a cgroup with the memory and pids limits, hand its directories to
 * muranoagent-sandbox (--cgroup DIR, joined before the script starts), and
 * after the run kill whatever is still inside and remove it. The sysfs root
 * and /proc/self/cgroup are parameters, so tests can use a fake tree.
 * docs/sandbox.md explains the choices (detection order, the v2 "no
 * internal processes" rule, names). Nothing here logs: reasons come back as
 * sentences for the caller to log. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config/config.h"
#include "util/macro.h"

/* cgroup_setup(): the version asked for (or with auto, any) is unusable;
 * the reason says why. */
#define CGROUP_UNAVAILABLE 1

/* cgroup_run_kill_and_remove(): processes survived the time allowed (stuck in
 * the kernel, for instance); the cgroup is left in place. */
#define CGROUP_BUSY 2

typedef enum CgroupVersion {
        CGROUP_VERSION_NONE,
        CGROUP_VERSION_1,
        CGROUP_VERSION_2,
} CgroupVersion;

typedef struct CgroupOptions {
        ConfigCgroup mode;   /* [sandbox] cgroup; use CONFIG_CGROUP_OFF when the sandbox is off */
        uint64_t memory_max; /* bytes, 0 = no limit */
        unsigned pids_max;   /* 0 = no limit */
        const char *sysfs;   /* NULL = "/sys/fs/cgroup" */
        const char *proc_cgroup; /* NULL = "/proc/self/cgroup" */
        pid_t self;              /* the agent's pid, 0 = getpid() */
        /* The limit is a default, not asked for: when no hierarchy offers
         * its controller, runs go without it (and the reason says so)
         * rather than without a cgroup. */
        bool memory_optional;
        bool pids_optional;
} CgroupOptions;

/* What the kernel did to a run because of its limits. */
typedef struct CgroupEvents {
        uint64_t oom_kills; /* processes killed for reaching the memory limit */
        uint64_t pids_max;  /* forks refused because of the pids limit */
} CgroupEvents;

typedef struct Cgroup Cgroup;
typedef struct CgroupRun CgroupRun;

/* Decide where run cgroups go, in this order for mode auto: v2, then v1,
 * then none. For v2 this may move the agent into a leaf cgroup "agent" of
 * its own cgroup and enable the memory and pids controllers there (see
 * docs/sandbox.md). Returns:
 *   0: *ret is set. Its version is NONE when the mode is off, or when auto
 *      found nothing usable; then *ret_reason (if given) holds a sentence the
 *      caller logs as a warning. It holds one too when an optional limit
 *      was left out (cgroup_limits() gives what holds). Otherwise
 *      *ret_reason is NULL.
 *   CGROUP_UNAVAILABLE: the forced mode (v1 or v2) cannot be had; *ret is
 *      untouched and *ret_reason (if given) says why. Runs must then fail:
 *      a limit that was asked for is never dropped quietly.
 *   a negative errno (-ENOMEM). */
int cgroup_setup(const CgroupOptions *o, Cgroup **ret, char **ret_reason);

Cgroup *cgroup_free(Cgroup *cg);
DEFINE_CLEANUP(Cgroup, cgroup_free)

CgroupVersion cgroup_version(const Cgroup *cg);

/* The limits every run gets (0: none), optional ones left out included. */
void cgroup_limits(const Cgroup *cg, uint64_t *ret_memory_max, unsigned *ret_pids_max);

/* One line for the log, e.g. "cgroup v1 in /sys/fs/cgroup/memory,
 * /sys/fs/cgroup/pids; memory_max=67108864 pids_max=20". Returns 0 or
 * -ENOMEM. */
int cgroup_describe(const Cgroup *cg, char **ret);

/* Create the cgroup of one run, "muranoagent-<id>-<n>" in each place chosen
 * by cgroup_setup() (one for v2; one per controller for v1), and write its
 * limits. id (a plan ID) is cut to 64 characters and anything but letters,
 * digits, '.', '_' and '-' becomes '_'; n counts runs of cg, skipping names
 * that exist. With version NONE the run has no directories. Returns 0, or a
 * negative errno with nothing left behind. */
int cgroup_run_new(Cgroup *cg, const char *id, CgroupRun **ret);

/* The directories to pass to the helper as --cgroup, NULL-terminated;
 * *ret_n (if given) is their number. Owned by run. */
const char *const *cgroup_run_dirs(const CgroupRun *run, size_t *ret_n);

/* Read the run's OOM kills and refused forks: before
 * cgroup_run_kill_and_remove(), as they are now; after it, as they were
 * when the cgroup had emptied, the whole count. Counters the kernel does
 * not offer read as 0. Returns 0 or a negative errno. */
int cgroup_run_events(const CgroupRun *run, CgroupEvents *ret);

/* Kill every process still in the run's cgroup (v2: cgroup.kill where the
 * kernel has it; otherwise SIGKILL to each listed process, repeated until
 * none is left), then remove the directories. Blocks for at most timeout_ms,
 * polling with short sleeps; processes that were SIGKILLed are normally gone
 * within a millisecond. Returns 0 (also when called again), CGROUP_BUSY when
 * processes or directories remain after timeout_ms, or a negative errno. */
int cgroup_run_kill_and_remove(CgroupRun *run, unsigned timeout_ms);

/* Free the memory. It does not remove the cgroup: call
 * cgroup_run_kill_and_remove() first. */
CgroupRun *cgroup_run_free(CgroupRun *run);
DEFINE_CLEANUP(CgroupRun, cgroup_run_free)
