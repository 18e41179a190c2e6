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
 *     <kind> <seq> <length> <crc32>\n<payload>\n
 *
 * kind is one letter (JOURNAL_CALL_*), seq the record's place in the log
 * (0, 1, ...), length the payload's bytes, crc32 eight lowercase hex
 * digits of the CRC-32 (IEEE) of "<kind> <seq> <length>" and the payload.
 * The file is appended to only; a record is whole only when its checksum
 * holds, so a record torn by a crash is recognised and cut off at open.
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

/* A log damaged before its last record (a checksum that fails with whole
 * records after it): it cannot be trusted, the plan cannot resume. */
#define JOURNAL_CALLS_DAMAGED 1

typedef struct JournalCallRecord {
        char kind;
        json_t *data; /* owned: the payload */
} JournalCallRecord;

typedef struct JournalCalls JournalCalls;

/* Open (create when missing) the call log of entry directory dir, read its
 * records, and cut off a torn last record (with an fsync). A new file's
 * name is not fsync'd (docs/journal.md says why). Returns 0 with *ret; or
 * JOURNAL_CALLS_DAMAGED with *ret_error (owned) saying where; or -errno. */
int journal_calls_open(const char *dir, JournalCalls **ret, char **ret_error);

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

/* The CRC-32 (IEEE 802.3, as zlib's crc32()) of buf, continuing from crc
 * (0 to start). */
unsigned journal_crc32(unsigned crc, const void *buf, size_t len);
