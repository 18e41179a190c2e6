/* journal: the agent's crash-safe record of plans and results, in the
 * reference agent's storage layout (spec 4.2), so that a VM upgraded from
 * the Python agent keeps its pending work, and the other way round where
 * the reference can follow:
 *
 *   <storage>/plans/                  mode 0700
 *     stamp                           last accepted Stamp, decimal text
 *     <ts>/                           ts = str(int(time.time() * 10000))
 *       plan.json                     {"Data": b64(body), "Signature": b64(sig),
 *                                      "ID": msg_id, "ReplyTo": reply_to}
 *       running                       ours: the plan's execution has begun
 *                                     (a hard link to plan.json)
 *       result.json                   the result document's text
 *       .result                       ours: the result's slot, empty until
 *                                     journal_put_result() fills it
 *     reserve                         ours: preallocated room for answers
 *     done/records, records.old       ours: results of recently finished
 *                                     plans, for answering a redelivered
 *                                     plan (bounded: rotated)
 *     quarantine/<ts>.<file>          ours: files refused for their seal
 *   <storage>/journal.key             ours: the key of the seals, 0600
 *
 * Seals: every plan.json and result.json the journal writes, and the
 * stamp file, carries an HMAC under journal.key in its extended attribute
 * user.muranoagent.seal, and every done record one in its header; a file read back without its
 * seal is refused (JOURNAL_FORGED), so that a process that cannot read the
 * key cannot make the agent run a plan, or skip one, through the journal
 * (docs/journal.md, "Seals").
 *
 * The reference looks only at plans/<name>/plan.json and result.json, so
 * `running`, `done/` and our temporary files (names starting with '.') are
 * invisible to it. docs/journal.md has the layout, the rules and the order
 * in which the daemon calls these functions.
 *
 * Durability: every call that writes a plan, a result or the `running`
 * mark returns only after the data and the directory entries that name it
 * were fsync'd, and every file appears whole or not at all (a temporary
 * name, fsync, rename, fsync of the directory). The result is written
 * into its slot .result, whose name journal_put_plan() made durable, and
 * fsync'd, then renamed to result.json without an fsync: a torn slot
 * fails its seal and counts as no result, and journal_open() renames a
 * whole one (docs/journal.md, "Durability"). The stamp file is the
 * other exception: journal_begin() replaces it without an fsync, because the
 * accepted Stamp is durable already in the plan.json of the entry it
 * marked running, and journal_open() takes the highest of the file and of
 * those plans. journal_remove() makes the stamp file durable before such
 * an entry loses its plan.json, when the stamp advanced since the last
 * time (2 fsyncs), and otherwise renames and unlinks without waiting for
 * the disk (a removal that a power loss undoes only means a result is
 * published again). The calls that fsync (journal_open() when it creates
 * directories or repairs the stamp file, journal_put_plan(),
 * journal_begin(), journal_put_result(), journal_remove()) block for a few
 * disk flushes and must not run on the event loop thread.
 *
 * The entries and their states are kept in memory: journal_open() lists
 * plans/ once, and since its flock() keeps other processes out, every
 * later call updates that index with what it did. journal_list() and
 * journal_next() therefore touch no disk at all, and
 * journal_done_lookup() lists nothing and reads only a matching result
 * (and, once each, the results of an earlier start it has not seen yet).
 * The journal also keeps what it is asked to read back: the plan just
 * stored (journal_load_plan()) and the results it stored, with their
 * SourceID and ReplyTo (journal_get_result()); docs/journal.md, "Memory".
 *
 * Threads: a Journal may be shared by threads. The calls that touch the
 * files run one at a time (an internal lock, held across their fsyncs).
 * The index has a mutex of its own, held for moments and never across
 * file I/O: journal_next(), journal_next_except(), journal_list() take
 * only that one, so they never wait for another call's disk work, and an
 * event loop may call them (journal_load_plan() and journal_load_result()
 * take neither lock). A Journal holds an exclusive flock() on plans/ so
 * that two agents never share one storage directory.
 *
 * Return values: 0 on success, negative errno for failures of the agent
 * or its disk, and the positive values documented at each call for
 * expected outcomes. Nothing here logs; the daemon logs what it is told. */
#pragma once

#include <dirent.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "util/macro.h"

/* Room for an entry name: at most 20 digits and a NUL. */
#define JOURNAL_TS_MAX 21

/* journal_load_plan(): plan.json cannot be read as a plan (empty, not JSON,
 * a missing or malformed field); the error text says why. */
#define JOURNAL_CORRUPT 1

/* journal_begin(): the plan's Stamp is not newer than the last accepted
 * one, so it is an old or duplicate message; the reference drops it
 * without a result. journal_stamp_held() tells a copy of a plan still in
 * the journal (no answer of its own) from a plan refused for its Stamp. */
#define JOURNAL_STAMP_OLD 2
/* journal_begin(): Stamp is present but is not an integer (the reference
 * fails on such plans with a TypeError and drops them). */
#define JOURNAL_STAMP_INVALID 3

/* A last accepted stamp more than this ahead of the machine's wall clock,
 * in the engine's units (1e-4 s; the engine stamps int(time() * 10000)),
 * cannot be the engine's: one day, more than any time zone error. Such a
 * stamp (planted in the stamp file, or a broken clock) no longer refuses
 * plans (journal_begin()). */
#define JOURNAL_STAMP_AHEAD_MAX ((int64_t)86400 * 10000)

/* journal_load_plan(), journal_get_result(), journal_load_result(): the
 * file's seal is missing or wrong: it was planted or altered by a process
 * without the agent's key (docs/journal.md, "Seals"). The daemon logs it
 * and calls journal_remove(ts, false), which moves the file to
 * plans/quarantine/ and keeps the rest of the entry when its plan.json is
 * sound. */
#define JOURNAL_FORGED 4

/* Defaults of the de-duplication window (JournalOptions). */
#define JOURNAL_DONE_MAX_COUNT 1000
#define JOURNAL_DONE_MAX_AGE   (7 * 24 * 3600)
/* done/records is rotated before it grows past this. */
#define JOURNAL_DONE_MAX_BYTES ((uint64_t)256 << 10)
/* Default size of plans/reserve, the room kept for answers on a full disk. */
#define JOURNAL_RESERVE_SIZE ((uint64_t)256 << 10)

/* The file operations the journal goes through, with the system calls'
 * own conventions (-1 and errno). Tests replace them to make a write, an
 * fsync or a rename fail, to count what a call does, or to model what a
 * power loss leaves of each one (tests/test-journal-crash.h); the daemon
 * passes NULL for the real ones. A field left NULL is the system call.
 * Every call that changes or flushes a file of plans/ goes through them,
 * the call log's too (journal_calls_key() hands the journal's to it); the
 * one exception is the making of journal.key, at the first open, which
 * uses the system calls (journal-seal.c says why). */
typedef struct JournalOps {
        int (*mkdirat)(int dirfd, const char *path, mode_t mode);
        int (*openat)(int dirfd, const char *path, int flags, mode_t mode);
        ssize_t (*write)(int fd, const void *buf, size_t n);
        int (*fsync)(int fd);
        int (*renameat)(int olddirfd, const char *oldpath, int newdirfd, const char *newpath);
        int (*unlinkat)(int dirfd, const char *path, int flags);
        /* Wall-clock time, for entry names and the age of done records. */
        int (*clock_gettime)(clockid_t clock, struct timespec *ts);
        int (*linkat)(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
                      int flags);
        /* What only looks: existence and status of a path, and directory
         * listings (every listing starts with fdopendir()). */
        int (*faccessat)(int dirfd, const char *path, int mode, int flags);
        int (*fstatat)(int dirfd, const char *path, struct stat *st, int flags);
        DIR *(*fdopendir)(int fd);
        /* The reserve (plans/reserve): taken and given back. */
        int (*fallocate)(int fd, int mode, off_t offset, off_t len);
        int (*ftruncate)(int fd, off_t len);
        /* The call log's appends and flushes (journal-calls.h). */
        ssize_t (*pwrite)(int fd, const void *buf, size_t n, off_t offset);
        int (*fdatasync)(int fd);
        /* A file's seal (an extended attribute). */
        int (*fsetxattr)(int fd, const char *name, const void *value, size_t size, int flags);
        /* A hint to start writing a range of a large plan.json; it
         * promises nothing (the fsync after it does). */
        int (*sync_file_range)(int fd, off_t offset, off_t n, unsigned int flags);
        /* The write-ahead log's checkpoint (JournalOptions.wal). */
        int (*syncfs)(int fd);
} JournalOps;

struct JournalLogOps;

typedef struct JournalOptions {
        const JournalOps *ops;   /* NULL = the system calls */
        size_t max_plan_file;    /* largest plan.json read back, bytes; 0 = 256 MiB */
        unsigned done_max_count; /* finished plans remembered; 0 = none */
        int64_t done_max_age;    /* seconds they are remembered; 0 = not at all */
        uint64_t done_max_bytes; /* done/records rotates past this; 0 = 256 KiB */
        uint64_t reserve_size;   /* bytes of plans/reserve; 0 = no reserve */
        /* In development, off by default: journal_put_plan(),
         * journal_begin(), journal_put_result() and journal_remove() make
         * their facts durable in <storage>/journal.log, and the files of
         * plans/ become its mirror, written without flushes and made
         * durable at checkpoints (docs/journal.md, "The write-ahead
         * log"). wal_ops: the log's file operations (NULL:
         * the system calls), for tests. */
        bool wal;
        const struct JournalLogOps *wal_ops;
} JournalOptions;

#define JOURNAL_OPTIONS_DEFAULT                                                                    \
        ((JournalOptions){.ops = NULL,                                                             \
                          .max_plan_file = 0,                                                      \
                          .done_max_count = JOURNAL_DONE_MAX_COUNT,                                \
                          .done_max_age = JOURNAL_DONE_MAX_AGE,                                    \
                          .reserve_size = JOURNAL_RESERVE_SIZE})

/* What journal_open() found and repaired, for the daemon to log. */
typedef struct JournalOpenReport {
        unsigned n_temp_removed;  /* temporary files of writes that never finished */
        unsigned n_empty_removed; /* entries with neither plan.json nor result.json */
        unsigned n_done_expired;  /* done records past the age or count limit */
        unsigned n_interrupted;   /* entries whose plan was running when the agent stopped */
        bool stamp_damaged;       /* the stamp file held no number (read as 0) */
        /* The stamp file was behind (a power loss took its last write, or
         * damaged it): last_stamp is the Stamp of a plan marked running,
         * and the file was rewritten with it. */
        bool stamp_recovered;
        /* last_stamp is more than JOURNAL_STAMP_AHEAD_MAX ahead of the
         * wall clock: the next stamped plan replaces it. */
        bool stamp_ahead;
        int64_t last_stamp; /* the last accepted Stamp, as loaded and recovered */
        /* Seals: the file system has no extended attributes, so nothing
         * is sealed or checked; or the key was made at this open, and
         * n_sealed files and records found without a seal (written by a
         * version before seals) were accepted and sealed; n_forged_records
         * done records were refused for their seal. */
        bool seal_unsupported;
        /* The stamp file does not carry its seal: it was ignored, and the
         * last stamp taken from the plans marked running (0 without). */
        bool stamp_forged;
        bool seal_created;
        unsigned n_sealed;
        unsigned n_forged_records;
        /* The write-ahead log (JournalOptions.wal): its file was there but
         * could not be read (damaged, or under another key) and was begun
         * afresh; n_wal_records records were read from it and the files
         * of plans/ made to say what they say. */
        bool wal_reset;
        unsigned n_wal_records;
        /* The write-ahead log was asked for, but there was no journal.log
         * and it could not be made (a full disk, say): the journal works
         * without it, as without JournalOptions.wal, and this is the
         * errno of the failure (0: none). A journal.log that is there but
         * cannot be opened fails journal_open() instead: its records may
         * be all that holds a plan acked since its last checkpoint. */
        int wal_errno;
} JournalOpenReport;

typedef enum JournalState {
        JOURNAL_PENDING,     /* plan.json only: load, check and run the plan */
        JOURNAL_RUNNING,     /* journal_begin() was called in this process; no result yet */
        JOURNAL_INTERRUPTED, /* plan.json and running from an earlier process, no result:
                              * answer with an "interrupted" error result, never re-run */
        JOURNAL_RESULT,      /* result.json: publish it, then journal_remove() */
} JournalState;

typedef struct JournalEntry {
        char ts[JOURNAL_TS_MAX];
        JournalState state;
} JournalEntry;

/* One plan.json, decoded. */
typedef struct JournalPlan {
        char *body; /* the message body's bytes, with a NUL after them */
        size_t body_len;
        unsigned char *signature; /* NULL when there is none */
        size_t signature_len;
        /* The AMQP message_id, "" when the message had none. The
         * reference's own files may hold any JSON value here (its unit
         * test writes 1). Never NULL. */
        json_t *id;
        json_t *reply_to; /* the AMQP reply_to: a string, or null; never NULL */
        /* Stored by journal_put_plan() of this Journal, not found at open:
         * the daemon checked its delivery's signature before storing it. */
        bool stored_here;
} JournalPlan;

/* What a result document says of the plan it answers, as the caller that
 * made the document knows it. */
typedef struct JournalResultIds {
        const json_t *source_id; /* its SourceID; NULL when it has none */
        const json_t *reply_to;  /* its ReplyTo; NULL when it has none */
} JournalResultIds;

/* A result, as journal_get_result() gives it back. */
typedef struct JournalResult {
        char *text; /* the document's text, with a NUL after it */
        size_t len;
        json_t *source_id; /* its SourceID; NULL when it has none */
        json_t *reply_to;  /* its ReplyTo; NULL when it has none */
} JournalResult;

typedef struct Journal Journal;

/* Open the journal in <storage>/plans, creating the directories (mode
 * 0700; an existing plans/ is chmod'ed to 0700, as the reference does).
 * Removes what interrupted writes left behind (temporary files, entries
 * with neither plan.json nor result.json), loads the stamp and the done
 * records and drops expired ones. The last accepted stamp is the highest
 * of the stamp file's value and of the integer "Stamp" in the body of
 * every plan.json whose entry also has `running`; when that is above the
 * file's, the file is rewritten durably (report.stamp_recovered). Entries
 * with plan.json and `running` but no result.json are reported as
 * JOURNAL_INTERRUPTED from now on. Loads <storage>/journal.key, or makes
 * it when there is none, and then accepts and seals the files found
 * without a seal (an upgrade; report.seal_created, n_sealed). opt NULL
 * means JOURNAL_OPTIONS_DEFAULT. Returns 0, -EBUSY when another process
 * has the journal open, -EBADMSG when journal.key is not the agent's
 * 32-byte file, or -errno. */
int journal_open(const char *storage, const JournalOptions *opt, Journal **ret);

/* The largest plan.json that a message body of at most body_max bytes
 * makes, whatever its signature, message_id and reply_to: the value of
 * JournalOptions.max_plan_file for an agent that takes bodies that large,
 * so that no plan it stored is called corrupt when read back. */
size_t journal_plan_file_max(size_t body_max);

/* The process holding the exclusive flock() on <storage>/plans, as
 * /proc/locks names it: the process that took the lock, even when a child
 * that inherited its descriptor is what keeps it now. For the daemon's log
 * when journal_open() returns -EBUSY. Returns 0 with the pid, -ENOENT when
 * no such lock is listed (released meanwhile, or no /proc), or a negative
 * errno. */
int journal_lock_holder(const char *storage, pid_t *ret_pid);

Journal *journal_free(Journal *j);
DEFINE_CLEANUP(Journal, journal_free)

const JournalOpenReport *journal_open_report(const Journal *j);

/* Store a message just received, before it is acked: writes <ts>/plan.json
 * with a new unique ts (above every entry name in use) and returns its
 * name in ret_ts only after it is durable. body and sig are raw bytes (sig
 * NULL or sig_len 0: no signature); msg_id NULL stands for "" and
 * reply_to NULL for null; bytes in them that are not UTF-8 become U+FFFD.
 * On failure nothing of the entry is left behind and the message must not
 * be acked. Returns 0 or -errno (-ENOSPC, -EIO, ...). */
int journal_put_plan(Journal *j, const void *body, size_t body_len, const void *sig, size_t sig_len,
                     const char *msg_id, const char *reply_to, char ret_ts[JOURNAL_TS_MAX]);

/* journal_put_plan() of *body, a malloc'ed buffer with a byte after
 * body_len that may be overwritten by a NUL: when the journal keeps the plan
 * for reading back, it keeps this buffer rather than a copy. *body is NULL
 * when the journal took it (the caller frees it otherwise). */
int journal_put_plan_owned(Journal *j, char **body, size_t body_len, const void *sig,
                           size_t sig_len, const char *msg_id, const char *reply_to,
                           char ret_ts[JOURNAL_TS_MAX]);

/* All entries in the reference's (string) order of their names, with
 * their state. From memory: never waits for the disk. Returns 0, -EAGAIN
 * when the index must be rebuilt from the disk (after memory ran out) while
 * another call is at the disk (try again later), or -errno; *ret is NULL
 * when there are none. */
int journal_list(Journal *j, JournalEntry **ret, size_t *ret_n);

/* The next thing to do, as the reference's main loop picks it: the first
 * entry with a result, else the first PENDING or INTERRUPTED entry. From
 * memory, as journal_list(). Returns 1 with *ret set, 0 when there is
 * nothing to do (consume the next message), -EAGAIN as journal_list(), or
 * -errno. */
int journal_next(Journal *j, JournalEntry *ret);

/* journal_next() as if entry skip_ts (NULL: none) were not there: the
 * daemon's result in flight, published and awaiting its confirm, must not
 * keep the next plan from starting. */
int journal_next_except(Journal *j, const char *skip_ts, JournalEntry *ret);

/* Read <ts>/plan.json. The plan of the last entry stored by
 * journal_put_plan() is kept in memory until it is read (one at a time:
 * another stored meanwhile is read from the disk), and handed over
 * as reading the file would give it. Returns 0, JOURNAL_CORRUPT or
 * JOURNAL_FORGED with a sentence in *ret_error (may be NULL; the daemon
 * logs it and drops the entry with journal_remove), -ENOENT, or -errno.
 * Takes no lock across file I/O. */
int journal_load_plan(Journal *j, const char *ts, JournalPlan **ret, char **ret_error);

JournalPlan *journal_plan_free(JournalPlan *p);
DEFINE_CLEANUP(JournalPlan, journal_plan_free)

/* Execution of <ts> is about to begin. stamp is the plan's "Stamp" (NULL
 * when absent): the very value in the body of <ts>/plan.json, which is
 * the copy of an accepted stamp that survives a power loss. In this order:
 *   - a Stamp that is not an integer: JOURNAL_STAMP_INVALID;
 *   - a Stamp >= 0 and <= the last accepted one: JOURNAL_STAMP_OLD,
 *     unless the last one is more than JOURNAL_STAMP_AHEAD_MAX ahead of the
 *     wall clock (no engine stamped it): then the Stamp is accepted and
 *     replaces it, so that no stored stamp silences the plans after it;
 *   - <ts>/running is made and made durable;
 *   - a Stamp >= 0 becomes the last accepted one, written to `stamp`
 *     without an fsync (durable through plan.json and `running` until
 *     journal_remove() makes the file durable).
 * Nothing is written in the first two cases. Negative stamps count as
 * absent, as in the reference. Because `running` is durable before the
 * stamp is written, a crash never leaves a plan whose stamp was taken but
 * which restarts as PENDING (and would be dropped as "old"): it restarts
 * as INTERRUPTED. Returns 0, JOURNAL_STAMP_OLD, JOURNAL_STAMP_INVALID or
 * -errno (a failure may leave `running`: the entry is then INTERRUPTED
 * after a restart; calling journal_begin() again retries). */
int journal_begin(Journal *j, const char *ts, const json_t *stamp);

/* The last accepted Stamp (0 at first). */
int64_t journal_last_stamp(Journal *j);

/* Whether an entry still in the journal, other than <except_ts> (may be
 * NULL), took the Stamp stamp (>= 0) and has not been removed: a plan
 * refused as JOURNAL_STAMP_OLD with such a Stamp is a second copy of a
 * plan that gets its own answer, and is dropped; any other is answered
 * with an error result (docs/journal.md, "Stamps"). */
bool journal_stamp_held(Journal *j, int64_t stamp, const char *except_ts);

/* Store the result document's text (len bytes) as <ts>/result.json,
 * replacing any earlier one, durably: written into the entry's slot
 * .result, fsync'd and renamed (one fsync), or, in an entry without one,
 * atomically through a temporary file (two). <ts> must exist.
 * ids: the document's SourceID and ReplyTo, as the caller put them in it;
 * NULL: the journal reads them from text when it needs them. The text and
 * ids are kept in memory (up to JOURNAL_KEPT_RESULTS bytes of texts in
 * all) until the entry is removed, for journal_get_result() and
 * journal_done_lookup(). Returns 0 or -errno. On failure result.json is
 * never partial: it is the earlier one, or absent (always absent when
 * there was none, and also when only the final directory fsync failed),
 * and the slot is empty. */
int journal_put_result(Journal *j, const char *ts, const char *text, size_t len,
                       const JournalResultIds *ids);

/* Bytes of result texts kept in memory at most (journal_put_result()). */
#define JOURNAL_KEPT_RESULTS ((size_t)4 << 20)

/* Read <ts>'s result: from memory when this process stored it (and it was
 * kept), else from result.json, whose SourceID and ReplyTo are read then.
 * Returns 0, JOURNAL_CORRUPT when result.json is not a JSON object (with
 * the text, and no ids), JOURNAL_FORGED (nothing in *ret), -ENOENT or
 * -errno. Takes no lock across file I/O. */
int journal_get_result(Journal *j, const char *ts, JournalResult **ret);

JournalResult *journal_result_free(JournalResult *r);
DEFINE_CLEANUP(JournalResult, journal_result_free)

/* The text of <ts>'s result, as journal_get_result() finds it. Returns 0,
 * JOURNAL_FORGED, -ENOENT or -errno. */
int journal_load_result(Journal *j, const char *ts, char **ret_text, size_t *ret_len);

/* Remove entry <ts>. With record, its result is remembered first under the
 * plan ID it answers (the result's SourceID), so that journal_done_lookup()
 * finds it: call it so once the broker has confirmed the result. Without,
 * the entry just goes (a plan that is dropped without a result). A result
 * whose SourceID is not a non-empty string or an integer is recorded under
 * a digest of its plan.json's body (journal_done_lookup_delivery()), or
 * not at all when the entry has no plan.json. On a full disk the reserve
 * gives room for the record, and when it is spent the entry goes first and
 * the record follows in its room, or is skipped.
 * Returns 0, -ENOENT or -errno (when the record cannot be made, or the
 * stamp cannot be made durable, the entry stays, still with its result,
 * and the call may be retried). When the entry's plan took a Stamp that
 * the stamp file does not hold durably yet, the file is made durable
 * first (2 fsyncs, once for each advance of the stamp); nothing else is
 * fsync'd: a removal that a power loss undoes only means the result is
 * published again. */
int journal_remove(Journal *j, const char *ts, bool record);

/* Store an answer for a message whose plan is not kept (too large for the
 * agent, or for the disk): a new entry <ts> holding only result.json with
 * text, made durable as journal_put_plan() makes plan.json. The entry is
 * JOURNAL_RESULT at once, and published and removed like any other. When
 * the disk is full, pieces of the reserve are given back for it. Returns
 * 0 with the entry's name in ret_ts, or -errno with nothing left behind
 * (the message must not be acked then). */
int journal_put_answer(Journal *j, const char *text, size_t len, char ret_ts[JOURNAL_TS_MAX]);

/* With the write-ahead log (JournalOptions.wal): make every file the
 * journal wrote since the last checkpoint durable (one syncfs() of the
 * storage's file system) and empty the log. The journal checkpoints by
 * itself when the log is half full and in journal_free(); the daemon may
 * call this when it is idle, so that the next burst finds the log empty.
 * Blocks for a flush of the file system: not on the event loop. Returns
 * 0 (also without the log) or -errno (the log then waits for the next
 * checkpoint that succeeds before it takes more records). */
int journal_checkpoint(Journal *j);

/* Room on the journal's file system, for the daemon's log and status. */
typedef struct JournalSpace {
        uint64_t available;    /* bytes free for the agent (statvfs f_bavail) */
        bool reserve_whole;    /* plans/reserve holds all its blocks */
        uint64_t reserve_held; /* bytes it holds */
        uint64_t reserve_used; /* pieces given to answers since open */
} JournalSpace;

/* Take the reserve back to its whole size where there is room, then
 * measure. Returns 0 or -errno. */
int journal_space(Journal *j, JournalSpace *ret);

/* Whether plan_id is one that done records are kept for: a non-empty
 * string or an integer. */
bool journal_done_id_ok(const json_t *plan_id);

/* Whether plan_id already has a result: a done record younger than the
 * age limit, or an entry still waiting to publish its result.json. Only
 * non-empty strings and integers are looked up (other IDs never match).
 * Returns 1 with the result's text in *ret_result_text, 0 when there is
 * none, or -errno. */
int journal_done_lookup(Journal *j, const json_t *plan_id, char **ret_result_text);

/* The result texts of the max newest done records (by the time each was
 * recorded), oldest first, through fn: what an agent that starts can say
 * of the plans it answered before. Records of an older version's layout (a
 * directory each) are left out. Reads the records files: not for an event
 * loop once it runs. Returns 0 or -errno. */
typedef void (*journal_done_fn)(void *userdata, int64_t time_ns, const char *text, size_t len);
int journal_done_newest(Journal *j, size_t max, journal_done_fn fn, void *userdata);

/* Whether a message whose body is not a plan (not JSON, not an object, a
 * key given twice), and whose ID therefore cannot be read, was answered
 * already: the same body delivered again after a crash between storing it
 * and its ack. Results whose SourceID is not an ID that done records are
 * kept for are recorded under a digest of their plan.json's body, and
 * this finds them (a record, or a result waiting for its confirm).
 * Returns 1 with the result's text, 0 when there is none, or -errno. */
int journal_done_lookup_delivery(Journal *j, const void *body, size_t len, char **ret_result_text);
