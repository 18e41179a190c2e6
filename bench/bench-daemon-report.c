/* bench-daemon's figures, printed as they come (see bench-daemon.h). The
 * targets are issue 5's (absolute) and issue 17's (against each floor);
 * the agent with its storage on disk is the one they are judged on, the
 * agent on tmpfs shows how much of it the disk is. The contained and the
 * compatible floors split the agent's cost: its containment, the plan's
 * files and result, and the rest. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench-util.h"
#include "bench-daemon.h"

#define TARGET_RATIO    1.5
#define TARGET_RATE     500.0
#define TARGET_RSS_KIB  4096
#define TARGET_START_MS 50.0
#define TARGET_BIG_MS   25.0

/* Issue 17: against the durable floor (and the others), in the same run. */
#define FLOOR_RT_RATIO    1.5
#define FLOOR_BURST_RATIO 1.0
#define FLOOR_BIG_RATIO   1.2
#define FLOOR_CPU_RATIO   1.2

typedef struct Stats {
        double median, p99, min, max, mean;
} Stats;

/* Of a sorted copy; the measurements keep their order. */
static Stats stats(const double *v, int n)
{
        double *s = malloc((size_t)n * sizeof(*s)), sum = 0;
        Stats st = {0};

        if (!s || n <= 0) {
                free(s);
                return st;
        }
        memcpy(s, v, (size_t)n * sizeof(*s));
        qsort(s, (size_t)n, sizeof(*s), bench_cmp_double);
        for (int i = 0; i < n; i++)
                sum += s[i];
        st = (Stats){.median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2,
                     .p99 = s[(int)((double)(n - 1) * 0.99)],
                     .min = s[0],
                     .max = s[n - 1],
                     .mean = sum / n};
        free(s);
        return st;
}

int report_alloc(Report *r, size_t n, const Options *o)
{
        for (size_t i = 0; i < n; i++) {
                r->start_ms[i] = calloc((size_t)o->starts, sizeof(double));
                r->start_wall[i] = calloc((size_t)o->starts, sizeof(double));
                r->start_log_ms[i] = calloc((size_t)o->starts, sizeof(double));
                /* The baseline's hold a share per agent. */
                r->rt_ms[i] = calloc((size_t)o->runs * BENCH_MAX_TARGETS, sizeof(double));
                r->big_ms[i] = calloc((size_t)(o->big + 1) * BENCH_MAX_TARGETS, sizeof(double));
                r->burst_rate[i] = calloc((size_t)o->bursts + 1, sizeof(double));
                r->burst_publish_ms[i] = calloc((size_t)o->bursts + 1, sizeof(double));
                if (!r->start_ms[i] || !r->start_wall[i] || !r->start_log_ms[i] || !r->rt_ms[i] ||
                    !r->big_ms[i] || !r->burst_rate[i] || !r->burst_publish_ms[i])
                        return -ENOMEM;
        }
        return 0;
}

void report_free(Report *r)
{
        for (size_t i = 0; i < BENCH_MAX_TARGETS; i++) {
                free(r->start_ms[i]);
                free(r->start_wall[i]);
                free(r->start_log_ms[i]);
                free(r->rt_ms[i]);
                free(r->big_ms[i]);
                free(r->burst_rate[i]);
                free(r->burst_publish_ms[i]);
        }
        *r = (Report){0};
}

static const Target *find(const Bench *b, char tag, size_t *ret_i)
{
        for (size_t i = 0; i < b->n; i++)
                if (b->t[i].tag == tag) {
                        if (ret_i)
                                *ret_i = i;
                        return &b->t[i];
                }
        return NULL;
}

void report_intro(const Bench *b)
{
        printf("bench-daemon: %zu consumer(s) on one broker (127.0.0.1:%d), taking turns\n", b->n,
               b->o.port);
        for (size_t i = 0; i < b->n; i++) {
                const Target *t = &b->t[i];
                if (t->kind == TARGET_BASELINE)
                        printf("  %-15s %s: prefetch 1; the plan logged and fdatasync()ed, ack, "
                               "its start logged and fdatasync()ed, sh ./echo.sh, the result "
                               "logged and fdatasync()ed, publish with confirms\n",
                               t->name, b->o.consumer);
                else if (t->kind == TARGET_CONTAINED)
                        printf("  %-15s %s: the floor, its script run through the agent's "
                               "runner with the default configuration (cgroup, audit session "
                               "sweep, sandbox)\n",
                               t->name, b->o.contained);
                else if (t->kind == TARGET_COMPATIBLE)
                        printf("  %-15s %s: the contained floor, the plan parsed, its files "
                               "laid out and removed as the reference does, its script run "
                               "from them, the reference's result document\n",
                               t->name, b->o.compatible);
                else if (t->tag == 'e' || t->tag == 'c')
                        printf("  %-15s %s%s%s, storage %s\n", t->name, b->compare_setup.program,
                               b->o.progress        ? " with progress events, nobody consuming"
                               : b->o.compare_extra ? " with --compare-config"
                                                    : ", defaults",
                               b->o.debug ? ", debug log" : "", t->storage);
                else
                        printf("  %-15s %s%s%s, storage %s\n", t->name, b->o.agent,
                               b->o.config_extra ? " with --config-extra" : ", defaults",
                               b->o.debug ? ", debug log" : "", t->storage);
        }
        for (size_t i = 0; i < b->n; i++)
                if (!b->t[i].cgroup) {
                        printf("CPU: %s has no cgroup of its own (not root?): its CPU is "
                               "/proc/PID/stat's, in clock ticks, of it and the children it "
                               "reaped\n",
                               b->t[i].name);
                        return;
                }
        if (b->n > 0)
                printf("CPU: each consumer's own cgroup (%s), all its processes\n",
                       b->t[0].cgroup_v2 ? "cpu.stat usage_usec" : "cpuacct.usage");
}

void report_starts(const Bench *b)
{
        const Report *r = &b->r;

        printf("\nstart-up until consuming, ms (%d starts each; from fork() to the broker "
               "counting its consumer)\n",
               b->o.starts);
        printf("%-16s %9s %9s %9s %9s %11s\n", "", "first", "median", "min", "max", "log median");
        for (size_t i = 0; i < b->n; i++) {
                Stats s = stats(r->start_ms[i], b->o.starts);
                printf("%-16s %9.2f %9.2f %9.2f %9.2f", b->t[i].name, r->start_ms[i][0], s.median,
                       s.min, s.max);
                if (r->start_log_n[i] > 0)
                        printf(" %11.1f\n", stats(r->start_log_ms[i], r->start_log_n[i]).median);
                else
                        printf(" %11s\n", "-");
        }
        printf("(first: into an empty storage; log median: to the agent's \"consuming\" line, "
               "whose time has ms resolution)\n");
        printf("\nidle RSS after start, KiB (VmRSS = anon + file + shmem)\n");
        for (size_t i = 0; i < b->n; i++) {
                const TargetMemory *m = &r->mem_start[i];
                printf("%-16s %9ld = %ld + %ld + %ld, %d thread(s)\n", b->t[i].name, m->rss_kib,
                       m->anon_kib, m->file_kib, m->shmem_kib, m->threads);
        }
}

/* The baseline's median over the plans paired with agent i. */
static double paired_median(const Bench *b, double *const *ms, int n, size_t base, size_t i)
{
        return stats(ms[base] + bench_agent_slot(b, i) * (size_t)n, n).median;
}

/* The floors present, in the order of their ratio columns: /floor,
 * /contained, /compatible. Returns how many. */
static size_t floors_of(const Bench *b, size_t floors[3])
{
        static const TargetKind kinds[] = {TARGET_BASELINE, TARGET_CONTAINED, TARGET_COMPATIBLE};
        size_t n = 0;

        for (size_t k = 0; k < 3; k++)
                if (bench_find_kind(b, kinds[k], &floors[n]))
                        n++;
        return n;
}

static const char *floor_column(const Bench *b, size_t f)
{
        return b->t[f].kind == TARGET_BASELINE    ? "/floor"
               : b->t[f].kind == TARGET_CONTAINED ? "/contained"
                                                  : "/compatible";
}

static void print_ratio_heads(const Bench *b)
{
        size_t floors[3], n = floors_of(b, floors);

        for (size_t j = 0; j < n; j++)
                printf(" %11s", floor_column(b, floors[j]));
}

/* Consumer i's ratio of value to each floor's before it in floors_of():
 * for an agent against the floors' plans paired with it (ms, n), for a
 * floor against all of the floor's (the floors' plans are paired one to
 * one); ms NULL: of value to each floor's whole[f]. */
static void print_ratios_of(const Bench *b, double *const *ms, int n, const double *whole, size_t i,
                            double value)
{
        size_t floors[3], nf = floors_of(b, floors);
        bool agent = b->t[i].kind == TARGET_AGENT;

        for (size_t j = 0; j < nf; j++) {
                size_t f = floors[j];
                double base;

                if (!agent && b->t[i].kind <= b->t[f].kind) {
                        printf(" %11s", "");
                        continue;
                }
                if (!ms)
                        base = whole[f];
                else if (agent)
                        base = paired_median(b, ms, n, f, i);
                else
                        base = stats(ms[f], bench_plans_of(b, f, n)).median;
                printf(" %10.2fx", value / base);
        }
}

static void print_times(const Bench *b, double *const *ms, int n, const double *cpu)
{
        size_t floors[3];

        printf("%-16s %9s %9s %9s %9s", "", "median", "p99", "max", "mean");
        print_ratio_heads(b);
        printf(" %9s\n", "CPU/plan");
        for (size_t i = 0; i < b->n; i++) {
                Stats s = stats(ms[i], bench_plans_of(b, i, n));
                printf("%-16s %9.3f %9.3f %9.3f %9.3f", b->t[i].name, s.median, s.p99, s.max,
                       s.mean);
                print_ratios_of(b, ms, n, NULL, i, s.median);
                printf(" %9.2f\n", cpu[i]);
        }
        if (floors_of(b, floors) > 0 && bench_n_agents(b) > 0)
                printf("(each agent's plans alternate with the floors', one agent at a time; "
                       "an agent's ratios are against the floors' plans paired with it)\n");
}

void report_round_trips(const Bench *b)
{
        printf("\ntrivial plan round trip, ms (%d each, %d ms apart; publish to result; CPU: "
               "consumer and children)\n",
               b->o.runs, b->o.gap_ms);
        print_times(b, b->r.rt_ms, b->o.runs, b->r.cpu_rt);
}

void report_big(const Bench *b)
{
        printf("\n2 MiB Base64 plan round trip, ms (%d each, %d ms apart; script: sha256sum)\n",
               b->o.big, b->o.gap_ms);
        print_times(b, b->r.big_ms, b->o.big, b->r.cpu_big);
}

void report_bursts(const Bench *b)
{
        double rate[BENCH_MAX_TARGETS];

        if (b->o.bursts == 0)
                return;
        printf("\nburst of %d trivial plans, plans/s (%d bursts each, in turns; first publish "
               "to last result)\n",
               b->o.burst, b->o.bursts);
        printf("%-16s %9s %9s %9s %14s %9s", "", "median", "best", "worst", "publishing ms",
               "CPU/plan");
        print_ratio_heads(b);
        printf("\n");
        for (size_t i = 0; i < b->n; i++)
                rate[i] = stats(b->r.burst_rate[i], b->o.bursts).median;
        for (size_t i = 0; i < b->n; i++) {
                Stats s = stats(b->r.burst_rate[i], b->o.bursts);

                printf("%-16s %9.0f %9.0f %9.0f %14.1f %9.2f", b->t[i].name, s.median, s.max, s.min,
                       stats(b->r.burst_publish_ms[i], b->o.bursts).median, b->r.cpu_burst[i]);
                print_ratios_of(b, NULL, 0, rate, i, s.median);
                printf("\n");
        }
}

void report_memory(const Bench *b)
{
        printf("\nidle RSS after the plans, KiB (VmRSS = anon + file + shmem)\n");
        for (size_t i = 0; i < b->n; i++) {
                const TargetMemory *m = &b->r.mem_end[i];
                printf("%-16s %9ld = %ld + %ld + %ld, %d thread(s)", b->t[i].name, m->rss_kib,
                       m->anon_kib, m->file_kib, m->shmem_kib, m->threads);
                if (b->t[i].kind != TARGET_BASELINE)
                        printf("; %d ERROR/WARNING log line(s)", b->r.log_problems[i]);
                printf("\n");
        }
}

static const char *verdict(bool met)
{
        return met ? "met" : "NOT MET";
}

static void ratio_line(const char *what, double agent, double floor, double limit, bool at_most)
{
        double ratio = floor > 0 ? agent / floor : 0;

        printf("  %s %s %.1fx the floor's: %.2f against %.2f, %.2fx, %s\n", what,
               at_most ? "at most" : "at least", limit, agent, floor, ratio,
               verdict(floor > 0 && (at_most ? ratio <= limit : ratio >= limit)));
}

/* Issue 17's targets: each agent against floor base's figures in the same
 * run (round trips and 2 MiB plans paired, bursts and CPU as a whole). */
static void report_floor_targets(const Bench *b, size_t base)
{
        const Report *r = &b->r;

        printf("\ntargets (issue 17), per agent, against the %s:\n",
               b->t[base].kind == TARGET_BASELINE ? "durable floor" : b->t[base].name);
        for (size_t i = 0; i < b->n; i++) {
                if (b->t[i].kind != TARGET_AGENT)
                        continue;
                printf("%s:\n", b->t[i].name);
                ratio_line("trivial round trip (median, ms)", stats(r->rt_ms[i], b->o.runs).median,
                           paired_median(b, r->rt_ms, b->o.runs, base, i), FLOOR_RT_RATIO, true);
                if (b->o.bursts > 0)
                        ratio_line("burst (median, plans/s)",
                                   stats(r->burst_rate[i], b->o.bursts).median,
                                   stats(r->burst_rate[base], b->o.bursts).median,
                                   FLOOR_BURST_RATIO, false);
                if (b->o.big > 0)
                        ratio_line("2 MiB plan (median, ms)", stats(r->big_ms[i], b->o.big).median,
                                   paired_median(b, r->big_ms, b->o.big, base, i), FLOOR_BIG_RATIO,
                                   true);
                ratio_line("CPU per trivial plan (ms)", r->cpu_rt[i], r->cpu_rt[base],
                           FLOOR_CPU_RATIO, true);
                if (b->o.bursts > 0)
                        ratio_line("CPU per plan in a burst (ms)", r->cpu_burst[i],
                                   r->cpu_burst[base], FLOOR_CPU_RATIO, true);
        }
}

void report_targets(const Bench *b)
{
        size_t base = 0;
        const Target *baseline = find(b, 'b', &base);
        const Report *r = &b->r;

        printf("\ntargets (issue 5), per agent:\n");
        for (size_t i = 0; i < b->n; i++) {
                const Target *t = &b->t[i];
                Stats rt = stats(r->rt_ms[i], b->o.runs);
                Stats st = stats(r->start_ms[i], b->o.starts);
                long rss = r->mem_start[i].rss_kib > r->mem_end[i].rss_kib ? r->mem_start[i].rss_kib
                                                                           : r->mem_end[i].rss_kib;

                if (t->kind != TARGET_AGENT)
                        continue;
                printf("%s:\n", t->name);
                if (baseline) {
                        double ratio = rt.median / paired_median(b, r->rt_ms, b->o.runs, base, i);
                        printf("  round-trip median within %.1fx of the floor's: %.2fx, %s\n",
                               TARGET_RATIO, ratio, verdict(ratio <= TARGET_RATIO));
                }
                if (b->o.bursts > 0) {
                        double rate = stats(r->burst_rate[i], b->o.bursts).median;
                        printf("  at least %.0f plans/s (median burst): %.0f, %s\n", TARGET_RATE,
                               rate, verdict(rate >= TARGET_RATE));
                }
                printf("  idle RSS at most %d KiB (the larger of the two): %ld KiB, %s\n",
                       TARGET_RSS_KIB, rss, verdict(rss <= TARGET_RSS_KIB));
                printf("  start-up until consuming at most %.0f ms (median): %.1f ms, %s\n",
                       TARGET_START_MS, st.median, verdict(st.median <= TARGET_START_MS));
                if (b->o.big > 0) {
                        double big = stats(r->big_ms[i], b->o.big).median;
                        printf("  2 MiB plan within %.0f ms (median): %.1f ms, %s\n", TARGET_BIG_MS,
                               big, verdict(big <= TARGET_BIG_MS));
                }
        }
        for (size_t i = 0; i < b->n; i++)
                if (b->t[i].kind != TARGET_AGENT)
                        report_floor_targets(b, i);
}

/* One figure of the split: the floor, the contained floor, the compatible
 * floor (when there is one: compat >= 0) and the agent, and how the
 * agent's excess over the floor divides between the containment
 * (contained - floor), the plan's files and result (compatible -
 * contained) and the rest (agent - compatible, or agent - contained). */
static void split_line(const char *what, double floor, double contained, double compat,
                       double agent)
{
        double excess = agent - floor, top = compat >= 0 ? compat : contained;

        printf("  %-30s %8.2f %10.2f", what, floor, contained);
        if (compat >= 0)
                printf(" %10.2f", compat);
        printf(" %8.2f   %+8.2f", agent, contained - floor);
        if (compat >= 0)
                printf(" %+8.2f", compat - contained);
        printf(" %+8.2f", agent - top);
        if (excess > 0) {
                printf("   %3.0f%%", 100 * (contained - floor) / excess);
                if (compat >= 0)
                        printf(" %3.0f%%", 100 * (compat - contained) / excess);
                printf(" %3.0f%%", 100 * (agent - top) / excess);
        }
        printf("\n");
}

/* The figures of the split. */
typedef enum SplitFigure {
        SPLIT_RT,        /* trivial round trip, paired median, ms */
        SPLIT_CPU_RT,    /* CPU per trivial plan, ms */
        SPLIT_BURST,     /* median burst, as ms per plan, so that the parts add up */
        SPLIT_CPU_BURST, /* CPU per plan in a burst, ms */
        SPLIT_BIG,       /* 2 MiB plan, paired median, ms */
} SplitFigure;

/* Consumer f's figure fig for the split of agent i (f == i: the agent's
 * own): a floor's round trips are those paired with agent i. */
static double split_figure(const Bench *b, SplitFigure fig, size_t f, size_t i)
{
        const Report *r = &b->r;

        switch (fig) {
        case SPLIT_RT:
                return f == i ? stats(r->rt_ms[i], b->o.runs).median
                              : paired_median(b, r->rt_ms, b->o.runs, f, i);
        case SPLIT_CPU_RT:
                return r->cpu_rt[f];
        case SPLIT_BURST:
                return 1e3 / stats(r->burst_rate[f], b->o.bursts).median;
        case SPLIT_CPU_BURST:
                return r->cpu_burst[f];
        case SPLIT_BIG:
                return f == i ? stats(r->big_ms[i], b->o.big).median
                              : paired_median(b, r->big_ms, b->o.big, f, i);
        }
        return -1;
}

/* One line of agent i's split: floors[] are the durable, the contained
 * and the compatible floor (SIZE_MAX: none). */
static void split_row(const Bench *b, const char *what, SplitFigure fig, const size_t floors[3],
                      size_t i)
{
        double v[3];

        for (size_t k = 0; k < 3; k++)
                v[k] = floors[k] == SIZE_MAX ? -1 : split_figure(b, fig, floors[k], i);
        split_line(what, v[0], v[1], v[2], split_figure(b, fig, i, i));
}

/* Where each agent's cost goes, from the floors of the same run. */
void report_split(const Bench *b)
{
        size_t base = 0, cont = 0, comp = 0;
        bool have_comp;

        if (!bench_baseline(b, &base) || !bench_contained(b, &cont))
                return;
        have_comp = bench_compatible(b, &comp);
        printf("\nwhere the agent's cost goes: containment = contained floor - floor%s, the rest "
               "(journal, %sBody, threads) = agent - %s floor\n",
               have_comp ? ", files = compatible floor - contained floor (the plan parsed, its "
                           "files laid out and removed, the reference's result)"
                         : "",
               have_comp ? "" : "parsing, ", have_comp ? "compatible" : "contained");
        for (size_t i = 0; i < b->n; i++) {
                size_t floors[3] = {base, cont, have_comp ? comp : SIZE_MAX};

                if (b->t[i].kind != TARGET_AGENT)
                        continue;
                printf("%s:\n  %-30s %8s %10s", b->t[i].name, "", "floor", "contained");
                if (have_comp)
                        printf(" %10s", "compatible");
                printf(" %8s   %8s", "agent", "contain");
                if (have_comp)
                        printf(" %8s", "files");
                printf(" %8s   shares\n", "rest");
                split_row(b, "trivial round trip (median, ms)", SPLIT_RT, floors, i);
                split_row(b, "CPU per trivial plan (ms)", SPLIT_CPU_RT, floors, i);
                if (b->o.bursts > 0) {
                        split_row(b, "burst (median, ms per plan)", SPLIT_BURST, floors, i);
                        split_row(b, "CPU per plan in a burst (ms)", SPLIT_CPU_BURST, floors, i);
                }
                if (b->o.big > 0)
                        split_row(b, "2 MiB plan (median, ms)", SPLIT_BIG, floors, i);
        }
}
