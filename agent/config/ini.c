/* oslo.config's INI dialect (see ini.h for the rules).
 *
 * This is hand-written rather than built on libinih because Debian's libinih
 * (55) differs from oslo in four ways that matter for agent.conf: it is built
 * with INI_MAX_LINE 200, so longer lines are cut; it treats an inline ';' as
 * a comment, while oslo keeps "pass ;word" whole; it has INI_HANDLER_LINENO 0,
 * so handlers get no line numbers for our error messages; and its
 * continuation lines still continue after a blank line, where oslo ends the
 * value. tests/test-config.c pins each of these. */
#include "config/ini.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/macro.h"
#include "util/strbuf.h"
#include "util/utf8.h"

/* The code points for which Python's str.isspace() is true. */
static bool py_isspace(uint32_t cp)
{
        return (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20) || cp == 0x85 ||
               cp == 0xa0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 ||
               cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

size_t ini_lspace(const char *s, size_t n)
{
        size_t i = 0;

        while (i < n) {
                uint32_t cp;
                int k = utf8_decode(s + i, n - i, &cp);
                if (k < 0 || !py_isspace(cp))
                        break;
                i += (size_t)k;
        }
        return i;
}

size_t ini_rstrip_len(const char *s, size_t n)
{
        while (n > 0) {
                size_t start = n - 1;
                uint32_t cp;
                int k;

                /* Step back over continuation bytes to the start of the last
                 * code point; a valid sequence has at most three of them. */
                while (start > 0 && n - start < 4 && ((unsigned char)s[start] & 0xc0) == 0x80)
                        start--;
                k = utf8_decode(s + start, n - start, &cp);
                if (k < 0 || (size_t)k != n - start || !py_isspace(cp))
                        break;
                n = start;
        }
        return n;
}

typedef struct IniState {
        const IniHandler *h;
        void *userdata;
        char *section; /* NULL until the first header */
        StrBuf key;
        StrBuf value;
        bool have_key;
        unsigned key_line;
        unsigned error_line;
        char *error;
} IniState;

static int ini_fail(IniState *st, unsigned line, const char *fmt, ...) _printf_(3, 4);

static int ini_fail(IniState *st, unsigned line, const char *fmt, ...)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = strbuf_vprintf(&b, fmt, ap);
        va_end(ap);
        if (r < 0)
                return r;
        r = strbuf_steal(&b, &st->error);
        if (r < 0)
                return r;
        st->error_line = line;
        return INI_SYNTAX;
}

/* Deliver the pending assignment, if any. */
static int ini_flush(IniState *st)
{
        int r;

        if (!st->have_key)
                return 0;
        st->have_key = false;
        r = st->h->assign(st->userdata, st->section, st->key.data,
                          st->value.data ? st->value.data : "", st->key_line);
        strbuf_reset(&st->key);
        strbuf_reset(&st->value);
        return r;
}

static int ini_section(IniState *st, const char *line, size_t n, unsigned lineno)
{
        char *name;

        if (line[n - 1] != ']')
                return ini_fail(st, lineno, "invalid section header: it must end with ']'");
        if (n <= 2)
                return ini_fail(st, lineno, "empty section name");
        name = strndup(line + 1, n - 2);
        if (!name)
                return -ENOMEM;
        free(st->section);
        st->section = name;
        return st->h->section ? st->h->section(st->userdata, name, lineno) : 0;
}

static int ini_assignment(IniState *st, const char *line, size_t n, unsigned lineno)
{
        const char *eq = memchr(line, '=', n);
        const char *colon = memchr(line, ':', n);
        const char *sep, *v;
        size_t klen, vlen, skip;
        int r;

        if (!eq && !colon)
                return ini_fail(st, lineno,
                                "no '=' or ':' in this line (expected 'key = value', a "
                                "[section] header or a comment starting with '#' or ';')");
        sep = !colon || (eq && eq < colon) ? eq : colon;

        skip = ini_lspace(line, (size_t)(sep - line));
        klen = ini_rstrip_len(line + skip, (size_t)(sep - line) - skip);
        if (klen == 0)
                return ini_fail(st, lineno, "the option name before '%c' is empty", *sep);
        r = strbuf_append(&st->key, line + skip, klen);
        if (r < 0)
                return r;

        v = sep + 1;
        vlen = (size_t)(line + n - v);
        skip = ini_lspace(v, vlen);
        v += skip;
        vlen = ini_rstrip_len(v, vlen - skip);
        if (vlen > 0 && v[0] == v[vlen - 1] && (v[0] == '"' || v[0] == '\'')) {
                /* As oslo does it, a single quote character alone becomes "". */
                v++;
                vlen = vlen >= 2 ? vlen - 2 : 0;
        }
        r = strbuf_append(&st->value, v, vlen);
        if (r < 0)
                return r;

        /* oslo raises this when the assignment is stored; we report it at the
         * key's own line, which is where the fix goes. */
        if (!st->section)
                return ini_fail(st, lineno,
                                "option '%s' comes before any section header (put a header "
                                "such as [DEFAULT] above it)",
                                st->key.data);
        st->have_key = true;
        st->key_line = lineno;
        return 0;
}

static int ini_line(IniState *st, const char *line, size_t n, unsigned lineno)
{
        int r;

        if (memchr(line, '\0', n))
                return ini_fail(st, lineno, "the line contains a NUL byte");
        if (!utf8_valid(line, n, NULL))
                return ini_fail(st, lineno, "the line is not valid UTF-8");

        n = ini_rstrip_len(line, n);
        if (n == 0)
                return ini_flush(st);

        if (line[0] == ' ' || line[0] == '\t') {
                size_t skip;

                if (!st->have_key)
                        return ini_fail(st, lineno,
                                        "unexpected indented line: it would continue an option's "
                                        "value, but none precedes it (blank lines, comments and "
                                        "section headers end a value)");
                skip = ini_lspace(line, n);
                r = strbuf_putc(&st->value, '\n');
                if (r >= 0)
                        r = strbuf_append(&st->value, line + skip, n - skip);
                return r < 0 ? r : 0;
        }

        r = ini_flush(st);
        if (r != 0)
                return r;
        if (line[0] == '[')
                return ini_section(st, line, n, lineno);
        if (line[0] == '#' || line[0] == ';')
                return 0;
        return ini_assignment(st, line, n, lineno);
}

int ini_parse(const char *text, size_t len, const IniHandler *h, void *userdata, unsigned *ret_line,
              char **ret_message)
{
        IniState st = {.h = h, .userdata = userdata, .key = STRBUF_INIT, .value = STRBUF_INIT};
        size_t pos = 0;
        unsigned lineno = 0;
        int r = 0;

        if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
                pos = 3;
        while (pos < len && r == 0) {
                size_t end = pos, next;

                while (end < len && text[end] != '\n' && text[end] != '\r')
                        end++;
                next = end;
                if (next < len)
                        next += text[next] == '\r' && next + 1 < len && text[next + 1] == '\n' ? 2
                                                                                               : 1;
                r = ini_line(&st, text + pos, end - pos, ++lineno);
                pos = next;
        }
        if (r == 0)
                r = ini_flush(&st);

        if (r == INI_SYNTAX && st.error) {
                *ret_line = st.error_line;
                *ret_message = TAKE_PTR(st.error);
        }
        free(st.error);
        free(st.section);
        strbuf_free(&st.key);
        strbuf_free(&st.value);
        return r;
}
