/* journal-log: the journal's write-ahead log, <storage>/journal.log
 * (docs/journal.md, "The write-ahead log").
 *
 * One file of a fixed size, made once by writing zeros and never resized,
 * so that an append's fdatasync() flushes data only and commits nothing on
 * a journaled file system:
 *
 *     [0, 512)          superblock copy 0   } generation g lives in copy g % 2;
 *     [4096, 4608)      superblock copy 1   } the valid one of higher g counts
 *     [8192, size)      the ring of records
 *
 * A superblock (the checkpoint) says where the live records start in the
 * ring, the sequence number of the first, and the chain seed, 32 random
 * bytes drawn at each checkpoint. A record is a header of
 * JOURNAL_LOG_HEADER bytes (magic "MAWL", format 1, kind, seq, payload
 * length, the entry's name, MAC), the payload, and zeros up to a multiple
 * of JOURNAL_LOG_SECTOR, so that no two records share a sector. All
 * integers are little-endian. The MAC of a record is journal_calls_mac()
 * under the log's key (journal_log_key(): the journal's seal with the kind
 * "journal.log", or a plain SHA-256 in a journal without seals), chained
 * on the previous record's MAC (the seed for the first) over the header's
 * first 48 bytes, a newline and the payload; a superblock's over its
 * first 80 bytes and a newline, chained on 32 zero bytes.
 *
 * A record that does not fit before the ring's end goes to the ring's
 * start. Reading takes records from the checkpoint while each is whole,
 * next in sequence and chained on the one before; the first that is not
 * ends the log. Each checkpoint draws a new seed, so no record of an
 * earlier lap or of an earlier checkpoint is ever taken.
 *
 * The protocol of the caller (the journal): open, which reads the records
 * after the checkpoint; make the mirror say what they say and make it
 * durable; journal_log_checkpoint(); then append. Appends are refused with
 * JOURNAL_LOG_CHECKPOINT until a checkpoint succeeds after the open, after
 * a failed append or checkpoint, and when the ring has no room left.
 *
 * No locking: the caller serializes every call on one log. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "journal/journal-calls.h"
#include "journal/journal.h"

#define JOURNAL_LOG_FILE "journal.log"
/* The file's size when it is made. */
#define JOURNAL_LOG_SIZE ((uint64_t)8 << 20)
/* Records are padded to this; the superblock copies are one each. */
#define JOURNAL_LOG_SECTOR 512
/* Where superblock copy 1 and the ring start. */
#define JOURNAL_LOG_SB1        4096
#define JOURNAL_LOG_RING_START 8192
#define JOURNAL_LOG_HEADER     80
/* The smallest file a test may ask for: the superblocks and 16 sectors. */
#define JOURNAL_LOG_SIZE_MIN (JOURNAL_LOG_RING_START + 16 * JOURNAL_LOG_SECTOR)

/* journal_log_append(): checkpoint first (after the open, after a failed
 * append or checkpoint, or when the ring has no room for the record). */
#define JOURNAL_LOG_CHECKPOINT 1

/* The operations the log goes through, with the system calls'
 * conventions (-1 and errno); a field left NULL is the system call. Tests
 * replace them to model a disk that loses what was not flushed. fsync is
 * the file's when it is made, and its directory's after the rename. */
typedef struct JournalLogOps {
        ssize_t (*pwritev)(int fd, const struct iovec *iov, int n, off_t off);
        ssize_t (*pread)(int fd, void *buf, size_t n, off_t off);
        int (*fdatasync)(int fd);
        int (*fsync)(int fd);
        /* The file's making: its temporary name, and the rename. */
        int (*openat)(int dirfd, const char *path, int flags, mode_t mode);
        int (*renameat)(int olddirfd, const char *oldpath, int newdirfd, const char *newpath);
        int (*unlinkat)(int dirfd, const char *path, int flags);
} JournalLogOps;

typedef struct JournalLogOptions {
        const JournalLogOps *ops; /* NULL: the system calls */
        /* Bytes of a file made by this open (a multiple of 4096, at least
         * JOURNAL_LOG_SIZE_MIN); 0: JOURNAL_LOG_SIZE. A file that exists
         * keeps the size its superblock gives. */
        uint64_t size;
} JournalLogOptions;

/* A record, as read back. data is valid only during the callback. */
typedef struct JournalLogRecord {
        uint64_t seq;
        unsigned kind;
        char name[JOURNAL_TS_MAX];
        const void *data;
        size_t len;
} JournalLogRecord;

/* Called for each record read at open, in order; a negative return stops
 * the open with that error. */
typedef int (*JournalLogFn)(void *userdata, const JournalLogRecord *rec);

typedef struct JournalLogReport {
        bool created; /* the file was made by this open */
        /* The file was there but neither superblock held (damaged, or
         * written under another key), or its size was not the one its
         * superblock gives: it was begun afresh, and what it held is
         * lost. */
        bool reset;
        uint64_t generation; /* the checkpoint read */
        unsigned n_records;  /* records read after it */
} JournalLogReport;

typedef struct JournalLog JournalLog;

/* Open (making it when missing) dirfd/journal.log, whose records are
 * sealed with key (borrowed; it must outlive the log), and pass each
 * record after its checkpoint to fn (may be NULL). Returns 0 with *ret, or
 * -errno (-EBADMSG: not a regular file of the agent's). */
int journal_log_open(int dirfd, const JournalCallsKey *key, const JournalLogOptions *opt,
                     JournalLogFn fn, void *userdata, JournalLog **ret);

/* Append a record of kind (1 to 65535) for entry name ("" for none; at
 * most 20 characters) with len bytes of data, and with sync fdatasync()
 * the file, which makes this record and every one before it durable.
 * Returns 0; JOURNAL_LOG_CHECKPOINT with nothing written; -EMSGSIZE when
 * len is above journal_log_max_payload(); or -errno, after which the log
 * wants a checkpoint (the record may or may not survive a power loss). */
int journal_log_append(JournalLog *log, unsigned kind, const char *name, const void *data,
                       size_t len, bool sync);

/* fdatasync() the records appended without sync, if any. Returns 0 or
 * -errno (the log then wants a checkpoint). */
int journal_log_sync(JournalLog *log);

/* The caller has made durable what every record so far says: write the
 * next superblock (the head as the start, a new seed), fdatasync() it; the
 * ring is empty then. Returns 0 or -errno, after which the log still
 * wants one (a superblock whose write failed may still reach the disk, so
 * nothing is appended before one succeeds). */
int journal_log_checkpoint(JournalLog *log);

/* Pass each record since the checkpoint to fn again, in order, as the
 * open did, reading them from the file; the records from the first whose
 * append failed on are left out (their calls failed, and took their
 * mirror writes back). The head does not move. Returns 0, or -errno (or
 * fn's negative return). */
int journal_log_read(JournalLog *log, JournalLogFn fn, void *userdata);

/* Whether a checkpoint is due: wanted (see above), or half the ring used. */
bool journal_log_want_checkpoint(const JournalLog *log);

/* The largest payload of a record: what makes a quarter of the ring. */
size_t journal_log_max_payload(const JournalLog *log);

/* The seq the next record appended gets. */
uint64_t journal_log_next_seq(const JournalLog *log);

/* Bytes of the ring used since the checkpoint, and the ring's size. */
uint64_t journal_log_used(const JournalLog *log);
uint64_t journal_log_ring(const JournalLog *log);

const JournalLogReport *journal_log_report(const JournalLog *log);

/* Accepts NULL. Closes the file; makes no checkpoint. */
void journal_log_free(JournalLog *log);

/* The little-endian 64-bit integers of the log's headers, for the
 * journal's record payloads too. */
void journal_le64_put(unsigned char *p, uint64_t v);
uint64_t journal_le64_get(const unsigned char *p);

/* The key of journal j's log (j NULL or a journal without seals: the
 * plain SHA-256), journal-seal.c. Free it with journal_calls_key_free().
 * Returns 0 with *ret, or -ENOMEM. */
int journal_log_key(const Journal *j, JournalCallsKey **ret);
