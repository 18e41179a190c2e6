/* Subscripts and slices: len(), x[i], x[a:b:c], item assignment and
 * deletion, with Python's index rules (negative indices, clamping slices,
 * code points for strings) and messages. */
#include "body/values/value-internal.h"

#include <string.h>

#include "util/utf8.h"

size_t bv__str_offset(const BodyValue *s, size_t i)
{
        size_t off = 0;

        if (bv__str_is_ascii(s))
                return i;
        while (i > 0 && off < s->str.len) {
                /* Skip continuation bytes: the string is valid UTF-8. */
                off++;
                while (off < s->str.len && ((unsigned char)s->str.data[off] & 0xc0) == 0x80)
                        off++;
                i--;
        }
        return off;
}

size_t bv__str_cp_index(const BodyValue *s, size_t off)
{
        size_t n = 0;

        if (bv__str_is_ascii(s))
                return off;
        for (size_t i = 0; i < off && i < s->str.len; i++)
                if (((unsigned char)s->str.data[i] & 0xc0) != 0x80)
                        n++;
        return n;
}

/* ---- the len slots of the core's kinds ---- */

int bv__str_len(BodyVM *vm, BodyValue *v, size_t *ret)
{
        *ret = v->str.cplen;
        return 0;
}

int bv__seq_len(BodyVM *vm, BodyValue *v, size_t *ret)
{
        *ret = v->list.len;
        return 0;
}

int bv__dict_len(BodyVM *vm, BodyValue *v, size_t *ret)
{
        *ret = v->dict.len;
        return 0;
}

int bv__dictview_len(BodyVM *vm, BodyValue *v, size_t *ret)
{
        *ret = v->dictview.dict->dict.len;
        return 0;
}

int bv_len(BodyVM *vm, BodyValue *v, size_t *ret)
{
        const BvType *t = bv__type(v);

        if (t->len)
                return t->len(vm, v, ret);
        bv_raise(vm, BV_EXC_TYPE_ERROR, "object of type '%s' has no len()", bv_type_name(v));
        return -1;
}

static int slice_part(BodyVM *vm, BodyValue *v, int64_t dflt, int64_t *ret)
{
        if (v->kind == BV_NONE) {
                *ret = dflt;
                return 0;
        }
        if (bv__is_intlike(v)) {
                *ret = bv__int_of(v);
                return 0;
        }
        bv_raise(vm, BV_EXC_TYPE_ERROR,
                 "slice indices must be integers or None or have an __index__ method");
        return -1;
}

int64_t bv__slice_indices(BodyVM *vm, BodyValue *slice, int64_t length, int64_t *start,
                          int64_t *stop, int64_t *step)
{
        if (slice_part(vm, slice->slice.step, 1, step) < 0)
                return -1;
        if (*step == 0) {
                bv_raise(vm, BV_EXC_VALUE_ERROR, "slice step cannot be zero");
                return -1;
        }
        if (*step < -INT64_MAX)
                *step = -INT64_MAX;
        if (slice_part(vm, slice->slice.start, *step < 0 ? INT64_MAX : 0, start) < 0 ||
            slice_part(vm, slice->slice.stop, *step < 0 ? INT64_MIN : INT64_MAX, stop) < 0)
                return -1;
        /* PySlice_AdjustIndices. */
        if (*start < 0) {
                *start += length;
                if (*start < 0)
                        *start = *step < 0 ? -1 : 0;
        } else if (*start >= length) {
                *start = *step < 0 ? length - 1 : length;
        }
        if (*stop < 0) {
                *stop += length;
                if (*stop < 0)
                        *stop = *step < 0 ? -1 : 0;
        } else if (*stop >= length) {
                *stop = *step < 0 ? length - 1 : length;
        }
        if (*step < 0) {
                if (*stop < *start)
                        return (*start - *stop - 1) / (-*step) + 1;
        } else if (*start < *stop) {
                return (*stop - *start - 1) / *step + 1;
        }
        return 0;
}

/* Resolve a subscript index, negative from the end. false when out of range. */
static bool norm_index(int64_t *i, size_t len)
{
        if (*i < 0)
                *i += (int64_t)len;
        return *i >= 0 && (uint64_t)*i < len;
}

static BodyValue *str_slice(BodyVM *vm, BodyValue *s, int64_t start, int64_t step, int64_t n)
{
        BodyValue *r;
        size_t total = 0;

        if (n <= 0)
                return bv_str_new(vm, "", 0);
        if (step == 1) {
                size_t a = bv__str_offset(s, (size_t)start);
                size_t b = bv__str_offset(s, (size_t)(start + n));
                return bv_str_new(vm, s->str.data + a, b - a);
        }
        if (bv__str_is_ascii(s)) {
                r = bv__str_alloc(vm, (size_t)n);
                if (!r)
                        return NULL;
                for (int64_t k = 0; k < n; k++)
                        r->str.data[k] = s->str.data[start + k * step];
                r->str.cplen = (size_t)n;
                return r;
        }
        {
                /* Index the code points once, then copy the chosen ones. */
                size_t cps = s->str.cplen, off = 0, size = (cps + 1) * sizeof(size_t);
                size_t *offs = bv_mem_alloc(vm, size);
                if (!offs)
                        return NULL;
                for (size_t i = 0; i < cps; i++) {
                        size_t len;
                        offs[i] = off;
                        bv__cp_at(s->str.data, s->str.len, off, &len);
                        off += len;
                }
                offs[cps] = off;
                for (int64_t k = 0; k < n; k++) {
                        size_t i = (size_t)(start + k * step);
                        total += offs[i + 1] - offs[i];
                }
                r = bv__str_alloc(vm, total);
                if (r) {
                        char *p = r->str.data;
                        for (int64_t k = 0; k < n; k++) {
                                size_t i = (size_t)(start + k * step);
                                memcpy(p, s->str.data + offs[i], offs[i + 1] - offs[i]);
                                p += offs[i + 1] - offs[i];
                        }
                        r->str.cplen = (size_t)n;
                }
                bv_mem_free(vm, offs, size);
                return r;
        }
}

static BodyValue *seq_slice(BodyVM *vm, BodyValue *v, int64_t start, int64_t step, int64_t n)
{
        BodyValue *r = bv_list_new(vm, n > 0 ? (size_t)n : 0);

        if (!r)
                return NULL;
        r->kind = v->kind;
        for (int64_t k = 0; k < n; k++)
                r->list.items[r->list.len++] = bv_ref(v->list.items[start + k * step]);
        return r;
}

BodyValue *bv__range_new(BodyVM *vm, int64_t start, int64_t stop, int64_t step)
{
        BodyValue *r;
        __int128 len = 0;

        if (step > 0 && start < stop)
                len = ((__int128)stop - start - 1) / step + 1;
        else if (step < 0 && start > stop)
                len = ((__int128)start - stop - 1) / -(__int128)step + 1;
        if (len > INT64_MAX) {
                /* range(-2**63, 2**63 - 1): the length needs an int. */
                _cleanup_bv_ BodyValue *a = bv_int_new(vm, start), *b = bv_int_new(vm, stop);
                _cleanup_bv_ BodyValue *c = bv_int_new(vm, step);
                if (!a || !b || !c)
                        return NULL;
                return bv__range_make_big(vm, a, b, c);
        }
        r = bv__alloc(vm, BV_RANGE, 0);
        if (!r)
                return NULL;
        r->range.start = start;
        r->range.stop = stop;
        r->range.step = step;
        r->range.len = (int64_t)len;
        return r;
}

/* ---- the getitem slots of the core's kinds ---- */

BodyValue *bv__seq_getitem(BodyVM *vm, BodyValue *obj, BodyValue *key)
{
        const char *what = obj->kind == BV_LIST ? "list" : "tuple";
        int64_t i, start, stop, step, n;

        if (key->kind == BV_SLICE) {
                n = bv__slice_indices(vm, key, (int64_t)obj->list.len, &start, &stop, &step);
                return n < 0 ? NULL : seq_slice(vm, obj, start, step, n);
        }
        if (bv__as_index(vm, key, what, &i) < 0)
                return NULL;
        if (!norm_index(&i, obj->list.len))
                return bv_raise(vm, BV_EXC_INDEX_ERROR, "%s index out of range", what);
        return bv_ref(obj->list.items[i]);
}

BodyValue *bv__str_getitem(BodyVM *vm, BodyValue *obj, BodyValue *key)
{
        int64_t i, start, stop, step, n;

        if (key->kind == BV_SLICE) {
                n = bv__slice_indices(vm, key, (int64_t)obj->str.cplen, &start, &stop, &step);
                return n < 0 ? NULL : str_slice(vm, obj, start, step, n);
        }
        if (!bv__is_intlike(key))
                return bv_raise(vm, BV_EXC_TYPE_ERROR, "string indices must be integers, not '%s'",
                                bv_type_name(key));
        if (bv__is_big(key))
                return bv_raise(vm, BV_EXC_INDEX_ERROR,
                                "cannot fit 'int' into an index-sized integer");
        i = bv__int_of(key);
        if (!norm_index(&i, obj->str.cplen))
                return bv_raise(vm, BV_EXC_INDEX_ERROR, "string index out of range");
        return str_slice(vm, obj, i, 1, 1);
}

BodyValue *bv__dict_getitem(BodyVM *vm, BodyValue *obj, BodyValue *key)
{
        BodyValue *v;
        int r = bv_dict_lookup(vm, obj, key, &v);

        if (r < 0)
                return NULL;
        if (r == 0)
                return bv_raise_value(vm, BV_EXC_KEY_ERROR, key);
        return bv_ref(v);
}

BodyValue *bv__range_getitem(BodyVM *vm, BodyValue *obj, BodyValue *key)
{
        int64_t i, start, stop, step, n;

        if (key->kind == BV_SLICE) {
                if (obj->range.z[0] || bv__is_big(key->slice.start) ||
                    bv__is_big(key->slice.stop) || bv__is_big(key->slice.step))
                        return bv__range_slice(vm, obj, key);
                n = bv__slice_indices(vm, key, obj->range.len, &start, &stop, &step);
                if (n < 0)
                        return NULL;
                /* compute_slice(): start and stop indices are in [-1, len]. */
                __int128 s0 = obj->range.start + (__int128)start * obj->range.step;
                __int128 s1 = obj->range.start + (__int128)stop * obj->range.step;
                __int128 st = (__int128)step * obj->range.step;
                if (st > INT64_MAX || st < INT64_MIN || s1 > INT64_MAX || s1 < INT64_MIN)
                        return bv__range_slice(vm, obj, key);
                return bv__range_new(vm, (int64_t)s0, (int64_t)s1, (int64_t)st);
        }
        if (obj->range.z[0] && bv__is_intlike(key))
                return bv__range_item(vm, obj, key);
        if (bv__is_big(key))
                return bv_raise(vm, BV_EXC_INDEX_ERROR, "range object index out of range");
        if (bv__as_index(vm, key, "range", &i) < 0)
                return NULL;
        if (!norm_index(&i, (size_t)obj->range.len))
                return bv_raise(vm, BV_EXC_INDEX_ERROR, "range object index out of range");
        return bv_int_new(vm, obj->range.start + i * obj->range.step);
}

BodyValue *bv_getitem(BodyVM *vm, BodyValue *obj, BodyValue *key)
{
        const BvType *t = bv__type(obj);

        if (t->getitem)
                return t->getitem(vm, obj, key);
        return bv_raise(vm, BV_EXC_TYPE_ERROR, "'%s' object is not subscriptable",
                        bv_type_name(obj));
}

static int list_splice(BodyVM *vm, BodyValue *l, size_t start, size_t n, BodyValue **items,
                       size_t n_items)
{
        size_t len = l->list.len, i;
        BodyValue **old;

        if (n_items > n && bv__list_reserve(vm, l, len - n + n_items) < 0)
                return -1;
        old = bv_mem_alloc(vm, (n ? n : 1) * sizeof(BodyValue *));
        if (!old)
                return -1;
        memcpy(old, l->list.items + start, n * sizeof(BodyValue *));
        memmove(l->list.items + start + n_items, l->list.items + start + n,
                (len - start - n) * sizeof(BodyValue *));
        for (i = 0; i < n_items; i++)
                l->list.items[start + i] = bv_ref(items[i]);
        l->list.len = len - n + n_items;
        /* Release the old items only once the list is consistent again. */
        for (i = 0; i < n; i++)
                bv_unref(old[i]);
        bv_mem_free(vm, old, (n ? n : 1) * sizeof(BodyValue *));
        return 0;
}

static int list_set_slice(BodyVM *vm, BodyValue *l, BodyValue *slice, BodyValue *value)
{
        int64_t start, stop, step, n;
        BodyValue **items;
        size_t n_items;
        int r = 0;

        n = bv__slice_indices(vm, slice, (int64_t)l->list.len, &start, &stop, &step);
        if (n < 0)
                return -1;
        if (bv__collect(vm, value, &items, &n_items) < 0) {
                if (vm->exc &&
                    bv_class_is_subclass(vm->exc->exc.cls, bv_exc_class(BV_EXC_TYPE_ERROR))) {
                        bv_exc_clear(vm);
                        bv_raise(vm, BV_EXC_TYPE_ERROR, "can only assign an iterable");
                }
                return -1;
        }
        if (step == 1) {
                if (stop < start)
                        stop = start;
                r = list_splice(vm, l, (size_t)start, (size_t)(stop - start), items, n_items);
        } else if ((size_t)n != n_items) {
                bv_raise(vm, BV_EXC_VALUE_ERROR,
                         "attempt to assign sequence of size %zu to extended slice of size %lld",
                         n_items, (long long)n);
                r = -1;
        } else {
                for (int64_t k = 0; k < n; k++) {
                        BodyValue **slot = &l->list.items[start + k * step];
                        BodyValue *old = *slot;
                        *slot = bv_ref(items[k]);
                        bv_unref(old);
                }
        }
        bv__free_items(vm, items, n_items);
        return r;
}

/* ---- the setitem and delitem slots of the core's kinds ---- */

int bv__list_setitem(BodyVM *vm, BodyValue *obj, BodyValue *key, BodyValue *value)
{
        BodyValue *old;
        int64_t i;

        if (key->kind == BV_SLICE)
                return list_set_slice(vm, obj, key, value);
        if (bv__as_index(vm, key, "list", &i) < 0)
                return -1;
        if (!norm_index(&i, obj->list.len)) {
                bv_raise(vm, BV_EXC_INDEX_ERROR, "list assignment index out of range");
                return -1;
        }
        old = obj->list.items[i];
        obj->list.items[i] = bv_ref(value);
        bv_unref(old);
        return 0;
}

int bv__dict_setitem(BodyVM *vm, BodyValue *obj, BodyValue *key, BodyValue *value)
{
        return bv_dict_set(vm, obj, key, value);
}

int bv__list_delitem(BodyVM *vm, BodyValue *obj, BodyValue *key)
{
        int64_t i, start, stop, step, n;

        if (key->kind == BV_SLICE) {
                n = bv__slice_indices(vm, key, (int64_t)obj->list.len, &start, &stop, &step);
                if (n < 0)
                        return -1;
                if (n == 0)
                        return 0;
                if (step < 0) {
                        start = start + (n - 1) * step;
                        step = -step;
                }
                if (step == 1)
                        return list_splice(vm, obj, (size_t)start, (size_t)n, NULL, 0);
                /* Delete from the back so that earlier positions stay valid. */
                for (int64_t k = n - 1; k >= 0; k--)
                        if (list_splice(vm, obj, (size_t)(start + k * step), 1, NULL, 0) < 0)
                                return -1;
                return 0;
        }
        if (bv__as_index(vm, key, "list", &i) < 0)
                return -1;
        if (!norm_index(&i, obj->list.len)) {
                bv_raise(vm, BV_EXC_INDEX_ERROR, "list assignment index out of range");
                return -1;
        }
        return list_splice(vm, obj, (size_t)i, 1, NULL, 0);
}

int bv__dict_delitem(BodyVM *vm, BodyValue *obj, BodyValue *key)
{
        int r = bv_dict_delete(vm, obj, key);

        if (r == 0)
                bv_raise_value(vm, BV_EXC_KEY_ERROR, key);
        return r > 0 ? 0 : -1;
}

int bv_setitem(BodyVM *vm, BodyValue *obj, BodyValue *key, BodyValue *value)
{
        const BvType *t = bv__type(obj);

        if (t->setitem)
                return t->setitem(vm, obj, key, value);
        bv_raise(vm, BV_EXC_TYPE_ERROR, "'%s' object does not support item assignment",
                 bv_type_name(obj));
        return -1;
}

int bv_delitem(BodyVM *vm, BodyValue *obj, BodyValue *key)
{
        const BvType *t = bv__type(obj);

        if (t->delitem)
                return t->delitem(vm, obj, key);
        bv_raise(vm, BV_EXC_TYPE_ERROR, "'%s' object doesn't support item deletion",
                 bv_type_name(obj));
        return -1;
}
