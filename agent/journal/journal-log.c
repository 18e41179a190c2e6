/* The journal's write-ahead log: a preallocated file, a ring of sealed
 * records after two superblock copies, read back at open up to the first
 * record that is not whole (journal-log.h; docs/journal.md, "The
 * write-ahead log"). */
#include "journal/journal-log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "util/macro.h"

#define LOG_TMP ".journal.log.tmp"
#define MAC_LEN JOURNAL_CALLS_MAC_LEN

/* Record header: what its MAC covers, then the MAC. */
#define REC_MAGIC  "MAWL"
#define REC_NAME   24
#define REC_MACED  48
#define SB_MAGIC   "MAWS"
#define SB_MACED   80
#define LOG_FORMAT 1

_Static_assert(REC_MACED + MAC_LEN == JOURNAL_LOG_HEADER, "the header's layout");
_Static_assert(JOURNAL_TS_MAX <= REC_NAME, "an entry name fits the header");

/* A checkpoint, as a superblock holds it. */
typedef struct LogCheckpoint {
        uint64_t generation;
        uint64_t size;  /* the file's */
        uint64_t start; /* of the live records, in the ring */
        uint64_t seq;   /* of the first of them */
        unsigned char seed[MAC_LEN];
} LogCheckpoint;

struct JournalLog {
        JournalLogOps ops;
        const JournalCallsKey *key;
        int fd;
        uint64_t size; /* the file's; the ring is [JOURNAL_LOG_RING_START, size) */
        LogCheckpoint cp;
        /* The head: where the next record goes if it fits, its seq, the
         * MAC it chains on, and the ring's bytes used since the
         * checkpoint (records, and the ends of laps they skipped). */
        uint64_t head, seq, used;
        unsigned char prev[MAC_LEN];
        bool unsynced;   /* records appended since the last fdatasync() */
        bool checkpoint; /* appends wait for a checkpoint */
        /* The seq of the first record since the checkpoint whose append
         * failed (UINT64_MAX: none): journal_log_read() stops before it. */
        uint64_t fence;
        unsigned char *buf; /* the record being read at open, then freed */
        size_t buf_size;
        JournalLogReport report;
};

static ssize_t sys_pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
        return pwritev(fd, iov, n, off);
}

static int sys_openat(int dirfd, const char *path, int flags, mode_t mode)
{
        return openat(dirfd, path, flags, mode);
}

static const JournalLogOps sys_ops = {
        .pwritev = sys_pwritev,
        .pread = pread,
        .fdatasync = fdatasync,
        .fsync = fsync,
        .openat = sys_openat,
        .renameat = renameat,
        .unlinkat = unlinkat,
};

static void put_le(unsigned char *p, uint64_t v, int n)
{
        for (int i = 0; i < n; i++)
                p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int n)
{
        uint64_t v = 0;

        for (int i = n - 1; i >= 0; i--)
                v = v << 8 | p[i];
        return v;
}

void journal_le64_put(unsigned char *p, uint64_t v)
{
        put_le(p, v, 8);
}

uint64_t journal_le64_get(const unsigned char *p)
{
        return get_le(p, 8);
}

static uint64_t ring_size(const JournalLog *log)
{
        return log->size - JOURNAL_LOG_RING_START;
}

/* A record of len payload bytes takes this much of the ring. */
static uint64_t record_size(size_t len)
{
        uint64_t n = JOURNAL_LOG_HEADER + (uint64_t)len;

        return (n + JOURNAL_LOG_SECTOR - 1) / JOURNAL_LOG_SECTOR * JOURNAL_LOG_SECTOR;
}

size_t journal_log_max_payload(const JournalLog *log)
{
        return (size_t)(ring_size(log) / 4 / JOURNAL_LOG_SECTOR * JOURNAL_LOG_SECTOR) -
               JOURNAL_LOG_HEADER;
}

/* All of iov to fd at off, going on after short writes and EINTR.
 * Returns 0 or -errno (-EIO for a write of nothing). iov is consumed. */
static int write_all(JournalLog *log, struct iovec *iov, int n, off_t off)
{
        while (n > 0) {
                ssize_t k = log->ops.pwritev(log->fd, iov, n, off);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return k < 0 ? -errno : -EIO;
                off += k;
                while (n > 0 && (size_t)k >= iov->iov_len) {
                        k -= (ssize_t)iov->iov_len;
                        iov++, n--;
                }
                if (n > 0) {
                        iov->iov_base = (char *)iov->iov_base + k;
                        iov->iov_len -= (size_t)k;
                }
        }
        return 0;
}

/* Exactly n bytes of fd at off: 0, -EIO when the file ends before, or
 * -errno. */
static int read_all(const JournalLog *log, void *buf, size_t n, off_t off)
{
        size_t got = 0;

        while (got < n) {
                ssize_t k = log->ops.pread(log->fd, (char *)buf + got, n - got, off + (off_t)got);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return k < 0 ? -errno : -EIO;
                got += (size_t)k;
        }
        return 0;
}

static int datasync(JournalLog *log)
{
        return log->ops.fdatasync(log->fd) < 0 ? -errno : 0;
}

/* --- superblocks ----------------------------------------------------------- */

static void sb_encode(const JournalLog *log, const LogCheckpoint *cp,
                      unsigned char sb[JOURNAL_LOG_SECTOR])
{
        static const unsigned char zero[MAC_LEN];

        memset(sb, 0, JOURNAL_LOG_SECTOR);
        memcpy(sb, SB_MAGIC, 4);
        put_le(sb + 4, LOG_FORMAT, 2);
        put_le(sb + 8, cp->generation, 8);
        put_le(sb + 16, cp->size, 8);
        put_le(sb + 24, JOURNAL_LOG_RING_START, 8);
        put_le(sb + 32, cp->start, 8);
        put_le(sb + 40, cp->seq, 8);
        memcpy(sb + 48, cp->seed, MAC_LEN);
        journal_calls_mac(log->key, zero, sb, SB_MACED, NULL, 0, sb + SB_MACED);
}

/* Whether sb is a whole superblock of a file of size bytes, decoded. */
static bool sb_decode(const JournalLog *log, const unsigned char sb[JOURNAL_LOG_SECTOR],
                      uint64_t size, LogCheckpoint *cp)
{
        static const unsigned char zero[MAC_LEN];
        unsigned char mac[MAC_LEN];
        bool ok;

        if (memcmp(sb, SB_MAGIC, 4) != 0 || get_le(sb + 4, 2) != LOG_FORMAT)
                return false;
        journal_calls_mac(log->key, zero, sb, SB_MACED, NULL, 0, mac);
        if (CRYPTO_memcmp(mac, sb + SB_MACED, MAC_LEN) != 0)
                return false;
        cp->generation = get_le(sb + 8, 8);
        cp->size = get_le(sb + 16, 8);
        cp->start = get_le(sb + 32, 8);
        cp->seq = get_le(sb + 40, 8);
        memcpy(cp->seed, sb + 48, MAC_LEN);
        ok = cp->size == size && get_le(sb + 24, 8) == JOURNAL_LOG_RING_START &&
             cp->start >= JOURNAL_LOG_RING_START && cp->start <= size &&
             cp->start % JOURNAL_LOG_SECTOR == 0;
        return ok;
}

/* Write checkpoint cp into its copy and fdatasync() it. */
static int sb_write(JournalLog *log, const LogCheckpoint *cp)
{
        unsigned char sb[JOURNAL_LOG_SECTOR];
        struct iovec iov = {sb, sizeof(sb)};
        int r;

        sb_encode(log, cp, sb);
        r = write_all(log, &iov, 1, cp->generation % 2 ? JOURNAL_LOG_SB1 : 0);
        return r < 0 ? r : datasync(log);
}

/* A checkpoint at the head, with a new seed. */
static int checkpoint_new(JournalLog *log, uint64_t generation, LogCheckpoint *cp)
{
        ssize_t n = getrandom(cp->seed, MAC_LEN, 0);

        if (n != MAC_LEN)
                return n < 0 ? -errno : -EIO;
        cp->generation = generation;
        cp->size = log->size;
        /* A lap that ended exactly at the ring's end goes on at its start. */
        cp->start = log->head == log->size ? JOURNAL_LOG_RING_START : log->head;
        cp->seq = log->seq;
        return 0;
}

/* The checkpoint in force: the valid copy of the higher generation.
 * Returns 1 with *cp, 0 when neither holds, or -errno. */
static int sb_load(JournalLog *log, LogCheckpoint *cp)
{
        unsigned char sb[JOURNAL_LOG_SECTOR];
        LogCheckpoint c;
        int found = 0, r;

        for (int i = 0; i < 2; i++) {
                r = read_all(log, sb, sizeof(sb), i ? JOURNAL_LOG_SB1 : 0);
                if (r < 0)
                        return r;
                if (sb_decode(log, sb, log->size, &c) && c.generation % 2 == (uint64_t)i &&
                    (!found || c.generation > cp->generation)) {
                        *cp = c;
                        found = 1;
                }
        }
        return found;
}

/* Take checkpoint cp as the log's state: the head at its start, nothing
 * used. */
static void head_at(JournalLog *log, const LogCheckpoint *cp)
{
        log->cp = *cp;
        log->head = cp->start;
        log->seq = cp->seq;
        log->used = 0;
        log->fence = UINT64_MAX;
        memcpy(log->prev, cp->seed, MAC_LEN);
}

/* --- records --------------------------------------------------------------- */

static void record_header(const JournalLog *log, unsigned kind, const char *name, const void *data,
                          size_t len, unsigned char h[JOURNAL_LOG_HEADER])
{
        memset(h, 0, JOURNAL_LOG_HEADER);
        memcpy(h, REC_MAGIC, 4);
        put_le(h + 4, LOG_FORMAT, 2);
        put_le(h + 6, kind, 2);
        put_le(h + 8, log->seq, 8);
        put_le(h + 16, len, 4);
        memcpy(h + 24, name, strlen(name));
        journal_calls_mac(log->key, log->prev, h, REC_MACED, data, len, h + REC_MACED);
}

/* log->buf of at least n bytes. Returns 0 or -ENOMEM. */
static int buf_room(JournalLog *log, size_t n)
{
        unsigned char *b;

        if (n <= log->buf_size)
                return 0;
        b = realloc(log->buf, n);
        if (!b)
                return -ENOMEM;
        log->buf = b;
        log->buf_size = n;
        return 0;
}

/* The record at off when it is the next one (its seq) and whole (its MAC,
 * chained on log->prev) and lies within [off, limit): its size in the
 * ring, with *rec filled (its data in log->buf); 0 when not; or -errno. */
static int64_t record_read(JournalLog *log, uint64_t off, uint64_t limit, JournalLogRecord *rec)
{
        unsigned char mac[MAC_LEN], *h;
        uint64_t len, size;
        int r;

        if (off + JOURNAL_LOG_SECTOR > limit)
                return 0;
        r = buf_room(log, JOURNAL_LOG_SECTOR);
        if (r < 0)
                return r;
        r = read_all(log, log->buf, JOURNAL_LOG_SECTOR, (off_t)off);
        if (r < 0)
                return r;
        h = log->buf;
        len = get_le(h + 16, 4);
        if (memcmp(h, REC_MAGIC, 4) != 0 || get_le(h + 4, 2) != LOG_FORMAT ||
            get_le(h + 6, 2) == 0 || get_le(h + 8, 8) != log->seq ||
            len > journal_log_max_payload(log) || get_le(h + 20, 4) != 0 ||
            memchr(h + 24, '\0', REC_NAME) == NULL || strlen((char *)h + 24) >= JOURNAL_TS_MAX)
                return 0;
        size = record_size(len);
        if (off + size > limit)
                return 0;
        if (size > JOURNAL_LOG_SECTOR) {
                r = buf_room(log, (size_t)size);
                if (r < 0)
                        return r;
                h = log->buf;
                r = read_all(log, log->buf + JOURNAL_LOG_SECTOR, size - JOURNAL_LOG_SECTOR,
                             (off_t)(off + JOURNAL_LOG_SECTOR));
                if (r < 0)
                        return r;
        }
        journal_calls_mac(log->key, log->prev, h, REC_MACED, h + JOURNAL_LOG_HEADER, len, mac);
        if (CRYPTO_memcmp(mac, h + REC_MACED, MAC_LEN) != 0)
                return 0;
        *rec = (JournalLogRecord){
                .seq = log->seq,
                .kind = (unsigned)get_le(h + 6, 2),
                .data = h + JOURNAL_LOG_HEADER,
                .len = (size_t)len,
        };
        memcpy(rec->name, h + 24, strlen((char *)h + 24) + 1);
        return (int64_t)size;
}

/* Read the records after the checkpoint, through fn, and leave the head
 * after the last. */
static int scan(JournalLog *log, JournalLogFn fn, void *userdata)
{
        for (;;) {
                JournalLogRecord rec;
                uint64_t at = log->head, skip = 0;
                int64_t size = record_read(log, at, log->size, &rec);

                if (size == 0 && at != JOURNAL_LOG_RING_START) {
                        /* Written at the ring's start, when it would not
                         * have fit here. */
                        skip = log->size - at;
                        at = JOURNAL_LOG_RING_START;
                        size = record_read(log, at, log->size, &rec);
                        if (size > 0 && (uint64_t)size <= skip)
                                size = 0;
                }
                if (size < 0)
                        return (int)size;
                if (size == 0 || log->used + skip + (uint64_t)size > ring_size(log))
                        return 0;
                if (fn) {
                        int r = fn(userdata, &rec);
                        if (r < 0)
                                return r;
                }
                memcpy(log->prev, log->buf + REC_MACED, MAC_LEN);
                log->seq++;
                log->head = at + (uint64_t)size;
                log->used += skip + (uint64_t)size;
                log->report.n_records++;
        }
}

/* --- the file -------------------------------------------------------------- */

/* Make dirfd/journal.log of size bytes, zeros written and a first
 * checkpoint in it, durably: a temporary file, fsync, rename, fsync of
 * dirfd. Leaves log->fd open on it. Returns 0 or -errno. */
static int log_create(JournalLog *log, int dirfd, uint64_t size)
{
        static const unsigned char zeros[1 << 16];
        LogCheckpoint cp;
        int r;

        (void)log->ops.unlinkat(dirfd, LOG_TMP, 0);
        log->fd = log->ops.openat(dirfd, LOG_TMP,
                                  O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (log->fd < 0)
                return -errno;
        log->size = size;
        for (uint64_t off = 0; off < size; off += sizeof(zeros)) {
                struct iovec iov = {(void *)zeros,
                                    size - off < sizeof(zeros) ? size - off : sizeof(zeros)};
                r = write_all(log, &iov, 1, (off_t)off);
                if (r < 0)
                        goto fail;
        }
        log->head = JOURNAL_LOG_RING_START;
        log->seq = 1;
        r = checkpoint_new(log, 1, &cp);
        if (r < 0)
                goto fail;
        r = sb_write(log, &cp);
        if (r < 0)
                goto fail;
        if (log->ops.fsync(log->fd) < 0 ||
            log->ops.renameat(dirfd, LOG_TMP, dirfd, JOURNAL_LOG_FILE) < 0 ||
            log->ops.fsync(dirfd) < 0) {
                r = -errno;
                goto fail;
        }
        head_at(log, &cp);
        log->report.created = true;
        log->report.generation = cp.generation;
        return 0;
fail:
        (void)log->ops.unlinkat(dirfd, LOG_TMP, 0);
        close(log->fd);
        log->fd = -1;
        return r;
}

/* Open the existing file. Returns 0, -ENOENT, or -errno. */
static int log_load(JournalLog *log, int dirfd, JournalLogFn fn, void *userdata)
{
        LogCheckpoint cp;
        struct stat st;
        int r;

        log->fd = log->ops.openat(dirfd, JOURNAL_LOG_FILE,
                                  O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0);
        if (log->fd < 0)
                return errno == ELOOP ? -EBADMSG : -errno;
        if (fstat(log->fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode) || st.st_uid != geteuid())
                return -EBADMSG;
        if ((st.st_mode & 077) != 0)
                (void)fchmod(log->fd, 0600);
        log->size = (uint64_t)st.st_size;
        if (log->size < JOURNAL_LOG_SIZE_MIN || log->size % 4096 != 0)
                return -ENOENT; /* made afresh */
        r = sb_load(log, &cp);
        if (r <= 0)
                return r < 0 ? r : -ENOENT;
        head_at(log, &cp);
        log->report.generation = cp.generation;
        return scan(log, fn, userdata);
}

int journal_log_open(int dirfd, const JournalCallsKey *key, const JournalLogOptions *opt,
                     JournalLogFn fn, void *userdata, JournalLog **ret)
{
        JournalLog *log = calloc(1, sizeof(*log));
        uint64_t size = opt && opt->size ? opt->size : JOURNAL_LOG_SIZE;
        const JournalLogOps *ops = opt && opt->ops ? opt->ops : &sys_ops;
        int r;

        if (!log)
                return -ENOMEM;
        if (size < JOURNAL_LOG_SIZE_MIN || size % 4096 != 0) {
                free(log);
                return -EINVAL;
        }
        log->key = key;
        log->fd = -1;
        log->ops = (JournalLogOps){
                .pwritev = ops->pwritev ? ops->pwritev : sys_ops.pwritev,
                .pread = ops->pread ? ops->pread : sys_ops.pread,
                .fdatasync = ops->fdatasync ? ops->fdatasync : sys_ops.fdatasync,
                .fsync = ops->fsync ? ops->fsync : sys_ops.fsync,
                .openat = ops->openat ? ops->openat : sys_ops.openat,
                .renameat = ops->renameat ? ops->renameat : sys_ops.renameat,
                .unlinkat = ops->unlinkat ? ops->unlinkat : sys_ops.unlinkat,
        };
        r = log_load(log, dirfd, fn, userdata);
        if (r == -ENOENT) {
                /* Missing, or of a size or under a key whose records
                 * cannot be read: begun afresh. */
                log->report = (JournalLogReport){.reset = log->fd >= 0};
                if (log->fd >= 0)
                        close(log->fd);
                log->fd = -1;
                r = log_create(log, dirfd, size);
        }
        /* Up to a quarter of the ring: not kept for the log's life. */
        free(log->buf);
        log->buf = NULL;
        log->buf_size = 0;
        if (r < 0) {
                journal_log_free(log);
                return r;
        }
        /* The records read may be followed by whole records that were not:
         * nothing is appended before the checkpoint that fences them off. */
        log->checkpoint = true;
        *ret = log;
        return 0;
}

int journal_log_append(JournalLog *log, unsigned kind, const char *name, const void *data,
                       size_t len, bool sync)
{
        static const unsigned char pad[JOURNAL_LOG_SECTOR];
        unsigned char h[JOURNAL_LOG_HEADER];
        uint64_t size, at = log->head, skip = 0, seq = log->seq;
        struct iovec iov[3];
        int r;

        if (kind == 0 || kind > 0xffff || strlen(name) >= JOURNAL_TS_MAX)
                return -EINVAL;
        if (len > journal_log_max_payload(log))
                return -EMSGSIZE;
        size = record_size(len);
        if (at + size > log->size) {
                skip = log->size - at;
                at = JOURNAL_LOG_RING_START;
        }
        if (log->checkpoint || log->used + skip + size > ring_size(log))
                return JOURNAL_LOG_CHECKPOINT;
        record_header(log, kind, name, data, len, h);
        iov[0] = (struct iovec){h, sizeof(h)};
        iov[1] = (struct iovec){(void *)data, len};
        iov[2] = (struct iovec){(void *)pad, size - JOURNAL_LOG_HEADER - len};
        /* The head moves on whatever happens: a record that failed is
         * fenced off by the next checkpoint, never written over. */
        memcpy(log->prev, h + REC_MACED, MAC_LEN);
        log->seq++;
        log->head = at + size;
        log->used += skip + size;
        log->unsynced = true;
        r = write_all(log, iov, 3, (off_t)at);
        if (r == 0 && sync)
                r = journal_log_sync(log);
        if (r < 0) {
                log->checkpoint = true;
                if (seq < log->fence)
                        log->fence = seq;
        }
        return r;
}

int journal_log_sync(JournalLog *log)
{
        int r;

        if (!log->unsynced)
                return 0;
        r = datasync(log);
        if (r < 0) {
                log->checkpoint = true;
                return r;
        }
        log->unsynced = false;
        return 0;
}

int journal_log_checkpoint(JournalLog *log)
{
        LogCheckpoint cp;
        int r;

        r = checkpoint_new(log, log->cp.generation + 1, &cp);
        if (r == 0)
                r = sb_write(log, &cp);
        if (r < 0) {
                log->checkpoint = true;
                return r;
        }
        head_at(log, &cp);
        log->unsynced = false;
        log->checkpoint = false;
        log->report.generation = cp.generation;
        return 0;
}

/* journal_log_read()'s filter: the records before the fence. */
typedef struct LogLive {
        JournalLogFn fn;
        void *userdata;
        uint64_t end;
} LogLive;

static int live_only(void *userdata, const JournalLogRecord *rec)
{
        const LogLive *l = userdata;

        return rec->seq < l->end ? l->fn(l->userdata, rec) : 0;
}

int journal_log_read(JournalLog *log, JournalLogFn fn, void *userdata)
{
        uint64_t head = log->head, seq = log->seq, used = log->used;
        unsigned n_records = log->report.n_records;
        LogLive l = {fn, userdata, log->fence < log->seq ? log->fence : log->seq};
        unsigned char prev[MAC_LEN];
        int r;

        /* scan() from the checkpoint, as at open, then the head put back. */
        memcpy(prev, log->prev, MAC_LEN);
        log->head = log->cp.start;
        log->seq = log->cp.seq;
        log->used = 0;
        memcpy(log->prev, log->cp.seed, MAC_LEN);
        r = scan(log, live_only, &l);
        log->head = head;
        log->seq = seq;
        log->used = used;
        log->report.n_records = n_records;
        memcpy(log->prev, prev, MAC_LEN);
        free(log->buf);
        log->buf = NULL;
        log->buf_size = 0;
        return r;
}

bool journal_log_want_checkpoint(const JournalLog *log)
{
        return log->checkpoint || 2 * log->used >= ring_size(log);
}

uint64_t journal_log_next_seq(const JournalLog *log)
{
        return log->seq;
}

uint64_t journal_log_used(const JournalLog *log)
{
        return log->used;
}

uint64_t journal_log_ring(const JournalLog *log)
{
        return ring_size(log);
}

const JournalLogReport *journal_log_report(const JournalLog *log)
{
        return &log->report;
}

void journal_log_free(JournalLog *log)
{
        if (!log)
                return;
        if (log->fd >= 0)
                close(log->fd);
        free(log->buf);
        free(log);
}
