/* CPython-compatible JSON writer (see pyjson.h). */
#include "util/pyjson.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/macro.h"
#include "util/utf8.h"

/* CPython's json module stops at its recursion limit; we stop well before
 * any C stack trouble, and the plan parser already refuses deeper input. */
#define PYJSON_MAX_DEPTH 1000

void pyfloat_repr(double d, char buf[static 32])
{
        char tmp[40], digits[20];
        int prec, exp10, ndigits = 0, decpt;
        char *p;
        size_t o = 0;

        if (isnan(d)) {
                strcpy(buf, "nan");
                return;
        }
        if (isinf(d)) {
                strcpy(buf, d < 0 ? "-inf" : "inf");
                return;
        }
        if (d == 0.0) {
                strcpy(buf, signbit(d) ? "-0.0" : "0.0");
                return;
        }

        /* The shortest %e precision that reads back as the same double is
         * what CPython's dtoa mode 0 produces. */
        for (prec = 0; prec < 17; prec++) {
                snprintf(tmp, sizeof(tmp), "%.*e", prec, d);
                if (strtod(tmp, NULL) == d)
                        break;
        }
        if (prec == 17)
                snprintf(tmp, sizeof(tmp), "%.16e", d);

        p = tmp;
        if (*p == '-') {
                buf[o++] = '-';
                p++;
        }
        for (; *p && *p != 'e'; p++)
                if (*p >= '0' && *p <= '9')
                        digits[ndigits++] = *p;
        exp10 = atoi(p + 1);
        while (ndigits > 1 && digits[ndigits - 1] == '0')
                ndigits--;
        decpt = exp10 + 1; /* digits d1d2... mean 0.d1d2... x 10^decpt */

        if (decpt > -4 && decpt <= 16) {
                if (decpt <= 0) {
                        buf[o++] = '0';
                        buf[o++] = '.';
                        for (int i = 0; i < -decpt; i++)
                                buf[o++] = '0';
                        for (int i = 0; i < ndigits; i++)
                                buf[o++] = digits[i];
                } else {
                        for (int i = 0; i < decpt; i++)
                                buf[o++] = i < ndigits ? digits[i] : '0';
                        buf[o++] = '.';
                        if (ndigits > decpt)
                                for (int i = decpt; i < ndigits; i++)
                                        buf[o++] = digits[i];
                        else
                                buf[o++] = '0';
                }
                buf[o] = '\0';
        } else {
                buf[o++] = digits[0];
                if (ndigits > 1) {
                        buf[o++] = '.';
                        for (int i = 1; i < ndigits; i++)
                                buf[o++] = digits[i];
                }
                snprintf(buf + o, 32 - o, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
        }
}

void pyjson_float(double d, char buf[static 32])
{
        if (isnan(d))
                strcpy(buf, "NaN");
        else if (isinf(d))
                strcpy(buf, d < 0 ? "-Infinity" : "Infinity");
        else
                pyfloat_repr(d, buf);
}

static int put_u16(StrBuf *out, unsigned v)
{
        return strbuf_printf(out, "\\u%04x", v);
}

int pyjson_quote(StrBuf *out, const char *s, size_t len, bool ensure_ascii)
{
        size_t i = 0;
        int r;

        if ((r = strbuf_putc(out, '"')) < 0)
                return r;
        while (i < len) {
                unsigned char c = (unsigned char)s[i];
                const char *esc = NULL;

                switch (c) {
                case '"':
                        esc = "\\\"";
                        break;
                case '\\':
                        esc = "\\\\";
                        break;
                case '\n':
                        esc = "\\n";
                        break;
                case '\r':
                        esc = "\\r";
                        break;
                case '\t':
                        esc = "\\t";
                        break;
                case '\b':
                        esc = "\\b";
                        break;
                case '\f':
                        esc = "\\f";
                        break;
                default:
                        break;
                }
                if (esc) {
                        r = strbuf_puts(out, esc);
                        i++;
                } else if (c < 0x20) {
                        r = put_u16(out, c);
                        i++;
                } else if (c < 0x7f || (!ensure_ascii && c == 0x7f)) {
                        r = strbuf_putc(out, (char)c);
                        i++;
                } else if (c == 0x7f) {
                        r = put_u16(out, c);
                        i++;
                } else {
                        uint32_t cp;
                        int n = utf8_decode(s + i, len - i, &cp);
                        if (n <= 0)
                                return -EILSEQ;
                        if (!ensure_ascii)
                                r = strbuf_append(out, s + i, (size_t)n);
                        else if (cp >= 0x10000) {
                                cp -= 0x10000;
                                r = put_u16(out, 0xd800 | (cp >> 10));
                                if (r >= 0)
                                        r = put_u16(out, 0xdc00 | (cp & 0x3ff));
                        } else
                                r = put_u16(out, cp);
                        i += (size_t)n;
                }
                if (r < 0)
                        return r;
        }
        return strbuf_putc(out, '"');
}

static int newline_indent(StrBuf *out, const PyJsonOptions *opt, int depth)
{
        int r = strbuf_putc(out, '\n');
        for (int i = 0; r >= 0 && i < opt->indent * depth; i++)
                r = strbuf_putc(out, ' ');
        return r;
}

static int cmp_keys(const void *a, const void *b)
{
        return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int dump(const json_t *v, const PyJsonOptions *opt, StrBuf *out, int depth);

static int dump_object(const json_t *v, const PyJsonOptions *opt, StrBuf *out, int depth)
{
        size_t n = json_object_size(v), i = 0;
        const char **keys;
        const char *key;
        json_t *item;
        int r = 0;

        if (n == 0)
                return strbuf_puts(out, "{}");
        keys = calloc(n, sizeof(*keys));
        if (!keys)
                return -ENOMEM;
        json_object_foreach ((json_t *)v, key, item)
                keys[i++] = key;
        if (opt->sort_keys)
                qsort(keys, n, sizeof(*keys), cmp_keys);

        r = strbuf_putc(out, '{');
        for (i = 0; r >= 0 && i < n; i++) {
                if (i > 0)
                        r = strbuf_puts(out, opt->indent >= 0 ? "," : ", ");
                if (r >= 0 && opt->indent >= 0)
                        r = newline_indent(out, opt, depth + 1);
                if (r >= 0)
                        r = pyjson_quote(out, keys[i], strlen(keys[i]), opt->ensure_ascii);
                if (r >= 0)
                        r = strbuf_puts(out, ": ");
                if (r >= 0)
                        r = dump(json_object_get(v, keys[i]), opt, out, depth + 1);
        }
        if (r >= 0 && opt->indent >= 0)
                r = newline_indent(out, opt, depth);
        if (r >= 0)
                r = strbuf_putc(out, '}');
        free(keys);
        return r;
}

static int dump_array(const json_t *v, const PyJsonOptions *opt, StrBuf *out, int depth)
{
        size_t n = json_array_size(v);
        int r;

        if (n == 0)
                return strbuf_puts(out, "[]");
        r = strbuf_putc(out, '[');
        for (size_t i = 0; r >= 0 && i < n; i++) {
                if (i > 0)
                        r = strbuf_puts(out, opt->indent >= 0 ? "," : ", ");
                if (r >= 0 && opt->indent >= 0)
                        r = newline_indent(out, opt, depth + 1);
                if (r >= 0)
                        r = dump(json_array_get(v, i), opt, out, depth + 1);
        }
        if (r >= 0 && opt->indent >= 0)
                r = newline_indent(out, opt, depth);
        if (r >= 0)
                r = strbuf_putc(out, ']');
        return r;
}

static int dump(const json_t *v, const PyJsonOptions *opt, StrBuf *out, int depth)
{
        char num[32];

        if (depth > PYJSON_MAX_DEPTH)
                return -EINVAL;
        switch (json_typeof(v)) {
        case JSON_OBJECT:
                return dump_object(v, opt, out, depth);
        case JSON_ARRAY:
                return dump_array(v, opt, out, depth);
        case JSON_STRING:
                if (pyjson_bigint_digits(v))
                        return strbuf_puts(out, pyjson_bigint_digits(v));
                return pyjson_quote(out, json_string_value(v), json_string_length(v),
                                    opt->ensure_ascii);
        case JSON_INTEGER:
                return strbuf_printf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        case JSON_REAL:
                pyjson_float(json_real_value(v), num);
                return strbuf_puts(out, num);
        case JSON_TRUE:
                return strbuf_puts(out, "true");
        case JSON_FALSE:
                return strbuf_puts(out, "false");
        case JSON_NULL:
                return strbuf_puts(out, "null");
        default:
                return -EINVAL;
        }
}

json_t *pyjson_bigint_new(const char *digits, size_t len)
{
        _cleanup_free_ char *s = malloc(len + 1);

        if (!s)
                return NULL;
        s[0] = PYJSON_BIGINT_MARK;
        memcpy(s + 1, digits, len);
        return json_stringn_nocheck(s, len + 1);
}

const char *pyjson_bigint_digits(const json_t *v)
{
        const char *s;

        if (!json_is_string(v) || json_string_length(v) < 2)
                return NULL;
        s = json_string_value(v);
        return s[0] == PYJSON_BIGINT_MARK ? s + 1 : NULL;
}

int pyjson_dump(const json_t *v, const PyJsonOptions *opt, StrBuf *out)
{
        if (!v)
                return strbuf_puts(out, "null");
        return dump(v, opt, out, 0);
}

int pyjson_dumps(const json_t *v, char **ret)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        PyJsonOptions opt = PYJSON_DEFAULTS;
        int r = pyjson_dump(v, &opt, &b);
        if (r < 0)
                return r;
        return strbuf_steal(&b, ret);
}

char *pyjson_id_text(const json_t *id)
{
        if (json_is_string(id))
                return strdup(json_string_value(id));
        if (id && !json_is_null(id)) {
                char *s = NULL;
                if (pyjson_dumps(id, &s) == 0)
                        return s;
        }
        return strdup("");
}
