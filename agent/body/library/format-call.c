/* str.format(*args, **kwargs): literal text with {{ and }}, replacement
 * fields {name!conv:spec} where name is an automatic, positional or keyword
 * argument followed by .attribute and [index] parts, and specs that may
 * themselves contain one level of nested fields. The most used feature of
 * real Bodies: '{0} {1}'.format(args.name, args.ip). */
#include "body/library/library.h"

#include <string.h>

typedef struct FormatCtx {
        BodyVM *vm;
        BodyValue **args;
        size_t n;
        BodyValue *kwargs;
        int auto_index; /* next automatic index; -1 once manual numbering is used */
        bool manual;
} FormatCtx;

static bool all_digits(const char *s, size_t len)
{
        if (len == 0)
                return false;
        for (size_t i = 0; i < len; i++)
                if (s[i] < '0' || s[i] > '9')
                        return false;
        return true;
}

static int64_t to_index(const char *s, size_t len)
{
        int64_t v = 0;
        for (size_t i = 0; i < len; i++)
                if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s[i] - '0', &v))
                        return INT64_MAX;
        return v;
}

/* Resolve the argument part of a field name (before any . or [). */
static BodyValue *field_arg(FormatCtx *c, const char *name, size_t len)
{
        BodyVM *vm = c->vm;
        int64_t idx;

        if (len == 0 || all_digits(name, len)) {
                if (len == 0) {
                        if (c->manual)
                                return bv_raise(vm, BV_EXC_VALUE_ERROR,
                                                "cannot switch from manual field specification "
                                                "to automatic field numbering");
                        idx = c->auto_index++;
                } else {
                        if (c->auto_index > 0)
                                return bv_raise(vm, BV_EXC_VALUE_ERROR,
                                                "cannot switch from automatic field numbering to "
                                                "manual field specification");
                        c->manual = true;
                        idx = to_index(name, len);
                }
                if ((uint64_t)idx >= c->n)
                        return bv_raise(vm, BV_EXC_INDEX_ERROR,
                                        "Replacement index %lld out of range for positional args "
                                        "tuple",
                                        (long long)idx);
                return bv_ref(c->args[idx]);
        }
        {
                _cleanup_bv_ BodyValue *key = bv_str_new(vm, name, len);
                BodyValue *v = NULL;
                int r;
                if (!key)
                        return NULL;
                r = c->kwargs ? bv_dict_lookup(vm, c->kwargs, key, &v) : 0;
                if (r < 0)
                        return NULL;
                if (r == 0)
                        return bv_raise_value(vm, BV_EXC_KEY_ERROR, key);
                return bv_ref(v);
        }
}

/* The value a field name designates: arg, then .attr and [key] parts. */
static BodyValue *field_value(FormatCtx *c, const char *f, size_t len)
{
        BodyVM *vm = c->vm;
        size_t i = 0;
        _cleanup_bv_ BodyValue *v = NULL;

        while (i < len && f[i] != '.' && f[i] != '[')
                i++;
        v = field_arg(c, f, i);
        if (!v)
                return NULL;
        while (i < len) {
                BodyValue *next;
                if (f[i] == '.') {
                        size_t start = ++i;
                        _cleanup_free_ char *attr = NULL;
                        while (i < len && f[i] != '.' && f[i] != '[')
                                i++;
                        if (i == start)
                                return bv_raise(vm, BV_EXC_VALUE_ERROR,
                                                "Empty attribute in format string");
                        attr = strndup(f + start, i - start);
                        if (!attr)
                                return bv_raise_fatal(vm, -ENOMEM);
                        next = bv_getattr(vm, v, attr);
                } else if (f[i] == '[') {
                        size_t start = ++i;
                        _cleanup_bv_ BodyValue *key = NULL;
                        while (i < len && f[i] != ']')
                                i++;
                        if (i >= len)
                                return bv_raise(vm, BV_EXC_VALUE_ERROR,
                                                "Missing ']' in format string");
                        if (i == start)
                                return bv_raise(vm, BV_EXC_VALUE_ERROR,
                                                "Empty attribute in format string");
                        /* Digits index as an int, anything else is a str key. */
                        key = all_digits(f + start, i - start)
                                      ? bv_int_new(vm, to_index(f + start, i - start))
                                      : bv_str_new(vm, f + start, i - start);
                        i++;
                        if (!key)
                                return NULL;
                        if (i < len && f[i] != '.' && f[i] != '[')
                                return bv_raise(vm, BV_EXC_VALUE_ERROR,
                                                "Only '.' or '[' may follow ']' in format field "
                                                "specifier");
                        next = bv_getitem(vm, v, key);
                } else {
                        return bv_raise(vm, BV_EXC_VALUE_ERROR,
                                        "Only '.' or '[' may follow ']' in format field specifier");
                }
                if (!next)
                        return NULL;
                bv_unref(v);
                v = next;
        }
        return TAKE_PTR(v);
}

/* ascii(): repr with every non-ASCII code point escaped. */
static int put_ascii(BodyVM *vm, BodyValue *v, StrBuf *out)
{
        _cleanup_strbuf_ StrBuf r = bv__buf(vm);
        size_t off = 0, len;

        if (bv_repr(vm, v, &r) < 0)
                return -1;
        while (off < r.len) {
                uint32_t cp = bv__cp_at(r.data, r.len, off, &len);
                int e;
                if (cp < 0x80)
                        e = strbuf_putc(out, (char)cp);
                else
                        e = bv__put_cp_escape(out, cp);
                if (e < 0)
                        return bv__buf_error(vm, e);
                off += len;
        }
        return 0;
}

static int format_into(FormatCtx *c, const char *s, size_t len, StrBuf *out, int depth);

/* One replacement field, the text between the braces. */
static int do_field(FormatCtx *c, const char *f, size_t len, StrBuf *out, int depth)
{
        BodyVM *vm = c->vm;
        size_t name_end = 0, bracket = 0;
        const char *conv = NULL, *spec = "";
        size_t spec_len = 0;
        _cleanup_bv_ BodyValue *v = NULL;
        _cleanup_bv_ BodyValue *cv = NULL;
        _cleanup_strbuf_ StrBuf spec_buf = bv__buf(vm);

        /* The name runs to the first '!' or ':' outside brackets. */
        while (name_end < len) {
                char ch = f[name_end];
                if (ch == '[')
                        bracket = 1;
                else if (ch == ']')
                        bracket = 0;
                else if (!bracket && (ch == '!' || ch == ':'))
                        break;
                name_end++;
        }
        if (name_end < len && f[name_end] == '!') {
                if (name_end + 1 >= len) {
                        bv_raise(vm, BV_EXC_VALUE_ERROR,
                                 "end of string while looking for conversion specifier");
                        return -1;
                }
                conv = f + name_end + 1;
                if (name_end + 2 < len && f[name_end + 2] != ':') {
                        bv_raise(vm, BV_EXC_VALUE_ERROR, "expected ':' after conversion specifier");
                        return -1;
                }
                if (name_end + 2 < len) {
                        spec = f + name_end + 3;
                        spec_len = len - name_end - 3;
                }
        } else if (name_end < len) {
                spec = f + name_end + 1;
                spec_len = len - name_end - 1;
        }
        if (bv_step(vm) < 0)
                return -1;
        v = field_value(c, f, name_end);
        if (!v)
                return -1;
        if (memchr(spec, '{', spec_len)) {
                if (depth >= 1) {
                        bv_raise(vm, BV_EXC_VALUE_ERROR, "Max string recursion exceeded");
                        return -1;
                }
                if (format_into(c, spec, spec_len, &spec_buf, depth + 1) < 0)
                        return -1;
                spec = spec_buf.data ? spec_buf.data : "";
                spec_len = spec_buf.len;
        }
        if (conv) {
                switch (*conv) {
                case 's':
                        cv = bv_to_str(vm, v);
                        break;
                case 'r':
                        cv = bv_to_repr(vm, v);
                        break;
                case 'a': {
                        _cleanup_strbuf_ StrBuf a = bv__buf(vm);
                        if (put_ascii(vm, v, &a) < 0)
                                return -1;
                        cv = bv_str_from_buf(vm, &a);
                        break;
                }
                default:
                        if ((unsigned char)*conv >= 0x80)
                                bv_raise(vm, BV_EXC_VALUE_ERROR,
                                         "Unknown conversion specifier \\x%x",
                                         (unsigned)(unsigned char)*conv);
                        else
                                bv_raise(vm, BV_EXC_VALUE_ERROR, "Unknown conversion specifier %c",
                                         *conv);
                        return -1;
                }
                if (!cv)
                        return -1;
        }
        return bv_format(vm, cv ? cv : v, spec, spec_len, out);
}

static int format_into(FormatCtx *c, const char *s, size_t len, StrBuf *out, int depth)
{
        BodyVM *vm = c->vm;
        size_t i = 0;

        while (i < len) {
                size_t start = i;
                int r;
                while (i < len && s[i] != '{' && s[i] != '}')
                        i++;
                if (i > start && (r = strbuf_append(out, s + start, i - start)) < 0)
                        return bv__buf_error(vm, r);
                if (i >= len)
                        break;
                if (s[i] == '}') {
                        if (i + 1 < len && s[i + 1] == '}') {
                                if ((r = strbuf_putc(out, '}')) < 0)
                                        return bv__buf_error(vm, r);
                                i += 2;
                                continue;
                        }
                        bv_raise(vm, BV_EXC_VALUE_ERROR, "Single '}' encountered in format string");
                        return -1;
                }
                if (i + 1 < len && s[i + 1] == '{') {
                        if ((r = strbuf_putc(out, '{')) < 0)
                                return bv__buf_error(vm, r);
                        i += 2;
                        continue;
                }
                if (i + 1 >= len) {
                        bv_raise(vm, BV_EXC_VALUE_ERROR, "Single '{' encountered in format string");
                        return -1;
                }
                {
                        /* Find the matching '}', counting nested braces in the spec. */
                        size_t j = i + 1, nest = 1;
                        bool in_bracket = false;
                        for (; j < len; j++) {
                                if (s[j] == '[' && nest == 1)
                                        in_bracket = true;
                                else if (s[j] == ']' && nest == 1)
                                        in_bracket = false;
                                else if (s[j] == '{' && !in_bracket)
                                        nest++;
                                else if (s[j] == '}' && !in_bracket && --nest == 0)
                                        break;
                        }
                        if (j >= len) {
                                bv_raise(vm, BV_EXC_VALUE_ERROR,
                                         nest > 1 ? "unmatched '{' in format spec"
                                                  : "expected '}' before end of string");
                                return -1;
                        }
                        if (do_field(c, s + i + 1, j - i - 1, out, depth) < 0)
                                return -1;
                        i = j + 1;
                }
        }
        return 0;
}

BodyValue *bv__str_format(BodyVM *vm, BodyValue *fmt, BodyValue **args, size_t n, BodyValue *kwargs)
{
        _cleanup_strbuf_ StrBuf out = bv__buf(vm);
        FormatCtx c = {.vm = vm, .args = args, .n = n, .kwargs = kwargs};

        if (format_into(&c, fmt->str.data, fmt->str.len, &out, 0) < 0)
                return NULL;
        return bv_str_from_buf(vm, &out);
}
