/* JSON text to jansson documents, keeping integers beyond 64 bits.
 *
 * jansson refuses an integer that does not fit json_int_t, where Python's
 * json.loads reads it exactly. Rather than parse JSON ourselves, we let
 * jansson parse two copies of the text of the same length, in which every
 * integer token beyond 64 bits is replaced:
 *
 * 1. by "0" and spaces, parsed with the caller's flags: this parse decides
 *    whether the text is valid, and its errors (positions included) are
 *    the text's own, since a number stands where the number stood;
 * 2. by a placeholder string "\u0000<index>   ", parsed with
 *    JSON_ALLOW_NUL, whose tree becomes the result once each placeholder
 *    is turned into a big-integer string (pyjson.h).
 *
 * A placeholder is recognised by its NUL, so the second parse is only
 * sound when the text has no escaped NUL of its own (a raw NUL is not
 * JSON): a text with both big integers and "\u0000" is refused with a
 * message saying so. Plans refuse NULs anyway; json.loads in a Body is the
 * only caller that meets it.
 *
 * CPython's limit on decimal conversion applies as in json.loads: more
 * than 4300 digits is an error.
 *
 * jansson's memory rule: json_loadb() hands out a new reference. */
#include "util/pyjson.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/macro.h"

/* CPython 3.11's sys.int_info.default_max_str_digits. */
#define MAX_STR_DIGITS 4300

typedef struct BigToken {
        size_t start, len;
} BigToken;

typedef struct BigTokens {
        BigToken *tok;
        size_t n, cap;
} BigTokens;

static void tokens_clear(BigTokens *t)
{
        free(t->tok);
}

static bool is_num_char(char c)
{
        return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

/* Is s[0..len) an integer (-?[1-9][0-9]*) outside int64? */
static bool is_big_integer(const char *s, size_t len)
{
        size_t neg = len > 0 && s[0] == '-', digits = len - neg;

        if (digits < 19 || s[neg] < '1' || s[neg] > '9')
                return false;
        for (size_t i = neg; i < len; i++)
                if (s[i] < '0' || s[i] > '9')
                        return false;
        if (digits > 19)
                return true;
        return memcmp(s + neg, neg ? "9223372036854775808" : "9223372036854775807", 19) > 0;
}

/* The offset of the first c in text[from..len), or len. */
static size_t find_byte(const char *text, size_t from, size_t len, char c)
{
        const char *p = from < len ? memchr(text + from, c, len - from) : NULL;

        return p ? (size_t)(p - text) : len;
}

/* Collect the big integer tokens outside strings. Strings are skipped with
 * memchr (a large plan is mostly one long string); each search starts past
 * the last one found, so the scan stays linear. Returns 0 or -ENOMEM. */
static int find_big(const char *text, size_t len, BigTokens *t)
{
        size_t next_quote = 0, next_backslash = 0, i = 0;

        while (i < len) {
                char c = text[i];
                if (c == '"') {
                        /* Inside a string: to its closing quote. */
                        i++;
                        for (;;) {
                                if (next_quote < i)
                                        next_quote = find_byte(text, i, len, '"');
                                if (next_backslash < i)
                                        next_backslash = find_byte(text, i, len, '\\');
                                if (next_backslash < next_quote) {
                                        i = next_backslash + 2;
                                        continue;
                                }
                                i = next_quote + 1;
                                break;
                        }
                } else if (c == '-' || (c >= '0' && c <= '9')) {
                        size_t j = i;
                        while (j < len && is_num_char(text[j]))
                                j++;
                        if (is_big_integer(text + i, j - i)) {
                                if (grow_array(&t->tok, &t->cap, t->n, sizeof(*t->tok), 4) < 0)
                                        return -ENOMEM;
                                t->tok[t->n++] = (BigToken){.start = i, .len = j - i};
                        }
                        i = j;
                } else {
                        i++;
                }
        }
        return 0;
}

/* An error in jansson's form at text offset pos (1-based line and column,
 * as jansson counts them: columns in bytes). */
static void set_error(json_error_t *err, const char *text, size_t pos, enum json_error_code code,
                      const char *fmt, ...) _printf_(5, 6);
static void set_error(json_error_t *err, const char *text, size_t pos, enum json_error_code code,
                      const char *fmt, ...)
{
        int line = 1, column = 0;
        va_list ap;

        if (!err)
                return;
        for (size_t i = 0; i < pos; i++) {
                if (text[i] == '\n') {
                        line++;
                        column = 0;
                } else {
                        column++;
                }
        }
        memset(err, 0, sizeof(*err));
        va_start(ap, fmt);
        vsnprintf(err->text, sizeof(err->text), fmt, ap);
        va_end(ap);
        err->text[JSON_ERROR_TEXT_LENGTH - 1] = (char)code;
        snprintf(err->source, sizeof(err->source), "<buffer>");
        err->line = line;
        err->column = column + 1;
        err->position = (int)pos;
}

typedef struct Restore {
        const char *text;
        const BigTokens *t;
        bool *seen;
        size_t found;
        bool bad;
} Restore;

/* The token index of a placeholder string ("\0", digits, spaces), or -1. */
static long placeholder_index(const Restore *st, const json_t *v)
{
        const char *s = json_string_value(v);
        size_t len = json_string_length(v), i = 1, index = 0;

        if (len < 2 || s[0] != '\0')
                return -1;
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
                index = 10 * index + (size_t)(s[i] - '0');
                if (index >= st->t->n)
                        return -1;
        }
        if (i == 1)
                return -1;
        for (; i < len; i++)
                if (s[i] != ' ')
                        return -1;
        return (long)index;
}

static json_t *restore(Restore *st, json_t *v)
{
        const char *key;
        json_t *child, *r;
        size_t i;
        long index;

        switch (json_typeof(v)) {
        case JSON_STRING:
                index = placeholder_index(st, v);
                if (index < 0)
                        return NULL;
                if (st->seen[index]) {
                        st->bad = true;
                        return NULL;
                }
                st->seen[index] = true;
                st->found++;
                return pyjson_bigint_new(st->text + st->t->tok[index].start, st->t->tok[index].len);
        case JSON_ARRAY:
                json_array_foreach (v, i, child) {
                        r = restore(st, child);
                        if (r && json_array_set_new(v, i, r) < 0)
                                st->bad = true;
                }
                return NULL;
        case JSON_OBJECT:
                json_object_foreach (v, key, child) {
                        r = restore(st, child);
                        if (r && json_object_set_new_nocheck(v, key, r) < 0)
                                st->bad = true;
                }
                return NULL;
        default:
                return NULL;
        }
}

json_t *pyjson_loadb(const char *text, size_t len, size_t flags, json_error_t *err)
{
        _cleanup_(tokens_clear) BigTokens t = {0};
        _cleanup_free_ char *copy = NULL;
        _cleanup_free_ bool *seen = NULL;
        json_t *doc;
        Restore st;

        if (find_big(text, len, &t) < 0)
                goto nomem;
        if (t.n == 0)
                return json_loadb(text, len, flags, err);

        for (size_t i = 0; i < t.n; i++) {
                size_t digits = t.tok[i].len - (text[t.tok[i].start] == '-');
                if (digits > MAX_STR_DIGITS) {
                        set_error(err, text, t.tok[i].start + t.tok[i].len,
                                  json_error_numeric_overflow,
                                  "Exceeds the limit (4300 digits) for integer string "
                                  "conversion: value has %zu digits",
                                  digits);
                        return NULL;
                }
        }

        /* 1. The text with each big integer as 0: valid or not, and where. */
        copy = malloc(len + 1);
        if (!copy)
                goto nomem;
        memcpy(copy, text, len);
        copy[len] = '\0';
        for (size_t i = 0; i < t.n; i++) {
                memset(copy + t.tok[i].start, ' ', t.tok[i].len);
                copy[t.tok[i].start] = '0';
        }
        doc = json_loadb(copy, len, flags, err);
        if (!doc)
                return NULL;
        json_decref(doc);
        if (memmem(text, len, "\\u0000", 6)) {
                set_error(err, text, t.tok[0].start, json_error_invalid_syntax,
                          "integers beyond 64 bits cannot be read from a text that also holds "
                          "\\u0000 escapes");
                return NULL;
        }

        /* 2. The text with placeholders: the tree. Each token is at least
         * 19 bytes, room for the quotes, the escaped NUL and any index. */
        for (size_t i = 0; i < t.n; i++) {
                char *p = copy + t.tok[i].start;
                int n = snprintf(p, t.tok[i].len, "\"\\u0000%zu", i);
                memset(p + n, ' ', t.tok[i].len - (size_t)n - 1);
                p[t.tok[i].len - 1] = '"';
        }
        doc = json_loadb(copy, len, flags | JSON_ALLOW_NUL, err);
        if (!doc)
                return NULL;
        seen = calloc(t.n, sizeof(*seen));
        if (!seen) {
                json_decref(doc);
                goto nomem;
        }
        st = (Restore){.text = text, .t = &t, .seen = seen};
        {
                json_t *top = restore(&st, doc);
                if (top) {
                        json_decref(doc);
                        doc = top;
                }
        }
        if (st.bad || st.found != t.n) {
                /* A placeholder went astray: memory ran out while putting
                 * the numbers in, since the text has no NUL of its own. */
                json_decref(doc);
                goto nomem;
        }
        return doc;

nomem:
        set_error(err, text, 0, json_error_out_of_memory, "out of memory");
        return NULL;
}
