/* How many commits of a journaled ext4's journal each of the journal's
 * calls makes for one plan, with and without the write-ahead log
 * (JournalOptions.wal): a plan stored, begun with a Stamp above the last,
 * its call log's start and end records, its result stored, its removal
 * with a done record, N times; the file system's transactions counted
 * from /proc/fs/jbd2/<device>/info around each call. Each commit is a
 * flush that waits for the journal's disk lock: what makes the agent slow
 * there (docs/journal.md, "The write-ahead log").
 *
 *     bench/journaled-ext4.sh build/bench/bench-commits [N]   (default 200)
 *
 * (the mount point is the last argument). */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "journal/journal-calls.h"
#include "journal/journal.h"

enum { C_PLAN, C_BEGIN, C_CALLS, C_RESULT, C_REMOVE, N_CALLS };

static const char *const call_names[N_CALLS] = {"put_plan", "begin", "call log", "put_result",
                                                "remove"};

/* The jbd2 info file of the file system holding path, or -1. */
static int info_path(const char *path, char *out, size_t size)
{
        struct stat st;
        glob_t g;
        int r = -1;

        if (stat(path, &st) < 0 || glob("/proc/fs/jbd2/*/info", 0, NULL, &g) != 0)
                return -1;
        for (size_t i = 0; i < g.gl_pathc && r < 0; i++) {
                char dev[64];
                struct stat ds;

                /* /proc/fs/jbd2/loop0-8/info: the device's name, then -8. */
                if (sscanf(g.gl_pathv[i], "/proc/fs/jbd2/%63[^/]", dev) != 1)
                        continue;
                char *dash = strrchr(dev, '-');
                char devpath[96];

                if (dash)
                        *dash = '\0';
                snprintf(devpath, sizeof(devpath), "/dev/%s", dev);
                if (stat(devpath, &ds) == 0 && ds.st_rdev == st.st_dev) {
                        snprintf(out, size, "%s", g.gl_pathv[i]);
                        r = 0;
                }
        }
        globfree(&g);
        return r;
}

static long transactions(const char *info)
{
        FILE *f = fopen(info, "re");
        char line[256];
        long n = -1;

        while (f && fgets(line, sizeof(line), f))
                if (sscanf(line, "%ld transactions", &n) == 1)
                        break;
        if (f)
                fclose(f);
        return n;
}

/* One plan through the journal, the commits of each call added to c.
 * Returns 0 or the failing call's number + 1. */
static int one_plan(Journal *j, const char *storage, const char *info, int i, long c[N_CALLS])
{
        char ts[JOURNAL_TS_MAX], body[64], result[64], dir[600];
        int len = snprintf(body, sizeof(body), "{\"Stamp\": %d}", 1000 + i);
        int rlen = snprintf(result, sizeof(result), "{\"SourceID\": \"p%d\"}", i);
        json_t *stamp = json_integer(1000 + i), *rec = json_pack("{s:i}", "call", 0);
        JournalCallsKey *k = NULL;
        JournalCalls *log = NULL;
        char *error = NULL;
        long t;
        int r = 0;

#define COUNTED(n, call)                                                                           \
        do {                                                                                       \
                t = transactions(info);                                                            \
                if (r == 0 && (call) != 0)                                                         \
                        r = (n) + 1;                                                               \
                c[n] += transactions(info) - t;                                                    \
        } while (0)
        COUNTED(C_PLAN, journal_put_plan(j, body, (size_t)len, NULL, 0, "id", NULL, ts));
        COUNTED(C_BEGIN, journal_begin(j, ts, stamp));
        snprintf(dir, sizeof(dir), "%s/plans/%s", storage, ts);
        if (r == 0 && journal_calls_key(j, ts, &k) < 0)
                r = C_CALLS + 1;
        COUNTED(C_CALLS, journal_calls_open(dir, k, &log, &error) ||
                                 journal_calls_append(log, JOURNAL_CALL_START, rec, true) ||
                                 journal_calls_append(log, JOURNAL_CALL_END, rec, false));
        COUNTED(C_RESULT, journal_put_result(j, ts, result, (size_t)rlen, NULL));
        COUNTED(C_REMOVE, journal_remove(j, ts, true));
#undef COUNTED
        journal_calls_free(log);
        journal_calls_key_free(k);
        free(error);
        json_decref(stamp);
        json_decref(rec);
        return r;
}

int main(int argc, char **argv)
{
        const char *mnt = argc > 1 ? argv[argc - 1] : NULL;
        int n = argc > 2 ? atoi(argv[1]) : 200;
        char info[256], storage[512];

        if (!mnt || n <= 0 || info_path(mnt, info, sizeof(info)) < 0) {
                fprintf(stderr, "usage: bench-commits [N] MOUNT_POINT (a journaled ext4)\n");
                return 2;
        }
        printf("commits of the file system's journal per plan, %d plans\n", n);
        printf("%-12s", "");
        for (int k = 0; k < N_CALLS; k++)
                printf(" %10s", call_names[k]);
        printf(" %10s %10s\n", "per plan", "at close");
        for (int wal = 0; wal < 2; wal++) {
                JournalOptions o = JOURNAL_OPTIONS_DEFAULT;
                long c[N_CALLS] = {0}, t, total = 0;
                Journal *j = NULL;
                int r;

                snprintf(storage, sizeof(storage), "%s/storage-%s", mnt, wal ? "wal" : "plain");
                o.wal = wal;
                r = journal_open(storage, &o, &j);
                if (r < 0) {
                        fprintf(stderr, "bench-commits: journal_open: %s\n", strerror(-r));
                        return 1;
                }
                /* The open's own commits, and the file system's timer, pass. */
                sleep(6);
                for (int i = 0; i < n; i++) {
                        r = one_plan(j, storage, info, i, c);
                        if (r) {
                                fprintf(stderr, "bench-commits: %s failed\n", call_names[r - 1]);
                                return 1;
                        }
                }
                t = transactions(info);
                journal_free(j);
                printf("%-12s", wal ? "with the log" : "without");
                for (int k = 0; k < N_CALLS; k++) {
                        printf(" %10.2f", (double)c[k] / n);
                        total += c[k];
                }
                printf(" %10.2f %10ld\n", (double)total / n, transactions(info) - t);
        }
        return 0;
}
