/* lib: the Body's library, built on the value core (body/values): the
 * builtin namespace and the type constructors (builtins*.c), the methods of
 * str, list, tuple, dict, set, int and float (methods-*.c), the json and
 * uuid modules (modules.c) and formatting: format(), str.format, % and
 * f-string fields (format*.c). The core never includes this header; what
 * the core needs from the library reaches it through the type table. */
#pragma once

#include "body/values/value-internal.h"

/* ---- what the evaluator resolves ---- */

/* The builtin bound to name (len, str, ValueError, ...): borrowed and
 * immortal, or NULL. */
BodyValue *bv_builtin_lookup(const char *name);
/* import NAME: the module (immortal), or NULL with ModuleNotFoundError
 * "No module named 'x'" or ImportError for a module the interpreter
 * deliberately does not offer (os, subprocess, ...). */
BodyValue *bv_import(BodyVM *vm, const char *name);
/* format(v, spec): the spec mini-language of str.format. */
int bv_format(BodyVM *vm, BodyValue *v, const char *spec, size_t spec_len, StrBuf *out);

/* ---- method tables (methods-*.c) ---- */

extern const BvBuiltinDef bv__str_methods[], bv__str_case_methods[], bv__list_methods[],
        bv__tuple_methods[], bv__dict_methods[], bv__set_methods[], bv__int_methods[],
        bv__float_methods[];

/* ---- builtins that other parts construct ---- */

/* What calling each type object does (builtins.c, builtins-iter.c). */
BodyValue *bv__type_call_str(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                             BodyValue *kwargs);
BodyValue *bv__type_call_int(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                             BodyValue *kwargs);
BodyValue *bv__type_call_float(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                               BodyValue *kwargs);
BodyValue *bv__type_call_bool(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                              BodyValue *kwargs);
BodyValue *bv__type_call_list(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                              BodyValue *kwargs);
BodyValue *bv__type_call_tuple(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                               BodyValue *kwargs);
BodyValue *bv__type_call_dict(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                              BodyValue *kwargs);
BodyValue *bv__type_call_set(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                             BodyValue *kwargs);
BodyValue *bv__type_call_range(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                               BodyValue *kwargs);
BodyValue *bv__type_call_type(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                              BodyValue *kwargs);
BodyValue *bv__type_call_object(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                                BodyValue *kwargs);
BodyValue *bv__type_call_map(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                             BodyValue *kwargs);
BodyValue *bv__type_call_filter(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                                BodyValue *kwargs);
BodyValue *bv__type_call_zip(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                             BodyValue *kwargs);
BodyValue *bv__type_call_enumerate(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                                   BodyValue *kwargs);
BodyValue *bv__type_call_reversed(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                                  BodyValue *kwargs);
BodyValue *bv__type_call_uuid(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                              BodyValue *kwargs);

#define BV__BUILTIN_DECL(name)                                                                     \
        BodyValue *name(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n, BodyValue *kwargs)
BV__BUILTIN_DECL(bv__builtin_all);
BV__BUILTIN_DECL(bv__builtin_any);
BV__BUILTIN_DECL(bv__builtin_max);
BV__BUILTIN_DECL(bv__builtin_min);
BV__BUILTIN_DECL(bv__builtin_sorted);
BV__BUILTIN_DECL(bv__builtin_sum);
BodyValue *bv__uuid_from_hex(BodyVM *vm, const char *hex);

/* ---- formatting (format*.c) ---- */

BodyValue *bv__str_format(BodyVM *vm, BodyValue *fmt, BodyValue **args, size_t n,
                          BodyValue *kwargs);
BodyValue *bv__str_percent(BodyVM *vm, BodyValue *fmt, BodyValue *args);
/* The binop slot of str: fmt % args, and the sequence operators. */
BodyValue *bv__str_binop(BodyVM *vm, BvBinOp op, BodyValue *a, BodyValue *b);
/* asprintf() of d with one of the conversions e E f F g G (and '#' when
 * alt): the C formats behave as Python's for these. */
int bv__print_float(char **buf, char type, bool alt, int prec, double d);
