/* Attributes and calls: obj.name (bound methods, module members, Bunch
 * keys, script functions), attribute assignment on a Bunch, and bv_call(),
 * which dispatches every callable kind, including plan scripts through
 * BodyHost.call_script. */
#include "body/values/value-internal.h"

#include <errno.h>
#include <string.h>

const BvBuiltinDef *bv__find_method(BvKind kind, const char *name)
{
        const BvBuiltinDef *const *tables = bv__types[kind]->methods;

        for (; tables && *tables; tables++)
                for (const BvBuiltinDef *t = *tables; t->name; t++)
                        if (streq(t->name, name))
                                return t;
        return NULL;
}

/* The instance kind whose methods a type object offers: str.strip. */
static bool class_kind(const BvClass *c, BvKind *ret)
{
        if (c == &bv_class_bunch)
                c = &bv_class_dict;
        /* range's methods are offered on ranges only, not unbound. */
        for (BvKind k = 0; k < BV__KIND_MAX; k++)
                if (bv__types[k]->cls == c && bv__types[k]->methods && k != BV_RANGE) {
                        *ret = k;
                        return true;
                }
        return false;
}

void *bv__no_attribute(BodyVM *vm, BodyValue *obj, const char *name)
{
        if (obj->kind == BV_MODULE)
                return bv_raise(vm, BV_EXC_ATTRIBUTE_ERROR, "module '%s' has no attribute '%s'",
                                obj->module->name, name);
        if (obj->kind == BV_CLASS)
                return bv_raise(vm, BV_EXC_ATTRIBUTE_ERROR,
                                "type object '%s' has no attribute '%s'", obj->cls->name, name);
        return bv_raise(vm, BV_EXC_ATTRIBUTE_ERROR, "'%s' object has no attribute '%s'",
                        bv_type_name(obj), name);
}

/* ---- the getattr slots of the core's kinds ---- */

BodyValue *bv__class_getattr(BodyVM *vm, BodyValue *obj, const char *name)
{
        const BvBuiltinDef *def;
        BvKind kind;

        if (streq(name, "__name__") || streq(name, "__qualname__"))
                return bv_str_new_cstr(vm, obj->cls->name);
        if (class_kind(obj->cls, &kind) && (def = bv__find_method(kind, name)))
                return bv__method_new(vm, def, obj);
        return bv__no_attribute(vm, obj, name);
}

BodyValue *bv__dict_getattr(BodyVM *vm, BodyValue *obj, const char *name)
{
        if (obj->dict.bunch) {
                /* Bunch.__getattr__ is __getitem__: a missing key is a
                 * KeyError, not an AttributeError. */
                _cleanup_bv_ BodyValue *key = bv_str_new_cstr(vm, name);
                return key ? bv_getitem(vm, obj, key) : NULL;
        }
        return bv__no_attribute(vm, obj, name);
}

BodyValue *bv__module_getattr(BodyVM *vm, BodyValue *obj, const char *name)
{
        for (const BvModuleMember *m = obj->module->members; m->name; m++)
                if (streq(m->name, name))
                        return bv_ref(m->value);
        if (streq(name, "__name__"))
                return bv_str_new_cstr(vm, obj->module->name);
        return bv__no_attribute(vm, obj, name);
}

BodyValue *bv__script_getattr(BodyVM *vm, BodyValue *obj, const char *name)
{
        if (!obj->script.function)
                return bv__script_function(vm, obj, name);
        return bv__no_attribute(vm, obj, name);
}

BodyValue *bv__exc_getattr(BodyVM *vm, BodyValue *obj, const char *name)
{
        BodyValue *args = obj->exc.args;
        bool os = bv_class_is_subclass(obj->exc.cls, bv_exc_class(BV_EXC_OS_ERROR));

        if (streq(name, "args"))
                return bv_ref(args);
        if (os && (streq(name, "errno") || streq(name, "strerror"))) {
                if (args->list.len < 2)
                        return bv_none();
                return bv_ref(args->list.items[streq(name, "errno") ? 0 : 1]);
        }
        if (os && streq(name, "filename"))
                return bv_ref(obj->exc.filename ? obj->exc.filename : bv_none());
        return bv__no_attribute(vm, obj, name);
}

BodyValue *bv__uuid_getattr(BodyVM *vm, BodyValue *obj, const char *name)
{
        char buf[48];

        if (streq(name, "hex")) {
                static const char hex[] = "0123456789abcdef";
                for (int i = 0; i < 16; i++) {
                        buf[2 * i] = hex[obj->uuid[i] >> 4];
                        buf[2 * i + 1] = hex[obj->uuid[i] & 15];
                }
                return bv_str_new(vm, buf, 32);
        }
        if (streq(name, "urn")) {
                memcpy(buf, "urn:uuid:", 9);
                bv__uuid_str(obj->uuid, buf + 9);
                return bv_str_new_cstr(vm, buf);
        }
        if (streq(name, "version"))
                return bv_int_new(vm, obj->uuid[6] >> 4);
        return bv__no_attribute(vm, obj, name);
}

BodyValue *bv__function_getattr(BodyVM *vm, BodyValue *obj, const char *name)
{
        const char *q = obj->function.qualname, *dot = strrchr(q, '.');

        /* "outer.<locals>.inner" -> "inner"; "<lambda>" has no dot. */
        if (streq(name, "__name__"))
                return bv_str_new_cstr(vm, dot ? dot + 1 : q);
        if (streq(name, "__qualname__"))
                return bv_str_new_cstr(vm, q);
        return bv__no_attribute(vm, obj, name);
}

BodyValue *bv__builtin_getattr(BodyVM *vm, BodyValue *obj, const char *name)
{
        if (streq(name, "__name__") || streq(name, "__qualname__"))
                return bv_str_new_cstr(vm, obj->builtin->name);
        return bv__no_attribute(vm, obj, name);
}

BodyValue *bv__method_getattr(BodyVM *vm, BodyValue *obj, const char *name)
{
        if (streq(name, "__name__"))
                return bv_str_new_cstr(vm, obj->method.def->name);
        return bv__no_attribute(vm, obj, name);
}

BodyValue *bv__slice_getattr(BodyVM *vm, BodyValue *obj, const char *name)
{
        if (streq(name, "start"))
                return bv_ref(obj->slice.start);
        if (streq(name, "stop"))
                return bv_ref(obj->slice.stop);
        if (streq(name, "step"))
                return bv_ref(obj->slice.step);
        return bv__no_attribute(vm, obj, name);
}

BodyValue *bv__file_getattr(BodyVM *vm, BodyValue *obj, const char *name)
{
        if (streq(name, "name"))
                return bv_str_new_cstr(vm, obj->file.name);
        if (streq(name, "mode"))
                return bv_str_new_cstr(vm, obj->file.mode);
        if (streq(name, "closed"))
                return bv_bool(obj->file.fp == NULL);
        return bv__no_attribute(vm, obj, name);
}

BodyValue *bv__range_getattr(BodyVM *vm, BodyValue *obj, const char *name)
{
        if (streq(name, "start") || streq(name, "stop") || streq(name, "step"))
                return bv__range_part(vm, obj, name);
        return bv__no_attribute(vm, obj, name);
}

BodyValue *bv__int_getattr(BodyVM *vm, BodyValue *obj, const char *name)
{
        if (streq(name, "real") || streq(name, "numerator"))
                return obj->kind == BV_INT ? bv_ref(obj) : bv_int_new(vm, obj->b);
        if (streq(name, "imag"))
                return bv_int_new(vm, 0);
        if (streq(name, "denominator"))
                return bv_int_new(vm, 1);
        return bv__no_attribute(vm, obj, name);
}

BodyValue *bv__float_getattr(BodyVM *vm, BodyValue *obj, const char *name)
{
        if (streq(name, "real"))
                return bv_ref(obj);
        if (streq(name, "imag"))
                return bv_float_new(vm, 0.0);
        return bv__no_attribute(vm, obj, name);
}

BodyValue *bv_getattr(BodyVM *vm, BodyValue *obj, const char *name)
{
        const BvType *t = bv__type(obj);
        const BvBuiltinDef *def = bv__find_method(obj->kind, name);

        if (def)
                return bv__method_new(vm, def, obj);
        if (t->getattr)
                return t->getattr(vm, obj, name);
        return bv__no_attribute(vm, obj, name);
}

int bv_setattr(BodyVM *vm, BodyValue *obj, const char *name, BodyValue *value)
{
        if (obj->kind == BV_DICT && obj->dict.bunch)
                return bv_dict_set_str(vm, obj, name, value);
        if (obj->kind == BV_MODULE || obj->kind == BV_CLASS || obj->kind == BV_FUNCTION) {
                bv_raise(vm, BV_EXC_ATTRIBUTE_ERROR,
                         "cannot set attribute '%s' of %s: muranoagent's Body interpreter keeps "
                         "modules, types and functions read-only",
                         name, bv_type_name(obj));
                return -1;
        }
        if (bv__find_method(obj->kind, name))
                bv_raise(vm, BV_EXC_ATTRIBUTE_ERROR, "'%s' object attribute '%s' is read-only",
                         bv_type_name(obj), name);
        else
                bv__no_attribute(vm, obj, name);
        return -1;
}

int bv_delattr(BodyVM *vm, BodyValue *obj, const char *name)
{
        if (obj->kind == BV_DICT && obj->dict.bunch) {
                _cleanup_bv_ BodyValue *key = bv_str_new_cstr(vm, name);
                return key ? bv_delitem(vm, obj, key) : -1;
        }
        bv__no_attribute(vm, obj, name);
        return -1;
}

int bv_hasattr(BodyVM *vm, BodyValue *obj, const char *name)
{
        _cleanup_bv_ BodyValue *v = bv_getattr(vm, obj, name);

        if (v)
                return 1;
        if (vm->exc && vm->exc->exc.cls == bv_exc_class(BV_EXC_ATTRIBUTE_ERROR)) {
                bv_exc_clear(vm);
                return 0;
        }
        return -1;
}

/* ---- calls ---- */

BodyValue *bv__script_call(BodyVM *vm, BodyValue *script, BodyValue **args, size_t n,
                           BodyValue *kwargs)
{
        _cleanup_json_ json_t *jargs = json_array();
        _cleanup_json_ json_t *jkwargs = json_object();
        _cleanup_json_ json_t *result = NULL;
        BodyCallError err = {.code = 0};
        BodyCall call;
        BodyValue *k, *v, *ret;
        size_t pos = 0;
        int r;

        if (!jargs || !jkwargs)
                return bv_raise_fatal(vm, -ENOMEM);
        for (size_t i = 0; i < n; i++) {
                json_t *j;
                if (bv_to_json(vm, args[i], &j) < 0)
                        return NULL;
                if (json_array_append_new(jargs, j) < 0)
                        return bv_raise_fatal(vm, -ENOMEM);
        }
        while (kwargs && bv_dict_next(kwargs, &pos, &k, &v)) {
                json_t *j;
                if (bv_to_json(vm, v, &j) < 0)
                        return NULL;
                if (json_object_setn_new(jkwargs, k->str.data, k->str.len, j) < 0)
                        return bv_raise_fatal(vm, -ENOMEM);
        }
        if (!vm->host || !vm->host->call_script)
                return bv_raise(vm, BV_EXC_RUNTIME_ERROR, "script %s cannot run: no script host",
                                script->script.name);
        call = (BodyCall){.script = script->script.name,
                          .function = script->script.function,
                          .args = jargs,
                          .kwargs = jkwargs};
        r = vm->host->call_script(vm->host->userdata, &call, &result, &err);
        if (r < 0)
                return bv_raise_fatal(vm, r);
        if (r > 0) {
                /* The script failed in a way the Body sees: the reference
                 * raises CustomException(code, message, additional_data). */
                _cleanup_bv_ BodyValue *msg = bv_str_new_checked(
                        vm, err.message ? err.message : "", err.message ? strlen(err.message) : 0);
                BodyValue *exc;
                free(err.message);
                if (!msg) {
                        json_decref(err.additional_info);
                        return NULL;
                }
                exc = bv__exc_new(vm, bv_exc_class(BV_EXC_CUSTOM_EXCEPTION),
                                  bv_tuple_new(vm, &msg, 1));
                if (!exc) {
                        json_decref(err.additional_info);
                        return NULL;
                }
                exc->exc.code = err.code;
                exc->exc.additional_info = err.additional_info;
                bv__set_pending(vm, exc);
                return NULL;
        }
        if (!result || !json_is_object(result))
                return bv_raise(vm, BV_EXC_RUNTIME_ERROR,
                                "script %s returned a result that is not an object",
                                script->script.name);
        ret = bv_from_json(vm, result, true);
        return ret;
}

/* ---- the call slots of the core's kinds ---- */

BodyValue *bv__builtin_call(BodyVM *vm, BodyValue *callable, BodyValue **args, size_t n,
                            BodyValue *kwargs)
{
        return callable->builtin->fn(vm, NULL, args, n, kwargs);
}

BodyValue *bv__method_call(BodyVM *vm, BodyValue *callable, BodyValue **args, size_t n,
                           BodyValue *kwargs)
{
        BodyValue *self = callable->method.self;
        const BvBuiltinDef *def = callable->method.def;

        if (self->kind == BV_CLASS) {
                /* An unbound method: str.strip(s). */
                if (n == 0)
                        return bv_raise(vm, BV_EXC_TYPE_ERROR,
                                        "unbound method %s.%s() needs an argument", self->cls->name,
                                        def->name);
                if (!bv_class_is_subclass(bv_type_of(args[0])->cls, self->cls))
                        return bv_raise(vm, BV_EXC_TYPE_ERROR,
                                        "descriptor '%s' for '%s' objects doesn't apply "
                                        "to a '%s' object",
                                        def->name, self->cls->name, bv_type_name(args[0]));
                return def->fn(vm, args[0], args + 1, n - 1, kwargs);
        }
        return def->fn(vm, self, args, n, kwargs);
}

/* A type object: what its class's call does (str(x), ValueError('m')). */
BodyValue *bv__class_call(BodyVM *vm, BodyValue *callable, BodyValue **args, size_t n,
                          BodyValue *kwargs)
{
        if (!callable->cls->call)
                return bv_raise(vm, BV_EXC_TYPE_ERROR, "cannot create '%s' instances",
                                callable->cls->name);
        return callable->cls->call(vm, callable, args, n, kwargs);
}

/* A def or lambda: the evaluator's hook. */
BodyValue *bv__function_call(BodyVM *vm, BodyValue *callable, BodyValue **args, size_t n,
                             BodyValue *kwargs)
{
        if (!vm->call)
                return bv_raise(vm, BV_EXC_RUNTIME_ERROR,
                                "functions cannot be called: no evaluator");
        return vm->call(vm, callable, args, n, kwargs);
}

BodyValue *bv_call(BodyVM *vm, BodyValue *callable, BodyValue **args, size_t n, BodyValue *kwargs)
{
        const BvType *t = bv__type(callable);

        if (kwargs && kwargs->dict.len == 0)
                kwargs = NULL;
        if (!t->call)
                return bv_raise(vm, BV_EXC_TYPE_ERROR, "'%s' object is not callable",
                                bv_type_name(callable));
        return t->call(vm, callable, args, n, kwargs);
}
