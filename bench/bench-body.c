/* How long one Body evaluation takes: the most common real Body,
 *
 *     return deploy(args.appName).stdout
 *
 * run N times through body_run (parse and run; body.h has no separate
 * parse step) with a fake host, against a baseline that does the
 * equivalent work with jansson alone (load the Parameters, look the name up,
 * build the script result and take stdout from it). Prints the median and
 * 99th percentile per evaluation in microseconds, evaluations per second,
 * and the ratio to the baseline. The target is below 50 us per evaluation.
 * Then the same figures for a Body of integers beyond 64 bits (GMP), N / 10
 * evaluations.
 *
 *     build/bench/bench-body [N]        (default N = 200000)
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench-util.h"
#include "body/body.h"

#define TARGET_US 50.0

static const char body[] = "return deploy(args.appName).stdout\n";
static const char parameters_text[] = "{\"appName\": \"wordpress-app\"}";
static const char *const scripts[] = {"deploy"};

static const char big_body[] = "x = 2 ** 100\n"
                               "s = 0\n"
                               "for i in range(50):\n"
                               "    s = s * 3 + x // (i + 1) - (s >> 7)\n"
                               "return str(s % 10 ** 30) + hex(s)[-8:]\n";
static const char big_result[] = "9015382164703500493781411187201a77680";

typedef struct Stats {
        double median_us, p99_us, max_us, per_second;
} Stats;

static int fake_call(void *userdata, const BodyCall *call, json_t **ret, BodyCallError *err)
{
        *ret = json_pack("{s:i, s:s, s:n}", "exitCode", 0, "stdout", "deployed wordpress-app",
                         "stderr");
        return *ret ? 0 : -ENOMEM;
}

static double now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static Stats summarise(double *ns, size_t n, double total_ns)
{
        qsort(ns, n, sizeof(*ns), bench_cmp_double);
        return (Stats){.median_us = ns[n / 2] / 1e3,
                       .p99_us = ns[(size_t)((double)(n - 1) * 0.99)] / 1e3,
                       .max_us = ns[n - 1] / 1e3,
                       .per_second = (double)n / (total_ns / 1e9)};
}

/* One evaluation through the interpreter. Returns 0 when it gave the
 * expected string. */
static int eval_body(const json_t *parameters, const BodyHost *host, const BodyLimits *lim)
{
        BodyOutcome o = {0};
        int r = body_run(body, sizeof(body) - 1, parameters, scripts, 1, host, lim, &o);

        if (r == 0 && (o.error_code != 0 ||
                       strcmp(json_string_value(o.value) ?: "", "deployed wordpress-app") != 0))
                r = -EINVAL;
        body_outcome_clear(&o);
        return r;
}

static int eval_big(const BodyHost *host, const BodyLimits *lim)
{
        BodyOutcome o = {0};
        int r = body_run(big_body, sizeof(big_body) - 1, NULL, NULL, 0, host, lim, &o);

        if (r == 0 &&
            (o.error_code != 0 || strcmp(json_string_value(o.value) ?: "", big_result) != 0))
                r = -EINVAL;
        body_outcome_clear(&o);
        return r;
}

/* The same work without an interpreter: the cheapest code that turns the
 * Parameters into the script's stdout. */
static int eval_baseline(void)
{
        json_t *params = json_loads(parameters_text, 0, NULL), *res, *out;
        const char *name = json_string_value(json_object_get(params, "appName"));
        int r = -EINVAL;

        if (!name) {
                json_decref(params);
                return r;
        }
        res = json_pack("{s:i, s:s, s:n}", "exitCode", 0, "stdout", "deployed wordpress-app",
                        "stderr");
        out = json_incref(json_object_get(res, "stdout"));
        if (out && strcmp(json_string_value(out), "deployed wordpress-app") == 0 && *name)
                r = 0;
        json_decref(out);
        json_decref(res);
        json_decref(params);
        return r;
}

int main(int argc, char **argv)
{
        size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 200000;
        BodyHost host = {.call_script = fake_call};
        BodyLimits lim = BODY_LIMITS_DEFAULT;
        json_t *parameters = json_loads(parameters_text, 0, NULL);
        double *ns = calloc(n ? n : 1, sizeof(*ns)), t0, total;
        Stats body_stats, base_stats, big_stats;
        size_t n_big;

        if (n == 0 || !ns || !parameters) {
                fprintf(stderr, "usage: %s [N > 0]\n", argv[0]);
                return 2;
        }
        /* Warm up caches and the allocator before measuring. */
        for (size_t i = 0; i < 1000; i++)
                if (eval_body(parameters, &host, &lim) < 0 || eval_baseline() < 0) {
                        fprintf(stderr, "evaluation failed\n");
                        return 1;
                }

        total = now_ns();
        for (size_t i = 0; i < n; i++) {
                t0 = now_ns();
                if (eval_body(parameters, &host, &lim) < 0)
                        return 1;
                ns[i] = now_ns() - t0;
        }
        body_stats = summarise(ns, n, now_ns() - total);

        total = now_ns();
        for (size_t i = 0; i < n; i++) {
                t0 = now_ns();
                if (eval_baseline() < 0)
                        return 1;
                ns[i] = now_ns() - t0;
        }
        base_stats = summarise(ns, n, now_ns() - total);

        n_big = n / 10 ? n / 10 : 1;
        for (size_t i = 0; i < 100; i++)
                if (eval_big(&host, &lim) < 0) {
                        fprintf(stderr, "big-integer evaluation failed\n");
                        return 1;
                }
        total = now_ns();
        for (size_t i = 0; i < n_big; i++) {
                t0 = now_ns();
                if (eval_big(&host, &lim) < 0)
                        return 1;
                ns[i] = now_ns() - t0;
        }
        big_stats = summarise(ns, n_big, now_ns() - total);

        printf("Body: %s", body);
        printf("%zu evaluations each\n", n);
        printf("%-22s %10s %10s %10s %14s\n", "", "median us", "p99 us", "max us", "evals/s");
        printf("%-22s %10.2f %10.2f %10.1f %14.0f\n", "body_run (parse+run)", body_stats.median_us,
               body_stats.p99_us, body_stats.max_us, body_stats.per_second);
        printf("%-22s %10.2f %10.2f %10.1f %14.0f\n", "baseline (jansson)", base_stats.median_us,
               base_stats.p99_us, base_stats.max_us, base_stats.per_second);
        printf("ratio body_run / baseline (median): %.1fx\n",
               body_stats.median_us / base_stats.median_us);
        printf("target < %.0f us per evaluation: %s\n", TARGET_US,
               body_stats.median_us < TARGET_US ? "met" : "NOT met");
        printf("\nBody of big integers (%zu evaluations):\n%s", n_big, big_body);
        printf("%-22s %10.2f %10.2f %10.1f %14.0f\n", "body_run (parse+run)", big_stats.median_us,
               big_stats.p99_us, big_stats.max_us, big_stats.per_second);
        free(ns);
        json_decref(parameters);
        return 0;
}
