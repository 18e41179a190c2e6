/* The builtins that iterate: map, filter, zip, enumerate and reversed
 * (lazy iterator objects, as in Python 3), and sorted, min, max, sum, any,
 * all, which consume an iterable. Each item consumed is an evaluation step,
 * so sum(range(10**18)) ends at the step limit instead of hanging. */
#include "body/library/library.h"

#include <string.h>

/* An iterator of `kind` over `fn` and one iterator per iterable. */
static BodyValue *multi_iter(BodyVM *vm, BvIterKind kind, BodyValue *fn, BodyValue **iterables,
                             size_t n)
{
        _cleanup_bv_ BodyValue *it = bv__iter_new(vm, kind, NULL);

        if (!it)
                return NULL;
        it->iter.fn = bv_ref(fn);
        if (n == 0)
                return TAKE_PTR(it);
        it->iter.its = bv_mem_alloc(vm, n * sizeof(BodyValue *));
        if (!it->iter.its)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                BodyValue *x = bv_iter(vm, iterables[i]);
                if (!x)
                        return NULL;
                it->iter.its[i] = x;
                it->iter.n_its = i + 1;
        }
        return TAKE_PTR(it);
}

BodyValue *bv__type_call_map(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                             BodyValue *kwargs)
{
        if (bv__no_kwargs(vm, "map", kwargs) < 0)
                return NULL;
        if (n < 2)
                return bv_raise(vm, BV_EXC_TYPE_ERROR, "map() must have at least two arguments.");
        return multi_iter(vm, BV_ITER_MAP, args[0], args + 1, n - 1);
}

BodyValue *bv__type_call_zip(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                             BodyValue *kwargs)
{
        _cleanup_bv_ BodyValue *it = NULL;

        if (bv__no_kwargs(vm, "zip", kwargs) < 0)
                return NULL;
        it = multi_iter(vm, BV_ITER_ZIP, NULL, args, n);
        return TAKE_PTR(it);
}

BodyValue *bv__type_call_filter(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                                BodyValue *kwargs)
{
        _cleanup_bv_ BodyValue *inner = NULL;
        BodyValue *it;

        if (bv__check_args(vm, "filter", n, kwargs, 2, 2) < 0)
                return NULL;
        inner = bv_iter(vm, args[1]);
        if (!inner)
                return NULL;
        it = bv__iter_new(vm, BV_ITER_FILTER, inner);
        if (it)
                it->iter.fn = bv_ref(args[0]);
        return it;
}

BodyValue *bv__type_call_enumerate(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                                   BodyValue *kwargs)
{
        static const char *const names[] = {"iterable", "start"};
        _cleanup_bv_ BodyValue *inner = NULL;
        BodyValue *a[2], *it;
        int64_t start = 0;

        if (bv__parse_args(vm, "enumerate", args, n, kwargs, names, 2, 1, 2, a) < 0)
                return NULL;
        if (a[1] && bv__as_index(vm, a[1], NULL, &start) < 0)
                return NULL;
        inner = bv_iter(vm, a[0]);
        if (!inner)
                return NULL;
        it = bv__iter_new(vm, BV_ITER_ENUMERATE, inner);
        if (it)
                it->iter.cur = start;
        return it;
}

BodyValue *bv__type_call_reversed(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                                  BodyValue *kwargs)
{
        BodyValue *seq, *it;

        if (bv__check_args(vm, "reversed", n, kwargs, 1, 1) < 0)
                return NULL;
        seq = args[0];
        switch (seq->kind) {
        case BV_LIST:
        case BV_TUPLE:
                it = bv__iter_new(vm, BV_ITER_REVERSED, seq);
                if (it)
                        it->iter.pos = seq->list.len;
                return it;
        case BV_RANGE: {
                /* A range running the other way: start at the last value. */
                _cleanup_bv_ BodyValue *r = NULL;
                int64_t last = seq->range.start, stop;
                if (seq->range.z[0] || seq->range.step == INT64_MIN ||
                    __builtin_sub_overflow(seq->range.start, seq->range.step, &stop))
                        return bv__range_reversed(vm, seq);
                /* The last value is one of the range's, so it fits; the
                 * product on the way there may not (range(-2**63 + 1,
                 * 2**63 - 1, 2)), so the sum is taken modulo 2**64. */
                if (seq->range.len > 0)
                        last = (int64_t)((uint64_t)seq->range.start +
                                         (uint64_t)(seq->range.len - 1) *
                                                 (uint64_t)seq->range.step);
                r = bv__range_new(vm, last, stop, -seq->range.step);
                return r ? bv_iter(vm, r) : NULL;
        }
        case BV_STR:
        case BV_DICT:
        case BV_DICTVIEW: {
                /* Materialise, then walk backwards: type name 'reversed'. */
                _cleanup_bv_ BodyValue *t = bv_tuple_from_iterable(vm, seq);
                if (!t)
                        return NULL;
                it = bv__iter_new(vm, BV_ITER_REVERSED, t);
                if (it)
                        it->iter.pos = t->list.len;
                return it;
        }
        default:
                return bv_raise(vm, BV_EXC_TYPE_ERROR, "'%s' object is not reversible",
                                bv_type_name(seq));
        }
}

BodyValue *bv__builtin_sorted(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                              BodyValue *kwargs)
{
        static const char *const names[] = {"iterable", "key", "reverse"};
        BodyValue *a[3];
        _cleanup_bv_ BodyValue *list = NULL;

        if (bv__parse_args(vm, "sorted", args, n, kwargs, names, 3, 1, 1, a) < 0)
                return NULL;
        list = bv_list_from_iterable(vm, a[0]);
        if (!list)
                return NULL;
        if (bv__sort(vm, list->list.items, list->list.len, a[1], a[2] && bv_truthy(a[2])) < 0)
                return NULL;
        return TAKE_PTR(list);
}

static BodyValue *min_max(BodyVM *vm, BodyValue **args, size_t n, BodyValue *kwargs,
                          const char *name, BvCmpOp op)
{
        static const char *const names[] = {"key", "default"};
        BodyValue *a[2], *key;
        _cleanup_bv_ BodyValue *it = NULL;
        _cleanup_bv_ BodyValue *best = NULL;
        _cleanup_bv_ BodyValue *best_key = NULL;
        _cleanup_bv_ BodyValue *tuple = NULL;

        if (bv__parse_args(vm, name, NULL, 0, kwargs, names, 2, 0, 0, a) < 0)
                return NULL;
        if (n == 0)
                return bv_raise(vm, BV_EXC_TYPE_ERROR, "%s expected at least 1 argument, got 0",
                                name);
        if (n > 1 && a[1])
                return bv_raise(vm, BV_EXC_TYPE_ERROR,
                                "Cannot specify a default for %s() with multiple positional "
                                "arguments",
                                name);
        key = a[0] && a[0]->kind != BV_NONE ? a[0] : NULL;
        if (n > 1) {
                tuple = bv_tuple_new(vm, args, n);
                if (!tuple)
                        return NULL;
        }
        it = bv_iter(vm, tuple ? tuple : args[0]);
        if (!it)
                return NULL;
        for (;;) {
                _cleanup_bv_ BodyValue *x = NULL;
                _cleanup_bv_ BodyValue *k = NULL;
                int r = bv_next(vm, it, &x);
                if (r < 0)
                        return NULL;
                if (r == 0)
                        break;
                if (bv_step(vm) < 0)
                        return NULL;
                k = key ? bv_call(vm, key, &x, 1, NULL) : bv_ref(x);
                if (!k)
                        return NULL;
                if (best) {
                        r = bv_compare(vm, op, k, best_key);
                        if (r < 0)
                                return NULL;
                        if (!r)
                                continue;
                        bv_unref(best);
                        bv_unref(best_key);
                }
                best = TAKE_PTR(x);
                best_key = TAKE_PTR(k);
        }
        if (best)
                return TAKE_PTR(best);
        if (a[1])
                return bv_ref(a[1]);
        return bv_raise(vm, BV_EXC_VALUE_ERROR, "%s() arg is an empty sequence", name);
}

BodyValue *bv__builtin_min(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                           BodyValue *kwargs)
{
        return min_max(vm, args, n, kwargs, "min", BV_CMP_LT);
}

BodyValue *bv__builtin_max(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                           BodyValue *kwargs)
{
        return min_max(vm, args, n, kwargs, "max", BV_CMP_GT);
}

BodyValue *bv__builtin_sum(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                           BodyValue *kwargs)
{
        static const char *const names[] = {"iterable", "start"};
        BodyValue *a[2];
        _cleanup_bv_ BodyValue *it = NULL;
        _cleanup_bv_ BodyValue *acc = NULL;

        if (bv__parse_args(vm, "sum", args, n, kwargs, names, 2, 1, 2, a) < 0)
                return NULL;
        if (a[1] && a[1]->kind == BV_STR)
                return bv_raise(vm, BV_EXC_TYPE_ERROR,
                                "sum() can't sum strings [use ''.join(seq) instead]");
        acc = a[1] ? bv_ref(a[1]) : bv_int_new(vm, 0);
        it = acc ? bv_iter(vm, a[0]) : NULL;
        if (!it)
                return NULL;
        for (;;) {
                _cleanup_bv_ BodyValue *x = NULL;
                BodyValue *next;
                int r = bv_next(vm, it, &x);
                if (r < 0)
                        return NULL;
                if (r == 0)
                        return TAKE_PTR(acc);
                if (bv_step(vm) < 0)
                        return NULL;
                next = bv_binop(vm, BV_OP_ADD, acc, x);
                if (!next)
                        return NULL;
                bv_unref(acc);
                acc = next;
        }
}

static BodyValue *any_all(BodyVM *vm, BodyValue **args, size_t n, BodyValue *kwargs,
                          const char *name, bool want)
{
        _cleanup_bv_ BodyValue *it = NULL;

        if (bv__check_args(vm, name, n, kwargs, 1, 1) < 0)
                return NULL;
        it = bv_iter(vm, args[0]);
        if (!it)
                return NULL;
        for (;;) {
                _cleanup_bv_ BodyValue *x = NULL;
                int r = bv_next(vm, it, &x);
                if (r < 0)
                        return NULL;
                if (r == 0)
                        return bv_bool(!want);
                if (bv_step(vm) < 0)
                        return NULL;
                if (bv_truthy(x) == want)
                        return bv_bool(want);
        }
}

BodyValue *bv__builtin_any(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                           BodyValue *kwargs)
{
        return any_all(vm, args, n, kwargs, "any", true);
}

BodyValue *bv__builtin_all(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                           BodyValue *kwargs)
{
        return any_all(vm, args, n, kwargs, "all", false);
}
