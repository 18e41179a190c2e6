/* exec-yaml: the text PyYAML's yaml.dump(data, default_flow_style=False)
 * writes, for the values a plan can hand to the Puppet executor.
 *
 * The reference writes Puppet's default.yaml with PyYAML's full Dumper:
 * keys sorted, block style for every non-empty collection, "[]" and "{}"
 * for empty ones, an indent of 2 with sequences inside mappings not
 * indented, lines folded near column 80, ASCII only (allow_unicode is off,
 * so any other character forces a double-quoted scalar with \x, \u or \U
 * escapes). A string is written plain only when PyYAML's implicit resolvers
 * would read the plain text back as a string: "yes", "1.0", "~" or
 * "2001-01-01" are quoted.
 *
 * The emitter below follows the same decisions as PyYAML's Emitter class
 * (analysis of the scalar, choice of style, the whitespace and indention
 * state that decides where spaces and line breaks go), restricted to what
 * JSON values produce: no tags, no anchors, no flow collections with
 * content. Column counts are in characters; the output is ASCII, so they
 * are bytes too. */
#include <errno.h>
#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec-internal.h"
#include "util/macro.h"
#include "util/pyjson.h"
#include "util/utf8.h"

#define BEST_INDENT 2
#define BEST_WIDTH  80
#define MAX_DEPTH   1000

/* PyYAML's implicit resolvers, as POSIX extended expressions, with the
 * first characters PyYAML looks them up by. The empty string resolves to
 * null and is handled before these. */
static const struct {
        const char *first;
        const char *re;
} resolvers[] = {
        {"yYnNtTfFoO",
         "^(yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$"},
        {"-+0123456789.", "^([-+]?([0-9][0-9_]*)\\.[0-9_]*([eE][-+][0-9]+)?"
                          "|\\.[0-9][0-9_]*([eE][-+][0-9]+)?"
                          "|[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\\.[0-9_]*"
                          "|[-+]?\\.(inf|Inf|INF)"
                          "|\\.(nan|NaN|NAN))$"},
        {"-+0123456789", "^([-+]?0b[0-1_]+"
                         "|[-+]?0[0-7_]+"
                         "|[-+]?(0|[1-9][0-9_]*)"
                         "|[-+]?0x[0-9a-fA-F_]+"
                         "|[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+)$"},
        {"<", "^<<$"},
        {"~nN", "^(~|null|Null|NULL)$"},
        {"0123456789", "^([0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]"
                       "|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?"
                       "([Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](\\.[0-9]*)?"
                       "([ \t]*(Z|[-+][0-9][0-9]?(:[0-9][0-9])?))?)$"},
        {"=", "^=$"},
        {"!&*", "^(!|&|\\*)$"},
};

#define N_RESOLVERS ELEMENTSOF(resolvers)

typedef struct Emitter {
        StrBuf *out;
        regex_t re[N_RESOLVERS];
        size_t n_re; /* compiled so far */
        int indent;  /* -1 is PyYAML's None */
        size_t column;
        bool whitespace; /* the last thing written was whitespace */
        bool indention;  /* only indentation has been written on this line */
} Emitter;

/* A scalar as PyYAML sees it: its characters and what analyze_scalar found. */
typedef struct Scalar {
        uint32_t *ch;
        size_t len;
        bool multiline;
        bool allow_block_plain;
        bool allow_single_quoted;
        bool implicit_plain; /* the plain text reads back as the same type */
} Scalar;

static bool is_break(uint32_t c)
{
        return c == '\n' || c == 0x85 || c == 0x2028 || c == 0x2029;
}

static bool is_space_or_break(uint32_t c)
{
        return c == 0 || c == ' ' || c == '\t' || c == '\r' || is_break(c);
}

static bool in_set(uint32_t c, const char *set)
{
        return c != 0 && c < 0x80 && strchr(set, (int)c);
}

static void analyze(Scalar *s)
{
        bool block_indicators = false, line_breaks = false, special = false;
        bool leading_space = false, leading_break = false, trailing_space = false;
        bool trailing_break = false, break_space = false, space_break = false;
        bool preceded_by_ws = true, followed_by_ws, previous_space = false;
        bool previous_break = false;
        const uint32_t *c = s->ch;
        size_t n = s->len;

        if (n == 0) {
                s->multiline = false;
                s->allow_block_plain = true;
                s->allow_single_quoted = true;
                return;
        }
        if (n >= 3 && ((c[0] == '-' && c[1] == '-' && c[2] == '-') ||
                       (c[0] == '.' && c[1] == '.' && c[2] == '.')))
                block_indicators = true;
        followed_by_ws = n == 1 || is_space_or_break(c[1]);
        for (size_t i = 0; i < n; i++) {
                uint32_t ch = c[i];

                if (i == 0) {
                        if (in_set(ch, "#,[]{}&*!|>'\"%@`"))
                                block_indicators = true;
                        if (in_set(ch, "?:") && followed_by_ws)
                                block_indicators = true;
                        if (ch == '-' && followed_by_ws)
                                block_indicators = true;
                } else {
                        if (ch == ':' && followed_by_ws)
                                block_indicators = true;
                        if (ch == '#' && preceded_by_ws)
                                block_indicators = true;
                }
                if (is_break(ch))
                        line_breaks = true;
                /* Without allow_unicode every character outside printable
                 * ASCII (and the line feed) is special. */
                if (!(ch == '\n' || (ch >= 0x20 && ch <= 0x7e)))
                        special = true;
                if (ch == ' ') {
                        if (i == 0)
                                leading_space = true;
                        if (i == n - 1)
                                trailing_space = true;
                        if (previous_break)
                                break_space = true;
                        previous_space = true;
                        previous_break = false;
                } else if (is_break(ch)) {
                        if (i == 0)
                                leading_break = true;
                        if (i == n - 1)
                                trailing_break = true;
                        if (previous_space)
                                space_break = true;
                        previous_space = false;
                        previous_break = true;
                } else {
                        previous_space = false;
                        previous_break = false;
                }
                preceded_by_ws = is_space_or_break(ch);
                followed_by_ws = i + 2 >= n || is_space_or_break(c[i + 2]);
        }
        s->allow_block_plain = true;
        s->allow_single_quoted = true;
        if (leading_space || leading_break || trailing_space || trailing_break)
                s->allow_block_plain = false;
        if (break_space)
                s->allow_block_plain = s->allow_single_quoted = false;
        if (space_break || special)
                s->allow_block_plain = s->allow_single_quoted = false;
        if (line_breaks)
                s->allow_block_plain = false;
        if (block_indicators)
                s->allow_block_plain = false;
        s->multiline = line_breaks;
}

/* Would PyYAML read the plain text back as a string? */
static bool resolves_to_str(Emitter *em, const char *text, size_t len)
{
        if (len == 0)
                return false;
        if (memchr(text, '\0', len))
                return true; /* no resolver matches a NUL; such a text is quoted anyway */
        for (size_t i = 0; i < N_RESOLVERS; i++)
                if (strchr(resolvers[i].first, text[0]) &&
                    regexec(&em->re[i], text, 0, NULL, 0) == 0)
                        return false;
        return true;
}

static int scalar_init(Emitter *em, const char *text, size_t len, bool is_str, Scalar *ret)
{
        Scalar s = {0};
        size_t i = 0;

        s.ch = malloc((len + 1) * sizeof(uint32_t));
        if (!s.ch)
                return -ENOMEM;
        while (i < len) {
                int n = utf8_decode(text + i, len - i, &s.ch[s.len]);
                if (n < 0) {
                        free(s.ch);
                        return -EILSEQ;
                }
                i += (size_t)n;
                s.len++;
        }
        analyze(&s);
        s.implicit_plain = is_str ? resolves_to_str(em, text, len) : true;
        *ret = s;
        return 0;
}

static int put(Emitter *em, const char *s, size_t n)
{
        em->column += n;
        return strbuf_append(em->out, s, n);
}

/* Characters of a scalar that need no escaping: printable ASCII and '\n'. */
static int put_chars(Emitter *em, const uint32_t *c, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                int r = strbuf_putc(em->out, (char)c[i]);
                if (r < 0)
                        return r;
        }
        em->column += n;
        return 0;
}

static int write_indicator(Emitter *em, const char *ind, bool need_ws, bool whitespace,
                           bool indention)
{
        int r = 0;

        if (!em->whitespace && need_ws)
                r = put(em, " ", 1);
        if (r >= 0)
                r = put(em, ind, strlen(ind));
        em->whitespace = whitespace;
        em->indention = em->indention && indention;
        return r;
}

static int write_line_break(Emitter *em)
{
        em->whitespace = true;
        em->indention = true;
        em->column = 0;
        return strbuf_putc(em->out, '\n');
}

static int write_indent(Emitter *em)
{
        size_t indent = em->indent < 0 ? 0 : (size_t)em->indent;
        int r;

        if (!em->indention || em->column > indent || (em->column == indent && !em->whitespace))
                if ((r = write_line_break(em)) < 0)
                        return r;
        if (em->column < indent) {
                em->whitespace = true;
                while (em->column < indent)
                        if ((r = put(em, " ", 1)) < 0)
                                return r;
        }
        return 0;
}

static int write_plain(Emitter *em, const Scalar *s, bool split)
{
        bool spaces = false;
        size_t start = 0;
        int r;

        if (s->len == 0)
                return 0;
        if (!em->whitespace && (r = put(em, " ", 1)) < 0)
                return r;
        em->whitespace = false;
        em->indention = false;
        /* A plain scalar never holds a line break (analyze() forbids it),
         * so only runs of spaces can become folds. */
        for (size_t end = 0; end <= s->len; end++) {
                uint32_t ch = end < s->len ? s->ch[end] : 0;
                bool last = end == s->len;

                if (spaces) {
                        if (last || ch != ' ') {
                                if (start + 1 == end && em->column > BEST_WIDTH && split) {
                                        if ((r = write_indent(em)) < 0)
                                                return r;
                                        em->whitespace = false;
                                        em->indention = false;
                                } else if ((r = put_chars(em, s->ch + start, end - start)) < 0) {
                                        return r;
                                }
                                start = end;
                        }
                } else if (last || ch == ' ') {
                        if ((r = put_chars(em, s->ch + start, end - start)) < 0)
                                return r;
                        start = end;
                }
                if (!last)
                        spaces = ch == ' ';
        }
        return 0;
}

static int write_single_quoted(Emitter *em, const Scalar *s, bool split)
{
        bool spaces = false, breaks = false;
        size_t start = 0;
        int r;

        if ((r = write_indicator(em, "'", true, false, false)) < 0)
                return r;
        for (size_t end = 0; end <= s->len; end++) {
                bool last = end == s->len;
                uint32_t ch = last ? 0 : s->ch[end];

                if (spaces) {
                        if (last || ch != ' ') {
                                if (start + 1 == end && em->column > BEST_WIDTH && split &&
                                    start != 0 && end != s->len) {
                                        if ((r = write_indent(em)) < 0)
                                                return r;
                                } else if ((r = put_chars(em, s->ch + start, end - start)) < 0) {
                                        return r;
                                }
                                start = end;
                        }
                } else if (breaks) {
                        if (last || !is_break(ch)) {
                                /* Only '\n' can be here: the other breaks
                                 * are special and force double quotes. A
                                 * line break in a quoted scalar folds, so
                                 * each one is written twice over one. */
                                if (s->ch[start] == '\n' && (r = write_line_break(em)) < 0)
                                        return r;
                                for (size_t i = start; i < end; i++)
                                        if ((r = write_line_break(em)) < 0)
                                                return r;
                                if ((r = write_indent(em)) < 0)
                                        return r;
                                start = end;
                        }
                } else if (last || ch == ' ' || is_break(ch) || ch == '\'') {
                        if (start < end) {
                                if ((r = put_chars(em, s->ch + start, end - start)) < 0)
                                        return r;
                                start = end;
                        }
                }
                if (ch == '\'' && !last) {
                        if ((r = put(em, "''", 2)) < 0)
                                return r;
                        start = end + 1;
                }
                if (!last) {
                        spaces = ch == ' ';
                        breaks = is_break(ch);
                }
        }
        return write_indicator(em, "'", false, false, false);
}

static int put_escape(Emitter *em, uint32_t ch)
{
        static const struct {
                uint32_t ch;
                char esc;
        } short_escapes[] = {
                {0, '0'},     {7, 'a'},    {8, 'b'},    {9, 't'},      {10, 'n'},
                {11, 'v'},    {12, 'f'},   {13, 'r'},   {27, 'e'},     {'"', '"'},
                {'\\', '\\'}, {0x85, 'N'}, {0xa0, '_'}, {0x2028, 'L'}, {0x2029, 'P'},
        };
        char buf[16];
        int n;

        for (size_t i = 0; i < ELEMENTSOF(short_escapes); i++)
                if (short_escapes[i].ch == ch) {
                        buf[0] = '\\';
                        buf[1] = short_escapes[i].esc;
                        return put(em, buf, 2);
                }
        if (ch <= 0xff)
                n = snprintf(buf, sizeof buf, "\\x%02X", (unsigned)ch);
        else if (ch <= 0xffff)
                n = snprintf(buf, sizeof buf, "\\u%04X", (unsigned)ch);
        else
                n = snprintf(buf, sizeof buf, "\\U%08X", (unsigned)ch);
        return put(em, buf, (size_t)n);
}

static int write_double_quoted(Emitter *em, const Scalar *s, bool split)
{
        size_t start = 0;
        int r;

        if ((r = write_indicator(em, "\"", true, false, false)) < 0)
                return r;
        for (size_t end = 0; end <= s->len; end++) {
                bool last = end == s->len;
                uint32_t ch = last ? 0 : s->ch[end];

                if (last || ch == '"' || ch == '\\' || ch < 0x20 || ch > 0x7e) {
                        if (start < end) {
                                if ((r = put_chars(em, s->ch + start, end - start)) < 0)
                                        return r;
                                start = end;
                        }
                        if (!last) {
                                if ((r = put_escape(em, ch)) < 0)
                                        return r;
                                start = end + 1;
                        }
                }
                /* start may be end + 1 here, just after an escape:
                 * PyYAML's column + (end - start) is then column - 1. */
                if (end > 0 && end + 1 < s->len && (ch == ' ' || start >= end) &&
                    (long)em->column + (long)end - (long)start > BEST_WIDTH && split) {
                        if (start < end) {
                                if ((r = put_chars(em, s->ch + start, end - start)) < 0)
                                        return r;
                                start = end;
                        }
                        if ((r = put(em, "\\", 1)) < 0)
                                return r;
                        if ((r = write_indent(em)) < 0)
                                return r;
                        em->whitespace = false;
                        em->indention = false;
                        if (s->ch[start] == ' ' && (r = put(em, "\\", 1)) < 0)
                                return r;
                }
        }
        return write_indicator(em, "\"", false, false, false);
}

/* PyYAML's expect_scalar: choose a style and write the scalar one indent
 * level deeper. */
static int emit_scalar(Emitter *em, const Scalar *s, bool simple_key)
{
        int saved = em->indent, r;

        em->indent = em->indent < 0 ? BEST_INDENT : em->indent + BEST_INDENT;
        if (s->implicit_plain && !(simple_key && (s->len == 0 || s->multiline)) &&
            s->allow_block_plain)
                r = write_plain(em, s, !simple_key);
        else if (s->allow_single_quoted && !(simple_key && s->multiline))
                r = write_single_quoted(em, s, !simple_key);
        else
                r = write_double_quoted(em, s, !simple_key);
        em->indent = saved;
        return r;
}

/* The text of a non-collection value, as PyYAML's representer spells it. */
static int scalar_text(const json_t *v, char *buf, size_t size, const char **ret, size_t *ret_len)
{
        switch (json_typeof(v)) {
        case JSON_STRING:
                /* An integer beyond 64 bits is written as PyYAML writes an
                 * int: its digits, plain (util/pyjson.h). */
                *ret = pyjson_bigint_digits(v) ? pyjson_bigint_digits(v) : json_string_value(v);
                *ret_len = pyjson_bigint_digits(v) ? strlen(*ret) : json_string_length(v);
                return 0;
        case JSON_INTEGER:
                snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
                break;
        case JSON_REAL: {
                char r[32];
                char *e;
                /* repr(), with ".0" put before an exponent that has no
                 * point so that the text still reads as a float. */
                pyfloat_repr(json_real_value(v), r);
                if (strchr(r, 'n') || strchr(r, 'i'))
                        snprintf(buf, size, "%s",
                                 r[0] == '-'   ? "-.inf"
                                 : r[0] == 'n' ? ".nan"
                                               : ".inf");
                else if (!strchr(r, '.') && (e = strchr(r, 'e')))
                        snprintf(buf, size, "%.*s.0%s", (int)(e - r), r, e);
                else
                        snprintf(buf, size, "%s", r);
                break;
        }
        case JSON_TRUE:
                snprintf(buf, size, "true");
                break;
        case JSON_FALSE:
                snprintf(buf, size, "false");
                break;
        case JSON_NULL:
                snprintf(buf, size, "null");
                break;
        default:
                return -EINVAL;
        }
        *ret = buf;
        *ret_len = strlen(buf);
        return 0;
}

static int emit_node(Emitter *em, const json_t *v, bool mapping_ctx, bool simple_key,
                     unsigned depth);

static int emit_value_scalar(Emitter *em, const json_t *v, bool simple_key)
{
        char buf[64];
        const char *text;
        size_t len;
        Scalar s;
        int r;

        if ((r = scalar_text(v, buf, sizeof buf, &text, &len)) < 0)
                return r;
        if ((r = scalar_init(em, text, len, json_is_string(v) && !pyjson_bigint_digits(v), &s)) < 0)
                return r;
        r = emit_scalar(em, &s, simple_key);
        free(s.ch);
        return r;
}

static int emit_sequence(Emitter *em, const json_t *v, bool mapping_ctx, unsigned depth)
{
        int saved = em->indent, r;
        size_t i;
        json_t *item;

        if (json_array_size(v) == 0)
                return write_indicator(em, "[]", true, false, false);
        /* A sequence that is a mapping's value is not indented. */
        if (em->indent < 0)
                em->indent = 0;
        else if (!(mapping_ctx && !em->indention))
                em->indent += BEST_INDENT;
        json_array_foreach (v, i, item) {
                if ((r = write_indent(em)) < 0 ||
                    (r = write_indicator(em, "-", true, false, true)) < 0 ||
                    (r = emit_node(em, item, false, false, depth + 1)) < 0)
                        return r;
        }
        em->indent = saved;
        return 0;
}

typedef struct KeyRef {
        const char *key;
        size_t len;
        json_t *value;
} KeyRef;

static int keyref_cmp(const void *a, const void *b)
{
        const KeyRef *x = a, *y = b;
        size_t n = x->len < y->len ? x->len : y->len;
        int c = memcmp(x->key, y->key, n);

        /* Byte order of UTF-8 is code point order, which is how Python
         * sorts str keys. */
        if (c)
                return c;
        return x->len < y->len ? -1 : x->len > y->len;
}

static int emit_key_value(Emitter *em, const KeyRef *k, unsigned depth)
{
        Scalar s;
        bool simple;
        int r;

        if ((r = scalar_init(em, k->key, k->len, true, &s)) < 0)
                return r;
        /* check_simple_key: a short one-line key is written "key: value",
         * anything else as "? key" and ": value" on lines of their own.
         * PyYAML counts the key's tag, "!!str", into "short" although it
         * does not write it. */
        simple = s.len + strlen("!!str") < 128 && s.len > 0 && !s.multiline;
        if ((r = write_indent(em)) < 0)
                goto out;
        if (simple) {
                if ((r = emit_scalar(em, &s, true)) < 0 ||
                    (r = write_indicator(em, ":", false, false, false)) < 0)
                        goto out;
        } else {
                if ((r = write_indicator(em, "?", true, false, true)) < 0 ||
                    (r = emit_scalar(em, &s, false)) < 0 || (r = write_indent(em)) < 0 ||
                    (r = write_indicator(em, ":", true, false, true)) < 0)
                        goto out;
        }
        r = emit_node(em, k->value, true, false, depth + 1);
out:
        free(s.ch);
        return r;
}

static int emit_mapping(Emitter *em, const json_t *v, unsigned depth)
{
        _cleanup_free_ KeyRef *keys = NULL;
        size_t n = json_object_size(v), i = 0;
        int saved = em->indent, r;
        const char *key;
        json_t *value;

        if (n == 0)
                return write_indicator(em, "{}", true, false, false);
        keys = calloc(n, sizeof(KeyRef));
        if (!keys)
                return -ENOMEM;
        json_object_foreach ((json_t *)v, key, value) {
                keys[i].key = key;
                keys[i].len = json_object_iter_key_len(json_object_key_to_iter(key));
                keys[i].value = value;
                i++;
        }
        qsort(keys, n, sizeof(KeyRef), keyref_cmp);
        em->indent = em->indent < 0 ? 0 : em->indent + BEST_INDENT;
        for (i = 0; i < n; i++)
                if ((r = emit_key_value(em, &keys[i], depth)) < 0)
                        return r;
        em->indent = saved;
        return 0;
}

static int emit_node(Emitter *em, const json_t *v, bool mapping_ctx, bool simple_key,
                     unsigned depth)
{
        if (depth > MAX_DEPTH)
                return -EINVAL;
        if (json_is_array(v))
                return emit_sequence(em, v, mapping_ctx, depth);
        if (json_is_object(v))
                return emit_mapping(em, v, depth);
        return emit_value_scalar(em, v, simple_key);
}

int exec_yaml_dump(const json_t *v, StrBuf *out)
{
        Emitter em = {.out = out, .indent = -1, .whitespace = true, .indention = true};
        int r = 0;

        if (!json_is_object(v))
                return -EINVAL;
        for (; em.n_re < N_RESOLVERS; em.n_re++)
                if (regcomp(&em.re[em.n_re], resolvers[em.n_re].re, REG_EXTENDED | REG_NOSUB)) {
                        r = -ENOMEM;
                        break;
                }
        if (r >= 0)
                r = emit_node(&em, v, false, false, 0);
        /* The document ends with a line break (expect_document_end). */
        if (r >= 0)
                r = write_indent(&em);
        for (size_t i = 0; i < em.n_re; i++)
                regfree(&em.re[i]);
        return r;
}
