/* Stamps (spec 4.4) and the `running` mark: journal_begin() is the one
 * point after which a plan is never executed again, whatever happens.
 *
 * The reference reads the stamp file with int(f.read()) and writes it with
 * open('w') + write(str(stamp)), so a crash between the two leaves an
 * empty file and a reference agent that cannot start. We write it through
 * a temporary file, and read a damaged one as 0 (reported, not fatal).
 *
 * The stamp file is not fsync'd on the plan's way. journal_begin() makes
 * `running` durable and then writes the stamp file without an fsync
 * (every reader, a downgraded reference too, sees the new value in the
 * page cache). A power loss may lose that write, but not the stamp: the
 * plan that took it keeps plan.json and `running`, both durable, and its
 * body holds the Stamp. So the last accepted stamp is the highest of the
 * stamp file and of the Stamps of the entries with plan.json and
 * `running` (journal_stamp_recover at open), and before such an entry
 * loses its plan.json the stamp file is made durable
 * (journal_stamp_settle, from journal_remove), once for every advance of
 * the stamp. That removal follows the broker's confirm of the result, off
 * the engine's round trip. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal/journal-internal.h"
#include "util/fileio.h"
#include "util/macro.h"
#include "util/pyjson.h"

/* Python's int(text) for what a stamp file can hold: surrounding
 * whitespace, an optional sign, digits with single '_' between them. Only
 * values 0..INT64_MAX are stamps. */
static bool stamp_parse(const char *s, int64_t *ret)
{
        uint64_t v = 0;
        bool digit = false;

        while (*s == ' ' || (*s >= '\t' && *s <= '\r'))
                s++;
        if (*s == '+')
                s++;
        for (; *s; s++) {
                if (*s == '_' && digit && s[1] >= '0' && s[1] <= '9')
                        continue;
                if (*s < '0' || *s > '9')
                        break;
                if (v > ((uint64_t)INT64_MAX - (uint64_t)(*s - '0')) / 10)
                        return false;
                v = v * 10 + (uint64_t)(*s - '0');
                digit = true;
        }
        while (*s == ' ' || (*s >= '\t' && *s <= '\r'))
                s++;
        if (!digit || *s != '\0')
                return false;
        *ret = (int64_t)v;
        return true;
}

int journal_stamp_load(Journal *j)
{
        _cleanup_free_ char *text = NULL;
        int64_t v = 0;
        size_t len;
        int r;

        j->last_stamp = 0;
        j->stamp_len = -1;
        j->stamp_name_durable = false;
        r = journal_seal_read_at(j, j->plans_fd, JOURNAL_STAMP_FILE, JOURNAL_STAMP_FILE,
                                 JOURNAL_STAMP_FILE, 64, &text, &len);
        if (r == -ENOENT)
                return 0;
        if (r == JOURNAL_FORGED) {
                /* Planted, or its seal not written before a power loss:
                 * every stamp above the last durable one is still held by
                 * an entry marked running, which journal_stamp_recover()
                 * reads, so nothing the engine stamped is lost. */
                j->report.stamp_forged = true;
                return 0;
        }
        if (r == -EFBIG || r == -EINVAL ||
            (r == 0 && (strlen(text) != len || !stamp_parse(text, &v)))) {
                j->report.stamp_damaged = true;
                return 0;
        }
        if (r < 0)
                return r;
        j->last_stamp = v;
        j->stamp_len = (int)len;
        return 0;
}

/* Overwrite the stamp file's digits in place. Where the new number has as
 * many as the file holds, which a run of stamps nearly always has, no
 * block is allocated and none freed, where replacing the file freed one
 * each time: on a disk mounted with discard that is a synchronous discard,
 * about a millisecond per plan on the test VM (docs/journal.md, "Stamps"). The
 * write, at most 20 bytes at the start of the file, lies in one sector,
 * which a device writes whole or not at all, and the size does not change:
 * a reader, after a power loss too, finds the old number or the new one.
 * Durably, this needs the file's name to be durable already, and then one
 * fsync instead of two. Returns 0 or -errno. */
static int stamp_overwrite(Journal *j, const char *text, size_t len, bool durable)
{
        _cleanup_close_ int fd = -1;
        struct stat st;
        ssize_t n;

        fd = j->ops.openat(j->plans_fd, JOURNAL_STAMP_FILE,
                           O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        /* Only this process writes it (the flock), but look all the same:
         * an overwrite must never change the size. */
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode) || st.st_size != (off_t)len)
                return -ESTALE;
        n = j->ops.write(fd, text, len);
        if (n != (ssize_t)len)
                return n < 0 ? -errno : -EIO;
        if (j->sealed) {
                unsigned char mac[JOURNAL_SEAL_LEN];
                int r;

                journal_seal_of(j, JOURNAL_STAMP_FILE, JOURNAL_STAMP_FILE, text, len, mac);
                r = journal_seal_set(j, fd, mac);
                if (r < 0)
                        return r;
        }
        return durable ? journal_sync(j, fd) : 0;
}

/* Replace the stamp file's text with v, durably or not. */
static int stamp_save(Journal *j, int64_t v, bool durable)
{
        char text[32];
        int n = snprintf(text, sizeof(text), "%" PRId64, v);
        int r;

        if (j->stamp_len == n && (!durable || j->stamp_name_durable)) {
                if (stamp_overwrite(j, text, (size_t)n, durable) == 0)
                        return 0;
                /* A failure in place, a write cut short among them, is
                 * mended by replacing the whole file. */
        }
        j->stamp_len = -1;
        j->stamp_name_durable = false;
        if (!durable)
                r = journal_write_replace(j, j->plans_fd, JOURNAL_STAMP_TMP, JOURNAL_STAMP_FILE,
                                          text, (size_t)n, JOURNAL_STAMP_FILE);
        else
                /* No undo: if only the directory fsync failed, the new stamp
                 * is whole and the safer value to find after a restart. */
                r = journal_write_atomic(j, j->plans_fd, JOURNAL_STAMP_TMP, JOURNAL_STAMP_FILE,
                                         text, (size_t)n, false, JOURNAL_STAMP_FILE);
        if (r == 0) {
                j->stamp_len = n;
                j->stamp_name_durable = durable;
        }
        return r;
}

static int stamp_classify(const json_t *stamp, int64_t *ret)
{
        double d;

        if (!stamp) {
                *ret = -1;
                return 0;
        }
        if (json_is_integer(stamp)) {
                json_int_t v = json_integer_value(stamp);
                *ret = v < 0 ? -1 : (int64_t)v;
                return 0;
        }
        if (!json_is_real(stamp))
                return JOURNAL_STAMP_INVALID;
        d = json_real_value(stamp);
        if (d < 0) {
                *ret = -1;
                return 0;
        }
        /* The reference would save str(1.5) and then fail on int("1.5")
         * at its next start; only whole numbers are stamps here. */
        if (!(d < 0x1p63) || d != floor(d))
                return JOURNAL_STAMP_INVALID;
        *ret = (int64_t)d;
        return 0;
}

/* The Stamp in entry ts's plan.json, as journal_begin() classified it:
 * JOURNAL_STAMP_NONE when there is none (or the body is not a JSON object:
 * such a plan is answered without journal_begin()), JOURNAL_STAMP_UNKNOWN
 * when plan.json cannot be read. Parsing a large body costs a few
 * milliseconds per MiB, paid only at open and only for plans that were
 * running. */
static int entry_stamp(Journal *j, const char *ts, int64_t *ret)
{
        _cleanup_(journal_plan_freep) JournalPlan *p = NULL;
        _cleanup_free_ char *error = NULL;
        _cleanup_json_ json_t *doc = NULL;
        int64_t v;
        int r;

        r = journal_load_plan(j, ts, &p, &error);
        if (r == -ENOMEM)
                return r;
        if (r != 0) {
                *ret = JOURNAL_STAMP_UNKNOWN;
                return 0;
        }
        /* What the daemon's parser accepts, this one reads the same way
         * (it only refuses more: duplicate keys, NUL characters), so a
         * plan the daemon began gives the same Stamp here. */
        doc = pyjson_loadb(p->body, p->body_len, 0, NULL);
        if (json_is_object(doc) && stamp_classify(json_object_get(doc, "Stamp"), &v) == 0)
                *ret = v;
        else
                *ret = JOURNAL_STAMP_NONE;
        return 0;
}

/* Whether stamp v is more than JOURNAL_STAMP_AHEAD_MAX ahead of the wall
 * clock, in the engine's units. A clock that cannot be read says no. */
static bool stamp_ahead(Journal *j, int64_t v)
{
        struct timespec now;

        if (journal_now(j, &now) < 0 || now.tv_sec < 0)
                return false;
        return v - JOURNAL_STAMP_AHEAD_MAX > (int64_t)now.tv_sec * 10000 + now.tv_nsec / 100000;
}

int journal_stamp_recover(Journal *j)
{
        int64_t file = j->last_stamp;
        int r;

        for (size_t i = 0; i < j->n_index; i++) {
                JournalIndexEntry *e = &j->index[i];

                if (!e->plan || !e->running)
                        continue;
                r = entry_stamp(j, e->ts, &e->stamp);
                if (r < 0)
                        return r;
                if (e->stamp != JOURNAL_STAMP_UNKNOWN && e->stamp > j->last_stamp)
                        j->last_stamp = e->stamp;
        }
        j->report.stamp_ahead = stamp_ahead(j, j->last_stamp);
        if (j->last_stamp == file)
                return 0;
        /* A power loss took the stamp file's last write (or damaged it):
         * put the value back for good, for the reference after a
         * downgrade too. A failure is not fatal: the entries still hold
         * the stamp, and the durable value stays 0, so the first removal
         * of one of them tries again. */
        j->report.stamp_recovered = true;
        if (stamp_save(j, j->last_stamp, true) == 0)
                j->durable_stamp = j->last_stamp;
        return 0;
}

int journal_stamp_raise(Journal *j, int64_t v)
{
        int r;

        if (v <= j->last_stamp)
                return 0;
        r = stamp_save(j, v, false);
        if (r == 0)
                j->last_stamp = v;
        return r;
}

int journal_stamp_rewrite(Journal *j)
{
        return j->last_stamp > 0 ? stamp_save(j, j->last_stamp, false) : 0;
}

int journal_stamp_settle(Journal *j, const JournalIndexEntry *e)
{
        int64_t held = JOURNAL_STAMP_UNKNOWN;
        int r;

        if (e)
                held = e->plan && e->running ? e->stamp : JOURNAL_STAMP_NONE;
        if (held <= j->durable_stamp || j->last_stamp <= j->durable_stamp)
                return 0;
        /* The value saved is the last one, which covers every stamp of
         * the entries still waiting: a burst pays this once. */
        r = stamp_save(j, j->last_stamp, true);
        if (r == 0)
                j->durable_stamp = j->last_stamp;
        return r;
}

/* `running` is a second name for plan.json (a hard link). Only its
 * existence matters, and the inode it names is already durable
 * (journal_put_plan() fsync'd it), so the one new thing is a name in the
 * entry directory, which that directory's fsync makes durable. An empty
 * file would be a new inode, which strictly needs an fsync of its own too
 * (ext4 without a journal writes only the directory's blocks on the
 * directory's fsync). Where no link can be made (no plan.json, which only
 * an entry holding just a result lacks; a file system without hard links;
 * `running` left by an earlier attempt), it is an empty file after all,
 * fsync'd, and then the directory. */
static int mark_running(Journal *j, int entry_fd)
{
        int fd, r = 0;

        /* With the log, its BEGIN record is what is durable. */
        if (j->ops.linkat(entry_fd, JOURNAL_PLAN_FILE, entry_fd, JOURNAL_RUNNING_FILE, 0) == 0)
                return j->wal ? 0 : journal_sync(j, entry_fd);
        fd = j->ops.openat(entry_fd, JOURNAL_RUNNING_FILE,
                           O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return -errno;
        if (!j->wal)
                r = journal_sync(j, fd);
        close(fd);
        if (r < 0 || j->wal)
                return r;
        return journal_sync(j, entry_fd);
}

int journal_begin(Journal *j, const char *ts, const json_t *stamp)
{
        int entry_fd;
        JournalIndexEntry *e;
        uint64_t seq = 0;
        int64_t v;
        int r;

        if (!journal_ts_valid(ts))
                return -EINVAL;
        r = stamp_classify(stamp, &v);
        if (r != 0)
                return r;

        pthread_mutex_lock(&j->io);
        if (v >= 0 && v <= j->last_stamp && !stamp_ahead(j, j->last_stamp)) {
                r = JOURNAL_STAMP_OLD;
                goto out;
        }
        entry_fd = journal_entry_dir(j, ts);
        if (entry_fd < 0) {
                r = entry_fd;
                goto out;
        }
        e = journal_index_get(j, ts);
        if (!e) {
                /* Only a stale index lacks it. */
                journal_index_probe(j, ts);
                e = journal_index_get(j, ts);
        }
        if (!e) {
                r = -ENOMEM;
                goto out;
        }
        pthread_mutex_lock(&j->lock);
        e->begun = true;
        pthread_mutex_unlock(&j->lock);
        r = j->wal ? journal_wal_append(j, JOURNAL_WAL_BEGIN, ts, NULL, 0, true, &seq) : 0;
        if (r == 0) {
                r = mark_running(j, entry_fd);
                if (r < 0 && j->wal)
                        journal_wal_undo(j, seq);
        }
        if (r == 0) {
                pthread_mutex_lock(&j->lock);
                e->running = true;
                pthread_mutex_unlock(&j->lock);
                e->stamp = v < 0 ? JOURNAL_STAMP_NONE : v;
        } else {
                /* `running` may be there or not: look. */
                journal_index_probe(j, ts);
                goto out;
        }
        if (v < 0)
                goto out;
        /* No fsync: the durable plan.json and `running` keep this stamp
         * until journal_stamp_settle() has made the file durable. */
        r = stamp_save(j, v, false);
        if (r == 0)
                j->last_stamp = v;
out:
        pthread_mutex_unlock(&j->io);
        return r;
}

int64_t journal_last_stamp(Journal *j)
{
        int64_t v;

        pthread_mutex_lock(&j->io);
        v = j->last_stamp;
        pthread_mutex_unlock(&j->io);
        return v;
}

bool journal_stamp_held(Journal *j, int64_t stamp, const char *except_ts)
{
        bool held = false;

        /* io: entries' stamps change under it; lock: the index. */
        pthread_mutex_lock(&j->io);
        pthread_mutex_lock(&j->lock);
        for (size_t i = 0; i < j->n_index && !held; i++) {
                const JournalIndexEntry *e = &j->index[i];

                /* A stamp not known (plan.json unreadable at open) may be
                 * this one: silence, as before, rather than two answers. */
                held = e->running && (e->stamp == stamp || e->stamp == JOURNAL_STAMP_UNKNOWN) &&
                       (!except_ts || strcmp(e->ts, except_ts) != 0);
        }
        pthread_mutex_unlock(&j->lock);
        pthread_mutex_unlock(&j->io);
        return held;
}
