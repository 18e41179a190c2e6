/* Tests for the write-ahead log (journal-log.h): its format byte for byte
 * (the journal key's HMAC, chained on the checkpoint's seed), records read
 * back after a reopen and only those after the checkpoint, the ring's
 * wrap and its limits, the flushes it makes (fdatasync() only, one per
 * flushed append, one per checkpoint) on a file whose size never changes,
 * failures that fence the log until a checkpoint, and a power loss after
 * every write on a model of a disk that keeps any subset of the sectors
 * not flushed, torn or zeroed: what is read is always every record flushed
 * and perhaps some whole ones after them, never a torn record or one of an
 * earlier lap or checkpoint. */
#include "test-journal.h"
#include "test-journal-main.h"

#include <inttypes.h>
#include <sys/uio.h>

#include <openssl/sha.h>

#include "journal/journal-log.h"

#define TS "17153280001234"

/* --- the records a test appended, and the ones a log gives back ------------- */

typedef struct Rec {
        uint64_t seq;
        unsigned kind;
        char name[JOURNAL_TS_MAX];
        unsigned char *data;
        size_t len;
        uint64_t gen; /* the checkpoint it follows */
        bool flushed; /* a completed fdatasync() covered it */
} Rec;

typedef struct Recs {
        Rec *v;
        size_t n, cap;
} Recs;

static void recs_push(Recs *rs, uint64_t seq, unsigned kind, const char *name, const void *data,
                      size_t len, uint64_t gen)
{
        ck_assert_int_eq(grow_array(&rs->v, &rs->cap, rs->n, sizeof(Rec), 64), 0);
        rs->v[rs->n] = (Rec){.seq = seq, .kind = kind, .len = len, .gen = gen};
        snprintf(rs->v[rs->n].name, sizeof(rs->v[rs->n].name), "%s", name);
        rs->v[rs->n].data = malloc(len + 1);
        ck_assert_ptr_nonnull(rs->v[rs->n].data);
        if (len)
                memcpy(rs->v[rs->n].data, data, len);
        rs->n++;
}

static void recs_clear(Recs *rs)
{
        for (size_t i = 0; i < rs->n; i++)
                free(rs->v[i].data);
        free(rs->v);
        *rs = (Recs){0};
}

static int collect(void *userdata, const JournalLogRecord *rec)
{
        recs_push(userdata, rec->seq, rec->kind, rec->name, rec->data, rec->len, 0);
        return 0;
}

static bool rec_same(const Rec *a, const Rec *b)
{
        return a->seq == b->seq && a->kind == b->kind && streq(a->name, b->name) &&
               a->len == b->len && memcmp(a->data, b->data, a->len) == 0;
}

/* --- a model of the disk under the log ------------------------------------- */

/* What the file holds now (cur: every write, as the page cache has it)
 * and what a power loss keeps for sure (dur: as of the last flush). The
 * log's reads and writes go to *disk; writes to the live disk also reach
 * the real file, so that its size is what the log sees. */
typedef struct Disk {
        unsigned char *cur, *dur;
        size_t size;
        unsigned n_pwritev, n_fdatasync, n_fsync;
} Disk;

static Disk live, img;
static Disk *disk;
/* Called after each write to the live disk (the power-loss harness). */
static void (*after_write)(void);

static void disk_init(Disk *d, size_t size)
{
        free(d->cur);
        free(d->dur);
        *d = (Disk){.size = size, .cur = calloc(1, size), .dur = calloc(1, size)};
        ck_assert(d->cur && d->dur);
}

static void disk_free(Disk *d)
{
        free(d->cur);
        free(d->dur);
        *d = (Disk){0};
}

static ssize_t m_pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
        ssize_t total = 0;

        if (pwritev(fd, iov, n, off) < 0)
                return -1;
        for (int i = 0; i < n; i++) {
                ck_assert_uint_le((size_t)off + iov[i].iov_len, disk->size);
                memcpy(disk->cur + off, iov[i].iov_base, iov[i].iov_len);
                off += (off_t)iov[i].iov_len;
                total += (ssize_t)iov[i].iov_len;
        }
        disk->n_pwritev++;
        if (disk == &live && after_write)
                after_write();
        return total;
}

static ssize_t m_pread(int fd, void *buf, size_t n, off_t off)
{
        (void)fd;
        if ((size_t)off >= disk->size)
                return 0;
        if (n > disk->size - (size_t)off)
                n = disk->size - (size_t)off;
        memcpy(buf, disk->cur + off, n);
        return (ssize_t)n;
}

/* The harness's bookkeeping of a flush (set by the power-loss test). */
static void (*after_flush)(void);

static int m_fdatasync(int fd)
{
        (void)fd;
        memcpy(disk->dur, disk->cur, disk->size);
        disk->n_fdatasync++;
        if (disk == &live && after_flush)
                after_flush();
        return 0;
}

static int m_fsync(int fd)
{
        (void)fd;
        memcpy(disk->dur, disk->cur, disk->size);
        disk->n_fsync++;
        return 0;
}

static const JournalLogOps model_ops = {
        .pwritev = m_pwritev,
        .pread = m_pread,
        .fdatasync = m_fdatasync,
        .fsync = m_fsync,
};

/* --- helpers ---------------------------------------------------------------- */

static int storage_fd(void)
{
        int fd = open(storage, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        ck_assert_int_ge(fd, 0);
        return fd;
}

/* The key: the journal's in this storage (keyed), or the plain SHA-256. */
static JournalCallsKey *log_key(bool keyed)
{
        JournalCallsKey *k = NULL;
        Journal *j = keyed ? open_with(NULL) : NULL;

        ck_assert_int_eq(journal_log_key(j, &k), 0);
        ck_assert(journal_calls_key_sealed(k) == keyed);
        journal_free(j);
        return k;
}

static JournalLog *open_log(const JournalCallsKey *k, uint64_t size, const JournalLogOps *ops,
                            Recs *out)
{
        JournalLogOptions o = {.ops = ops, .size = size};
        JournalLog *log = NULL;
        int dfd = storage_fd();

        ck_assert_int_eq(journal_log_open(dfd, k, &o, out ? collect : NULL, out, &log), 0);
        close(dfd);
        return log;
}

/* Reopen: the log reads one record, of data (a string). */
static void assert_only(const JournalCallsKey *k, const char *data)
{
        Recs got = {0};
        JournalLog *log = open_log(k, 0, NULL, &got);

        ck_assert_uint_eq(got.n, 1);
        ck_assert_uint_eq(got.v[0].len, strlen(data));
        ck_assert_mem_eq(got.v[0].data, data, strlen(data));
        journal_log_free(log);
        recs_clear(&got);
}

static off_t log_file_size(void)
{
        _cleanup_free_ char *p = pathf(JOURNAL_LOG_FILE);
        struct stat st;

        ck_assert_int_eq(stat(p, &st), 0);
        return st.st_size;
}

static void read_at(off_t off, void *buf, size_t n)
{
        _cleanup_free_ char *p = pathf(JOURNAL_LOG_FILE);
        _cleanup_close_ int fd = open(p, O_RDONLY | O_CLOEXEC);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(pread(fd, buf, n, off), (ssize_t)n);
}

static uint64_t le(const unsigned char *p, int n)
{
        uint64_t v = 0;

        for (int i = n - 1; i >= 0; i--)
                v = v << 8 | p[i];
        return v;
}

/* HMAC-SHA256 under journal.key of what docs/journal.md says a log's MAC
 * covers: the domain, the kind journal.log, an empty name, prev, head, a
 * newline, data; computed here with OpenSSL's HMAC(). */
static void want_mac(const unsigned char prev[32], const void *head, size_t head_len,
                     const void *data, size_t len, unsigned char mac[32])
{
        static const char prefix[] = "muranoagent-seal-1\0journal.log\0";
        _cleanup_free_ char *kp = pathf("journal.key"), *k = NULL;
        unsigned mac_len = 0;
        size_t klen;
        StrBuf msg = STRBUF_INIT;

        ck_assert_int_eq(file_read_all(kp, 64, &k, &klen), 0);
        strbuf_append(&msg, prefix, sizeof(prefix));
        strbuf_append(&msg, (const char *)prev, 32);
        strbuf_append(&msg, head, head_len);
        strbuf_append(&msg, "\n", 1);
        strbuf_append(&msg, data, len);
        ck_assert_ptr_nonnull(HMAC(EVP_sha256(), k, (int)klen, (unsigned char *)msg.data, msg.len,
                                   mac, &mac_len));
        ck_assert_uint_eq(mac_len, 32);
        strbuf_free(&msg);
}

/* --- tests ------------------------------------------------------------------ */

START_TEST(test_format)
{
        static const unsigned char zero[32];
        JournalCallsKey *k = log_key(true);
        JournalLog *log = open_log(k, 0, NULL, NULL);
        unsigned char sb[512], h[512], mac[32];
        struct stat st;
        _cleanup_free_ char *p = pathf(JOURNAL_LOG_FILE);

        ck_assert(journal_log_report(log)->created);
        ck_assert(!journal_log_report(log)->reset);
        ck_assert_int_eq(stat(p, &st), 0);
        ck_assert_int_eq(st.st_size, (off_t)JOURNAL_LOG_SIZE);
        ck_assert_int_eq(st.st_mode & 0777, 0600);
        ck_assert_int_eq(journal_log_checkpoint(log), 0);
        ck_assert_int_eq(journal_log_append(log, 3, TS, "hello", 5, true), 0);

        /* Generation 2 is in copy 0: its fields and its MAC. */
        read_at(0, sb, sizeof(sb));
        ck_assert_mem_eq(sb, "MAWS", 4);
        ck_assert_uint_eq(le(sb + 4, 2), 1);
        ck_assert_uint_eq(le(sb + 8, 8), 2);
        ck_assert_uint_eq(le(sb + 16, 8), JOURNAL_LOG_SIZE);
        ck_assert_uint_eq(le(sb + 24, 8), JOURNAL_LOG_RING_START);
        ck_assert_uint_eq(le(sb + 32, 8), JOURNAL_LOG_RING_START);
        ck_assert_uint_eq(le(sb + 40, 8), 1);
        want_mac(zero, sb, 80, NULL, 0, mac);
        ck_assert_mem_eq(sb + 80, mac, 32);
        for (size_t i = 112; i < sizeof(sb); i++)
                ck_assert_uint_eq(sb[i], 0);

        /* The record, chained on the seed. */
        read_at(JOURNAL_LOG_RING_START, h, sizeof(h));
        ck_assert_mem_eq(h, "MAWL", 4);
        ck_assert_uint_eq(le(h + 4, 2), 1);
        ck_assert_uint_eq(le(h + 6, 2), 3);
        ck_assert_uint_eq(le(h + 8, 8), 1);
        ck_assert_uint_eq(le(h + 16, 4), 5);
        ck_assert_uint_eq(le(h + 20, 4), 0);
        ck_assert_str_eq((char *)h + 24, TS);
        ck_assert_mem_eq(h + 80, "hello", 5);
        want_mac(sb + 48, h, 48, "hello", 5, mac);
        ck_assert_mem_eq(h + 48, mac, 32);
        for (size_t i = 85; i < sizeof(h); i++)
                ck_assert_uint_eq(h[i], 0);
        journal_log_free(log);
        journal_calls_key_free(k);
}
END_TEST

START_TEST(test_reopen)
{
        JournalCallsKey *k = log_key(_i);
        JournalLog *log = open_log(k, 0, NULL, NULL);
        Recs want = {0}, got = {0};
        char name[JOURNAL_TS_MAX], data[600];

        ck_assert_int_eq(journal_log_append(log, 1, "", "x", 1, true), JOURNAL_LOG_CHECKPOINT);
        ck_assert_int_eq(journal_log_checkpoint(log), 0);
        for (unsigned i = 0; i < 6; i++) {
                snprintf(name, sizeof(name), "%u", 100 + i);
                memset(data, 'a' + (int)i, sizeof(data));
                /* 0, 100, ..., 500 bytes: one sector or two */
                ck_assert_int_eq(journal_log_append(log, i + 1, name, data, 100 * i, i % 2), 0);
                recs_push(&want, i + 1, i + 1, name, data, 100 * i, 0);
        }
        ck_assert_int_eq(journal_log_sync(log), 0);
        journal_log_free(log);

        log = open_log(k, 0, NULL, &got);
        ck_assert(!journal_log_report(log)->created);
        ck_assert_uint_eq(journal_log_report(log)->n_records, 6);
        ck_assert_uint_eq(got.n, want.n);
        for (size_t i = 0; i < got.n; i++)
                ck_assert(rec_same(&got.v[i], &want.v[i]));
        /* Nothing is appended before the checkpoint that fences them. */
        ck_assert_int_eq(journal_log_append(log, 1, "", "x", 1, true), JOURNAL_LOG_CHECKPOINT);
        ck_assert(journal_log_want_checkpoint(log));
        ck_assert_int_eq(journal_log_checkpoint(log), 0);
        ck_assert_int_eq(journal_log_append(log, 9, TS, "after", 5, true), 0);
        journal_log_free(log);
        recs_clear(&got);

        /* Only the record after the checkpoint, numbered on from there. */
        log = open_log(k, 0, NULL, &got);
        ck_assert_uint_eq(got.n, 1);
        ck_assert_uint_eq(got.v[0].seq, 7);
        ck_assert_str_eq(got.v[0].name, TS);
        ck_assert_mem_eq(got.v[0].data, "after", 5);
        journal_log_free(log);
        recs_clear(&got);
        recs_clear(&want);
        journal_calls_key_free(k);
}
END_TEST

START_TEST(test_limits)
{
        JournalCallsKey *k = log_key(false);
        JournalLog *log = open_log(k, JOURNAL_LOG_SIZE_MIN, NULL, NULL);
        size_t max = journal_log_max_payload(log);
        _cleanup_free_ char *big = calloc(1, max + 1);

        ck_assert_uint_eq(journal_log_ring(log), JOURNAL_LOG_SIZE_MIN - JOURNAL_LOG_RING_START);
        ck_assert_uint_eq(max + JOURNAL_LOG_HEADER, journal_log_ring(log) / 4);
        ck_assert_int_eq(journal_log_checkpoint(log), 0);
        ck_assert_int_eq(journal_log_append(log, 1, "", big, max + 1, true), -EMSGSIZE);
        ck_assert_int_eq(journal_log_append(log, 0, "", "x", 1, true), -EINVAL);
        ck_assert_int_eq(journal_log_append(log, 0x10000, "", "x", 1, true), -EINVAL);
        ck_assert_int_eq(journal_log_append(log, 1, "123456789012345678901", "x", 1, true),
                         -EINVAL);
        ck_assert_uint_eq(journal_log_used(log), 0);
        /* Four records of a quarter each fill the ring; the second half
         * wants a checkpoint, and the fifth waits for it. */
        for (int i = 0; i < 4; i++) {
                ck_assert(journal_log_want_checkpoint(log) == (i >= 2));
                ck_assert_int_eq(journal_log_append(log, 1, TS, big, max, true), 0);
        }
        ck_assert_uint_eq(journal_log_used(log), journal_log_ring(log));
        ck_assert_int_eq(journal_log_append(log, 1, "", "", 0, true), JOURNAL_LOG_CHECKPOINT);
        ck_assert_int_eq(journal_log_checkpoint(log), 0);
        ck_assert_uint_eq(journal_log_used(log), 0);
        ck_assert_int_eq(journal_log_append(log, 1, "", "", 0, true), 0);
        ck_assert_uint_eq(journal_log_used(log), JOURNAL_LOG_SECTOR);
        ck_assert_int_eq(log_file_size(), (off_t)JOURNAL_LOG_SIZE_MIN);
        journal_log_free(log);
        journal_calls_key_free(k);
}
END_TEST

/* Counting what the log does to the disk: fdatasync() only, one per
 * flushed append, none for the others until journal_log_sync(), one write
 * and one flush per checkpoint; and the file never changes size. */
START_TEST(test_flushes)
{
        JournalCallsKey *k = log_key(true);
        JournalLog *log;
        off_t size;

        disk = &live;
        disk_init(&live, JOURNAL_LOG_SIZE);
        log = open_log(k, 0, &model_ops, NULL);
        size = log_file_size();
        ck_assert_int_eq(size, (off_t)JOURNAL_LOG_SIZE);
        /* The file was made with fsync()s (file and directory, both
         * through the ops); from here on, fdatasync() only. */
        ck_assert_uint_eq(live.n_fsync, 2);
        live = (Disk){.cur = live.cur, .dur = live.dur, .size = live.size};

        ck_assert_int_eq(journal_log_checkpoint(log), 0);
        ck_assert_uint_eq(live.n_pwritev, 1);
        ck_assert_uint_eq(live.n_fdatasync, 1);
        for (int i = 0; i < 10; i++)
                ck_assert_int_eq(journal_log_append(log, 1, TS, "record", 6, true), 0);
        ck_assert_uint_eq(live.n_pwritev, 11);
        ck_assert_uint_eq(live.n_fdatasync, 11);
        for (int i = 0; i < 5; i++)
                ck_assert_int_eq(journal_log_append(log, 2, TS, "end", 3, false), 0);
        ck_assert_uint_eq(live.n_pwritev, 16);
        ck_assert_uint_eq(live.n_fdatasync, 11);
        ck_assert_int_eq(journal_log_sync(log), 0);
        ck_assert_int_eq(journal_log_sync(log), 0);
        ck_assert_uint_eq(live.n_fdatasync, 12);
        ck_assert_int_eq(journal_log_checkpoint(log), 0);
        ck_assert_uint_eq(live.n_pwritev, 17);
        ck_assert_uint_eq(live.n_fdatasync, 13);
        ck_assert_uint_eq(live.n_fsync, 0);
        ck_assert_int_eq(log_file_size(), size);
        journal_log_free(log);
        disk_free(&live);
        journal_calls_key_free(k);
}
END_TEST

/* Failures: each fences the log until a checkpoint succeeds. */
static int fail_next; /* 1: pwritev, 2: fdatasync */

static ssize_t f_pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
        if (fail_next == 1) {
                fail_next = 0;
                errno = EIO;
                return -1;
        }
        return pwritev(fd, iov, n, off);
}

static int f_fdatasync(int fd)
{
        if (fail_next == 2) {
                fail_next = 0;
                errno = EIO;
                return -1;
        }
        return fdatasync(fd);
}

static const JournalLogOps fail_ops = {.pwritev = f_pwritev, .fdatasync = f_fdatasync};

START_TEST(test_failures)
{
        JournalCallsKey *k = log_key(true);
        JournalLog *log = open_log(k, 0, &fail_ops, NULL);

        ck_assert_int_eq(journal_log_checkpoint(log), 0);
        ck_assert_int_eq(journal_log_append(log, 1, TS, "one", 3, true), 0);
        for (int what = 1; what <= 2; what++) {
                fail_next = what;
                ck_assert_int_eq(journal_log_append(log, 1, TS, "failed", 6, true), -EIO);
                ck_assert(journal_log_want_checkpoint(log));
                ck_assert_int_eq(journal_log_append(log, 1, TS, "no", 2, true),
                                 JOURNAL_LOG_CHECKPOINT);
                fail_next = what;
                ck_assert_int_eq(journal_log_checkpoint(log), -EIO);
                ck_assert_int_eq(journal_log_append(log, 1, TS, "no", 2, true),
                                 JOURNAL_LOG_CHECKPOINT);
                ck_assert_int_eq(journal_log_checkpoint(log), 0);
                ck_assert(!journal_log_want_checkpoint(log));
        }
        fail_next = 2;
        ck_assert_int_eq(journal_log_append(log, 1, TS, "unsynced", 8, false), 0);
        ck_assert_int_eq(journal_log_sync(log), -EIO);
        ck_assert_int_eq(journal_log_append(log, 1, TS, "no", 2, true), JOURNAL_LOG_CHECKPOINT);
        ck_assert_int_eq(journal_log_checkpoint(log), 0);
        ck_assert_int_eq(journal_log_append(log, 1, TS, "two", 3, true), 0);
        journal_log_free(log);

        /* The records before each checkpoint are gone, the failed ones
         * with them. */
        assert_only(k, "two");
        journal_calls_key_free(k);
}
END_TEST

/* journal_log_read(): the records since the checkpoint again, in order,
 * with the head (and the chain) left where they were; none from the first
 * whose append failed on, though its bytes reached the file (only its
 * fdatasync() failed). */
START_TEST(test_read)
{
        JournalCallsKey *k = log_key(true);
        JournalLog *log = open_log(k, 0, &fail_ops, NULL);
        Recs got = {0};

        ck_assert_int_eq(journal_log_checkpoint(log), 0);
        ck_assert_int_eq(journal_log_append(log, 1, TS, "one", 3, true), 0);
        ck_assert_int_eq(journal_log_append(log, 2, TS, "two", 3, false), 0);
        ck_assert_int_eq(journal_log_read(log, collect, &got), 0);
        ck_assert_uint_eq(got.n, 2);
        ck_assert_uint_eq(got.v[1].kind, 2);
        ck_assert_mem_eq(got.v[1].data, "two", 3);
        recs_clear(&got);
        ck_assert_int_eq(journal_log_append(log, 1, TS, "three", 5, false), 0);
        fail_next = 2;
        ck_assert_int_eq(journal_log_append(log, 1, TS, "failed", 6, true), -EIO);
        ck_assert_int_eq(journal_log_read(log, collect, &got), 0);
        ck_assert_uint_eq(got.n, 3);
        ck_assert_mem_eq(got.v[2].data, "three", 5);
        recs_clear(&got);
        ck_assert_int_eq(journal_log_checkpoint(log), 0);
        ck_assert_int_eq(journal_log_read(log, collect, &got), 0);
        ck_assert_uint_eq(got.n, 0);
        ck_assert_int_eq(journal_log_append(log, 1, TS, "four", 4, true), 0);
        journal_log_free(log);
        assert_only(k, "four");
        journal_calls_key_free(k);
}
END_TEST

/* A file neither of whose superblocks holds (damaged, or of another key,
 * or the wrong size) is begun afresh and reported; one not the agent's
 * regular file is refused. */
START_TEST(test_reset)
{
        JournalCallsKey *plain = log_key(false), *k = log_key(true);
        JournalLog *log = open_log(k, 0, NULL, NULL);
        _cleanup_free_ char *p = pathf(JOURNAL_LOG_FILE);
        Recs got = {0};
        int fd, dfd;

        ck_assert_int_eq(journal_log_checkpoint(log), 0);
        ck_assert_int_eq(journal_log_append(log, 1, TS, "one", 3, true), 0);
        journal_log_free(log);

        /* Under the plain checksum, the keyed file holds nothing. */
        log = open_log(plain, 0, NULL, &got);
        ck_assert(journal_log_report(log)->reset);
        ck_assert_uint_eq(got.n, 0);
        ck_assert_int_eq(log_file_size(), (off_t)JOURNAL_LOG_SIZE);
        journal_log_free(log);

        /* Both superblocks damaged. */
        log = open_log(k, 0, NULL, NULL);
        ck_assert(journal_log_report(log)->reset);
        ck_assert_int_eq(journal_log_checkpoint(log), 0);
        journal_log_free(log);
        fd = open(p, O_RDWR | O_CLOEXEC);
        for (off_t off = 100; off < 2 * JOURNAL_LOG_SB1; off += JOURNAL_LOG_SB1) {
                unsigned char b;

                ck_assert_int_eq(pread(fd, &b, 1, off), 1);
                b ^= 0xff;
                ck_assert_int_eq(pwrite(fd, &b, 1, off), 1);
        }
        close(fd);
        log = open_log(k, 0, NULL, NULL);
        ck_assert(journal_log_report(log)->reset);
        journal_log_free(log);

        /* Cut short. */
        ck_assert_int_eq(truncate(p, 1 << 20), 0);
        log = open_log(k, 0, NULL, NULL);
        ck_assert(journal_log_report(log)->reset);
        ck_assert_int_eq(log_file_size(), (off_t)JOURNAL_LOG_SIZE);
        journal_log_free(log);

        /* Not a regular file. */
        ck_assert_int_eq(unlink(p), 0);
        ck_assert_int_eq(symlink("/dev/null", p), 0);
        dfd = storage_fd();
        ck_assert_int_eq(journal_log_open(dfd, k, NULL, NULL, NULL, &log), -EBADMSG);
        close(dfd);
        recs_clear(&got);
        journal_calls_key_free(k);
        journal_calls_key_free(plain);
}
END_TEST

/* The history after a power loss repeats itself: records B and C appended
 * after a checkpoint, not flushed; the power loss loses B and keeps C
 * whole; after the reopen and its checkpoint, a record the same as B is
 * appended and flushed. C, which chained on the lost B, must not be read
 * after it: the checkpoint drew a new seed. */
START_TEST(test_same_history)
{
        JournalCallsKey *k = log_key(true);
        JournalLog *log = open_log(k, 0, NULL, NULL);
        _cleanup_free_ char *p = pathf(JOURNAL_LOG_FILE);
        static const char zeros[JOURNAL_LOG_SECTOR];
        Recs got = {0};
        int fd;

        ck_assert_int_eq(journal_log_checkpoint(log), 0);
        ck_assert_int_eq(journal_log_append(log, 1, TS, "B", 1, false), 0);
        ck_assert_int_eq(journal_log_append(log, 2, TS, "C", 1, false), 0);
        journal_log_free(log);
        fd = open(p, O_WRONLY | O_CLOEXEC);
        ck_assert_int_eq(pwrite(fd, zeros, sizeof(zeros), JOURNAL_LOG_RING_START),
                         (ssize_t)sizeof(zeros));
        close(fd);

        log = open_log(k, 0, NULL, &got);
        ck_assert_uint_eq(got.n, 0);
        ck_assert_int_eq(journal_log_checkpoint(log), 0);
        ck_assert_int_eq(journal_log_append(log, 1, TS, "B", 1, true), 0);
        journal_log_free(log);

        assert_only(k, "B");
        recs_clear(&got);
        journal_calls_key_free(k);
}
END_TEST

/* A journal without seals authenticates nothing (docs/journal.md): a
 * record planted with the right checksum is read. But only as the next
 * one: with another sequence number, or at the ring's start when it
 * would have fit at the head, it is not. */
static void plant(off_t at, uint64_t seq, const unsigned char prev[32])
{
        static const char prefix[] = "muranoagent-seal-1\0journal.log\0";
        _cleanup_free_ char *p = pathf(JOURNAL_LOG_FILE);
        unsigned char h[JOURNAL_LOG_SECTOR] = "MAWL\1\0\7\0";
        StrBuf msg = STRBUF_INIT;
        int fd;

        for (int i = 0; i < 8; i++)
                h[8 + i] = (unsigned char)(seq >> (8 * i));
        h[16] = 7;
        memcpy(h + 24, TS, sizeof(TS));
        memcpy(h + 80, "planted", 7);
        strbuf_append(&msg, prefix, sizeof(prefix));
        strbuf_append(&msg, (const char *)prev, 32);
        strbuf_append(&msg, (const char *)h, 48);
        strbuf_append(&msg, "\n", 1);
        strbuf_append(&msg, "planted", 7);
        SHA256((unsigned char *)msg.data, msg.len, h + 48);
        strbuf_free(&msg);
        fd = open(p, O_WRONLY | O_CLOEXEC);
        ck_assert_int_eq(pwrite(fd, h, sizeof(h), at), (ssize_t)sizeof(h));
        close(fd);
}

/* The checkpoint in force: its start, first seq and seed. */
static void checkpoint_read(uint64_t *start, uint64_t *seq, unsigned char seed[32])
{
        unsigned char sb[2][JOURNAL_LOG_SECTOR];
        int i;

        read_at(0, sb[0], JOURNAL_LOG_SECTOR);
        read_at(JOURNAL_LOG_SB1, sb[1], JOURNAL_LOG_SECTOR);
        i = le(sb[1] + 8, 8) > le(sb[0] + 8, 8);
        *start = le(sb[i] + 32, 8);
        *seq = le(sb[i] + 40, 8);
        memcpy(seed, sb[i] + 48, 32);
}

static size_t count_records(const JournalCallsKey *k)
{
        Recs got = {0};
        JournalLog *log = open_log(k, 0, NULL, &got);
        size_t n = got.n;

        if (n)
                ck_assert_mem_eq(got.v[0].data, "planted", 7);
        journal_log_free(log);
        recs_clear(&got);
        return n;
}

START_TEST(test_planted)
{
        JournalCallsKey *k = log_key(false);
        JournalLog *log = open_log(k, 0, NULL, NULL);
        unsigned char seed[32];
        uint64_t start, seq;

        ck_assert_int_eq(journal_log_checkpoint(log), 0);
        journal_log_free(log);
        checkpoint_read(&start, &seq, seed);
        ck_assert_uint_eq(start, JOURNAL_LOG_RING_START);
        plant((off_t)start, seq, seed);
        ck_assert_uint_eq(count_records(k), 1);
        plant((off_t)start, seq + 1, seed);
        ck_assert_uint_eq(count_records(k), 0);

        /* A checkpoint in the middle of the ring. */
        log = open_log(k, 0, NULL, NULL);
        ck_assert_int_eq(journal_log_checkpoint(log), 0);
        ck_assert_int_eq(journal_log_append(log, 1, TS, "x", 1, true), 0);
        ck_assert_int_eq(journal_log_checkpoint(log), 0);
        journal_log_free(log);
        checkpoint_read(&start, &seq, seed);
        ck_assert_uint_eq(start, JOURNAL_LOG_RING_START + JOURNAL_LOG_SECTOR);
        plant(JOURNAL_LOG_RING_START, seq, seed);
        ck_assert_uint_eq(count_records(k), 0);
        plant((off_t)start, seq, seed);
        ck_assert_uint_eq(count_records(k), 1);
        journal_calls_key_free(k);
}
END_TEST

/* --- a power loss after every write ---------------------------------------- */

#define PL_SIZE 20480 /* a ring of 24 sectors: laps wrap every few records */

static struct {
        JournalCallsKey *key;
        Recs recs;        /* every record appended, with its checkpoint */
        uint64_t gen;     /* the checkpoint in force (durable) */
        uint64_t pending; /* a checkpoint written, not yet flushed; 0: none */
        uint64_t rng;
        unsigned images;         /* power losses played */
        unsigned n_kept;         /* ... that kept records not flushed */
        unsigned n_power_losses; /* the workload went on after */
        uint64_t sectors;        /* of the ring appended to */
} pl;

static void pl_flushed(void)
{
        for (size_t i = 0; i < pl.recs.n; i++)
                pl.recs.v[i].flushed = true;
        if (pl.pending) {
                pl.gen = pl.pending;
                pl.pending = 0;
        }
}

/* Open the log on img (the disk after a power loss) and check what it
 * reads: the checkpoint in force or the one being written, every record
 * flushed after it, and after them only whole records appended after
 * them, in order. */
static size_t pl_check(uint64_t *ret_gen)
{
        JournalLogOptions o = {.ops = &model_ops};
        Recs got = {0};
        JournalLog *log = NULL;
        Disk *was = disk;
        unsigned writes = img.n_pwritev;
        uint64_t gen;
        size_t k = 0, n_flushed = 0;
        int dfd = storage_fd();

        disk = &img;
        ck_assert_int_eq(journal_log_open(dfd, pl.key, &o, collect, &got, &log), 0);
        close(dfd);
        disk = was;
        gen = journal_log_report(log)->generation;
        ck_assert_msg(!journal_log_report(log)->reset, "a power loss lost both superblocks");
        ck_assert_uint_eq(img.n_pwritev, writes);
        ck_assert_msg(gen == pl.gen || (pl.pending && gen == pl.pending),
                      "checkpoint %" PRIu64 " read, %" PRIu64 " in force", gen, pl.gen);
        for (size_t i = 0; i < pl.recs.n; i++) {
                const Rec *r = &pl.recs.v[i];

                if (r->gen != gen)
                        continue;
                if (k < got.n) {
                        ck_assert_msg(rec_same(&got.v[k], r), "record %zu read is not seq %" PRIu64,
                                      k, r->seq);
                        k++;
                }
                n_flushed += r->flushed;
        }
        ck_assert_uint_eq(k, got.n); /* nothing read that was not appended */
        ck_assert_uint_ge(got.n, n_flushed);
        pl.images++;
        pl.n_kept += got.n > n_flushed;
        journal_log_free(log);
        recs_clear(&got);
        if (ret_gen)
                *ret_gen = gen;
        return k;
}

/* Sector s of img: 0 old, 1 new, 2 torn at a byte, 3 zeros, 4 garbage. */
static void pl_sector(size_t s, int how)
{
        size_t off = s * JOURNAL_LOG_SECTOR, cut;
        unsigned char *p = img.cur + off;

        memcpy(p, live.dur + off, JOURNAL_LOG_SECTOR);
        if (how == 1)
                memcpy(p, live.cur + off, JOURNAL_LOG_SECTOR);
        else if (how == 2) {
                cut = 1 + test_rng(&pl.rng) % (JOURNAL_LOG_SECTOR - 1);
                memcpy(p, live.cur + off, cut);
        } else if (how == 3)
                memset(p, 0, JOURNAL_LOG_SECTOR);
        else if (how == 4)
                for (size_t i = 0; i < JOURNAL_LOG_SECTOR; i++)
                        p[i] = (unsigned char)test_rng(&pl.rng);
}

/* After each write: every subset of the sectors not flushed kept (all
 * subsets when there are at most 10, else every cut in order and 256 at
 * random), and 32 where each is kept, lost, torn inside, zeroed or
 * garbled. */
static void pl_after_write(void)
{
        size_t dirty[PL_SIZE / JOURNAL_LOG_SECTOR], n = 0;

        for (size_t s = 0; s < live.size / JOURNAL_LOG_SECTOR; s++)
                if (memcmp(live.cur + s * JOURNAL_LOG_SECTOR, live.dur + s * JOURNAL_LOG_SECTOR,
                           JOURNAL_LOG_SECTOR) != 0)
                        dirty[n++] = s;
        memcpy(img.cur, live.dur, live.size);
        if (n <= 10) {
                for (unsigned mask = 0; mask < 1u << n; mask++) {
                        for (size_t i = 0; i < n; i++)
                                pl_sector(dirty[i], mask >> i & 1);
                        (void)pl_check(NULL);
                }
        } else {
                for (size_t cut = 0; cut <= n; cut++) {
                        for (size_t i = 0; i < n; i++)
                                pl_sector(dirty[i], i < cut);
                        (void)pl_check(NULL);
                }
                for (int t = 0; t < 256; t++) {
                        for (size_t i = 0; i < n; i++)
                                pl_sector(dirty[i], (int)(test_rng(&pl.rng) % 2));
                        (void)pl_check(NULL);
                }
        }
        for (int t = 0; t < 32; t++) {
                for (size_t i = 0; i < n; i++)
                        pl_sector(dirty[i], (int)(test_rng(&pl.rng) % 5));
                (void)pl_check(NULL);
        }
}

static void pl_checkpoint(JournalLog *log)
{
        pl.pending = pl.gen + 1;
        ck_assert_int_eq(journal_log_checkpoint(log), 0);
        ck_assert_uint_eq(pl.pending, 0); /* its flush made it the one in force */
}

/* Reopen the log: after a kill (the page cache keeps every write: every
 * record since the checkpoint is read), or after a power loss that keeps
 * a random part of what was not flushed (what the log reads becomes the
 * truth, and the workload goes on from there, writing records of the
 * same numbers over the places of the lost ones). Then a checkpoint. */
static JournalLog *pl_reopen(JournalLog *log, bool power_loss)
{
        Recs got = {0};
        size_t first = pl.recs.n, keep;
        uint64_t gen = pl.gen;

        journal_log_free(log);
        keep = pl.recs.n;
        if (power_loss) {
                size_t n_sectors = live.size / JOURNAL_LOG_SECTOR;

                memcpy(img.cur, live.dur, live.size);
                for (size_t s = 0; s < n_sectors; s++)
                        if (memcmp(live.cur + s * JOURNAL_LOG_SECTOR,
                                   live.dur + s * JOURNAL_LOG_SECTOR, JOURNAL_LOG_SECTOR) != 0)
                                pl_sector(s, (int)(test_rng(&pl.rng) % 5));
                keep = pl_check(&gen);
                memcpy(live.cur, img.cur, live.size);
                memcpy(live.dur, img.cur, live.size);
        }
        log = open_log(pl.key, PL_SIZE, &model_ops, &got);
        ck_assert_uint_eq(journal_log_report(log)->generation, gen);
        while (first > 0 && pl.recs.v[first - 1].gen == pl.gen)
                first--;
        if (power_loss) {
                /* The records of the checkpoint read, up to the last read. */
                first = 0;
                while (first < pl.recs.n && pl.recs.v[first].gen != gen)
                        first++;
                keep += first;
                for (size_t i = keep; i < pl.recs.n; i++)
                        free(pl.recs.v[i].data);
                pl.recs.n = keep;
                pl.gen = gen;
                pl.n_power_losses++;
        }
        ck_assert_uint_eq(got.n, pl.recs.n - first);
        for (size_t i = 0; i < got.n; i++)
                ck_assert(rec_same(&got.v[i], &pl.recs.v[first + i]));
        recs_clear(&got);
        pl_checkpoint(log);
        return log;
}

/* A workload of appends (flushed and not, of 0 to 4 sectors), flushes and
 * checkpoints that laps the ring many times, with a power loss played
 * after each of its writes, and a clean reopen now and then. */
START_TEST(test_power_loss)
{
        /* JOURNAL_LOG_STEPS: a shorter workload (tests/run.sh, under
         * valgrind); the figures checked at the end scale with it. */
        const char *env = getenv("JOURNAL_LOG_STEPS");
        int steps = env && atoi(env) >= 100 ? atoi(env) : 400;
        unsigned char data[4096];
        JournalLog *log;
        size_t max;

        memset(&pl, 0, sizeof(pl));
        pl.rng = 0x9e3779b97f4a7c15u + (uint64_t)_i;
        pl.key = log_key(_i);
        disk = &live;
        disk_init(&live, PL_SIZE);
        disk_init(&img, PL_SIZE);
        log = open_log(pl.key, PL_SIZE, &model_ops, NULL);
        pl.gen = journal_log_report(log)->generation;
        max = journal_log_max_payload(log);
        after_write = pl_after_write;
        after_flush = pl_flushed;
        pl_checkpoint(log);
        for (int step = 0; step < steps; step++) {
                unsigned roll = (unsigned)(test_rng(&pl.rng) % 100);
                size_t len = (size_t)(test_rng(&pl.rng) % (roll % 3 ? 200 : max + 1));
                char name[JOURNAL_TS_MAX];
                int r;

                for (size_t i = 0; i < len; i++)
                        data[i] = (unsigned char)test_rng(&pl.rng);
                snprintf(name, sizeof(name), "%d", 1000 + step);
                if (roll < 85) {
                        uint64_t seq = pl.recs.n ? pl.recs.v[pl.recs.n - 1].seq + 1 : 1;

                        recs_push(&pl.recs, seq, 1 + roll % 7, name, data, len, pl.gen);
                        r = journal_log_append(log, 1 + roll % 7, name, data, len, roll < 55);
                        if (r == JOURNAL_LOG_CHECKPOINT) {
                                free(pl.recs.v[--pl.recs.n].data);
                                pl_checkpoint(log);
                                recs_push(&pl.recs, seq, 1 + roll % 7, name, data, len, pl.gen);
                                r = journal_log_append(log, 1 + roll % 7, name, data, len,
                                                       roll < 55);
                        }
                        ck_assert_int_eq(r, 0);
                        pl.sectors += (JOURNAL_LOG_HEADER + len + JOURNAL_LOG_SECTOR - 1) /
                                      JOURNAL_LOG_SECTOR;
                } else if (roll < 92) {
                        ck_assert_int_eq(journal_log_sync(log), 0);
                } else if (roll < 97 || journal_log_want_checkpoint(log)) {
                        pl_checkpoint(log);
                } else {
                        log = pl_reopen(log, roll % 2);
                }
        }
        after_write = NULL;
        after_flush = NULL;
        ck_assert_int_eq(log_file_size(), (off_t)PL_SIZE);
        /* The workload lapped the ring, and some power losses kept records
         * that were never flushed. */
        ck_assert_uint_gt(pl.sectors, (size_t)steps / 20 * (PL_SIZE - JOURNAL_LOG_RING_START) /
                                              JOURNAL_LOG_SECTOR);
        ck_assert_uint_ge(pl.n_power_losses, (unsigned)steps / 100);
        ck_assert_uint_gt(pl.n_kept, 0);
        ck_assert_uint_gt(pl.images, (size_t)steps * 25);
        journal_log_free(log);
        recs_clear(&pl.recs);
        disk_free(&live);
        disk_free(&img);
        journal_calls_key_free(pl.key);
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_test(tc, test_format);
        tcase_add_loop_test(tc, test_reopen, 0, 2);
        tcase_add_test(tc, test_limits);
        tcase_add_test(tc, test_flushes);
        tcase_add_test(tc, test_failures);
        tcase_add_test(tc, test_read);
        tcase_add_test(tc, test_reset);
        tcase_add_test(tc, test_same_history);
        tcase_add_test(tc, test_planted);
        tcase_add_loop_test(tc, test_power_loss, 0, 2);
}

int main(void)
{
        return journal_test_main("journal-log", add_tests);
}
