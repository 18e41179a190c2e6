/* What a file system charges for the file operations one plan needs, in
 * the order the agent makes them (docs/journal.md, "Durability"): the
 * journal's entry (the result's empty slot, plan.json written under a
 * temporary name, fsync'd, renamed, the directories fsync'd), the
 * `running` mark, the stamp written in place, the plan's files (a cache
 * directory, a script file, a script folder with a symlink to it), the
 * call log's start record flushed and its end record, the result written
 * into its slot, fsync'd and renamed to result.json, and after the
 * broker's confirm the stamp's flush, the done record and the removals.
 *
 * Part 1 times each operation alone, N times, with a pause between plans
 * as a real agent has; the table gives medians, and the sum of the ones
 * on the engine's round trip. It is the floor under the daemon's round
 * trip on that file system, whatever the agent does with its CPU.
 *
 * Part 2 weighs the same plan's durability done in three ways, side by
 * side, each as a round trip (N plans, the pause between them) and in
 * bursts (N plans back to back, plans per second):
 *   today          as part 1;
 *   log + mirror   each durable fact appended to a preallocated log of
 *                  written zeros and fdatasync()ed (the plan, its start,
 *                  the call's start record, the result), the directory
 *                  layout written as today but never flushed, and the
 *                  mirror made durable by one syncfs() per CHECKPOINT
 *                  plans (a write-ahead log, docs/journal.md);
 *   log only       the log's appends and flushes, and only the plan's
 *                  files that its script needs: no entry directory.
 * Each keeps the same promises on a power loss, given a recovery that
 * rebuilds the layout from the log; the last two are what such a journal
 * would cost the file system, measured before it is built.
 *
 *     build/bench/bench-fs [N] [DIR]    (default 200, $TMPDIR or /tmp)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench-util.h"

/* The log of parts 2's second and third ways, and the plans between two
 * checkpoints of the second. */
#define LOG_SIZE   (8 << 20)
#define CHECKPOINT 64

enum {
        OP_MKDIR_ENTRY,
        OP_CREATE_SLOT,
        OP_WRITE_PLAN,
        OP_FSYNC_PLAN,
        OP_RENAME_PLAN,
        OP_FSYNC_ENTRY,
        OP_FSYNC_PLANS,
        OP_LINK_RUNNING,
        OP_FSYNC_RUNNING,
        OP_WRITE_STAMP,
        OP_MKDIR_CACHE,
        OP_WRITE_SCRIPT,
        OP_MKDIR_FOLDER,
        OP_SYMLINK,
        OP_WRITE_CALL_START,
        OP_FDATASYNC_CALLS,
        OP_WRITE_CALL_END,
        OP_WRITE_RESULT,
        OP_FSYNC_RESULT,
        OP_RENAME_RESULT,
        OP_FSYNC_STAMP,
        OP_APPEND_DONE,
        OP_FSYNC_DONE,
        OP_REMOVE_FILES,
        OP_REMOVE_ENTRY,
        N_OPS
};

static const struct {
        const char *name;
        bool round_trip; /* the engine waits for it */
} ops[N_OPS] = {
        {"mkdir plans/<ts>", true},
        {"create .result (empty)", true},
        {"create + write .plan.json.tmp (645 B)", true},
        {"fsync .plan.json.tmp", true},
        {"rename to plan.json", true},
        {"fsync plans/<ts>", true},
        {"fsync plans/", true},
        {"link plan.json as running", true},
        {"fsync plans/<ts>", true},
        {"write stamp in place (14 B)", true},
        {"mkdir files/<id>", true},
        {"create + write files/<id>/f (21 B)", true},
        {"mkdir files/<id>/script", true},
        {"symlink script/echo.sh (absolute)", true},
        {"create + write calls (start, 200 B)", true},
        {"fdatasync calls", true},
        {"write calls (end, 200 B)", true},
        {"write .result (300 B)", true},
        {"fsync .result", true},
        {"rename to result.json", true},
        {"fsync stamp", false},
        {"append done/records (400 B)", false},
        {"fsync done/records", false},
        {"remove files/<id> (3 unlinks, 2 rmdirs)", false},
        {"remove plans/<ts> (4 unlinks, rmdir)", false},
};

typedef enum { WAY_TODAY, WAY_LOG_MIRROR, WAY_LOG_ONLY, N_WAYS } Way;

static const char *const way_names[N_WAYS] = {"today", "log + mirror", "log only"};

typedef struct Dirs {
        int plans_fd, files_fd, done_fd, stamp_fd, records_fd;
        const char *files_path;
        int log_fd;
        off_t log_pos;
} Dirs;

static _Noreturn void die(const char *what)
{
        fprintf(stderr, "bench-fs: %s: %s\n", what, strerror(errno));
        exit(1);
}

static const char *xs(void)
{
        static char buf[1024];

        if (!buf[0])
                memset(buf, 'x', sizeof(buf));
        return buf;
}

/* dirfd/name opened as a directory. */
static int open_in(int dirfd, const char *name)
{
        int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0)
                die(name);
        return fd;
}

/* len bytes written into dirfd/name, a new file (O_CREAT | O_EXCL) or
 * an existing one (O_TRUNC). */
static int write_at(int dirfd, const char *name, int flags, size_t len)
{
        int fd = openat(dirfd, name, O_WRONLY | O_CLOEXEC | flags, 0600);

        if (fd < 0 || write(fd, xs(), len) != (ssize_t)len)
                die(name);
        return fd;
}

static void flush(int fd, bool data_only)
{
        if ((data_only ? fdatasync(fd) : fsync(fd)) < 0)
                die("flush");
}

/* A record of len bytes appended to the log, wrapping to its start, and
 * flushed when asked: an overwrite of written zeros, so that the flush
 * carries the data alone. */
static void log_append(Dirs *d, size_t len, bool sync)
{
        if (d->log_pos + (off_t)len > LOG_SIZE)
                d->log_pos = 0;
        if (pwrite(d->log_fd, xs(), len, d->log_pos) != (ssize_t)len)
                die("log");
        d->log_pos += (off_t)len;
        if (sync)
                flush(d->log_fd, true);
}

/* One plan's operations the way w does them; t[op] gets each one's time
 * (those w makes), and the result is durable *ret_rt ms after the start. */
static void one_plan(Dirs *d, Way w, int i, double *t, double *ret_rt)
{
        double start = bench_now_ms();
        char ts[32], id[32], target[8192];
        bool mirror = w != WAY_LOG_ONLY, today = w == WAY_TODAY, log = !today;
        double t0;
        int entry_fd = -1, cache_fd, folder_fd, fd;

        snprintf(ts, sizeof(ts), "%d", 100000 + i);
        snprintf(id, sizeof(id), "plan-%d", i);

#define TIMED(op, stmt)                                                                            \
        do {                                                                                       \
                t0 = bench_now_ms();                                                               \
                stmt;                                                                              \
                t[op] = bench_now_ms() - t0;                                                       \
        } while (0)

        if (mirror) {
                TIMED(OP_MKDIR_ENTRY, if (mkdirat(d->plans_fd, ts, 0700) < 0) die("mkdir"));
                entry_fd = open_in(d->plans_fd, ts);
                TIMED(OP_CREATE_SLOT, fd = write_at(entry_fd, ".result", O_CREAT | O_EXCL, 0));
                close(fd);
                TIMED(OP_WRITE_PLAN,
                      fd = write_at(entry_fd, ".plan.json.tmp", O_CREAT | O_EXCL, 645));
                if (today)
                        TIMED(OP_FSYNC_PLAN, flush(fd, false));
                close(fd);
                TIMED(OP_RENAME_PLAN, if (renameat(entry_fd, ".plan.json.tmp", entry_fd,
                                                   "plan.json") < 0) die("rename"));
                if (today) {
                        TIMED(OP_FSYNC_ENTRY, flush(entry_fd, false));
                        TIMED(OP_FSYNC_PLANS, flush(d->plans_fd, false));
                }
        }
        if (log)
                log_append(d, 645 + 64, true);
        if (mirror)
                TIMED(OP_LINK_RUNNING,
                      if (linkat(entry_fd, "plan.json", entry_fd, "running", 0) < 0) die("link"));
        if (today)
                TIMED(OP_FSYNC_RUNNING, flush(entry_fd, false));
        if (log)
                log_append(d, 64 + 14, true);
        if (mirror)
                TIMED(OP_WRITE_STAMP,
                      if (pwrite(d->stamp_fd, "17153280001234", 14, 0) != 14) die("stamp"));

        TIMED(OP_MKDIR_CACHE, if (mkdirat(d->files_fd, id, 0700) < 0) die("mkdir"));
        cache_fd = open_in(d->files_fd, id);
        TIMED(OP_WRITE_SCRIPT, fd = write_at(cache_fd, "f", O_CREAT | O_EXCL, 21));
        close(fd);
        TIMED(OP_MKDIR_FOLDER, if (mkdirat(cache_fd, "script", 0755) < 0) die("mkdir"));
        folder_fd = open_in(cache_fd, "script");
        if ((size_t)snprintf(target, sizeof(target), "%s/%s/f", d->files_path, id) >=
            sizeof(target))
                die("path too long");
        TIMED(OP_SYMLINK, if (symlinkat(target, folder_fd, "echo.sh") < 0) die("symlink"));

        if (mirror) {
                TIMED(OP_WRITE_CALL_START, fd = write_at(entry_fd, "calls", O_CREAT | O_EXCL, 200));
                if (today)
                        TIMED(OP_FDATASYNC_CALLS, flush(fd, true));
                TIMED(OP_WRITE_CALL_END, if (write(fd, xs(), 200) != 200) die("calls"));
                close(fd);
        }
        if (log) {
                log_append(d, 64 + 200, true);
                log_append(d, 64 + 200, false);
        }
        if (mirror) {
                TIMED(OP_WRITE_RESULT, fd = write_at(entry_fd, ".result", O_TRUNC, 300));
                if (today)
                        TIMED(OP_FSYNC_RESULT, flush(fd, false));
                close(fd);
                TIMED(OP_RENAME_RESULT, if (renameat(entry_fd, ".result", entry_fd, "result.json") <
                                            0) die("rename"));
        }
        if (log)
                log_append(d, 64 + 300, true);
        *ret_rt = bench_now_ms() - start;

        /* The result is out; after the broker's confirm: */
        if (today)
                TIMED(OP_FSYNC_STAMP, flush(d->stamp_fd, false));
        if (mirror)
                TIMED(OP_APPEND_DONE, if (write(d->records_fd, xs(), 400) != 400) die("done"));
        if (today)
                TIMED(OP_FSYNC_DONE, flush(d->records_fd, false));
        if (log)
                log_append(d, 64 + 400, false);
        TIMED(OP_REMOVE_FILES,
              if (unlinkat(folder_fd, "echo.sh", 0) < 0 ||
                  unlinkat(cache_fd, "script", AT_REMOVEDIR) < 0 ||
                  unlinkat(cache_fd, "f", 0) < 0 || unlinkat(d->files_fd, id, AT_REMOVEDIR) < 0)
                      die("remove files"));
        if (mirror) {
                TIMED(OP_REMOVE_ENTRY,
                      if (unlinkat(entry_fd, "plan.json", 0) < 0 ||
                          unlinkat(entry_fd, "running", 0) < 0 ||
                          unlinkat(entry_fd, "calls", 0) < 0 ||
                          unlinkat(entry_fd, "result.json", 0) < 0 ||
                          unlinkat(d->plans_fd, ts, AT_REMOVEDIR) < 0) die("remove entry"));
                close(entry_fd);
        }
#undef TIMED
        close(folder_fd);
        close(cache_fd);
        /* The mirror's checkpoint, once every CHECKPOINT plans. */
        if (w == WAY_LOG_MIRROR && i % CHECKPOINT == CHECKPOINT - 1 && syncfs(d->plans_fd) < 0)
                die("syncfs");
}

static int open_dir(const char *root, const char *name)
{
        char path[4200];
        int fd;

        snprintf(path, sizeof(path), "%s/%s", root, name);
        if (mkdir(path, 0700) < 0 || (fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
                die(path);
        return fd;
}

/* The log, LOG_SIZE bytes of written zeros, durable. */
static int log_make(int dirfd)
{
        static const char zeros[1 << 16];
        int fd = openat(dirfd, "journal.log", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

        if (fd < 0)
                die("journal.log");
        for (off_t at = 0; at < LOG_SIZE; at += (off_t)sizeof(zeros))
                if (pwrite(fd, zeros, sizeof(zeros), at) != (ssize_t)sizeof(zeros))
                        die("journal.log");
        flush(fd, false);
        return fd;
}

static double median(double *v, int n)
{
        qsort(v, (size_t)n, sizeof(double), bench_cmp_double);
        return v[n / 2];
}

int main(int argc, char **argv)
{
        int n = argc > 1 ? atoi(argv[1]) : 200;
        const char *parent = argc > 2 ? argv[2] : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
        char root[4096], path[4200];
        double *t[N_OPS], *rt[N_WAYS], *all[N_WAYS], burst[N_WAYS] = {0}, sum = 0, sum_all = 0;
        Dirs d = {0};
        int root_fd, seq = 0;

        if (n < 1) {
                fprintf(stderr, "usage: bench-fs [N] [DIR]\n");
                return 2;
        }
        if ((size_t)snprintf(root, sizeof(root), "%s/bench-fs.XXXXXX", parent) >= sizeof(root)) {
                fprintf(stderr, "bench-fs: %s: path too long\n", parent);
                return 2;
        }
        if (!mkdtemp(root) || (root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
                die(root);
        d.plans_fd = open_dir(root, "plans");
        d.files_fd = open_dir(root, "files");
        d.done_fd = open_dir(root, "plans/done");
        snprintf(path, sizeof(path), "%s/files", root);
        d.files_path = path;
        d.stamp_fd = write_at(d.plans_fd, "stamp", O_CREAT | O_EXCL, 14);
        d.records_fd =
                openat(d.done_fd, "records", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (d.records_fd < 0)
                die("records");
        d.log_fd = log_make(root_fd);
        flush(d.plans_fd, false);
        flush(root_fd, false);

        for (int op = 0; op < N_OPS; op++)
                if (!(t[op] = calloc((size_t)n, sizeof(double))))
                        die("calloc");
        for (Way w = 0; w < N_WAYS; w++)
                if (!(rt[w] = calloc((size_t)n, sizeof(double))) ||
                    !(all[w] = calloc((size_t)n, sizeof(double))))
                        die("calloc");

        /* Plans 20 ms apart, the three ways in turn, so that the machine's
         * moods fall on all three alike. */
        for (int i = 0; i < n; i++)
                for (Way w = 0; w < N_WAYS; w++) {
                        double row[N_OPS] = {0}, t0 = bench_now_ms();

                        one_plan(&d, w, seq++, row, &rt[w][i]);
                        all[w][i] = bench_now_ms() - t0;
                        if (w == WAY_TODAY)
                                for (int op = 0; op < N_OPS; op++)
                                        t[op][i] = row[op];
                        usleep(20000); /* plans seconds apart, as the engine sends them */
                }
        /* Bursts: N plans back to back, each way twice, in turns. */
        for (int round = 0; round < 2; round++)
                for (Way k = 0; k < N_WAYS; k++) {
                        Way w = round ? N_WAYS - 1 - k : k;
                        double t0 = bench_now_ms(), row[N_OPS], r;

                        for (int i = 0; i < n; i++)
                                one_plan(&d, w, seq++, row, &r);
                        burst[w] += n / ((bench_now_ms() - t0) / 1000.0) / 2;
                }

        printf("part 1: file operations of one plan in %s, %d plans, 20 ms apart\n", parent, n);
        printf("%-44s %10s %10s\n", "operation", "median ms", "p90 ms");
        for (int op = 0; op < N_OPS; op++) {
                double m = median(t[op], n); /* sorts t[op] */

                printf("%-44s %10.3f %10.3f%s\n", ops[op].name, m,
                       t[op][(size_t)((double)(n - 1) * 0.9)],
                       ops[op].round_trip ? "" : "  (after)");
                if (ops[op].round_trip)
                        sum += m;
                sum_all += m;
        }
        printf("on the engine's round trip (sum of medians): %.3f ms; all: %.3f ms\n\n", sum,
               sum_all);
        printf("part 2: one plan's durability done three ways in %s, %d plans each\n", parent, n);
        printf("%-14s %18s %12s %18s %10s\n", "way", "round trip, ms", "all, ms", "burst, plans/s",
               "/today");
        for (Way w = 0; w < N_WAYS; w++)
                printf("%-14s %18.3f %12.3f %18.0f %9.2fx\n", way_names[w], median(rt[w], n),
                       median(all[w], n), burst[w], burst[w] / burst[WAY_TODAY]);
        printf("(round trip: from the plan's first operation until its result is durable, median;"
               "\n all: the plan's operations, the removals included; log + mirror: one syncfs()"
               "\n every %d plans)\n",
               CHECKPOINT);

        for (int op = 0; op < N_OPS; op++)
                free(t[op]);
        for (Way w = 0; w < N_WAYS; w++) {
                free(rt[w]);
                free(all[w]);
        }
        close(d.log_fd);
        close(d.records_fd);
        close(d.stamp_fd);
        unlinkat(root_fd, "journal.log", 0);
        unlinkat(d.done_fd, "records", 0);
        unlinkat(d.plans_fd, "stamp", 0);
        close(d.done_fd);
        unlinkat(d.plans_fd, "done", AT_REMOVEDIR);
        close(d.files_fd);
        close(d.plans_fd);
        unlinkat(root_fd, "plans", AT_REMOVEDIR);
        unlinkat(root_fd, "files", AT_REMOVEDIR);
        close(root_fd);
        rmdir(root);
        return 0;
}
