/* What durable calls cost, without the script: the call log's records for
 * one plan of one call, as the runner writes them (agent/runner/
 * runner-durable.c), timed alone.
 *
 *     build/bench/bench-calls [N] [DIR]
 *
 * N plans (default 500) in entries of a journal made below DIR (default
 * /var/tmp): for each, the entry's call log key (journal_calls_key(), the
 * journal key's HMAC states), journal_calls_open() on a new entry and the
 * Body's hash key (a value record, not fsync'd), then one call: its start
 * record, fdatasync'd, and its end record, not (the next start's flush or
 * the stored result covers it). Prints the medians and 90th
 * percentiles of the two parts in milliseconds, then what one record
 * costs without its fsync (framing, seal, write: the mean of 100 N end
 * records appended to one log). docs/benchmarks.md has today's figures. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench-util.h"
#include "journal/journal-calls.h"
#include "journal/journal.h"

static const char start_text[] =
        "{\"call\": 0, \"name\": \"echo\", \"script\": \"echo\", \"args\": "
        "\"5b2f8e27e2e5b4081c03ce70b288c87bd1263140cbd1bd9ae078123509b7caff\", \"boot\": "
        "\"0f3e0e0a-8a4e-4f5e-9f3e-1c2d3e4f5a6b\"}";
static const char end_text[] = "{\"call\": 0, \"result\": {\"exitCode\": 0, \"stdout\": "
                               "\"hello\\n\", \"stderr\": \"\"}, \"reboot\": false}";
static const char value_text[] =
        "{\"kind\": \"hash-key\", \"what\": \"\", \"value\": \"AAAAAAAAAAAAAAAAAAAAAA==\"}";

static int one_plan(Journal *j, const char *dir, const char *ts, json_t *const recs[3],
                    double *open_ms, double *call_ms)
{
        char path[4200];
        JournalCallsKey *key = NULL;
        JournalCalls *c;
        char *error = NULL;
        double t0, t1, t2;
        int r;

        if (mkdir(dir, 0700) < 0)
                return -1;
        t0 = bench_now_ms();
        r = journal_calls_key(j, ts, &key);
        if (r == 0)
                r = journal_calls_open(dir, key, &c, &error);
        if (r != 0) {
                journal_calls_key_free(key);
                free(error);
                return -1;
        }
        r = journal_calls_append(c, JOURNAL_CALL_VALUE, recs[2], false);
        t1 = bench_now_ms();
        if (r == 0)
                r = journal_calls_append(c, JOURNAL_CALL_START, recs[0], true);
        if (r == 0)
                r = journal_calls_append(c, JOURNAL_CALL_END, recs[1], false);
        t2 = bench_now_ms();
        journal_calls_free(c);
        journal_calls_key_free(key);
        snprintf(path, sizeof(path), "%s/%s", dir, JOURNAL_CALLS_FILE);
        if (unlink(path) < 0 || rmdir(dir) < 0 || r < 0)
                return -1;
        *open_ms = t1 - t0;
        *call_ms = t2 - t1;
        return 0;
}

/* The mean cost in microseconds of one end record appended without its
 * fsync, over m records in one log. */
static double record_us(Journal *j, const char *dir, const json_t *rec, size_t m)
{
        char path[4200];
        JournalCallsKey *key = NULL;
        JournalCalls *c = NULL;
        char *error = NULL;
        double t0, t1;
        int r;

        if (mkdir(dir, 0700) < 0 || journal_calls_key(j, "records", &key) < 0)
                return -1;
        r = journal_calls_open(dir, key, &c, &error);
        t0 = bench_now_ms();
        for (size_t i = 0; r == 0 && i < m; i++)
                r = journal_calls_append(c, JOURNAL_CALL_END, rec, false);
        t1 = bench_now_ms();
        journal_calls_free(c);
        journal_calls_key_free(key);
        free(error);
        snprintf(path, sizeof(path), "%s/%s", dir, JOURNAL_CALLS_FILE);
        (void)unlink(path);
        (void)rmdir(dir);
        return r == 0 ? (t1 - t0) * 1000 / (double)m : -1;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        return remove(path);
}

int main(int argc, char **argv)
{
        size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 500;
        const char *base = argc > 2 ? argv[2] : "/var/tmp";
        json_t *recs[3] = {json_loads(start_text, 0, NULL), json_loads(end_text, 0, NULL),
                           json_loads(value_text, 0, NULL)};
        double *open_ms = calloc(n ? n : 1, sizeof(double));
        double *call_ms = calloc(n ? n : 1, sizeof(double));
        char root[4096], dir[4150], ts[32];
        Journal *j = NULL;
        double rec_us;
        int status = 1;

        snprintf(root, sizeof(root), "%s/bench-calls.XXXXXX", base);
        if (n == 0 || !open_ms || !call_ms || !recs[0] || !recs[1] || !recs[2]) {
                fprintf(stderr, "usage: %s [N > 0] [DIR]\n", argv[0]);
                return 2;
        }
        if (!mkdtemp(root)) {
                perror("mkdtemp");
                return 1;
        }
        if (journal_open(root, NULL, &j) < 0) {
                fprintf(stderr, "cannot open a journal in %s\n", root);
                goto out;
        }
        for (size_t i = 0; i < n; i++) {
                snprintf(ts, sizeof(ts), "%zu", i);
                snprintf(dir, sizeof(dir), "%s/plans/%s", root, ts);
                if (one_plan(j, dir, ts, recs, &open_ms[i], &call_ms[i]) < 0) {
                        fprintf(stderr, "plan %zu failed\n", i);
                        goto out;
                }
        }
        qsort(open_ms, n, sizeof(double), bench_cmp_double);
        qsort(call_ms, n, sizeof(double), bench_cmp_double);
        printf("%s, %zu plans of one call\n", base, n);
        printf("open the call log and record the hash key: median %.3f ms, p90 %.3f ms\n",
               open_ms[n / 2], open_ms[n * 9 / 10]);
        printf("one call (start and end records, 1 fdatasync): median %.3f ms, p90 %.3f ms\n",
               call_ms[n / 2], call_ms[n * 9 / 10]);
        snprintf(dir, sizeof(dir), "%s/plans/records", root);
        rec_us = record_us(j, dir, recs[1], 100 * n);
        if (rec_us < 0) {
                fprintf(stderr, "the records failed\n");
                goto out;
        }
        printf("one record without its fsync (%s): mean %.2f us\n",
               journal_open_report(j)->seal_unsupported ? "unsealed, no xattrs" : "sealed", rec_us);
        status = 0;
out:
        journal_free(j);
        (void)nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
        free(open_ms);
        free(call_ms);
        for (int i = 0; i < 3; i++)
                json_decref(recs[i]);
        return status;
}
