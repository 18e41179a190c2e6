/* Helpers shared by test-journal.c and test-journal-faults.c: a fresh
 * storage directory per test, and a JournalOps table that can log every
 * file operation, fail the Nth one, or exit the process before it, and
 * counts the calls that only look (faccessat, fstatat, listings). */
#pragma once

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <limits.h>
#include <openssl/hmac.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "journal/journal.h"
#include "util/fileio.h"
#include "util/macro.h"
#include "util/strbuf.h"
#include "test-lib.h"

/* --- fixtures: a fresh storage dir, and file operations to tamper with --- */

static char storage[64];

static struct {
        int calls;        /* file operations so far */
        int fail_at;      /* fail this call (1-based); 0 = none */
        int fail_through; /* and every call up to this one; 0 = only that one */
        int fail_errno;   /* with this errno; 0 = EIO (ENOSPC for write) */
        int crash_at;     /* _exit() before this call; 0 = never */
        int failed_errno; /* the errno of the call that failed */
        bool no_fsync;    /* skip the real fsync, for long loops */
        bool log;         /* append every call to trace */
        StrBuf trace;
        bool frozen; /* the clock stands at frozen */
        struct timespec frozen_at;
        time_t offset; /* seconds added to the real clock */
        /* Calls that only look at the disk; they are not steps. */
        unsigned n_access, n_stat, n_listings;
        unsigned n_fsync; /* fsyncs, counted whether or not logged */
        /* The power-loss model (power_loss()): what plans/stamp and a new
         * `running` would be after a power loss at this point. */
        bool power_loss;        /* a crash is a power loss */
        bool tmp_synced;        /* plans/.stamp.tmp was fsync'd since it was opened */
        bool stamp_synced;      /* the inode named plans/stamp was fsync'd */
        bool stamp_named;       /* ... and plans/ too since it got that name */
        int stamp_durable;      /* what a power loss leaves: 0 absent, 1 text, 2 damaged */
        char stamp_text[32];    /* the text, when 1 */
        char running[PATH_MAX]; /* an entry whose `running` is not yet durable, or "" */
        char renamed[PATH_MAX]; /* an entry whose slot's rename to result.json is not, or "" */
} fx;

static Journal *crash_journal _unused_; /* reachable at a crash, for valgrind */

/* The path of fd or dirfd/path, relative to the storage dir. */
static inline void fd_path(int fd, const char *path, char out[PATH_MAX])
{
        char link[64], target[PATH_MAX];
        ssize_t n;
        size_t skip = strlen(storage) + 1;

        if (fd == AT_FDCWD) {
                snprintf(out, PATH_MAX, "%s", path ? path : "");
                return;
        }
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, target, sizeof(target) - 1);
        ck_assert_int_gt(n, 0);
        target[n] = '\0';
        snprintf(out, PATH_MAX, "%s%s%s", strlen(target) > skip ? target + skip : "",
                 path ? "/" : "", path ? path : "");
}

static inline char *pathf(const char *fmt, ...) _printf_(1, 2);
static inline char *pathf(const char *fmt, ...)
{
        char *rel, *s;
        va_list ap;

        va_start(ap, fmt);
        ck_assert_int_ge(vasprintf(&rel, fmt, ap), 0);
        va_end(ap);
        ck_assert_int_ge(asprintf(&s, "%s/%s", storage, rel), 0);
        free(rel);
        return s;
}

/* A power loss on ext4 without a journal, for the names the stamp rests
 * on: the stamp file keeps what it named at the last fsync of plans/, and
 * that inode's text only if the inode was fsync'd before (else it is
 * damaged: empty, here); an inode already named durably keeps the text of
 * its last fsync, and a write in place since then counts as damage at the
 * next fsync of plans/ (worse than the old or the new text a device leaves
 * of a write within one sector); a `running` whose directory was not
 * fsync'd since it was made is gone, and so is the name result.json that
 * a result slot was renamed to since (the slot is back). Everything else
 * is taken as durable at once, which is the worst case for the stamp:
 * removals, which take plans away, are never undone. */
static inline void power_loss(void)
{
        _cleanup_free_ char *sp = pathf("plans/stamp");

        if (fx.running[0]) {
                _cleanup_free_ char *rp = pathf("%s/running", fx.running);
                (void)unlink(rp);
        }
        if (fx.renamed[0]) {
                _cleanup_free_ char *from = pathf("%s/result.json", fx.renamed);
                _cleanup_free_ char *to = pathf("%s/.result", fx.renamed);
                (void)rename(from, to);
        }
        if (fx.stamp_durable == 0) {
                (void)unlink(sp);
        } else {
                FILE *f = fopen(sp, "w");
                if (!f)
                        _exit(4);
                fputs(fx.stamp_durable == 1 ? fx.stamp_text : "", f);
                fclose(f);
        }
}

/* Follow the model through the calls below (fd_path() is only needed
 * when the model or the log is on). */
static inline void model(const char *op, int fd, const char *path, const char *path2)
{
        char a[PATH_MAX], b[PATH_MAX];

        if (!fx.power_loss)
                return;
        fd_path(fd, path, a);
        if (streq(op, "openat") && streq(a, "plans/.stamp.tmp"))
                fx.tmp_synced = false;
        if (streq(op, "fsync") && streq(a, "plans/.stamp.tmp"))
                fx.tmp_synced = true;
        if (streq(op, "fsync") && streq(a, fx.running))
                fx.running[0] = '\0';
        if (streq(op, "fsync") && streq(a, fx.renamed))
                fx.renamed[0] = '\0';
        if (streq(op, "slot") && strlen(a) > 8) {
                snprintf(fx.renamed, sizeof(fx.renamed), "%s", a);
                fx.renamed[strlen(a) - 8] = '\0';
        }
        if (streq(op, "write") && streq(a, "plans/stamp"))
                fx.stamp_synced = false;
        if ((streq(op, "fsync") && streq(a, "plans")) ||
            (streq(op, "fsync") && streq(a, "plans/stamp") && fx.stamp_named)) {
                _cleanup_free_ char *sp = pathf("plans/stamp"), *text = NULL;
                size_t len;

                if (streq(a, "plans/stamp"))
                        fx.stamp_synced = true;
                fx.stamp_durable = 0;
                fx.stamp_named = false;
                if (file_read_all(sp, 64, &text, &len) == 0) {
                        fx.stamp_durable = fx.stamp_synced ? 1 : 2;
                        fx.stamp_named = true;
                        snprintf(fx.stamp_text, sizeof(fx.stamp_text), "%s", text);
                }
        } else if (streq(op, "fsync") && streq(a, "plans/stamp")) {
                fx.stamp_synced = true;
        }
        if (!path2)
                return;
        fd_path(fd, path2, b);
        if (streq(op, "renameat") && streq(b, "plans/stamp")) {
                fx.stamp_synced = fx.tmp_synced;
                fx.stamp_named = false;
        }
        if (streq(op, "linkat") && strlen(b) > 8 && streq(b + strlen(b) - 8, "/running")) {
                snprintf(fx.running, sizeof(fx.running), "%s", b);
                fx.running[strlen(b) - 8] = '\0';
        }
}

static inline bool step(const char *op, int fd, const char *path, const char *path2, int dflt)
{
        char a[PATH_MAX], b[PATH_MAX];

        fx.calls++;
        if (fx.crash_at && fx.calls == fx.crash_at) {
                if (fx.power_loss)
                        power_loss();
                _exit(0);
        }
        if (fx.log && op && fd == -1) {
                strbuf_printf(&fx.trace, "%s\n", op);
        } else if (fx.log && op) {
                fd_path(fd, path, a);
                strbuf_printf(&fx.trace, "%s %s", op, a);
                if (path2) {
                        fd_path(fd, path2, b);
                        strbuf_printf(&fx.trace, " %s", b);
                }
                strbuf_putc(&fx.trace, '\n');
        }
        if (fx.fail_at && fx.calls >= fx.fail_at &&
            fx.calls <= (fx.fail_through > fx.fail_at ? fx.fail_through : fx.fail_at)) {
                errno = fx.fail_errno ? fx.fail_errno : dflt;
                fx.failed_errno = errno;
                return true;
        }
        return false;
}

static inline int t_mkdirat(int dirfd, const char *path, mode_t mode)
{
        return step("mkdirat", dirfd, path, NULL, EIO) ? -1 : mkdirat(dirfd, path, mode);
}

static inline int t_openat(int dirfd, const char *path, int flags, mode_t mode)
{
        int fd;

        if (step("openat", dirfd, path, NULL, EIO))
                return -1;
        fd = openat(dirfd, path, flags, mode);
        /* An empty `running` (no link could be made) is a new name too. */
        if (fd >= 0 && (flags & O_CREAT) && strlen(path) >= 7 &&
            streq(path + strlen(path) - 7, "running"))
                model("linkat", dirfd, "running", "running");
        else if (fd >= 0)
                model("openat", dirfd, path, NULL);
        return fd;
}

static inline ssize_t t_write(int fd, const void *buf, size_t n)
{
        return step("write", fd, NULL, NULL, ENOSPC) ? -1 : write(fd, buf, n);
}

static inline int t_fsync(int fd)
{
        fx.n_fsync++;
        if (step("fsync", fd, NULL, NULL, EIO))
                return -1;
        if (!fx.no_fsync && fsync(fd) < 0)
                return -1;
        model("fsync", fd, NULL, NULL);
        return 0;
}

static inline int t_renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath)
{
        char a[PATH_MAX], b[PATH_MAX];

        /* Log both ends, which may be in different directories. */
        if (fx.log) {
                fd_path(olddirfd, oldpath, a);
                fd_path(newdirfd, newpath, b);
                strbuf_printf(&fx.trace, "renameat %s %s\n", a, b);
        }
        if (step(NULL, -1, NULL, NULL, EIO) || renameat(olddirfd, oldpath, newdirfd, newpath) < 0)
                return -1;
        model("renameat", newdirfd, newpath, newpath);
        if (streq(oldpath, ".result"))
                model("slot", olddirfd, oldpath, NULL);
        return 0;
}

static inline int t_linkat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
                           int flags)
{
        char a[PATH_MAX], b[PATH_MAX];

        if (fx.log) {
                fd_path(olddirfd, oldpath, a);
                fd_path(newdirfd, newpath, b);
                strbuf_printf(&fx.trace, "linkat %s %s\n", a, b);
        }
        if (step(NULL, -1, NULL, NULL, EIO) ||
            linkat(olddirfd, oldpath, newdirfd, newpath, flags) < 0)
                return -1;
        model("linkat", newdirfd, newpath, newpath);
        return 0;
}

static inline int t_faccessat(int dirfd, const char *path, int mode, int flags)
{
        fx.n_access++;
        return faccessat(dirfd, path, mode, flags);
}

static inline int t_fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
        fx.n_stat++;
        return fstatat(dirfd, path, st, flags);
}

static inline DIR *t_fdopendir(int fd)
{
        fx.n_listings++;
        return fdopendir(fd);
}

static inline int t_unlinkat(int dirfd, const char *path, int flags)
{
        return step("unlinkat", dirfd, path, NULL, EIO) ? -1 : unlinkat(dirfd, path, flags);
}

static inline int t_clock(clockid_t clock, struct timespec *ts)
{
        if (step("clock", -1, NULL, NULL, EINVAL))
                return -1;
        if (fx.frozen) {
                *ts = fx.frozen_at;
                return 0;
        }
        clock_gettime(clock, ts);
        ts->tv_sec += fx.offset;
        return 0;
}

static const JournalOps test_ops _unused_ = {
        .mkdirat = t_mkdirat,
        .openat = t_openat,
        .write = t_write,
        .fsync = t_fsync,
        .renameat = t_renameat,
        .unlinkat = t_unlinkat,
        .clock_gettime = t_clock,
        .linkat = t_linkat,
        .faccessat = t_faccessat,
        .fstatat = t_fstatat,
        .fdopendir = t_fdopendir,
};

static inline void setup(void)
{
        strcpy(storage, "/tmp/test-journal-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(storage));
        strbuf_free(&fx.trace);
        memset(&fx, 0, sizeof(fx));
}

static inline void teardown(void)
{
        rm_rf(storage);
        strbuf_free(&fx.trace);
}

static inline Journal *open_with(const JournalOptions *o)
{
        Journal *j = NULL;

        ck_assert_int_eq(journal_open(storage, o, &j), 0);
        return j;
}

/* A journal on the test's file operations. */
static inline Journal *open_test(void)
{
        JournalOptions o = JOURNAL_OPTIONS_DEFAULT;

        o.ops = &test_ops;
        return open_with(&o);
}

static inline char *slurp(const char *path, size_t *ret_len)
{
        char *data = NULL;

        ck_assert_int_eq(file_read_all(path, 1 << 24, &data, ret_len), 0);
        return data;
}

static inline bool exists(const char *rel)
{
        _cleanup_free_ char *p = pathf("%s", rel);

        return access(p, F_OK) == 0;
}

/* Write storage/rel (making its directory) with text; a rel ending in
 * '/' is a directory to make. */
static inline void put_file(const char *rel, const char *text)
{
        _cleanup_free_ char *p = pathf("%s", rel);
        char *slash = strrchr(p, '/');
        FILE *f;

        *slash = '\0';
        mkdir(p, 0700);
        if (!slash[1])
                return;
        *slash = '/';
        f = fopen(p, "w");
        ck_assert_ptr_nonnull(f);
        fputs(text, f);
        fclose(f);
}

/* Seal storage/rel as the agent would (kind and name as in
 * journal-seal.c), with the key in storage/journal.key: for a file a test
 * writes in the agent's place, as a power loss may leave it. */
static inline void seal_rel(const char *rel, const char *kind, const char *name)
{
        _cleanup_free_ char *kp = pathf("journal.key"), *p = pathf("%s", rel);
        _cleanup_free_ char *key = NULL, *text = NULL;
        unsigned char mac[EVP_MAX_MD_SIZE];
        unsigned mac_len = 0;
        size_t klen, len;
        StrBuf msg = STRBUF_INIT;

        ck_assert_int_eq(file_read_all(kp, 64, &key, &klen), 0);
        ck_assert_int_eq(file_read_all(p, 1 << 20, &text, &len), 0);
        strbuf_append(&msg, "muranoagent-seal-1", sizeof("muranoagent-seal-1"));
        strbuf_append(&msg, kind, strlen(kind) + 1);
        strbuf_append(&msg, name, strlen(name) + 1);
        strbuf_append(&msg, text, len);
        ck_assert_ptr_nonnull(HMAC(EVP_sha256(), key, (int)klen, (unsigned char *)msg.data, msg.len,
                                   mac, &mac_len));
        strbuf_free(&msg);
        ck_assert_int_eq(setxattr(p, "user.muranoagent.seal", mac, mac_len, 0), 0);
}

/* The names in storage/REL, sorted and joined by spaces ("" for none), but
 * for the reserve, which every journal with the default options keeps in
 * plans/ (test-journal-space.c checks it). */
static inline char *dir_names(const char *rel)
{
        _cleanup_free_ char *p = pathf("%s", rel);
        struct dirent **names;
        StrBuf b = STRBUF_INIT;
        int n = scandir(p, &names, NULL, alphasort);
        char *s;

        ck_assert_int_ge(n, 0);
        for (int i = 0; i < n; i++) {
                if (!streq(names[i]->d_name, ".") && !streq(names[i]->d_name, "..") &&
                    !streq(names[i]->d_name, "reserve"))
                        strbuf_printf(&b, "%s%s", b.len ? " " : "", names[i]->d_name);
                free(names[i]);
        }
        free(names);
        ck_assert_int_eq(strbuf_steal(&b, &s), 0);
        return s ? s : strdup("");
}

static inline char *plans_dir(void)
{
        return dir_names("plans");
}

/* What the reference's _get_first_timestamp(filename) picks: the lowest
 * name in plans/ (string order) whose <name>/<filename> exists. */
static inline char *reference_first(const char *filename)
{
        _cleanup_free_ char *p = pathf("plans");
        struct dirent **names;
        char *found = NULL;
        int n = scandir(p, &names, NULL, alphasort);

        for (int i = 0; i < n; i++) {
                _cleanup_free_ char *f = pathf("plans/%s/%s", names[i]->d_name, filename);
                if (!found && !streq(names[i]->d_name, ".") && !streq(names[i]->d_name, "..") &&
                    access(f, F_OK) == 0)
                        found = strdup(names[i]->d_name);
                free(names[i]);
        }
        free(names);
        return found;
}

/* The entries and their states as one line, "<ts>:<state> ...";
 * restarted: as a new process would find them (RUNNING is INTERRUPTED). */
static inline char *list_text(Journal *j, bool restarted)
{
        static const char *const states[] = {"pending", "running", "interrupted", "result"};
        _cleanup_free_ JournalEntry *v = NULL;
        StrBuf b = STRBUF_INIT;
        size_t n = 0;
        char *s;

        ck_assert_int_eq(journal_list(j, &v, &n), 0);
        for (size_t i = 0; i < n; i++) {
                JournalState st = v[i].state;
                /* What this process runs, a new one finds interrupted. */
                if (restarted && st == JOURNAL_RUNNING)
                        st = JOURNAL_INTERRUPTED;
                strbuf_printf(&b, "%s%s:%s", i ? " " : "", v[i].ts, states[st]);
        }
        ck_assert_int_eq(strbuf_steal(&b, &s), 0);
        return s;
}

static inline void assert_entries(Journal *j, const char *want)
{
        _cleanup_free_ JournalEntry *v = NULL;
        static const char *const states[] = {"pending", "running", "interrupted", "result"};
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        size_t n = 99;

        ck_assert_int_eq(journal_list(j, &v, &n), 0);
        for (size_t i = 0; i < n; i++)
                strbuf_printf(&b, "%s%s:%s", i ? " " : "", v[i].ts, states[v[i].state]);
        ck_assert_str_eq(b.data ? b.data : "", want);
}

static inline void put_simple(Journal *j, char ts[JOURNAL_TS_MAX])
{
        ck_assert_int_eq(journal_put_plan(j, "{}", 2, NULL, 0, "id", NULL, ts), 0);
}

/* Store a plan whose body holds Stamp v and begin it with that stamp, as
 * the daemon does. */
static inline void put_stamped(Journal *j, char ts[JOURNAL_TS_MAX], int64_t v)
{
        char body[64];
        json_t *stamp = json_integer(v);
        int n = snprintf(body, sizeof(body), "{\"Stamp\": %lld}", (long long)v);

        ck_assert_int_eq(journal_put_plan(j, body, (size_t)n, NULL, 0, "id", NULL, ts), 0);
        ck_assert_int_eq(journal_begin(j, ts, stamp), 0);
        json_decref(stamp);
}

/* Paths and traces with <ts> standing for an entry's name. */
static inline char *expand(const char *fmt, const char *ts)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        char *s;

        for (const char *p = fmt; *p; p++) {
                if (strncmp(p, "<ts>", 4) == 0) {
                        strbuf_puts(&b, ts);
                        p += 3;
                } else {
                        strbuf_putc(&b, *p);
                }
        }
        ck_assert_int_eq(strbuf_steal(&b, &s), 0);
        return s;
}

static inline bool exists_ts(const char *fmt, const char *ts)
{
        _cleanup_free_ char *rel = expand(fmt, ts);

        return exists(rel);
}

static inline void assert_entries_ts(Journal *j, const char *fmt, const char *ts)
{
        _cleanup_free_ char *want = expand(fmt, ts);

        assert_entries(j, want);
}

static inline char *slurp_rel(const char *rel)
{
        _cleanup_free_ char *p = pathf("%s", rel);

        return slurp(p, NULL);
}

static inline char *slurp_rel_ts(const char *fmt, const char *ts)
{
        _cleanup_free_ char *rel = expand(fmt, ts);

        return slurp_rel(rel);
}

static inline void unlink_rel_ts(const char *fmt, const char *ts)
{
        _cleanup_free_ char *rel = expand(fmt, ts), *p = pathf("%s", rel);

        ck_assert_int_eq(unlink(p), 0);
}

static inline void assert_trace(const char *fmt, const char *ts)
{
        _cleanup_free_ char *want = expand(fmt, ts);

        ck_assert_str_eq(fx.trace.data ? fx.trace.data : "", want);
        strbuf_reset(&fx.trace);
}
