/* Methods of dict (and Bunch) and set. There is deliberately no
 * iteritems/itervalues/iterkeys/has_key: those are Python 2, and the
 * reference (Python 3) raises AttributeError for them, which real
 * templates rely on seeing. */
#include "body/library/library.h"

#define METHOD(fn)                                                                                 \
        static BodyValue *fn(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,              \
                             BodyValue *kwargs)

static BodyValue *view_new(BodyVM *vm, BodyValue *dict, BvDictView which)
{
        BodyValue *v = bv__alloc(vm, BV_DICTVIEW, 0);
        if (!v)
                return NULL;
        v->dictview.dict = bv_ref(dict);
        v->dictview.view = which;
        return v;
}

METHOD(m_keys)
{
        if (bv__check_args(vm, "keys", n, kwargs, 0, 0) < 0)
                return NULL;
        return view_new(vm, self, BV_VIEW_KEYS);
}

METHOD(m_values)
{
        if (bv__check_args(vm, "values", n, kwargs, 0, 0) < 0)
                return NULL;
        return view_new(vm, self, BV_VIEW_VALUES);
}

METHOD(m_items)
{
        if (bv__check_args(vm, "items", n, kwargs, 0, 0) < 0)
                return NULL;
        return view_new(vm, self, BV_VIEW_ITEMS);
}

METHOD(m_get)
{
        BodyValue *v;
        int r;

        if (bv__check_args(vm, "get", n, kwargs, 1, 2) < 0)
                return NULL;
        r = bv_dict_lookup(vm, self, args[0], &v);
        if (r < 0)
                return NULL;
        return bv_ref(r ? v : n == 2 ? args[1] : bv_none());
}

METHOD(m_setdefault)
{
        BodyValue *v;
        int r;

        if (bv__check_args(vm, "setdefault", n, kwargs, 1, 2) < 0)
                return NULL;
        r = bv_dict_lookup(vm, self, args[0], &v);
        if (r < 0)
                return NULL;
        if (r)
                return bv_ref(v);
        v = n == 2 ? args[1] : bv_none();
        if (bv_dict_set(vm, self, args[0], v) < 0)
                return NULL;
        return bv_ref(v);
}

METHOD(m_pop)
{
        BodyValue *v, *ret;
        int r;

        if (bv__check_args(vm, "pop", n, kwargs, 1, 2) < 0)
                return NULL;
        r = bv_dict_lookup(vm, self, args[0], &v);
        if (r < 0)
                return NULL;
        if (r == 0)
                return n == 2 ? bv_ref(args[1]) : bv_raise_value(vm, BV_EXC_KEY_ERROR, args[0]);
        ret = bv_ref(v);
        if (bv_dict_delete(vm, self, args[0]) < 0) {
                bv_unref(ret);
                return NULL;
        }
        return ret;
}

METHOD(m_popitem)
{
        BvDict *d = &self->dict;
        BodyValue *pair;

        if (bv__check_args(vm, "popitem", n, kwargs, 0, 0) < 0)
                return NULL;
        for (size_t i = d->n_entries; i-- > 0;) {
                if (!d->entries[i].key)
                        continue;
                pair = bv_tuple_pair(vm, d->entries[i].key, d->entries[i].value);
                if (!pair || bv_dict_delete(vm, self, d->entries[i].key) < 0) {
                        bv_unref(pair);
                        return NULL;
                }
                return pair;
        }
        return bv_raise(vm, BV_EXC_KEY_ERROR, "popitem(): dictionary is empty");
}

METHOD(m_update)
{
        if (n > 1)
                return bv_raise(vm, BV_EXC_TYPE_ERROR,
                                "update expected at most 1 argument, got %zu", n);
        if (bv__dict_update(vm, self, n ? args[0] : NULL, kwargs) < 0)
                return NULL;
        return bv_none();
}

METHOD(m_copy)
{
        if (bv__check_args(vm, "copy", n, kwargs, 0, 0) < 0)
                return NULL;
        /* dict.copy() of a Bunch is a plain dict, as in the reference. */
        return bv__dict_copy(vm, self);
}

METHOD(m_clear)
{
        if (bv__check_args(vm, "clear", n, kwargs, 0, 0) < 0)
                return NULL;
        bv__dict_clear(self);
        return bv_none();
}

const BvBuiltinDef bv__dict_methods[] = {
        {"clear", m_clear},     {"copy", m_copy},
        {"get", m_get},         {"items", m_items},
        {"keys", m_keys},       {"pop", m_pop},
        {"popitem", m_popitem}, {"setdefault", m_setdefault},
        {"update", m_update},   {"values", m_values},
        {NULL, NULL},
};

/* ---- set ---- */

METHOD(m_add)
{
        if (bv__check_args(vm, "add", n, kwargs, 1, 1) < 0 || bv_set_add(vm, self, args[0]) < 0)
                return NULL;
        return bv_none();
}

static BodyValue *remove_common(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                                BodyValue *kwargs, const char *name, bool must_exist)
{
        int r;

        if (bv__check_args(vm, name, n, kwargs, 1, 1) < 0)
                return NULL;
        r = bv_dict_delete(vm, self, args[0]);
        if (r < 0)
                return NULL;
        if (r == 0 && must_exist)
                return bv_raise_value(vm, BV_EXC_KEY_ERROR, args[0]);
        return bv_none();
}

METHOD(m_remove)
{
        return remove_common(vm, self, args, n, kwargs, "remove", true);
}

METHOD(m_discard)
{
        return remove_common(vm, self, args, n, kwargs, "discard", false);
}

METHOD(m_set_pop)
{
        size_t pos = 0;
        BodyValue *k;

        if (bv__check_args(vm, "pop", n, kwargs, 0, 0) < 0)
                return NULL;
        if (!bv_dict_next(self, &pos, &k, NULL))
                return bv_raise(vm, BV_EXC_KEY_ERROR, "pop from an empty set");
        bv_ref(k);
        if (bv_dict_delete(vm, self, k) < 0) {
                bv_unref(k);
                return NULL;
        }
        return k;
}

/* set.union(*others) and friends accept any iterables; build a set of each
 * and reuse the operators. */
static BodyValue *set_method(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                             BodyValue *kwargs, const char *name, BvBinOp op, bool in_place)
{
        _cleanup_bv_ BodyValue *acc = NULL;

        if (bv__no_kwargs(vm, name, kwargs) < 0)
                return NULL;
        acc = in_place ? bv_ref(self) : bv__dict_copy(vm, self);
        if (!acc)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                _cleanup_bv_ BodyValue *other = NULL;
                BodyValue *r;
                other = args[i]->kind == BV_SET ? bv_ref(args[i])
                                                : bv__type_call_set(vm, NULL, &args[i], 1, NULL);
                if (!other)
                        return NULL;
                r = bv_binop_inplace(vm, op, acc, other);
                if (!r)
                        return NULL;
                bv_unref(r);
        }
        return in_place ? bv_none() : TAKE_PTR(acc);
}

METHOD(m_union)
{
        return set_method(vm, self, args, n, kwargs, "union", BV_OP_OR, false);
}

METHOD(m_intersection)
{
        return set_method(vm, self, args, n, kwargs, "intersection", BV_OP_AND, false);
}

METHOD(m_difference)
{
        return set_method(vm, self, args, n, kwargs, "difference", BV_OP_SUB, false);
}

METHOD(m_symmetric_difference)
{
        if (bv__check_args(vm, "symmetric_difference", n, kwargs, 1, 1) < 0)
                return NULL;
        return set_method(vm, self, args, n, kwargs, "symmetric_difference", BV_OP_XOR, false);
}

METHOD(m_set_update)
{
        return set_method(vm, self, args, n, kwargs, "update", BV_OP_OR, true);
}

static BodyValue *subset_common(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                                BodyValue *kwargs, const char *name, bool superset)
{
        _cleanup_bv_ BodyValue *other = NULL;
        int r;

        if (bv__check_args(vm, name, n, kwargs, 1, 1) < 0)
                return NULL;
        other = args[0]->kind == BV_SET ? bv_ref(args[0])
                                        : bv__type_call_set(vm, NULL, args, 1, NULL);
        if (!other)
                return NULL;
        r = bv_compare(vm, BV_CMP_LE, superset ? other : self, superset ? self : other);
        return r < 0 ? NULL : bv_bool(r);
}

METHOD(m_issubset)
{
        return subset_common(vm, self, args, n, kwargs, "issubset", false);
}

METHOD(m_issuperset)
{
        return subset_common(vm, self, args, n, kwargs, "issuperset", true);
}

const BvBuiltinDef bv__set_methods[] = {
        {"add", m_add},
        {"clear", m_clear},
        {"copy", m_copy},
        {"difference", m_difference},
        {"discard", m_discard},
        {"intersection", m_intersection},
        {"issubset", m_issubset},
        {"issuperset", m_issuperset},
        {"pop", m_set_pop},
        {"remove", m_remove},
        {"symmetric_difference", m_symmetric_difference},
        {"union", m_union},
        {"update", m_set_update},
        {NULL, NULL},
};
