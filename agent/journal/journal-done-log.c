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

#include <openssl/crypto.h>

#include "journal/journal-internal.h"
#include "util/fileio.h"
#include "util/hexid.h"
#include "util/strbuf.h"

/* The seal of record rec, whose text is text. */
static void record_seal(const Journal *j, const JournalDone *rec, const char *text,
                        unsigned char mac[JOURNAL_SEAL_LEN])
{
        char t[24];
        JournalSealer s;

        snprintf(t, sizeof(t), "%" PRId64, rec->time);
        journal_seal_begin(j, &s, "done", rec->name);
        journal_seal_update(&s, t, strlen(t) + 1);
        journal_seal_update(&s, text, rec->len);
        journal_seal_end(&s, mac);
}

static bool hex_decode(const char *hex, unsigned char *out, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                unsigned v;

                if (sscanf(hex + 2 * i, "%2x", &v) != 1)
                        return false;
                out[i] = (unsigned char)v;
        }
        return true;
}

/* Parse the record at text[*off..len): 1 and *ret set (off and len of its
 * text, its seal when it has one), 0 at a clean end, -EBADMSG for a torn
 * or damaged record. */
static int record_parse(const char *text, size_t len, size_t *off, JournalDone *ret)
{
        const char *p = text + *off, *end = text + len, *nl;
        char hdr[200], seal[2 * JOURNAL_SEAL_LEN + 1] = "";
        unsigned long long t, n;
        char name[65];
        int used = 0, used_seal = 0;

        if (p == end)
                return 0;
        nl = memchr(p, '\n', (size_t)(end - p) < sizeof(hdr) ? (size_t)(end - p) : sizeof(hdr));
        if (!nl)
                return -EBADMSG;
        memcpy(hdr, p, (size_t)(nl - p));
        hdr[nl - p] = '\0';
        if (sscanf(hdr, "%64[0-9a-f] %llu %llu%n", name, &t, &n, &used) != 3)
                return -EBADMSG;
        if ((size_t)used != (size_t)(nl - p) &&
            (sscanf(hdr + used, " %64[0-9a-f]%n", seal, &used_seal) != 1 ||
             strlen(seal) != 2 * JOURNAL_SEAL_LEN))
                return -EBADMSG;
        used += used_seal;
        if ((size_t)used != (size_t)(nl - p) || strlen(name) != 64 || t > INT64_MAX ||
            n > (size_t)(end - nl - 1) || (size_t)(end - nl - 1) - n < 1 || nl[1 + n] != '\n')
                return -EBADMSG;
        memcpy(ret->name, name, sizeof(name));
        ret->sealed = seal[0] && hex_decode(seal, ret->seal, JOURNAL_SEAL_LEN);
        ret->time = (int64_t)t;
        ret->off = (off_t)(nl + 1 - text);
        ret->len = (size_t)n;
        *off = (size_t)(nl + 1 - text) + n + 1;
        return 1;
}

/* Whether record rec (text its text) may be loaded: with seals, only
 * with its own, or at the open that made the key, one of the version
 * before seals (which is then given one, and *reseal set). */
static bool record_sound(Journal *j, JournalDone *rec, const char *text, bool *reseal)
{
        unsigned char mac[JOURNAL_SEAL_LEN];

        if (!j->sealed)
                return true;
        record_seal(j, rec, text, mac);
        if (rec->sealed)
                return CRYPTO_memcmp(mac, rec->seal, sizeof(mac)) == 0;
        if (!j->seal_fresh)
                return false;
        memcpy(rec->seal, mac, sizeof(mac));
        rec->sealed = true;
        *reseal = true;
        return true;
}

/* Load the records of file name (fd open on it) into the index, marked
 * where; returns the length of its whole records in *ret_good. */
static int log_load(Journal *j, const char *name, int where, off_t *ret_good, bool *reseal)
{
        _cleanup_free_ char *text = NULL;
        size_t len, off = 0;
        JournalDone rec;
        int r;

        r = file_read_regular_at(j->done_fd, name, JOURNAL_MAX_RESULT_FILE, &text, &len);
        if (r < 0)
                return r;
        while ((r = record_parse(text, len, &off, &rec)) == 1) {
                if (!record_sound(j, &rec, text + rec.off, reseal)) {
                        /* Written again without it, so that it is
                         * reported once. */
                        j->report.n_forged_records++;
                        *reseal = true;
                        continue;
                }
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
        j->log_fd = j->ops.openat(j->done_fd, JOURNAL_DONE_RECORDS,
                                  O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
        return j->log_fd < 0 ? -errno : 0;
}

/* The header of record rec. */
static int record_header(const Journal *j, const JournalDone *rec, char hdr[200])
{
        char seal[2 * JOURNAL_SEAL_LEN + 2] = "";

        if (j->sealed && rec->sealed) {
                seal[0] = ' ';
                hex_encode(rec->seal, JOURNAL_SEAL_LEN, seal + 1);
        }
        return snprintf(hdr, 200, "%s %" PRId64 " %zu%s\n", rec->name, rec->time, rec->len, seal);
}

/* At an open that found records of the version before seals (the key
 * was made then) or records refused for their seal: both files become
 * one new records, holding every record loaded, sealed, and records.old
 * goes. Returns 0 or -errno. */
static int log_reseal(Journal *j)
{
        _cleanup_strbuf_ StrBuf out = STRBUF_INIT;
        int r = 0;

        for (size_t i = 0; i < j->n_done && r == 0; i++) {
                JournalDone *rec = &j->done[i];
                _cleanup_free_ char *text = NULL;
                char hdr[200];
                int n;

                if (rec->where == JOURNAL_DONE_DIR_RECORD)
                        continue;
                r = journal_done_log_read(j, rec, &text);
                if (r < 0)
                        return r;
                n = record_header(j, rec, hdr);
                r = strbuf_append(&out, hdr, (size_t)n);
                if (r == 0)
                        rec->off = (off_t)out.len;
                if (r == 0)
                        r = strbuf_append(&out, text, rec->len);
                if (r == 0)
                        r = strbuf_append(&out, "\n", 1);
        }
        if (r < 0)
                return r;
        r = journal_write_atomic(j, j->done_fd, "." JOURNAL_DONE_RECORDS ".tmp",
                                 JOURNAL_DONE_RECORDS, out.data, out.len, false, NULL);
        if (r < 0)
                return r;
        for (size_t i = 0; i < j->n_done; i++)
                if (j->done[i].where != JOURNAL_DONE_DIR_RECORD)
                        j->done[i].where = JOURNAL_DONE_LOG;
        close(j->log_fd);
        j->log_fd = -1;
        if (j->old_fd >= 0) {
                close(j->old_fd);
                j->old_fd = -1;
                (void)j->ops.unlinkat(j->done_fd, JOURNAL_DONE_RECORDS_OLD, 0);
        }
        j->log_size = (off_t)out.len;
        return log_open_current(j);
}

int journal_done_log_open(Journal *j)
{
        bool reseal = false;
        off_t good;
        int r;

        j->old_fd = j->ops.openat(j->done_fd, JOURNAL_DONE_RECORDS_OLD,
                                  O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0);
        if (j->old_fd < 0 && errno != ENOENT)
                return -errno;
        if (j->old_fd >= 0) {
                r = log_load(j, JOURNAL_DONE_RECORDS_OLD, JOURNAL_DONE_OLD, &good, &reseal);
                if (r < 0)
                        return r;
        }
        r = log_open_current(j);
        if (r < 0)
                return r;
        r = log_load(j, JOURNAL_DONE_RECORDS, JOURNAL_DONE_LOG, &good, &reseal);
        if (r < 0)
                return r;
        j->log_size = good;
        /* A record torn by a crash is cut off, so the next one is found. */
        if (lseek(j->log_fd, 0, SEEK_END) > good && j->ops.ftruncate(j->log_fd, good) == 0)
                j->report.n_temp_removed++;
        if (reseal) {
                r = log_reseal(j);
                if (r < 0)
                        return r;
                if (j->seal_fresh)
                        j->report.n_sealed++;
        }
        return 0;
}

/* records becomes records.old and a new records is begun. */
static int log_rotate(Journal *j)
{
        int r;

        if (j->ops.renameat(j->done_fd, JOURNAL_DONE_RECORDS, j->done_fd,
                            JOURNAL_DONE_RECORDS_OLD) < 0)
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

int journal_done_log_append(Journal *j, JournalDone *rec, const char *text, bool sync)
{
        char hdr[200];
        bool new_name = j->log_fd < 0;
        int n, r;

        if (j->log_fd < 0) {
                r = log_open_current(j);
                if (r < 0)
                        return r;
        }
        if (j->sealed) {
                record_seal(j, rec, text, rec->seal);
                rec->sealed = true;
        }
        n = record_header(j, rec, hdr);
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
         * would run the plan again. A new or rotated file's name too.
         * Without sync, the write-ahead log holds it until its checkpoint
         * makes the file durable. */
        if (!sync)
                return 0;
        r = journal_sync(j, j->log_fd);
        if (r == 0 && new_name)
                r = journal_sync(j, j->done_fd);
        return r;
}

int journal_done_log_read(Journal *j, const JournalDone *rec, char **ret)
{
        int fd = rec->where == JOURNAL_DONE_LOG ? j->log_fd : j->old_fd;
        _cleanup_free_ char *text = NULL;
        ssize_t got;

        if (fd < 0)
                return -ENOENT;
        text = malloc(rec->len + 1);
        if (!text)
                return -ENOMEM;
        got = file_pread_full(fd, text, rec->len, rec->off);
        if (got < 0)
                return (int)got;
        if ((size_t)got < rec->len)
                return -ENOENT;
        text[rec->len] = '\0';
        if (j->sealed) {
                unsigned char mac[JOURNAL_SEAL_LEN];

                /* Checked at open, and again: the file may have been
                 * changed since. */
                record_seal(j, rec, text, mac);
                if (!rec->sealed || CRYPTO_memcmp(mac, rec->seal, sizeof(mac)) != 0)
                        return JOURNAL_FORGED;
        }
        *ret = TAKE_PTR(text);
        return 0;
}

int journal_done_log_mend(Journal *j, const JournalDone *rec, const char *text)
{
        const char *file = rec->where == JOURNAL_DONE_LOG   ? JOURNAL_DONE_RECORDS
                           : rec->where == JOURNAL_DONE_OLD ? JOURNAL_DONE_RECORDS_OLD
                                                            : NULL;
        _cleanup_free_ char *want = NULL, *got = NULL;
        _cleanup_close_ int fd = -1;
        char hdr[200];
        size_t n, len;
        ssize_t got_len;

        if (!file)
                return 0; /* a record of the format before: a file of its own */
        n = (size_t)record_header(j, rec, hdr);
        if (rec->off < (off_t)n)
                return -EINVAL;
        len = n + rec->len + 1;
        want = malloc(len);
        got = malloc(len);
        if (!want || !got)
                return -ENOMEM;
        memcpy(want, hdr, n);
        memcpy(want + n, text, rec->len);
        want[len - 1] = '\n';
        /* Not log_fd: a pwrite() through O_APPEND appends. */
        fd = j->ops.openat(j->done_fd, file, O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        got_len = file_pread_full(fd, got, len, rec->off - (off_t)n);
        if (got_len < 0)
                return (int)got_len;
        if ((size_t)got_len == len && memcmp(got, want, len) == 0)
                return 0;
        return journal_pwrite_all(&j->ops, fd, want, len, rec->off - (off_t)n);
}

void journal_done_log_drop_old(Journal *j)
{
        if (j->old_fd < 0)
                return;
        if (j->ops.unlinkat(j->done_fd, JOURNAL_DONE_RECORDS_OLD, 0) == 0 || errno == ENOENT) {
                close(j->old_fd);
                j->old_fd = -1;
        }
}
