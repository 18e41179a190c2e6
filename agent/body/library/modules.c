/* The modules a Body can import, as data: json (dumps, dump, loads, load,
 * JSONDecodeError) and uuid (uuid4, UUID), the two the real templates use.
 * Modules that would hand the Body the machine (os, subprocess, sys, ...)
 * raise ImportError with a clear message; unknown names raise
 * ModuleNotFoundError as Python does. */
#include "body/library/library.h"

#include <string.h>

#include "util/digit.h"
#include "util/hexid.h"

#define FN(name)                                                                                   \
        static BodyValue *name(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,            \
                               BodyValue *kwargs)

/* ---- json ---- */

static const char *const dumps_names[] = {"obj",       "skipkeys", "ensure_ascii", "check_circular",
                                          "allow_nan", "cls",      "indent",       "separators",
                                          "default",   "sort_keys"};
enum {
        D_OBJ,
        D_SKIPKEYS,
        D_ENSURE_ASCII,
        D_CHECK_CIRCULAR,
        D_ALLOW_NAN,
        D_CLS,
        D_INDENT,
        D_SEPARATORS,
        D_DEFAULT,
        D_SORT_KEYS,
        D__MAX
};

/* Turn json.dumps keyword arguments into options. Strings in the options
 * are borrowed from the argument values. */
static int dump_options(BodyVM *vm, BodyValue **a, BvJsonOptions *o, char *indent_buf,
                        size_t indent_buf_size)
{
        *o = (BvJsonOptions){
                .item_sep = ", ", .key_sep = ": ", .ensure_ascii = true, .allow_nan = true};
        if (a[D_CLS] && a[D_CLS]->kind != BV_NONE) {
                bv_raise(vm, BV_EXC_TYPE_ERROR,
                         "json.dumps(cls=...) is not supported by muranoagent's Body interpreter");
                return -1;
        }
        if (a[D_DEFAULT] && a[D_DEFAULT]->kind != BV_NONE) {
                bv_raise(vm, BV_EXC_TYPE_ERROR,
                         "json.dumps(default=...) is not supported by muranoagent's Body "
                         "interpreter");
                return -1;
        }
        o->skipkeys = a[D_SKIPKEYS] && bv_truthy(a[D_SKIPKEYS]);
        if (a[D_ENSURE_ASCII])
                o->ensure_ascii = bv_truthy(a[D_ENSURE_ASCII]);
        if (a[D_ALLOW_NAN])
                o->allow_nan = bv_truthy(a[D_ALLOW_NAN]);
        o->sort_keys = a[D_SORT_KEYS] && bv_truthy(a[D_SORT_KEYS]);
        if (a[D_INDENT] && a[D_INDENT]->kind != BV_NONE) {
                BodyValue *ind = a[D_INDENT];
                if (ind->kind == BV_STR) {
                        o->indent = ind->str.data;
                        o->indent_len = ind->str.len;
                } else if (bv__is_intlike(ind)) {
                        int64_t k = bv__int_of(ind);
                        if (k < 0)
                                k = 0;
                        if ((size_t)k >= indent_buf_size) {
                                bv_raise(vm, BV_EXC_VALUE_ERROR,
                                         "json indent of %lld spaces is more than muranoagent's "
                                         "Body interpreter allows (%zu)",
                                         (long long)k, indent_buf_size - 1);
                                return -1;
                        }
                        memset(indent_buf, ' ', (size_t)k);
                        indent_buf[k] = '\0';
                        o->indent = indent_buf;
                        o->indent_len = (size_t)k;
                } else {
                        bv_raise(vm, BV_EXC_TYPE_ERROR,
                                 "indent must be None, an int or a str, not %s", bv_type_name(ind));
                        return -1;
                }
                o->item_sep = ",";
        }
        if (a[D_SEPARATORS] && a[D_SEPARATORS]->kind != BV_NONE) {
                BodyValue *s = a[D_SEPARATORS];
                if ((s->kind != BV_TUPLE && s->kind != BV_LIST) || s->list.len != 2 ||
                    s->list.items[0]->kind != BV_STR || s->list.items[1]->kind != BV_STR) {
                        bv_raise(vm, BV_EXC_TYPE_ERROR,
                                 "separators must be a pair of strings (item_separator, "
                                 "key_separator)");
                        return -1;
                }
                o->item_sep = s->list.items[0]->str.data;
                o->key_sep = s->list.items[1]->str.data;
        }
        return 0;
}

static BodyValue *dumps_common(BodyVM *vm, BodyValue *obj, BodyValue **a)
{
        _cleanup_strbuf_ StrBuf out = bv__buf(vm);
        char indent[256];
        BvJsonOptions o;

        if (dump_options(vm, a, &o, indent, sizeof(indent)) < 0 ||
            bv__json_dump(vm, obj, &o, &out) < 0)
                return NULL;
        return bv_str_from_buf(vm, &out);
}

FN(mod_json_dumps)
{
        BodyValue *a[D__MAX];

        if (bv__parse_args(vm, "dumps", args, n, kwargs, dumps_names, D__MAX, 1, 1, a) < 0)
                return NULL;
        return dumps_common(vm, a[D_OBJ], a);
}

FN(mod_json_dump)
{
        /* dump(obj, fp, **kw): the same text as dumps, written with fp.write. */
        static const char *const names[] = {
                "obj", "fp",     "skipkeys",   "ensure_ascii", "check_circular", "allow_nan",
                "cls", "indent", "separators", "default",      "sort_keys"};
        BodyValue *a[ELEMENTSOF(names)], *opts[D__MAX];
        _cleanup_bv_ BodyValue *text = NULL;
        _cleanup_bv_ BodyValue *write = NULL;
        _cleanup_bv_ BodyValue *r = NULL;

        if (bv__parse_args(vm, "dump", args, n, kwargs, names, ELEMENTSOF(names), 2, 2, a) < 0)
                return NULL;
        opts[D_OBJ] = a[0];
        for (size_t i = 1; i < D__MAX; i++)
                opts[i] = a[i + 1];
        write = bv_getattr(vm, a[1], "write");
        if (!write)
                return NULL;
        text = dumps_common(vm, a[0], opts);
        r = text ? bv_call(vm, write, &text, 1, NULL) : NULL;
        return r ? bv_none() : NULL;
}

static BodyValue *loads_text(BodyVM *vm, BodyValue *s)
{
        if (s->kind != BV_STR)
                return bv_raise(vm, BV_EXC_TYPE_ERROR,
                                "the JSON object must be str, bytes or bytearray, not %s",
                                bv_type_name(s));
        return bv__json_loads(vm, s->str.data, s->str.len);
}

FN(mod_json_loads)
{
        if (bv__check_args(vm, "loads", n, kwargs, 1, 1) < 0)
                return NULL;
        return loads_text(vm, args[0]);
}

FN(mod_json_load)
{
        _cleanup_bv_ BodyValue *read = NULL;
        _cleanup_bv_ BodyValue *text = NULL;

        if (bv__check_args(vm, "load", n, kwargs, 1, 1) < 0)
                return NULL;
        read = bv_getattr(vm, args[0], "read");
        text = read ? bv_call(vm, read, NULL, 0, NULL) : NULL;
        return text ? loads_text(vm, text) : NULL;
}

/* ---- uuid ---- */

static BodyValue *uuid_new(BodyVM *vm, const uint8_t bytes[16])
{
        BodyValue *u = bv__alloc(vm, BV_UUID, 0);
        if (u)
                memcpy(u->uuid, bytes, 16);
        return u;
}

BodyValue *bv__uuid_from_hex(BodyVM *vm, const char *hex)
{
        uint8_t bytes[16];
        char digits[33];
        size_t k = 0, len;

        /* Like uuid.UUID(): braces, "urn:uuid:" and dashes are ignored. */
        if (strncmp(hex, "urn:uuid:", 9) == 0)
                hex += 9;
        len = strlen(hex);
        for (size_t i = 0; i < len; i++) {
                if (hex[i] == '-' || ((hex[i] == '{' && i == 0) || (hex[i] == '}' && i == len - 1)))
                        continue;
                if (k == 32 || digit_value(hex[i]) >= 16)
                        goto bad;
                digits[k++] = hex[i];
        }
        if (k != 32)
                goto bad;
        for (int i = 0; i < 16; i++)
                bytes[i] =
                        (uint8_t)(digit_value(digits[2 * i]) << 4 | digit_value(digits[2 * i + 1]));
        return uuid_new(vm, bytes);
bad:
        return bv_raise(vm, BV_EXC_VALUE_ERROR, "badly formed hexadecimal UUID string");
}

BodyValue *bv__type_call_uuid(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                              BodyValue *kwargs)
{
        static const char *const names[] = {"hex"};
        BodyValue *a[1];

        if (bv__parse_args(vm, "UUID", args, n, kwargs, names, 1, 1, 1, a) < 0)
                return NULL;
        if (a[0]->kind != BV_STR)
                return bv_raise(vm, BV_EXC_TYPE_ERROR,
                                "UUID() takes a hexadecimal string in muranoagent's Body "
                                "interpreter, not %s",
                                bv_type_name(a[0]));
        return bv__uuid_from_hex(vm, a[0]->str.data);
}

FN(mod_uuid_uuid4)
{
        _cleanup_free_ char *hex = malloc(33);
        size_t len = 32;
        int r;

        if (bv__check_args(vm, "uuid4", n, kwargs, 0, 0) < 0)
                return NULL;
        if (!hex)
                return bv_raise_fatal(vm, -ENOMEM);
        r = hexid_new(hex);
        if (r < 0)
                return bv_raise_fatal(vm, r);
        /* Recorded, so that a Body run again after a crash draws the same. */
        if (bv__draw(vm, "uuid4", NULL, &hex, &len) < 0)
                return NULL;
        if (len != 32)
                return bv_raise_fatal(vm, -EBADMSG);
        hex[32] = '\0';
        return bv__uuid_from_hex(vm, hex);
}

/* ---- the tables ---- */

#define MEMBER_FN(nm, fn)                                                                          \
        {                                                                                          \
                nm, &(BodyValue)                                                                   \
                {                                                                                  \
                        .kind = BV_BUILTIN, .immortal = true, .refcnt = 1,                         \
                        .builtin = &(const BvBuiltinDef){nm, fn},                                  \
                }                                                                                  \
        }

static const BvModuleMember mod_json_members[] = {
        MEMBER_FN("dumps", mod_json_dumps),
        MEMBER_FN("dump", mod_json_dump),
        MEMBER_FN("loads", mod_json_loads),
        MEMBER_FN("load", mod_json_load),
        {"JSONDecodeError", &bv__exc_json_decode.value},
        {NULL, NULL},
};

static const BvModuleMember uuid_members[] = {
        MEMBER_FN("uuid4", mod_uuid_uuid4),
        {"UUID", &bv_class_uuid.value},
        {NULL, NULL},
};

static BvModuleDef modules[] = {
        {.value = {.kind = BV_MODULE, .immortal = true, .refcnt = 1, .module = &modules[0]},
         .name = "json",
         .members = mod_json_members},
        {.value = {.kind = BV_MODULE, .immortal = true, .refcnt = 1, .module = &modules[1]},
         .name = "uuid",
         .members = uuid_members},
};

/* Standard modules a Body might reach for that would give it the host
 * (processes, files by other means, the network) or that the agent does not
 * provide. */
static const char *const refused[] = {
        "os",
        "sys",
        "subprocess",
        "shutil",
        "socket",
        "pty",
        "signal",
        "ctypes",
        "importlib",
        "builtins",
        "io",
        "pathlib",
        "tempfile",
        "glob",
        "pickle",
        "marshal",
        "multiprocessing",
        "threading",
        "time",
        "datetime",
        "re",
        "random",
        "base64",
        "math",
        "string",
        "collections",
        "itertools",
        "functools",
        "hashlib",
        "urllib",
        "http",
        "platform",
        "getpass",
        "resource",
};

BodyValue *bv_import(BodyVM *vm, const char *name)
{
        for (size_t i = 0; i < ELEMENTSOF(modules); i++)
                if (streq(modules[i].name, name))
                        return &modules[i].value;
        for (size_t i = 0; i < ELEMENTSOF(refused); i++)
                if (streq(refused[i], name))
                        return bv_raise(vm, BV_EXC_IMPORT_ERROR,
                                        "module '%s' is not available in muranoagent's Body "
                                        "interpreter (only json and uuid can be imported)",
                                        name);
        return bv_raise(vm, BV_EXC_MODULE_NOT_FOUND_ERROR, "No module named '%s'", name);
}
