/* The iteration protocol: iter(), next() for every iterator kind (map and
 * filter are lazy, as in Python 3), unpacking, collecting an iterable, and
 * the stable sort behind sorted() and list.sort(). */
#include "body/values/value-internal.h"

#include <string.h>

BodyValue *bv__iter_new(BodyVM *vm, BvIterKind kind, BodyValue *src)
{
        BodyValue *it = bv__alloc(vm, BV_ITER, 0);
        if (!it)
                return NULL;
        it->iter.kind = kind;
        it->iter.src = bv_ref(src);
        return it;
}

/* ---- the iter slots of the core's kinds ---- */

BodyValue *bv__seq_iter(BodyVM *vm, BodyValue *v)
{
        return bv__iter_new(vm, BV_ITER_SEQ, v);
}

BodyValue *bv__str_iter(BodyVM *vm, BodyValue *v)
{
        return bv__iter_new(vm, BV_ITER_STR, v);
}

/* Dicts, sets and dict views. */
BodyValue *bv__dict_iter(BodyVM *vm, BodyValue *v)
{
        BodyValue *d = v->kind == BV_DICTVIEW ? v->dictview.dict : v;
        BodyValue *it = bv__iter_new(vm, BV_ITER_DICT, d);

        if (!it)
                return NULL;
        it->iter.view = v->kind == BV_DICTVIEW ? v->dictview.view : BV_VIEW_KEYS;
        it->iter.version = d->dict.version;
        it->iter.dict_len = d->dict.len;
        return it;
}

BodyValue *bv__range_iter(BodyVM *vm, BodyValue *v)
{
        BodyValue *it;

        if (v->range.z[0])
                return bv__range_iter_big(vm, v);
        it = bv__iter_new(vm, BV_ITER_RANGE, v);
        if (!it)
                return NULL;
        it->iter.cur = v->range.start;
        it->iter.remaining = (size_t)v->range.len;
        return it;
}

/* An iterator is its own. */
BodyValue *bv__self_iter(BodyVM *vm, BodyValue *v)
{
        return bv_ref(v);
}

BodyValue *bv__file_iter(BodyVM *vm, BodyValue *v)
{
        if (!v->file.fp)
                return bv_raise(vm, BV_EXC_VALUE_ERROR, "I/O operation on closed file.");
        return bv_ref(v);
}

BodyValue *bv_iter(BodyVM *vm, BodyValue *v)
{
        const BvType *t = bv__type(v);

        if (!t->iter)
                return bv_raise(vm, BV_EXC_TYPE_ERROR, "'%s' object is not iterable",
                                bv_type_name(v));
        return t->iter(vm, v);
}

static int next_dict(BodyVM *vm, BvIter *it, BodyValue **ret)
{
        BodyValue *d = it->src, *k, *v;

        /* Once exhausted, always exhausted, whatever the dict does since. */
        if (it->pos == SIZE_MAX)
                return 0;
        if (d->dict.len != it->dict_len) {
                it->dict_len = SIZE_MAX; /* stay broken, as CPython does */
                bv_raise(vm, BV_EXC_RUNTIME_ERROR, "%s changed size during iteration",
                         d->kind == BV_SET ? "Set" : "dictionary");
                return -1;
        }
        if (d->dict.version != it->version) {
                bv_raise(vm, BV_EXC_RUNTIME_ERROR, "dictionary keys changed during iteration");
                return -1;
        }
        if (!bv_dict_next(d, &it->pos, &k, &v)) {
                it->pos = SIZE_MAX;
                return 0;
        }
        switch (it->view) {
        case BV_VIEW_KEYS:
                *ret = bv_ref(k);
                break;
        case BV_VIEW_VALUES:
                *ret = bv_ref(v);
                break;
        default:
                *ret = bv_tuple_pair(vm, k, v);
                if (!*ret)
                        return -1;
                break;
        }
        return 1;
}

/* Advance each of the iterators; 0 as soon as one is exhausted. */
static int next_all(BodyVM *vm, BvIter *it, BodyValue **items)
{
        for (size_t i = 0; i < it->n_its; i++) {
                int r = bv_next(vm, it->its[i], &items[i]);
                if (r <= 0) {
                        for (size_t j = 0; j < i; j++)
                                bv_unref(items[j]);
                        return r;
                }
        }
        return 1;
}

static int next_nested(BodyVM *vm, BodyValue *self, BodyValue **ret)
{
        BvIter *it = &self->iter;
        int r;

        switch (it->kind) {
        case BV_ITER_MAP:
        case BV_ITER_ZIP: {
                BodyValue *small[8], **items = small;
                size_t size = it->n_its * sizeof(BodyValue *);
                if (it->n_its == 0)
                        return 0; /* zip() */
                if (it->n_its > ELEMENTSOF(small)) {
                        items = bv_mem_alloc(vm, size);
                        if (!items)
                                return -1;
                }
                r = next_all(vm, it, items);
                if (r > 0) {
                        if (it->kind == BV_ITER_MAP)
                                *ret = bv_call(vm, it->fn, items, it->n_its, NULL);
                        else
                                *ret = bv_tuple_new(vm, items, it->n_its);
                        for (size_t i = 0; i < it->n_its; i++)
                                bv_unref(items[i]);
                        if (!*ret)
                                r = -1;
                }
                if (items != small)
                        bv_mem_free(vm, items, size);
                return r;
        }
        case BV_ITER_FILTER:
                for (;;) {
                        _cleanup_bv_ BodyValue *item = NULL;
                        bool keep;
                        r = bv_next(vm, it->src, &item);
                        if (r <= 0)
                                return r;
                        if (it->fn->kind == BV_NONE) {
                                keep = bv_truthy(item);
                        } else {
                                _cleanup_bv_ BodyValue *t = bv_call(vm, it->fn, &item, 1, NULL);
                                if (!t)
                                        return -1;
                                keep = bv_truthy(t);
                        }
                        if (keep) {
                                *ret = TAKE_PTR(item);
                                return 1;
                        }
                        if (bv_step(vm) < 0)
                                return -1;
                }
        default: { /* BV_ITER_ENUMERATE */
                _cleanup_bv_ BodyValue *item = NULL;
                _cleanup_bv_ BodyValue *count = NULL;
                r = bv_next(vm, it->src, &item);
                if (r <= 0)
                        return r;
                count = bv_int_new(vm, it->cur);
                if (!count)
                        return -1;
                if (__builtin_add_overflow(it->cur, 1, &it->cur)) {
                        bv__overflow(vm);
                        return -1;
                }
                *ret = bv_tuple_pair(vm, count, item);
                return *ret ? 1 : -1;
        }
        }
}

int bv_next(BodyVM *vm, BodyValue *self, BodyValue **ret)
{
        const BvType *t = bv__type(self);

        if (!t->next) {
                bv_raise(vm, BV_EXC_TYPE_ERROR, "'%s' object is not an iterator",
                         bv_type_name(self));
                return -1;
        }
        return t->next(vm, self, ret);
}

/* The next slot of the iterator kind: every BvIterKind. */
int bv__iter_next(BodyVM *vm, BodyValue *self, BodyValue **ret)
{
        BvIter *it = &self->iter;
        int r;

        switch (it->kind) {
        case BV_ITER_SEQ:
                if (it->pos >= it->src->list.len)
                        return 0;
                *ret = bv_ref(it->src->list.items[it->pos++]);
                return 1;
        case BV_ITER_REVERSED:
                if (it->pos == 0 || it->pos > it->src->list.len)
                        return 0;
                *ret = bv_ref(it->src->list.items[--it->pos]);
                return 1;
        case BV_ITER_STR: {
                size_t n;
                if (it->pos >= it->src->str.len)
                        return 0;
                bv__cp_at(it->src->str.data, it->src->str.len, it->pos, &n);
                *ret = bv_str_new(vm, it->src->str.data + it->pos, n);
                it->pos += n;
                return *ret ? 1 : -1;
        }
        case BV_ITER_DICT:
                return next_dict(vm, it, ret);
        case BV_ITER_RANGE:
                if (it->fn)
                        return bv__range_next(vm, it, ret);
                if (it->remaining == 0)
                        return 0;
                *ret = bv_int_new(vm, it->cur);
                if (!*ret)
                        return -1;
                it->remaining--;
                if (it->remaining > 0)
                        it->cur += it->src->range.step;
                return 1;
        default:
                /* Iterators over iterators: a chain map(f, map(f, ...)) built
                 * in a loop must not recurse without bound. */
                if (bv_depth_enter(vm) < 0)
                        return -1;
                r = next_nested(vm, self, ret);
                bv_depth_leave(vm);
                return r;
        }
}

void bv__free_items(BodyVM *vm, BodyValue **items, size_t n)
{
        for (size_t i = 0; i < n; i++)
                bv_unref(items[i]);
        bv_mem_free(vm, items, (n ? n : 1) * sizeof(BodyValue *));
}

int bv__collect(BodyVM *vm, BodyValue *iterable, BodyValue ***ret_items, size_t *ret_n)
{
        _cleanup_bv_ BodyValue *it = NULL;
        BodyValue **items;
        size_t n = 0, cap;

        if (iterable->kind == BV_LIST || iterable->kind == BV_TUPLE) {
                n = iterable->list.len;
                items = bv_mem_alloc(vm, (n ? n : 1) * sizeof(BodyValue *));
                if (!items)
                        return -1;
                for (size_t i = 0; i < n; i++)
                        items[i] = bv_ref(iterable->list.items[i]);
                *ret_items = items;
                *ret_n = n;
                return 0;
        }
        if (iterable->kind == BV_RANGE && iterable->range.z[0] &&
            bv__range_len(vm, iterable, &n) < 0)
                return -1; /* list(range(2 ** 64)): CPython's length hint */
        n = 0;
        it = bv_iter(vm, iterable);
        if (!it)
                return -1;
        cap = 8;
        items = bv_mem_alloc(vm, cap * sizeof(BodyValue *));
        if (!items)
                return -1;
        for (;;) {
                BodyValue *x = NULL;
                int r = bv_next(vm, it, &x);
                if (r == 0)
                        break;
                if (r < 0)
                        goto fail;
                if (n == cap) {
                        BodyValue **p = bv_mem_realloc(vm, items, cap * sizeof(BodyValue *),
                                                       cap * 2 * sizeof(BodyValue *));
                        if (!p) {
                                bv_unref(x);
                                goto fail;
                        }
                        items = p;
                        cap *= 2;
                }
                items[n++] = x;
                if (bv_step(vm) < 0)
                        goto fail;
        }
        /* Shrink to exactly max(n, 1) slots: that is what the callers free. */
        if (cap != (n ? n : 1)) {
                BodyValue **p = bv_mem_realloc(vm, items, cap * sizeof(BodyValue *),
                                               (n ? n : 1) * sizeof(BodyValue *));
                if (!p)
                        goto fail;
                items = p;
        }
        *ret_items = items;
        *ret_n = n;
        return 0;
fail:
        for (size_t i = 0; i < n; i++)
                bv_unref(items[i]);
        bv_mem_free(vm, items, cap * sizeof(BodyValue *));
        return -1;
}

static BodyValue *from_iterable(BodyVM *vm, BodyValue *v, BvKind kind)
{
        BodyValue **items, *r;
        size_t n;

        if (kind == BV_TUPLE && v->kind == BV_TUPLE)
                return bv_ref(v);
        if (bv__collect(vm, v, &items, &n) < 0)
                return NULL;
        r = bv__alloc(vm, kind, 0);
        if (!r) {
                bv__free_items(vm, items, n);
                return NULL;
        }
        /* Adopt the array: it was allocated with exactly max(n, 1) slots. */
        r->list.items = items;
        r->list.len = n;
        r->list.cap = n ? n : 1;
        return r;
}

BodyValue *bv_tuple_from_iterable(BodyVM *vm, BodyValue *v)
{
        return from_iterable(vm, v, BV_TUPLE);
}

BodyValue *bv_list_from_iterable(BodyVM *vm, BodyValue *v)
{
        return from_iterable(vm, v, BV_LIST);
}

int bv_unpack(BodyVM *vm, BodyValue *v, size_t n, BodyValue **out)
{
        _cleanup_bv_ BodyValue *it = NULL;
        size_t got = 0;

        if (v->kind == BV_LIST || v->kind == BV_TUPLE) {
                if (v->list.len < n) {
                        bv_raise(vm, BV_EXC_VALUE_ERROR,
                                 "not enough values to unpack (expected %zu, got %zu)", n,
                                 v->list.len);
                        return -1;
                }
                if (v->list.len > n) {
                        bv_raise(vm, BV_EXC_VALUE_ERROR, "too many values to unpack (expected %zu)",
                                 n);
                        return -1;
                }
                for (size_t i = 0; i < n; i++)
                        out[i] = bv_ref(v->list.items[i]);
                return 0;
        }
        if (v->kind != BV_STR && v->kind != BV_DICT && v->kind != BV_SET &&
            v->kind != BV_DICTVIEW && v->kind != BV_RANGE && v->kind != BV_ITER &&
            v->kind != BV_FILE) {
                bv_raise(vm, BV_EXC_TYPE_ERROR, "cannot unpack non-iterable %s object",
                         bv_type_name(v));
                return -1;
        }
        it = bv_iter(vm, v);
        if (!it)
                return -1;
        for (;;) {
                BodyValue *x;
                int r = bv_next(vm, it, &x);
                if (r < 0)
                        goto fail;
                if (r == 0)
                        break;
                if (got == n) {
                        bv_unref(x);
                        bv_raise(vm, BV_EXC_VALUE_ERROR, "too many values to unpack (expected %zu)",
                                 n);
                        goto fail;
                }
                out[got++] = x;
        }
        if (got < n) {
                bv_raise(vm, BV_EXC_VALUE_ERROR,
                         "not enough values to unpack (expected %zu, got %zu)", n, got);
                goto fail;
        }
        return 0;
fail:
        for (size_t i = 0; i < got; i++)
                bv_unref(out[i]);
        return -1;
}

/* ---- sorting ---- */

typedef struct SortItem {
        BodyValue *key;
        BodyValue *value;
} SortItem;

/* Is b to be placed before a? Strictly less, so that equal items keep
 * their order (the sort is stable, also with reverse=True). */
static int before(BodyVM *vm, SortItem *a, SortItem *b, bool reverse)
{
        if (bv_step(vm) < 0)
                return -1;
        return reverse ? bv_compare(vm, BV_CMP_LT, a->key, b->key)
                       : bv_compare(vm, BV_CMP_LT, b->key, a->key);
}

static int merge_sort(BodyVM *vm, SortItem *v, SortItem *tmp, size_t n, bool reverse)
{
        for (size_t width = 1; width < n; width *= 2) {
                for (size_t lo = 0; lo < n - width; lo += 2 * width) {
                        size_t mid = lo + width, hi = mid + width < n ? mid + width : n;
                        size_t i = lo, j = mid, k = lo;
                        while (i < mid && j < hi) {
                                int r = before(vm, &v[i], &v[j], reverse);
                                if (r < 0)
                                        return -1;
                                tmp[k++] = r ? v[j++] : v[i++];
                        }
                        while (i < mid)
                                tmp[k++] = v[i++];
                        while (j < hi)
                                tmp[k++] = v[j++];
                        memcpy(v + lo, tmp + lo, (hi - lo) * sizeof(SortItem));
                }
        }
        return 0;
}

int bv__sort(BodyVM *vm, BodyValue **items, size_t n, BodyValue *key, bool reverse)
{
        size_t size = (n ? n : 1) * sizeof(SortItem);
        SortItem *v, *tmp;
        size_t made = 0;
        int r = -1;

        if (n < 2 && (!key || key->kind == BV_NONE))
                return 0;
        v = bv_mem_alloc(vm, size);
        if (!v)
                return -1;
        tmp = bv_mem_alloc(vm, size);
        if (!tmp) {
                bv_mem_free(vm, v, size);
                return -1;
        }
        for (; made < n; made++) {
                v[made].value = items[made];
                if (key && key->kind != BV_NONE) {
                        v[made].key = bv_call(vm, key, &items[made], 1, NULL);
                        if (!v[made].key)
                                goto out;
                } else {
                        v[made].key = bv_ref(items[made]);
                }
        }
        if (merge_sort(vm, v, tmp, n, reverse) < 0)
                goto out;
        for (size_t i = 0; i < n; i++)
                items[i] = v[i].value;
        r = 0;
out:
        for (size_t i = 0; i < made; i++)
                bv_unref(v[i].key);
        bv_mem_free(vm, v, size);
        bv_mem_free(vm, tmp, size);
        return r;
}
