/* Methods of list and tuple, and the few of int and float. */
#include "body/library/library.h"

#include <math.h>
#include <string.h>

#define METHOD(fn)                                                                                 \
        static BodyValue *fn(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,              \
                             BodyValue *kwargs)

METHOD(m_append)
{
        if (bv__check_args(vm, "append", n, kwargs, 1, 1) < 0 ||
            bv_list_append(vm, self, args[0]) < 0)
                return NULL;
        return bv_none();
}

METHOD(m_extend)
{
        BodyValue *r;

        if (bv__check_args(vm, "extend", n, kwargs, 1, 1) < 0)
                return NULL;
        r = bv_binop_inplace(vm, BV_OP_ADD, self, args[0]);
        if (!r)
                return NULL;
        bv_unref(r);
        return bv_none();
}

METHOD(m_insert)
{
        int64_t i, len = (int64_t)self->list.len;

        if (bv__check_args(vm, "insert", n, kwargs, 2, 2) < 0 ||
            bv__as_index(vm, args[0], NULL, &i) < 0)
                return NULL;
        if (i < 0 && (i += len) < 0)
                i = 0;
        if (i > len)
                i = len;
        if (bv__list_reserve(vm, self, self->list.len + 1) < 0)
                return NULL;
        memmove(self->list.items + i + 1, self->list.items + i,
                (self->list.len - (size_t)i) * sizeof(BodyValue *));
        self->list.items[i] = bv_ref(args[1]);
        self->list.len++;
        return bv_none();
}

static void remove_at(BodyValue *l, size_t i)
{
        memmove(l->list.items + i, l->list.items + i + 1,
                (l->list.len - i - 1) * sizeof(BodyValue *));
        l->list.len--;
}

METHOD(m_pop)
{
        int64_t i = -1;
        BodyValue *v;

        if (bv__check_args(vm, "pop", n, kwargs, 0, 1) < 0 ||
            (n == 1 && bv__as_index(vm, args[0], NULL, &i) < 0))
                return NULL;
        if (self->list.len == 0)
                return bv_raise(vm, BV_EXC_INDEX_ERROR, "pop from empty list");
        if (i < 0)
                i += (int64_t)self->list.len;
        if (i < 0 || i >= (int64_t)self->list.len)
                return bv_raise(vm, BV_EXC_INDEX_ERROR, "pop index out of range");
        v = self->list.items[i];
        remove_at(self, (size_t)i);
        return v;
}

/* Position of x in seq[start:end], -1 when absent, -2 on error. */
static int64_t seq_find(BodyVM *vm, BodyValue *seq, BodyValue *x, BodyValue *start, BodyValue *end)
{
        int64_t len = (int64_t)seq->list.len, a = 0, b = len;

        if ((start && bv__as_index(vm, start, NULL, &a) < 0) ||
            (end && bv__as_index(vm, end, NULL, &b) < 0))
                return -2;
        if (a < 0 && (a += len) < 0)
                a = 0;
        if (b < 0 && (b += len) < 0)
                b = 0;
        for (int64_t i = a; i < b && i < (int64_t)seq->list.len; i++) {
                int r;
                if (bv_step(vm) < 0)
                        return -2;
                r = bv_eq(vm, seq->list.items[i], x);
                if (r < 0)
                        return -2;
                if (r)
                        return i;
        }
        return -1;
}

METHOD(m_remove)
{
        int64_t i;
        BodyValue *v;

        if (bv__check_args(vm, "remove", n, kwargs, 1, 1) < 0)
                return NULL;
        i = seq_find(vm, self, args[0], NULL, NULL);
        if (i == -2)
                return NULL;
        if (i < 0)
                return bv_raise(vm, BV_EXC_VALUE_ERROR, "list.remove(x): x not in list");
        v = self->list.items[i];
        remove_at(self, (size_t)i);
        bv_unref(v);
        return bv_none();
}

METHOD(m_index)
{
        int64_t i;

        if (bv__check_args(vm, "index", n, kwargs, 1, 3) < 0)
                return NULL;
        i = seq_find(vm, self, args[0], n > 1 ? args[1] : NULL, n > 2 ? args[2] : NULL);
        if (i == -2)
                return NULL;
        if (i < 0) {
                if (self->kind == BV_TUPLE)
                        return bv_raise(vm, BV_EXC_VALUE_ERROR, "tuple.index(x): x not in tuple");
                _cleanup_strbuf_ StrBuf b = bv__buf(vm);
                if (bv_repr(vm, args[0], &b) < 0)
                        return NULL;
                return bv_raise(vm, BV_EXC_VALUE_ERROR, "%s is not in list", b.data);
        }
        return bv_int_new(vm, i);
}

METHOD(m_count)
{
        int64_t count = 0;

        if (bv__check_args(vm, "count", n, kwargs, 1, 1) < 0)
                return NULL;
        for (size_t i = 0; i < self->list.len; i++) {
                int r;
                if (bv_step(vm) < 0)
                        return NULL;
                r = bv_eq(vm, self->list.items[i], args[0]);
                if (r < 0)
                        return NULL;
                count += r;
        }
        return bv_int_new(vm, count);
}

METHOD(m_sort)
{
        static const char *const names[] = {"key", "reverse"};
        BodyValue *a[2];
        BodyValue **items;
        size_t len = self->list.len;
        int r;

        if (n > 0)
                return bv_raise(vm, BV_EXC_TYPE_ERROR, "sort() takes no positional arguments");
        if (bv__parse_args(vm, "sort", NULL, 0, kwargs, names, 2, 0, 0, a) < 0)
                return NULL;
        /* Sort a copy: a key function that changes the list must not make
         * the sort read freed items. */
        items = bv_mem_alloc(vm, (len ? len : 1) * sizeof(BodyValue *));
        if (!items)
                return NULL;
        for (size_t i = 0; i < len; i++)
                items[i] = bv_ref(self->list.items[i]);
        r = bv__sort(vm, items, len, a[0], a[1] && bv_truthy(a[1]));
        if (r == 0 && self->list.len == len) {
                /* Exchange: the list takes the sorted references, the copy
                 * the original ones, which are then released. */
                for (size_t i = 0; i < len; i++) {
                        BodyValue *t = self->list.items[i];
                        self->list.items[i] = items[i];
                        items[i] = t;
                }
        }
        bv__free_items(vm, items, len);
        if (r < 0)
                return NULL;
        if (self->list.len != len)
                return bv_raise(vm, BV_EXC_VALUE_ERROR, "list modified during sort");
        return bv_none();
}

METHOD(m_reverse)
{
        if (bv__check_args(vm, "reverse", n, kwargs, 0, 0) < 0)
                return NULL;
        for (size_t i = 0, j = self->list.len; i + 1 < j; i++, j--) {
                BodyValue *t = self->list.items[i];
                self->list.items[i] = self->list.items[j - 1];
                self->list.items[j - 1] = t;
        }
        return bv_none();
}

METHOD(m_copy)
{
        if (bv__check_args(vm, "copy", n, kwargs, 0, 0) < 0)
                return NULL;
        return bv_list_from_iterable(vm, self);
}

METHOD(m_clear)
{
        BodyValue **items = self->list.items;
        size_t len = self->list.len, cap = self->list.cap;

        if (bv__check_args(vm, "clear", n, kwargs, 0, 0) < 0)
                return NULL;
        self->list.items = NULL;
        self->list.len = self->list.cap = 0;
        for (size_t i = 0; i < len; i++)
                bv_unref(items[i]);
        bv_mem_free(vm, items, cap * sizeof(BodyValue *));
        return bv_none();
}

const BvBuiltinDef bv__list_methods[] = {
        {"append", m_append}, {"clear", m_clear},     {"copy", m_copy},     {"count", m_count},
        {"extend", m_extend}, {"index", m_index},     {"insert", m_insert}, {"pop", m_pop},
        {"remove", m_remove}, {"reverse", m_reverse}, {"sort", m_sort},     {NULL, NULL},
};

const BvBuiltinDef bv__tuple_methods[] = {
        {"count", m_count},
        {"index", m_index},
        {NULL, NULL},
};

METHOD(m_bit_length)
{
        int64_t i;
        uint64_t u;
        int bits = 0;

        if (bv__check_args(vm, "bit_length", n, kwargs, 0, 0) < 0)
                return NULL;
        if (bv__is_big(self)) {
                BvIntView t;
                return bv_int_new(vm, (int64_t)mpz_sizeinbase(bv__int_view(self, &t), 2));
        }
        i = bv__int_of(self);
        u = i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i;
        while (u) {
                bits++;
                u >>= 1;
        }
        return bv_int_new(vm, bits);
}

METHOD(m_is_integer)
{
        if (bv__check_args(vm, "is_integer", n, kwargs, 0, 0) < 0)
                return NULL;
        return bv_bool(isfinite(self->f) && self->f == floor(self->f));
}

const BvBuiltinDef bv__int_methods[] = {
        {"bit_length", m_bit_length},
        {NULL, NULL},
};

const BvBuiltinDef bv__float_methods[] = {
        {"is_integer", m_is_integer},
        {NULL, NULL},
};
