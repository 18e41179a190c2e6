/* plan_parse_json() on a plan shaped as bench-daemon's 2 MiB plan (the
 * engine's build_execution_plan(): a Base64 file of random bytes with a
 * trailing "\n" escape, json.dumps separators), best of several runs:
 * the plain parse (every string through jansson) against the parse that
 * keeps long runs of string text away from jansson, and the daemon's
 * parse, which leaves the file's body in the plan's text
 * (plan_parse_json_kept(), on a copy of the text made outside the clock),
 * in the same process.
 *
 *   bench-plan-json [BYTES] [RUNS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench-util.h"
#include "plan/plan-internal.h"
#include "plan/plan.h"
#include "util/base64.h"
#include "util/strbuf.h"

static const char head[] = BENCH_SHA_PLAN_HEAD;
static const char tail[] = "\\n\"}}, \"ID\": \"0123456789abcdef0123456789abcdef\","
                           " \"Stamp\": 17000000000000, \"Action\": \"Execute\"}";

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The best time of runs parses with min_run, and the document's dump. */
static double best_of(const StrBuf *plan, size_t min_run, int runs, size_t *ret_runs,
                      char **ret_dump)
{
        double best = 1e9;

        for (int r = 0; r < runs; r++) {
                PlanError err = PLAN_ERROR_INIT;
                json_t *doc = NULL;
                double t0, t1;
                int rc;

                t0 = now_s();
                rc = plan_parse_json_runs(plan->data, plan->len, NULL, min_run, &doc, ret_runs,
                                          &err);
                t1 = now_s();
                if (rc != 0) {
                        fprintf(stderr, "bench-plan-json: %s\n", err.message);
                        exit(1);
                }
                if (r == 0)
                        *ret_dump = json_dumps(doc, JSON_COMPACT);
                json_decref(doc);
                if (t1 - t0 < best)
                        best = t1 - t0;
        }
        return best;
}

/* The best time of runs plan_parse_json_kept() on copies of plan; exits
 * unless the body was kept. */
static double best_kept(const StrBuf *plan, int runs)
{
        double best = 1e9;

        for (int r = 0; r < runs; r++) {
                PlanError err = PLAN_ERROR_INIT;
                PlanText *t = NULL;
                json_t *doc = NULL;
                char *text = malloc(plan->len + 1);
                double t0, t1;
                int rc;

                if (!text)
                        exit(1);
                memcpy(text, plan->data, plan->len + 1);
                t0 = now_s();
                rc = plan_parse_json_kept(&text, plan->len, NULL, &doc, &t, &err);
                t1 = now_s();
                if (rc != 0 || !t) {
                        fprintf(stderr, "bench-plan-json: %s\n",
                                err.message ? err.message : "the body was not kept");
                        exit(1);
                }
                json_decref(doc);
                plan_text_free(t);
                if (t1 - t0 < best)
                        best = t1 - t0;
        }
        return best;
}

int main(int argc, char **argv)
{
        size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 2u << 20, runs_plain = 0, runs_fast = 0;
        int runs = argc > 2 ? atoi(argv[2]) : 15;
        _cleanup_free_ unsigned char *data = malloc(n ? n : 1);
        _cleanup_free_ char *dump_plain = NULL, *dump_fast = NULL;
        _cleanup_strbuf_ StrBuf plan = STRBUF_INIT;
        uint64_t x = 0x9e3779b97f4a7c15u;
        double plain, fast, kept;

        if (!data || runs < 1)
                return 1;
        for (size_t i = 0; i < n; i++) {
                x ^= x >> 12;
                x ^= x << 25;
                x ^= x >> 27;
                data[i] = (unsigned char)((x * 0x2545f4914f6cdd1du) >> 56);
        }
        if (strbuf_puts(&plan, head) < 0 || base64_append(&plan, data, n) < 0 ||
            strbuf_puts(&plan, tail) < 0)
                return 1;

        plain = best_of(&plan, SIZE_MAX, runs, &runs_plain, &dump_plain);
        fast = best_of(&plan, PLAN_JSON_LONG_RUN, runs, &runs_fast, &dump_fast);
        kept = best_kept(&plan, runs);
        if (!dump_plain || !dump_fast || strcmp(dump_plain, dump_fast) != 0 || runs_fast != 1) {
                fprintf(stderr, "bench-plan-json: the two parses differ\n");
                return 1;
        }
        printf("plan of %zu bytes (%zu bytes of data), best of %d\n", plan.len, n, runs);
        printf("%-34s %8.3f ms  %8.0f MB/s\n", "plain (every string via jansson)", plain * 1e3,
               (double)plan.len / plain / 1e6);
        printf("%-34s %8.3f ms  %8.0f MB/s\n", "long runs kept from jansson", fast * 1e3,
               (double)plan.len / fast / 1e6);
        printf("%-34s %8.3f ms  %8.0f MB/s\n", "the file's body left in the text", kept * 1e3,
               (double)plan.len / kept / 1e6);
        return 0;
}
