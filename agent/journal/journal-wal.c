/* The journal's use of its write-ahead log (JournalOptions.wal): the
 * records its calls append before they write the
 * files of plans/ without a flush, the recovery at open that makes those
 * files say what the records say, and the checkpoints that make them
 * durable (docs/journal.md, "The write-ahead log";
 * journal-log.h is the file itself). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "journal/journal-internal.h"
#include "journal/journal-log.h"
#include "util/fileio.h"
#include "util/hexid.h"
#include "util/macro.h"

/* The bytes of one call log append, at off in `calls`. */
typedef struct WalCall {
        uint64_t off;
        const unsigned char *data; /* in the record's payload, after off */
        size_t len;
} WalCall;

/* What the records say of one entry, in their order. */
typedef struct WalEntry {
        char ts[JOURNAL_TS_MAX];
        bool removed;
        bool running;
        unsigned char *plan, *result; /* owned; NULL: not in the log */
        size_t plan_len, result_len;
        WalCall *calls; /* owned array; the bytes are the records' */
        size_t n_calls, cap_calls;
} WalEntry;

typedef struct WalRecords {
        JournalLogRecord *v; /* data owned */
        size_t n, cap;
} WalRecords;

static int wal_collect(void *userdata, const JournalLogRecord *rec)
{
        WalRecords *rs = userdata;
        void *copy = malloc(rec->len + 1);
        int r;

        if (!copy)
                return -ENOMEM;
        r = grow_array(&rs->v, &rs->cap, rs->n, sizeof(*rs->v), 16);
        if (r < 0) {
                free(copy);
                return r;
        }
        if (rec->len)
                memcpy(copy, rec->data, rec->len);
        rs->v[rs->n] = *rec;
        rs->v[rs->n++].data = copy;
        return 0;
}

/* A REMOVE's payload with a done record (WAL_REMOVE_DONE). */
struct WalDone {
        unsigned char *p; /* owned */
        size_t len;
};

static uint64_t undo_seq(const JournalLogRecord *rec)
{
        return journal_le64_get(rec->data);
}

/* Keep what REMOVE rec holds for journal_wal_settle(): its stamp, and its
 * done record (the payload taken) when its name is 64 hex digits. Returns
 * 0 or -ENOMEM. */
static int remove_keep(Journal *j, JournalLogRecord *rec)
{
        struct WalDone *v;
        int64_t stamp;

        if (rec->len < 8)
                return 0;
        stamp = (int64_t)journal_le64_get(rec->data);
        if (stamp > j->wal_stamp)
                j->wal_stamp = stamp;
        if (rec->len < WAL_REMOVE_DONE || !hex_is_lower((const char *)rec->data + 16, 64))
                return 0;
        v = realloc(j->wal_done, (j->n_wal_done + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        j->wal_done = v;
        v[j->n_wal_done++] = (struct WalDone){(unsigned char *)rec->data, rec->len};
        rec->data = NULL;
        return 0;
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

        return x < y ? -1 : x > y;
}

/* The sequence numbers that UNDO records name, sorted, in *ret (NULL and
 * 0 when none). An UNDO always follows the record it names. Returns 0 or
 * -ENOMEM. */
static int undone_seqs(const WalRecords *rs, uint64_t **ret, size_t *ret_n)
{
        uint64_t *v = NULL;
        size_t n = 0, cap = 0;

        for (size_t k = 0; k < rs->n; k++) {
                if (rs->v[k].kind != JOURNAL_WAL_UNDO || rs->v[k].len != 8)
                        continue;
                if (grow_array(&v, &cap, n, sizeof(*v), 16) < 0) {
                        free(v);
                        return -ENOMEM;
                }
                v[n++] = undo_seq(&rs->v[k]);
        }
        if (n > 1)
                qsort(v, n, sizeof(*v), cmp_u64);
        *ret = v;
        *ret_n = n;
        return 0;
}

/* Whether an UNDO names seq (undo: undone_seqs()'s). */
static bool undone(const uint64_t *undo, size_t n_undo, uint64_t seq)
{
        return n_undo > 0 && bsearch(&seq, undo, n_undo, sizeof(*undo), cmp_u64) != NULL;
}

static int cmp_entry(const void *a, const void *b)
{
        return strcmp(((const WalEntry *)a)->ts, ((const WalEntry *)b)->ts);
}

/* Whether rec is replayed: a record of an entry, not named by an UNDO. */
static bool replayed(const JournalLogRecord *rec, const uint64_t *undo, size_t n_undo)
{
        return rec->kind != JOURNAL_WAL_UNDO && journal_ts_valid(rec->name) &&
               !undone(undo, n_undo, rec->seq);
}

/* One empty WalEntry for each entry name the records in rs that replay
 * names, sorted by name (for entry_of()), in *ret. Returns 0 or -ENOMEM. */
static int entries_of(const WalRecords *rs, const uint64_t *undo, size_t n_undo, WalEntry **ret,
                      size_t *ret_n)
{
        WalEntry *es = NULL;
        size_t n = 0;

        if (rs->n > 0) {
                es = calloc(rs->n, sizeof(*es));
                if (!es)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < rs->n; i++)
                if (replayed(&rs->v[i], undo, n_undo))
                        snprintf(es[n++].ts, JOURNAL_TS_MAX, "%s", rs->v[i].name);
        if (n > 1)
                qsort(es, n, sizeof(*es), cmp_entry);
        /* One per name. */
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
                if (k == 0 || !streq(es[k - 1].ts, es[i].ts))
                        es[k++] = es[i];
        *ret = es;
        *ret_n = k;
        return 0;
}

/* Entry ts of es (entries_of()'s): a bsearch, so that replay stays
 * O(n log n) in records at open. */
static WalEntry *entry_of(WalEntry *es, size_t n, const char *ts)
{
        WalEntry key;

        snprintf(key.ts, sizeof(key.ts), "%s", ts);
        return n > 0 ? bsearch(&key, es, n, sizeof(*es), cmp_entry) : NULL;
}

/* Take the record's bytes as *dst (the record keeps none). */
static void take(unsigned char **dst, size_t *dst_len, JournalLogRecord *rec)
{
        free(*dst);
        *dst = (unsigned char *)rec->data;
        *dst_len = rec->len;
        rec->data = NULL;
}

/* dirfd/file as the entry ts holds it: rewritten (sealed, no flush) when
 * missing, torn, altered or unsealed, or always (force). Returns 0 or
 * -errno. */
static int converge_file(Journal *j, int entry_fd, const char *ts, const char *file,
                         const char *tmp, const unsigned char *data, size_t len, bool force)
{
        _cleanup_free_ char *text = NULL;
        size_t have = 0;
        int r;

        if (force)
                return journal_write_replace(j, entry_fd, tmp, file, data, len, ts);
        r = journal_seal_read_at(j, entry_fd, file, file, ts, len + 1, &text, &have);
        if (r == 0 && have == len && memcmp(text, data, len) == 0)
                return 0;
        return journal_write_replace(j, entry_fd, tmp, file, data, len, ts);
}

/* The entry's `calls` given the bytes of each CALL where they differ or
 * are missing, or always (force) (no flush); a file longer than the
 * records say is kept, for its records not flushed may have reached it
 * without their CALL (the call log checks itself). Returns 0 or -errno. */
static int converge_calls(Journal *j, int entry_fd, const WalEntry *e, bool force)
{
        _cleanup_close_ int fd = -1;
        _cleanup_free_ unsigned char *buf = NULL;
        size_t cap = 0;

        fd = j->ops.openat(entry_fd, JOURNAL_CALLS_FILE, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
                           0600);
        if (fd < 0)
                return -errno;
        for (size_t i = 0; i < e->n_calls; i++) {
                const WalCall *c = &e->calls[i];
                ssize_t got;
                int r;

                if (c->len > cap) {
                        free(buf);
                        buf = malloc(c->len);
                        if (!buf)
                                return -ENOMEM;
                        cap = c->len;
                }
                got = force ? -1 : pread(fd, buf, c->len, (off_t)c->off);
                if (got == (ssize_t)c->len && memcmp(buf, c->data, c->len) == 0)
                        continue;
                r = journal_pwrite_all(&j->ops, fd, c->data, c->len, (off_t)c->off);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Make entry e's files say what its records say; with force, write them
 * whatever they hold. Returns 0 or -errno. */
static int converge(Journal *j, const WalEntry *e, bool force)
{
        _cleanup_close_ int entry_fd = -1;
        bool make = e->plan || e->running || e->result;
        int r;

        if (e->removed) {
                journal_entry_dir_drop(j, e->ts);
                return journal_rm_rf_at(j, j->plans_fd, e->ts);
        }
        if (!make && e->n_calls == 0)
                return 0;
        if (make && j->ops.mkdirat(j->plans_fd, e->ts, 0700) < 0 && errno != EEXIST)
                return -errno;
        entry_fd = journal_open_dir(j, j->plans_fd, e->ts);
        /* Calls of an entry that the log does not make: its plan.json was
         * durable before the checkpoint, and an entry that is gone took
         * its log with it. */
        if (entry_fd == -ENOENT && !make)
                return 0;
        if (entry_fd < 0)
                return entry_fd;
        if (e->n_calls > 0) {
                r = converge_calls(j, entry_fd, e, force);
                if (r < 0)
                        return r;
        }
        if (e->plan) {
                r = converge_file(j, entry_fd, e->ts, JOURNAL_PLAN_FILE, JOURNAL_PLAN_TMP, e->plan,
                                  e->plan_len, force);
                if (r < 0)
                        return r;
        }
        /* `running` names plan.json (a plan stored without a record, too
         * large for one, is durable by itself); without it, an entry of
         * nothing but `running` is what the open removes. */
        if (e->running && j->ops.faccessat(entry_fd, JOURNAL_RUNNING_FILE, F_OK, 0) < 0 &&
            j->ops.linkat(entry_fd, JOURNAL_PLAN_FILE, entry_fd, JOURNAL_RUNNING_FILE, 0) < 0 &&
            errno != ENOENT)
                return -errno;
        if (e->result) {
                r = converge_file(j, entry_fd, e->ts, JOURNAL_RESULT_FILE, JOURNAL_RESULT_TMP,
                                  e->result, e->result_len, force);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Replay rs: what each entry ends as, then its files made so (with
 * force, written whatever they hold). */
static int replay(Journal *j, WalRecords *rs, bool force)
{
        _cleanup_free_ uint64_t *undo = NULL;
        WalEntry *es = NULL;
        size_t n = 0, n_undo = 0;
        int r = undone_seqs(rs, &undo, &n_undo);

        if (r == 0)
                r = entries_of(rs, undo, n_undo, &es, &n);
        for (size_t i = 0; i < rs->n && r == 0; i++) {
                JournalLogRecord *rec = &rs->v[i];
                WalEntry *e;

                if (!replayed(rec, undo, n_undo))
                        continue;
                /* Names handed out later are above every name the log
                 * holds, so that no removed name is taken again. */
                uint64_t v = strtoull(rec->name, NULL, 10);
                if (v > j->last_ts)
                        j->last_ts = v;
                e = entry_of(es, n, rec->name);
                switch (rec->kind) {
                case JOURNAL_WAL_PLAN:
                        e->removed = false;
                        take(&e->plan, &e->plan_len, rec);
                        break;
                case JOURNAL_WAL_BEGIN:
                        e->running = true;
                        break;
                case JOURNAL_WAL_RESULT:
                case JOURNAL_WAL_ANSWER: /* an entry of nothing but its result */
                        take(&e->result, &e->result_len, rec);
                        break;
                case JOURNAL_WAL_CALL:
                        /* An offset whose write would end past what an
                         * off_t holds is no call log's: left out, not an
                         * open that fails. */
                        if (rec->len < 8 ||
                            journal_le64_get(rec->data) > (uint64_t)INT64_MAX - (rec->len - 8))
                                break;
                        if (grow_array(&e->calls, &e->cap_calls, e->n_calls, sizeof(*e->calls),
                                       16) < 0) {
                                r = -ENOMEM;
                                break;
                        }
                        e->calls[e->n_calls++] = (WalCall){
                                .off = journal_le64_get(rec->data),
                                .data = (const unsigned char *)rec->data + 8,
                                .len = rec->len - 8,
                        };
                        break;
                case JOURNAL_WAL_REMOVE:
                        free(e->plan);
                        free(e->result);
                        free(e->calls);
                        *e = (WalEntry){.removed = true};
                        snprintf(e->ts, sizeof(e->ts), "%s", rec->name);
                        r = remove_keep(j, rec);
                        break;
                default:
                        break; /* a kind of a later version: its files are its own */
                }
        }
        for (size_t i = 0; i < n; i++) {
                if (r == 0)
                        r = converge(j, &es[i], force);
                free(es[i].plan);
                free(es[i].result);
                free(es[i].calls);
        }
        free(es);
        return r;
}

static void records_free(WalRecords *rs)
{
        for (size_t i = 0; i < rs->n; i++)
                free((void *)rs->v[i].data);
        free(rs->v);
}

/* A REMOVE record's done record, as remove_keep() took it: its name and
 * time, its result's text and length. */
static void done_of(const struct WalDone *d, char name[65], int64_t *ret_time)
{
        memcpy(name, d->p + 16, 64);
        name[64] = '\0';
        *ret_time = (int64_t)journal_le64_get(d->p + 8);
}

static const char *done_text(const struct WalDone *d)
{
        return (const char *)d->p + WAL_REMOVE_DONE;
}

static size_t done_len(const struct WalDone *d)
{
        return d->len - WAL_REMOVE_DONE;
}

static void free_done(Journal *j)
{
        for (size_t i = 0; i < j->n_wal_done; i++)
                free(j->wal_done[i].p);
        free(j->wal_done);
        j->wal_done = NULL;
        j->n_wal_done = 0;
}

/* dirfd/name's bytes written again in place, as they stand (no flush):
 * its pages dirty again, whose write-back may have failed. A missing file
 * is none of the mirror's. Returns 0 or -errno. */
static int rewrite_in_place(Journal *j, int dirfd, const char *name)
{
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r;

        fd = j->ops.openat(dirfd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        r = file_read_regular_fd(fd, JOURNAL_MAX_RESULT_FILE, &text, &len);
        if (r == 0 && len > 0)
                r = journal_pwrite_all(&j->ops, fd, text, len, 0);
        return r;
}

/* The mirror written again, every file that a record since the
 * checkpoint wrote, whatever its pages hold (docs/journal.md, "The
 * checkpoint"): the entries' files from the records, through temporary
 * files (new pages) or, for `calls`, in place; the stamp file from
 * memory; the done records in place, as the files read, and then each
 * one the records carry written at its place again where the files no
 * longer hold it (a page dropped since its write-back failed reads what
 * the disk kept). Returns 0 or -errno. */
static int mirror_rewrite(Journal *j)
{
        WalRecords rs = {0};
        int r;

        pthread_mutex_lock(&j->wal_mu);
        r = journal_log_read(j->wal, wal_collect, &rs);
        pthread_mutex_unlock(&j->wal_mu);
        if (r == 0)
                r = replay(j, &rs, true);
        records_free(&rs);
        j->wal_stamp = 0;
        if (r == 0)
                r = journal_stamp_rewrite(j);
        /* journal-done-log.c's files: a rotation since the checkpoint
         * renamed the one to the other. */
        if (r == 0)
                r = rewrite_in_place(j, j->done_fd, JOURNAL_DONE_RECORDS);
        if (r == 0)
                r = rewrite_in_place(j, j->done_fd, JOURNAL_DONE_RECORDS_OLD);
        for (size_t i = 0; i < j->n_wal_done && r == 0; i++) {
                int64_t time;
                char name[65];

                done_of(&j->wal_done[i], name, &time);
                r = journal_done_mend(j, name, time, done_text(&j->wal_done[i]),
                                      done_len(&j->wal_done[i]));
        }
        free_done(j);
        return r;
}

int journal_wal_checkpoint(Journal *j)
{
        int r = 0;

        /* No CALL record between its append and its mirror write. */
        pthread_rwlock_wrlock(&j->wal_rw);
        /* A syncfs() that failed may have left pages of the mirror
         * unwritten, and marked clean: the next one would not report it,
         * nor write them. So the mirror is written again first, until a
         * syncfs() succeeds after it. */
        if (j->wal_suspect)
                r = mirror_rewrite(j);
        if (r == 0 && j->ops.syncfs(j->plans_fd) < 0) {
                r = -errno;
                j->wal_suspect = true;
        }
        if (r == 0) {
                j->wal_suspect = false;
                pthread_mutex_lock(&j->wal_mu);
                r = journal_log_checkpoint(j->wal);
                pthread_mutex_unlock(&j->wal_mu);
        }
        pthread_rwlock_unlock(&j->wal_rw);
        return r;
}

/* Whether a checkpoint would do anything: records since the last, or a
 * log that waits for one. Every mirror write has its record. */
static bool dirty(Journal *j)
{
        bool d;

        pthread_mutex_lock(&j->wal_mu);
        d = journal_log_used(j->wal) > 0 || journal_log_want_checkpoint(j->wal);
        pthread_mutex_unlock(&j->wal_mu);
        return d;
}

static bool want_checkpoint(Journal *j)
{
        bool want;

        pthread_mutex_lock(&j->wal_mu);
        want = journal_log_want_checkpoint(j->wal);
        pthread_mutex_unlock(&j->wal_mu);
        return want;
}

/* Append under wal_mu, *ret_seq its seq (may be NULL). */
static int append_locked(Journal *j, unsigned kind, const char *ts, const void *data, size_t len,
                         bool sync, uint64_t *ret_seq)
{
        int r;

        pthread_mutex_lock(&j->wal_mu);
        if (ret_seq)
                *ret_seq = journal_log_next_seq(j->wal);
        r = journal_log_append(j->wal, kind, ts, data, len, sync);
        pthread_mutex_unlock(&j->wal_mu);
        return r;
}

int journal_wal_open(Journal *j, int storage_fd, const JournalLogOps *ops)
{
        JournalLogOptions o = {.ops = ops};
        WalRecords rs = {0};
        int r;

        bool missing =
                j->ops.faccessat(storage_fd, JOURNAL_LOG_FILE, F_OK, AT_SYMLINK_NOFOLLOW) < 0 &&
                errno == ENOENT;

        r = journal_log_key(j, &j->wal_key);
        if (r < 0)
                return r;
        r = journal_log_open(storage_fd, j->wal_key, &o, wal_collect, &rs, &j->wal);
        if (r < 0 && r != -ENOMEM && missing) {
                /* No record to replay, and none lost: the journal works
                 * as without the log (docs/journal.md). */
                j->report.wal_errno = -r;
                j->wal = NULL;
                journal_calls_key_free(j->wal_key);
                j->wal_key = NULL;
                r = 0;
        } else if (r == 0) {
                j->report.wal_reset = journal_log_report(j->wal)->reset;
                j->report.n_wal_records = (unsigned)rs.n;
                r = replay(j, &rs, false);
                /* The process before may have left the mirror in pages
                 * whose write-back failed, reported to its syncfs() and
                 * not to this one's: the checkpoint of
                 * journal_wal_settle() writes them again. */
                j->wal_suspect = rs.n > 0;
        }
        records_free(&rs);
        return r;
}

int journal_wal_settle(Journal *j)
{
        int r = 0;

        if (!j->wal)
                return 0;
        r = journal_stamp_raise(j, j->wal_stamp);
        for (size_t i = 0; i < j->n_wal_done && r == 0; i++) {
                int64_t time;
                char name[65];

                done_of(&j->wal_done[i], name, &time);
                /* Not flushed: the checkpoint below makes it durable. */
                if (!journal_done_has(j, name, time))
                        r = journal_done_record_at(j, name, done_text(&j->wal_done[i]),
                                                   done_len(&j->wal_done[i]), time, false);
        }
        free_done(j);
        if (r == 0)
                r = journal_wal_checkpoint(j);
        if (r == 0)
                j->wal_ready = true;
        return r;
}

void journal_wal_close(Journal *j)
{
        /* A stopped agent leaves its log empty and plans/ durable, which
         * an earlier version or the reference reads after a downgrade. */
        if (j->wal && j->wal_ready && dirty(j))
                (void)journal_wal_checkpoint(j);
        journal_log_free(j->wal);
        journal_calls_key_free(j->wal_key);
        j->wal = NULL;
        j->wal_key = NULL;
        j->wal_ready = false;
        free_done(j);
}

int journal_wal_append(Journal *j, unsigned kind, const char *ts, const void *data, size_t len,
                       bool sync, uint64_t *ret_seq)
{
        int r = 0;

        /* The calls before have written their mirror (io), and so has
         * every CALL record (wal_rw): a checkpoint here covers every
         * record so far. The plan thread's records may fill the ring
         * between the look and the append: then once more. */
        for (int tries = 0; tries < 2; tries++) {
                if (want_checkpoint(j)) {
                        r = journal_wal_checkpoint(j);
                        if (r < 0)
                                return r;
                }
                r = append_locked(j, kind, ts, data, len, sync, ret_seq);
                if (r != JOURNAL_LOG_CHECKPOINT)
                        return r;
        }
        return -EIO;
}

void journal_wal_undo(Journal *j, uint64_t seq)
{
        unsigned char p[8];

        journal_le64_put(p, seq);
        (void)append_locked(j, JOURNAL_WAL_UNDO, "", p, sizeof(p), true, NULL);
}

int journal_wal_call(Journal *j, const char *ts, uint64_t off, const void *data, size_t len,
                     bool sync, int (*mirror)(void *userdata), void *userdata)
{
        _cleanup_free_ unsigned char *payload = NULL;
        uint64_t seq = 0;
        int r = JOURNAL_LOG_CHECKPOINT;

        if (len > journal_log_max_payload(j->wal) - 8)
                return 1;
        payload = malloc(8 + len);
        if (!payload)
                return -ENOMEM;
        journal_le64_put(payload, off);
        memcpy(payload + 8, data, len);
        for (int tries = 0; tries < 2 && r == JOURNAL_LOG_CHECKPOINT; tries++) {
                /* Checkpoints are made under io, which the journal's own
                 * calls hold across their record and their mirror. */
                if (want_checkpoint(j)) {
                        r = journal_checkpoint(j);
                        if (r < 0)
                                return r;
                }
                pthread_rwlock_rdlock(&j->wal_rw);
                r = append_locked(j, JOURNAL_WAL_CALL, ts, payload, 8 + len, sync, &seq);
                if (r == 0) {
                        r = mirror(userdata);
                        if (r < 0)
                                journal_wal_undo(j, seq);
                }
                pthread_rwlock_unlock(&j->wal_rw);
        }
        return r == JOURNAL_LOG_CHECKPOINT ? -EIO : r;
}

size_t journal_wal_max(const Journal *j)
{
        return journal_log_max_payload(j->wal);
}

int journal_checkpoint(Journal *j)
{
        int r = 0;

        pthread_mutex_lock(&j->io);
        if (j->wal && j->wal_ready && dirty(j))
                r = journal_wal_checkpoint(j);
        pthread_mutex_unlock(&j->io);
        return r;
}
