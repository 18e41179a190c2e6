/* Numbers and the comparison operators: int64 arithmetic with overflow
 * detection, Python's float division rules, equality, ordering and
 * membership. The arithmetic operators themselves are in value-binop.c. */
#include "body/values/value-internal.h"
#include "util/digit.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

void *bv__overflow(BodyVM *vm)
{
        return bv_raise(vm, BV_EXC_OVERFLOW_ERROR,
                        "integer overflow: muranoagent's Body integers are 64-bit "
                        "(-9223372036854775808 to 9223372036854775807)");
}

void *bv__index_overflow(BodyVM *vm)
{
        return bv_raise(vm, BV_EXC_OVERFLOW_ERROR, "cannot fit 'int' into an index-sized integer");
}

int bv__as_index(BodyVM *vm, BodyValue *v, const char *what, int64_t *ret)
{
        if (bv__is_big(v)) {
                /* A subscript says IndexError, other uses OverflowError. */
                bv_raise(vm, what ? BV_EXC_INDEX_ERROR : BV_EXC_OVERFLOW_ERROR,
                         "cannot fit 'int' into an index-sized integer");
                return -1;
        }
        if (bv__is_intlike(v)) {
                *ret = bv__int_of(v);
                return 0;
        }
        if (what)
                bv_raise(vm, BV_EXC_TYPE_ERROR, "%s indices must be integers or slices, not %s",
                         what, bv_type_name(v));
        else
                bv_raise(vm, BV_EXC_TYPE_ERROR, "'%s' object cannot be interpreted as an integer",
                         bv_type_name(v));
        return -1;
}

int bv__double_to_int(BodyVM *vm, double d, int64_t *ret)
{
        if (isnan(d)) {
                bv_raise(vm, BV_EXC_VALUE_ERROR, "cannot convert float NaN to integer");
                return -1;
        }
        if (isinf(d)) {
                bv_raise(vm, BV_EXC_OVERFLOW_ERROR, "cannot convert float infinity to integer");
                return -1;
        }
        d = trunc(d);
        if (d < -0x1p63 || d >= 0x1p63) {
                bv__overflow(vm);
                return -1;
        }
        *ret = (int64_t)d;
        return 0;
}

double bv__fmod_py(double a, double b)
{
        double mod = fmod(a, b);
        if (mod != 0) {
                if ((b < 0) != (mod < 0))
                        mod += b;
        } else {
                mod = copysign(0.0, b);
        }
        return mod;
}

/* Compare an int with a double exactly, as CPython does: converting a large
 * int64 to double would round. */
static int cmp_int_double(int64_t i, double f)
{
        double fl;

        if (isnan(f))
                return 2;
        if (f >= 0x1p63)
                return -1;
        if (f < -0x1p63)
                return 1;
        fl = floor(f);
        if (fl == f) {
                int64_t j = (int64_t)f;
                return i < j ? -1 : i > j;
        }
        /* f is not integral, so |f| < 2**52 and floor(f) is exact. */
        return i <= (int64_t)fl ? -1 : 1;
}

int bv__num_cmp(const BodyValue *a, const BodyValue *b)
{
        if (bv__is_big(a) || bv__is_big(b)) {
                int r;
                if (a->kind != BV_FLOAT && b->kind != BV_FLOAT)
                        return bv__int_cmp(a, b);
                if (a->kind == BV_FLOAT)
                        return (r = bv__int_cmp_double(b, a->f)) == 2 ? 2 : -r;
                return bv__int_cmp_double(a, b->f);
        }
        if (a->kind != BV_FLOAT && b->kind != BV_FLOAT) {
                int64_t x = bv__int_of(a), y = bv__int_of(b);
                return x < y ? -1 : x > y;
        }
        if (a->kind == BV_FLOAT && b->kind == BV_FLOAT) {
                if (isnan(a->f) || isnan(b->f))
                        return 2;
                return a->f < b->f ? -1 : a->f > b->f;
        }
        if (a->kind == BV_FLOAT) {
                int r = cmp_int_double(bv__int_of(b), a->f);
                return r == 2 ? 2 : -r;
        }
        return cmp_int_double(bv__int_of(a), b->f);
}

int bv__parse_int(const char *s, size_t len, int base, int64_t *ret)
{
        const char *p = s, *end = s + len;
        bool neg = false, any = false, prev_us = false, overflow = false;
        int64_t acc = 0; /* accumulated negatively, so INT64_MIN fits */

        while (p < end && isspace((unsigned char)*p))
                p++;
        while (end > p && isspace((unsigned char)end[-1]))
                end--;
        if (p < end && (*p == '+' || *p == '-'))
                neg = *p++ == '-';
        if (end - p >= 2 && p[0] == '0') {
                char x = (char)tolower((unsigned char)p[1]);
                int pb = x == 'x' ? 16 : x == 'o' ? 8 : x == 'b' ? 2 : 0;
                if (pb && (base == 0 || base == pb)) {
                        base = pb;
                        p += 2;
                        /* An underscore may follow the prefix: 0x_1f. */
                        prev_us = true;
                        any = false;
                        if (p < end && *p == '_')
                                p++;
                        else
                                prev_us = false;
                        if (p >= end)
                                return -1;
                        goto digits;
                }
        }
        if (base == 0) {
                /* Base 0 refuses leading zeros in a non-zero decimal: "010". */
                if (p < end && *p == '0') {
                        const char *q = p;
                        while (q < end && (*q == '0' || *q == '_'))
                                q++;
                        if (q != end)
                                return -1;
                }
                base = 10;
        }
digits:
        prev_us = false;
        for (; p < end; p++) {
                int d;
                if (*p == '_') {
                        if (!any || prev_us)
                                return -1;
                        prev_us = true;
                        continue;
                }
                d = digit_value(*p);
                if (d >= base)
                        return -1;
                if (__builtin_mul_overflow(acc, base, &acc) || __builtin_sub_overflow(acc, d, &acc))
                        overflow = true;
                any = true;
                prev_us = false;
        }
        if (!any || prev_us)
                return -1;
        if (overflow)
                return -2;
        if (!neg) {
                if (acc == INT64_MIN)
                        return -2;
                acc = -acc;
        }
        *ret = acc;
        return 0;
}

/* ---- equality and ordering ---- */

static int seq_eq(BodyVM *vm, BodyValue *a, BodyValue *b)
{
        int r = 1;

        if (a->list.len != b->list.len)
                return 0;
        if (bv_depth_enter(vm) < 0)
                return -1;
        for (size_t i = 0; i < a->list.len && r == 1; i++)
                r = bv_eq(vm, a->list.items[i], b->list.items[i]);
        bv_depth_leave(vm);
        return r;
}

static int dict_eq(BodyVM *vm, BodyValue *a, BodyValue *b)
{
        size_t pos = 0;
        BodyValue *k, *v, *w;
        int r = 1;

        if (a->dict.len != b->dict.len)
                return 0;
        if (bv_depth_enter(vm) < 0)
                return -1;
        while (r == 1 && bv_dict_next(a, &pos, &k, &v)) {
                r = bv_dict_lookup(vm, b, k, &w);
                if (r == 1 && a->kind == BV_DICT)
                        r = bv_eq(vm, v, w);
        }
        bv_depth_leave(vm);
        return r;
}

/* ---- the eq slots of the core's kinds ---- */

int bv__str_eq(BodyVM *vm, BodyValue *a, BodyValue *b)
{
        return b->kind == BV_STR && a->str.len == b->str.len &&
               memcmp(a->str.data, b->str.data, a->str.len) == 0;
}

int bv__seq_eq(BodyVM *vm, BodyValue *a, BodyValue *b)
{
        return b->kind == a->kind ? seq_eq(vm, a, b) : 0;
}

int bv__dict_eq(BodyVM *vm, BodyValue *a, BodyValue *b)
{
        return b->kind == a->kind ? dict_eq(vm, a, b) : 0;
}

int bv__range_eq(BodyVM *vm, BodyValue *a, BodyValue *b)
{
        if (b->kind == BV_RANGE && (a->range.z[0] || b->range.z[0]))
                return bv__range_eq_big(vm, a, b);
        if (b->kind != BV_RANGE || a->range.len != b->range.len)
                return 0;
        if (a->range.len == 0)
                return 1;
        if (a->range.start != b->range.start)
                return 0;
        return a->range.len == 1 || a->range.step == b->range.step;
}

int bv__uuid_eq(BodyVM *vm, BodyValue *a, BodyValue *b)
{
        return b->kind == BV_UUID && memcmp(a->uuid, b->uuid, 16) == 0;
}

int bv__method_eq(BodyVM *vm, BodyValue *a, BodyValue *b)
{
        return b->kind == BV_METHOD && a->method.def == b->method.def &&
               a->method.self == b->method.self;
}

int bv__slice_eq(BodyVM *vm, BodyValue *a, BodyValue *b)
{
        if (b->kind != BV_SLICE)
                return 0;
        for (int i = 0; i < 3; i++) {
                BodyValue *x = i == 0 ? a->slice.start : i == 1 ? a->slice.stop : a->slice.step;
                BodyValue *y = i == 0 ? b->slice.start : i == 1 ? b->slice.stop : b->slice.step;
                int r = bv_eq(vm, x, y);
                if (r != 1)
                        return r;
        }
        return 1;
}

int bv_eq(BodyVM *vm, BodyValue *a, BodyValue *b)
{
        const BvType *t = bv__type(a);

        if (a == b)
                return 1;
        if (bv__is_number(a) && bv__is_number(b))
                return bv__num_cmp(a, b) == 0;
        return t->eq ? t->eq(vm, a, b) : 0;
}

static const char *const cmp_symbols[] = {"==", "!=", "<", "<=", ">", ">="};

static bool cmp_result(BvCmpOp op, int c)
{
        switch (op) {
        case BV_CMP_LT:
                return c < 0;
        case BV_CMP_LE:
                return c <= 0;
        case BV_CMP_GT:
                return c > 0;
        case BV_CMP_GE:
                return c >= 0;
        case BV_CMP_EQ:
                return c == 0;
        default:
                return c != 0;
        }
}

static int set_subset(BodyVM *vm, BodyValue *a, BodyValue *b)
{
        size_t pos = 0;
        BodyValue *k;

        if (a->dict.len > b->dict.len)
                return 0;
        while (bv_dict_next(a, &pos, &k, NULL)) {
                int r = bv_dict_lookup(vm, b, k, NULL);
                if (r <= 0)
                        return r;
        }
        return 1;
}

static int order(BodyVM *vm, BvCmpOp op, BodyValue *a, BodyValue *b)
{
        const BvType *t = bv__type(a);
        int r;

        if (bv__is_number(a) && bv__is_number(b)) {
                int c = bv__num_cmp(a, b);
                return c == 2 ? 0 : cmp_result(op, c);
        }
        if (t->order && (r = t->order(vm, op, a, b)) != BV_ORDER_UNSUPPORTED)
                return r;
        bv_raise(vm, BV_EXC_TYPE_ERROR, "'%s' not supported between instances of '%s' and '%s'",
                 cmp_symbols[op], bv_type_name(a), bv_type_name(b));
        return -1;
}

/* ---- the order slots of the core's kinds ---- */

int bv__str_order(BodyVM *vm, BvCmpOp op, BodyValue *a, BodyValue *b)
{
        size_t n;
        int c;

        if (b->kind != BV_STR)
                return BV_ORDER_UNSUPPORTED;
        n = a->str.len < b->str.len ? a->str.len : b->str.len;
        c = memcmp(a->str.data, b->str.data, n);
        if (c == 0)
                c = a->str.len < b->str.len ? -1 : a->str.len > b->str.len;
        return cmp_result(op, c);
}

int bv__seq_order(BodyVM *vm, BvCmpOp op, BodyValue *a, BodyValue *b)
{
        size_t i;
        int r = 0;

        if (b->kind != a->kind)
                return BV_ORDER_UNSUPPORTED;
        if (bv_depth_enter(vm) < 0)
                return -1;
        for (i = 0; i < a->list.len && i < b->list.len; i++) {
                r = bv_eq(vm, a->list.items[i], b->list.items[i]);
                if (r != 1)
                        break;
        }
        if (r >= 0 && i < a->list.len && i < b->list.len)
                r = order(vm, op, a->list.items[i], b->list.items[i]);
        else if (r >= 0)
                r = cmp_result(op, a->list.len < b->list.len   ? -1
                                   : a->list.len > b->list.len ? 1
                                                               : 0);
        bv_depth_leave(vm);
        return r;
}

int bv__set_order(BodyVM *vm, BvCmpOp op, BodyValue *a, BodyValue *b)
{
        if (b->kind != BV_SET)
                return BV_ORDER_UNSUPPORTED;
        switch (op) {
        case BV_CMP_LE:
                return set_subset(vm, a, b);
        case BV_CMP_GE:
                return set_subset(vm, b, a);
        case BV_CMP_LT:
                return a->dict.len < b->dict.len ? set_subset(vm, a, b) : 0;
        default:
                return b->dict.len < a->dict.len ? set_subset(vm, b, a) : 0;
        }
}

/* item in container by iterating it: iterators, files, dict values. */
static int contains_by_iter(BodyVM *vm, BodyValue *container, BodyValue *item)
{
        _cleanup_bv_ BodyValue *it = bv_iter(vm, container);

        if (!it)
                return -1;
        for (;;) {
                _cleanup_bv_ BodyValue *x = NULL;
                int r = bv_next(vm, it, &x);
                if (r <= 0)
                        return r;
                if (bv_step(vm) < 0)
                        return -1;
                r = bv_eq(vm, x, item);
                if (r != 0)
                        return r;
        }
}

static int contains(BodyVM *vm, BodyValue *container, BodyValue *item)
{
        const BvType *t = bv__type(container);

        if (t->contains)
                return t->contains(vm, container, item);
        if (t->iter)
                return contains_by_iter(vm, container, item);
        bv_raise(vm, BV_EXC_TYPE_ERROR, "argument of type '%s' is not iterable",
                 bv_type_name(container));
        return -1;
}

/* ---- the contains slots of the core's kinds ---- */

int bv__str_contains(BodyVM *vm, BodyValue *container, BodyValue *item)
{
        if (item->kind != BV_STR) {
                bv_raise(vm, BV_EXC_TYPE_ERROR,
                         "'in <string>' requires string as left operand, not %s",
                         bv_type_name(item));
                return -1;
        }
        return item->str.len == 0 || memmem(container->str.data, container->str.len, item->str.data,
                                            item->str.len) != NULL;
}

int bv__seq_contains(BodyVM *vm, BodyValue *container, BodyValue *item)
{
        for (size_t i = 0; i < container->list.len; i++) {
                int r;
                if (bv_step(vm) < 0)
                        return -1;
                r = bv_eq(vm, container->list.items[i], item);
                if (r != 0)
                        return r;
        }
        return 0;
}

int bv__dict_contains(BodyVM *vm, BodyValue *container, BodyValue *item)
{
        return bv_dict_lookup(vm, container, item, NULL);
}

int bv__dictview_contains(BodyVM *vm, BodyValue *container, BodyValue *item)
{
        BodyValue *d = container->dictview.dict, *v;
        int r;

        switch (container->dictview.view) {
        case BV_VIEW_KEYS:
                return bv_dict_lookup(vm, d, item, NULL);
        case BV_VIEW_ITEMS:
                if (item->kind != BV_TUPLE || item->list.len != 2)
                        return 0;
                r = bv_dict_lookup(vm, d, item->list.items[0], &v);
                return r <= 0 ? r : bv_eq(vm, v, item->list.items[1]);
        default:
                return contains_by_iter(vm, container, item);
        }
}

int bv__range_contains(BodyVM *vm, BodyValue *container, BodyValue *item)
{
        int64_t x;

        if (container->range.z[0])
                return bv__range_contains_big(vm, container, item);
        if (bv__is_big(item))
                return 0; /* the range's values are int64 */
        if (!bv__is_number(item))
                return 0;
        if (item->kind == BV_FLOAT) {
                if (item->f != floor(item->f) || item->f < -0x1p63 || item->f >= 0x1p63)
                        return 0;
                x = (int64_t)item->f;
        } else {
                x = bv__int_of(item);
        }
        if (container->range.len == 0)
                return 0;
        /* 128-bit: x - start can exceed int64. */
        __int128 off = (__int128)x - container->range.start;
        if (off % container->range.step != 0)
                return 0;
        off /= container->range.step;
        return off >= 0 && off < container->range.len;
}

static bool is_small_int(const BodyValue *v)
{
        return v->kind == BV_INT && !v->big && v->i >= -5 && v->i <= 256;
}

int bv_compare(BodyVM *vm, BvCmpOp op, BodyValue *a, BodyValue *b)
{
        int r;

        switch (op) {
        case BV_CMP_EQ:
        case BV_CMP_NE:
                if (bv__is_number(a) && bv__is_number(b))
                        r = bv__num_cmp(a, b) == 0;
                else
                        r = bv_eq(vm, a, b);
                if (r < 0)
                        return -1;
                return op == BV_CMP_EQ ? r : !r;
        case BV_CMP_IN:
        case BV_CMP_NOT_IN:
                r = contains(vm, b, a);
                if (r < 0)
                        return -1;
                return op == BV_CMP_IN ? r : !r;
        case BV_CMP_IS:
        case BV_CMP_IS_NOT:
                /* CPython caches the small ints, and code does test `x is 0`. */
                r = a == b || (is_small_int(a) && is_small_int(b) && a->i == b->i);
                return op == BV_CMP_IS ? r : !r;
        default:
                return order(vm, op, a, b);
        }
}

/* ---- the truthy slots of the core's kinds ---- */

bool bv__false(const BodyValue *v)
{
        return false;
}

bool bv__bool_truthy(const BodyValue *v)
{
        return v->b;
}

bool bv__int_truthy(const BodyValue *v)
{
        return v->big || v->i != 0;
}

bool bv__float_truthy(const BodyValue *v)
{
        return v->f != 0;
}

bool bv__str_truthy(const BodyValue *v)
{
        return v->str.len != 0;
}

bool bv__seq_truthy(const BodyValue *v)
{
        return v->list.len != 0;
}

bool bv__dict_truthy(const BodyValue *v)
{
        return v->dict.len != 0;
}

bool bv__dictview_truthy(const BodyValue *v)
{
        return v->dictview.dict->dict.len != 0;
}

bool bv_truthy(const BodyValue *v)
{
        const BvType *t = bv__type(v);

        /* Conditions are mostly comparisons: bools skip the call. */
        if (v->kind == BV_BOOL)
                return v->b;
        return t->truthy ? t->truthy(v) : true;
}
