/* Stamps (spec 4.4) and the `running` mark: journal_begin() is the one
 * point after which a plan is never executed again, whatever happens.
 *
 * The reference reads the stamp file with int(f.read()) and writes it with
 * open('w') + write(str(stamp)), so a crash between the two leaves an
 * empty file and a reference agent that cannot start. We write it through
 * a temporary file, and read a damaged one as 0 (reported, not fatal). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "journal/journal-internal.h"
#include "util/fileio.h"
#include "util/macro.h"

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
        r = file_read_regular_at(j->plans_fd, JOURNAL_STAMP_FILE, 64, &text, &len);
        if (r == -ENOENT)
                return 0;
        if (r == -EFBIG || r == -EINVAL ||
            (r == 0 && (strlen(text) != len || !stamp_parse(text, &v)))) {
                j->report.stamp_damaged = true;
                return 0;
        }
        if (r < 0)
                return r;
        j->last_stamp = v;
        return 0;
}

static int stamp_save(Journal *j, int64_t v)
{
        char text[32];
        int n = snprintf(text, sizeof(text), "%" PRId64, v);

        /* No undo: if only the directory fsync failed, the new stamp is
         * whole and the safer value to find after a restart. */
        return journal_write_atomic(j, j->plans_fd, JOURNAL_STAMP_TMP, JOURNAL_STAMP_FILE, text,
                                    (size_t)n, false);
}

/* What the reference does with ep.get('Stamp', -1) >= 0: *ret is the
 * stamp, or -1 when there is none to check. */
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
        int fd, r;

        if (j->ops.linkat(entry_fd, JOURNAL_PLAN_FILE, entry_fd, JOURNAL_RUNNING_FILE, 0) == 0)
                return journal_sync(j, entry_fd);
        fd = j->ops.openat(entry_fd, JOURNAL_RUNNING_FILE,
                           O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return -errno;
        r = journal_sync(j, fd);
        close(fd);
        if (r < 0)
                return r;
        return journal_sync(j, entry_fd);
}

int journal_begin(Journal *j, const char *ts, const json_t *stamp)
{
        _cleanup_close_ int entry_fd = -1;
        JournalIndexEntry *e;
        int64_t v;
        int r;

        if (!journal_ts_valid(ts))
                return -EINVAL;
        r = stamp_classify(stamp, &v);
        if (r != 0)
                return r;

        pthread_mutex_lock(&j->lock);
        if (v >= 0 && v <= j->last_stamp) {
                r = JOURNAL_STAMP_OLD;
                goto out;
        }
        entry_fd = journal_open_dir(j, j->plans_fd, ts);
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
        e->begun = true;
        r = mark_running(j, entry_fd);
        if (r == 0) {
                e->running = true;
        } else {
                /* `running` may be there or not: look. */
                journal_index_probe(j, ts);
                goto out;
        }
        if (v < 0)
                goto out;
        r = stamp_save(j, v);
        if (r == 0)
                j->last_stamp = v;
out:
        pthread_mutex_unlock(&j->lock);
        return r;
}

int64_t journal_last_stamp(Journal *j)
{
        int64_t v;

        pthread_mutex_lock(&j->lock);
        v = j->last_stamp;
        pthread_mutex_unlock(&j->lock);
        return v;
}
