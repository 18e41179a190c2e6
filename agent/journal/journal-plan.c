/* plan.json and result.json: writing a received message durably, reading
 * it back (ours and the reference's), and storing a result.
 *
 * plan.json is what the reference's put_execution_plan writes, byte for
 * byte: json.dumps({'Data': b64encode(body), 'Signature':
 * b64encode(signature or ''), 'ID': msg_id, 'ReplyTo': reply_to}), keys in
 * that order, ", " and ": " separators, ASCII with \uXXXX escapes. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "journal/journal-internal.h"
#include "util/fileio.h"
#include "util/base64.h"
#include "util/pyjson.h"
#include "util/strbuf.h"
#include "util/utf8.h"

/* What plan.json holds besides the body's Base64: the signature, which
 * comes in the message's header frame and so is shorter than the broker's
 * frame_max (128 KiB, 175 KiB in Base64; the largest frame_max RabbitMQ
 * allows, 1 MiB, would still fit in twice this), message_id and
 * reply_to (AMQP short strings: at most 255 bytes, 6 bytes each when
 * written as \ufffd), the keys and separators. */
#define PLAN_FILE_SLACK ((size_t)2 << 20)

size_t journal_plan_file_max(size_t body_max)
{
        return base64_encoded_len(body_max) + PLAN_FILE_SLACK;
}

/* s as a JSON string; bytes that are not UTF-8 become U+FFFD, as Python's
 * errors='replace' would make them, so that a strange AMQP property can
 * never stop a message from being stored. */
static int text_clean(const char *s, size_t len, StrBuf *clean)
{
        int r;

        for (size_t i = 0; i < len;) {
                uint32_t cp;
                int n = utf8_decode(s + i, len - i, &cp);

                if (n < 0) {
                        r = strbuf_append(clean, "\xef\xbf\xbd", 3);
                        n = 1;
                } else {
                        r = strbuf_append(clean, s + i, (size_t)n);
                }
                if (r < 0)
                        return r;
                i += (size_t)n;
        }
        return 0;
}

static int quote_text(StrBuf *out, const char *s)
{
        _cleanup_strbuf_ StrBuf clean = STRBUF_INIT;
        size_t len = strlen(s);
        int r;

        if (utf8_valid(s, len, NULL))
                return pyjson_quote(out, s, len, true);
        r = text_clean(s, len, &clean);
        if (r < 0)
                return r;
        return pyjson_quote(out, clean.data ? clean.data : "", clean.len, true);
}

/* s as a JSON string, as reading plan.json back gives it (bytes that are
 * not UTF-8 became U+FFFD); NULL when out of memory. */
static json_t *text_string(const char *s)
{
        _cleanup_strbuf_ StrBuf clean = STRBUF_INIT;
        size_t len = strlen(s);

        if (utf8_valid(s, len, NULL))
                return json_stringn(s, len);
        if (text_clean(s, len, &clean) < 0)
                return NULL;
        return json_stringn(clean.data ? clean.data : "", clean.len);
}

#define PLAN_HEAD "{\"Data\": \""
#define PLAN_MID  "\", \"Signature\": \""
#define PLAN_TAIL "\", "

/* The end of plan.json, from the comma after the Signature on. */
static int plan_tail(const char *msg_id, const char *reply_to, StrBuf *tail)
{
        int r;

        if ((r = strbuf_puts(tail, PLAN_TAIL "\"ID\": ")) < 0 ||
            (r = quote_text(tail, msg_id ? msg_id : "")) < 0 ||
            (r = strbuf_puts(tail, ", \"ReplyTo\": ")) < 0 ||
            (r = reply_to ? quote_text(tail, reply_to) : strbuf_puts(tail, "null")) < 0 ||
            (r = strbuf_putc(tail, '}')) < 0)
                return r;
        return 0;
}

/* plan.json is written through a buffer of at most this many bytes (a
 * multiple of 4, and below the mmap threshold main.c sets, so that it is
 * heap memory used again): the text of a large body is encoded piece by
 * piece, each piece written while it is in the cache, instead of into a
 * fresh mapping of the whole text's size (3.7 MB for a 2 MiB plan) whose
 * every page faults and is cleared once. A plan.json that fits is
 * written with one write(), as before. */
#define PLAN_CHUNK (64 * 1024)

/* Every this many bytes written, the disk is asked to start writing them
 * (sync_file_range(), a hint that changes no guarantee: the fsync after
 * the last byte still decides). The device then works while the rest is
 * encoded, and the fsync has less left to wait for: on this project's
 * ext4 VM disk, 3.7 MB written in 64 KiB pieces and fsync'd took 4.0 to
 * 4.5 ms (mean of 60), and 3.1 to 3.3 ms with this. */
#define PLAN_KICK (1024 * 1024)

typedef struct PlanOut {
        const void *body, *sig;
        size_t body_len, sig_len;
        const StrBuf *tail;
        char *buf;
        size_t cap, len;
        off_t written, kicked; /* bytes in the file; of those, handed to the disk */
} PlanOut;

static int out_flush(Journal *j, int fd, PlanOut *o)
{
        int r = journal_write_fd(j, fd, o->buf, o->len);

        o->written += (off_t)o->len;
        o->len = 0;
        if (r == 0 && o->written - o->kicked >= PLAN_KICK) {
                /* Best effort: a file system without it loses nothing. */
                (void)j->ops.sync_file_range(fd, o->kicked, o->written - o->kicked,
                                             SYNC_FILE_RANGE_WRITE);
                o->kicked = o->written;
        }
        return r;
}

static int out_put(Journal *j, int fd, PlanOut *o, const char *s, size_t n)
{
        int r;

        if (o->len + n > o->cap && (r = out_flush(j, fd, o)) < 0)
                return r;
        /* A piece larger than the buffer: a huge message ID. */
        if (n > o->cap) {
                o->written += (off_t)n;
                return journal_write_fd(j, fd, s, n);
        }
        memcpy(o->buf + o->len, s, n);
        o->len += n;
        return 0;
}

/* The Base64 text of data, in whole groups of three bytes until the last
 * piece, so that only the end may be padded, as one b64encode() of all. */
static int out_base64(Journal *j, int fd, PlanOut *o, const unsigned char *data, size_t n)
{
        while (n > 0) {
                size_t take = (o->cap - o->len) / 4 * 3;
                int r;

                if (take < n)
                        take -= take % 3;
                else
                        take = n;
                if (take == 0) {
                        if ((r = out_flush(j, fd, o)) < 0)
                                return r;
                        continue;
                }
                o->len += base64_encode(o->buf + o->len, data, take);
                data += take;
                n -= take;
        }
        return 0;
}

/* The text into o's buffer, written to fd each time it is full; the last
 * piece is left in it. A buffer of the text's size is never written. */
static int plan_build(Journal *j, int fd, PlanOut *o)
{
        int r;

        o->len = 0;
        o->written = o->kicked = 0;
        if ((r = out_put(j, fd, o, PLAN_HEAD, strlen(PLAN_HEAD))) < 0 ||
            (r = out_base64(j, fd, o, o->body, o->body_len)) < 0 ||
            (r = out_put(j, fd, o, PLAN_MID, strlen(PLAN_MID))) < 0 ||
            (r = out_base64(j, fd, o, o->sig, o->sig_len)) < 0 ||
            (r = out_put(j, fd, o, o->tail->data, o->tail->len)) < 0)
                return r;
        return 0;
}

static int plan_fill(Journal *j, int fd, void *userdata)
{
        PlanOut *o = userdata;
        int r = plan_build(j, fd, o);

        return r < 0 ? r : out_flush(j, fd, o);
}

/* With the log: the PLAN record of the whole text (built in o's buffer,
 * which holds it all), flushed, then plan.json written without a flush.
 * Returns 0 or -errno. */
static int plan_logged(Journal *j, int entry_fd, const char *ts, PlanOut *o, uint64_t *ret_seq,
                       bool *ret_logged)
{
        int r = plan_build(j, -1, o);

        if (r < 0)
                return r;
        r = journal_wal_append(j, JOURNAL_WAL_PLAN, ts, o->buf, o->len, true, ret_seq);
        if (r < 0)
                return r;
        *ret_logged = true;
        return journal_write_replace(j, entry_fd, JOURNAL_PLAN_TMP, JOURNAL_PLAN_FILE, o->buf,
                                     o->len, ts);
}

/* mkdir a new entry named above every name in use. Entry names are the
 * reference's str(int(time.time() * 10000)); two messages within 100 us, a
 * clock that went back, or a name already taken move on to the next
 * number, so names stay unique and in arrival order. */
static int entry_create(Journal *j, char ts[JOURNAL_TS_MAX])
{
        struct timespec now;
        uint64_t cand;
        int r;

        r = journal_now(j, &now);
        if (r < 0)
                return r;
        cand = (uint64_t)now.tv_sec * 10000 + (uint64_t)now.tv_nsec / 100000;
        if (cand <= j->last_ts)
                cand = j->last_ts + 1;
        for (unsigned tries = 0;; tries++, cand++) {
                snprintf(ts, JOURNAL_TS_MAX, "%" PRIu64, cand);
                if (j->ops.mkdirat(j->plans_fd, ts, 0700) == 0)
                        break;
                if (errno != EEXIST || tries >= 100000)
                        return -errno;
        }
        j->last_ts = cand;
        return 0;
}

/* The plan just stored, as journal_load_plan() would read it back, to be
 * kept for it: the daemon prepares it next, nearly always, and reading a
 * 2 MiB plan back costs about 20 ms of CPU (read, parse, Base64). NULL
 * when out of memory, which costs nothing but the speed. */
static JournalPlan *plan_copy(const void *body, size_t body_len, char **owned, const void *sig,
                              size_t sig_len, const char *msg_id, const char *reply_to)
{
        _cleanup_(journal_plan_freep) JournalPlan *p = calloc(1, sizeof(*p));

        if (!p)
                return NULL;
        p->id = text_string(msg_id ? msg_id : "");
        p->reply_to = reply_to ? text_string(reply_to) : json_null();
        /* With a NUL after it, as read from plan.json: the caller's own
         * buffer when it gives it, else a copy. */
        p->body = owned && *owned ? TAKE_PTR(*owned) : malloc(body_len + 1);
        if (!p->id || !p->reply_to || !p->body)
                return NULL;
        if (p->body != body)
                memcpy(p->body, body, body_len);
        p->body[body_len] = '\0';
        p->body_len = body_len;
        if (sig_len > 0) {
                p->signature = malloc(sig_len);
                if (!p->signature)
                        return NULL;
                memcpy(p->signature, sig, sig_len);
                p->signature_len = sig_len;
        }
        p->stored_here = true;
        return TAKE_PTR(p);
}

/* Whether no plan is kept for reading back. */
static bool hold_free(Journal *j)
{
        bool free_;

        pthread_mutex_lock(&j->lock);
        free_ = !j->held;
        pthread_mutex_unlock(&j->lock);
        return free_;
}

/* In a sealed journal, the new entry's empty result slot: its name
 * becomes durable with plan.json's, at the fsync of the entry, so that
 * journal_put_result() needs one fsync (journal_write_slot()). Without
 * seals nothing tells a whole slot from one a crash tore, and results
 * take the way through a temporary file. Returns 0 or -errno. */
static int slot_create(Journal *j, int entry_fd)
{
        int fd;

        if (!j->sealed)
                return 0;
        fd = j->ops.openat(entry_fd, JOURNAL_RESULT_SLOT,
                           O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return -errno;
        close(fd);
        return 0;
}

static int put_plan(Journal *j, const void *body, size_t body_len, char **owned, const void *sig,
                    size_t sig_len, const char *msg_id, const char *reply_to,
                    char ret_ts[JOURNAL_TS_MAX])
{
        _cleanup_strbuf_ StrBuf tail = STRBUF_INIT;
        _cleanup_free_ char *buf = NULL;
        int entry_fd = -1;
        PlanOut po = {.body = body, .body_len = body_len, .sig = sig, .sig_len = sig ? sig_len : 0};
        _cleanup_(journal_plan_freep) JournalPlan *held = NULL;
        char ts[JOURNAL_TS_MAX];
        JournalIndexEntry *e;
        uint64_t seq = 0;
        bool logged;
        size_t total;
        int r;

        r = plan_tail(msg_id, reply_to, &tail);
        if (r < 0)
                return r;
        po.tail = &tail;
        total = strlen(PLAN_HEAD) + base64_encoded_len(po.body_len) + strlen(PLAN_MID) +
                base64_encoded_len(po.sig_len) + tail.len;
        /* A plan.json too large for a record takes the flushed way, as
         * without the log. */
        logged = j->wal && total <= journal_wal_max(j);
        po.cap = total < PLAN_CHUNK || logged ? total : PLAN_CHUNK;
        buf = po.buf = malloc(po.cap);
        if (!buf)
                return -ENOMEM;

        pthread_mutex_lock(&j->io);
        /* The reserve for answers goes before any plan: while it cannot
         * be made whole, the disk counts as full, and room that pieces of
         * it left for answers is not taken by plans. */
        r = journal_reserve_fill(j);
        if (r == -ENOSPC || r == -EDQUOT)
                goto out;
        r = entry_create(j, ts);
        if (r < 0)
                goto out;
        entry_fd = journal_entry_dir(j, ts);
        if (entry_fd < 0) {
                r = entry_fd;
                goto fail;
        }
        if (logged) {
                logged = false;
                r = plan_logged(j, entry_fd, ts, &po, &seq, &logged);
                if (r < 0)
                        goto fail;
        } else {
                r = slot_create(j, entry_fd);
                if (r < 0)
                        goto fail;
                r = journal_write_atomic_with(j, entry_fd, JOURNAL_PLAN_TMP, JOURNAL_PLAN_FILE,
                                              plan_fill, &po, true, ts);
                if (r < 0)
                        goto fail;
                /* The new entry's name in plans/ must be durable too. */
                r = journal_sync(j, j->plans_fd);
                if (r < 0)
                        goto fail;
        }
        /* Kept for reading back when none is (one at most, so that memory
         * stays bounded by one plan; only io holders fill the slot), and
         * within max_plan_file, beyond which reading it back would call it
         * corrupt. Listed and kept at once, so that it is never read from
         * the file while it is being kept. */
        if (total <= j->max_plan_file && hold_free(j))
                held = plan_copy(body, body_len, owned, sig, po.sig_len, msg_id, reply_to);
        pthread_mutex_lock(&j->lock);
        e = journal_index_add(j, ts);
        if (e) {
                e->plan = true;
                e->ours = true;
                e->slot = j->sealed && !logged;
                if (held) {
                        j->held = TAKE_PTR(held);
                        snprintf(j->held_ts, sizeof(j->held_ts), "%s", ts);
                }
        }
        pthread_mutex_unlock(&j->lock);
        memcpy(ret_ts, ts, JOURNAL_TS_MAX);
        goto out;

fail:
        /* The message will not be acked and comes again: leave no entry
         * that would run it twice. */
        if (entry_fd >= 0) {
                (void)j->ops.unlinkat(entry_fd, JOURNAL_PLAN_FILE, 0);
                if (j->sealed)
                        (void)j->ops.unlinkat(entry_fd, JOURNAL_RESULT_SLOT, 0);
        }
        journal_entry_dir_drop(j, ts);
        (void)j->ops.unlinkat(j->plans_fd, ts, AT_REMOVEDIR);
        if (logged)
                journal_wal_undo(j, seq);
        /* Normally gone; if the clean-up failed too, the index must show
         * the plan that is still there, as a fresh start would. */
        journal_index_probe(j, ts);
out:
        pthread_mutex_unlock(&j->io);
        return r;
}

int journal_put_plan(Journal *j, const void *body, size_t body_len, const void *sig, size_t sig_len,
                     const char *msg_id, const char *reply_to, char ret_ts[JOURNAL_TS_MAX])
{
        return put_plan(j, body, body_len, NULL, sig, sig_len, msg_id, reply_to, ret_ts);
}

int journal_put_plan_owned(Journal *j, char **body, size_t body_len, const void *sig,
                           size_t sig_len, const char *msg_id, const char *reply_to,
                           char ret_ts[JOURNAL_TS_MAX])
{
        return put_plan(j, *body, body_len, body, sig, sig_len, msg_id, reply_to, ret_ts);
}

JournalPlan *journal_plan_free(JournalPlan *p)
{
        if (!p)
                return NULL;
        free(p->body);
        free(p->signature);
        json_decref(p->id);
        json_decref(p->reply_to);
        free(p);
        return NULL;
}

static int corrupt(char **ret_error, const char *fmt, ...) _printf_(2, 3);
static int corrupt(char **ret_error, const char *fmt, ...)
{
        va_list ap;
        int n;

        if (!ret_error)
                return JOURNAL_CORRUPT;
        va_start(ap, fmt);
        n = vasprintf(ret_error, fmt, ap);
        va_end(ap);
        return n < 0 ? -ENOMEM : JOURNAL_CORRUPT;
}

/* The two Base64 fields of a plan.json, as spans of its text. A NULL
 * sig means there is no Signature (absent or null). */
typedef struct PlanFields {
        const char *data, *sig;
        size_t data_len, sig_len;
        json_t *rest; /* an object holding at least ID and ReplyTo, when present */
} PlanFields;

/* A string field of what json.dumps writes, at *p: its text up to the
 * closing quote, when it holds no escapes (Base64 never does). */
static bool split_string(const char **p, const char *end, const char **ret, size_t *ret_len)
{
        const char *q = memchr(*p, '"', (size_t)(end - *p));

        if (!q || memchr(*p, '\\', (size_t)(q - *p)))
                return false;
        *ret = *p;
        *ret_len = (size_t)(q - *p);
        *p = q;
        return true;
}

static bool split_literal(const char **p, const char *end, const char *lit)
{
        size_t n = strlen(lit);

        if ((size_t)(end - *p) < n || memcmp(*p, lit, n) != 0)
                return false;
        *p += n;
        return true;
}

/* The fast way: both agents write {"Data": "...", "Signature": "...",
 * "ID": ..., "ReplyTo": ...}, so the Base64 is taken from the text as it
 * stands and only the short rest goes through jansson, whose parser needs
 * about 50 ns for each byte of a long string (185 ms for a 2.8 MB body).
 * text must be writable: the rest is parsed in place, as "{" + rest. */
static bool plan_split(char *text, size_t len, PlanFields *f)
{
        const char *p = text, *end = text + len;
        json_t *rest;

        if (!split_literal(&p, end, PLAN_HEAD) || !split_string(&p, end, &f->data, &f->data_len) ||
            !split_literal(&p, end, PLAN_MID) || !split_string(&p, end, &f->sig, &f->sig_len) ||
            !split_literal(&p, end, PLAN_TAIL))
                return false;
        /* The space after the comma becomes the rest's opening brace. */
        text[p - 1 - text] = '{';
        rest = pyjson_loadb(p - 1, (size_t)(end - (p - 1)), 0, NULL);
        text[p - 1 - text] = ' ';
        /* Keys given twice are the full parser's business (the last one
         * wins, as in Python). */
        if (!json_is_object(rest) || json_object_get(rest, "Data") ||
            json_object_get(rest, "Signature")) {
                json_decref(rest);
                return false;
        }
        f->rest = rest;
        return true;
}

/* The slow way, for any other JSON text. */
static int plan_parse(const char *text, size_t len, PlanFields *f, char **ret_error)
{
        json_error_t jerr;
        const json_t *data, *sig;

        f->rest = pyjson_loadb(text, len, 0, &jerr);
        if (!f->rest)
                return corrupt(ret_error, "plan.json is not JSON: %s (line %d, column %d)",
                               jerr.text, jerr.line, jerr.column);
        if (!json_is_object(f->rest))
                return corrupt(ret_error, "plan.json is not a JSON object");
        data = json_object_get(f->rest, "Data");
        sig = json_object_get(f->rest, "Signature");
        if (!json_is_string(data))
                return corrupt(ret_error, "plan.json has no \"Data\" string");
        f->data = json_string_value(data);
        f->data_len = json_string_length(data);
        /* A missing or null Signature is no signature. */
        if (sig && !json_is_null(sig)) {
                if (!json_is_string(sig))
                        return corrupt(ret_error, "the \"Signature\" of plan.json is not a string");
                f->sig = json_string_value(sig);
                f->sig_len = json_string_length(sig);
        }
        return 0;
}

static int plan_decode(const PlanFields *f, JournalPlan *p, char **ret_error)
{
        const json_t *id = json_object_get(f->rest, "ID");
        const json_t *reply_to = json_object_get(f->rest, "ReplyTo");
        char *bytes;
        size_t n;
        int r;

        /* Only what b64encode writes is read. The reference decodes with
         * the lenient b64decode, but both agents write plan.json with
         * b64encode, so any other text is a damaged file. */
        r = base64_decode_canonical(f->data, f->data_len, &p->body, &p->body_len);
        if (r == -EINVAL)
                return corrupt(ret_error, "the \"Data\" of plan.json is not Base64");
        if (r < 0)
                return r;
        if (f->sig) {
                r = base64_decode_canonical(f->sig, f->sig_len, &bytes, &n);
                if (r == -EINVAL)
                        return corrupt(ret_error, "the \"Signature\" of plan.json is not Base64");
                if (r < 0)
                        return r;
                if (n > 0) {
                        p->signature = (unsigned char *)bytes;
                        p->signature_len = n;
                } else {
                        free(bytes);
                }
        }

        /* The reference always writes both keys; a file without them
         * gets the values a message without the properties has. */
        p->id = id ? json_incref((json_t *)id) : json_string("");
        p->reply_to = reply_to ? json_incref((json_t *)reply_to) : json_null();
        if (!p->id || !p->reply_to)
                return -ENOMEM;
        return 0;
}

int journal_plan_read(Journal *j, const char *ts, JournalPlan **ret, char **ret_error)
{
        _cleanup_(journal_plan_freep) JournalPlan *p = NULL;
        _cleanup_free_ char *text = NULL;
        char path[JOURNAL_TS_MAX + sizeof(JOURNAL_PLAN_FILE)];
        PlanFields f = {NULL};
        size_t len;
        int r;

        if (!journal_ts_valid(ts))
                return -EINVAL;
        snprintf(path, sizeof(path), "%s/%s", ts, JOURNAL_PLAN_FILE);
        r = journal_seal_read_at(j, j->plans_fd, path, JOURNAL_PLAN_FILE, ts, j->max_plan_file,
                                 &text, &len);
        if (r == JOURNAL_FORGED) {
                journal_seal_mark(j, ts, JOURNAL_PLAN_FILE);
                r = corrupt(ret_error, "plan.json does not carry the agent's seal (planted or "
                                       "altered by a process without its key)");
                return r < 0 ? r : JOURNAL_FORGED;
        }
        if (r == -EFBIG)
                return corrupt(ret_error, "plan.json is larger than %zu bytes", j->max_plan_file);
        if (r == -EINVAL)
                return corrupt(ret_error, "plan.json is not a regular file");
        if (r < 0)
                return r;
        /* Murano-agent 7.0 to 10.0 acked a message and left an empty
         * plan.json (spec 10.1), after which it could never start again. */
        if (len == 0)
                return corrupt(ret_error, "plan.json is empty");
        if (!plan_split(text, len, &f)) {
                f = (PlanFields){NULL};
                r = plan_parse(text, len, &f, ret_error);
                if (r != 0)
                        goto out;
        }
        p = calloc(1, sizeof(*p));
        if (!p) {
                r = -ENOMEM;
                goto out;
        }
        r = plan_decode(&f, p, ret_error);
        if (r == 0)
                *ret = TAKE_PTR(p);
out:
        json_decref(f.rest);
        return r;
}

int journal_load_plan(Journal *j, const char *ts, JournalPlan **ret, char **ret_error)
{
        const JournalIndexEntry *e;
        bool stored_here;
        int r;

        if (!journal_ts_valid(ts))
                return -EINVAL;
        pthread_mutex_lock(&j->lock);
        if (j->held && streq(j->held_ts, ts)) {
                *ret = TAKE_PTR(j->held);
                pthread_mutex_unlock(&j->lock);
                return 0;
        }
        e = journal_index_get(j, ts);
        stored_here = e && e->ours;
        pthread_mutex_unlock(&j->lock);
        r = journal_plan_read(j, ts, ret, ret_error);
        if (r == 0)
                (*ret)->stored_here = stored_here;
        return r;
}

JournalResult *journal_result_free(JournalResult *r)
{
        if (!r)
                return NULL;
        free(r->text);
        json_decref(r->source_id);
        json_decref(r->reply_to);
        free(r);
        return NULL;
}

/* A result of text (len bytes) with its ids: those given, copied, or with
 * ids NULL those the text holds. Returns 0, JOURNAL_CORRUPT when ids is
 * NULL and the text is not a JSON object (the result has the text and no
 * ids), or -ENOMEM. */
static int result_new(const char *text, size_t len, const JournalResultIds *ids,
                      JournalResult **ret)
{
        _cleanup_(journal_result_freep) JournalResult *r = calloc(1, sizeof(*r));
        _cleanup_json_ json_t *doc = NULL;
        const json_t *sid, *rt;
        int corrupt = 0;

        if (!r || !(r->text = malloc(len + 1)))
                return -ENOMEM;
        memcpy(r->text, text, len);
        r->text[len] = '\0';
        r->len = len;
        if (ids) {
                sid = ids->source_id;
                rt = ids->reply_to;
        } else {
                doc = pyjson_loadb(text, len, 0, NULL);
                corrupt = json_is_object(doc) ? 0 : JOURNAL_CORRUPT;
                sid = json_object_get(doc, "SourceID");
                rt = json_object_get(doc, "ReplyTo");
        }
        if ((sid && !(r->source_id = json_deep_copy(sid))) ||
            (rt && !(r->reply_to = json_deep_copy(rt))))
                return -ENOMEM;
        *ret = TAKE_PTR(r);
        return corrupt;
}

/* A copy of r, made under lock; NULL when out of memory. */
static JournalResult *result_copy(const JournalResult *r)
{
        JournalResult *c = NULL;
        JournalResultIds ids = {r->source_id, r->reply_to};

        return result_new(r->text, r->len, &ids, &c) == 0 ? c : NULL;
}

/* With the log: the RESULT record, flushed, then result.json replaced
 * without a flush (a slot left by the way without the log goes). Returns
 * 0 or -errno, with result.json as before. */
static int result_logged(Journal *j, int entry_fd, const char *ts, const char *text, size_t len)
{
        const JournalIndexEntry *e = journal_index_get(j, ts);
        uint64_t seq;
        int r = journal_wal_append(j, JOURNAL_WAL_RESULT, ts, text, len, true, &seq);

        if (r < 0)
                return r;
        do
                r = journal_write_replace(j, entry_fd, JOURNAL_RESULT_TMP, JOURNAL_RESULT_FILE,
                                          text, len, ts);
        while (journal_reserve_retry(j, r));
        if (r < 0)
                journal_wal_undo(j, seq);
        else if (!e || e->slot)
                (void)j->ops.unlinkat(entry_fd, JOURNAL_RESULT_SLOT, 0);
        return r;
}

int journal_put_result(Journal *j, const char *ts, const char *text, size_t len,
                       const JournalResultIds *ids)
{
        int entry_fd = -1;
        JournalIndexEntry *e;
        int r;

        if (!journal_ts_valid(ts))
                return -EINVAL;
        pthread_mutex_lock(&j->io);
        entry_fd = journal_entry_dir(j, ts);
        if (entry_fd < 0)
                r = entry_fd;
        else if (j->wal && len <= journal_wal_max(j))
                r = result_logged(j, entry_fd, ts, text, len);
        else
                do {
                        r = j->sealed ? journal_write_slot(j, entry_fd, JOURNAL_RESULT_SLOT,
                                                           JOURNAL_RESULT_FILE, text, len, ts)
                                      : 1;
                        /* No slot (an entry of an earlier version, an
                         * answer's, or a journal without seals). */
                        if (r == 1)
                                r = journal_write_atomic(j, entry_fd, JOURNAL_RESULT_TMP,
                                                         JOURNAL_RESULT_FILE, text, len, true, ts);
                } while (journal_reserve_retry(j, r));
        e = r == 0 ? journal_index_get(j, ts) : NULL;
        if (e) {
                JournalResult *kept = NULL;

                /* Not kept when the text is no document: reading it
                 * back says so (JOURNAL_CORRUPT). */
                if (result_new(text, len, ids, &kept) != 0)
                        kept = journal_result_free(kept);
                pthread_mutex_lock(&j->lock);
                e->result = true;
                e->slot = false;
                journal_index_keep(j, e, kept);
                pthread_mutex_unlock(&j->lock);
                e->id_known = false;
        } else if (entry_fd >= 0) {
                journal_index_probe(j, ts);
        }
        pthread_mutex_unlock(&j->io);
        return r;
}

/* An entry holding only result.json; the caller holds io. */
static int answer_put(Journal *j, const char *text, size_t len, char ts[JOURNAL_TS_MAX])
{
        int entry_fd = -1;
        JournalResult *kept = NULL;
        JournalIndexEntry *e;
        bool logged = false;
        uint64_t seq = 0;
        int r;

        r = entry_create(j, ts);
        if (r < 0)
                return r;
        entry_fd = journal_entry_dir(j, ts);
        if (entry_fd < 0) {
                r = entry_fd;
                goto fail;
        }
        if (j->wal && len <= journal_wal_max(j)) {
                /* The ANSWER record, flushed, then result.json without a
                 * flush. */
                r = journal_wal_append(j, JOURNAL_WAL_ANSWER, ts, text, len, true, &seq);
                if (r < 0)
                        goto fail;
                logged = true;
                r = journal_write_replace(j, entry_fd, JOURNAL_RESULT_TMP, JOURNAL_RESULT_FILE,
                                          text, len, ts);
        } else {
                r = journal_write_atomic(j, entry_fd, JOURNAL_RESULT_TMP, JOURNAL_RESULT_FILE, text,
                                         len, true, ts);
                if (r == 0)
                        r = journal_sync(j, j->plans_fd);
        }
        if (r < 0)
                goto fail;
        if (result_new(text, len, NULL, &kept) != 0)
                kept = journal_result_free(kept);
        pthread_mutex_lock(&j->lock);
        e = journal_index_add(j, ts);
        if (e) {
                e->result = true;
                journal_index_keep(j, e, TAKE_PTR(kept));
        }
        pthread_mutex_unlock(&j->lock);
        journal_result_free(kept);
        return 0;
fail:
        if (entry_fd >= 0)
                (void)j->ops.unlinkat(entry_fd, JOURNAL_RESULT_FILE, 0);
        journal_entry_dir_drop(j, ts);
        (void)j->ops.unlinkat(j->plans_fd, ts, AT_REMOVEDIR);
        if (logged)
                journal_wal_undo(j, seq);
        journal_index_probe(j, ts);
        return r;
}

int journal_put_answer(Journal *j, const char *text, size_t len, char ret_ts[JOURNAL_TS_MAX])
{
        char ts[JOURNAL_TS_MAX];
        int r;

        pthread_mutex_lock(&j->io);
        do
                r = answer_put(j, text, len, ts);
        while (journal_reserve_retry(j, r));
        pthread_mutex_unlock(&j->io);
        if (r == 0)
                memcpy(ret_ts, ts, JOURNAL_TS_MAX);
        return r;
}

/* The result kept in memory for entry ts, copied: 1, 0 when none is
 * kept, or -ENOMEM. */
static int result_kept(Journal *j, const char *ts, JournalResult **ret)
{
        const JournalIndexEntry *e;
        int r = 0;

        pthread_mutex_lock(&j->lock);
        e = journal_index_get(j, ts);
        if (e && e->kept) {
                *ret = result_copy(e->kept);
                r = *ret ? 1 : -ENOMEM;
        }
        pthread_mutex_unlock(&j->lock);
        return r;
}

static int result_read(Journal *j, const char *ts, char **ret_text, size_t *ret_len)
{
        char path[JOURNAL_TS_MAX + sizeof(JOURNAL_RESULT_FILE)];
        int r;

        snprintf(path, sizeof(path), "%s/%s", ts, JOURNAL_RESULT_FILE);
        /* Results are written by the agent itself, so the cap is only
         * there to refuse a file that some accident made huge. */
        r = journal_seal_read_at(j, j->plans_fd, path, JOURNAL_RESULT_FILE, ts,
                                 JOURNAL_MAX_RESULT_FILE, ret_text, ret_len);
        if (r == JOURNAL_FORGED)
                journal_seal_mark(j, ts, JOURNAL_RESULT_FILE);
        return r;
}

int journal_get_result(Journal *j, const char *ts, JournalResult **ret)
{
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r;

        if (!journal_ts_valid(ts))
                return -EINVAL;
        r = result_kept(j, ts, ret);
        if (r != 0)
                return r < 0 ? r : 0;
        r = result_read(j, ts, &text, &len);
        if (r != 0)
                return r;
        return result_new(text, len, NULL, ret);
}

int journal_load_result(Journal *j, const char *ts, char **ret_text, size_t *ret_len)
{
        _cleanup_(journal_result_freep) JournalResult *kept = NULL;
        int r;

        if (!journal_ts_valid(ts))
                return -EINVAL;
        r = result_kept(j, ts, &kept);
        if (r == 0)
                return result_read(j, ts, ret_text, ret_len);
        if (r < 0)
                return r;
        *ret_text = TAKE_PTR(kept->text);
        *ret_len = kept->len;
        return 0;
}
