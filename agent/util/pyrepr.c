/* Python str()/repr() of JSON values (see pyrepr.h). */
#include "util/pyrepr.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "util/pyjson.h"
#include "util/pyrepr-printable.h"
#include "util/utf8.h"

/* Python raises RecursionError near its default limit of 1000 frames. */
#define PYREPR_MAX_DEPTH 1000

static bool is_printable(uint32_t cp)
{
        size_t lo = 0, hi = ELEMENTSOF(pyrepr_nonprintable);

        if (cp < 0x80)
                return cp >= 0x20 && cp < 0x7f;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (cp < pyrepr_nonprintable[mid][0])
                        hi = mid;
                else if (cp > pyrepr_nonprintable[mid][1])
                        lo = mid + 1;
                else
                        return false;
        }
        return true;
}

int pyrepr_string(StrBuf *out, const char *s, size_t len)
{
        bool has_single = memchr(s, '\'', len) != NULL;
        bool has_double = memchr(s, '"', len) != NULL;
        /* CPython picks the double quote only when that saves escaping. */
        char quote = has_single && !has_double ? '"' : '\'';
        size_t i = 0;
        int r;

        if ((r = strbuf_putc(out, quote)) < 0)
                return r;
        while (i < len) {
                uint32_t cp;
                int n = utf8_decode(s + i, len - i, &cp);

                if (n <= 0)
                        return -EILSEQ;
                if (cp == (uint32_t)quote || cp == '\\')
                        r = strbuf_printf(out, "\\%c", (char)cp);
                else if (cp == '\t')
                        r = strbuf_puts(out, "\\t");
                else if (cp == '\n')
                        r = strbuf_puts(out, "\\n");
                else if (cp == '\r')
                        r = strbuf_puts(out, "\\r");
                else if (is_printable(cp))
                        r = strbuf_append(out, s + i, (size_t)n);
                else if (cp <= 0xff)
                        r = strbuf_printf(out, "\\x%02x", (unsigned)cp);
                else if (cp <= 0xffff)
                        r = strbuf_printf(out, "\\u%04x", (unsigned)cp);
                else
                        r = strbuf_printf(out, "\\U%08x", (unsigned)cp);
                if (r < 0)
                        return r;
                i += (size_t)n;
        }
        return strbuf_putc(out, quote);
}

const char *pyrepr_type_name(const json_t *v)
{
        switch (json_typeof(v)) {
        case JSON_OBJECT:
                return "dict";
        case JSON_ARRAY:
                return "list";
        case JSON_STRING:
                return pyjson_bigint_digits(v) ? "int" : "str";
        case JSON_INTEGER:
                return "int";
        case JSON_REAL:
                return "float";
        case JSON_TRUE:
        case JSON_FALSE:
                return "bool";
        case JSON_NULL:
        default:
                return "NoneType";
        }
}

bool pyrepr_truthy(const json_t *v)
{
        if (!v)
                return false;
        switch (json_typeof(v)) {
        case JSON_OBJECT:
                return json_object_size(v) > 0;
        case JSON_ARRAY:
                return json_array_size(v) > 0;
        case JSON_STRING:
                return json_string_length(v) > 0; /* a big integer is never 0 */
        case JSON_INTEGER:
                return json_integer_value(v) != 0;
        case JSON_REAL:
                return json_real_value(v) != 0.0;
        case JSON_TRUE:
                return true;
        default:
                return false;
        }
}

static int repr(const json_t *v, StrBuf *out, unsigned depth)
{
        char num[32];
        const char *key;
        json_t *item;
        size_t i;
        int r = 0;

        if (depth > PYREPR_MAX_DEPTH)
                return -EINVAL;
        switch (json_typeof(v)) {
        case JSON_OBJECT:
                if ((r = strbuf_putc(out, '{')) < 0)
                        return r;
                i = 0;
                json_object_foreach ((json_t *)v, key, item) {
                        if (i++ > 0 && (r = strbuf_puts(out, ", ")) < 0)
                                return r;
                        if ((r = pyrepr_string(out, key, strlen(key))) < 0)
                                return r;
                        if ((r = strbuf_puts(out, ": ")) < 0)
                                return r;
                        if ((r = repr(item, out, depth + 1)) < 0)
                                return r;
                }
                return strbuf_putc(out, '}');
        case JSON_ARRAY:
                if ((r = strbuf_putc(out, '[')) < 0)
                        return r;
                json_array_foreach (v, i, item) {
                        if (i > 0 && (r = strbuf_puts(out, ", ")) < 0)
                                return r;
                        if ((r = repr(item, out, depth + 1)) < 0)
                                return r;
                }
                return strbuf_putc(out, ']');
        case JSON_STRING:
                /* An integer beyond 64 bits (util/pyjson.h) is its digits. */
                if (pyjson_bigint_digits(v))
                        return strbuf_puts(out, pyjson_bigint_digits(v));
                return pyrepr_string(out, json_string_value(v), json_string_length(v));
        case JSON_INTEGER:
                return strbuf_printf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        case JSON_REAL:
                pyfloat_repr(json_real_value(v), num);
                return strbuf_puts(out, num);
        case JSON_TRUE:
                return strbuf_puts(out, "True");
        case JSON_FALSE:
                return strbuf_puts(out, "False");
        case JSON_NULL:
                return strbuf_puts(out, "None");
        default:
                return -EINVAL;
        }
}

int pyrepr_repr(const json_t *v, StrBuf *out)
{
        if (!v)
                return strbuf_puts(out, "None");
        return repr(v, out, 0);
}

int pyrepr_str(const json_t *v, StrBuf *out)
{
        if (v && json_is_string(v) && !pyjson_bigint_digits(v)) {
                const char *s = json_string_value(v);
                size_t len = json_string_length(v);

                if (!utf8_valid(s, len, NULL))
                        return -EILSEQ;
                return strbuf_append(out, s, len);
        }
        return pyrepr_repr(v, out);
}
