/* Inside the journal: the object, and the helpers its files share. Every
 * helper here expects the caller to hold j->lock. */
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
/* Temporary names start with '.', and no entry name does, so a leftover
 * is never taken for a plan (by us or by the reference). */
#define JOURNAL_PLAN_TMP   ".plan.json.tmp"
#define JOURNAL_RESULT_TMP ".result.json.tmp"
#define JOURNAL_STAMP_TMP  ".stamp.tmp"

/* The largest result.json read back. */
#define JOURNAL_MAX_RESULT_FILE ((size_t)1 << 30)

/* A done record: done/<name>/result.json, last modified at time. */
typedef struct JournalDone {
        char name[65]; /* 64 hex digits of SHA-256 */
        int64_t time;  /* nanoseconds since the epoch */
} JournalDone;

struct Journal {
        pthread_mutex_t lock;
        JournalOps ops;
        int plans_fd; /* <storage>/plans, flock'ed */
        int done_fd;  /* <storage>/plans/done */
        size_t max_plan_file;
        unsigned done_max_count;
        int64_t done_max_age;

        uint64_t last_ts;   /* the highest entry name handed out or found */
        int64_t last_stamp; /* >= 0 */
        JournalOpenReport report;

        /* Entries journal_begin() marked in this process: their `running`
         * file means RUNNING rather than INTERRUPTED. */
        char (*begun)[JOURNAL_TS_MAX];
        size_t n_begun;

        /* Done records, oldest first. */
        JournalDone *done;
        size_t n_done;
};

/* --- journal-io.c: file operations ------------------------------------- */

extern const JournalOps journal_sys_ops;

/* True when name is an entry name: 1 to 20 digits. */
bool journal_ts_valid(const char *name);

/* Open <dirfd>/<path> as a directory through the ops (O_NOFOLLOW).
 * Returns the descriptor or -errno. */
int journal_open_dir(Journal *j, int dirfd, const char *path);

/* A stream listing dirfd's directory from its start, on a descriptor of
 * its own, so that closedir() leaves dirfd open. Returns 0, -errno from
 * openat(), or -ENOMEM when the stream cannot be made. */
int journal_list_open(int dirfd, DIR **ret);

/* fsync a descriptor through the ops. Returns 0 or -errno. */
int journal_sync(Journal *j, int fd);

/* Write data as dirfd/name, atomically and durably: dirfd/tmp is written,
 * fsync'd and renamed over name, then dirfd is fsync'd. On failure tmp is
 * removed, and so is name when undo is set and the rename had already
 * happened. Returns 0 or -errno. */
int journal_write_atomic(Journal *j, int dirfd, const char *tmp, const char *name, const void *data,
                         size_t len, bool undo);

/* Whether dirfd/path exists (following symlinks, as Python's
 * os.path.exists does). */
bool journal_exists_at(int dirfd, const char *path);

/* Remove dirfd/name and everything below it, never following symlinks.
 * ENOENT counts as success. Returns 0 or -errno. */
int journal_rm_rf_at(Journal *j, int dirfd, const char *name);

/* Wall-clock now through the ops. */
int journal_now(Journal *j, struct timespec *ret);

/* --- journal-stamp.c --------------------------------------------------- */

/* Load plans/stamp into j->last_stamp (absent: 0; unreadable as a number:
 * 0 and report.stamp_damaged). Returns 0 or -errno for I/O errors. */
int journal_stamp_load(Journal *j);

/* Forget that ts was begun in this process. */
void journal_begun_forget(Journal *j, const char *ts);
bool journal_begun_has(const Journal *j, const char *ts);

/* --- journal-done.c ---------------------------------------------------- */

/* Open (creating) plans/done, load its records, drop stale ones. */
int journal_done_open(Journal *j);

/* Move entry ts, which has a result.json answering plan_id, into done/.
 * Returns 0, or -errno with the entry left in place. */
int journal_done_record(Journal *j, const char *ts, const json_t *plan_id);

/* Whether plan_id is one that done records are kept for. */
bool journal_done_id_ok(const json_t *plan_id);

/* The SourceID of a result document's text, as a new reference, or NULL
 * when the text is not a JSON object with one. */
json_t *journal_result_source_id(const char *text, size_t len);

/* --- journal.c --------------------------------------------------------- */

/* journal_list() for a caller that holds the lock. */
int journal_list_locked(Journal *j, JournalEntry **ret, size_t *ret_n);
