/* bench-daemon's consumers: the baseline (bench-daemon-consumer), the
 * contained floor (bench-daemon-contained), the compatible floor
 * (bench-daemon-compatible) and the agents (muranoagent with a configuration of its
 * own each), as processes that the bench starts, measures and stops. Each has a work directory
 * holding its configuration or scripts and its log (stdout and stderr,
 * appended across restarts), its plan queue and its results queue. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* The floors in the order of their ratio columns, each against those
 * before it (bench-daemon-report.c), then the agents. */
typedef enum TargetKind {
        TARGET_BASELINE,   /* the durable floor */
        TARGET_CONTAINED,  /* the durable floor with the agent's containment */
        TARGET_COMPATIBLE, /* the contained floor laying out the plan's files */
        TARGET_AGENT,
} TargetKind;

typedef struct Target {
        const char *name; /* as printed: "floor", "agent (disk)" */
        char tag;         /* one letter in plan IDs: b, k, p, d, s */
        TargetKind kind;
        char *dir;     /* work directory */
        char *storage; /* agents: [DEFAULT] storage */
        char *queue, *results;
        char *config, *log;
        char *cgroup;      /* its CPU accounting cgroup (see target_cpu_ms()), or NULL */
        char *cgroup_join; /* the file a process writes "0" to to join it */
        bool cgroup_v2;
        pid_t pid; /* 0 when not running */
} Target;

typedef struct TargetSetup {
        int port;
        const char *program;      /* muranoagent, bench-daemon-consumer, -contained, -compatible */
        const char *helper;       /* the contained floors' $MURANOAGENT_SANDBOX, or NULL */
        const char *const *wrap;  /* agents: argv to run them under, or NULL */
        bool debug;               /* agents: [DEFAULT] debug = true */
        const char *config_extra; /* agents: text appended to the configuration */
} TargetSetup;

/* The floors' scripts; sha.sh reads data.bin, which the caller writes. */
#define TARGET_ECHO_SCRIPT "#!/bin/sh\necho hello\n"
#define TARGET_SHA_SCRIPT  "#!/bin/sh\nsha256sum data.bin\n"

/* Fills t's paths and writes its files: the configuration of an agent, the
 * scripts of a floor. dir must exist; storage is made on start. Also makes
 * t's CPU accounting cgroup, named as its plan queue, when this process may
 * (see target_cpu_ms()); target_clear() removes it. */
int target_prepare(Target *t, const TargetSetup *s, const char *dir, const char *storage,
                   const char *queue_prefix);
void target_clear(Target *t);

/* Starts the program, in t's cgroup if it has one; *ret_t0_ms is
 * CLOCK_MONOTONIC just before the fork, moved on by the time the child took
 * to join the cgroup, *ret_wall_ms CLOCK_REALTIME then (to compare with the
 * log's times). The child gets SIGKILL if the bench dies. */
int target_start(Target *t, const TargetSetup *s, double *ret_t0_ms, double *ret_wall_ms);

/* 1 if the process has ended (and is reaped, *ret_status its wait status),
 * 0 if it runs. */
int target_exited(Target *t, int *ret_status);

/* SIGTERM to its process group, then SIGKILL after timeout_ms; returns
 * once the group is empty. *ret_status is the program's wait status. */
int target_stop(Target *t, int timeout_ms, int *ret_status);

typedef struct TargetMemory {
        long rss_kib, anon_kib, file_kib, shmem_kib;
        int threads;
} TargetMemory;

int target_memory(const Target *t, TargetMemory *ret);

/* CPU time, user and system, in ms, that t has used so far: with a cgroup,
 * that of every process that ran in it, in ns (cpuacct.usage of
 * cgroup v1's cpuacct hierarchy) or else µs (usage_usec in v2's cpu.stat),
 * whoever reaped them; without one, the process's and its reaped
 * children's from /proc/PID/stat (in clock ticks, and blind to what was
 * not reaped through it). */
int target_cpu_ms(const Target *t, double *ret);

/* The CLOCK_REALTIME times (ms) of the agent's "consuming" log lines, in
 * order; returns how many were found (at most max), or a negative errno. */
int target_log_consuming(const Target *t, double *ret_ms, int max);

/* How many ERROR and WARNING lines the log holds. */
int target_log_problems(const Target *t);

/* The last lines of the log on stderr, for a failure. */
void target_log_tail(const Target *t, int lines);
