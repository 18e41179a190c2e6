/* Inside the journal: the object, and the helpers its files share. Every
 * helper here expects the caller to hold j->io; those that change the
 * index take j->lock themselves, or say that the caller holds it. */
#pragma once

#include <dirent.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "journal/journal.h"

#define JOURNAL_PLAN_FILE    "plan.json"
#define JOURNAL_RESULT_FILE  "result.json"
#define JOURNAL_RUNNING_FILE "running"
#define JOURNAL_STAMP_FILE   "stamp"
#define JOURNAL_DONE_DIR     "done"
#define JOURNAL_RESERVE_FILE "reserve"
/* In done/: the done records, and the file they are rotated to. */
#define JOURNAL_DONE_RECORDS     "records"
#define JOURNAL_DONE_RECORDS_OLD "records.old"
/* Temporary names start with '.', and no entry name does, so a leftover
 * is never taken for a plan (by us or by the reference). */
#define JOURNAL_PLAN_TMP   ".plan.json.tmp"
#define JOURNAL_RESULT_TMP ".result.json.tmp"
#define JOURNAL_STAMP_TMP  ".stamp.tmp"
/* The result's slot: an empty file journal_put_plan() makes in a sealed
 * journal, whose name is durable with plan.json's; journal_put_result()
 * writes the result into it, fsyncs it and renames it to result.json
 * (journal_write_slot()). */
#define JOURNAL_RESULT_SLOT ".result"
/* journal-seal.c: the key, in <storage> beside plans/ (hide_agent masks
 * both), the attribute that carries a file's seal, and where refused
 * files go (no entry name: neither agent takes it for one). */
#define JOURNAL_KEY_FILE   "journal.key"
#define JOURNAL_SEAL_XATTR "user.muranoagent.seal"
#define JOURNAL_SEAL_LEN   32
/* A file's seal in its attribute (journal-seal.c): a 96-bit nonce and a
 * 128-bit GMAC tag; one of JOURNAL_SEAL_LEN is an HMAC, as written before. */
#define JOURNAL_FILE_NONCE_LEN 12
#define JOURNAL_FILE_TAG_LEN   16
#define JOURNAL_FILE_SEAL_LEN  (JOURNAL_FILE_NONCE_LEN + JOURNAL_FILE_TAG_LEN)
#define JOURNAL_QUARANTINE_DIR "quarantine"
/* Room for OpenSSL's SHA256_CTX (112 bytes), which this header does not
 * include. */
#define JOURNAL_SHA_STATE 128
/* Room for OpenSSL's AES_KEY (244 bytes), likewise. */
#define JOURNAL_AES_STATE 256

/* JournalIndexEntry.stamp when the entry took no Stamp, and when what it
 * took is not known (an entry found by a rebuild of the index, or one
 * whose plan.json could not be read at open). */
#define JOURNAL_STAMP_NONE    (-1)
#define JOURNAL_STAMP_UNKNOWN INT64_MAX

/* The largest result.json read back. */
#define JOURNAL_MAX_RESULT_FILE ((size_t)1 << 30)

/* Where a done record is: done/<name>/result.json (the format before the
 * records files, still read), or in done/records or done/records.old. */
enum {
        JOURNAL_DONE_DIR_RECORD,
        JOURNAL_DONE_LOG,
        JOURNAL_DONE_OLD,
};

/* A done record: its result's text, recorded at time. */
typedef struct JournalDone {
        char name[65]; /* 64 hex digits of SHA-256 */
        int64_t time;  /* nanoseconds since the epoch */
        int where;     /* JOURNAL_DONE_* */
        off_t off;     /* in a records file: where the text starts */
        size_t len;    /* and its length */
        /* The record's seal, checked again when its text is read (a
         * record of the format before has none: sealed false). */
        bool sealed;
        unsigned char seal[JOURNAL_SEAL_LEN];
} JournalDone;

/* One seal being computed (journal-seal.c). */
typedef struct JournalSealer {
        _Alignas(16) unsigned char inner[JOURNAL_SHA_STATE];
        const unsigned char *outer;
} JournalSealer;

/* One file's seal being computed (journal-seal.c): OpenSSL's GCM state,
 * and the seal's nonce. */
typedef struct JournalFileSealer {
        void *gcm;
        unsigned char nonce[JOURNAL_FILE_NONCE_LEN];
} JournalFileSealer;

/* What the journal knows of one entry directory. */
typedef struct JournalIndexEntry {
        char ts[JOURNAL_TS_MAX];
        bool plan;    /* plan.json exists */
        bool running; /* running exists */
        bool result;  /* result.json exists */
        bool begun;   /* journal_begin() marked it in this process: RUNNING, not INTERRUPTED */
        bool slot;    /* a regular .result is there (JOURNAL_RESULT_SLOT), empty */
        /* The Stamp its plan.json holds and that journal_begin() took for
         * it (JOURNAL_STAMP_NONE, JOURNAL_STAMP_UNKNOWN): while the entry
         * keeps plan.json and `running`, it is the copy of that stamp
         * that survives a power loss (journal-stamp.c). */
        int64_t stamp;
        /* id_known: id_name is the done-record name of result.json's
         * SourceID, or "" when it has none that records are kept for.
         * Filled on first need, cleared whenever result.json changes. */
        bool id_known;
        char id_name[65];
        bool ours; /* journal_put_plan() of this Journal made it */
        /* A read found this file's seal missing or wrong (JOURNAL_FORGED):
         * journal_remove() moves it to quarantine/. */
        bool forged_plan, forged_result;
        /* The result as journal_put_result() stored it, while it is kept
         * in memory (Journal.kept_bytes); NULL otherwise. Changed under
         * lock, read by copying under it. */
        JournalResult *kept;
} JournalIndexEntry;

struct Journal {
        /* io: held by each call that changes or reads the files, for the
         * whole call, fsyncs included, so that the disk is changed by one
         * call at a time. lock: guards the index (the array, its size and
         * staleness, and each entry's plan, running, result and begun),
         * taken for moments only and never across file I/O. A writer
         * holds io and takes lock only to change the index; the calls
         * that answer from memory (journal_next(), journal_list()) take
         * lock only, so that they never wait for the disk. */
        pthread_mutex_t io;
        pthread_mutex_t lock;
        JournalOps ops;
        int plans_fd; /* <storage>/plans, flock'ed */
        int done_fd;  /* <storage>/plans/done */
        /* The directory of one entry, entry_ts, kept open from the call
         * that last opened it (put_plan, begin, put_result, an answer) for
         * the next call on that entry, which a plan's calls follow each
         * other with; -1 when none. Under io; closed when the entry is
         * removed, or another entry's is opened (journal_entry_dir()). */
        int entry_fd;
        char entry_ts[JOURNAL_TS_MAX];
        size_t max_plan_file;
        /* plans/reserve (journal-reserve.c): its descriptor (-1: none),
         * the size it should have, the blocks it holds and its length
         * now, and how many pieces of it answers have used since open. */
        int reserve_fd;
        uint64_t reserve_size;
        uint64_t reserve_have;
        off_t reserve_len;
        uint64_t reserve_used;
        unsigned done_max_count;
        int64_t done_max_age;
        uint64_t done_max_bytes;
        /* done/records (appended to, with its length) and done/records.old
         * (-1: none), journal-done-log.c. */
        int log_fd, old_fd;
        off_t log_size;

        uint64_t last_ts;   /* the highest entry name handed out or found */
        int64_t last_stamp; /* >= 0 */
        /* The stamp file's value that is known to be on the disk for
         * good (fsync'd). Every accepted Stamp above it is still held by
         * an entry with plan.json and `running`; 0 at open, since what a
         * crashed process wrote without fsync may be in the page cache
         * only, and no Stamp of 0 or less is ever accepted. */
        int64_t durable_stamp;
        /* The stamp file as this process left it: its length (-1 when
         * absent or not known), and whether its name is durable (plans/
         * fsync'd since it was made; false at open, for the same reason).
         * A new value of that length is written in place (journal-stamp.c). */
        int stamp_len;
        bool stamp_name_durable;
        JournalOpenReport report;

        /* Seals (journal-seal.c): whether files are sealed and checked
         * (false: no extended attributes here), whether the key was made
         * by this open (files found without a seal are sealed, once), the
         * key's HMAC states, the AES key of files' seals (derived from it),
         * and the seal that journal_write_fd() feeds while a sealed file
         * is written (io held). */
        bool sealed, seal_fresh;
        _Alignas(16) unsigned char seal_inner[JOURNAL_SHA_STATE];
        _Alignas(16) unsigned char seal_outer[JOURNAL_SHA_STATE];
        _Alignas(16) unsigned char seal_aes[JOURNAL_AES_STATE];
        JournalFileSealer *sealing;

        /* Every entry directory in plans/, sorted by name (strcmp, the
         * reference's order). The flock() means nobody else changes
         * plans/, so after journal_open()'s scan each call keeps this in
         * step with what it did, and listing needs no disk. stale: an
         * update failed (no memory), rebuild from the disk before use. */
        JournalIndexEntry *index;
        size_t n_index, cap_index;
        bool index_stale;

        /* The plan of the last entry journal_put_plan() stored, as
         * journal_load_plan() reads it back, until it is read (NULL:
         * none), and the texts of the results kept in the index; both
         * under lock. */
        JournalPlan *held;
        char held_ts[JOURNAL_TS_MAX];
        size_t kept_bytes;

        /* Done records, oldest first. */
        JournalDone *done;
        size_t n_done;

        /* The write-ahead log (journal-wal.c; NULL: not in use), its key,
         * and whether the open has made the mirror say what it held (only
         * then may journal_free() checkpoint). Under io. */
        struct JournalLog *wal;
        struct JournalCallsKey *wal_key;
        bool wal_ready;
        /* A syncfs() of the checkpoint failed: the mirror may lack pages
         * that the next one would not write, so the next checkpoint
         * writes it again first (journal-wal.c). Under io and wal_rw. */
        bool wal_suspect;
        /* The call log's records come from the plan thread, which holds
         * no io (journal_wal_call()). wal_rw: held shared by each CALL
         * record from its append until its mirror write is done, and
         * exclusively by the checkpoint, so that no checkpoint passes a
         * record whose mirror write has not happened yet. wal_mu: taken
         * around every use of wal (the log does no locking), for moments
         * and its fdatasync(). Order: io, wal_rw, wal_mu. */
        pthread_rwlock_t wal_rw;
        pthread_mutex_t wal_mu;
        /* What the REMOVE records read at open hold, until
         * journal_wal_settle(): the highest stamp, and the done records
         * (their text after WAL_REMOVE_DONE bytes of the payload). */
        int64_t wal_stamp;
        struct WalDone *wal_done;
        size_t n_wal_done;
};

/* --- journal-io.c: file operations ------------------------------------- */

extern const JournalOps journal_sys_ops;

/* True when name is an entry name: 1 to 20 digits. */
bool journal_ts_valid(const char *name);

/* Open <dirfd>/<path> as a directory through the ops (O_NOFOLLOW).
 * Returns the descriptor or -errno. */
int journal_open_dir(Journal *j, int dirfd, const char *path);

/* The directory of entry ts, borrowed (the caller must not close it): the
 * one the journal keeps open when it is ts's, else ts's opened and kept in
 * its place. The caller holds io. Returns the descriptor or -errno. */
int journal_entry_dir(Journal *j, const char *ts);
/* Close the kept directory when it is entry ts's (any entry's when ts is
 * NULL): before the entry is removed. The caller holds io. */
void journal_entry_dir_drop(Journal *j, const char *ts);

/* A stream listing dirfd's directory from its start, on a descriptor of
 * its own, so that closedir() leaves dirfd open. Returns 0, -errno from
 * openat(), or -ENOMEM when the stream cannot be made. */
int journal_list_open(Journal *j, int dirfd, DIR **ret);

/* fsync a descriptor through the ops. Returns 0 or -errno. */
int journal_sync(Journal *j, int fd);

/* Write data as dirfd/name, atomically and durably: dirfd/tmp is written,
 * fsync'd and renamed over name, then dirfd is fsync'd. On failure tmp is
 * removed, and so is name when undo is set and the rename had already
 * happened. With seal (an entry's name) the file is sealed as that entry's
 * name (journal-seal.c) before its fsync. Returns 0 or -errno. */
int journal_write_atomic(Journal *j, int dirfd, const char *tmp, const char *name, const void *data,
                         size_t len, bool undo, const char *seal);

/* All of data[0..len) to fd at off through ops' pwrite, going on after
 * short writes and EINTR. Returns 0 or -errno (-EIO for a write of
 * nothing). */
int journal_pwrite_all(const JournalOps *ops, int fd, const void *data, size_t len, off_t off);

/* Writes a file's contents to fd (through journal_write_fd()), for
 * journal_write_atomic_with(). Returns 0 or a negative errno. */
typedef int (*JournalFill)(Journal *j, int fd, void *userdata);

/* journal_write_atomic() for contents made while they are written (a
 * large plan.json is Base64-encoded piece by piece instead of into one
 * buffer of its whole size). */
int journal_write_atomic_with(Journal *j, int dirfd, const char *tmp, const char *name,
                              JournalFill fill, void *userdata, bool undo, const char *seal);

/* All of data[0..len) to fd through the ops' write, going on after short
 * writes and EINTR (and into j->sealing, when a sealed file is being
 * written). Returns 0 or -errno (-EIO for a write of nothing). */
int journal_write_fd(Journal *j, int fd, const void *data, size_t len);

/* The same without any fsync: dirfd/tmp is written and renamed over name,
 * so that every reader (the reference after a downgrade too) sees the old
 * text or the new one, but a power loss may leave either, or a damaged
 * file. seal as journal_write_atomic(). On failure tmp is removed. Returns
 * 0 or -errno. */
int journal_write_replace(Journal *j, int dirfd, const char *tmp, const char *name,
                          const void *data, size_t len, const char *seal);

/* Write data into dirfd/slot, an existing empty file whose name is
 * durable, sealed as seal's result, fsync it, and rename it to name with
 * no fsync of dirfd: the name slot was durable before, so the one fsync
 * makes the text durable, under slot or under name (journal_open() takes
 * a whole slot for the result). Returns 0; 1 when there is no slot (not
 * there, or no regular file), with nothing done; or -errno, with slot
 * empty again (or removed when it cannot be emptied). */
int journal_write_slot(Journal *j, int dirfd, const char *slot, const char *name, const void *data,
                       size_t len, const char *seal);

/* Whether dirfd/path exists (following symlinks, as Python's
 * os.path.exists does). */
bool journal_exists_at(Journal *j, int dirfd, const char *path);

/* Remove dirfd/name and everything below it, never following symlinks.
 * ENOENT counts as success. Returns 0 or -errno. */
int journal_rm_rf_at(Journal *j, int dirfd, const char *name);

/* Wall-clock now through the ops. */
int journal_now(Journal *j, struct timespec *ret);

/* --- journal-index.c: the entries in memory ------------------------------ */

/* The entry named ts, or NULL. The caller holds io (the entry stays
 * where it is until the caller changes the index) or lock. */
JournalIndexEntry *journal_index_get(Journal *j, const char *ts);

/* The entry named ts, added with no files when it is new; NULL without
 * memory (the index is then marked stale). The caller holds io and lock. */
JournalIndexEntry *journal_index_add(Journal *j, const char *ts);

/* Forget entry ts, and what is kept in memory of it. The caller holds io
 * and lock. */
void journal_index_drop(Journal *j, const char *ts);

/* Keep r (NULL: nothing) as entry e's result in memory, in place of what
 * was kept; r is freed instead when it does not fit in
 * JOURNAL_KEPT_RESULTS. The caller holds lock. */
void journal_index_keep(Journal *j, JournalIndexEntry *e, JournalResult *r);

/* Read entry ts's files from the disk again, after a call that failed
 * half-way: the index then says what is really there. Takes lock for the
 * change only. */
void journal_index_probe(Journal *j, const char *ts);

/* Rebuild a stale index from a listing of plans/: the listing without
 * lock, the swap with it. Returns 0 or -errno. */
int journal_index_fresh(Journal *j);

/* The state an entry is listed with; false when it is not listed (it has
 * neither plan.json nor result.json). */
bool journal_index_state(const JournalIndexEntry *e, JournalState *ret);

/* --- journal-plan.c --------------------------------------------------- */

/* journal_load_plan() from the disk only, leaving what is held in memory
 * alone. */
int journal_plan_read(Journal *j, const char *ts, JournalPlan **ret, char **ret_error);

/* --- journal-reserve.c: room kept for answers ---------------------------- */

/* Open (creating) plans/reserve and fill it, when the options ask for
 * one. A full disk leaves it short, not the open failed. Returns 0 or
 * -errno. */
int journal_reserve_open(Journal *j);

/* Take the reserve back to its whole size when it is short. Returns 0,
 * or -errno (-ENOSPC: the disk is still full; it stays short). */
int journal_reserve_fill(Journal *j);

/* Give one piece of the reserve back to the file system, for an answer
 * that found the disk full. Returns 0, -ENOSPC when nothing is left, or
 * -errno. */
int journal_reserve_release(Journal *j);

/* After an answer's write failed with r: whether the disk was full and a
 * piece of the reserve was released, so that the write is worth trying
 * again. */
bool journal_reserve_retry(Journal *j, int r);

/* --- journal-stamp.c --------------------------------------------------- */

/* Raise the last stamp to v when it is below (the stamp file written, not
 * flushed: a REMOVE record of the write-ahead log holds it). Returns 0 or
 * -errno. */
int journal_stamp_raise(Journal *j, int64_t v);

/* Write the last stamp into the stamp file again (not flushed), from
 * memory: after a write-back error the file's page may have been dropped
 * and read back as the disk kept it. Returns 0 or -errno. */
int journal_stamp_rewrite(Journal *j);

/* Load plans/stamp into j->last_stamp (absent: 0; unreadable as a number:
 * 0 and report.stamp_damaged). Returns 0 or -errno for I/O errors. */
int journal_stamp_load(Journal *j);

/* After the scan at open: raise j->last_stamp to the highest Stamp held
 * by an entry with plan.json and `running` (each such entry's stamp is
 * set), and write it durably to the stamp file when the file was behind.
 * Returns 0 or -errno. */
int journal_stamp_recover(Journal *j);

/* Entry e (NULL: not in the index) is about to lose its plan.json: make
 * the last stamp durable first when e may hold an accepted Stamp that the
 * stamp file does not yet hold for good. Returns 0 or -errno. */
int journal_stamp_settle(Journal *j, const JournalIndexEntry *e);

/* --- journal-seal.c: seals --------------------------------------------- */

/* Load <storage>/journal.key (storage_fd), or make one when there is
 * none (seal_fresh: the files found at this open are of a version before
 * seals, and are sealed as they are checked). A file system without
 * extended attributes leaves the journal unsealed
 * (report.seal_unsupported). Returns 0 or -errno (-EBADMSG: the key file
 * is not the agent's 32-byte file). */
int journal_seal_open(Journal *j, int storage_fd);

/* A seal of kind ("plan.json", "result.json", "done", "stamp") for name,
 * over the bytes given to journal_seal_update(). */
void journal_seal_begin(const Journal *j, JournalSealer *s, const char *kind, const char *name);
void journal_seal_update(JournalSealer *s, const void *data, size_t len);
void journal_seal_end(JournalSealer *s, unsigned char mac[JOURNAL_SEAL_LEN]);
/* The three in one. */
void journal_seal_of(const Journal *j, const char *kind, const char *name, const void *data,
                     size_t len, unsigned char mac[JOURNAL_SEAL_LEN]);

/* Put mac on fd as its seal. Returns 0 or -errno. */
int journal_seal_set(const Journal *j, int fd, const unsigned char mac[JOURNAL_SEAL_LEN]);

/* A file's seal in its attribute, as kind and name, over the bytes given
 * to journal_file_seal_update(): a fresh random nonce and the GMAC
 * (AES-256) of "muranoagent-seal-2" NUL kind NUL name NUL bytes under it.
 * SHA-256 is 8 times slower here, and plan.json is the one file the
 * journal writes whose size is the plan's (3.7 MB for a 2 MiB file).
 * begin returns 0 or -errno (-ENOMEM); end frees the state and puts the
 * seal on fd (0 or -errno). journal_file_seal_abort() frees it only. */
int journal_file_seal_begin(const Journal *j, JournalFileSealer *s, const char *kind,
                            const char *name);
void journal_file_seal_update(JournalFileSealer *s, const void *data, size_t len);
int journal_file_seal_end(const Journal *j, JournalFileSealer *s, int fd);
void journal_file_seal_abort(JournalFileSealer *s);

/* Read dirfd/path (a regular file of at most max bytes; not followed when
 * a symlink) and check its seal as kind and name: 0 with the text (a NUL
 * after it), JOURNAL_FORGED when the seal is missing or wrong (a file of
 * the version before seals, found when the key was made, is sealed then
 * and read), -EINVAL when not a regular file, -EFBIG, or -errno. Without
 * seals (j->sealed false), a plain read. */
int journal_seal_read_at(Journal *j, int dirfd, const char *path, const char *kind,
                         const char *name, size_t max, char **ret, size_t *ret_len);

/* At the open that made the key: seal dirfd/dir/file (an entry's, or an
 * old-format done record's) as file for dir. A file that cannot be read
 * is left to the reads that report it. */
void journal_seal_file(Journal *j, int dirfd, const char *dir, const char *file, size_t max);

/* A read of entry ts's file found its seal wrong: mark it in the index,
 * for journal_remove(). Takes lock. */
void journal_seal_mark(Journal *j, const char *ts, const char *file);

/* The journal whose write-ahead log a call log key's appends go through,
 * with its entry's name in *ret_ts; NULL when none. */
Journal *journal_calls_key_wal(const struct JournalCallsKey *k, const char **ret_ts);

/* Move entry ts's file to plans/quarantine/<ts>.<file>, where it is kept
 * for whoever investigates and never read. Returns 0 or -errno. */
int journal_quarantine(Journal *j, const char *ts, const char *file);

/* --- journal-wal.c: the write-ahead log (JournalOptions.wal) ------------- */

/* Record kinds (docs/journal.md, "The write-ahead log"). */
enum {
        JOURNAL_WAL_PLAN = 1,   /* the plan.json bytes */
        JOURNAL_WAL_BEGIN = 2,  /* nothing: `running` */
        JOURNAL_WAL_RESULT = 3, /* the result.json bytes */
        JOURNAL_WAL_REMOVE = 4, /* the entry is removed; see WAL_REMOVE_DONE */
        JOURNAL_WAL_UNDO = 5,   /* 8 bytes, little-endian: the seq of a record whose call failed */
        JOURNAL_WAL_CALL = 6,   /* 8 bytes, little-endian: an offset in `calls`; the bytes there */
        JOURNAL_WAL_ANSWER = 7, /* the result.json bytes of an entry of nothing else */
};

/* A REMOVE's payload: nothing (a version before these), or 8 bytes, the
 * last stamp, or WAL_REMOVE_DONE bytes and a result's text: the last
 * stamp, the done record's time and its name (64 hex digits), then its
 * text. Integers are little-endian. */
#define WAL_REMOVE_DONE (8 + 8 + 64)

/* Open <storage>/journal.log (storage_fd) and make the files of plans/
 * say what its records say. Before the listing of plans/. Returns 0 or
 * -errno. */
int journal_wal_open(Journal *j, int storage_fd, const struct JournalLogOps *ops);

/* After the done records and the stamp are loaded: the done records and
 * the stamp of the REMOVE records read at open, where done/records and
 * the stamp file lack them; then the mirror made durable, and the
 * checkpoint, after which the log takes records. Returns 0 or -errno. */
int journal_wal_settle(Journal *j);

/* At journal_free(), and at the open of a journal without the log once
 * the journal.log it found is replayed: a checkpoint when the log is
 * ready and has records, and the log closed (j->wal NULL again). */
void journal_wal_close(Journal *j);

/* Append a record for entry ts, checkpointing first when the log is half
 * full or asks for it; *ret_seq (may be NULL) is its seq. The caller holds
 * io, and writes the mirror after this returns 0. Returns 0 or -errno. */
int journal_wal_append(Journal *j, unsigned kind, const char *ts, const void *data, size_t len,
                       bool sync, uint64_t *ret_seq);

/* A call whose record seq is durable failed to write the mirror and took
 * its writes back: log that the record does not count. Best effort (a
 * failure leaves the log waiting for a checkpoint, which makes the mirror
 * durable as it stands). */
void journal_wal_undo(Journal *j, uint64_t seq);

/* The largest record payload. */
size_t journal_wal_max(const Journal *j);

/* syncfs() and a checkpoint of the log; the caller holds io. */
int journal_wal_checkpoint(Journal *j);

/* Write one call log append of entry ts through the log: a CALL record of
 * len bytes at offset off of its `calls` (flushed with sync), then
 * mirror(userdata), which writes them there without a flush; an UNDO when
 * mirror fails. Called by the plan thread, without io: it holds wal_rw
 * shared across both (checkpointing first, under io, when the log refuses
 * the record). Returns 0; 1 when the bytes are too large for a record,
 * with nothing done; or -errno (mirror's, or the log's). */
int journal_wal_call(Journal *j, const char *ts, uint64_t off, const void *data, size_t len,
                     bool sync, int (*mirror)(void *userdata), void *userdata);

/* --- journal-done.c ---------------------------------------------------- */

/* Open (creating) plans/done, load its records, drop stale ones. */
int journal_done_open(Journal *j);

/* Record a result's text, answering the plan whose record name is name,
 * in done/records, as recorded at time (journal_done_now()); with sync
 * flushed (without: a record of the write-ahead log holds it). The caller
 * then removes the entry. Returns 0, or -errno with nothing recorded. */
int journal_done_record_at(Journal *j, const char name[65], const char *text, size_t len,
                           int64_t time, bool sync);

/* The wall clock in nanoseconds since the epoch, 0 when it fails. */
int64_t journal_done_now(Journal *j);

/* Whether a record named name, recorded at time or later, is kept. */
bool journal_done_has(const Journal *j, const char name[65], int64_t time);
/* Make sure the done record of name made at time, of text, is in its
 * file, byte for byte at its place, unless it is kept no longer (dropped,
 * or a later record of that name kept): after a write-back error, whose
 * pages may have been dropped from the page cache since and read back as
 * the disk kept them (docs/journal.md, "The checkpoint"). Not flushed.
 * Returns 0 or -errno. */
int journal_done_mend(Journal *j, const char name[65], int64_t time, const char *text, size_t len);

/* Add rec to the records in memory, in time order, replacing one of the
 * same name. Returns 0 or -ENOMEM. */
int journal_done_add(Journal *j, const JournalDone *rec);

/* done/records was renamed to records.old: what records.old held is gone,
 * and what records held is now there. */
void journal_done_rotated(Journal *j);

/* --- journal-done-log.c: done/records and records.old ------------------- */

/* Open both files (records is created), load their records, and cut off
 * a torn last record. Returns 0 or -errno. */
int journal_done_log_open(Journal *j);

/* Append rec (name, time and len set; text its result) to records,
 * rotating first when records would grow past done_max_bytes, and with
 * sync fsync it (and a new name); sets rec->where and rec->off. On
 * failure nothing is left of it. Returns 0 or -errno. */
int journal_done_log_append(Journal *j, JournalDone *rec, const char *text, bool sync);

/* The text of a record kept in a records file, its seal checked.
 * Returns 0, JOURNAL_FORGED, -ENOENT, or -errno. */
int journal_done_log_read(Journal *j, const JournalDone *rec, char **ret);
/* Write rec's header, text and newline at its place in its file again
 * where the file does not hold them (no flush). Returns 0 or -errno. */
int journal_done_log_mend(Journal *j, const JournalDone *rec, const char *text);

/* Remove records.old, which no record in memory refers to any more. */
void journal_done_log_drop_old(Journal *j);

/* The record name of entry e's result (e->id_name), read from its
 * result.json unless known. Returns 0, -ENOENT or -errno. */
int journal_done_entry_id(Journal *j, JournalIndexEntry *e);

/* The SourceID of a result document's text, as a new reference, or NULL
 * when the text is not a JSON object with one. */
json_t *journal_result_source_id(const char *text, size_t len);
