/* Long runs of plain text inside JSON strings, kept away from jansson.
 *
 * Why this is not jansson's own API: jansson lexes strings a byte at a time
 * (56-95 MB/s here; bench/bench-plan-json), so a plan that carries a 2.8 MB
 * Base64 file spends some 30 ms in one string, more than the 2 MiB plan's
 * round-trip target, and jansson has no way to take a string's text as it
 * is (no hook for string values, no faster lexer to ask for). What is done
 * here is only that: a run of a string's text that holds no backslash, no
 * quote and no control character is its own value (the whole text has
 * already passed the UTF-8 check), so jansson need not see it. plan-json.c
 * finds such runs while it scans the brackets, jansson parses a copy of the
 * text in which each run is replaced by a placeholder (everything else,
 * syntax, escapes, keys and numbers, is jansson's), and the runs' bytes are
 * put back into the tree with json_string_setn_nocheck().
 *
 * A placeholder is "\u0000<index>\u0000": an escaped NUL cannot come from
 * the input, because the caller takes this path only when the six bytes
 * \u0000 appear nowhere in it, and a raw NUL byte was refused before. So
 * every NUL in a parsed string comes from a placeholder. The parse runs
 * with JSON_ALLOW_NUL for the placeholders' sake; NULs in keys stay errors,
 * and runs are never taken from keys anyway.
 *
 * jansson's memory rule: json_string_setn_nocheck() copies its argument. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan-internal.h"
#include "util/bigmem.h"

/* "\u0000", the decimal index, "\u0000" in the text; NUL, index, NUL once
 * jansson has decoded it. */
#define ESCAPED_NUL     "\\u0000"
#define ESCAPED_NUL_LEN (sizeof(ESCAPED_NUL) - 1)
#define INDEX_MAX_LEN   20

void plan_runs_clear(PlanRuns *runs)
{
        free(runs->run);
        *runs = (PlanRuns){0};
}

bool plan_runs_plain(const char *text, size_t len)
{
        /* Eight bytes at a time: (w - 0x20 in each byte) & ~w & 0x80 in each
         * byte is non-zero exactly when some byte of w is below 0x20 (a
         * classic bit trick, exact as a yes/no test). Without it the byte
         * loop costs about 1.5 ms on 2.8 MB with gcc -O2, which does not
         * vectorize it. */
        const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
        const unsigned char *p = (const unsigned char *)text;
        uint64_t any = 0;
        size_t i = 0;

        for (; i + 64 <= len; i += 64) {
                for (size_t k = 0; k < 64; k += 8) {
                        uint64_t w;
                        memcpy(&w, p + i + k, sizeof(w));
                        any |= (w - 0x20 * ones) & ~w & highs;
                }
                if (any)
                        return false;
        }
        for (; i < len; i++)
                if (p[i] < 0x20)
                        return false;
        return true;
}

int plan_runs_add(PlanRuns *runs, size_t start, size_t len)
{
        if (grow_array(&runs->run, &runs->cap, runs->n, sizeof(*runs->run), 8) < 0)
                return -ENOMEM;
        runs->run[runs->n++] = (PlanRun){.start = start, .len = len};
        return 0;
}

int plan_runs_stand_in(const char *data, size_t len, const PlanRuns *runs, char **ret,
                       size_t *ret_len)
{
        size_t size = len + 1, from = 0, out = 0;
        char *text;

        /* Only what is left of the text: for a plan that is mostly one
         * long run, a few hundred bytes instead of a mapping of its size. */
        for (size_t i = 0; i < runs->n; i++) {
                size -= runs->run[i].len;
                size += 2 * ESCAPED_NUL_LEN + INDEX_MAX_LEN;
        }
        text = malloc(size);
        if (!text)
                return -ENOMEM;

        for (size_t i = 0; i < runs->n; i++) {
                const PlanRun *run = &runs->run[i];
                int n;

                memcpy(text + out, data + from, run->start - from);
                out += run->start - from;
                n = snprintf(text + out, size - out, ESCAPED_NUL "%zu" ESCAPED_NUL, i);
                out += (size_t)n;
                from = run->start + run->len;
        }
        memcpy(text + out, data + from, len - from);
        out += len - from;
        text[out] = '\0';
        *ret = text;
        *ret_len = out;
        return 0;
}

typedef struct Restore {
        const char *data;
        const PlanRuns *runs;
        bool *seen; /* one per run */
        size_t found;
        bool keep;   /* leave the Files' bodies as they are (plan_parse_json_kept()) */
        size_t kept; /* strings left so */
} Restore;

/* The index of the placeholder at p (a NUL) in [p, end), among n runs,
 * and the end of the placeholder in *ret_next; -1 when it is not one. */
static long placeholder_index(size_t n, const char *p, const char *end, const char **ret_next)
{
        const char *close = memchr(p + 1, '\0', (size_t)(end - p - 1));
        size_t index = 0;

        if (!close || close == p + 1 || close - p - 1 > INDEX_MAX_LEN)
                return -1;
        for (const char *d = p + 1; d < close; d++) {
                if (*d < '0' || *d > '9')
                        return -1;
                index = 10 * index + (size_t)(*d - '0');
                if (index >= n) /* and before it can overflow */
                        return -1;
        }
        *ret_next = close + 1;
        return (long)index;
}

/* placeholder_index() among st's runs; when claim is set, each run may be
 * claimed once: a second sight is -1 too. */
static long placeholder(Restore *st, const char *p, const char *end, bool claim,
                        const char **ret_next)
{
        long index = placeholder_index(st->runs->n, p, end, ret_next);

        if (index < 0 || !claim)
                return index;
        if (st->seen[index])
                return -1;
        st->seen[index] = true;
        st->found++;
        return index;
}

/* Write the value's pieces (the stand-in's text between placeholders, and
 * the runs) from p on into out; the placeholders were claimed already. */
static void put_pieces(Restore *st, const char *p, const char *end, char *out)
{
        const char *next;

        for (; p < end; p = next) {
                const char *nul = memchr(p, '\0', (size_t)(end - p));
                const PlanRun *run;

                if (!nul) {
                        memcpy(out, p, (size_t)(end - p));
                        break;
                }
                memcpy(out, p, (size_t)(nul - p));
                out += nul - p;
                run = &st->runs->run[placeholder(st, nul, end, false, &next)];
                memcpy(out, st->data + run->start, run->len);
                out += run->len;
        }
}

/* Put the runs back into one string value. 0, 1 when a placeholder is not
 * as written, or -ENOMEM. A value that is one run takes its text from the
 * plan itself. A value of several pieces (a run and the "\n" after it, as
 * the engine's Base64 files end) is put together in a block of its own,
 * which jansson copies: a Files entry's Body, the one such value of any
 * size, is kept in the plan's text instead (plan_parse_json_kept()). */
static int restore_string(Restore *st, json_t *string, bool keep)
{
        const char *value = json_string_value(string), *end, *p, *next = NULL;
        size_t len = json_string_length(string), total = 0, pieces = 0;
        const PlanRun *run = NULL;
        _cleanup_free_ char *whole = NULL;
        long index;

        end = value + len;
        if (!memchr(value, '\0', len))
                return 0;

        /* Claim the placeholders and measure the value. */
        for (p = value; p < end; p = next) {
                const char *nul = memchr(p, '\0', (size_t)(end - p));

                if (!nul) {
                        total += (size_t)(end - p);
                        pieces++;
                        break;
                }
                if (nul > p)
                        pieces++;
                total += (size_t)(nul - p);
                index = placeholder(st, nul, end, true, &next);
                if (index < 0)
                        return 1;
                run = &st->runs->run[index];
                total += run->len;
                pieces++;
        }

        if (keep) {
                st->kept++;
                return 0;
        }
        /* The usual case, a value that is one run, is its text. */
        if (pieces == 1)
                return json_string_setn_nocheck(string, st->data + run->start, run->len) ? -ENOMEM
                                                                                         : 0;

        whole = big_malloc(total ? total : 1);
        if (!whole)
                return -ENOMEM;
        put_pieces(st, value, end, whole);
        return json_string_setn_nocheck(string, whole, total) ? -ENOMEM : 0;
}

/* Where a value is, as far as plan_parse_json_kept() cares: a Files
 * entry's Body is doc.Files.<id>.Body. */
typedef enum Place {
        PLACE_OTHER,
        PLACE_ROOT,
        PLACE_FILES,
        PLACE_FILE,
        PLACE_BODY,
} Place;

static Place place_of(Place parent, const char *key)
{
        switch (parent) {
        case PLACE_ROOT:
                return streq(key, "Files") ? PLACE_FILES : PLACE_OTHER;
        case PLACE_FILES:
                return PLACE_FILE;
        case PLACE_FILE:
                return streq(key, "Body") ? PLACE_BODY : PLACE_OTHER;
        default:
                return PLACE_OTHER;
        }
}

/* Depth-first over the tree; the depth is bounded by the bracket scan's
 * limit (at most PLAN_JANSSON_MAX_DEPTH levels). */
static int restore_value(Restore *st, json_t *v, Place place)
{
        const char *key;
        json_t *child;
        size_t i;
        int r;

        switch (json_typeof(v)) {
        case JSON_STRING:
                return restore_string(st, v, st->keep && place == PLACE_BODY);
        case JSON_ARRAY:
                json_array_foreach (v, i, child) {
                        r = restore_value(st, child, PLACE_OTHER);
                        if (r != 0)
                                return r;
                }
                return 0;
        case JSON_OBJECT:
                json_object_foreach (v, key, child) {
                        r = restore_value(st, child, place_of(place, key));
                        if (r != 0)
                                return r;
                }
                return 0;
        default:
                return 0;
        }
}

int plan_runs_restore(json_t *doc, const char *data, const PlanRuns *runs, bool keep,
                      size_t *ret_kept)
{
        _cleanup_free_ bool *seen = calloc(runs->n ? runs->n : 1, sizeof(*seen));
        Restore st = {.data = data, .runs = runs, .seen = seen, .keep = keep};
        int r;

        if (!seen)
                return -ENOMEM;
        r = restore_value(&st, doc, PLACE_ROOT);
        if (r != 0)
                return r;
        if (st.found != runs->n)
                return 1;
        *ret_kept = st.kept;
        return 0;
}

int plan_runs_pieces(const char *data, const PlanRuns *runs, const json_t *s,
                     int (*fn)(void *userdata, const char *piece, size_t len), void *userdata)
{
        const char *value = json_string_value(s), *p, *end, *next;
        int r;

        if (!value)
                return -EINVAL;
        end = value + json_string_length(s);
        for (p = value; p < end; p = next) {
                const char *nul = memchr(p, '\0', (size_t)(end - p));
                long index;

                if (!nul)
                        return fn(userdata, p, (size_t)(end - p));
                if (nul > p && (r = fn(userdata, p, (size_t)(nul - p))) != 0)
                        return r;
                index = runs ? placeholder_index(runs->n, nul, end, &next) : -1;
                if (index < 0)
                        return -EINVAL;
                r = fn(userdata, data + runs->run[index].start, runs->run[index].len);
                if (r != 0)
                        return r;
        }
        return 0;
}
