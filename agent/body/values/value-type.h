/* The type table of the value core: what a kind of value does, slot by
 * slot. The core dispatches through bv__types[v->kind] for everything that
 * differs between kinds; a NULL slot means the kind does not have that
 * behaviour. The table is assembled outside the core (agent/body/types.c),
 * where the core's own slots, declared here, meet the library's (methods,
 * constructors, str % args), so that the core never names a library
 * function. Part of value-internal.h, which includes it. */
#pragma once

#include "body/values/value.h"

/* The containers being printed, so that a list containing itself prints
 * as [[...]] instead of recursing. */
typedef struct BvReprCtx {
        BodyValue *stack[64];
        size_t n;
} BvReprCtx;

typedef struct BvType {
        /* The kind's class: type(v), unless class_of is set... */
        const BvClass *cls;
        /* ...and computes it from the value (Bunch, iterators, exceptions). */
        const BvClass *(*class_of)(const BodyValue *v);
        /* Drop what v holds (references, arrays, the FILE) but not v
         * itself, clearing each field so that a second call does nothing.
         * NULL: v holds nothing. */
        void (*release)(BodyValue *v);
        /* bool(v). NULL: always true. */
        bool (*truthy)(const BodyValue *v);
        /* str(v) (as_str) or repr(v) appended to out: 0, or -1 with an
         * exception pending. Every kind has one. */
        int (*repr)(BodyVM *vm, BodyValue *v, StrBuf *out, BvReprCtx *ctx, bool as_str);
        /* a == b, asked of a's kind once numbers are handled: 1, 0, or -1
         * with an exception pending (RecursionError). NULL: identity only. */
        int (*eq)(BodyVM *vm, BodyValue *a, BodyValue *b);
        /* a < b, <=, >, >= of a's kind: 1, 0, -1 with an exception pending,
         * or BV_ORDER_UNSUPPORTED for TypeError "'<' not supported between
         * instances of ...". */
        int (*order)(BodyVM *vm, BvCmpOp op, BodyValue *a, BodyValue *b);
        /* hash(v): 0 with *ret, or -1 with an exception pending
         * (bv__unhashable for mutable kinds). NULL: hashed by identity. */
        int (*hash)(BodyVM *vm, BodyValue *v, uint64_t *ret);
        /* iter(v): a new iterator, or NULL with an exception pending.
         * NULL: "'int' object is not iterable". */
        BodyValue *(*iter)(BodyVM *vm, BodyValue *v);
        /* next(it) of an iterator: bv_next()'s rules. NULL: not an
         * iterator. */
        int (*next)(BodyVM *vm, BodyValue *it, BodyValue **ret);
        /* item in v: 1, 0 or -1. NULL: found by iterating v. */
        int (*contains)(BodyVM *vm, BodyValue *v, BodyValue *item);
        /* len(v): 0 with *ret, or -1 with an exception pending. NULL: "object
         * of type 'int' has no len()". */
        int (*len)(BodyVM *vm, BodyValue *v, size_t *ret);
        /* v[key], v[key] = value, del v[key]: bv_getitem()'s rules. NULL:
         * not subscriptable, no item assignment, no item deletion. */
        BodyValue *(*getitem)(BodyVM *vm, BodyValue *v, BodyValue *key);
        int (*setitem)(BodyVM *vm, BodyValue *v, BodyValue *key, BodyValue *value);
        int (*delitem)(BodyVM *vm, BodyValue *v, BodyValue *key);
        /* callable(*args, **kwargs), kwargs NULL when empty: bv_call()'s
         * rules. NULL: "'int' object is not callable". */
        BvBuiltinFn call;
        /* The methods, tables ending in {NULL, NULL}; the list ends in
         * NULL. Found first by obj.name, bound to obj. */
        const BvBuiltinDef *const *methods;
        /* The other attributes: a new reference, or NULL with an exception
         * pending (AttributeError from bv__no_attribute() when absent). */
        BodyValue *(*getattr)(BodyVM *vm, BodyValue *obj, const char *name);
        /* a OP b, asked of a's kind and then (when the kinds differ) of
         * b's, which tells which side it is on by looking at the kinds: a
         * new reference, NULL with an exception pending, or
         * BV_NOT_IMPLEMENTED when the operation is not the kind's
         * (TypeError "unsupported operand type(s)" when no kind takes
         * it). Numbers are a fast path of bv_binop() and have no slot. */
        BodyValue *(*binop)(BodyVM *vm, BvBinOp op, BodyValue *a, BodyValue *b);
} BvType;

extern const BvType *const bv__types[BV__KIND_MAX];

/* A static type object (the initialiser of a BvClass named var). */
#define BV__CLASS(var, nm, mod, basecls, fn, fl)                                                   \
        BvClass var = {.value = {.kind = BV_CLASS, .immortal = true, .refcnt = 1, .cls = &var},    \
                       .name = nm,                                                                 \
                       .module = mod,                                                              \
                       .base = basecls,                                                            \
                       .call = fn,                                                                 \
                       .flags = fl}

/* The class_of slots of the core's kinds (value-class.c). */
const BvClass *bv__dict_class(const BodyValue *v);
const BvClass *bv__dictview_class(const BodyValue *v);
const BvClass *bv__iter_class(const BodyValue *v);
const BvClass *bv__script_class(const BodyValue *v);
const BvClass *bv__exc_class_of(const BodyValue *v);

/* Python's NotImplemented, for the binop slot: never reaches a Body. */
extern BodyValue bv__not_implemented;
#define BV_NOT_IMPLEMENTED (&bv__not_implemented)

static inline const BvType *bv__type(const BodyValue *v)
{
        return bv__types[v->kind];
}

/* AttributeError "'int' object has no attribute 'x'" (module and type
 * objects in their own words). Returns NULL. */
void *bv__no_attribute(BodyVM *vm, BodyValue *obj, const char *name);
/* The getattr slots of the core's kinds (value-attr.c). */
#define BV__GETATTR_DECL(name) BodyValue *name(BodyVM *vm, BodyValue *obj, const char *attr)
BV__GETATTR_DECL(bv__class_getattr);
BV__GETATTR_DECL(bv__dict_getattr);
BV__GETATTR_DECL(bv__module_getattr);
BV__GETATTR_DECL(bv__script_getattr);
BV__GETATTR_DECL(bv__exc_getattr);
BV__GETATTR_DECL(bv__uuid_getattr);
BV__GETATTR_DECL(bv__function_getattr);
BV__GETATTR_DECL(bv__builtin_getattr);
BV__GETATTR_DECL(bv__method_getattr);
BV__GETATTR_DECL(bv__slice_getattr);
BV__GETATTR_DECL(bv__file_getattr);
BV__GETATTR_DECL(bv__range_getattr);
BV__GETATTR_DECL(bv__int_getattr);
BV__GETATTR_DECL(bv__float_getattr);
/* The release slots of the core's kinds (value.c); dicts and sets release
 * through bv__dict_clear(). */
void bv__seq_release(BodyValue *v);
void bv__slice_release(BodyValue *v);
void bv__dictview_release(BodyValue *v);
void bv__range_release(BodyValue *v);
void bv__iter_release(BodyValue *v);
void bv__method_release(BodyValue *v);
void bv__function_release(BodyValue *v);
void bv__file_release(BodyValue *v);
void bv__exc_release(BodyValue *v);
/* The truthy slots of the core's kinds (value-ops.c, value-range.c). */
bool bv__false(const BodyValue *v);
bool bv__bool_truthy(const BodyValue *v);
bool bv__int_truthy(const BodyValue *v);
bool bv__float_truthy(const BodyValue *v);
bool bv__str_truthy(const BodyValue *v);
bool bv__seq_truthy(const BodyValue *v);
bool bv__dict_truthy(const BodyValue *v); /* dicts and sets */
bool bv__dictview_truthy(const BodyValue *v);
/* The repr slots of the core's kinds (value-repr.c); containers and dict
 * views share one, iterators print as <map object at 0x...>. */
#define BV__REPR_DECL(name)                                                                        \
        int name(BodyVM *vm, BodyValue *v, StrBuf *out, BvReprCtx *ctx, bool as_str)
BV__REPR_DECL(bv__none_repr);
BV__REPR_DECL(bv__bool_repr);
BV__REPR_DECL(bv__int_repr);
BV__REPR_DECL(bv__float_repr);
BV__REPR_DECL(bv__str_repr);
BV__REPR_DECL(bv__container_repr);
BV__REPR_DECL(bv__range_repr);
BV__REPR_DECL(bv__slice_repr);
BV__REPR_DECL(bv__object_repr);
BV__REPR_DECL(bv__builtin_repr);
BV__REPR_DECL(bv__method_repr);
BV__REPR_DECL(bv__function_repr);
BV__REPR_DECL(bv__module_repr);
BV__REPR_DECL(bv__script_repr);
BV__REPR_DECL(bv__file_repr);
BV__REPR_DECL(bv__uuid_repr);
BV__REPR_DECL(bv__exc_repr);
BV__REPR_DECL(bv__class_repr);
/* The eq and order slots of the core's kinds (value-ops.c). */
#define BV_ORDER_UNSUPPORTED 2
int bv__str_eq(BodyVM *vm, BodyValue *a, BodyValue *b);
int bv__seq_eq(BodyVM *vm, BodyValue *a, BodyValue *b);
int bv__dict_eq(BodyVM *vm, BodyValue *a, BodyValue *b);
int bv__range_eq(BodyVM *vm, BodyValue *a, BodyValue *b);
int bv__uuid_eq(BodyVM *vm, BodyValue *a, BodyValue *b);
int bv__method_eq(BodyVM *vm, BodyValue *a, BodyValue *b);
int bv__slice_eq(BodyVM *vm, BodyValue *a, BodyValue *b);
int bv__str_order(BodyVM *vm, BvCmpOp op, BodyValue *a, BodyValue *b);
int bv__seq_order(BodyVM *vm, BvCmpOp op, BodyValue *a, BodyValue *b);
int bv__set_order(BodyVM *vm, BvCmpOp op, BodyValue *a, BodyValue *b);
/* The hash slots of the core's kinds (value-dict.c). */
int bv__none_hash(BodyVM *vm, BodyValue *v, uint64_t *ret);
int bv__int_hash(BodyVM *vm, BodyValue *v, uint64_t *ret);
int bv__float_hash(BodyVM *vm, BodyValue *v, uint64_t *ret);
int bv__str_hash(BodyVM *vm, BodyValue *v, uint64_t *ret);
int bv__tuple_hash(BodyVM *vm, BodyValue *v, uint64_t *ret);
int bv__range_hash(BodyVM *vm, BodyValue *v, uint64_t *ret);
int bv__uuid_hash(BodyVM *vm, BodyValue *v, uint64_t *ret);
int bv__method_hash(BodyVM *vm, BodyValue *v, uint64_t *ret);
int bv__unhashable(BodyVM *vm, BodyValue *v, uint64_t *ret);
/* The iteration slots of the core's kinds (value-iter.c, value-ops.c). */
BodyValue *bv__seq_iter(BodyVM *vm, BodyValue *v);
BodyValue *bv__str_iter(BodyVM *vm, BodyValue *v);
BodyValue *bv__dict_iter(BodyVM *vm, BodyValue *v); /* dicts, sets, dict views */
BodyValue *bv__range_iter(BodyVM *vm, BodyValue *v);
BodyValue *bv__self_iter(BodyVM *vm, BodyValue *v);
BodyValue *bv__file_iter(BodyVM *vm, BodyValue *v);
int bv__iter_next(BodyVM *vm, BodyValue *it, BodyValue **ret);
int bv__str_contains(BodyVM *vm, BodyValue *v, BodyValue *item);
int bv__seq_contains(BodyVM *vm, BodyValue *v, BodyValue *item);
int bv__dict_contains(BodyVM *vm, BodyValue *v, BodyValue *item);
int bv__dictview_contains(BodyVM *vm, BodyValue *v, BodyValue *item);
int bv__range_contains(BodyVM *vm, BodyValue *v, BodyValue *item);
/* The len and item slots of the core's kinds (value-item.c). */
int bv__str_len(BodyVM *vm, BodyValue *v, size_t *ret);
int bv__seq_len(BodyVM *vm, BodyValue *v, size_t *ret);
int bv__dict_len(BodyVM *vm, BodyValue *v, size_t *ret); /* dicts and sets */
int bv__dictview_len(BodyVM *vm, BodyValue *v, size_t *ret);
BodyValue *bv__seq_getitem(BodyVM *vm, BodyValue *v, BodyValue *key);
BodyValue *bv__str_getitem(BodyVM *vm, BodyValue *v, BodyValue *key);
BodyValue *bv__dict_getitem(BodyVM *vm, BodyValue *v, BodyValue *key);
BodyValue *bv__range_getitem(BodyVM *vm, BodyValue *v, BodyValue *key);
int bv__list_setitem(BodyVM *vm, BodyValue *v, BodyValue *key, BodyValue *value);
int bv__dict_setitem(BodyVM *vm, BodyValue *v, BodyValue *key, BodyValue *value);
int bv__list_delitem(BodyVM *vm, BodyValue *v, BodyValue *key);
int bv__dict_delitem(BodyVM *vm, BodyValue *v, BodyValue *key);
/* The call slots of the core's kinds (value-attr.c); scripts call through
 * bv__script_call(). */
BodyValue *bv__builtin_call(BodyVM *vm, BodyValue *callable, BodyValue **args, size_t n,
                            BodyValue *kwargs);
BodyValue *bv__method_call(BodyVM *vm, BodyValue *callable, BodyValue **args, size_t n,
                           BodyValue *kwargs);
BodyValue *bv__class_call(BodyVM *vm, BodyValue *callable, BodyValue **args, size_t n,
                          BodyValue *kwargs);
BodyValue *bv__function_call(BodyVM *vm, BodyValue *callable, BodyValue **args, size_t n,
                             BodyValue *kwargs);
/* The binop slots of the core's kinds (value-binop.c): str, list and tuple
 * (+ and *), sets (| & - ^) and dicts (|). */
BodyValue *bv__seq_binop(BodyVM *vm, BvBinOp op, BodyValue *a, BodyValue *b);
BodyValue *bv__set_binop(BodyVM *vm, BvBinOp op, BodyValue *a, BodyValue *b);
BodyValue *bv__dict_binop(BodyVM *vm, BvBinOp op, BodyValue *a, BodyValue *b);
