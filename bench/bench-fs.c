/* What a file system charges for the file operations one plan needs, in
 * the order the agent makes them: the journal's entry (the result's empty
 * slot, plan.json written under a temporary name, fsync'd, renamed, the
 * directories fsync'd), the `running` mark, the plan's files (a cache
 * directory, a script file, a script folder with a symlink to it), the
 * result written into its slot, fsync'd and renamed to result.json, and
 * the removals.
 * Each operation is timed alone, N times, with a pause between plans as
 * a real agent has; the table gives medians, and the sum of the ones on
 * the engine's round trip. It is the floor under the daemon's round trip
 * on that file system, whatever the agent does with its CPU
 * (docs/benchmarks.md).
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
        OP_MKDIR_CACHE,
        OP_WRITE_SCRIPT,
        OP_MKDIR_FOLDER,
        OP_SYMLINK,
        OP_WRITE_RESULT,
        OP_FSYNC_RESULT,
        OP_RENAME_RESULT,
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
        {"mkdir files/<id>", true},
        {"create + write files/<id>/f (21 B)", true},
        {"mkdir files/<id>/script", true},
        {"symlink script/echo.sh (absolute)", true},
        {"write .result (300 B)", true},
        {"fsync .result", true},
        {"rename to result.json", true},
        {"remove files/<id> (3 unlinks, 2 rmdirs)", false},
        {"remove plans/<ts> (3 unlinks, rmdir)", false},
};

static void die(const char *what)
{
        fprintf(stderr, "bench-fs: %s: %s\n", what, strerror(errno));
        exit(1);
}

/* len bytes written into dirfd/name, a new file (O_CREAT | O_EXCL) or
 * an existing one (O_TRUNC). */
static int write_at(int dirfd, const char *name, int flags, size_t len)
{
        char buf[1024];
        int fd;

        memset(buf, 'x', sizeof(buf));
        fd = openat(dirfd, name, O_WRONLY | O_CLOEXEC | flags, 0600);
        if (fd < 0 || write(fd, buf, len) != (ssize_t)len)
                die(name);
        return fd;
}

/* One plan's operations in dir; t[op] gets each one's time. */
static void one_plan(int plans_fd, int files_fd, const char *files_path, int i, double *t)
{
        char ts[32], id[32], target[8192];
        double t0;
        int entry_fd, cache_fd, folder_fd, fd;

        snprintf(ts, sizeof(ts), "%d", 100000 + i);
        snprintf(id, sizeof(id), "plan-%d", i);

#define TIMED(op, stmt)                                                                            \
        do {                                                                                       \
                t0 = bench_now_ms();                                                               \
                stmt;                                                                              \
                t[op] = bench_now_ms() - t0;                                                       \
        } while (0)

        TIMED(OP_MKDIR_ENTRY, if (mkdirat(plans_fd, ts, 0700) < 0) die("mkdir"));
        entry_fd = openat(plans_fd, ts, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (entry_fd < 0)
                die("open entry");
        TIMED(OP_CREATE_SLOT, fd = write_at(entry_fd, ".result", O_CREAT | O_EXCL, 0));
        close(fd);
        TIMED(OP_WRITE_PLAN, fd = write_at(entry_fd, ".plan.json.tmp", O_CREAT | O_EXCL, 645));
        TIMED(OP_FSYNC_PLAN, if (fsync(fd) < 0) die("fsync"));
        close(fd);
        TIMED(OP_RENAME_PLAN,
              if (renameat(entry_fd, ".plan.json.tmp", entry_fd, "plan.json") < 0) die("rename"));
        TIMED(OP_FSYNC_ENTRY, if (fsync(entry_fd) < 0) die("fsync"));
        TIMED(OP_FSYNC_PLANS, if (fsync(plans_fd) < 0) die("fsync"));
        TIMED(OP_LINK_RUNNING,
              if (linkat(entry_fd, "plan.json", entry_fd, "running", 0) < 0) die("link"));
        TIMED(OP_FSYNC_RUNNING, if (fsync(entry_fd) < 0) die("fsync"));

        TIMED(OP_MKDIR_CACHE, if (mkdirat(files_fd, id, 0700) < 0) die("mkdir"));
        cache_fd = openat(files_fd, id, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (cache_fd < 0)
                die("open cache");
        TIMED(OP_WRITE_SCRIPT, fd = write_at(cache_fd, "f", O_CREAT | O_EXCL, 21));
        close(fd);
        TIMED(OP_MKDIR_FOLDER, if (mkdirat(cache_fd, "script", 0755) < 0) die("mkdir"));
        folder_fd = openat(cache_fd, "script", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (folder_fd < 0)
                die("open folder");
        if ((size_t)snprintf(target, sizeof(target), "%s/%s/f", files_path, id) >= sizeof(target))
                die("path too long");
        TIMED(OP_SYMLINK, if (symlinkat(target, folder_fd, "echo.sh") < 0) die("symlink"));

        TIMED(OP_WRITE_RESULT, fd = write_at(entry_fd, ".result", O_TRUNC, 300));
        TIMED(OP_FSYNC_RESULT, if (fsync(fd) < 0) die("fsync"));
        close(fd);
        TIMED(OP_RENAME_RESULT,
              if (renameat(entry_fd, ".result", entry_fd, "result.json") < 0) die("rename"));

        TIMED(OP_REMOVE_FILES, if (unlinkat(folder_fd, "echo.sh", 0) < 0 ||
                                   unlinkat(cache_fd, "script", AT_REMOVEDIR) < 0 ||
                                   unlinkat(cache_fd, "f", 0) < 0 ||
                                   unlinkat(files_fd, id, AT_REMOVEDIR) < 0) die("remove files"));
        TIMED(OP_REMOVE_ENTRY,
              if (unlinkat(entry_fd, "plan.json", 0) < 0 || unlinkat(entry_fd, "running", 0) < 0 ||
                  unlinkat(entry_fd, "result.json", 0) < 0 ||
                  unlinkat(plans_fd, ts, AT_REMOVEDIR) < 0) die("remove entry"));
#undef TIMED
        close(folder_fd);
        close(cache_fd);
        close(entry_fd);
}

int main(int argc, char **argv)
{
        int n = argc > 1 ? atoi(argv[1]) : 200;
        const char *parent = argc > 2 ? argv[2] : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
        char root[4096], path[4200];
        double *t[N_OPS], sum = 0, sum_all = 0;
        int plans_fd, files_fd;

        if (n < 1) {
                fprintf(stderr, "usage: bench-fs [N] [DIR]\n");
                return 2;
        }
        if ((size_t)snprintf(root, sizeof(root), "%s/bench-fs.XXXXXX", parent) >= sizeof(root)) {
                fprintf(stderr, "bench-fs: %s: path too long\n", parent);
                return 2;
        }
        if (!mkdtemp(root))
                die(root);
        snprintf(path, sizeof(path), "%s/plans", root);
        if (mkdir(path, 0700) < 0 || (plans_fd = open(path, O_RDONLY | O_DIRECTORY)) < 0)
                die(path);
        snprintf(path, sizeof(path), "%s/files", root);
        if (mkdir(path, 0700) < 0 || (files_fd = open(path, O_RDONLY | O_DIRECTORY)) < 0)
                die(path);
        for (int op = 0; op < N_OPS; op++)
                if (!(t[op] = calloc((size_t)n, sizeof(double))))
                        die("calloc");
        for (int i = 0; i < n; i++) {
                double row[N_OPS];

                one_plan(plans_fd, files_fd, path, i, row);
                for (int op = 0; op < N_OPS; op++)
                        t[op][i] = row[op];
                usleep(20000); /* plans seconds apart, as the engine sends them */
        }

        printf("file operations of one plan in %s, %d plans, 20 ms apart\n", parent, n);
        printf("%-44s %10s %10s\n", "operation", "median ms", "p90 ms");
        for (int op = 0; op < N_OPS; op++) {
                qsort(t[op], (size_t)n, sizeof(double), bench_cmp_double);
                printf("%-44s %10.3f %10.3f%s\n", ops[op].name, t[op][n / 2],
                       t[op][(size_t)((double)(n - 1) * 0.9)],
                       ops[op].round_trip ? "" : "  (after)");
                if (ops[op].round_trip)
                        sum += t[op][n / 2];
                sum_all += t[op][n / 2];
                free(t[op]);
        }
        printf("on the engine's round trip (sum of medians): %.3f ms; all: %.3f ms\n", sum,
               sum_all);
        close(files_fd);
        close(plans_fd);
        snprintf(path, sizeof(path), "%s/plans", root);
        rmdir(path);
        snprintf(path, sizeof(path), "%s/files", root);
        rmdir(path);
        rmdir(root);
        return 0;
}
