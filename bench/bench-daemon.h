/* What bench-daemon's parts share: its options, the consumers, and the
 * figures it collects (bench-daemon.c measures, bench-daemon-report.c
 * prints). */
#pragma once

#include <stdbool.h>

#include "bench-daemon-client.h"
#include "bench-daemon-plan.h"
#include "bench-daemon-target.h"

#define BENCH_MAX_TARGETS 7

typedef struct Options {
        int port, runs, big, burst, bursts, starts, gap_ms;
        const char *dir, *shm_dir, *only;
        char *agent, *consumer, *contained, *compatible, *config_extra;
        char *sandbox_helper; /* the agent's muranoagent-sandbox, for the contained floors */
        char *compare, *compare_extra; /* agent B: another build or configuration */
        char **wrap;
        bool debug, keep;
        bool progress; /* --progress: compare_extra turns progress events on */
} Options;

/* Per consumer i: one value per measurement, in the order taken. */
typedef struct Report {
        double *start_ms[BENCH_MAX_TARGETS];     /* fork to the broker seeing the consumer */
        double *start_wall[BENCH_MAX_TARGETS];   /* CLOCK_REALTIME at the fork */
        double *start_log_ms[BENCH_MAX_TARGETS]; /* fork to the "consuming" log line */
        int start_log_n[BENCH_MAX_TARGETS];      /* 0: no log figures */
        TargetMemory mem_start[BENCH_MAX_TARGETS], mem_end[BENCH_MAX_TARGETS];
        double *rt_ms[BENCH_MAX_TARGETS];
        double *big_ms[BENCH_MAX_TARGETS];
        double *burst_rate[BENCH_MAX_TARGETS];
        double *burst_publish_ms[BENCH_MAX_TARGETS];
        /* CPU ms per plan of the consumer and its children (the scripts,
         * the sandbox helper), from /proc/PID/stat: what it costs beside
         * how long it takes. */
        double cpu_rt[BENCH_MAX_TARGETS], cpu_big[BENCH_MAX_TARGETS];
        double cpu_burst[BENCH_MAX_TARGETS];
        int log_problems[BENCH_MAX_TARGETS];
} Report;

typedef struct Bench {
        Options o;
        TargetSetup agent_setup, compare_setup, baseline_setup, contained_setup, compatible_setup;
        Target t[BENCH_MAX_TARGETS];
        size_t n;
        char *workdir, *shmdir, *queue_prefix;
        Client *client;
        Plans plans;
        unsigned seq; /* numbers the plan IDs */
        Report r;
} Bench;

/* Fills o from the command line: -1 to go on, else the exit status (usage
 * printed). */
int options_parse(Options *o, int argc, char **argv);

/* The agents take turns with the floors one at a time (bench-daemon.c,
 * round_trips()), so each floor (the durable floor or baseline, the
 * contained floor, the compatible floor) handles count plans per agent;
 * its samples for the agent in slot k (the k-th agent) are at
 * [k * count]. These say where things are. */
static inline size_t bench_n_agents(const Bench *b)
{
        size_t n = 0;

        for (size_t i = 0; i < b->n; i++)
                n += b->t[i].kind == TARGET_AGENT;
        return n;
}

static inline bool bench_find_kind(const Bench *b, TargetKind kind, size_t *ret)
{
        for (size_t i = 0; i < b->n; i++)
                if (b->t[i].kind == kind) {
                        *ret = i;
                        return true;
                }
        return false;
}

static inline bool bench_baseline(const Bench *b, size_t *ret)
{
        return bench_find_kind(b, TARGET_BASELINE, ret);
}

static inline bool bench_contained(const Bench *b, size_t *ret)
{
        return bench_find_kind(b, TARGET_CONTAINED, ret);
}

static inline bool bench_compatible(const Bench *b, size_t *ret)
{
        return bench_find_kind(b, TARGET_COMPATIBLE, ret);
}

static inline size_t bench_agent_slot(const Bench *b, size_t i)
{
        size_t slot = 0;

        for (size_t j = 0; j < i; j++)
                slot += b->t[j].kind == TARGET_AGENT;
        return slot;
}

/* How many of count turns' plans target i handles. */
static inline int bench_plans_of(const Bench *b, size_t i, int count)
{
        size_t agents = bench_n_agents(b);

        if (b->t[i].kind == TARGET_AGENT || agents == 0)
                return count;
        return count * (int)agents;
}

int report_alloc(Report *r, size_t n, const Options *o);
void report_free(Report *r);

void report_intro(const Bench *b);
void report_starts(const Bench *b);
void report_round_trips(const Bench *b);
void report_big(const Bench *b);
void report_bursts(const Bench *b);
void report_memory(const Bench *b);
void report_targets(const Bench *b);
void report_split(const Bench *b);
