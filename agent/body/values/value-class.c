/* Exceptions and type(v): the exception classes (the hierarchy that
 * `except` matching walks), the class_of slots, raising, matching and
 * turning the pending exception into a BodyOutcome. The other type objects
 * are in the type table (agent/body/types.c). */
#include "body/values/value-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static BodyValue *exc_call(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                           BodyValue *kwargs);

#define EXC(var, nm, mod, basecls, fl)                                                             \
        BV__CLASS(var, nm, mod, basecls, exc_call, BV_CLASS_EXCEPTION | (fl))

EXC(bv__exc_base, "BaseException", NULL, NULL, 0);
EXC(bv__exc_exception, "Exception", NULL, &bv__exc_base, 0);
EXC(bv__exc_arith, "ArithmeticError", NULL, &bv__exc_exception, 0);
EXC(bv__exc_zerodiv, "ZeroDivisionError", NULL, &bv__exc_arith, 0);
EXC(bv__exc_overflow, "OverflowError", NULL, &bv__exc_arith, 0);
EXC(bv__exc_lookup, "LookupError", NULL, &bv__exc_exception, 0);
EXC(bv__exc_key, "KeyError", NULL, &bv__exc_lookup, 0);
EXC(bv__exc_index, "IndexError", NULL, &bv__exc_lookup, 0);
EXC(bv__exc_value, "ValueError", NULL, &bv__exc_exception, 0);
EXC(bv__exc_unicode, "UnicodeError", NULL, &bv__exc_value, 0);
EXC(bv__exc_unicode_decode, "UnicodeDecodeError", NULL, &bv__exc_unicode, 0);
EXC(bv__exc_json_decode, "JSONDecodeError", "json.decoder", &bv__exc_value, 0);
EXC(bv__exc_type, "TypeError", NULL, &bv__exc_exception, 0);
EXC(bv__exc_attribute, "AttributeError", NULL, &bv__exc_exception, 0);
EXC(bv__exc_name, "NameError", NULL, &bv__exc_exception, 0);
EXC(bv__exc_unbound, "UnboundLocalError", NULL, &bv__exc_name, 0);
EXC(bv__exc_os, "OSError", NULL, &bv__exc_exception, 0);
EXC(bv__exc_notfound, "FileNotFoundError", NULL, &bv__exc_os, 0);
EXC(bv__exc_exists, "FileExistsError", NULL, &bv__exc_os, 0);
EXC(bv__exc_permission, "PermissionError", NULL, &bv__exc_os, 0);
EXC(bv__exc_isdir, "IsADirectoryError", NULL, &bv__exc_os, 0);
EXC(bv__exc_notdir, "NotADirectoryError", NULL, &bv__exc_os, 0);
EXC(bv__exc_runtime, "RuntimeError", NULL, &bv__exc_exception, 0);
EXC(bv__exc_notimpl, "NotImplementedError", NULL, &bv__exc_runtime, 0);
EXC(bv__exc_recursion, "RecursionError", NULL, &bv__exc_runtime, BV_CLASS_UNCATCHABLE);
EXC(bv__exc_import, "ImportError", NULL, &bv__exc_exception, 0);
EXC(bv__exc_modnotfound, "ModuleNotFoundError", NULL, &bv__exc_import, 0);
EXC(bv__exc_stop, "StopIteration", NULL, &bv__exc_exception, 0);
EXC(bv__exc_assertion, "AssertionError", NULL, &bv__exc_exception, 0);
EXC(bv__exc_syntax, "SyntaxError", NULL, &bv__exc_exception, 0);
EXC(bv__exc_indentation, "IndentationError", NULL, &bv__exc_syntax, 0);
EXC(bv__exc_system, "SystemError", NULL, &bv__exc_exception, BV_CLASS_UNCATCHABLE);
EXC(bv__exc_memory, "MemoryError", NULL, &bv__exc_exception, BV_CLASS_UNCATCHABLE);
EXC(bv__exc_limit, "ResourceLimitError", NULL, &bv__exc_exception, BV_CLASS_UNCATCHABLE);
EXC(bv__exc_agent, "AgentException", "muranoagent.exceptions", &bv__exc_exception, 0);
EXC(bv__exc_custom, "CustomException", "muranoagent.exceptions", &bv__exc_agent, 0);

static const BvClass *const exc_classes[BV_EXC__MAX] = {
        [BV_EXC_BASE_EXCEPTION] = &bv__exc_base,
        [BV_EXC_EXCEPTION] = &bv__exc_exception,
        [BV_EXC_ARITHMETIC_ERROR] = &bv__exc_arith,
        [BV_EXC_ZERO_DIVISION_ERROR] = &bv__exc_zerodiv,
        [BV_EXC_OVERFLOW_ERROR] = &bv__exc_overflow,
        [BV_EXC_LOOKUP_ERROR] = &bv__exc_lookup,
        [BV_EXC_KEY_ERROR] = &bv__exc_key,
        [BV_EXC_INDEX_ERROR] = &bv__exc_index,
        [BV_EXC_VALUE_ERROR] = &bv__exc_value,
        [BV_EXC_UNICODE_ERROR] = &bv__exc_unicode,
        [BV_EXC_UNICODE_DECODE_ERROR] = &bv__exc_unicode_decode,
        [BV_EXC_JSON_DECODE_ERROR] = &bv__exc_json_decode,
        [BV_EXC_TYPE_ERROR] = &bv__exc_type,
        [BV_EXC_ATTRIBUTE_ERROR] = &bv__exc_attribute,
        [BV_EXC_NAME_ERROR] = &bv__exc_name,
        [BV_EXC_UNBOUND_LOCAL_ERROR] = &bv__exc_unbound,
        [BV_EXC_OS_ERROR] = &bv__exc_os,
        [BV_EXC_FILE_NOT_FOUND_ERROR] = &bv__exc_notfound,
        [BV_EXC_FILE_EXISTS_ERROR] = &bv__exc_exists,
        [BV_EXC_PERMISSION_ERROR] = &bv__exc_permission,
        [BV_EXC_IS_A_DIRECTORY_ERROR] = &bv__exc_isdir,
        [BV_EXC_NOT_A_DIRECTORY_ERROR] = &bv__exc_notdir,
        [BV_EXC_RUNTIME_ERROR] = &bv__exc_runtime,
        [BV_EXC_NOT_IMPLEMENTED_ERROR] = &bv__exc_notimpl,
        [BV_EXC_RECURSION_ERROR] = &bv__exc_recursion,
        [BV_EXC_IMPORT_ERROR] = &bv__exc_import,
        [BV_EXC_MODULE_NOT_FOUND_ERROR] = &bv__exc_modnotfound,
        [BV_EXC_STOP_ITERATION] = &bv__exc_stop,
        [BV_EXC_ASSERTION_ERROR] = &bv__exc_assertion,
        [BV_EXC_SYNTAX_ERROR] = &bv__exc_syntax,
        [BV_EXC_INDENTATION_ERROR] = &bv__exc_indentation,
        [BV_EXC_SYSTEM_ERROR] = &bv__exc_system,
        [BV_EXC_MEMORY_ERROR] = &bv__exc_memory,
        [BV_EXC_RESOURCE_LIMIT_ERROR] = &bv__exc_limit,
        [BV_EXC_AGENT_EXCEPTION] = &bv__exc_agent,
        [BV_EXC_CUSTOM_EXCEPTION] = &bv__exc_custom,
};

/* Raised when even the exception cannot be allocated: immortal, so that
 * there is always something to unwind with. */
static BodyValue empty_tuple = {.kind = BV_TUPLE, .immortal = true, .refcnt = 1};
static BodyValue fatal_exc = {.kind = BV_EXCEPTION,
                              .immortal = true,
                              .refcnt = 1,
                              .exc = {.cls = &bv__exc_system, .args = &empty_tuple, .code = 1}};

const BvClass *bv_exc_class(BvExc e)
{
        return exc_classes[e];
}

bool bv_class_is_subclass(const BvClass *c, const BvClass *base)
{
        if (base == &bv_class_object)
                return true;
        for (; c; c = c->base)
                if (c == base)
                        return true;
        return false;
}

/* ---- the class_of slots of the core's kinds ---- */

const BvClass *bv__dict_class(const BodyValue *v)
{
        return v->dict.bunch ? &bv_class_bunch : &bv_class_dict;
}

const BvClass *bv__dictview_class(const BodyValue *v)
{
        return v->dictview.view == BV_VIEW_KEYS     ? &bv_class_dict_keys
               : v->dictview.view == BV_VIEW_VALUES ? &bv_class_dict_values
                                                    : &bv_class_dict_items;
}

const BvClass *bv__iter_class(const BodyValue *v)
{
        switch (v->iter.kind) {
        case BV_ITER_SEQ:
                return v->iter.src->kind == BV_LIST ? &bv_class_list_iterator
                                                    : &bv_class_tuple_iterator;
        case BV_ITER_REVERSED:
                return v->iter.src->kind == BV_LIST ? &bv_class_list_reverseiterator
                                                    : &bv_class_reversed;
        case BV_ITER_STR:
                return bv__str_is_ascii(v->iter.src) ? &bv_class_str_ascii_iterator
                                                     : &bv_class_str_iterator;
        case BV_ITER_DICT:
                return v->iter.src->kind == BV_SET      ? &bv_class_set_iterator
                       : v->iter.view == BV_VIEW_KEYS   ? &bv_class_dict_keyiterator
                       : v->iter.view == BV_VIEW_VALUES ? &bv_class_dict_valueiterator
                                                        : &bv_class_dict_itemiterator;
        case BV_ITER_RANGE:
                return v->iter.fn ? &bv_class_longrange_iterator : &bv_class_range_iterator;
        case BV_ITER_MAP:
                return &bv_class_map;
        case BV_ITER_FILTER:
                return &bv_class_filter;
        case BV_ITER_ZIP:
                return &bv_class_zip;
        default:
                return &bv_class_enumerate;
        }
}

const BvClass *bv__script_class(const BodyValue *v)
{
        return v->script.function ? &bv_class_function_runner : &bv_class_script;
}

const BvClass *bv__exc_class_of(const BodyValue *v)
{
        return v->exc.cls;
}

BodyValue *bv_type_of(const BodyValue *v)
{
        const BvType *t = bv__type(v);
        const BvClass *c = t->class_of ? t->class_of(v) : t->cls;

        return (BodyValue *)&c->value;
}

const char *bv_type_name(const BodyValue *v)
{
        return bv_type_of(v)->cls->name;
}

/* ---- exception instances ---- */

BodyValue *bv__exc_new(BodyVM *vm, const BvClass *c, BodyValue *args)
{
        BodyValue *e;

        if (!args)
                return NULL;
        e = bv__alloc(vm, BV_EXCEPTION, 0);
        if (!e) {
                bv_unref(args);
                return NULL;
        }
        e->exc.cls = c;
        e->exc.args = args;
        e->exc.code = 1;
        return e;
}

static BodyValue *exc_call(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                           BodyValue *kwargs)
{
        const BvClass *c = self->cls;
        BodyValue *e;

        if (bv__no_kwargs(vm, c->name, kwargs) < 0)
                return NULL;
        e = bv__exc_new(vm, c, bv_tuple_new(vm, args, n));
        if (!e)
                return NULL;
        /* OSError(errno, strerror, filename) keeps the filename apart, as
         * CPython does: e.args holds only the first two. */
        if (bv_class_is_subclass(c, &bv__exc_os) && n == 3) {
                BodyValue *two = bv_tuple_new(vm, args, 2);
                if (!two) {
                        bv_unref(e);
                        return NULL;
                }
                bv_unref(e->exc.args);
                e->exc.args = two;
                e->exc.filename = bv_ref(args[2]);
        }
        return e;
}

void bv__set_pending(BodyVM *vm, BodyValue *exc)
{
        bv_unref(vm->exc);
        vm->exc = exc;
        vm->exc_line = 0;
}

void *bv_raise_fatal(BodyVM *vm, int err)
{
        if (vm->fatal == 0)
                vm->fatal = err < 0 ? err : -EIO;
        bv__set_pending(vm, &fatal_exc);
        return NULL;
}

/* Build the exception outside the memory and string budgets: raising
 * MemoryError must not itself fail for lack of budget. */
static BodyValue *exc_new_unlimited(BodyVM *vm, const BvClass *c, BodyValue *arg, bool is_str,
                                    const char *msg, size_t len)
{
        BodyLimits saved = vm->limits;
        BodyValue *a, *e;

        vm->limits.max_memory = SIZE_MAX;
        vm->limits.max_string = SIZE_MAX;
        a = is_str ? bv_str_new(vm, msg, len) : bv_ref(arg);
        e = a ? bv__exc_new(vm, c, bv_tuple_new(vm, &a, 1)) : NULL;
        bv_unref(a);
        vm->limits = saved;
        return e;
}

void *bv_raisev(BodyVM *vm, BvExc e, const char *fmt, va_list ap)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        BodyValue *exc;

        if (vm->fatal < 0)
                return NULL;
        if (strbuf_vprintf(&b, fmt, ap) < 0)
                return bv_raise_fatal(vm, -ENOMEM);
        exc = exc_new_unlimited(vm, exc_classes[e], NULL, true, b.data ? b.data : "", b.len);
        if (!exc)
                return bv_raise_fatal(vm, -ENOMEM);
        bv__set_pending(vm, exc);
        return NULL;
}

void *bv_raise(BodyVM *vm, BvExc e, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        bv_raisev(vm, e, fmt, ap);
        va_end(ap);
        return NULL;
}

void *bv_raise_value(BodyVM *vm, BvExc e, BodyValue *arg)
{
        BodyValue *exc;

        if (vm->fatal < 0)
                return NULL;
        exc = exc_new_unlimited(vm, exc_classes[e], arg, false, NULL, 0);
        if (!exc)
                return bv_raise_fatal(vm, -ENOMEM);
        bv__set_pending(vm, exc);
        return NULL;
}

void *bv_raise_object(BodyVM *vm, BodyValue *x)
{
        BodyValue *exc;

        if (x->kind == BV_CLASS && (x->cls->flags & BV_CLASS_EXCEPTION)) {
                exc = bv_call(vm, x, NULL, 0, NULL);
                if (!exc)
                        return NULL;
                bv__set_pending(vm, exc);
                return NULL;
        }
        if (x->kind == BV_EXCEPTION) {
                bv__set_pending(vm, bv_ref(x));
                return NULL;
        }
        return bv_raise(vm, BV_EXC_TYPE_ERROR, "exceptions must derive from BaseException");
}

BodyValue *bv_exc_take(BodyVM *vm)
{
        vm->exc_line = 0;
        return TAKE_PTR(vm->exc);
}

void bv_exc_restore(BodyVM *vm, BodyValue *exc, int line)
{
        bv__set_pending(vm, bv_ref(exc));
        vm->exc_line = line;
}

void bv_exc_clear(BodyVM *vm)
{
        bv__set_pending(vm, NULL);
}

bool bv_exc_catchable(const BodyValue *exc)
{
        return exc->kind == BV_EXCEPTION && !(exc->exc.cls->flags & BV_CLASS_UNCATCHABLE);
}

int bv_exc_match(BodyVM *vm, const BodyValue *exc, BodyValue *spec)
{
        int found = 0;

        if (spec->kind == BV_TUPLE) {
                /* Tuples may nest, as deep as a Body cares to build them. */
                if (bv_depth_enter(vm) < 0)
                        return -1;
                for (size_t i = 0; i < spec->list.len && found == 0; i++)
                        found = bv_exc_match(vm, exc, spec->list.items[i]);
                bv_depth_leave(vm);
                return found;
        }
        if (spec->kind != BV_CLASS || !(spec->cls->flags & BV_CLASS_EXCEPTION)) {
                bv_raise(vm, BV_EXC_TYPE_ERROR,
                         "catching classes that do not inherit from BaseException is not allowed");
                return -1;
        }
        if (bv_exc_catchable(exc))
                found = bv_class_is_subclass(exc->exc.cls, spec->cls);
        return found;
}

int bv_exc_to_outcome(BodyVM *vm, BodyOutcome *o)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        _cleanup_bv_ BodyValue *exc = bv_ref(vm->exc);
        int line = vm->exc_line;
        BodyLimits saved = vm->limits;
        char *type, *msg;
        int r;

        if (!exc)
                return -EINVAL;
        /* str() of the exception may need memory the Body has used up. */
        vm->limits.max_memory = SIZE_MAX;
        r = bv_str(vm, exc, &b);
        vm->limits = saved;
        if (r < 0) {
                /* Describing the exception failed (a pathological argument):
                 * keep the original pending and report its class alone. */
                strbuf_reset(&b);
                bv_exc_restore(vm, exc, line);
        }
        type = strdup(exc->exc.cls->name);
        msg = strdup(b.data ? b.data : "");
        if (!type || !msg) {
                free(type);
                free(msg);
                return -ENOMEM;
        }
        o->error_code = exc->exc.code;
        o->exc_type = type;
        o->message = msg;
        o->additional_info = json_incref(exc->exc.additional_info);
        o->line = line;
        return 0;
}
