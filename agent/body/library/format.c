/* format(value, spec): the format specification mini-language of
 * str.format, for str, int, bool and float, with CPython 3.11's results
 * and error messages:
 *   [[fill]align][sign][z][#][0][width][grouping][.precision][type]
 * Other values accept only the empty spec (object.__format__). */
#include "body/library/library.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/pyjson.h"
#include "util/utf8.h"

typedef struct Spec {
        char fill[4];
        size_t fill_len;
        char align; /* '<' '>' '^' '=' or 0 */
        char sign;  /* '+' '-' ' ' or 0 */
        bool z, alt, zero;
        int64_t width;     /* -1: none */
        char grouping;     /* ',' '_' or 0 */
        int64_t precision; /* -1: none */
        char type;         /* 0: none */
} Spec;

static int parse_number(const char *s, size_t len, size_t *pos, int64_t *ret)
{
        int64_t v = 0;
        size_t start = *pos;

        while (*pos < len && s[*pos] >= '0' && s[*pos] <= '9') {
                if (__builtin_mul_overflow(v, 10, &v) ||
                    __builtin_add_overflow(v, s[*pos] - '0', &v))
                        return -2;
                (*pos)++;
        }
        *ret = v;
        return *pos > start;
}

static bool is_align(char c)
{
        return c == '<' || c == '>' || c == '^' || c == '=';
}

static int parse_spec(BodyVM *vm, BodyValue *v, const char *s, size_t len, Spec *sp)
{
        size_t pos = 0, cl = 0;
        int r;

        *sp = (Spec){.fill = " ", .fill_len = 1, .width = -1, .precision = -1};
        if (len > 0)
                bv__cp_at(s, len, 0, &cl);
        if (len > cl && is_align(s[cl])) {
                memcpy(sp->fill, s, cl);
                sp->fill_len = cl;
                sp->align = s[cl];
                pos = cl + 1;
        } else if (len > 0 && is_align(s[0])) {
                sp->align = s[0];
                pos = 1;
        }
        if (pos < len && (s[pos] == '+' || s[pos] == '-' || s[pos] == ' '))
                sp->sign = s[pos++];
        if (pos < len && s[pos] == 'z') {
                sp->z = true;
                pos++;
        }
        if (pos < len && s[pos] == '#') {
                sp->alt = true;
                pos++;
        }
        if (pos < len && s[pos] == '0') {
                sp->zero = true;
                pos++;
        }
        r = parse_number(s, len, &pos, &sp->width);
        if (r == -2)
                goto too_big;
        if (r == 0)
                sp->width = -1;
        if (pos < len && (s[pos] == ',' || s[pos] == '_')) {
                sp->grouping = s[pos++];
                if (pos < len && (s[pos] == ',' || s[pos] == '_')) {
                        bv_raise(vm, BV_EXC_VALUE_ERROR, "Cannot specify both ',' and '_'.");
                        return -1;
                }
        }
        if (pos < len && s[pos] == '.') {
                pos++;
                r = parse_number(s, len, &pos, &sp->precision);
                if (r == -2)
                        goto too_big;
                if (r == 0) {
                        bv_raise(vm, BV_EXC_VALUE_ERROR, "Format specifier missing precision");
                        return -1;
                }
        }
        if (len - pos > 1 || (len - pos == 1 && (unsigned char)s[pos] >= 0x80)) {
                bv_raise(vm, BV_EXC_VALUE_ERROR,
                         "Invalid format specifier '%.*s' for object of type '%s'", (int)len, s,
                         bv_type_name(v));
                return -1;
        }
        if (pos < len)
                sp->type = s[pos];
        if (sp->zero && !sp->align && sp->fill_len == 1 && sp->fill[0] == ' ') {
                /* A leading 0 means fill '0', with '=' for numbers. */
                sp->fill[0] = '0';
                if (v->kind != BV_STR)
                        sp->align = '=';
        }
        if (sp->width > 0 && bv__check_string_size(vm, (uint64_t)sp->width) < 0)
                return -1;
        return 0;
too_big:
        bv_raise(vm, BV_EXC_VALUE_ERROR, "Too many decimal digits in format string");
        return -1;
}

static void *unknown_code(BodyVM *vm, char type, BodyValue *v)
{
        if ((unsigned char)type > 32 && (unsigned char)type < 128)
                return bv_raise(vm, BV_EXC_VALUE_ERROR,
                                "Unknown format code '%c' for object of type '%s'", type,
                                bv_type_name(v));
        return bv_raise(vm, BV_EXC_VALUE_ERROR,
                        "Unknown format code '\\x%x' for object of type '%s'", (unsigned)type,
                        bv_type_name(v));
}

/* Append the fill character k times. */
static int put_fill(StrBuf *out, const Spec *sp, size_t k)
{
        for (size_t i = 0; i < k; i++) {
                int r = strbuf_append(out, sp->fill, sp->fill_len);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Lay out head (sign and prefix) and body in the field width. */
static int emit(BodyVM *vm, const Spec *sp, char default_align, const char *head, size_t head_len,
                const char *body, size_t body_len, StrBuf *out)
{
        size_t cps = utf8_length(head, head_len) + utf8_length(body, body_len), pad = 0, left;
        char align = sp->align ? sp->align : default_align;
        int r;

        if (sp->width > 0 && (size_t)sp->width > cps)
                pad = (size_t)sp->width - cps;
        if ((uint64_t)out->len + head_len + body_len + pad * sp->fill_len > vm->limits.max_string)
                return bv__buf_error(vm, -E2BIG);
        left = align == '>' ? pad : align == '^' ? pad / 2 : 0;
        if (align == '=') {
                if ((r = strbuf_append(out, head, head_len)) < 0 ||
                    (r = put_fill(out, sp, pad)) < 0 ||
                    (r = strbuf_append(out, body, body_len)) < 0)
                        return bv__buf_error(vm, r);
                return 0;
        }
        if ((r = put_fill(out, sp, left)) < 0 || (r = strbuf_append(out, head, head_len)) < 0 ||
            (r = strbuf_append(out, body, body_len)) < 0 || (r = put_fill(out, sp, pad - left)) < 0)
                return bv__buf_error(vm, r);
        return 0;
}

/* Insert the grouping separator into digits[0..n), every `interval`
 * digits from the right, zero-padding to at least min_width characters
 * as CPython does for "{:08,}". */
static int group_digits(StrBuf *out, const char *digits, size_t n, char sep, size_t interval,
                        size_t min_width)
{
        char *rev = malloc(2 * (n + min_width) + 2);
        size_t len = 0, i = n;
        int r;

        if (!rev)
                return -ENOMEM;
        for (;;) {
                size_t g = 0;
                while (g < interval && i > 0) {
                        rev[len++] = digits[--i];
                        g++;
                }
                while (g < interval && i == 0 && (len < min_width || g == 0)) {
                        rev[len++] = '0';
                        g++;
                }
                if (i == 0 && len >= min_width)
                        break;
                rev[len++] = sep;
        }
        for (size_t a = 0, b = len; a + 1 < b; a++, b--) {
                char t = rev[a];
                rev[a] = rev[b - 1];
                rev[b - 1] = t;
        }
        r = strbuf_append(out, rev, len);
        free(rev);
        return r;
}

/* The number text: head (sign, prefix) and body (digits with grouping,
 * fraction, exponent), padded by emit(). */
static int emit_number(BodyVM *vm, const Spec *sp, bool negative, const char *prefix,
                       const char *digits, size_t n_int, const char *rest, StrBuf *out)
{
        _cleanup_strbuf_ StrBuf body = STRBUF_INIT;
        char head[8];
        size_t hl = 0, min_width = 0;
        int r;

        if (negative)
                head[hl++] = '-';
        else if (sp->sign == '+' || sp->sign == ' ')
                head[hl++] = sp->sign;
        memcpy(head + hl, prefix, strlen(prefix));
        hl += strlen(prefix);
        if (sp->grouping) {
                size_t interval = sp->type && strchr("bxXo", sp->type) ? 4 : 3;
                /* Zero padding goes inside the grouping: "0,001,234". */
                if (sp->align == '=' && sp->fill_len == 1 && sp->fill[0] == '0' && sp->width > 0 &&
                    (size_t)sp->width > hl + strlen(rest))
                        min_width = (size_t)sp->width - hl - strlen(rest);
                r = group_digits(&body, digits, n_int, sp->grouping, interval, min_width);
        } else {
                r = strbuf_append(&body, digits, n_int);
        }
        if (r >= 0)
                r = strbuf_puts(&body, rest);
        if (r < 0)
                return bv__buf_error(vm, r);
        return emit(vm, sp, '>', head, hl, body.data, body.len, out);
}

static int format_int(BodyVM *vm, BodyValue *v, const Spec *sp, StrBuf *out)
{
        int64_t i = bv__int_of(v);
        uint64_t u = i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i;
        char digits[72], *p = digits + sizeof(digits);
        const char *prefix = "";
        char alt_prefix[3] = {'0', sp->type, 0}; /* 0b, 0o, 0x or 0X */
        unsigned base = 10;
        bool upper = false;

        if (sp->precision >= 0) {
                bv_raise(vm, BV_EXC_VALUE_ERROR,
                         "Precision not allowed in integer format specifier");
                return -1;
        }
        switch (sp->type) {
        case 'b':
        case 'o':
        case 'x':
        case 'X':
                base = sp->type == 'b' ? 2 : sp->type == 'o' ? 8 : 16;
                upper = sp->type == 'X';
                prefix = sp->alt ? alt_prefix : "";
                break;
        case 'c': {
                char enc[4];
                if (sp->grouping) {
                        bv_raise(vm, BV_EXC_VALUE_ERROR, "Cannot specify '%c' with 'c'.",
                                 sp->grouping);
                        return -1;
                }
                if (sp->sign) {
                        bv_raise(vm, BV_EXC_VALUE_ERROR,
                                 "Sign not allowed with integer format specifier 'c'");
                        return -1;
                }
                if (bv__is_big(v)) {
                        bv_raise(vm, BV_EXC_OVERFLOW_ERROR,
                                 "Python int too large to convert to C long");
                        return -1;
                }
                if (i < 0 || i > 0x10ffff || (i >= 0xd800 && i <= 0xdfff)) {
                        bv_raise(vm, BV_EXC_OVERFLOW_ERROR, "%%c arg not in range(0x110000)");
                        return -1;
                }
                return emit(vm, sp, '>', "", 0, enc, (size_t)utf8_encode((uint32_t)i, enc), out);
        }
        case 'd':
        case 'n':
        case 0:
                break;
        default:
                unknown_code(vm, sp->type, v);
                return -1;
        }
        if (sp->grouping == ',' && base != 10) {
                bv_raise(vm, BV_EXC_VALUE_ERROR, "Cannot specify ',' with '%c'.", sp->type);
                return -1;
        }
        if (sp->grouping && sp->type == 'n') {
                bv_raise(vm, BV_EXC_VALUE_ERROR, "Cannot specify '%c' with 'n'.", sp->grouping);
                return -1;
        }
        if (bv__is_big(v)) {
                _cleanup_strbuf_ StrBuf big = bv__buf(vm);
                bool neg;
                if (bv__int_digits(vm, v, base, upper, &big, &neg) < 0)
                        return -1;
                return emit_number(vm, sp, neg, prefix, big.data, big.len, "", out);
        }
        do {
                unsigned d = (unsigned)(u % base);
                *--p = (char)(d < 10 ? '0' + d : (upper ? 'A' : 'a') + d - 10);
                u /= base;
        } while (u);
        return emit_number(vm, sp, i < 0, prefix, p, (size_t)(digits + sizeof(digits) - p), "",
                           out);
}

/* Remove trailing zeros (and a bare '.') from the fraction of a %g-style
 * mantissa in buf, keeping any exponent. */
static void strip_zeros(char *buf)
{
        char *e = strpbrk(buf, "eE"), *dot = strchr(buf, '.'), *end;

        if (!dot || (e && dot > e))
                return;
        end = e ? e : buf + strlen(buf);
        while (end > dot + 1 && end[-1] == '0')
                end--;
        if (end == dot + 1)
                end = dot;
        memmove(end, e ? e : buf + strlen(buf), strlen(e ? e : "") + 1);
}

/* printf of d as one of e E f F g G, with '#' when alt. */
int bv__print_float(char **buf, char type, bool alt, int prec, double d)
{
        switch (type) {
        case 'e':
                return alt ? asprintf(buf, "%#.*e", prec, d) : asprintf(buf, "%.*e", prec, d);
        case 'E':
                return alt ? asprintf(buf, "%#.*E", prec, d) : asprintf(buf, "%.*E", prec, d);
        case 'f':
                return alt ? asprintf(buf, "%#.*f", prec, d) : asprintf(buf, "%.*f", prec, d);
        case 'F':
                return alt ? asprintf(buf, "%#.*F", prec, d) : asprintf(buf, "%.*F", prec, d);
        case 'g':
                return alt ? asprintf(buf, "%#.*g", prec, d) : asprintf(buf, "%.*g", prec, d);
        default:
                return alt ? asprintf(buf, "%#.*G", prec, d) : asprintf(buf, "%.*G", prec, d);
        }
}

static int format_float(BodyVM *vm, BodyValue *v, const Spec *sp, StrBuf *out)
{
        double d;
        int64_t prec = sp->precision;

        if (bv__int_to_double_any(vm, v, &d) < 0)
                return -1;
        char type = sp->type, rbuf[32];
        _cleanup_free_ char *buf = NULL;
        _cleanup_free_ char *rest = NULL;
        const char *suffix = "";
        bool negative;
        size_t n_int;
        int r = 0;

        switch (type) {
        case 'e':
        case 'E':
        case 'f':
        case 'F':
        case 'g':
        case 'G':
        case '%':
        case 0:
                break;
        case 'n':
                type = 'g';
                break;
        default:
                unknown_code(vm, sp->type, v);
                return -1;
        }
        if (prec > 1000)
                prec = 1000;
        negative = signbit(d) && !isnan(d);
        d = fabs(d);
        if (type == '%') {
                d *= 100;
                type = 'f';
                suffix = "%";
        }
        if (type == 0 && prec < 0) {
                pyfloat_repr(d, rbuf);
                buf = strdup(rbuf);
                r = buf ? 0 : -1;
        } else if (type == 0) {
                /* Like 'g', but switching to exponent notation one digit
                 * earlier and keeping ".0" on integral values (CPython's
                 * Py_DTSF_ADD_DOT_0). */
                int p = prec == 0 ? 1 : (int)prec, x = 0;
                if (isfinite(d) && d != 0) {
                        snprintf(rbuf, sizeof(rbuf), "%.*e", p - 1 > 20 ? 20 : p - 1, d);
                        x = atoi(strchr(rbuf, 'e') + 1);
                        /* Rounding to p digits may carry into a new digit. */
                        if (p - 1 > 20) {
                                _cleanup_free_ char *t = NULL;
                                if (asprintf(&t, "%.*e", p - 1, d) >= 0)
                                        x = atoi(strchr(t, 'e') + 1);
                        }
                }
                if (!isfinite(d))
                        r = asprintf(&buf, "%f", d);
                else if (x < -4 || x >= p - 1)
                        r = asprintf(&buf, sp->alt ? "%#.*e" : "%.*e", p - 1, d);
                else
                        r = asprintf(&buf, sp->alt ? "%#.*f" : "%.*f", p - 1 - x, d);
                if (r >= 0 && !sp->alt)
                        strip_zeros(buf);
                if (r >= 0 && isfinite(d) && !strpbrk(buf, ".e")) {
                        char *t = NULL;
                        r = asprintf(&t, "%s.0", buf);
                        free(buf);
                        buf = r >= 0 ? t : NULL;
                }
        } else {
                r = bv__print_float(&buf, type, sp->alt, (int)(prec < 0 ? 6 : prec), d);
        }
        if (r < 0 || !buf) {
                buf = NULL;
                return bv__buf_error(vm, -ENOMEM);
        }
        if (sp->z && negative) {
                /* 'z': a negative zero after rounding prints as zero. */
                bool all_zero = true;
                for (const char *c = buf; *c && *c != 'e' && *c != 'E'; c++)
                        if (*c >= '1' && *c <= '9')
                                all_zero = false;
                if (all_zero)
                        negative = false;
        }
        n_int = strspn(buf, "0123456789");
        if (n_int == 0) /* inf, nan */
                n_int = strlen(buf);
        if (asprintf(&rest, "%s%s", buf + n_int, suffix) < 0) {
                rest = NULL;
                return bv__buf_error(vm, -ENOMEM);
        }
        buf[n_int] = '\0';
        return emit_number(vm, sp, negative, "", buf, n_int, rest, out);
}

static int format_str(BodyVM *vm, BodyValue *v, const Spec *sp, StrBuf *out)
{
        size_t len = v->str.len;

        if (sp->type && sp->type != 's') {
                unknown_code(vm, sp->type, v);
                return -1;
        }
        if (sp->sign) {
                bv_raise(vm, BV_EXC_VALUE_ERROR, "Sign not allowed in string format specifier");
                return -1;
        }
        if (sp->alt) {
                bv_raise(vm, BV_EXC_VALUE_ERROR,
                         "Alternate form (#) not allowed in string format specifier");
                return -1;
        }
        if (sp->z) {
                bv_raise(vm, BV_EXC_VALUE_ERROR,
                         "Negative zero coercion (z) not allowed in format specifier");
                return -1;
        }
        if (sp->grouping) {
                bv_raise(vm, BV_EXC_VALUE_ERROR, "Cannot specify '%c' with 's'.", sp->grouping);
                return -1;
        }
        if (sp->align == '=') {
                bv_raise(vm, BV_EXC_VALUE_ERROR,
                         "'=' alignment not allowed in string format specifier");
                return -1;
        }
        if (sp->precision >= 0 && (size_t)sp->precision < v->str.cplen)
                len = bv__str_offset(v, (size_t)sp->precision);
        return emit(vm, sp, '<', "", 0, v->str.data, len, out);
}

int bv_format(BodyVM *vm, BodyValue *v, const char *spec, size_t spec_len, StrBuf *out)
{
        Spec sp;

        if (spec_len == 0 || (!bv__is_number(v) && v->kind != BV_STR)) {
                if (spec_len > 0) {
                        bv_raise(vm, BV_EXC_TYPE_ERROR,
                                 "unsupported format string passed to %s.__format__",
                                 bv_type_name(v));
                        return -1;
                }
                return bv_str(vm, v, out);
        }
        if (parse_spec(vm, v, spec, spec_len, &sp) < 0)
                return -1;
        if (v->kind == BV_STR)
                return format_str(vm, v, &sp, out);
        if (v->kind == BV_FLOAT || (sp.type && strchr("eEfFgG%", sp.type)))
                return format_float(vm, v, &sp, out);
        return format_int(vm, v, &sp, out);
}
