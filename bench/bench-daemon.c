/* The daemon bench (issue 5): muranoagent against a minimal consumer, side
 * by side on one broker, in one run. The consumers all run at once, each on
 * its own plan queue and results queue:
 *
 *   floor         bench-daemon-consumer, the durable floor: prefetch 1;
 *                 for each message, appended to a log and fdatasync()ed,
 *                 the ack, posix_spawn(`sh ./echo.sh`) + waitpid in a
 *                 prepared directory, a small result appended to the log
 *                 and fdatasync()ed, then published with confirms
 *   contained floor
 *                 bench-daemon-contained, the same consumer running its
 *                 script through the agent's runner (runner_run_command()),
 *                 contained as the agent contains a script by default: a
 *                 cgroup with the run limits, an audit session swept after
 *                 the run, the sandbox's steps or its helper; so that
 *                 (contained floor - floor) is what the containment costs,
 *                 and (agent - contained floor) what everything else does
 *   agent (disk)  muranoagent with the default configuration (sandbox on,
 *                 cgroup = auto) and its storage below DIR (a disk)
 *   agent (shm)   the same with its storage below SHMDIR (tmpfs), to tell
 *                 what the disk costs from what the CPU costs
 *
 * and, with --compare or --compare-config, "agent B (disk)" and "agent B
 * (shm)": another build of the agent or another configuration, measured in
 * the same run, so that a change is judged against the same noise.
 *
 * The bench is the engine: one rabbitmq-c connection (bench-daemon-client.c)
 * publishes the plans and takes the results, so that no client process is
 * started per plan. Round trips alternate between the floors and one
 * agent at a time (A/B/A/B, see round_trips()), the agents taking turns in
 * blocks; starts and bursts take turns between all consumers, the first of
 * each turn rotating. Ratios are of medians from the same run.
 *
 * Measured:
 *   start-up      from fork() of the program to the broker counting its
 *                 consumer on the plan queue (a passive queue.declare by the
 *                 bench, polled every 0.2 ms); for the agents also to the
 *                 time of their "consuming" log line (ms resolution)
 *   idle RSS      VmRSS in /proc/PID/status, consuming and idle, after the
 *                 start and again after all the plans
 *   round trip    the trivial plan (Body `return echo().stdout`), from
 *                 publishing it to receiving its result, after --gap ms of
 *                 quiet
 *   2 MiB plan    a plan carrying 2 MiB of random bytes as a Base64 file,
 *                 whose script prints their sha256sum; the same round trip
 *   burst         plans/s over a burst of trivial plans published at once,
 *                 from the first publish to the last result
 *   CPU           per plan, of each consumer and every process it started:
 *                 its own cgroup's usage, in ns or µs (see
 *                 target_cpu_ms() and docs/benchmarks.md)
 *
 * Every result is checked (its SourceID, ErrorCode 0, and the exact Body),
 * so a fast wrong answer cannot pass. bench/run-daemon-bench.sh starts a
 * throwaway broker and runs this; docs/benchmarks.md has the figures. */
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench-util.h"
#include "bench-daemon.h"

#define RESULT_TIMEOUT_MS 60000
#define START_TIMEOUT_MS  30000
#define STOP_TIMEOUT_MS   15000
#define POLL_NS           200000
#define SETTLE_MS         1000
#define WARMUP            5
#define TURN_BLOCK        10

static void sleep_ms(int ms)
{
        struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};

        nanosleep(&ts, NULL);
}

/* ---- set-up and clean-up ------------------------------------------------ */

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        if (remove(path) < 0)
                fprintf(stderr, "bench-daemon: cannot remove %s: %m\n", path);
        return 0;
}

static void remove_tree(const char *path)
{
        if (path)
                nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static const TargetSetup *setup_of(const Bench *b, const Target *t)
{
        if (t->kind == TARGET_BASELINE)
                return &b->baseline_setup;
        if (t->kind == TARGET_CONTAINED)
                return &b->contained_setup;
        if (t->kind == TARGET_COMPATIBLE)
                return &b->compatible_setup;
        return t->tag == 'e' || t->tag == 'c' ? &b->compare_setup : &b->agent_setup;
}

static int add_target(Bench *b, char tag, const char *name, TargetKind kind, const char *dir,
                      const char *storage)
{
        Target *t = &b->t[b->n];
        char *path = NULL;
        int rc;

        if (!strchr(b->o.only, tag))
                return 0;
        *t = (Target){.name = name, .tag = tag, .kind = kind};
        b->n++;
        if (asprintf(&path, "%s/%c", dir, tag) < 0)
                return -ENOMEM;
        rc = mkdir(path, 0755) < 0 ? -errno : 0;
        if (rc == 0)
                rc = target_prepare(t, setup_of(b, t), path, storage, b->queue_prefix);
        if (rc < 0)
                fprintf(stderr, "bench-daemon: cannot prepare %s in %s: %s\n", name, path,
                        strerror(-rc));
        free(path);
        return rc;
}

static int setup(Bench *b)
{
        char *storage[4] = {NULL};
        int rc;

        b->agent_setup = (TargetSetup){.port = b->o.port,
                                       .program = b->o.agent,
                                       .wrap = (const char *const *)b->o.wrap,
                                       .debug = b->o.debug,
                                       .config_extra = b->o.config_extra};
        b->compare_setup = b->agent_setup;
        b->compare_setup.program = b->o.compare ? b->o.compare : b->o.agent;
        b->compare_setup.config_extra = b->o.compare_extra;
        b->compare_setup.wrap = NULL;
        b->baseline_setup = (TargetSetup){.port = b->o.port, .program = b->o.consumer};
        b->contained_setup = (TargetSetup){
                .port = b->o.port, .program = b->o.contained, .helper = b->o.sandbox_helper};
        b->compatible_setup = b->contained_setup;
        b->compatible_setup.program = b->o.compatible;
        plans_init(&b->plans);
        if (asprintf(&b->workdir, "%s/bench-daemon.XXXXXX", b->o.dir) < 0 ||
            asprintf(&b->shmdir, "%s/bench-daemon.XXXXXX", b->o.shm_dir) < 0)
                return -ENOMEM;
        if (!mkdtemp(b->workdir)) {
                rc = -errno;
                fprintf(stderr, "bench-daemon: cannot make a directory in %s: %s\n", b->o.dir,
                        strerror(-rc));
                free(b->workdir);
                b->workdir = NULL;
                return rc;
        }
        if (!strpbrk(b->o.only, "sc") || !mkdtemp(b->shmdir)) {
                rc = strpbrk(b->o.only, "sc") ? -errno : 0;
                if (rc < 0)
                        fprintf(stderr, "bench-daemon: cannot make a directory in %s: %s\n",
                                b->o.shm_dir, strerror(-rc));
                free(b->shmdir);
                b->shmdir = NULL;
                if (rc < 0)
                        return rc;
        }
        if (asprintf(&b->queue_prefix, "bench-daemon-%d", (int)getpid()) < 0 ||
            asprintf(&storage[0], "%s/d/storage", b->workdir) < 0 ||
            asprintf(&storage[1], "%s/s", b->shmdir ? b->shmdir : "") < 0 ||
            asprintf(&storage[2], "%s/e/storage", b->workdir) < 0 ||
            asprintf(&storage[3], "%s/c", b->shmdir ? b->shmdir : "") < 0)
                rc = -ENOMEM;
        else
                rc = add_target(b, 'b', "floor", TARGET_BASELINE, b->workdir, NULL);
        if (rc == 0)
                rc = add_target(b, 'k', "contained floor", TARGET_CONTAINED, b->workdir, NULL);
        if (rc == 0)
                rc = add_target(b, 'p', "compatible floor", TARGET_COMPATIBLE, b->workdir, NULL);
        if (rc == 0)
                rc = add_target(b, 'd', "agent (disk)", TARGET_AGENT, b->workdir, storage[0]);
        if (rc == 0)
                rc = add_target(b, 's', "agent (shm)", TARGET_AGENT, b->workdir, storage[1]);
        if (rc == 0)
                rc = add_target(b, 'e', "agent B (disk)", TARGET_AGENT, b->workdir, storage[2]);
        if (rc == 0)
                rc = add_target(b, 'c', "agent B (shm)", TARGET_AGENT, b->workdir, storage[3]);
        for (size_t i = 0; i < 4; i++)
                free(storage[i]);
        if (rc < 0)
                return rc;

        rc = client_connect(b->o.port, &b->client);
        for (size_t i = 0; rc == 0 && i < b->n; i++) {
                rc = client_declare(b->client, b->t[i].queue);
                if (rc == 0)
                        rc = client_declare(b->client, b->t[i].results);
                if (rc == 0)
                        rc = client_subscribe(b->client, b->t[i].results);
        }
        return rc;
}

static void cleanup(Bench *b)
{
        int status;

        for (size_t i = 0; i < b->n; i++) {
                if (b->t[i].pid > 0)
                        target_stop(&b->t[i], STOP_TIMEOUT_MS, &status);
                if (b->client && b->t[i].queue) {
                        client_delete(b->client, b->t[i].queue);
                        client_delete(b->client, b->t[i].results);
                }
        }
        client_free(b->client);
        if (b->o.keep) {
                fprintf(stderr, "bench-daemon: kept %s%s%s\n", b->workdir ? b->workdir : "",
                        b->shmdir ? " and " : "", b->shmdir ? b->shmdir : "");
        } else {
                remove_tree(b->workdir);
                remove_tree(b->shmdir);
        }
        for (size_t i = 0; i < b->n; i++)
                target_clear(&b->t[i]);
        free(b->workdir);
        free(b->shmdir);
        free(b->queue_prefix);
        plans_clear(&b->plans);
        free(b->o.config_extra);
        free(b->o.compare);
        free(b->o.compare_extra);
        free(b->o.wrap);
        free(b->o.agent);
        free(b->o.consumer);
        free(b->o.contained);
        free(b->o.compatible);
        free(b->o.sandbox_helper);
        report_free(&b->r);
}

/* ---- start-up ------------------------------------------------------------ */

static int fail_target(Target *t, const char *what)
{
        fprintf(stderr, "bench-daemon: %s: %s\n", t->name, what);
        target_log_tail(t, 20);
        return -EIO;
}

static int wait_consumers(Bench *b, Target *t, unsigned want, double *ret_ms)
{
        struct timespec poll_step = {.tv_nsec = POLL_NS};
        double deadline = bench_now_ms() + START_TIMEOUT_MS;
        unsigned n;
        int status, rc;

        for (;;) {
                rc = client_consumers(b->client, t->queue, &n);
                if (rc < 0)
                        return rc;
                if (n == want) {
                        *ret_ms = bench_now_ms();
                        return 0;
                }
                if (want > 0 && target_exited(t, &status) == 1)
                        return fail_target(t, "it ended before it consumed");
                if (bench_now_ms() > deadline)
                        return fail_target(t, want ? "not consuming after 30 s"
                                                   : "its consumer is still there after 30 s");
                nanosleep(&poll_step, NULL);
        }
}

static bool stopped_cleanly(const Bench *b, const Target *t, int status)
{
        /* Both exit 0 after SIGTERM. A wrapper (strace, perf) ends as it
         * likes. */
        if (setup_of(b, t)->wrap)
                return true;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int measure_starts(Bench *b)
{
        int starts = b->o.starts;

        for (int round = 0; round < starts; round++)
                for (size_t j = 0; j < b->n; j++) {
                        size_t i = (round + j) % b->n;
                        Target *t = &b->t[i];
                        double t0, wall, t1;
                        int rc, status;

                        rc = wait_consumers(b, t, 0, &t1);
                        if (rc == 0)
                                rc = target_start(t, setup_of(b, t), &t0, &wall);
                        if (rc == 0)
                                rc = wait_consumers(b, t, 1, &t1);
                        if (rc < 0)
                                return rc;
                        b->r.start_ms[i][round] = t1 - t0;
                        b->r.start_wall[i][round] = wall;
                        if (round == starts - 1)
                                continue;
                        rc = target_stop(t, STOP_TIMEOUT_MS, &status);
                        if (rc < 0)
                                return rc;
                        if (!stopped_cleanly(b, t, status))
                                return fail_target(t, "it did not stop cleanly on SIGTERM");
                }
        return 0;
}

/* The agents' "consuming" log lines, one per start, against the fork times.
 * Read once the agents have settled: the broker counts a consumer a moment
 * before the agent's loop logs it. A wrapped agent's log holds the
 * wrapper's start, so it is left out. */
static void read_start_logs(Bench *b)
{
        int starts = b->o.starts;

        for (size_t i = 0; i < b->n; i++) {
                double logged[64];
                int n;

                if (b->t[i].kind != TARGET_AGENT || setup_of(b, &b->t[i])->wrap)
                        continue;
                n = target_log_consuming(&b->t[i], logged, starts < 64 ? starts : 64);
                for (int k = 0; n == starts && k < n; k++)
                        b->r.start_log_ms[i][k] = logged[k] - b->r.start_wall[i][k];
                b->r.start_log_n[i] = n == starts ? n : 0;
        }
}

static int measure_memory(Bench *b, TargetMemory *ret)
{
        sleep_ms(SETTLE_MS);
        for (size_t i = 0; i < b->n; i++) {
                int rc = target_memory(&b->t[i], &ret[i]);
                if (rc < 0) {
                        fprintf(stderr, "bench-daemon: %s: cannot read its memory: %s\n",
                                b->t[i].name, strerror(-rc));
                        return rc;
                }
        }
        return 0;
}

/* ---- plans --------------------------------------------------------------- */

/* CPU time of every consumer now (target_cpu_ms()); one that cannot be
 * read counts 0 and shows as a nonsense figure rather than stopping the
 * bench. */
static void cpu_mark(const Bench *b, double *ret)
{
        for (size_t i = 0; i < b->n; i++)
                if (target_cpu_ms(&b->t[i], &ret[i]) < 0)
                        ret[i] = 0;
}

/* count is per consumer, or, when paired, per agent: each floor then had a
 * plan paired with each agent's (bench_plans_of()). A burst is not paired:
 * every consumer has the same bursts. */
static void cpu_per_plan(const Bench *b, const double *before, int count, bool paired, double *ret)
{
        double after[BENCH_MAX_TARGETS];

        cpu_mark(b, after);
        for (size_t i = 0; i < b->n; i++)
                ret[i] = (after[i] - before[i]) / (paired ? bench_plans_of(b, i, count) : count);
}

/* The next result, which must come from t's results queue. */
static int next_result(Bench *b, Target *t, int timeout_ms, ClientMessage *ret)
{
        int rc = client_next(b->client, timeout_ms, ret);

        if (rc == 0)
                return fail_target(t, "no result in time");
        if (rc < 0)
                return rc;
        if (strcmp(ret->queue, t->results) != 0) {
                fprintf(stderr, "bench-daemon: a result on %s while waiting for %s: %.300s\n",
                        ret->queue, t->name, ret->body);
                client_message_clear(ret);
                return -EIO;
        }
        return 0;
}

static int check_result(Target *t, const ClientMessage *m, const char *id, const char *want)
{
        char *why = NULL;

        if (plans_check(m->body, m->len, id, want, &why) == 0)
                return 0;
        fprintf(stderr, "bench-daemon: %s: wrong result: %s\n", t->name, why ? why : "?");
        free(why);
        return -EIO;
}

/* One plan from publish to result; *ret_ms is the time it took. */
static int round_trip(Bench *b, Target *t, bool big, double *ret_ms)
{
        char id[64];
        ClientMessage m = {0};
        size_t len = 0;
        double t0, t1;
        char *text;
        int rc;

        snprintf(id, sizeof(id), "%s-%c-%06u", big ? "sha" : "echo", t->tag, ++b->seq);
        text = big ? plans_sha(&b->plans, id, &len) : plans_echo(&b->plans, id, &len);
        if (!text)
                return -ENOMEM;
        t0 = bench_now_ms();
        rc = client_publish(b->client, t->queue, id, text, len);
        if (rc == 0)
                rc = next_result(b, t, RESULT_TIMEOUT_MS, &m);
        t1 = bench_now_ms();
        free(text);
        if (rc < 0)
                return rc;
        rc = check_result(t, &m, id, big ? b->plans.sha_output : "hello");
        client_message_clear(&m);
        if (rc == 0)
                *ret_ms = t1 - t0;
        return rc;
}

/* One round trip after gap_ms of quiet. Plans reach a real agent seconds
 * apart; sent back to back they would find warm what is cold in real use
 * (the kernel's cgroup migration is one such thing: see round_trips()). */
static int one_turn(Bench *b, size_t i, bool big, double *ret_ms)
{
        double t = 0;
        int rc;

        sleep_ms(b->o.gap_ms);
        rc = round_trip(b, &b->t[i], big, &t);

        if (rc == 0 && ret_ms)
                *ret_ms = t;
        return rc;
}

/* The floors' turns paired with turn k of the agent in slot (k of count
 * when there is no agent, slot 0). floors[] is outermost first: before
 * the agent's turn they go in that order, after it in the reverse, so the
 * durable floor's turns stay next to the agent's, as they were before
 * there was a contained floor. */
static int floor_turns(Bench *b, const size_t *floors, size_t n_floors, bool before, size_t slot,
                       int count, int k, bool big, double **ms)
{
        for (size_t j = 0; j < n_floors; j++) {
                size_t f = floors[before ? j : n_floors - 1 - j];
                int rc = one_turn(b, f, big, ms ? &ms[f][slot * (size_t)count + (size_t)k] : NULL);

                if (rc < 0)
                        return rc;
        }
        return 0;
}

/* count plans for each agent, each paired with one for each floor, the
 * floors' first before the agent's and then after it, alternating. The
 * agents take turns in blocks of TURN_BLOCK plans, and only one works at a
 * time, as on a VM: moving a process into a cgroup costs the kernel an RCU
 * grace period (about 12 ms here) unless some process moved within the
 * last few milliseconds, so agents working in the same turns would hide
 * that cost from each other. ms[i] gets consumer i's times (see
 * bench_plans_of() for the floors'); NULL: a warm-up, not kept. */
static int round_trips(Bench *b, int count, bool big, double **ms)
{
        size_t agents[BENCH_MAX_TARGETS], n_agents = 0, floors[3], n_floors = 0, f = 0;
        int rc = 0;

        /* The compatible floor outermost, the durable floor nearest. */
        if (bench_compatible(b, &f))
                floors[n_floors++] = f;
        if (bench_contained(b, &f))
                floors[n_floors++] = f;
        if (bench_baseline(b, &f))
                floors[n_floors++] = f;
        for (size_t i = 0; i < b->n; i++)
                if (b->t[i].kind == TARGET_AGENT)
                        agents[n_agents++] = i;
        if (n_agents == 0) {
                for (int k = 0; k < count && rc == 0; k++)
                        rc = floor_turns(b, floors, n_floors, true, 0, count, k, big, ms);
                return rc;
        }
        for (int k0 = 0; k0 < count; k0 += TURN_BLOCK)
                for (size_t a = 0; a < n_agents; a++) {
                        size_t slot = (a + (size_t)(k0 / TURN_BLOCK)) % n_agents;
                        size_t i = agents[slot];

                        for (int k = k0; k < k0 + TURN_BLOCK && k < count; k++) {
                                double *at = ms ? &ms[i][k] : NULL;

                                if (k % 2 == 0)
                                        rc = floor_turns(b, floors, n_floors, true, slot, count, k,
                                                         big, ms);
                                if (rc == 0)
                                        rc = one_turn(b, i, big, at);
                                if (rc == 0 && k % 2 == 1)
                                        rc = floor_turns(b, floors, n_floors, false, slot, count, k,
                                                         big, ms);
                                if (rc < 0)
                                        return rc;
                        }
                }
        return 0;
}

/* A burst: every plan published at once, then every result taken. */
static int burst(Bench *b, Target *t, int k, double *ret_rate, double *ret_publish_ms)
{
        int n = b->o.burst, got = 0, rc = 0;
        char prefix[64], id[80];
        char **texts = calloc((size_t)n, sizeof(*texts));
        size_t *lens = calloc((size_t)n, sizeof(*lens));
        bool *seen = calloc((size_t)n, sizeof(*seen));
        double t0, t_pub, t_last = 0;

        if (!texts || !lens || !seen) {
                rc = -ENOMEM;
                goto out;
        }
        snprintf(prefix, sizeof(prefix), "burst-%c-%d-", t->tag, k);
        for (int i = 0; i < n; i++) {
                snprintf(id, sizeof(id), "%s%05d", prefix, i);
                texts[i] = plans_echo(&b->plans, id, &lens[i]);
                if (!texts[i]) {
                        rc = -ENOMEM;
                        goto out;
                }
        }
        t0 = bench_now_ms();
        for (int i = 0; i < n && rc == 0; i++) {
                snprintf(id, sizeof(id), "%s%05d", prefix, i);
                rc = client_publish(b->client, t->queue, id, texts[i], lens[i]);
        }
        t_pub = bench_now_ms();
        while (rc == 0 && got < n) {
                ClientMessage m = {0};
                char sid[80];
                int idx = -1;

                rc = next_result(b, t, RESULT_TIMEOUT_MS, &m);
                if (rc < 0)
                        break;
                t_last = bench_now_ms();
                if (plans_source_id(m.body, m.len, sid, sizeof(sid)) == 0 &&
                    strncmp(sid, prefix, strlen(prefix)) == 0)
                        idx = atoi(sid + strlen(prefix));
                if (idx < 0 || idx >= n || seen[idx]) {
                        fprintf(stderr, "bench-daemon: %s: unexpected or repeated result: %.300s\n",
                                t->name, m.body);
                        rc = -EIO;
                } else {
                        seen[idx] = true;
                        got++;
                        rc = check_result(t, &m, sid, "hello");
                }
                client_message_clear(&m);
        }
        if (rc == 0) {
                *ret_rate = n / ((t_last - t0) / 1e3);
                *ret_publish_ms = t_pub - t0;
        }
out:
        for (int i = 0; texts && i < n; i++)
                free(texts[i]);
        free(texts);
        free(lens);
        free(seen);
        return rc;
}

static int bursts(Bench *b)
{
        for (int k = 0; k < b->o.bursts; k++)
                for (size_t j = 0; j < b->n; j++) {
                        size_t i = (k + j) % b->n;
                        int rc = burst(b, &b->t[i], k, &b->r.burst_rate[i][k],
                                       &b->r.burst_publish_ms[i][k]);
                        if (rc < 0)
                                return rc;
                }
        return 0;
}

static int stop_all(Bench *b)
{
        int rc = 0;

        for (size_t i = 0; i < b->n; i++) {
                int status = 0, r = target_stop(&b->t[i], STOP_TIMEOUT_MS, &status);

                if (r < 0)
                        return r;
                if (!stopped_cleanly(b, &b->t[i], status)) {
                        fail_target(&b->t[i], "it did not stop cleanly on SIGTERM");
                        rc = -EIO;
                }
                b->r.log_problems[i] =
                        b->t[i].kind != TARGET_BASELINE ? target_log_problems(&b->t[i]) : 0;
        }
        return rc;
}

/* The 2 MiB plan's data, and data.bin for the floors' sha.sh: written in
 * the first floor's directory, linked into the other's. */
static int make_data(Bench *b)
{
        char *first = NULL, *path = NULL;
        int rc = 0;

        for (size_t i = 0; i < b->n && rc == 0; i++) {
                if (b->t[i].kind == TARGET_AGENT)
                        continue;
                if (asprintf(&path, "%s/data.bin", b->t[i].dir) < 0)
                        rc = -ENOMEM;
                else if (!first) {
                        first = path;
                        path = NULL;
                        rc = plans_make_data(&b->plans, first);
                } else if (link(first, path) < 0) {
                        rc = -errno;
                }
                free(path);
                path = NULL;
        }
        if (rc == 0 && !first)
                rc = plans_make_data(&b->plans, NULL);
        free(first);
        return rc;
}

static int run(Bench *b)
{
        double cpu[BENCH_MAX_TARGETS];
        int rc;

        rc = report_alloc(&b->r, b->n, &b->o);
        if (rc < 0)
                return rc;
        report_intro(b);
        /* Start-up first: the fork that starts a consumer then copies a
         * small bench, before the 2 MiB plan is built. */
        rc = measure_starts(b);
        if (rc == 0)
                rc = measure_memory(b, b->r.mem_start);
        if (rc < 0)
                return rc;
        read_start_logs(b);
        report_starts(b);

        rc = make_data(b);
        if (rc < 0) {
                fprintf(stderr, "bench-daemon: cannot make the 2 MiB file: %s\n", strerror(-rc));
                return rc;
        }
        rc = round_trips(b, WARMUP, false, NULL);
        if (rc == 0 && b->o.big > 0)
                rc = round_trips(b, 1, true, NULL);
        cpu_mark(b, cpu);
        if (rc == 0)
                rc = round_trips(b, b->o.runs, false, b->r.rt_ms);
        if (rc == 0) {
                cpu_per_plan(b, cpu, b->o.runs, true, b->r.cpu_rt);
                report_round_trips(b);
        }
        cpu_mark(b, cpu);
        if (rc == 0 && b->o.big > 0)
                rc = round_trips(b, b->o.big, true, b->r.big_ms);
        if (rc == 0 && b->o.big > 0) {
                cpu_per_plan(b, cpu, b->o.big, true, b->r.cpu_big);
                report_big(b);
        }
        cpu_mark(b, cpu);
        if (rc == 0)
                rc = bursts(b);
        if (rc == 0 && b->o.bursts > 0) {
                cpu_per_plan(b, cpu, b->o.bursts * b->o.burst, false, b->r.cpu_burst);
                report_bursts(b);
        }
        if (rc == 0)
                rc = measure_memory(b, b->r.mem_end);
        if (rc == 0)
                rc = stop_all(b);
        if (rc < 0)
                return rc;
        report_memory(b);
        report_targets(b);
        report_split(b);
        return 0;
}

int main(int argc, char **argv)
{
        Bench b = {0};
        int rc;

        rc = options_parse(&b.o, argc, argv);
        if (rc >= 0) {
                cleanup(&b);
                return rc;
        }
        /* A dead consumer's connection must not kill the bench with SIGPIPE
         * while it publishes; the error comes back from the write. */
        signal(SIGPIPE, SIG_IGN);
        setvbuf(stdout, NULL, _IOLBF, 0);
        rc = setup(&b);
        if (rc == 0)
                rc = run(&b);
        cleanup(&b);
        return rc < 0 ? 1 : 0;
}
