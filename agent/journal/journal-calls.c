/* One plan's call log: records appended by the plan thread, each flushed when
 * the runner asks, read back and checked when the plan resumes
 * (journal-calls.h). */
#include "journal/journal-calls.h"
#include "journal/journal-internal.h"
#include "journal/journal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "util/fileio.h"
#include "util/hexid.h"
#include "util/macro.h"

/* A log larger than this is refused as damaged: a Body reads files of at
 * most body_max_string (64 MiB) and records them once each. */
#define CALLS_MAX_FILE (1ull << 30)
#define HEADER_MAX     128
#define MAC_HEX        (2 * JOURNAL_CALLS_MAC_LEN)

struct JournalCalls {
        const JournalCallsKey *key;
        const JournalOps *ops;                     /* the key's */
        unsigned char last[JOURNAL_CALLS_MAC_LEN]; /* the last whole record's mac */
        int fd;
        off_t size; /* bytes of whole records */
        JournalCallRecord *recs;
        size_t n, cap;
        size_t cut;
};

static int header_text(char *buf, size_t size, char kind, size_t seq, size_t len)
{
        return snprintf(buf, size, "%c %zu %zu", kind, seq, len);
}

static int push(JournalCalls *c, char kind, json_t *data)
{
        if (c->n == c->cap) {
                size_t cap = c->cap ? 2 * c->cap : 16;
                JournalCallRecord *r = realloc(c->recs, cap * sizeof(*r));
                if (!r)
                        return -ENOMEM;
                c->recs = r;
                c->cap = cap;
        }
        c->recs[c->n++] = (JournalCallRecord){.kind = kind, .data = data};
        return 0;
}

/* A record's frame at text[at..len): its bytes (> 0) with its kind, seq,
 * mac (as written, hex) and payload, or 0 when no whole frame starts there
 * (torn, or not a record). The mac is not checked. */
static size_t frame(const char *text, size_t at, size_t len, char *kind, size_t *seq,
                    const char **mac, const char **payload, size_t *plen)
{
        const char *p = text + at,
                   *nl = memchr(p, '\n', len - at < HEADER_MAX ? len - at : HEADER_MAX);
        char head[HEADER_MAX];
        unsigned long long s, pl;
        int hl;

        if (!nl || nl - p < MAC_HEX + 1 || nl[-MAC_HEX - 1] != ' ')
                return 0;
        if (!hex_is_lower(nl - MAC_HEX, MAC_HEX))
                return 0;
        if (sscanf(p, "%c %llu %llu ", kind, &s, &pl) != 3)
                return 0;
        if (pl >= len - at || (size_t)(nl - p) + 2 + pl > len - at)
                return 0;
        /* The header as the writer makes it, and nothing else. */
        hl = header_text(head, sizeof(head), *kind, (size_t)s, (size_t)pl);
        if (hl < 0 || (size_t)hl >= sizeof(head) || (size_t)hl != (size_t)(nl - p) - MAC_HEX - 1 ||
            memcmp(head, p, (size_t)hl) != 0 || nl[1 + pl] != '\n')
                return 0;
        *seq = (size_t)s;
        *mac = nl - MAC_HEX;
        *payload = nl + 1;
        *plen = (size_t)pl;
        return (size_t)(nl - p) + 2 + (size_t)pl;
}

/* The mac of a record of c's next place, in hex. */
static void record_mac(const JournalCalls *c, const char *head, size_t head_len,
                       const char *payload, size_t len, char hex[MAC_HEX + 1],
                       unsigned char mac[JOURNAL_CALLS_MAC_LEN])
{
        journal_calls_mac(c->key, c->last, head, head_len, payload, len, mac);
        hex_encode(mac, JOURNAL_CALLS_MAC_LEN, hex);
}

/* Take the record at text[at..len) into c. Returns its bytes; 0 when it
 * is not whole or not the next (seq), with *forged when its frame is
 * whole and its mac alone fails; or -ENOMEM. */
static ssize_t parse_one(JournalCalls *c, const char *text, size_t at, size_t len, bool *forged)
{
        unsigned char mac[JOURNAL_CALLS_MAC_LEN];
        char want[MAC_HEX + 1];
        const char *payload, *got;
        size_t seq, plen, k;
        json_t *data;
        char kind;

        k = frame(text, at, len, &kind, &seq, &got, &payload, &plen);
        if (k == 0)
                return 0;
        record_mac(c, text + at, (size_t)(got - 1 - (text + at)), payload, plen, want, mac);
        if (seq != c->n || CRYPTO_memcmp(want, got, MAC_HEX) != 0) {
                *forged = true;
                return 0;
        }
        data = json_loadb(payload, plen, JSON_DECODE_ANY, NULL);
        if (!data)
                return 0;
        if (push(c, kind, data) < 0) {
                json_decref(data);
                return -ENOMEM;
        }
        memcpy(c->last, mac, sizeof(mac));
        return (ssize_t)k;
}

/* Whether a whole record frame starts in text[at..len) after at's own
 * line: a torn append is a prefix of one record, in which no other
 * starts (payloads are compact JSON, without a newline); damage or a
 * forgery leaves whole frames behind it. */
static bool whole_record_after(const char *text, size_t at, size_t len)
{
        for (const char *p = memchr(text + at, '\n', len - at); p && (size_t)(p - text) + 1 < len;
             p = memchr(p + 1, '\n', len - (size_t)(p + 1 - text))) {
                const char *payload, *mac;
                size_t seq, plen;
                char kind;

                if (frame(text, (size_t)(p + 1 - text), len, &kind, &seq, &mac, &payload, &plen) >
                    0)
                        return true;
        }
        return false;
}

static int read_records(JournalCalls *c, char **ret_error)
{
        _cleanup_free_ char *text = NULL;
        size_t len = 0, at = 0;
        bool forged = false;
        int r = file_read_regular_fd(c->fd, CALLS_MAX_FILE, &text, &len);

        if (r < 0)
                return r;
        while (at < len) {
                ssize_t k = parse_one(c, text, at, len, &forged);
                if (k < 0)
                        return (int)k;
                if (k == 0)
                        break;
                at += (size_t)k;
        }
        if (at < len && whole_record_after(text, at, len)) {
                if (asprintf(ret_error,
                             forged ? "the call log is forged at record %zu (byte %zu): it does "
                                      "not carry the journal's seal, and whole records follow"
                                    : "the call log is damaged at record %zu (byte %zu): its "
                                      "frame is wrong, and whole records follow",
                             c->n, at) < 0)
                        *ret_error = NULL;
                return JOURNAL_CALLS_DAMAGED;
        }
        c->size = (off_t)at;
        c->cut = len - at;
        return 0;
}

int journal_calls_open(const char *dir, const JournalCallsKey *key, JournalCalls **ret,
                       char **ret_error)
{
        _cleanup_free_ char *path = NULL;
        JournalCalls *c;
        int r;

        *ret_error = NULL;
        if (asprintf(&path, "%s/%s", dir, JOURNAL_CALLS_FILE) < 0)
                return -ENOMEM;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->fd = -1;
        c->key = key;
        c->ops = journal_calls_key_ops(key);
        /* A plan's first start makes the file, and has nothing to read; a
         * resumed plan reads the records of the file it goes on writing.
         * The new file's name is not fsync'd: a log that a power loss
         * took away leaves a plan without one, answered as interrupted as
         * before durable calls (docs/journal.md, "The call log"). */
        c->fd = c->ops->openat(AT_FDCWD, path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                               0600);
        if (c->fd < 0 && errno == EEXIST) {
                c->fd = c->ops->openat(AT_FDCWD, path, O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0);
                if (c->fd >= 0 && (r = read_records(c, ret_error)) != 0)
                        goto fail;
        }
        if (c->fd < 0) {
                r = -errno;
                goto fail;
        }
        if (c->cut > 0 && (c->ops->ftruncate(c->fd, c->size) < 0 || c->ops->fsync(c->fd) < 0)) {
                r = -errno;
                goto fail;
        }
        *ret = c;
        return 0;
fail:
        journal_calls_free(c);
        return r;
}

bool journal_calls_exist(const char *dir)
{
        char path[4096];

        snprintf(path, sizeof(path), "%s/%s", dir, JOURNAL_CALLS_FILE);
        return access(path, F_OK) == 0;
}

size_t journal_calls_count(const JournalCalls *c)
{
        return c->n;
}

const JournalCallRecord *journal_calls_get(const JournalCalls *c, size_t i)
{
        return i < c->n ? &c->recs[i] : NULL;
}

size_t journal_calls_cut(const JournalCalls *c)
{
        return c->cut;
}

typedef struct Mirror {
        JournalCalls *c;
        const char *rec;
        size_t len;
} Mirror;

static int mirror_write(void *userdata)
{
        Mirror *m = userdata;

        return journal_pwrite_all(m->c->ops, m->c->fd, m->rec, m->len, m->c->size);
}

/* Write rec at the log's end: through the journal's write-ahead log when
 * the key has one (its CALL record flushed with sync, the file then
 * written without a flush: it is the log's mirror), else into the file,
 * fdatasync'd with sync. A record too large for the write-ahead log is
 * written into the file and flushed: it is durable by itself. Returns 0
 * or -errno. */
static int append_bytes(JournalCalls *c, const char *rec, size_t len, bool sync)
{
        const char *ts;
        Journal *j = journal_calls_key_wal(c->key, &ts);
        Mirror m = {c, rec, len};
        int r;

        if (j) {
                r = journal_wal_call(j, ts, (uint64_t)c->size, rec, len, sync, mirror_write, &m);
                if (r <= 0)
                        return r;
                sync = true;
        }
        r = mirror_write(&m);
        if (r == 0 && sync && c->ops->fdatasync(c->fd) < 0)
                r = -errno;
        return r;
}

int journal_calls_append(JournalCalls *c, char kind, const json_t *data, bool sync)
{
        _cleanup_free_ char *payload = json_dumps(data, JSON_COMPACT | JSON_ENCODE_ANY);
        _cleanup_free_ char *rec = NULL;
        unsigned char mac[JOURNAL_CALLS_MAC_LEN];
        char head[HEADER_MAX], hex[MAC_HEX + 1];
        size_t plen, rlen;
        json_t *copy;
        int hl, r;

        if (!payload)
                return -ENOMEM;
        plen = strlen(payload);
        hl = header_text(head, sizeof(head), kind, c->n, plen);
        if (hl < 0 || (size_t)hl >= sizeof(head))
                return -EINVAL;
        record_mac(c, head, (size_t)hl, payload, plen, hex, mac);
        r = asprintf(&rec, "%s %s\n%s\n", head, hex, payload);
        if (r < 0) {
                rec = NULL;
                return -ENOMEM;
        }
        rlen = (size_t)r;
        copy = json_deep_copy(data);
        if (!copy || push(c, kind, copy) < 0) {
                json_decref(copy);
                return -ENOMEM;
        }
        r = append_bytes(c, rec, rlen, sync);
        if (r < 0)
                goto undo;
        c->size += (off_t)rlen;
        memcpy(c->last, mac, sizeof(mac));
        return 0;
undo:
        (void)c->ops->ftruncate(c->fd, c->size);
        json_decref(c->recs[--c->n].data);
        return r;
}

void journal_calls_free(JournalCalls *c)
{
        if (!c)
                return;
        if (c->fd >= 0)
                close(c->fd);
        for (size_t i = 0; i < c->n; i++)
                json_decref(c->recs[i].data);
        free(c->recs);
        free(c);
}
