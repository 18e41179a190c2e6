/* bv: the values of the Body interpreter and the state they share.
 *
 * Every object a Body computes with is a BodyValue: refcounted, tagged with a
 * BvKind, and accounted against the VM's memory budget when it is allocated.
 * This module (the value core, values/) owns the value model and the
 * operations Python defines on it: operators, comparison, hashing,
 * str()/repr(), subscripts, attributes, calls, iteration, open() and the
 * conversion to and from jansson documents. What differs between kinds is
 * a slot of the type table (BvType, value-type.h). The builtins, the
 * methods of str, list, dict, ..., str.format, %-formatting and the json
 * and uuid modules are the library (library/library.h), built on this
 * interface. The evaluator (eval/) owns names, scopes, statements and user
 * functions; it calls in here for every operation on a value.
 *
 * Conventions, once for the whole interface:
 * - A function returning BodyValue * returns a NEW reference, or NULL with an
 *   exception pending in vm->exc. Functions returning int return 0 (or a
 *   documented non-negative value) on success and -1 with an exception
 *   pending. Arguments are BORROWED unless the name says _take/_steal.
 * - vm->fatal < 0 means the agent itself failed (malloc failed outside the
 *   Body's budget, or call_script returned a negative errno). An exception
 *   (SystemError) is pending as well, so the unwinding is the same; body_run
 *   returns vm->fatal instead of a result.
 * - None, True, False, the builtin functions, the type objects, the exception
 *   classes and the modules are immortal statics: refcounting them is a no-op
 *   and they belong to no VM, so they may be compared by pointer.
 * - Resource-limit exceptions (ResourceLimitError for steps, RecursionError
 *   for depth, MemoryError for memory and string size) cannot be caught by any
 *   except clause, bare or not; see bv_exc_match().
 * - Values never outlive their VM. bv_vm_done() frees whatever is still
 *   alive, so reference cycles (l.append(l), a closure stored in its own
 *   scope) are reclaimed at the end of the run rather than leaked. For that to
 *   work, anything the evaluator keeps that holds values (scopes, closure
 *   cells) should itself be a BodyValue (a dict, a list) or be released by a
 *   function payload's destroy callback. */
#pragma once

#include "util/gmp-lazy.h"
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "body/body.h"
#include "util/macro.h"
#include "util/strbuf.h"

typedef struct BodyValue BodyValue;
typedef struct BodyVM BodyVM;
typedef struct BvClass BvClass;

typedef enum BvKind {
        BV_NONE,
        BV_BOOL,
        BV_INT,
        BV_FLOAT,
        BV_STR,
        BV_LIST,
        BV_TUPLE,
        BV_DICT,
        BV_SET,
        BV_RANGE,
        BV_SLICE,
        BV_DICTVIEW,  /* d.keys() d.values() d.items() */
        BV_ITER,      /* every iterator object, see BvIterKind */
        BV_BUILTIN,   /* builtin function, module function */
        BV_METHOD,    /* builtin method bound to its object: [].append */
        BV_FUNCTION,  /* def / lambda: payload owned by the evaluator */
        BV_MODULE,    /* import json */
        BV_SCRIPT,    /* a plan script: name(...) and name.attr(...) */
        BV_FILE,      /* open() */
        BV_UUID,      /* uuid.uuid4() */
        BV_EXCEPTION, /* an exception instance */
        BV_CLASS,     /* a type object: str, int, ValueError, ... */
        BV__KIND_MAX
} BvKind;

typedef enum BvIterKind {
        BV_ITER_SEQ,      /* list or tuple, forward */
        BV_ITER_REVERSED, /* list or tuple, backward */
        BV_ITER_STR,
        BV_ITER_DICT, /* keys, values or items of a dict; members of a set */
        BV_ITER_RANGE,
        BV_ITER_MAP,
        BV_ITER_FILTER,
        BV_ITER_ZIP,
        BV_ITER_ENUMERATE,
} BvIterKind;

typedef enum BvDictView {
        BV_VIEW_KEYS,
        BV_VIEW_VALUES,
        BV_VIEW_ITEMS,
} BvDictView;

/* Builtin functions and methods: self is the bound object for methods and
 * NULL otherwise; args are borrowed; kwargs is a dict of str keys or NULL. */
typedef BodyValue *(*BvBuiltinFn)(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                                  BodyValue *kwargs);

typedef struct BvBuiltinDef {
        const char *name;
        BvBuiltinFn fn;
} BvBuiltinDef;

/* A module: immortal, with a table of members ending in {NULL, NULL}. */
typedef struct BvModuleMember {
        const char *name;
        BodyValue *value; /* immortal: a builtin, a class, a constant */
} BvModuleMember;

typedef struct BvModuleDef BvModuleDef;

typedef struct BvDictEntry {
        BodyValue *key; /* NULL: deleted slot */
        BodyValue *value;
        uint64_t hash;
} BvDictEntry;

/* Insertion-ordered hash map: entries[] in insertion order (with holes for
 * deleted keys), and an open-addressing index of entry positions. Sets use
 * the same structure with value == NULL. */
typedef struct BvDict {
        BvDictEntry *entries;
        size_t n_entries; /* used slots of entries[], holes included */
        size_t cap_entries;
        size_t len;       /* live keys */
        uint32_t *index;  /* 0 = empty, UINT32_MAX = deleted, else entry position + 1 */
        size_t n_index;   /* power of two, or 0 */
        uint64_t version; /* bumped on insertion and deletion, for iterators */
        bool bunch;       /* attribute access: args, script results */
} BvDict;

typedef struct BvIter {
        BvIterKind kind;
        BvDictView view; /* BV_ITER_DICT */
        BodyValue *src;  /* the iterated object, or the inner iterator (filter, enumerate) */
        BodyValue *fn;   /* map, filter (None for filter(None, ...)); for a range
                          * beyond int64 (value-range.c), the next value */
        BodyValue **its; /* map, zip: one iterator per argument */
        size_t n_its;
        size_t pos;       /* index, byte offset, or entry position */
        int64_t cur;      /* range: next value; enumerate: next count */
        size_t remaining; /* range: values left */
        uint64_t version; /* dict: version when the iteration started */
        size_t dict_len;  /* dict: size when the iteration started */
} BvIter;

struct BodyValue {
        BvKind kind;
        bool immortal;
        bool big; /* BV_INT: the value is in `z`, not `i` (see value-int.c) */
        size_t refcnt;
        BodyVM *vm;                       /* NULL for immortal values */
        BodyValue *live_prev, *live_next; /* the VM's list of live values */
        size_t mem;                       /* bytes accounted to this value itself */
        union {
                bool b;    /* BV_BOOL */
                int64_t i; /* BV_INT that fits in 64 bits */
                /* BV_INT outside int64 (never inside it: every operation
                 * normalises), read-only; the limbs follow the struct in
                 * the value's own allocation. */
                struct {
                        mp_limb_t *limbs;
                        mp_size_t size; /* negative for negative numbers */
                } z;
                double f; /* BV_FLOAT */
                struct {
                        char *data;   /* valid UTF-8, NUL-terminated */
                        size_t len;   /* bytes */
                        size_t cplen; /* code points */
                } str;
                /* BV_LIST and BV_TUPLE. Items are never NULL in values a Body
                 * can reach; the evaluator's private lists (frames) may hold
                 * NULL slots, which only release and the sweep look at. */
                struct {
                        BodyValue **items;
                        size_t len;
                        size_t cap;
                } list;
                BvDict dict; /* BV_DICT and BV_SET */
                /* A range whose bounds and length fit in int64 keeps them in
                 * start..len with z[0] NULL; otherwise z holds start, stop,
                 * step and len as ints (value-range.c). */
                struct {
                        int64_t start, stop, step;
                        int64_t len;
                        BodyValue *z[4];
                } range;
                struct {
                        BodyValue *start, *stop, *step; /* None or int */
                } slice;
                struct {
                        BodyValue *dict;
                        BvDictView view;
                } dictview;
                BvIter iter;
                const BvBuiltinDef *builtin;
                struct {
                        const BvBuiltinDef *def;
                        BodyValue *self;
                } method;
                struct {
                        char *qualname; /* "f", "<lambda>", "outer.<locals>.inner" */
                        void *payload;
                        void (*destroy)(void *payload);
                } function;
                const BvModuleDef *module;
                struct {
                        char *name;
                        char *function; /* NULL for the ScriptRunner itself */
                } script;
                struct {
                        FILE *fp; /* NULL once closed */
                        char *name;
                        char *mode;
                        bool readable, writable;
                        bool universal;  /* newline=None: "\r\n" and "\r" read as "\n" */
                        char *mem;       /* owned (bv_mem_alloc): what fp reads, or NULL */
                        size_t mem_size; /* its size, for bv_mem_free */
                } file;
                uint8_t uuid[16];
                struct {
                        const BvClass *cls;
                        BodyValue *args;         /* tuple */
                        int code;                /* result ErrorCode when uncaught: 1, or 100+ */
                        json_t *additional_info; /* owned, may be NULL */
                        BodyValue *filename;     /* OSError: the path, or NULL */
                } exc;
                const BvClass *cls; /* BV_CLASS */
        };
};

/* A type object. `base` is the parent class (bool: int, Bunch: dict,
 * KeyError: LookupError, ...). `call` is what calling the type does: str(x),
 * ValueError('msg'); it receives the class value as self. */
enum {
        BV_CLASS_EXCEPTION = 1u << 0,
        BV_CLASS_UNCATCHABLE = 1u << 1, /* resource limits: no except clause matches */
};

struct BvClass {
        BodyValue value; /* the type object itself (kind BV_CLASS, immortal) */
        const char *name;
        const char *module;  /* for repr: <class 'uuid.UUID'>; NULL for builtins */
        const BvClass *base; /* NULL: object */
        BvBuiltinFn call;    /* NULL: the type cannot be called */
        unsigned flags;
};

struct BvModuleDef {
        BodyValue value; /* the module object (kind BV_MODULE, immortal) */
        const char *name;
        const BvModuleMember *members;
};

/* The exception classes a Body can name, raise and catch. */
typedef enum BvExc {
        BV_EXC_BASE_EXCEPTION,
        BV_EXC_EXCEPTION,
        BV_EXC_ARITHMETIC_ERROR,
        BV_EXC_ZERO_DIVISION_ERROR,
        BV_EXC_OVERFLOW_ERROR,
        BV_EXC_LOOKUP_ERROR,
        BV_EXC_KEY_ERROR,
        BV_EXC_INDEX_ERROR,
        BV_EXC_VALUE_ERROR,
        BV_EXC_UNICODE_ERROR,
        BV_EXC_UNICODE_DECODE_ERROR,
        BV_EXC_JSON_DECODE_ERROR, /* json.JSONDecodeError, a ValueError */
        BV_EXC_TYPE_ERROR,
        BV_EXC_ATTRIBUTE_ERROR,
        BV_EXC_NAME_ERROR,
        BV_EXC_UNBOUND_LOCAL_ERROR,
        BV_EXC_OS_ERROR, /* also named IOError and EnvironmentError */
        BV_EXC_FILE_NOT_FOUND_ERROR,
        BV_EXC_FILE_EXISTS_ERROR,
        BV_EXC_PERMISSION_ERROR,
        BV_EXC_IS_A_DIRECTORY_ERROR,
        BV_EXC_NOT_A_DIRECTORY_ERROR,
        BV_EXC_RUNTIME_ERROR,
        BV_EXC_NOT_IMPLEMENTED_ERROR,
        BV_EXC_RECURSION_ERROR, /* max_depth: uncatchable */
        BV_EXC_IMPORT_ERROR,
        BV_EXC_MODULE_NOT_FOUND_ERROR,
        BV_EXC_STOP_ITERATION,
        BV_EXC_ASSERTION_ERROR,
        BV_EXC_SYNTAX_ERROR,
        BV_EXC_INDENTATION_ERROR,
        BV_EXC_SYSTEM_ERROR,         /* the agent failed (vm->fatal): uncatchable */
        BV_EXC_MEMORY_ERROR,         /* max_memory, max_string: uncatchable */
        BV_EXC_RESOURCE_LIMIT_ERROR, /* max_steps: uncatchable */
        BV_EXC_AGENT_EXCEPTION,
        BV_EXC_CUSTOM_EXCEPTION, /* a script failure (BodyCallError), as the reference */
        BV_EXC__MAX
} BvExc;

typedef enum BvBinOp {
        BV_OP_ADD,
        BV_OP_SUB,
        BV_OP_MUL,
        BV_OP_TRUEDIV,
        BV_OP_FLOORDIV,
        BV_OP_MOD,
        BV_OP_POW,
        BV_OP_LSHIFT,
        BV_OP_RSHIFT,
        BV_OP_AND,
        BV_OP_OR,
        BV_OP_XOR,
} BvBinOp;

typedef enum BvUnaryOp {
        BV_OP_NEG,
        BV_OP_POS,
        BV_OP_INVERT,
        BV_OP_NOT,
} BvUnaryOp;

typedef enum BvCmpOp {
        BV_CMP_EQ,
        BV_CMP_NE,
        BV_CMP_LT,
        BV_CMP_LE,
        BV_CMP_GT,
        BV_CMP_GE,
        BV_CMP_IN,
        BV_CMP_NOT_IN,
        BV_CMP_IS,
        BV_CMP_IS_NOT,
} BvCmpOp;

/* open() refuses to hold more files than this open at once, so that a Body
 * cannot use up the agent's descriptors. */
#define BV_MAX_OPEN_FILES 64

typedef BodyValue *(*BvCallHook)(BodyVM *vm, BodyValue *callable, BodyValue **args, size_t n,
                                 BodyValue *kwargs);

struct BodyVM {
        BodyLimits limits;    /* a copy; open_root is borrowed */
        const BodyHost *host; /* may be NULL: no scripts can run, cwd is the process's */
        uint64_t steps;
        unsigned depth;
        size_t mem_live; /* bytes of live values */
        size_t mem_peak;

        /* The pending exception: an instance (kind BV_EXCEPTION), owned, or
         * NULL. exc_line is the Body line (1-based, wrapper line excluded as
         * BodyOutcome.line counts) where it was raised, 0 until the evaluator
         * fills it in. */
        BodyValue *exc;
        int exc_line;
        int fatal; /* 0, or a negative errno: abort the evaluation */

        char **scripts; /* owned copy of the plan's script names */
        size_t n_scripts;

        /* The evaluator's private state and its hook for calling BV_FUNCTION
         * values, installed before any Body code runs. bv_call() dispatches
         * every other kind itself. */
        void *eval;
        BvCallHook call;

        /* Private to the value module. */
        BodyValue *live;       /* head of the list of live values */
        BodyValue *free_queue; /* values waiting to be freed, so freeing never recurses */
        bool freeing;
        uint64_t hash_key[2]; /* SipHash key, random per VM: no predictable collisions */
        unsigned open_files;  /* files open() has open now, capped by BV_MAX_OPEN_FILES */
};

/* ---- the VM ------------------------------------------------------------ */

/* Set up vm (which the caller allocates). limits and host are copied or
 * borrowed as noted above; scripts are copied. Returns 0 or -ENOMEM. */
int bv_vm_init(BodyVM *vm, const BodyLimits *limits, const BodyHost *host,
               const char *const *scripts, size_t n_scripts);
/* Free every value still alive (cycles included) and the VM's own memory.
 * Values must not be used, referenced or released after this. */
void bv_vm_done(BodyVM *vm);

/* One evaluation step. Returns 0, or -1 with ResourceLimitError pending
 * ("Body exceeded the evaluation step limit (N)", or "Body evaluation was
 * cancelled" once another thread has set *limits.cancel). Allocations
 * charge a step per KiB as well, so copying large strings in a loop cannot
 * outrun the limit. Builtins that loop over
 * data (sum, sorted, list(range(...)), join, ...) charge one step per item,
 * so no builtin can spin without bound. */
int bv_step_slow(BodyVM *vm);
static inline int bv_step(BodyVM *vm)
{
        /* The cancel flag (BodyLimits.cancel) is polled every 1024 steps, so
         * the common path stays one compare. */
        if (++vm->steps <= vm->limits.max_steps && ((vm->steps & 1023) != 0 || !vm->limits.cancel))
                return 0;
        return bv_step_slow(vm);
}

/* Nesting of calls and of recursion over values (repr, ==, copy, json).
 * enter returns 0 or -1 with RecursionError pending ("maximum recursion
 * depth exceeded"); leave must pair with each successful enter. */
int bv_depth_enter(BodyVM *vm);
static inline void bv_depth_leave(BodyVM *vm)
{
        vm->depth--;
}

/* Accounted memory, for values and for evaluator structures alike. alloc
 * and realloc return NULL with MemoryError pending past max_memory (or with
 * vm->fatal = -ENOMEM when malloc fails). free must be given the size that
 * was allocated. */
void *bv_mem_alloc(BodyVM *vm, size_t size);
void *bv_mem_realloc(BodyVM *vm, void *p, size_t old_size, size_t new_size);
void bv_mem_free(BodyVM *vm, void *p, size_t size);

/* ---- exceptions -------------------------------------------------------- */

const BvClass *bv_exc_class(BvExc e);
/* Replace any pending exception with a new instance of class e whose single
 * argument is the formatted message. Always returns NULL, so that
 * `return bv_raise(vm, ...)` works in every function returning a pointer. */
void *bv_raise(BodyVM *vm, BvExc e, const char *fmt, ...) _printf_(3, 4);
void *bv_raisev(BodyVM *vm, BvExc e, const char *fmt, va_list ap) _printf_(3, 0);
/* Raise class e with one value argument: KeyError(key) (str: repr(key)). */
void *bv_raise_value(BodyVM *vm, BvExc e, BodyValue *arg);
/* The Body's `raise X`: X is an exception instance, or a class to call with
 * no arguments; anything else raises TypeError "exceptions must derive from
 * BaseException". Takes no reference from x. */
void *bv_raise_object(BodyVM *vm, BodyValue *x);
/* Record that the agent itself failed: vm->fatal = err (negative errno) and a
 * SystemError is pending. Returns NULL. */
void *bv_raise_fatal(BodyVM *vm, int err);

/* Take the pending exception (the caller owns it); NULL when none. */
BodyValue *bv_exc_take(BodyVM *vm);
/* Make exc (borrowed; a reference is taken) the pending exception again,
 * for a re-raise. */
void bv_exc_restore(BodyVM *vm, BodyValue *exc, int line);
void bv_exc_clear(BodyVM *vm);
/* Does the `except SPEC` clause catch exc? spec is a class or a tuple of
 * classes. Returns 1 or 0, or -1 with TypeError pending when spec is not an
 * exception class ("catching classes that do not inherit from BaseException
 * is not allowed"). Resource-limit and fatal exceptions never match; a bare
 * `except:` should ask bv_exc_catchable(). */
int bv_exc_match(BodyVM *vm, const BodyValue *exc, BodyValue *spec);
bool bv_exc_catchable(const BodyValue *exc);
bool bv_class_is_subclass(const BvClass *c, const BvClass *base);
/* Fill the error fields of *o (error_code, exc_type, message = str(exc),
 * additional_info, line) from the pending exception, which stays pending.
 * Returns 0 or -ENOMEM. */
int bv_exc_to_outcome(BodyVM *vm, BodyOutcome *o);

/* ---- construction and lifetime ----------------------------------------- */

static inline BodyValue *bv_ref(BodyValue *v)
{
        if (v && !v->immortal)
                v->refcnt++;
        return v;
}
void bv_free_value(BodyValue *v); /* private: use bv_unref() */
static inline void bv_unref(BodyValue *v)
{
        if (v && !v->immortal && --v->refcnt == 0)
                bv_free_value(v);
}
static inline void bv_unrefp(BodyValue **v)
{
        bv_unref(*v);
}
#define _cleanup_bv_ _cleanup_(bv_unrefp)

BodyValue *bv_none(void);
BodyValue *bv_bool(bool b); /* True or False, immortal */
BodyValue *bv_int_new(BodyVM *vm, int64_t i);
BodyValue *bv_float_new(BodyVM *vm, double f);
/* int(s, base) for any size (base 0: the literal's prefix decides): 0 with
 * *ret, 1 when the text is not an int literal (no exception), -1 with an
 * exception pending (CPython's 4300-digit limit, memory). */
int bv_int_parse(BodyVM *vm, const char *s, size_t len, int base, BodyValue **ret);
/* s[0..len) must be valid UTF-8 (the source, JSON text and files read are
 * checked before they become strings). Fails with MemoryError past
 * max_string. */
BodyValue *bv_str_new(BodyVM *vm, const char *s, size_t len);
BodyValue *bv_str_new_cstr(BodyVM *vm, const char *s);
/* The same, for text that may not be valid UTF-8: UnicodeDecodeError. */
BodyValue *bv_str_new_checked(BodyVM *vm, const char *s, size_t len);
/* A string from a StrBuf (which is reset). */
BodyValue *bv_str_from_buf(BodyVM *vm, StrBuf *b);
BodyValue *bv_list_new(BodyVM *vm, size_t capacity);
int bv_list_append(BodyVM *vm, BodyValue *list, BodyValue *item);
int bv_list_append_take(BodyVM *vm, BodyValue *list,
                        BodyValue *item); /* steals item, even on failure */
/* A tuple of n items (borrowed; each gets a reference). items may be NULL
 * for n == 0. */
BodyValue *bv_tuple_new(BodyVM *vm, BodyValue *const *items, size_t n);
BodyValue *bv_tuple_pair(BodyVM *vm, BodyValue *a, BodyValue *b);
BodyValue *bv_dict_new(BodyVM *vm);
BodyValue *bv_set_new(BodyVM *vm);
/* A slice object for x[a:b:c]; absent parts are NULL (meaning None). */
BodyValue *bv_slice_new(BodyVM *vm, BodyValue *start, BodyValue *stop, BodyValue *step);
/* A user function; the VM calls destroy(payload) when the value dies. On
 * failure destroy(payload) has already been called. */
BodyValue *bv_function_new(BodyVM *vm, const char *qualname, void *payload,
                           void (*destroy)(void *payload));
/* The callable bound to a script name (ScriptRunner). */
BodyValue *bv_script_new(BodyVM *vm, const char *name);
/* args: Bunch(Parameters or {}). parameters may be NULL. */
BodyValue *bv_args_new(BodyVM *vm, const json_t *parameters);

/* ---- dicts and sets ------------------------------------------------------ */

/* Look key up: 1 and a BORROWED value in *ret, 0 when absent, -1 with
 * TypeError pending when key is unhashable. */
int bv_dict_lookup(BodyVM *vm, BodyValue *dict, BodyValue *key, BodyValue **ret);
BodyValue *bv_dict_get_str(BodyValue *dict, const char *key); /* borrowed or NULL */
int bv_dict_set(BodyVM *vm, BodyValue *dict, BodyValue *key, BodyValue *value);
int bv_dict_set_str(BodyVM *vm, BodyValue *dict, const char *key, BodyValue *value);
/* Returns 1 when removed, 0 when absent, -1 on error. */
int bv_dict_delete(BodyVM *vm, BodyValue *dict, BodyValue *key);
/* Walk a dict or set in insertion order: start with *pos = 0; returns false
 * at the end. key and value are borrowed (value NULL for sets). */
bool bv_dict_next(BodyValue *dict, size_t *pos, BodyValue **ret_key, BodyValue **ret_value);
int bv_set_add(BodyVM *vm, BodyValue *set, BodyValue *item);

/* ---- the operations Python defines --------------------------------------- */

/* type(v).__name__: 'NoneType', 'int', 'Bunch', 'builtin_function_or_method'. */
const char *bv_type_name(const BodyValue *v);
/* The type object of v (borrowed, immortal). */
BodyValue *bv_type_of(const BodyValue *v);
bool bv_truthy(const BodyValue *v);
/* str(v) and repr(v) appended to out. 0, or -1 with an exception pending
 * (RecursionError for deep nesting, MemoryError past max_string). */
int bv_str(BodyVM *vm, BodyValue *v, StrBuf *out);
int bv_repr(BodyVM *vm, BodyValue *v, StrBuf *out);
BodyValue *bv_to_str(BodyVM *vm, BodyValue *v);  /* str(v) as a value */
BodyValue *bv_to_repr(BodyVM *vm, BodyValue *v); /* repr(v) as a value */

/* Returns 1 (equal) or 0, or -1 on error (only RecursionError). */
int bv_eq(BodyVM *vm, BodyValue *a, BodyValue *b);
/* Comparison and membership operators: 1 true, 0 false, -1 with TypeError
 * ("'<' not supported between instances of 'str' and 'int'"). */
int bv_compare(BodyVM *vm, BvCmpOp op, BodyValue *a, BodyValue *b);
/* Returns 0 with *ret filled, or -1 with TypeError "unhashable type: 'list'". */
int bv_hash(BodyVM *vm, BodyValue *v, uint64_t *ret);

BodyValue *bv_binop(BodyVM *vm, BvBinOp op, BodyValue *a, BodyValue *b);
/* a OP= b: lists (+=, *=), sets and dicts (|=) change in place and return a
 * new reference to a; everything else is bv_binop(). */
BodyValue *bv_binop_inplace(BodyVM *vm, BvBinOp op, BodyValue *a, BodyValue *b);
BodyValue *bv_unop(BodyVM *vm, BvUnaryOp op, BodyValue *a);

/* len(v): 0 with *ret, or -1 with TypeError "object of type 'int' has no len()". */
int bv_len(BodyVM *vm, BodyValue *v, size_t *ret);
BodyValue *bv_getitem(BodyVM *vm, BodyValue *obj, BodyValue *key);
int bv_setitem(BodyVM *vm, BodyValue *obj, BodyValue *key, BodyValue *value);
int bv_delitem(BodyVM *vm, BodyValue *obj, BodyValue *key);
/* obj.name: methods (bound), module members, Bunch keys (KeyError as the
 * reference), script functions, UUID.hex, exception args, __name__. A
 * `with` statement finds its context manager protocol here: files have
 * __enter__ (returns the file) and __exit__(type, value, tb) (closes it and
 * returns None, so the exception goes on). */
BodyValue *bv_getattr(BodyVM *vm, BodyValue *obj, const char *name);
int bv_setattr(BodyVM *vm, BodyValue *obj, const char *name, BodyValue *value);
int bv_delattr(BodyVM *vm, BodyValue *obj, const char *name);
/* hasattr() semantics: 1, 0, or -1 for errors other than AttributeError
 * (a Bunch lookup raises KeyError, which hasattr lets through, as Python). */
int bv_hasattr(BodyVM *vm, BodyValue *obj, const char *name);

/* Call anything callable. BV_FUNCTION goes to vm->call; builtins, methods,
 * types, exception classes and scripts are handled here. kwargs is a dict of
 * str keys or NULL. "'int' object is not callable" otherwise. */
BodyValue *bv_call(BodyVM *vm, BodyValue *callable, BodyValue **args, size_t n, BodyValue *kwargs);

/* iter(v): TypeError "'int' object is not iterable". */
BodyValue *bv_iter(BodyVM *vm, BodyValue *v);
/* Advance an iterator: 1 with a new reference in *ret, 0 when exhausted,
 * -1 with an exception pending. */
int bv_next(BodyVM *vm, BodyValue *iter, BodyValue **ret);
/* a, b = v: exactly n items into out[] (new references), or ValueError
 * "not enough values to unpack (expected 2, got 1)" / "too many values to
 * unpack (expected 2)". */
int bv_unpack(BodyVM *vm, BodyValue *v, size_t n, BodyValue **out);
/* tuple(v) / list(v) for any iterable (f(*v), list(...)). */
BodyValue *bv_tuple_from_iterable(BodyVM *vm, BodyValue *v);
BodyValue *bv_list_from_iterable(BodyVM *vm, BodyValue *v);

/* ---- JSON ------------------------------------------------------------------ */

/* A value from a JSON document: objects become dicts (Bunch when bunch is
 * true, top level only), arrays lists. */
BodyValue *bv_from_json(BodyVM *vm, const json_t *j, bool bunch);
/* The json.dumps conversion of v: tuples become arrays, int/float/bool/None
 * keys become strings; TypeError "Object of type set is not JSON
 * serializable" and "keys must be str, int, float, bool or None, not tuple".
 * Non-finite floats raise ValueError "Out of range float values are not JSON
 * compliant" (jansson cannot hold them). 0 with *ret, or -1. */
int bv_to_json(BodyVM *vm, BodyValue *v, json_t **ret);
