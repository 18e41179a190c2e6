/* journal-calls: one plan's call log, <storage>/plans/<ts>/calls.
 *
 * While a plan runs, the runner appends to it what its Body saw that is
 * not a pure function of the plan: each script call's start (the call's
 * index, name and a digest of its arguments), its end (the result the
 * Body got), the values it drew (uuid4(), the hash key, the content of a
 * file it read) and a reboot it asked for. After a crash, the Body runs
 * again from the top and the log answers what it recorded, so that no
 * finished call runs twice (docs/journal.md, "The call log").
 *
 * A record is a header line and a payload (compact JSON):
 *
 *     <kind> <seq> <length> <mac>\n<payload>\n
 *
 * kind is one letter (JOURNAL_CALL_*), seq the record's place in the log
 * (0, 1, ...), length the payload's bytes, mac 64 lowercase hex digits of
 *
 *     HMAC-SHA256(journal key, "muranoagent-seal-1" NUL "calls" NUL <ts> NUL
 *                 <previous record's mac, 32 bytes; zeros for seq 0>
 *                 "<kind> <seq> <length>" "\n" <payload>)
 *
 * the journal's seal (journal-seal.c) chained through the log: a record
 * cannot be altered, planted without the key, reordered, or moved to
 * another entry's log. A journal without seals (no extended attributes)
 * writes the plain SHA-256 of the same bytes instead, which tells a whole
 * record from a torn one and authenticates nothing, as its other files.
 *
 * The file is appended to only. Reading stops at the first record whose
 * frame or mac fails: when nothing whole follows it (a crash tore the last
 * append, or the last record was altered), it is cut off at open and the
 * calls it held run again; when a whole record follows, the log is
 * refused (JOURNAL_CALLS_DAMAGED): damaged, or forged when the record's
 * frame is whole and only its mac fails.
 *
 * The log belongs to the plan thread that runs the entry (the journal's
 * lock keeps other agents away); these functions do no locking. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define JOURNAL_CALLS_FILE "calls"

enum {
        JOURNAL_CALL_START = 'S',  /* {"call": i, "name": s, "args": sha256 hex, "boot": id} */
        JOURNAL_CALL_END = 'E',    /* {"call": i, "result": {...}} or {"call": i, "error": {...}} */
        JOURNAL_CALL_VALUE = 'V',  /* {"kind": s, ...}: a value the Body drew */
        JOURNAL_CALL_REBOOT = 'R', /* {"call": i, "boot": id}: the reboot it asked for */
};

/* A log damaged or forged before its last record (a frame or a mac that
 * fails with whole records after it): it cannot be trusted, the plan
 * cannot resume. */
#define JOURNAL_CALLS_DAMAGED 1

typedef struct JournalCallRecord {
        char kind;
        json_t *data; /* owned: the payload */
} JournalCallRecord;

typedef struct JournalCalls JournalCalls;

/* What seals one entry's call log, and only that: the journal key's HMAC
 * states with the entry's name taken in (not the key), or a plain SHA-256
 * when the journal has no seals. The daemon makes it for the entry a plan
 * runs from and hands it to the runner's plan thread (runner.h). */
typedef struct JournalCallsKey JournalCallsKey;
typedef struct Journal Journal;

#define JOURNAL_CALLS_MAC_LEN 32

/* The key of entry ts's call log in journal j (NULL or a journal without
 * seals: unkeyed). With j's write-ahead log (JournalOptions.wal), the
 * log's appends go through it (docs/journal.md, "The write-ahead log"):
 * j must then outlive the key. Returns 0 with *ret or -ENOMEM. */
int journal_calls_key(Journal *j, const char *ts, JournalCallsKey **ret);
/* Whether k is the journal key's (else a plain checksum). */
bool journal_calls_key_sealed(const JournalCallsKey *k);
/* The file operations the log's writes and flushes go through: those of
 * the journal k was made from (JournalOptions.ops), else the system calls. */
typedef struct JournalOps JournalOps;
const JournalOps *journal_calls_key_ops(const JournalCallsKey *k);
/* A record's mac (see above), chained on prev. */
void journal_calls_mac(const JournalCallsKey *k, const unsigned char prev[JOURNAL_CALLS_MAC_LEN],
                       const void *head, size_t head_len, const void *payload, size_t len,
                       unsigned char mac[JOURNAL_CALLS_MAC_LEN]);
/* Accepts NULL; wipes the states. */
void journal_calls_key_free(JournalCallsKey *k);

/* Open (create when missing) the call log of entry directory dir, whose
 * records are sealed with key (borrowed; it must outlive the log), read its
 * records, and cut off a torn last record (with an fsync). A new file's
 * name is not fsync'd (docs/journal.md says why). Returns 0 with *ret; or
 * JOURNAL_CALLS_DAMAGED with *ret_error (owned) saying where; or -errno. */
int journal_calls_open(const char *dir, const JournalCallsKey *key, JournalCalls **ret,
                       char **ret_error);

/* Whether dir holds a call log (the plan ran with durable calls). */
bool journal_calls_exist(const char *dir);

size_t journal_calls_count(const JournalCalls *c);
/* Record i (< count), borrowed. */
const JournalCallRecord *journal_calls_get(const JournalCalls *c, size_t i);
/* Bytes cut off at open (a torn last record), 0 when none. */
size_t journal_calls_cut(const JournalCalls *c);

/* Append a record of kind with payload data; with sync, fsync the file
 * before returning (every record before it is durable then too). Returns
 * 0 or -errno (a failed append is undone by truncating to the last whole
 * record). */
int journal_calls_append(JournalCalls *c, char kind, const json_t *data, bool sync);

/* Accepts NULL. */
void journal_calls_free(JournalCalls *c);
