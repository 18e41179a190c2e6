/* The journal object: opening (with the repairs a crash calls for and the
 * one scan that fills the index), the listing the daemon's loop works
 * from, and removal. See journal.h for the layout and docs/journal.md for
 * the daemon's side. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "journal/journal-calls.h"
#include "journal/journal-internal.h"
#include "journal/journal-log.h"
#include "util/fileio.h"

/* Room for any plan the agent accepts with the default max_plan_size of
 * 64 MiB (86 MiB of Base64), and more. */
#define DEFAULT_MAX_PLAN_FILE ((size_t)256 << 20)

/* mkdir -p, mode 0700 for what is made, as the files module does for its
 * own part of the storage directory. */
static int mkdir_parents(Journal *j, const char *path)
{
        _cleanup_free_ char *p = strdup(path);

        if (!p)
                return -ENOMEM;
        for (char *s = p + 1;; s++) {
                if (*s != '/' && *s != '\0')
                        continue;
                char c = *s;
                *s = '\0';
                if (j->ops.mkdirat(AT_FDCWD, p, 0700) < 0 && errno != EEXIST)
                        return -errno;
                *s = c;
                if (c == '\0')
                        return 0;
        }
}

static int open_plans(Journal *j, const char *storage, const JournalOptions *o)
{
        _cleanup_close_ int storage_fd = -1;
        int r;

        r = mkdir_parents(j, storage);
        if (r < 0)
                return r;
        storage_fd = open(storage, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (storage_fd < 0)
                return -errno;
        if (j->ops.mkdirat(storage_fd, "plans", 0700) == 0) {
                /* A new plans/ must itself survive a power loss. */
                r = journal_sync(j, storage_fd);
                if (r < 0)
                        return r;
        } else if (errno != EEXIST) {
                return -errno;
        }
        /* plans/ may be a symlink made by an administrator, which the
         * reference follows too. */
        j->plans_fd = openat(storage_fd, "plans", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (j->plans_fd < 0)
                return -errno;
        if (flock(j->plans_fd, LOCK_EX | LOCK_NB) < 0)
                return errno == EWOULDBLOCK ? -EBUSY : -errno;
        /* The reference chmods an existing plans/ to 0700 and ignores a
         * failure. */
        (void)fchmod(j->plans_fd, 0700);
        r = journal_seal_open(j, storage_fd);
        if (r < 0)
                return r;
        /* Without the log, a journal.log that a start with it left is
         * replayed all the same, and emptied by the checkpoint of
         * journal_wal_settle(): its records may be all there is of a plan
         * acked before a power loss, and a later start with the log would
         * replay them over a mirror that has moved on (a plan done and
         * removed made again). */
        if (!o->wal &&
            j->ops.faccessat(storage_fd, JOURNAL_LOG_FILE, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        /* Before the listing: the files of plans/ are then as the log says,
         * and every repair below applies to them. */
        return journal_wal_open(j, storage_fd, o->wal_ops);
}

int journal_lock_holder(const char *storage, pid_t *ret_pid)
{
        _cleanup_free_ char *path = NULL, *line = NULL;
        size_t size = 0;
        struct stat st;
        FILE *f;
        int r = -ENOENT;

        if (!storage || !*storage)
                return -EINVAL;
        if (asprintf(&path, "%s/plans", storage) < 0)
                return -ENOMEM;
        if (stat(path, &st) < 0)
                return -errno;
        f = fopen("/proc/locks", "re");
        if (!f)
                return errno == ENOENT ? -ENOENT : -errno;
        /* "1: FLOCK  ADVISORY  WRITE 1234 fe:00:10952730 0 EOF": the
         * device as hex major:minor. A request that waits for the lock is
         * listed after it as "1: -> FLOCK ...", and holds nothing. */
        while (getline(&line, &size, f) > 0) {
                char kind[16], mode[16];
                unsigned maj, min;
                unsigned long ino;
                int pid;

                if (sscanf(line, "%*d: %15s %*s %15s %d %x:%x:%lu", kind, mode, &pid, &maj, &min,
                           &ino) == 6 &&
                    streq(kind, "FLOCK") && streq(mode, "WRITE") && ino == st.st_ino &&
                    maj == major(st.st_dev) && min == minor(st.st_dev) && pid > 0) {
                        *ret_pid = pid;
                        r = 0;
                        break;
                }
        }
        fclose(f);
        return r;
}

/* Remove a file that a crash or a failed write left in dirfd, and count
 * it in the open's report. */
static void remove_leftover(Journal *j, int dirfd, const char *name)
{
        if (j->ops.unlinkat(dirfd, name, 0) == 0)
                j->report.n_temp_removed++;
}

/* The result slot of an entry found at open (fd): a whole result a crash
 * left in it before its rename (journal_write_slot()) is given its name,
 * which its seal was made for, so that everything after reads result.json
 * as before (one that fails its seal, torn or planted, is quarantined as
 * a forged result.json); a slot beside a result.json is a leftover. Sets
 * e->result or e->slot. Returns 0 or -errno. */
static int recover_slot(Journal *j, int fd, JournalIndexEntry *e)
{
        struct stat st;

        if (j->ops.fstatat(fd, JOURNAL_RESULT_SLOT, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            !S_ISREG(st.st_mode))
                return 0;
        if (!e->result && st.st_size == 0) {
                e->slot = true;
                return 0;
        }
        /* Beside a result.json, a leftover. And a journal without seals
         * (its storage moved to a file system without extended attributes)
         * cannot tell a whole text from one a crash tore: no result, as
         * when the crash came before it. */
        if (e->result || !j->sealed) {
                remove_leftover(j, fd, JOURNAL_RESULT_SLOT);
                return 0;
        }
        /* No fsync: a power loss puts it back in the slot, found again. */
        if (j->ops.renameat(fd, JOURNAL_RESULT_SLOT, fd, JOURNAL_RESULT_FILE) < 0)
                return -errno;
        e->result = true;
        return 0;
}

/* Repair one entry after a crash: remove temporary files, and the entry
 * when it holds neither a plan nor a result (a message that was never
 * acked, so the broker still has it). Fills *e with what stays; returns
 * 1, 0 when nothing does (or the name is not a directory), or -errno. */
static int recover_entry(Journal *j, const char *ts, JournalIndexEntry *e)
{
        static const char *const tmps[] = {JOURNAL_PLAN_TMP, JOURNAL_RESULT_TMP};
        _cleanup_close_ int fd = journal_open_dir(j, j->plans_fd, ts);
        int r;

        if (fd < 0)
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(tmps); i++)
                remove_leftover(j, fd, tmps[i]);
        *e = (JournalIndexEntry){.plan = journal_exists_at(j, fd, JOURNAL_PLAN_FILE),
                                 .running = journal_exists_at(j, fd, JOURNAL_RUNNING_FILE),
                                 .result = journal_exists_at(j, fd, JOURNAL_RESULT_FILE),
                                 .stamp = JOURNAL_STAMP_NONE};
        snprintf(e->ts, sizeof(e->ts), "%.20s", ts);
        r = recover_slot(j, fd, e);
        if (r < 0)
                return r;
        if (!e->plan && !e->result) {
                if (journal_rm_rf_at(j, j->plans_fd, ts) == 0) {
                        j->report.n_empty_removed++;
                        return 0;
                }
                /* Still there: indexed, but never listed. */
                return 1;
        }
        if (e->plan && !e->result && e->running)
                j->report.n_interrupted++;
        if (e->plan)
                journal_seal_file(j, j->plans_fd, ts, JOURNAL_PLAN_FILE, j->max_plan_file);
        if (e->result)
                journal_seal_file(j, j->plans_fd, ts, JOURNAL_RESULT_FILE, JOURNAL_MAX_RESULT_FILE);
        return 1;
}

static int index_cmp(const void *a, const void *b)
{
        return strcmp(((const JournalIndexEntry *)a)->ts, ((const JournalIndexEntry *)b)->ts);
}

/* The scan at open: repairs, and the index, built unsorted and sorted
 * once. */
static int recover(Journal *j)
{
        int r;
        DIR *d;

        r = journal_list_open(j, j->plans_fd, &d);
        if (r < 0)
                return r;
        for (struct dirent *de; (errno = 0, de = readdir(d));) {
                JournalIndexEntry e;

                if (streq(de->d_name, JOURNAL_STAMP_TMP)) {
                        remove_leftover(j, j->plans_fd, de->d_name);
                        continue;
                }
                if (!journal_ts_valid(de->d_name))
                        continue;
                uint64_t v = strtoull(de->d_name, NULL, 10);
                if (v > j->last_ts)
                        j->last_ts = v;
                r = recover_entry(j, de->d_name, &e);
                if (r < 0)
                        break;
                if (r == 0)
                        continue;
                if (j->n_index == j->cap_index) {
                        size_t cap = j->cap_index ? j->cap_index * 2 : 16;
                        JournalIndexEntry *p = realloc(j->index, cap * sizeof(*p));

                        if (!p) {
                                errno = ENOMEM;
                                break;
                        }
                        j->index = p;
                        j->cap_index = cap;
                }
                j->index[j->n_index++] = e;
        }
        if (r >= 0)
                r = errno != 0 ? -errno : 0;
        closedir(d);
        if (r == 0 && j->n_index > 1)
                qsort(j->index, j->n_index, sizeof(*j->index), index_cmp);
        return r;
}

/* Fields of opt->ops left NULL are the system calls. */
static void ops_fill(JournalOps *ops)
{
#define FILL(f)                                                                                    \
        if (!ops->f)                                                                               \
                ops->f = journal_sys_ops.f;
        FILL(mkdirat)
        FILL(openat)
        FILL(write)
        FILL(fsync)
        FILL(renameat)
        FILL(unlinkat)
        FILL(clock_gettime)
        FILL(linkat)
        FILL(faccessat)
        FILL(fstatat)
        FILL(fdopendir)
        FILL(fallocate)
        FILL(ftruncate)
        FILL(pwrite)
        FILL(fdatasync)
        FILL(fsetxattr)
        FILL(sync_file_range)
        FILL(syncfs)
#undef FILL
}

int journal_open(const char *storage, const JournalOptions *opt, Journal **ret)
{
        _cleanup_(journal_freep) Journal *j = NULL;
        JournalOptions o = opt ? *opt : JOURNAL_OPTIONS_DEFAULT;
        int r;

        if (!storage || !*storage)
                return -EINVAL;
        j = calloc(1, sizeof(*j));
        if (!j)
                return -ENOMEM;
        j->plans_fd = j->done_fd = j->entry_fd = j->reserve_fd = j->log_fd = j->old_fd = -1;
        pthread_mutex_init(&j->io, NULL);
        pthread_mutex_init(&j->lock, NULL);
        pthread_rwlock_init(&j->wal_rw, NULL);
        pthread_mutex_init(&j->wal_mu, NULL);
        j->ops = o.ops ? *o.ops : journal_sys_ops;
        ops_fill(&j->ops);
        j->max_plan_file = o.max_plan_file ? o.max_plan_file : DEFAULT_MAX_PLAN_FILE;
        j->reserve_size = o.reserve_size;
        j->done_max_bytes = o.done_max_bytes ? o.done_max_bytes : JOURNAL_DONE_MAX_BYTES;
        j->done_max_count = o.done_max_count;
        /* Ages are compared in nanoseconds: beyond 292 years is forever. */
        j->done_max_age =
                o.done_max_age > INT64_MAX / 1000000000 ? INT64_MAX / 1000000000 : o.done_max_age;

        r = open_plans(j, storage, &o);
        if (r < 0)
                return r;
        r = journal_stamp_load(j);
        if (r < 0)
                return r;
        r = recover(j);
        if (r < 0)
                return r;
        r = journal_stamp_recover(j);
        if (r < 0)
                return r;
        r = journal_done_open(j);
        if (r < 0)
                return r;
        r = journal_wal_settle(j);
        if (r < 0)
                return r;
        if (!o.wal)
                journal_wal_close(j); /* replayed and empty: done with */
        j->report.last_stamp = j->last_stamp;
        r = journal_reserve_open(j);
        if (r < 0)
                return r;
        /* Only what was there before the key is accepted without a seal. */
        j->seal_fresh = false;
        *ret = TAKE_PTR(j);
        return 0;
}

Journal *journal_free(Journal *j)
{
        if (!j)
                return NULL;
        journal_wal_close(j);
        /* Closing the descriptor releases the flock. */
        if (j->done_fd >= 0)
                close(j->done_fd);
        journal_entry_dir_drop(j, NULL);
        if (j->reserve_fd >= 0)
                close(j->reserve_fd);
        if (j->log_fd >= 0)
                close(j->log_fd);
        if (j->old_fd >= 0)
                close(j->old_fd);
        if (j->plans_fd >= 0)
                close(j->plans_fd);
        for (size_t i = 0; i < j->n_index; i++)
                journal_result_free(j->index[i].kept);
        free(j->index);
        journal_plan_free(j->held);
        free(j->done);
        pthread_mutex_destroy(&j->wal_mu);
        pthread_rwlock_destroy(&j->wal_rw);
        pthread_mutex_destroy(&j->lock);
        pthread_mutex_destroy(&j->io);
        free(j);
        return NULL;
}

const JournalOpenReport *journal_open_report(const Journal *j)
{
        return &j->report;
}

/* Take the lock for a call that answers from the index. A stale index
 * (memory ran out during an update) is rebuilt first, but only when no
 * other call is at the disk: these calls never wait for one. Returns 0
 * with the lock held, -EAGAIN (try again later) or -errno without. */
static int index_read_lock(Journal *j)
{
        int r;

        pthread_mutex_lock(&j->lock);
        if (!j->index_stale)
                return 0;
        pthread_mutex_unlock(&j->lock);
        if (pthread_mutex_trylock(&j->io) != 0)
                return -EAGAIN;
        r = journal_index_fresh(j);
        pthread_mutex_unlock(&j->io);
        if (r < 0)
                return r;
        pthread_mutex_lock(&j->lock);
        return 0;
}

int journal_list(Journal *j, JournalEntry **ret, size_t *ret_n)
{
        _cleanup_free_ JournalEntry *v = NULL;
        size_t n = 0;
        int r;

        r = index_read_lock(j);
        if (r < 0)
                return r;
        if (j->n_index > 0) {
                v = malloc(j->n_index * sizeof(*v));
                if (!v) {
                        r = -ENOMEM;
                        goto out;
                }
        }
        for (size_t i = 0; i < j->n_index; i++)
                if (journal_index_state(&j->index[i], &v[n].state)) {
                        memcpy(v[n].ts, j->index[i].ts, JOURNAL_TS_MAX);
                        n++;
                }
out:
        pthread_mutex_unlock(&j->lock);
        if (r < 0)
                return r;
        *ret = n > 0 ? TAKE_PTR(v) : NULL;
        *ret_n = n;
        return 0;
}

int journal_next(Journal *j, JournalEntry *ret)
{
        return journal_next_except(j, NULL, ret);
}

int journal_next_except(Journal *j, const char *skip_ts, JournalEntry *ret)
{
        const JournalIndexEntry *pick = NULL;
        JournalState state = JOURNAL_PENDING;
        int r;

        r = index_read_lock(j);
        if (r < 0)
                return r;
        /* The reference's main loop: unsent results first, then plans. */
        for (size_t i = 0; i < j->n_index && !pick; i++)
                if (j->index[i].result && !(skip_ts && streq(j->index[i].ts, skip_ts))) {
                        pick = &j->index[i];
                        state = JOURNAL_RESULT;
                }
        for (size_t i = 0; i < j->n_index && !pick; i++)
                if (!(skip_ts && streq(j->index[i].ts, skip_ts)) &&
                    journal_index_state(&j->index[i], &state) &&
                    (state == JOURNAL_PENDING || state == JOURNAL_INTERRUPTED))
                        pick = &j->index[i];
        if (pick) {
                memcpy(ret->ts, pick->ts, JOURNAL_TS_MAX);
                ret->state = state;
                r = 1;
        }
        pthread_mutex_unlock(&j->lock);
        return r;
}

/* The done record of the entry's result: its name (the SourceID's, or
 * the delivery's digest) and the result's text, when it has one worth
 * recording (*ret_text stays NULL when not; a forged result is not
 * recorded). Returns 0 or -errno. */
static int remove_record(Journal *j, const char *ts, JournalIndexEntry *e, char name[65],
                         char **ret_text, size_t *ret_len)
{
        JournalIndexEntry unknown = {.result = true};
        int r;

        if (j->done_max_count == 0 || j->done_max_age <= 0)
                return 0;
        if (!e) {
                /* Not in a stale index: the disk says. */
                snprintf(unknown.ts, sizeof(unknown.ts), "%.20s", ts);
                e = &unknown;
        }
        if (!e->result)
                return 0;
        r = journal_done_entry_id(j, e);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        if (!e->id_name[0])
                return 0;
        memcpy(name, e->id_name, 65);
        /* The text journal_put_result() kept, when it did: the file holds
         * the same bytes, and reading them back would only check a seal
         * this process made. */
        r = journal_load_result(j, ts, ret_text, ret_len);
        if (r > 0) {
                free(*ret_text);
                *ret_text = NULL;
        }
        return r < 0 ? r : 0;
}

/* Remove an entry whose files the index knows: plan.json first and
 * result.json last (an empty result slot is nothing to keep), so that a crash half-way leaves an
 * entry that still publishes its result (or an empty one that the next start removes), never a plan
 * whose result is gone. A plan's call log, which the index does not track, goes before the result.
 * Anything else in the directory (temporary files of failed writes) makes rmdir fail and the whole
 * tree go the slow way. */
static int entry_remove(Journal *j, const char *ts, const JournalIndexEntry *e)
{
        const struct {
                bool has;
                const char *name;
        } files[] = {
                {e->plan, JOURNAL_PLAN_FILE}, /* first: no plan to run again */
                {e->running, JOURNAL_RUNNING_FILE},
                {e->plan, JOURNAL_CALLS_FILE}, /* a plan's, when it made calls */
                {e->slot, JOURNAL_RESULT_SLOT},
                {e->result, JOURNAL_RESULT_FILE}, /* last: published until then */
        };
        char path[JOURNAL_TS_MAX + 16];

        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                if (!files[i].has)
                        continue;
                snprintf(path, sizeof(path), "%s/%s", ts, files[i].name);
                if (j->ops.unlinkat(j->plans_fd, path, 0) < 0 && errno != ENOENT)
                        return -errno;
        }
        if (j->ops.unlinkat(j->plans_fd, ts, AT_REMOVEDIR) == 0 || errno == ENOENT)
                return 0;
        if (errno != ENOTEMPTY && errno != EEXIST)
                return -errno;
        return journal_rm_rf_at(j, j->plans_fd, ts);
}

/* Move entry e's files whose seal was found wrong to quarantine/. A sound
 * plan.json stays, and with it the entry (1: a forged result.json must not
 * make its plan be skipped); else 0, and the rest goes as usual. */
static int remove_forged(Journal *j, const char *ts, JournalIndexEntry *e)
{
        const struct {
                bool *forged, *has;
                const char *name;
        } files[] = {
                {&e->forged_plan, &e->plan, JOURNAL_PLAN_FILE},
                {&e->forged_result, &e->result, JOURNAL_RESULT_FILE},
        };
        int r;

        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                if (!*files[i].forged)
                        continue;
                r = journal_quarantine(j, ts, files[i].name);
                if (r < 0)
                        return r;
                pthread_mutex_lock(&j->lock);
                *files[i].forged = *files[i].has = false;
                e->id_known = false;
                if (files[i].has == &e->result)
                        journal_index_keep(j, e, NULL);
                pthread_mutex_unlock(&j->lock);
        }
        return e->plan ? 1 : 0;
}

/* The REMOVE record of entry ts, flushed: the last stamp, and with name
 * the done record (time, name, text) that the replay appends when
 * done/records lacks it (journal-internal.h has the format). */
static int wal_remove(Journal *j, const char *ts, const char *name, int64_t time, const char *text,
                      size_t len)
{
        _cleanup_free_ unsigned char *p = NULL;
        size_t n = name ? WAL_REMOVE_DONE + len : 8;

        p = calloc(1, n);
        if (!p)
                return -ENOMEM;
        journal_le64_put(p, (uint64_t)j->last_stamp);
        if (name) {
                journal_le64_put(p + 8, (uint64_t)time);
                memcpy(p + 16, name, 64);
                memcpy(p + WAL_REMOVE_DONE, text, len);
        }
        return journal_wal_append(j, JOURNAL_WAL_REMOVE, ts, p, n, true, NULL);
}

int journal_remove(Journal *j, const char *ts, bool record)
{
        _cleanup_free_ char *text = NULL;
        size_t text_len = 0;
        bool late = false, wal_done = false;
        int64_t time = 0;
        char name[65] = "";
        JournalIndexEntry *e;
        struct stat st;
        int r = 0;

        if (!journal_ts_valid(ts))
                return -EINVAL;
        pthread_mutex_lock(&j->io);
        e = journal_index_get(j, ts);
        if (!e && j->ops.fstatat(j->plans_fd, ts, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                r = -errno;
                goto out;
        }
        if (e && !record && (e->forged_plan || e->forged_result)) {
                r = remove_forged(j, ts, e);
                if (r != 0) {
                        if (r < 0)
                                journal_index_probe(j, ts);
                        r = r < 0 ? r : 0;
                        goto out;
                }
        }
        /* Before plan.json goes: it may hold the only durable copy of
         * the last stamp. With the log, REMOVE carries it. */
        /* Both may need a block (a new stamp file, a name in done/): on a
         * full disk they take it from the reserve, or the result would be
         * published again and again. */
        if (!j->wal)
                do
                        r = journal_stamp_settle(j, e);
                while (journal_reserve_retry(j, r));
        if (r == 0 && record)
                r = remove_record(j, ts, e, name, &text, &text_len);
        if (text)
                time = journal_done_now(j);
        /* With the log, REMOVE carries the done record too, and the
         * append is mirror; one too large for a record is flushed. */
        wal_done = j->wal && text && text_len <= journal_wal_max(j) - WAL_REMOVE_DONE;
        while (r == 0 && text) {
                r = journal_done_record_at(j, name, text, text_len, time, !wal_done);
                if (!journal_reserve_retry(j, r))
                        break;
                r = 0;
        }
        /* Full, and the reserve spent, when the done record was written
         * (never when the stamp was: plan.json may hold its only durable
         * copy): the entry's own room is what is left. Its result is kept
         * in memory, the entry removed, and the record appended then;
         * should that fail too, the plan has no record (a redelivery would
         * run it again), but its result is not published again and again. */
        if ((r == -ENOSPC || r == -EDQUOT) && text) {
                late = true;
                r = 0;
        }
        /* Flushed before the unlinks, which the file system's own commit
         * may otherwise make durable first (docs/journal.md). */
        if (r >= 0 && j->wal)
                r = wal_remove(j, ts, wal_done ? name : NULL, time, text, text_len);
        if (r >= 0) {
                journal_entry_dir_drop(j, ts);
                r = e ? entry_remove(j, ts, e) : journal_rm_rf_at(j, j->plans_fd, ts);
        }
        if (r >= 0 && late)
                (void)journal_done_record_at(j, name, text, text_len, time, !wal_done);
        if (r >= 0) {
                pthread_mutex_lock(&j->lock);
                journal_index_drop(j, ts);
                pthread_mutex_unlock(&j->lock);
                r = 0;
                /* Room came free: the reserve first. */
                (void)journal_reserve_fill(j);
        } else {
                journal_index_probe(j, ts);
        }
out:
        pthread_mutex_unlock(&j->io);
        return r;
}
