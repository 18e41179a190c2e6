/* The builtin namespace: the type constructors (str, int, float, ...), the
 * small builtins (len, abs, round, ord, isinstance, getattr, print, ...) and
 * the name table the evaluator resolves against. The iterating builtins (map, sorted, sum,
 * ...) are in builtins-iter.c. */
#include "body/library/library.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"

/* ---- type constructors ---- */

BodyValue *bv__type_call_str(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                             BodyValue *kwargs)
{
        static const char *const names[] = {"object"};
        BodyValue *a[1];

        if (bv__parse_args(vm, "str", args, n, kwargs, names, 1, 0, 1, a) < 0)
                return NULL;
        return a[0] ? bv_to_str(vm, a[0]) : bv_str_new(vm, "", 0);
}

static void *bad_int_literal(BodyVM *vm, BodyValue *s, int base)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        int r = bv__repr_str(&b, s->str.data, s->str.len < 200 ? s->str.len : 200);
        if (r < 0)
                return bv_raise_fatal(vm, r);
        return bv_raise(vm, BV_EXC_VALUE_ERROR, "invalid literal for int() with base %d: %s", base,
                        b.data);
}

BodyValue *bv__type_call_int(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                             BodyValue *kwargs)
{
        static const char *const names[] = {"x", "base"};
        BodyValue *a[2];
        int64_t base = 10;

        if (bv__parse_args(vm, "int", args, n, kwargs, names, 2, 0, 2, a) < 0)
                return NULL;
        if (!a[0]) {
                if (a[1])
                        return bv_raise(vm, BV_EXC_TYPE_ERROR, "int() missing string argument");
                return bv_int_new(vm, 0);
        }
        if (a[1]) {
                if (bv__as_index(vm, a[1], NULL, &base) < 0)
                        return NULL;
                if (a[0]->kind != BV_STR)
                        return bv_raise(vm, BV_EXC_TYPE_ERROR,
                                        "int() can't convert non-string with explicit base");
                if (base != 0 && (base < 2 || base > 36))
                        return bv_raise(vm, BV_EXC_VALUE_ERROR,
                                        "int() base must be >= 2 and <= 36, or 0");
        }
        switch (a[0]->kind) {
        case BV_INT:
                return bv_ref(a[0]);
        case BV_BOOL:
                return bv_int_new(vm, a[0]->b);
        case BV_FLOAT:
                return bv__int_from_double(vm, a[0]->f);
        case BV_STR: {
                BodyValue *r = NULL;
                switch (bv_int_parse(vm, a[0]->str.data, a[0]->str.len, (int)base, &r)) {
                case 0:
                        return r;
                case 1:
                        return bad_int_literal(vm, a[0], (int)base);
                default:
                        return NULL;
                }
        }
        default:
                return bv_raise(vm, BV_EXC_TYPE_ERROR,
                                "int() argument must be a string, a bytes-like object or a real "
                                "number, not '%s'",
                                bv_type_name(a[0]));
        }
}

/* float() accepts Python's grammar only: no hex floats, and underscores
 * only between digits; strtod then does the conversion. */
static bool parse_float(const char *s, size_t len, double *ret)
{
        char buf[512], *end;
        const char *p = s, *e = s + len;
        size_t k = 0;
        bool digits = false, prev_digit = false;

        while (p < e && (*p == ' ' || (*p >= '\t' && *p <= '\r')))
                p++;
        while (e > p && (e[-1] == ' ' || (e[-1] >= '\t' && e[-1] <= '\r')))
                e--;
        if (p == e || (size_t)(e - p) >= sizeof(buf))
                return false;
        if (*p == '+' || *p == '-')
                buf[k++] = *p++;
        {
                static const char *const words[] = {"inf", "infinity", "nan"};
                for (size_t w = 0; w < ELEMENTSOF(words); w++)
                        if ((size_t)(e - p) == strlen(words[w]) &&
                            strncasecmp(p, words[w], (size_t)(e - p)) == 0) {
                                memcpy(buf + k, words[w], strlen(words[w]) + 1);
                                *ret = strtod(buf, NULL);
                                return true;
                        }
        }
        for (int part = 0; p < e; p++) {
                char c = *p;
                if (c >= '0' && c <= '9') {
                        digits = true;
                        prev_digit = true;
                        buf[k++] = c;
                } else if (c == '_') {
                        if (!prev_digit || p + 1 >= e || p[1] < '0' || p[1] > '9')
                                return false;
                        prev_digit = false;
                } else if (c == '.' && part == 0) {
                        part = 1;
                        prev_digit = false;
                        buf[k++] = c;
                } else if ((c == 'e' || c == 'E') && part < 2 && digits) {
                        part = 2;
                        prev_digit = false;
                        buf[k++] = c;
                        if (p + 1 < e && (p[1] == '+' || p[1] == '-'))
                                buf[k++] = *++p;
                        if (p + 1 >= e)
                                return false;
                        digits = false;
                } else {
                        return false;
                }
        }
        if (!digits)
                return false;
        buf[k] = '\0';
        *ret = strtod(buf, &end);
        return *end == '\0';
}

BodyValue *bv__type_call_float(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                               BodyValue *kwargs)
{
        BodyValue *x;
        double d;

        if (bv__check_args(vm, "float", n, kwargs, 0, 1) < 0)
                return NULL;
        if (n == 0)
                return bv_float_new(vm, 0.0);
        x = args[0];
        if (x->kind == BV_FLOAT)
                return bv_ref(x);
        if (bv__is_intlike(x)) {
                if (bv__int_to_double(vm, x, &d) < 0)
                        return NULL;
                return bv_float_new(vm, d);
        }
        if (x->kind == BV_STR) {
                if (parse_float(x->str.data, x->str.len, &d))
                        return bv_float_new(vm, d);
                _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
                int r = bv__repr_str(&b, x->str.data, x->str.len < 200 ? x->str.len : 200);
                if (r < 0)
                        return bv_raise_fatal(vm, r);
                return bv_raise(vm, BV_EXC_VALUE_ERROR, "could not convert string to float: %s",
                                b.data);
        }
        return bv_raise(vm, BV_EXC_TYPE_ERROR,
                        "float() argument must be a string or a real number, not '%s'",
                        bv_type_name(x));
}

BodyValue *bv__type_call_bool(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                              BodyValue *kwargs)
{
        if (bv__check_args(vm, "bool", n, kwargs, 0, 1) < 0)
                return NULL;
        return bv_bool(n == 1 && bv_truthy(args[0]));
}

BodyValue *bv__type_call_list(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                              BodyValue *kwargs)
{
        if (bv__check_args(vm, "list", n, kwargs, 0, 1) < 0)
                return NULL;
        return n == 0 ? bv_list_new(vm, 0) : bv_list_from_iterable(vm, args[0]);
}

BodyValue *bv__type_call_tuple(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                               BodyValue *kwargs)
{
        if (bv__check_args(vm, "tuple", n, kwargs, 0, 1) < 0)
                return NULL;
        return n == 0 ? bv_tuple_new(vm, NULL, 0) : bv_tuple_from_iterable(vm, args[0]);
}

BodyValue *bv__type_call_dict(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                              BodyValue *kwargs)
{
        _cleanup_bv_ BodyValue *d = NULL;

        if (n > 1)
                return bv_raise(vm, BV_EXC_TYPE_ERROR, "dict expected at most 1 argument, got %zu",
                                n);
        d = bv_dict_new(vm);
        if (!d || bv__dict_update(vm, d, n ? args[0] : NULL, kwargs) < 0)
                return NULL;
        return TAKE_PTR(d);
}

BodyValue *bv__type_call_set(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                             BodyValue *kwargs)
{
        _cleanup_bv_ BodyValue *s = NULL;
        BodyValue **items;
        size_t count;

        if (bv__check_args(vm, "set", n, kwargs, 0, 1) < 0)
                return NULL;
        s = bv_set_new(vm);
        if (!s || n == 0)
                return TAKE_PTR(s);
        if (bv__collect(vm, args[0], &items, &count) < 0)
                return NULL;
        for (size_t i = 0; i < count; i++)
                if (bv_set_add(vm, s, items[i]) < 0) {
                        bv__free_items(vm, items, count);
                        return NULL;
                }
        bv__free_items(vm, items, count);
        return TAKE_PTR(s);
}

BodyValue *bv__type_call_range(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                               BodyValue *kwargs)
{
        int64_t v[3] = {0, 0, 1};
        bool big = false;

        if (bv__check_args(vm, "range", n, kwargs, 1, 3) < 0)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                if (bv__is_big(args[i])) {
                        big = true;
                        v[n == 1 ? 1 : i] = bv__int_of(args[i]);
                } else if (bv__as_index(vm, args[i], NULL, &v[n == 1 ? 1 : i]) < 0) {
                        return NULL;
                }
        }
        if (v[2] == 0)
                return bv_raise(vm, BV_EXC_VALUE_ERROR, "range() arg 3 must not be zero");
        if (big) {
                _cleanup_bv_ BodyValue *zero = bv_int_new(vm, 0), *one = bv_int_new(vm, 1);
                if (!zero || !one)
                        return NULL;
                return bv__range_make(vm, n == 1 ? zero : args[0], n == 1 ? args[0] : args[1],
                                      n == 3 ? args[2] : one);
        }
        return bv__range_new(vm, v[0], v[1], v[2]);
}

BodyValue *bv__type_call_type(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                              BodyValue *kwargs)
{
        if (bv__no_kwargs(vm, "type", kwargs) < 0)
                return NULL;
        if (n == 3)
                return bv_raise(vm, BV_EXC_TYPE_ERROR,
                                "type() with 3 arguments (creating a class) is not supported by "
                                "muranoagent's Body interpreter");
        if (n != 1)
                return bv_raise(vm, BV_EXC_TYPE_ERROR, "type() takes 1 or 3 arguments");
        return bv_type_of(args[0]);
}

BodyValue *bv__type_call_object(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                                BodyValue *kwargs)
{
        return bv_raise(vm, BV_EXC_TYPE_ERROR,
                        "object() instances are not supported by muranoagent's Body interpreter");
}
