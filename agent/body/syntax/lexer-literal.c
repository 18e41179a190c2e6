/* lexer-literal: the values of string and number tokens.
 *
 * Escape decoding follows CPython's unicode-escape codec, including the
 * wording and byte positions of its errors, which Python reports as
 * "(unicode error) 'unicodeescape' codec can't decode bytes in position
 * 0-2: truncated \xXX escape". CPython counts positions after turning every
 * non-ASCII character of the literal into a ten-byte \UXXXXXXXX escape, so
 * we count those characters as ten bytes too. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "body/syntax/lexer.h"
#include "util/digit.h"
#include "util/macro.h"
#include "util/utf8.h"

/* The codec's position of byte offset `off` in s. */
static size_t codec_pos(const char *s, size_t off)
{
        size_t pos = 0;
        for (size_t i = 0; i < off; i++) {
                unsigned char c = (unsigned char)s[i];
                if (c < 0x80)
                        pos++;
                else if ((c & 0xc0) != 0x80)
                        pos += 10;
        }
        return pos;
}

static int escape_error(AstError *err, int line, const char *s, size_t start, size_t end,
                        const char *what)
{
        size_t a = codec_pos(s, start), b = codec_pos(s, end);
        return ast_error_set(err, AST_ERR_SYNTAX, line,
                             "(unicode error) 'unicodeescape' codec can't decode bytes in "
                             "position %zu-%zu: %s",
                             a, b - 1, what);
}

int lexer_decode_escapes(const char *s, size_t n, bool raw, int line, AstArena *arena,
                         AstError *err, char **ret, size_t *ret_len)
{
        /* Decoding never makes text longer: every escape is at least as long
         * as the UTF-8 it stands for (\777 is 4 bytes for 2, \U0010FFFF 10
         * for 4). */
        char *out = ast_alloc(arena, n + 1);
        if (!out)
                return ast_error_set(err, AST_ERR_NOMEM, line, "out of memory");
        size_t o = 0;
        if (raw) {
                memcpy(out, s, n);
                o = n;
                goto done;
        }
        for (size_t i = 0; i < n;) {
                if (s[i] != '\\') {
                        out[o++] = s[i++];
                        continue;
                }
                size_t esc = i;
                i++;
                if (i >= n) {
                        /* A lone backslash before an f-string's '{'. */
                        out[o++] = '\\';
                        break;
                }
                char c = s[i++];
                uint32_t cp;
                int digits;
                switch (c) {
                case '\n':
                        continue;
                case '\\':
                case '\'':
                case '"':
                        out[o++] = c;
                        continue;
                case 'a':
                        out[o++] = '\a';
                        continue;
                case 'b':
                        out[o++] = '\b';
                        continue;
                case 'f':
                        out[o++] = '\f';
                        continue;
                case 'n':
                        out[o++] = '\n';
                        continue;
                case 'r':
                        out[o++] = '\r';
                        continue;
                case 't':
                        out[o++] = '\t';
                        continue;
                case 'v':
                        out[o++] = '\v';
                        continue;
                case '0':
                case '1':
                case '2':
                case '3':
                case '4':
                case '5':
                case '6':
                case '7':
                        cp = (uint32_t)(c - '0');
                        for (int k = 0; k < 2 && i < n && s[i] >= '0' && s[i] <= '7'; k++)
                                cp = cp * 8 + (uint32_t)(s[i++] - '0');
                        o += (size_t)utf8_encode(cp, (char *)out + o);
                        continue;
                case 'x':
                        digits = 2;
                        goto hex;
                case 'u':
                        digits = 4;
                        goto hex;
                case 'U':
                        digits = 8;
                hex:
                        cp = 0;
                        for (int k = 0; k < digits; k++) {
                                int h = i < n ? digit_value((unsigned char)s[i]) : 36;
                                if (h >= 16)
                                        return escape_error(
                                                err, line, s, esc, i,
                                                digits == 2   ? "truncated \\xXX escape"
                                                : digits == 4 ? "truncated \\uXXXX escape"
                                                              : "truncated \\UXXXXXXXX escape");
                                cp = cp * 16 + (uint32_t)h;
                                i++;
                        }
                        if (cp > 0x10ffff)
                                return escape_error(err, line, s, esc, i,
                                                    "illegal Unicode character");
                        if (cp >= 0xd800 && cp <= 0xdfff)
                                return ast_error_set(
                                        err, AST_ERR_SYNTAX, line,
                                        "lone surrogate escapes (\\u%04x) are not supported by "
                                        "muranoagent's Body interpreter",
                                        (unsigned)cp);
                        o += (size_t)utf8_encode(cp, (char *)out + o);
                        continue;
                case 'N':
                        /* CPython looks the name up in the Unicode database,
                         * which we do not carry. */
                        if (i >= n || s[i] != '{' || !memchr(s + i, '}', n - i)) {
                                size_t e = i < n && s[i] == '{' ? n : i;
                                return escape_error(err, line, s, esc, e,
                                                    "malformed \\N character escape");
                        }
                        return ast_error_set(err, AST_ERR_SYNTAX, line,
                                             "\\N{...} escapes are not supported by "
                                             "muranoagent's Body interpreter");
                default:
                        /* Unknown escapes stay as they are (a warning in Python). */
                        out[o++] = '\\';
                        out[o++] = c;
                        continue;
                }
        }
done:
        out[o] = 0;
        *ret = out;
        *ret_len = o;
        return 0;
}

int lexer_decode_string(const LexToken *tok, AstArena *arena, AstError *err, LexString *ret)
{
        const char *s = tok->start;
        size_t n = tok->len, p = 0;
        *ret = (LexString){0};
        for (; p < n && s[p] != '\'' && s[p] != '"'; p++) {
                char c = (char)(s[p] | 0x20);
                ret->raw |= c == 'r';
                ret->bytes |= c == 'b';
                ret->fstring |= c == 'f';
        }
        size_t q = 1;
        if (n - p >= 6 && s[p + 1] == s[p] && s[p + 2] == s[p])
                q = 3;
        const char *body = s + p + q;
        size_t blen = n - p - 2 * q;
        if (ret->bytes)
                for (size_t i = 0; i < blen; i++)
                        if ((unsigned char)body[i] >= 0x80)
                                return ast_error_set(err, AST_ERR_SYNTAX, tok->line,
                                                     "bytes can only contain ASCII literal "
                                                     "characters");
        if (ret->fstring) {
                ret->s = ast_strndup(arena, body, blen);
                if (!ret->s)
                        return ast_error_set(err, AST_ERR_NOMEM, tok->line, "out of memory");
                ret->len = blen;
                return 0;
        }
        return lexer_decode_escapes(body, blen, ret->raw, tok->line, arena, err, &ret->s,
                                    &ret->len);
}

int lexer_parse_number(const LexToken *tok, AstError *err, int64_t *ret_int, double *ret_float,
                       bool *ret_big)
{
        const char *s = tok->start;
        size_t n = tok->len;
        char last = s[n - 1];
        if (last == 'j' || last == 'J')
                return ast_error_set(err, AST_ERR_SYNTAX, tok->line,
                                     "complex numbers (%.*s) are not supported by muranoagent's "
                                     "Body interpreter",
                                     (int)n, s);
        int base = 10;
        size_t p = 0;
        if (n > 1 && s[0] == '0') {
                char b = (char)(s[1] | 0x20);
                base = b == 'x' ? 16 : b == 'o' ? 8 : b == 'b' ? 2 : 10;
                if (base != 10)
                        p = 2;
        }
        bool is_float = false;
        if (base == 10)
                for (size_t i = 0; i < n; i++)
                        if (s[i] == '.' || s[i] == 'e' || s[i] == 'E')
                                is_float = true;
        if (is_float) {
                char buf[128];
                char *heap = NULL, *b = buf;
                if (n >= sizeof buf) {
                        heap = malloc(n + 1);
                        if (!heap)
                                return ast_error_set(err, AST_ERR_NOMEM, tok->line,
                                                     "out of memory");
                        b = heap;
                }
                size_t o = 0;
                for (size_t i = 0; i < n; i++)
                        if (s[i] != '_')
                                b[o++] = s[i];
                b[o] = 0;
                *ret_float = strtod(b, NULL);
                free(heap);
                return AST_FLOAT;
        }
        uint64_t v = 0;
        bool big = false, wrapped = false;
        for (; p < n; p++) {
                if (s[p] == '_')
                        continue;
                int d = digit_value((unsigned char)s[p]);
                if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base) {
                        big = wrapped = true;
                        break;
                }
                v = v * (uint64_t)base + (uint64_t)d;
        }
        /* -9223372036854775808 is written as -(9223372036854775808): the
         * literal itself must fit, as Python's int would. */
        if (v > (uint64_t)INT64_MAX)
                big = true;
        if (big && base == 10) {
                /* CPython 3.11 refuses decimal literals beyond its int
                 * conversion limit (sys.int_info.default_max_str_digits)
                 * when compiling. */
                size_t digits = 0;
                for (size_t k = 0; k < n; k++)
                        digits += s[k] != '_';
                if (digits > 4300)
                        return ast_error_set(
                                err, AST_ERR_SYNTAX, tok->line,
                                "Exceeds the limit (4300 digits) for integer string conversion: "
                                "value has %zu digits; use sys.set_int_max_str_digits() to "
                                "increase the limit - Consider hexadecimal for huge integer "
                                "literals to avoid decimal conversion limits.",
                                digits);
        }
        *ret_big = big;
        /* The parser folds -(2**63) into INT64_MIN; mark that literal. */
        *ret_int = !big ? (int64_t)v : !wrapped && v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : 0;
        return AST_INT;
}
