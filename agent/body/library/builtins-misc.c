/* The small builtins (len, repr, abs, round, hash, ord, chr, hex, oct, bin,
 * isinstance, issubclass, callable, hasattr, getattr, setattr, print,
 * divmod, pow, iter, next, format) and the table of builtin names. */
#include "body/library/library.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"

#define BUILTIN(fn)                                                                                \
        static BodyValue *fn(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,              \
                             BodyValue *kwargs)

BUILTIN(b_len)
{
        size_t len;

        if (bv__check_args(vm, "len", n, kwargs, 1, 1) < 0 || bv_len(vm, args[0], &len) < 0)
                return NULL;
        return bv_int_new(vm, (int64_t)len);
}

BUILTIN(b_repr)
{
        if (bv__check_args(vm, "repr", n, kwargs, 1, 1) < 0)
                return NULL;
        return bv_to_repr(vm, args[0]);
}

BUILTIN(b_abs)
{
        BodyValue *x;

        if (bv__check_args(vm, "abs", n, kwargs, 1, 1) < 0)
                return NULL;
        x = args[0];
        if (x->kind == BV_FLOAT)
                return bv_float_new(vm, fabs(x->f));
        if (bv__is_intlike(x)) {
                int64_t i = bv__int_of(x);
                if (bv__is_big(x) || i == INT64_MIN)
                        return i >= 0 ? bv_ref(x) : bv__int_unop_big(vm, BV_OP_NEG, x);
                return bv_int_new(vm, i < 0 ? -i : i);
        }
        return bv_raise(vm, BV_EXC_TYPE_ERROR, "bad operand type for abs(): '%s'", bv_type_name(x));
}

/* Round the decimal digit string of an integer at `drop` digits from the
 * right, half to even; `above` says the true value is a little larger than
 * the digits show (a fraction was cut off). Returns the rounded magnitude as
 * a string in buf. */
static void round_digits(char *digits, size_t drop, bool above)
{
        size_t len = strlen(digits);
        bool up;

        if (drop == 0)
                return;
        if (drop > len) {
                digits[0] = '0';
                digits[1] = '\0';
                return;
        }
        {
                char first = digits[len - drop];
                bool rest_zero = true;
                for (size_t i = len - drop + 1; i < len; i++)
                        if (digits[i] != '0')
                                rest_zero = false;
                if (first > '5' || (first == '5' && (!rest_zero || above)))
                        up = true;
                else if (first == '5')
                        up = len - drop > 0 && (digits[len - drop - 1] - '0') % 2 == 1;
                else
                        up = false;
        }
        for (size_t i = len - drop; i < len; i++)
                digits[i] = '0';
        if (up) {
                size_t i = len - drop;
                while (i > 0 && digits[i - 1] == '9')
                        digits[--i] = '0';
                if (i == 0) {
                        memmove(digits + 1, digits, len + 1);
                        digits[0] = '1';
                } else {
                        digits[i - 1]++;
                }
        }
}

static BodyValue *round_float(BodyVM *vm, double x, int64_t nd)
{
        char buf[400];
        double r;

        if (!isfinite(x) || nd > 320)
                return bv_float_new(vm, x);
        if (nd >= 0) {
                /* glibc prints the exact binary value rounded half-even,
                 * which is what CPython's correctly rounded round() gives. */
                snprintf(buf, sizeof(buf), "%.*f", (int)nd, x);
                r = strtod(buf, NULL);
        } else {
                double ip = trunc(x);
                bool above = ip != x;
                snprintf(buf, sizeof(buf), "%.0f", fabs(ip));
                round_digits(buf, nd < -330 ? 400 : (size_t)-nd, above);
                r = copysign(strtod(buf, NULL), x);
        }
        if (isinf(r))
                return bv_raise(vm, BV_EXC_OVERFLOW_ERROR, "rounded value too large to represent");
        return bv_float_new(vm, r);
}

BUILTIN(b_round)
{
        static const char *const names[] = {"number", "ndigits"};
        BodyValue *a[2];
        int64_t nd;

        if (bv__parse_args(vm, "round", args, n, kwargs, names, 2, 1, 2, a) < 0)
                return NULL;
        if (!bv__is_number(a[0]))
                return bv_raise(vm, BV_EXC_TYPE_ERROR, "type %s doesn't define __round__ method",
                                bv_type_name(a[0]));
        if (!a[1] || a[1]->kind == BV_NONE) {
                if (a[0]->kind != BV_FLOAT)
                        return a[0]->kind == BV_INT ? bv_ref(a[0]) : bv_int_new(vm, a[0]->b);
                return bv__int_from_double(vm, nearbyint(a[0]->f));
        }
        if (bv__as_index(vm, a[1], NULL, &nd) < 0)
                return NULL;
        if (a[0]->kind == BV_FLOAT)
                return round_float(vm, a[0]->f, nd);
        return bv__int_round(vm, a[0], nd);
}

BUILTIN(b_hash)
{
        uint64_t h;

        if (bv__check_args(vm, "hash", n, kwargs, 1, 1) < 0 || bv_hash(vm, args[0], &h) < 0)
                return NULL;
        /* Equal numbers hash alike; the values themselves differ from
         * CPython's (the key is random per run, as with PYTHONHASHSEED). */
        return bv_int_new(vm, (int64_t)(h >> 1));
}

BUILTIN(b_ord)
{
        BodyValue *s;

        if (bv__check_args(vm, "ord", n, kwargs, 1, 1) < 0)
                return NULL;
        s = args[0];
        if (s->kind != BV_STR)
                return bv_raise(vm, BV_EXC_TYPE_ERROR,
                                "ord() expected string of length 1, but %s found", bv_type_name(s));
        if (s->str.cplen != 1)
                return bv_raise(vm, BV_EXC_TYPE_ERROR,
                                "ord() expected a character, but string of length %zu found",
                                s->str.cplen);
        return bv_int_new(vm, bv__cp_at(s->str.data, s->str.len, 0, NULL));
}

BUILTIN(b_chr)
{
        int64_t cp;
        char buf[4];

        if (bv__check_args(vm, "chr", n, kwargs, 1, 1) < 0 ||
            bv__as_index(vm, args[0], NULL, &cp) < 0)
                return NULL;
        if (cp < 0 || cp > 0x10ffff)
                return bv_raise(vm, BV_EXC_VALUE_ERROR, "chr() arg not in range(0x110000)");
        if (cp >= 0xd800 && cp <= 0xdfff)
                return bv_raise(vm, BV_EXC_VALUE_ERROR,
                                "chr() of a surrogate is not supported by muranoagent's Body "
                                "interpreter: strings are UTF-8");
        return bv_str_new(vm, buf, (size_t)utf8_encode((uint32_t)cp, buf));
}

static BodyValue *int_text(BodyVM *vm, BodyValue **args, size_t n, BodyValue *kwargs,
                           const char *name, unsigned bits, char prefix)
{
        char buf[80], *p = buf + sizeof(buf);
        int64_t i;
        uint64_t u;

        if (bv__check_args(vm, name, n, kwargs, 1, 1) < 0)
                return NULL;
        if (bv__is_big(args[0])) {
                _cleanup_strbuf_ StrBuf b = bv__buf(vm);
                bool neg;
                int r = 0;
                if (bv__int_digits(vm, args[0], 1u << bits, false, &b, &neg) < 0)
                        return NULL;
                {
                        _cleanup_strbuf_ StrBuf t = bv__buf(vm);
                        if ((neg && (r = strbuf_putc(&t, '-')) < 0) ||
                            (r = strbuf_putc(&t, '0')) < 0 || (r = strbuf_putc(&t, prefix)) < 0 ||
                            (r = strbuf_append(&t, b.data, b.len)) < 0)
                                return bv__buf_error(vm, r), NULL;
                        return bv_str_from_buf(vm, &t);
                }
        }
        if (bv__as_index(vm, args[0], NULL, &i) < 0)
                return NULL;
        u = i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i;
        *--p = '\0';
        do {
                unsigned d = (unsigned)(u & ((1u << bits) - 1));
                *--p = "0123456789abcdef"[d];
                u >>= bits;
        } while (u);
        *--p = prefix;
        *--p = '0';
        if (i < 0)
                *--p = '-';
        return bv_str_new_cstr(vm, p);
}

BUILTIN(b_hex)
{
        return int_text(vm, args, n, kwargs, "hex", 4, 'x');
}

BUILTIN(b_oct)
{
        return int_text(vm, args, n, kwargs, "oct", 3, 'o');
}

BUILTIN(b_bin)
{
        return int_text(vm, args, n, kwargs, "bin", 1, 'b');
}

/* isinstance/issubclass: classinfo is a class or a (nested) tuple of them. */
static int class_matches(BodyVM *vm, const BvClass *c, BodyValue *info, const char *fname)
{
        if (info->kind == BV_CLASS)
                return bv_class_is_subclass(c, info->cls);
        if (info->kind == BV_TUPLE) {
                if (bv_depth_enter(vm) < 0)
                        return -1;
                for (size_t i = 0; i < info->list.len; i++) {
                        int r = class_matches(vm, c, info->list.items[i], fname);
                        if (r != 0) {
                                bv_depth_leave(vm);
                                return r;
                        }
                }
                bv_depth_leave(vm);
                return 0;
        }
        bv_raise(vm, BV_EXC_TYPE_ERROR, "%s() arg 2 must be a type, a tuple of types, or a union",
                 fname);
        return -1;
}

BUILTIN(b_isinstance)
{
        int r;

        if (bv__check_args(vm, "isinstance", n, kwargs, 2, 2) < 0)
                return NULL;
        r = class_matches(vm, bv_type_of(args[0])->cls, args[1], "isinstance");
        return r < 0 ? NULL : bv_bool(r);
}

BUILTIN(b_issubclass)
{
        int r;

        if (bv__check_args(vm, "issubclass", n, kwargs, 2, 2) < 0)
                return NULL;
        if (args[0]->kind != BV_CLASS)
                return bv_raise(vm, BV_EXC_TYPE_ERROR, "issubclass() arg 1 must be a class");
        r = class_matches(vm, args[0]->cls, args[1], "issubclass");
        return r < 0 ? NULL : bv_bool(r);
}

BUILTIN(b_callable)
{
        BvKind k;

        if (bv__check_args(vm, "callable", n, kwargs, 1, 1) < 0)
                return NULL;
        k = args[0]->kind;
        return bv_bool(k == BV_BUILTIN || k == BV_METHOD || k == BV_FUNCTION || k == BV_SCRIPT ||
                       k == BV_CLASS);
}

static int attr_name(BodyVM *vm, BodyValue *name)
{
        if (name->kind != BV_STR) {
                bv_raise(vm, BV_EXC_TYPE_ERROR, "attribute name must be string, not '%s'",
                         bv_type_name(name));
                return -1;
        }
        return 0;
}

BUILTIN(b_hasattr)
{
        int r;

        if (bv__check_args(vm, "hasattr", n, kwargs, 2, 2) < 0 || attr_name(vm, args[1]) < 0)
                return NULL;
        r = bv_hasattr(vm, args[0], args[1]->str.data);
        return r < 0 ? NULL : bv_bool(r);
}

BUILTIN(b_getattr)
{
        BodyValue *v;

        if (bv__check_args(vm, "getattr", n, kwargs, 2, 3) < 0 || attr_name(vm, args[1]) < 0)
                return NULL;
        v = bv_getattr(vm, args[0], args[1]->str.data);
        if (!v && n == 3 && vm->exc &&
            bv_class_is_subclass(vm->exc->exc.cls, bv_exc_class(BV_EXC_ATTRIBUTE_ERROR)) &&
            vm->fatal == 0) {
                bv_exc_clear(vm);
                return bv_ref(args[2]);
        }
        return v;
}

BUILTIN(b_setattr)
{
        if (bv__check_args(vm, "setattr", n, kwargs, 3, 3) < 0 || attr_name(vm, args[1]) < 0 ||
            bv_setattr(vm, args[0], args[1]->str.data, args[2]) < 0)
                return NULL;
        return bv_none();
}

/* print() has no stdout to write to in the agent (the reference's stdout
 * went to its log). It writes only when given an open file: file=f. */
BUILTIN(b_print)
{
        static const char *const names[] = {"sep", "end", "file", "flush"};
        BodyValue *a[4], *sep, *end;
        _cleanup_strbuf_ StrBuf b = bv__buf(vm);

        if (bv__parse_args(vm, "print", NULL, 0, kwargs, names, 4, 0, 0, a) < 0)
                return NULL;
        sep = a[0] && a[0]->kind != BV_NONE ? a[0] : NULL;
        end = a[1] && a[1]->kind != BV_NONE ? a[1] : NULL;
        if ((sep && sep->kind != BV_STR) || (end && end->kind != BV_STR))
                return bv_raise(vm, BV_EXC_TYPE_ERROR, "sep and end must be None or a string");
        if (!a[2] || a[2]->kind == BV_NONE)
                return bv_none();
        for (size_t i = 0; i < n; i++) {
                int r = 0;
                if (i > 0)
                        r = sep ? strbuf_append(&b, sep->str.data, sep->str.len)
                                : strbuf_putc(&b, ' ');
                if (r < 0)
                        return bv__buf_error(vm, r), NULL;
                if (bv_str(vm, args[i], &b) < 0)
                        return NULL;
        }
        {
                int r = end ? strbuf_append(&b, end->str.data, end->str.len)
                            : strbuf_putc(&b, '\n');
                _cleanup_bv_ BodyValue *text = NULL;
                _cleanup_bv_ BodyValue *write = NULL;
                _cleanup_bv_ BodyValue *res = NULL;
                if (r < 0)
                        return bv__buf_error(vm, r), NULL;
                text = bv_str_from_buf(vm, &b);
                write = text ? bv_getattr(vm, a[2], "write") : NULL;
                res = write ? bv_call(vm, write, &text, 1, NULL) : NULL;
                return res ? bv_none() : NULL;
        }
}

BUILTIN(b_divmod)
{
        _cleanup_bv_ BodyValue *q = NULL;
        _cleanup_bv_ BodyValue *m = NULL;

        if (bv__check_args(vm, "divmod", n, kwargs, 2, 2) < 0)
                return NULL;
        if (!bv__is_number(args[0]) || !bv__is_number(args[1]))
                return bv_raise(vm, BV_EXC_TYPE_ERROR,
                                "unsupported operand type(s) for divmod(): '%s' and '%s'",
                                bv_type_name(args[0]), bv_type_name(args[1]));
        q = bv_binop(vm, BV_OP_FLOORDIV, args[0], args[1]);
        m = q ? bv_binop(vm, BV_OP_MOD, args[0], args[1]) : NULL;
        return m ? bv_tuple_pair(vm, q, m) : NULL;
}

static int64_t mulmod(int64_t a, int64_t b, int64_t m)
{
        __int128 r = ((__int128)a * b) % m;
        return (int64_t)r;
}

BUILTIN(b_pow)
{
        static const char *const names[] = {"base", "exp", "mod"};
        BodyValue *a[3];
        int64_t base, exp, mod, r = 1;

        if (bv__parse_args(vm, "pow", args, n, kwargs, names, 3, 2, 3, a) < 0)
                return NULL;
        if (!a[2] || a[2]->kind == BV_NONE)
                return bv_binop(vm, BV_OP_POW, a[0], a[1]);
        if (!bv__is_intlike(a[0]) || !bv__is_intlike(a[1]) || !bv__is_intlike(a[2]))
                return bv_raise(vm, BV_EXC_TYPE_ERROR,
                                "pow() 3rd argument not allowed unless all arguments are integers");
        if (bv__is_big(a[0]) || bv__is_big(a[1]) || bv__is_big(a[2]) || bv__int_of(a[1]) < 0)
                return bv__int_powmod(vm, a[0], a[1], a[2]);
        base = bv__int_of(a[0]);
        exp = bv__int_of(a[1]);
        mod = bv__int_of(a[2]);
        if (mod == 0)
                return bv_raise(vm, BV_EXC_VALUE_ERROR, "pow() 3rd argument cannot be 0");
        if (exp < 0)
                return bv_raise(vm, BV_EXC_VALUE_ERROR,
                                "pow() with a negative exponent and a modulus is not supported by "
                                "muranoagent's Body interpreter");
        base %= mod;
        while (exp > 0) {
                if (exp & 1)
                        r = mulmod(r, base, mod);
                base = mulmod(base, base, mod);
                exp >>= 1;
        }
        /* The result takes the sign of the modulus, as with %. */
        r %= mod;
        if (r != 0 && ((r < 0) != (mod < 0)))
                r += mod;
        return bv_int_new(vm, r);
}

BUILTIN(b_iter)
{
        if (bv__check_args(vm, "iter", n, kwargs, 1, 1) < 0)
                return NULL;
        return bv_iter(vm, args[0]);
}

BUILTIN(b_next)
{
        BodyValue *item;
        int r;

        if (bv__check_args(vm, "next", n, kwargs, 1, 2) < 0)
                return NULL;
        if (args[0]->kind != BV_ITER && args[0]->kind != BV_FILE)
                return bv_raise(vm, BV_EXC_TYPE_ERROR, "'%s' object is not an iterator",
                                bv_type_name(args[0]));
        r = bv_next(vm, args[0], &item);
        if (r < 0)
                return NULL;
        if (r > 0)
                return item;
        if (n == 2)
                return bv_ref(args[1]);
        {
                _cleanup_bv_ BodyValue *t = bv_tuple_new(vm, NULL, 0);
                BodyValue *e = t ? bv__exc_new(vm, bv_exc_class(BV_EXC_STOP_ITERATION), TAKE_PTR(t))
                                 : NULL;
                if (e)
                        bv__set_pending(vm, e);
                return NULL;
        }
}

BUILTIN(b_format)
{
        _cleanup_strbuf_ StrBuf b = bv__buf(vm);
        BodyValue *spec = NULL;

        if (bv__check_args(vm, "format", n, kwargs, 1, 2) < 0)
                return NULL;
        if (n == 2) {
                spec = args[1];
                if (spec->kind != BV_STR)
                        return bv_raise(vm, BV_EXC_TYPE_ERROR,
                                        "format() argument 2 must be str, not %s",
                                        bv_type_name(spec));
        }
        if (bv_format(vm, args[0], spec ? spec->str.data : "", spec ? spec->str.len : 0, &b) < 0)
                return NULL;
        return bv_str_from_buf(vm, &b);
}

/* ---- the builtin namespace ---- */

#define DEF(nm, fn)                                                                                \
        {                                                                                          \
                .kind = BV_BUILTIN, .immortal = true, .refcnt = 1,                                 \
                .builtin = &(const BvBuiltinDef){nm, fn},                                          \
        }

static BodyValue builtin_values[] = {
        DEF("abs", b_abs),
        DEF("all", bv__builtin_all),
        DEF("any", bv__builtin_any),
        DEF("bin", b_bin),
        DEF("callable", b_callable),
        DEF("chr", b_chr),
        DEF("divmod", b_divmod),
        DEF("format", b_format),
        DEF("getattr", b_getattr),
        DEF("hasattr", b_hasattr),
        DEF("hash", b_hash),
        DEF("hex", b_hex),
        DEF("isinstance", b_isinstance),
        DEF("issubclass", b_issubclass),
        DEF("iter", b_iter),
        DEF("len", b_len),
        DEF("max", bv__builtin_max),
        DEF("min", bv__builtin_min),
        DEF("next", b_next),
        DEF("oct", b_oct),
        DEF("open", bv__builtin_open),
        DEF("ord", b_ord),
        DEF("pow", b_pow),
        DEF("print", b_print),
        DEF("repr", b_repr),
        DEF("round", b_round),
        DEF("setattr", b_setattr),
        DEF("sorted", bv__builtin_sorted),
        DEF("sum", bv__builtin_sum),
};

static BvClass *const builtin_classes[] = {
        &bv_class_bool,   &bv_class_dict,   &bv_class_float,     &bv_class_int,
        &bv_class_list,   &bv_class_object, &bv_class_range,     &bv_class_set,
        &bv_class_str,    &bv_class_tuple,  &bv_class_type,      &bv_class_map,
        &bv_class_filter, &bv_class_zip,    &bv_class_enumerate, &bv_class_reversed,
};

/* Exception classes reachable by name. JSONDecodeError lives in the json
 * module; the agent's own classes are not builtins in the reference. */
static bool exc_is_builtin(BvExc e)
{
        return e != BV_EXC_JSON_DECODE_ERROR && e != BV_EXC_AGENT_EXCEPTION &&
               e != BV_EXC_CUSTOM_EXCEPTION && e != BV_EXC_RESOURCE_LIMIT_ERROR;
}

BodyValue *bv_builtin_lookup(const char *name)
{
        for (size_t i = 0; i < ELEMENTSOF(builtin_values); i++)
                if (streq(builtin_values[i].builtin->name, name))
                        return &builtin_values[i];
        for (size_t i = 0; i < ELEMENTSOF(builtin_classes); i++)
                if (streq(builtin_classes[i]->name, name))
                        return &builtin_classes[i]->value;
        if (streq(name, "IOError") || streq(name, "EnvironmentError"))
                name = "OSError";
        for (BvExc e = 0; e < BV_EXC__MAX; e++)
                if (exc_is_builtin(e) && streq(bv_exc_class(e)->name, name))
                        return (BodyValue *)&bv_exc_class(e)->value;
        return NULL;
}
