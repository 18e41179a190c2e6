/* printf-style formatting: fmt % args, with %s %r %a %d %i %u %o %x %X
 * %e %E %f %F %g %G %c %%, the flags - + space # 0, width and precision
 * (also as *), and %(name)s lookups in a mapping. */
#include "body/library/library.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"

typedef struct PctSpec {
        bool minus, plus, space, alt, zero;
        int64_t width;     /* -1: none */
        int64_t precision; /* -1: none */
        char type;
} PctSpec;

typedef struct PctArgs {
        BodyValue **items;
        size_t n, next;
        BodyValue *mapping;
} PctArgs;

static BodyValue *next_arg(BodyVM *vm, PctArgs *a)
{
        if (a->next >= a->n)
                return bv_raise(vm, BV_EXC_TYPE_ERROR, "not enough arguments for format string");
        return a->items[a->next++];
}

/* Pad text to the width: spaces on the left (right with '-'), or zeros
 * after the sign and prefix (head) when zero-padding. */
static int put_padded(BodyVM *vm, const PctSpec *sp, const char *head, const char *body,
                      size_t body_len, bool numeric, StrBuf *out)
{
        size_t hl = strlen(head), cps = hl + utf8_length(body, body_len), pad = 0;
        int r = 0;

        if (sp->width > 0 && (size_t)sp->width > cps)
                pad = (size_t)sp->width - cps;
        if ((uint64_t)out->len + pad + hl + body_len > vm->limits.max_string)
                return bv__buf_error(vm, -E2BIG);
        if (!sp->minus && !(numeric && sp->zero))
                for (size_t i = 0; i < pad && r >= 0; i++)
                        r = strbuf_putc(out, ' ');
        if (r >= 0)
                r = strbuf_puts(out, head);
        if (!sp->minus && numeric && sp->zero)
                for (size_t i = 0; i < pad && r >= 0; i++)
                        r = strbuf_putc(out, '0');
        if (r >= 0)
                r = strbuf_append(out, body, body_len);
        if (sp->minus)
                for (size_t i = 0; i < pad && r >= 0; i++)
                        r = strbuf_putc(out, ' ');
        return r < 0 ? bv__buf_error(vm, r) : 0;
}

static const char *sign_of(const PctSpec *sp, bool negative)
{
        return negative ? "-" : sp->plus ? "+" : sp->space ? " " : "";
}

static const char *int_prefix(const PctSpec *sp, unsigned base)
{
        return !sp->alt || base == 10 ? "" : base == 8 ? "0o" : sp->type == 'x' ? "0x" : "0X";
}

/* %d %x %o of an int beyond int64. */
static int put_big_int(BodyVM *vm, const PctSpec *sp, BodyValue *v, unsigned base, StrBuf *out)
{
        _cleanup_strbuf_ StrBuf digits = bv__buf(vm);
        _cleanup_strbuf_ StrBuf head = STRBUF_INIT;
        bool neg;
        int r;

        /* The precision is a minimum number of digits; a big int has more
         * digits than any precision put_int() honours. */
        if (bv__int_digits(vm, v, base, sp->type == 'X', &digits, &neg) < 0)
                return -1;
        r = strbuf_printf(&head, "%s%s", sign_of(sp, neg), int_prefix(sp, base));
        if (r < 0)
                return bv__buf_error(vm, r);
        return put_padded(vm, sp, head.data ? head.data : "", digits.data, digits.len, true, out);
}

static int put_int(BodyVM *vm, const PctSpec *sp, BodyValue *v, StrBuf *out)
{
        char digits[80], *p = digits + sizeof(digits) - 1, head[8];
        unsigned base = sp->type == 'o' ? 8 : (sp->type == 'x' || sp->type == 'X') ? 16 : 10;
        int64_t i;
        uint64_t u;
        size_t nd;
        _cleanup_bv_ BodyValue *conv = NULL;

        if (v->kind == BV_FLOAT && base == 10) {
                conv = bv__int_from_double(vm, v->f);
                if (!conv)
                        return -1;
                v = conv;
        } else if (!bv__is_intlike(v)) {
                bv_raise(vm, BV_EXC_TYPE_ERROR, "%%%c format: %s is required, not %s", sp->type,
                         base == 10 ? "a real number" : "an integer", bv_type_name(v));
                return -1;
        }
        if (bv__is_big(v))
                return put_big_int(vm, sp, v, base, out);
        i = bv__int_of(v);
        u = i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i;
        *p = '\0';
        do {
                unsigned d = (unsigned)(u % base);
                *--p = (char)(d < 10 ? '0' + d : (sp->type == 'X' ? 'A' : 'a') + d - 10);
                u /= base;
        } while (u);
        nd = strlen(p);
        /* The precision is a minimum number of digits. */
        while (sp->precision > 0 && nd < (size_t)sp->precision && nd < 60) {
                *--p = '0';
                nd++;
        }
        snprintf(head, sizeof(head), "%s%s", sign_of(sp, i < 0),
                 !sp->alt || base == 10 ? ""
                 : base == 8            ? "0o"
                 : sp->type == 'x'      ? "0x"
                                        : "0X");
        return put_padded(vm, sp, head, p, nd, true, out);
}

static int put_float(BodyVM *vm, const PctSpec *sp, BodyValue *v, StrBuf *out)
{
        _cleanup_free_ char *buf = NULL;
        double d;
        int r;

        if (!bv__is_number(v)) {
                bv_raise(vm, BV_EXC_TYPE_ERROR, "must be real number, not %s", bv_type_name(v));
                return -1;
        }
        if (bv__int_to_double_any(vm, v, &d) < 0)
                return -1;
        r = bv__print_float(&buf, sp->type, sp->alt,
                            (int)(sp->precision < 0      ? 6
                                  : sp->precision > 1000 ? 1000
                                                         : sp->precision),
                            fabs(d));
        if (r < 0) {
                buf = NULL;
                return bv__buf_error(vm, -ENOMEM);
        }
        return put_padded(vm, sp, sign_of(sp, signbit(d) && !isnan(d)), buf, strlen(buf),
                          isfinite(d), out);
}

static int put_text(BodyVM *vm, const PctSpec *sp, BodyValue *v, StrBuf *out)
{
        _cleanup_strbuf_ StrBuf t = bv__buf(vm);
        size_t len;

        if (sp->type == 's') {
                if (bv_str(vm, v, &t) < 0)
                        return -1;
        } else if (bv_repr(vm, v, &t) < 0) {
                return -1;
        }
        if (sp->type == 'a') {
                /* ascii(): escape everything beyond ASCII in the repr. */
                _cleanup_strbuf_ StrBuf a = bv__buf(vm);
                size_t off = 0, l;
                while (off < t.len) {
                        uint32_t cp = bv__cp_at(t.data, t.len, off, &l);
                        int r = cp < 0x80      ? strbuf_putc(&a, (char)cp)
                                : cp < 0x100   ? strbuf_printf(&a, "\\x%02x", cp)
                                : cp < 0x10000 ? strbuf_printf(&a, "\\u%04x", cp)
                                               : strbuf_printf(&a, "\\U%08x", cp);
                        if (r < 0)
                                return bv__buf_error(vm, r);
                        off += l;
                }
                strbuf_free(&t);
                t = a;
                a = (StrBuf)STRBUF_INIT;
        }
        len = t.len;
        if (sp->precision >= 0) {
                size_t off = 0, k = 0;
                while (off < t.len && k < (size_t)sp->precision) {
                        size_t l;
                        bv__cp_at(t.data, t.len, off, &l);
                        off += l;
                        k++;
                }
                len = off;
        }
        return put_padded(vm, sp, "", t.data ? t.data : "", len, false, out);
}

static int put_char(BodyVM *vm, const PctSpec *sp, BodyValue *v, StrBuf *out)
{
        char enc[4];
        size_t len;

        if (v->kind == BV_STR && v->str.cplen == 1) {
                return put_padded(vm, sp, "", v->str.data, v->str.len, false, out);
        } else if (bv__is_intlike(v)) {
                int64_t i = bv__int_of(v);
                if (i < 0 || i > 0x10ffff || (i >= 0xd800 && i <= 0xdfff)) {
                        bv_raise(vm, BV_EXC_OVERFLOW_ERROR, "%%c arg not in range(0x110000)");
                        return -1;
                }
                len = (size_t)utf8_encode((uint32_t)i, enc);
                return put_padded(vm, sp, "", enc, len, false, out);
        }
        bv_raise(vm, BV_EXC_TYPE_ERROR, "%%c requires int or char");
        return -1;
}

static int star_arg(BodyVM *vm, PctArgs *a, int64_t *ret)
{
        BodyValue *v = next_arg(vm, a);
        if (!v)
                return -1;
        if (!bv__is_intlike(v)) {
                bv_raise(vm, BV_EXC_TYPE_ERROR, "* wants int");
                return -1;
        }
        *ret = bv__int_of(v);
        return 0;
}

/* Parse one conversion starting after the '%' at s[*pos], and output it. */
static int one(BodyVM *vm, const char *s, size_t len, size_t *pos, PctArgs *a, StrBuf *out)
{
        PctSpec sp = {.width = -1, .precision = -1};
        BodyValue *v = NULL;
        size_t i = *pos, start = *pos - 1;

        if (i < len && s[i] == '(') {
                size_t depth = 1, k = ++i;
                _cleanup_bv_ BodyValue *key = NULL;
                int r;
                if (!a->mapping) {
                        bv_raise(vm, BV_EXC_TYPE_ERROR, "format requires a mapping");
                        return -1;
                }
                while (k < len && depth > 0) {
                        if (s[k] == '(')
                                depth++;
                        else if (s[k] == ')')
                                depth--;
                        k++;
                }
                if (depth > 0) {
                        bv_raise(vm, BV_EXC_VALUE_ERROR, "incomplete format key");
                        return -1;
                }
                key = bv_str_new(vm, s + i, k - 1 - i);
                if (!key)
                        return -1;
                r = bv_dict_lookup(vm, a->mapping, key, &v);
                if (r < 0)
                        return -1;
                if (r == 0) {
                        bv_raise_value(vm, BV_EXC_KEY_ERROR, key);
                        return -1;
                }
                i = k;
        }
        for (; i < len; i++) {
                if (s[i] == '-')
                        sp.minus = true;
                else if (s[i] == '+')
                        sp.plus = true;
                else if (s[i] == ' ')
                        sp.space = true;
                else if (s[i] == '#')
                        sp.alt = true;
                else if (s[i] == '0')
                        sp.zero = true;
                else
                        break;
        }
        if (i < len && s[i] == '*') {
                if (star_arg(vm, a, &sp.width) < 0)
                        return -1;
                if (sp.width < 0) {
                        sp.minus = true;
                        sp.width = -sp.width;
                }
                i++;
        } else {
                for (sp.width = i < len && s[i] >= '0' && s[i] <= '9' ? 0 : -1;
                     i < len && s[i] >= '0' && s[i] <= '9'; i++)
                        if (__builtin_mul_overflow(sp.width, 10, &sp.width) ||
                            __builtin_add_overflow(sp.width, s[i] - '0', &sp.width)) {
                                bv_raise(vm, BV_EXC_VALUE_ERROR, "width too big");
                                return -1;
                        }
        }
        if (i < len && s[i] == '.') {
                i++;
                if (i < len && s[i] == '*') {
                        if (star_arg(vm, a, &sp.precision) < 0)
                                return -1;
                        i++;
                } else {
                        for (sp.precision = 0; i < len && s[i] >= '0' && s[i] <= '9'; i++)
                                if (__builtin_mul_overflow(sp.precision, 10, &sp.precision) ||
                                    __builtin_add_overflow(sp.precision, s[i] - '0',
                                                           &sp.precision)) {
                                        bv_raise(vm, BV_EXC_VALUE_ERROR, "precision too big");
                                        return -1;
                                }
                }
        }
        while (i < len && (s[i] == 'h' || s[i] == 'l' || s[i] == 'L'))
                i++;
        if (i >= len) {
                bv_raise(vm, BV_EXC_VALUE_ERROR, "incomplete format");
                return -1;
        }
        sp.type = s[i++];
        *pos = i;
        if (sp.type == '%') {
                int r = strbuf_putc(out, '%');
                return r < 0 ? bv__buf_error(vm, r) : 0;
        }
        if (!strchr("sradiuoxXeEfFgGc", sp.type)) {
                size_t l;
                uint32_t cp = bv__cp_at(s, len, i - 1, &l);
                if (cp >= 0x20 && cp < 0x7f)
                        bv_raise(vm, BV_EXC_VALUE_ERROR,
                                 "unsupported format character '%c' (0x%x) at index %zu", (char)cp,
                                 cp, i - 1);
                else
                        bv_raise(vm, BV_EXC_VALUE_ERROR,
                                 "unsupported format character (0x%x) at index %zu", cp, i - 1);
                return -1;
        }
        (void)start;
        if (!v && !(v = next_arg(vm, a)))
                return -1;
        if (bv_step(vm) < 0)
                return -1;
        switch (sp.type) {
        case 's':
        case 'r':
        case 'a':
                return put_text(vm, &sp, v, out);
        case 'c':
                return put_char(vm, &sp, v, out);
        case 'd':
        case 'i':
        case 'u':
        case 'o':
        case 'x':
        case 'X':
                return put_int(vm, &sp, v, out);
        default:
                return put_float(vm, &sp, v, out);
        }
}

BodyValue *bv__str_percent(BodyVM *vm, BodyValue *fmt, BodyValue *args)
{
        _cleanup_strbuf_ StrBuf out = bv__buf(vm);
        const char *s = fmt->str.data;
        size_t len = fmt->str.len, i = 0;
        PctArgs a = {.next = 0};

        if (args->kind == BV_TUPLE) {
                a.items = args->list.items;
                a.n = args->list.len;
        } else {
                a.items = &args;
                a.n = 1;
                /* A mapping serves %(name)s, and may be the single %s too. */
                if (args->kind == BV_DICT)
                        a.mapping = args;
        }
        while (i < len) {
                const char *pct = memchr(s + i, '%', len - i);
                size_t end = pct ? (size_t)(pct - s) : len;
                int r = strbuf_append(&out, s + i, end - i);
                if (r < 0)
                        return bv__buf_error(vm, r), NULL;
                if (!pct)
                        break;
                i = end + 1;
                if (one(vm, s, len, &i, &a, &out) < 0)
                        return NULL;
        }
        if (a.next < a.n && !a.mapping)
                return bv_raise(vm, BV_EXC_TYPE_ERROR,
                                "not all arguments converted during string formatting");
        return bv_str_from_buf(vm, &out);
}

BodyValue *bv__str_binop(BodyVM *vm, BvBinOp op, BodyValue *a, BodyValue *b)
{
        if (op == BV_OP_MOD && a->kind == BV_STR)
                return bv__str_percent(vm, a, b);
        return bv__seq_binop(vm, op, a, b);
}
