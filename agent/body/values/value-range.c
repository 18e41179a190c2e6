/* Ranges whose bounds or length do not fit in int64, as CPython 3.11's
 * rangeobject.c computes them with PyLongs. Ordinary ranges keep the int64
 * fast paths of value-item.c, value-iter.c and value-ops.c; these functions
 * take any range and work on its parts as ints, through the int operators
 * of value-ops.c and value-int.c. */
#include "body/values/value-internal.h"

#include <math.h>
#include <string.h>

enum { R_START, R_STOP, R_STEP, R_LEN };

static const char LEN_OVERFLOW[] = "Python int too large to convert to C ssize_t";

static int sign_of(const BodyValue *v)
{
        int64_t i;

        if (bv__is_big(v))
                return v->z.size < 0 ? -1 : 1;
        i = bv__int_of(v);
        return i < 0 ? -1 : i > 0;
}

/* A new reference to part k of r, as an int. */
static BodyValue *part(BodyVM *vm, BodyValue *r, int k)
{
        if (r->range.z[0])
                return bv_ref(r->range.z[k]);
        return bv_int_new(vm, k == R_START  ? r->range.start
                              : k == R_STOP ? r->range.stop
                              : k == R_STEP ? r->range.step
                                            : r->range.len);
}

/* An int for an int or a bool (range bounds are ints: range(True).stop is 1). */
static BodyValue *as_int(BodyVM *vm, BodyValue *v)
{
        return v->kind == BV_BOOL ? bv_int_new(vm, v->b) : bv_ref(v);
}

static BodyValue *op(BodyVM *vm, BvBinOp o, BodyValue *a, BodyValue *b)
{
        return a && b ? bv_binop(vm, o, a, b) : NULL;
}

BodyValue *bv__range_make(BodyVM *vm, BodyValue *start, BodyValue *stop, BodyValue *step)
{
        if (!bv__is_big(start) && !bv__is_big(stop) && !bv__is_big(step))
                return bv__range_new(vm, bv__int_of(start), bv__int_of(stop), bv__int_of(step));
        return bv__range_make_big(vm, start, stop, step);
}

BodyValue *bv__range_make_big(BodyVM *vm, BodyValue *start, BodyValue *stop, BodyValue *step)
{
        _cleanup_bv_ BodyValue *a = NULL, *b = NULL, *c = NULL, *len = NULL;
        BodyValue *r;

        a = as_int(vm, start);
        b = as_int(vm, stop);
        c = as_int(vm, step);
        if (!a || !b || !c)
                return NULL;
        /* compute_range_length() */
        int s = sign_of(c), cmp = bv__int_cmp(a, b);
        if ((s > 0 && cmp < 0) || (s < 0 && cmp > 0)) {
                _cleanup_bv_ BodyValue *one = bv_int_new(vm, 1), *span = NULL, *q = NULL;
                _cleanup_bv_ BodyValue *d = NULL, *neg = NULL;
                span = s > 0 ? op(vm, BV_OP_SUB, b, a) : op(vm, BV_OP_SUB, a, b);
                d = op(vm, BV_OP_SUB, span, one);
                neg = s > 0 ? bv_ref(c) : bv_unop(vm, BV_OP_NEG, c);
                q = op(vm, BV_OP_FLOORDIV, d, neg);
                len = op(vm, BV_OP_ADD, q, one);
        } else {
                len = bv_int_new(vm, 0);
        }
        if (!len)
                return NULL;
        r = bv__alloc(vm, BV_RANGE, 0);
        if (!r)
                return NULL;
        r->range.z[R_START] = TAKE_PTR(a);
        r->range.z[R_STOP] = TAKE_PTR(b);
        r->range.z[R_STEP] = TAKE_PTR(c);
        r->range.z[R_LEN] = TAKE_PTR(len);
        return r;
}

BodyValue *bv__range_part(BodyVM *vm, BodyValue *r, const char *name)
{
        return part(vm, r, streq(name, "start") ? R_START : streq(name, "stop") ? R_STOP : R_STEP);
}

int bv__range_len(BodyVM *vm, BodyValue *r, size_t *ret)
{
        BodyValue *len = r->range.z[R_LEN];

        if (!len) {
                *ret = (size_t)r->range.len;
                return 0;
        }
        if (bv__is_big(len)) {
                bv_raise(vm, BV_EXC_OVERFLOW_ERROR, "%s", LEN_OVERFLOW);
                return -1;
        }
        *ret = (size_t)bv__int_of(len);
        return 0;
}

bool bv__range_truthy(const BodyValue *r)
{
        return r->range.z[0] ? sign_of(r->range.z[R_LEN]) != 0 : r->range.len != 0;
}

/* compute_item(): start + i * step. */
static BodyValue *item_at(BodyVM *vm, BodyValue *r, BodyValue *i)
{
        _cleanup_bv_ BodyValue *start = part(vm, r, R_START), *step = part(vm, r, R_STEP);
        _cleanup_bv_ BodyValue *off = op(vm, BV_OP_MUL, i, step);

        return op(vm, BV_OP_ADD, start, off);
}

BodyValue *bv__range_item(BodyVM *vm, BodyValue *r, BodyValue *key)
{
        _cleanup_bv_ BodyValue *len = part(vm, r, R_LEN), *i = NULL;

        if (!len)
                return NULL;
        i = sign_of(key) < 0 ? op(vm, BV_OP_ADD, len, key) : as_int(vm, key);
        if (!i)
                return NULL;
        if (sign_of(i) < 0 || bv__int_cmp(i, len) >= 0)
                return bv_raise(vm, BV_EXC_INDEX_ERROR, "range object index out of range");
        return item_at(vm, r, i);
}

/* _PySlice_GetLongIndices(): one bound of a slice, clamped to [lower, upper]. */
static BodyValue *slice_bound(BodyVM *vm, BodyValue *v, BodyValue *len, BodyValue *lower,
                              BodyValue *upper, BodyValue *dflt)
{
        BodyValue *x;

        if (v->kind == BV_NONE)
                return bv_ref(dflt);
        if (!bv__is_intlike(v))
                return bv_raise(vm, BV_EXC_TYPE_ERROR,
                                "slice indices must be integers or None or have an __index__ "
                                "method");
        if (sign_of(v) < 0) {
                x = op(vm, BV_OP_ADD, len, v);
                if (x && bv__int_cmp(x, lower) < 0) {
                        bv_unref(x);
                        x = bv_ref(lower);
                }
                return x;
        }
        return bv__int_cmp(v, upper) > 0 ? bv_ref(upper) : as_int(vm, v);
}

BodyValue *bv__range_slice(BodyVM *vm, BodyValue *r, BodyValue *slice)
{
        _cleanup_bv_ BodyValue *len = part(vm, r, R_LEN), *step = NULL, *lower = NULL;
        _cleanup_bv_ BodyValue *upper = NULL, *start = NULL, *stop = NULL, *rstep = NULL;
        _cleanup_bv_ BodyValue *substep = NULL, *substart = NULL, *substop = NULL;
        BodyValue *s = slice->slice.step;

        if (!len)
                return NULL;
        if (s->kind == BV_NONE) {
                step = bv_int_new(vm, 1);
        } else {
                if (!bv__is_intlike(s))
                        return bv_raise(vm, BV_EXC_TYPE_ERROR,
                                        "slice indices must be integers or None or have an "
                                        "__index__ method");
                if (sign_of(s) == 0)
                        return bv_raise(vm, BV_EXC_VALUE_ERROR, "slice step cannot be zero");
                step = as_int(vm, s);
        }
        if (!step)
                return NULL;
        bool neg = sign_of(step) < 0;
        lower = bv_int_new(vm, neg ? -1 : 0);
        upper = neg ? op(vm, BV_OP_ADD, len, lower) : bv_ref(len);
        if (!lower || !upper)
                return NULL;
        start = slice_bound(vm, slice->slice.start, len, lower, upper, neg ? upper : lower);
        if (!start)
                return NULL;
        stop = slice_bound(vm, slice->slice.stop, len, lower, upper, neg ? lower : upper);
        if (!stop)
                return NULL;
        rstep = part(vm, r, R_STEP);
        substep = op(vm, BV_OP_MUL, rstep, step);
        if (!substep)
                return NULL;
        substart = item_at(vm, r, start);
        if (!substart)
                return NULL;
        substop = item_at(vm, r, stop);
        if (!substop)
                return NULL;
        return bv__range_make(vm, substart, substop, substep);
}

/* range_contains_long() for an int x. */
static bool contains_int(BodyVM *vm, BodyValue *r, BodyValue *x, int *ret)
{
        _cleanup_bv_ BodyValue *start = part(vm, r, R_START), *stop = part(vm, r, R_STOP);
        _cleanup_bv_ BodyValue *step = part(vm, r, R_STEP), *off = NULL, *rem = NULL;

        if (!start || !stop || !step)
                return false;
        if (sign_of(step) > 0 ? bv__int_cmp(start, x) > 0 || bv__int_cmp(x, stop) >= 0
                              : bv__int_cmp(stop, x) >= 0 || bv__int_cmp(x, start) > 0) {
                *ret = 0;
                return true;
        }
        off = op(vm, BV_OP_SUB, x, start);
        rem = op(vm, BV_OP_MOD, off, step);
        if (!rem)
                return false;
        *ret = sign_of(rem) == 0;
        return true;
}

/* The int equal to item, NULL (no exception) when no int equals it. */
static BodyValue *int_equal_to(BodyVM *vm, BodyValue *item, bool *err)
{
        *err = false;
        if (bv__is_intlike(item))
                return as_int(vm, item);
        if (item->kind == BV_FLOAT && isfinite(item->f) && item->f == floor(item->f)) {
                BodyValue *x = bv__int_from_double(vm, item->f);
                *err = !x;
                return x;
        }
        return NULL;
}

int bv__range_contains_big(BodyVM *vm, BodyValue *r, BodyValue *item)
{
        bool err;
        _cleanup_bv_ BodyValue *x = int_equal_to(vm, item, &err);
        int found;

        if (!x)
                return err ? -1 : 0;
        return contains_int(vm, r, x, &found) ? found : -1;
}

static int one_arg(BodyVM *vm, const char *name, size_t n, BodyValue *kwargs)
{
        if (kwargs && kwargs->dict.len) {
                bv_raise(vm, BV_EXC_TYPE_ERROR, "range.%s() takes no keyword arguments", name);
                return -1;
        }
        if (n != 1) {
                bv_raise(vm, BV_EXC_TYPE_ERROR, "range.%s() takes exactly one argument (%zu given)",
                         name, n);
                return -1;
        }
        return 0;
}

static BodyValue *m_count(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                          BodyValue *kwargs)
{
        int r;

        if (one_arg(vm, "count", n, kwargs) < 0)
                return NULL;
        r = bv__range_contains(vm, self, args[0]);
        return r < 0 ? NULL : bv_int_new(vm, r);
}

static BodyValue *m_index(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                          BodyValue *kwargs)
{
        bool err;
        _cleanup_bv_ BodyValue *x = NULL, *start = NULL, *step = NULL, *off = NULL;
        int found = 0;

        if (one_arg(vm, "index", n, kwargs) < 0)
                return NULL;
        x = int_equal_to(vm, args[0], &err);
        if (err || (x && !contains_int(vm, self, x, &found)))
                return NULL;
        if (!found) {
                if (!bv__is_intlike(args[0]))
                        return bv_raise(vm, BV_EXC_VALUE_ERROR,
                                        "sequence.index(x): x not in sequence");
                _cleanup_strbuf_ StrBuf b = bv__buf(vm);
                if (bv_repr(vm, args[0], &b) < 0)
                        return NULL;
                return bv_raise(vm, BV_EXC_VALUE_ERROR, "%s is not in range", b.data);
        }
        start = part(vm, self, R_START);
        step = part(vm, self, R_STEP);
        off = op(vm, BV_OP_SUB, x, start);
        return op(vm, BV_OP_FLOORDIV, off, step);
}

const BvBuiltinDef bv__range_methods[] = {
        {"count", m_count},
        {"index", m_index},
        {NULL, NULL},
};

int bv__range_eq_big(BodyVM *vm, BodyValue *a, BodyValue *b)
{
        _cleanup_bv_ BodyValue *la = part(vm, a, R_LEN), *lb = part(vm, b, R_LEN);
        _cleanup_bv_ BodyValue *sa = NULL, *sb = NULL, *ta = NULL, *tb = NULL;

        if (!la || !lb)
                return -1;
        if (bv__int_cmp(la, lb) != 0)
                return 0;
        if (sign_of(la) == 0)
                return 1;
        sa = part(vm, a, R_START);
        sb = part(vm, b, R_START);
        if (!sa || !sb)
                return -1;
        if (bv__int_cmp(sa, sb) != 0)
                return 0;
        if (!bv__is_big(la) && bv__int_of(la) == 1)
                return 1;
        ta = part(vm, a, R_STEP);
        tb = part(vm, b, R_STEP);
        if (!ta || !tb)
                return -1;
        return bv__int_cmp(ta, tb) == 0;
}

int bv__range_key(BodyVM *vm, BodyValue *r, BodyValue *ret[3])
{
        ret[0] = part(vm, r, R_LEN);
        ret[1] = ret[2] = NULL;
        if (!ret[0])
                return -1;
        bool has_start = sign_of(ret[0]) != 0;
        bool has_step = has_start && (bv__is_big(ret[0]) || bv__int_of(ret[0]) > 1);
        ret[1] = has_start ? part(vm, r, R_START) : bv_int_new(vm, 0);
        ret[2] = has_step ? part(vm, r, R_STEP) : bv_int_new(vm, 0);
        if (!ret[1] || !ret[2]) {
                bv_unref(TAKE_PTR(ret[0]));
                bv_unref(TAKE_PTR(ret[1]));
                bv_unref(TAKE_PTR(ret[2]));
                return -1;
        }
        return 0;
}

static int put(BodyVM *vm, StrBuf *out, const char *s)
{
        int r = strbuf_puts(out, s);
        return r < 0 ? bv__buf_error(vm, r) : 0;
}

int bv__range_repr_big(BodyVM *vm, BodyValue *r, StrBuf *out)
{
        _cleanup_bv_ BodyValue *start = part(vm, r, R_START), *stop = part(vm, r, R_STOP);
        _cleanup_bv_ BodyValue *step = part(vm, r, R_STEP);

        if (!start || !stop || !step)
                return -1;
        if (put(vm, out, "range(") < 0 || bv__int_str(vm, start, out) < 0 ||
            put(vm, out, ", ") < 0 || bv__int_str(vm, stop, out) < 0)
                return -1;
        if (bv__is_big(step) || bv__int_of(step) != 1)
                if (put(vm, out, ", ") < 0 || bv__int_str(vm, step, out) < 0)
                        return -1;
        return put(vm, out, ")");
}

BodyValue *bv__range_reversed(BodyVM *vm, BodyValue *r)
{
        _cleanup_bv_ BodyValue *start = part(vm, r, R_START), *step = part(vm, r, R_STEP);
        _cleanup_bv_ BodyValue *len = part(vm, r, R_LEN), *one = bv_int_new(vm, 1);
        _cleanup_bv_ BodyValue *n1 = op(vm, BV_OP_SUB, len, one), *last = NULL, *stop = NULL;
        _cleanup_bv_ BodyValue *nstep = NULL, *rev = NULL;

        if (!n1)
                return NULL;
        last = item_at(vm, r, n1);
        stop = op(vm, BV_OP_SUB, start, step);
        nstep = step ? bv_unop(vm, BV_OP_NEG, step) : NULL;
        rev = last && stop && nstep ? bv__range_make(vm, last, stop, nstep) : NULL;
        return rev ? bv_iter(vm, rev) : NULL;
}

BodyValue *bv__range_iter_big(BodyVM *vm, BodyValue *r)
{
        BodyValue *it = bv__iter_new(vm, BV_ITER_RANGE, r);

        if (it)
                it->iter.fn = bv_ref(r->range.z[R_START]);
        return it;
}

int bv__range_next(BodyVM *vm, BvIter *it, BodyValue **ret)
{
        BodyValue *r = it->src, *stop = r->range.z[R_STOP], *step = r->range.z[R_STEP];
        BodyValue *next;
        int c = bv__int_cmp(it->fn, stop);

        if (sign_of(step) > 0 ? c >= 0 : c <= 0)
                return 0;
        next = bv_binop(vm, BV_OP_ADD, it->fn, step);
        if (!next)
                return -1;
        *ret = it->fn;
        it->fn = next;
        return 1;
}
