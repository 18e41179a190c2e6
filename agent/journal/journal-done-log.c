/* The done records' files: plans/done/records, to which each record is
 * appended, and plans/done/records.old, what records held before its last
 * rotation. A record is a header line and the result's text:
 *
 *   <64 hex digits of the record name> <time in ns> <length of text>\n
 *   <text>\n
 *
 * When records would grow past done_max_bytes, it becomes records.old
 * (replacing the one before) and a new records is begun, so the two files
 * together hold at most twice done_max_bytes, plus one record: the space
 * of done records is bounded, where a directory and a file per record
 * took two blocks each. Appends are not fsync'd: a power loss may lose the
 * last records, as it may undo a removal, and a torn last record is cut
 * off at the next open. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal/journal-internal.h"
#include "util/fileio.h"

#define RECORDS     "records"
#define RECORDS_OLD "records.old"

/* Parse the record at text[*off..len): 1 and *ret set (off and len of its
 * text), 0 at a clean end, -EBADMSG for a torn or damaged record. */
static int record_parse(const char *text, size_t len, size_t *off, JournalDone *ret)
{
        const char *p = text + *off, *end = text + len, *nl;
        char hdr[128];
        unsigned long long t, n;
        char name[65];
        int used = 0;

        if (p == end)
                return 0;
        nl = memchr(p, '\n', (size_t)(end - p) < sizeof(hdr) ? (size_t)(end - p) : sizeof(hdr));
        if (!nl)
                return -EBADMSG;
        memcpy(hdr, p, (size_t)(nl - p));
        hdr[nl - p] = '\0';
        if (sscanf(hdr, "%64[0-9a-f] %llu %llu%n", name, &t, &n, &used) != 3 ||
            (size_t)used != (size_t)(nl - p) || strlen(name) != 64 || t > INT64_MAX ||
            n > (size_t)(end - nl - 1) || (size_t)(end - nl - 1) - n < 1 || nl[1 + n] != '\n')
                return -EBADMSG;
        memcpy(ret->name, name, sizeof(name));
        ret->time = (int64_t)t;
        ret->off = (off_t)(nl + 1 - text);
        ret->len = (size_t)n;
        *off = (size_t)(nl + 1 - text) + n + 1;
        return 1;
}

/* Load the records of file name (fd open on it) into the index, marked
 * where; returns the length of its whole records in *ret_good. */
static int log_load(Journal *j, const char *name, int where, off_t *ret_good)
{
        _cleanup_free_ char *text = NULL;
        size_t len, off = 0;
        JournalDone rec;
        int r;

        r = file_read_regular_at(j->done_fd, name, JOURNAL_MAX_RESULT_FILE, &text, &len);
        if (r < 0)
                return r;
        while ((r = record_parse(text, len, &off, &rec)) == 1) {
                rec.where = where;
                r = journal_done_add(j, &rec);
                if (r < 0)
                        return r;
        }
        *ret_good = (off_t)off;
        return 0;
}

static int log_open_current(Journal *j)
{
        j->log_fd = j->ops.openat(j->done_fd, RECORDS,
                                  O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
        return j->log_fd < 0 ? -errno : 0;
}

int journal_done_log_open(Journal *j)
{
        off_t good;
        int r;

        j->old_fd = j->ops.openat(j->done_fd, RECORDS_OLD, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0);
        if (j->old_fd < 0 && errno != ENOENT)
                return -errno;
        if (j->old_fd >= 0) {
                r = log_load(j, RECORDS_OLD, JOURNAL_DONE_OLD, &good);
                if (r < 0)
                        return r;
        }
        r = log_open_current(j);
        if (r < 0)
                return r;
        r = log_load(j, RECORDS, JOURNAL_DONE_LOG, &good);
        if (r < 0)
                return r;
        j->log_size = good;
        /* A record torn by a crash is cut off, so the next one is found. */
        if (lseek(j->log_fd, 0, SEEK_END) > good && j->ops.ftruncate(j->log_fd, good) == 0)
                j->report.n_temp_removed++;
        return 0;
}

/* records becomes records.old and a new records is begun. */
static int log_rotate(Journal *j)
{
        int r;

        if (j->ops.renameat(j->done_fd, RECORDS, j->done_fd, RECORDS_OLD) < 0)
                return -errno;
        if (j->old_fd >= 0)
                close(j->old_fd);
        j->old_fd = j->log_fd;
        j->log_fd = -1;
        j->log_size = 0;
        journal_done_rotated(j);
        r = log_open_current(j);
        return r;
}

int journal_done_log_append(Journal *j, JournalDone *rec, const char *text)
{
        char hdr[128];
        bool new_name = j->log_fd < 0;
        int n, r;

        if (j->log_fd < 0) {
                r = log_open_current(j);
                if (r < 0)
                        return r;
        }
        n = snprintf(hdr, sizeof(hdr), "%s %" PRId64 " %zu\n", rec->name, rec->time, rec->len);
        if (j->log_size > 0 &&
            (uint64_t)j->log_size + (size_t)n + rec->len + 1 > j->done_max_bytes) {
                r = log_rotate(j);
                if (r < 0)
                        return r;
                new_name = true;
        }
        r = journal_write_fd(j, j->log_fd, hdr, (size_t)n);
        if (r == 0)
                r = journal_write_fd(j, j->log_fd, text, rec->len);
        if (r == 0)
                r = journal_write_fd(j, j->log_fd, "\n", 1);
        if (r < 0) {
                /* Nothing half-written stays for the next record to follow. */
                (void)j->ops.ftruncate(j->log_fd, j->log_size);
                return r;
        }
        rec->where = JOURNAL_DONE_LOG;
        rec->off = j->log_size + n;
        j->log_size += (off_t)((size_t)n + rec->len + 1);
        /* The record is on the disk before the entry it stands for is
         * unlinked (journal_remove()): with delayed allocation the unlinks
         * could reach the disk first, and after a power loss a redelivery
         * would run the plan again. A new or rotated file's name too. */
        r = journal_sync(j, j->log_fd);
        if (r == 0 && new_name)
                r = journal_sync(j, j->done_fd);
        return r;
}

int journal_done_log_read(Journal *j, const JournalDone *rec, char **ret)
{
        int fd = rec->where == JOURNAL_DONE_LOG ? j->log_fd : j->old_fd;
        _cleanup_free_ char *text = NULL;
        size_t got = 0;

        if (fd < 0)
                return -ENOENT;
        text = malloc(rec->len + 1);
        if (!text)
                return -ENOMEM;
        while (got < rec->len) {
                ssize_t k = pread(fd, text + got, rec->len - got, rec->off + (off_t)got);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        return -ENOENT;
                got += (size_t)k;
        }
        text[rec->len] = '\0';
        *ret = TAKE_PTR(text);
        return 0;
}

void journal_done_log_drop_old(Journal *j)
{
        if (j->old_fd < 0)
                return;
        if (j->ops.unlinkat(j->done_fd, RECORDS_OLD, 0) == 0 || errno == ENOENT) {
                close(j->old_fd);
                j->old_fd = -1;
        }
}
