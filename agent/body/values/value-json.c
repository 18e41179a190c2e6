/* Values to and from JSON: jansson documents at the Body's boundary
 * (Parameters in, script arguments and the result out) and JSON text for
 * the json module, written exactly as CPython's json.dumps writes it.
 *
 * jansson memory rule: json_*_new() and bv_to_json() give new references,
 * json_object_get()/json_array_get() borrowed ones. */
#include "body/values/value-internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "util/pyjson.h"

BodyValue *bv_from_json(BodyVM *vm, const json_t *j, bool bunch)
{
        switch (json_typeof(j)) {
        case JSON_NULL:
                return bv_none();
        case JSON_TRUE:
                return bv_bool(true);
        case JSON_FALSE:
                return bv_bool(false);
        case JSON_INTEGER:
                return bv_int_new(vm, (int64_t)json_integer_value(j));
        case JSON_REAL:
                return bv_float_new(vm, json_real_value(j));
        case JSON_STRING: {
                const char *digits = pyjson_bigint_digits(j);
                BodyValue *r = NULL;
                if (!digits)
                        return bv_str_new_checked(vm, json_string_value(j), json_string_length(j));
                if (bv_int_parse(vm, digits, strlen(digits), 10, &r) > 0)
                        return bv_raise(vm, BV_EXC_VALUE_ERROR,
                                        "invalid big integer in a document");
                return r;
        }
        case JSON_ARRAY: {
                _cleanup_bv_ BodyValue *l = bv_list_new(vm, json_array_size(j));
                size_t i;
                json_t *x;
                if (!l || bv_depth_enter(vm) < 0)
                        return NULL;
                json_array_foreach (j, i, x) {
                        BodyValue *v = bv_from_json(vm, x, false);
                        if (!v) {
                                bv_depth_leave(vm);
                                return NULL;
                        }
                        l->list.items[l->list.len++] = v;
                }
                bv_depth_leave(vm);
                return TAKE_PTR(l);
        }
        case JSON_OBJECT: {
                _cleanup_bv_ BodyValue *d = bv_dict_new(vm);
                const char *key;
                json_t *x;
                if (!d || bv_depth_enter(vm) < 0)
                        return NULL;
                d->dict.bunch = bunch;
                json_object_foreach ((json_t *)j, key, x) {
                        _cleanup_bv_ BodyValue *k = bv_str_new_checked(vm, key, strlen(key));
                        _cleanup_bv_ BodyValue *v = k ? bv_from_json(vm, x, false) : NULL;
                        if (!v || bv_dict_set(vm, d, k, v) < 0) {
                                bv_depth_leave(vm);
                                return NULL;
                        }
                }
                bv_depth_leave(vm);
                return TAKE_PTR(d);
        }
        }
        return bv_raise(vm, BV_EXC_TYPE_ERROR, "unknown JSON value");
}

static void *not_serializable(BodyVM *vm, BodyValue *v)
{
        return bv_raise(vm, BV_EXC_TYPE_ERROR, "Object of type %s is not JSON serializable",
                        bv_type_name(v));
}

/* The text a non-string dict key becomes, or NULL (TypeError pending, or
 * *skip set when skipkeys allows dropping it). */
static BodyValue *json_key(BodyVM *vm, BodyValue *k, bool skipkeys, bool *skip)
{
        char buf[40];

        *skip = false;
        switch (k->kind) {
        case BV_STR:
                return bv_ref(k);
        case BV_NONE:
                return bv_str_new_cstr(vm, "null");
        case BV_BOOL:
                return bv_str_new_cstr(vm, k->b ? "true" : "false");
        case BV_INT:
                if (k->big) {
                        _cleanup_strbuf_ StrBuf b = bv__buf(vm);
                        if (bv__int_str(vm, k, &b) < 0)
                                return NULL;
                        return bv_str_from_buf(vm, &b);
                }
                snprintf(buf, sizeof(buf), "%" PRId64, k->i);
                return bv_str_new_cstr(vm, buf);
        case BV_FLOAT:
                pyjson_float(k->f, buf);
                return bv_str_new_cstr(vm, buf);
        default:
                if (skipkeys) {
                        *skip = true;
                        return NULL;
                }
                return bv_raise(vm, BV_EXC_TYPE_ERROR,
                                "keys must be str, int, float, bool or None, not %s",
                                bv_type_name(k));
        }
}

/* Containers being converted, to refuse cycles as json.dumps does. */
typedef struct Markers {
        BodyValue *stack[256];
        size_t n;
} Markers;

static int mark(BodyVM *vm, Markers *m, BodyValue *v)
{
        for (size_t i = 0; i < m->n && i < ELEMENTSOF(m->stack); i++)
                if (m->stack[i] == v) {
                        bv_raise(vm, BV_EXC_VALUE_ERROR, "Circular reference detected");
                        return -1;
                }
        if (bv_depth_enter(vm) < 0)
                return -1;
        if (m->n < ELEMENTSOF(m->stack))
                m->stack[m->n] = v;
        m->n++;
        return 0;
}

static void unmark(BodyVM *vm, Markers *m)
{
        m->n--;
        bv_depth_leave(vm);
}

static int to_json(BodyVM *vm, BodyValue *v, json_t **ret, Markers *m)
{
        json_t *j = NULL;

        switch (v->kind) {
        case BV_NONE:
                j = json_null();
                break;
        case BV_BOOL:
                j = json_boolean(v->b);
                break;
        case BV_INT:
                if (v->big) {
                        _cleanup_strbuf_ StrBuf b = bv__buf(vm);
                        if (bv__int_str(vm, v, &b) < 0)
                                return -1;
                        j = pyjson_bigint_new(b.data, b.len);
                        break;
                }
                j = json_integer(v->i);
                break;
        case BV_FLOAT:
                if (!isfinite(v->f)) {
                        bv_raise(vm, BV_EXC_VALUE_ERROR,
                                 "Out of range float values are not JSON compliant");
                        return -1;
                }
                j = json_real(v->f);
                break;
        case BV_STR:
                j = json_stringn_nocheck(v->str.data, v->str.len);
                break;
        case BV_LIST:
        case BV_TUPLE:
                if (mark(vm, m, v) < 0)
                        return -1;
                j = json_array();
                for (size_t i = 0; j && i < v->list.len; i++) {
                        json_t *x;
                        if (to_json(vm, v->list.items[i], &x, m) < 0) {
                                json_decref(j);
                                unmark(vm, m);
                                return -1;
                        }
                        if (json_array_append_new(j, x) < 0) {
                                json_decref(j);
                                j = NULL;
                        }
                }
                unmark(vm, m);
                break;
        case BV_DICT: {
                size_t pos = 0;
                BodyValue *k, *x;
                if (mark(vm, m, v) < 0)
                        return -1;
                j = json_object();
                while (j && bv_dict_next(v, &pos, &k, &x)) {
                        bool skip;
                        _cleanup_bv_ BodyValue *ks = json_key(vm, k, false, &skip);
                        json_t *jx;
                        if (!ks || to_json(vm, x, &jx, m) < 0) {
                                json_decref(j);
                                unmark(vm, m);
                                return -1;
                        }
                        if (json_object_setn_new_nocheck(j, ks->str.data, ks->str.len, jx) < 0) {
                                json_decref(j);
                                j = NULL;
                        }
                }
                unmark(vm, m);
                break;
        }
        default:
                not_serializable(vm, v);
                return -1;
        }
        if (!j) {
                bv_raise_fatal(vm, -ENOMEM);
                return -1;
        }
        *ret = j;
        return 0;
}

int bv_to_json(BodyVM *vm, BodyValue *v, json_t **ret)
{
        Markers m = {.n = 0};
        return to_json(vm, v, ret, &m);
}

/* ---- json.dumps text ---- */

static int newline(BodyVM *vm, const BvJsonOptions *opt, StrBuf *out, size_t level)
{
        BV_PUT(strbuf_putc(out, '\n'));
        for (size_t i = 0; i < level; i++)
                BV_PUT(strbuf_append(out, opt->indent, opt->indent_len));
        return 0;
}

static int dump(BodyVM *vm, BodyValue *v, const BvJsonOptions *opt, StrBuf *out, Markers *m,
                size_t level);

static int dump_float(BodyVM *vm, double d, const BvJsonOptions *opt, StrBuf *out)
{
        char buf[40];

        if (!isfinite(d) && !opt->allow_nan) {
                bv_raise(vm, BV_EXC_VALUE_ERROR,
                         "Out of range float values are not JSON compliant");
                return -1;
        }
        pyjson_float(d, buf);
        BV_PUT(strbuf_puts(out, buf));
        return 0;
}

static int dump_seq(BodyVM *vm, BodyValue *v, const BvJsonOptions *opt, StrBuf *out, Markers *m,
                    size_t level)
{
        if (v->list.len == 0) {
                BV_PUT(strbuf_puts(out, "[]"));
                return 0;
        }
        BV_PUT(strbuf_putc(out, '['));
        for (size_t i = 0; i < v->list.len; i++) {
                if (i > 0)
                        BV_PUT(strbuf_puts(out, opt->item_sep));
                if (opt->indent && newline(vm, opt, out, level + 1) < 0)
                        return -1;
                if (dump(vm, v->list.items[i], opt, out, m, level + 1) < 0)
                        return -1;
        }
        if (opt->indent && newline(vm, opt, out, level) < 0)
                return -1;
        BV_PUT(strbuf_putc(out, ']'));
        return 0;
}

typedef struct KeyValue {
        BodyValue *key;   /* the original key, for sort_keys */
        BodyValue *text;  /* the key as JSON writes it (a new reference) */
        BodyValue *value; /* borrowed */
} KeyValue;

static int write_items(BodyVM *vm, const KeyValue *kv, size_t n, const BvJsonOptions *opt,
                       StrBuf *out, Markers *m, size_t level)
{
        BV_PUT(strbuf_putc(out, '{'));
        for (size_t i = 0; i < n; i++) {
                if (i > 0)
                        BV_PUT(strbuf_puts(out, opt->item_sep));
                if (opt->indent && newline(vm, opt, out, level + 1) < 0)
                        return -1;
                BV_PUT(pyjson_quote(out, kv[i].text->str.data, kv[i].text->str.len,
                                    opt->ensure_ascii));
                BV_PUT(strbuf_puts(out, opt->key_sep));
                if (dump(vm, kv[i].value, opt, out, m, level + 1) < 0)
                        return -1;
        }
        if (opt->indent && newline(vm, opt, out, level) < 0)
                return -1;
        BV_PUT(strbuf_putc(out, '}'));
        return 0;
}

static int dump_dict(BodyVM *vm, BodyValue *v, const BvJsonOptions *opt, StrBuf *out, Markers *m,
                     size_t level)
{
        size_t pos = 0, n = 0, len = v->dict.len, ksize = (len ? len : 1) * sizeof(BodyValue *);
        size_t size = (len ? len : 1) * sizeof(KeyValue);
        BodyValue **keys, *k, *x;
        KeyValue *kv = NULL;
        int r = -1;

        if (len == 0) {
                BV_PUT(strbuf_puts(out, "{}"));
                return 0;
        }
        keys = bv_mem_alloc(vm, ksize);
        if (!keys)
                return -1;
        while (bv_dict_next(v, &pos, &k, NULL))
                keys[n++] = k;
        /* json.dumps sorts the original keys, so mixed types fail with the
         * TypeError of '<'. */
        if (opt->sort_keys && bv__sort(vm, keys, n, NULL, false) < 0)
                goto out;
        kv = bv_mem_alloc(vm, size);
        if (!kv)
                goto out;
        n = 0;
        for (size_t i = 0; i < len; i++) {
                bool skip;
                BodyValue *t = json_key(vm, keys[i], opt->skipkeys, &skip);
                if (!t && !skip)
                        goto out;
                if (!t)
                        continue;
                if (bv_dict_lookup(vm, v, keys[i], &x) < 0) {
                        bv_unref(t);
                        goto out;
                }
                kv[n++] = (KeyValue){.key = keys[i], .text = t, .value = x};
        }
        r = write_items(vm, kv, n, opt, out, m, level);
out:
        for (size_t i = 0; kv && i < n; i++)
                bv_unref(kv[i].text);
        bv_mem_free(vm, kv, size);
        bv_mem_free(vm, keys, ksize);
        return r;
}

static int dump(BodyVM *vm, BodyValue *v, const BvJsonOptions *opt, StrBuf *out, Markers *m,
                size_t level)
{
        int r;

        if (bv_step(vm) < 0)
                return -1;
        switch (v->kind) {
        case BV_NONE:
                BV_PUT(strbuf_puts(out, "null"));
                return 0;
        case BV_BOOL:
                BV_PUT(strbuf_puts(out, v->b ? "true" : "false"));
                return 0;
        case BV_INT:
                if (v->big)
                        return bv__int_str(vm, v, out);
                BV_PUT(strbuf_printf(out, "%" PRId64, v->i));
                return 0;
        case BV_FLOAT:
                return dump_float(vm, v->f, opt, out);
        case BV_STR:
                BV_PUT(pyjson_quote(out, v->str.data, v->str.len, opt->ensure_ascii));
                return 0;
        case BV_LIST:
        case BV_TUPLE:
        case BV_DICT:
                if (mark(vm, m, v) < 0)
                        return -1;
                r = v->kind == BV_DICT ? dump_dict(vm, v, opt, out, m, level)
                                       : dump_seq(vm, v, opt, out, m, level);
                unmark(vm, m);
                return r;
        default:
                not_serializable(vm, v);
                return -1;
        }
}

int bv__json_dump(BodyVM *vm, BodyValue *v, const BvJsonOptions *opt, StrBuf *out)
{
        Markers m = {.n = 0};
        return dump(vm, v, opt, out, &m, 0);
}

BodyValue *bv__json_loads(BodyVM *vm, const char *s, size_t len)
{
        _cleanup_json_ json_t *j = NULL;
        json_error_t err;

        j = pyjson_loadb(s, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
        /* CPython's digit limit is int()'s ValueError, not a decode error. */
        if (!j && json_error_code(&err) == json_error_numeric_overflow &&
            strncmp(err.text, "Exceeds", 7) == 0)
                return bv_raise(vm, BV_EXC_VALUE_ERROR,
                                "%s; use sys.set_int_max_str_digits() to increase the limit",
                                err.text);
        if (!j)
                /* jansson's wording differs from CPython's; the position
                 * follows CPython's format (1-based line and column). */
                return bv_raise(vm, BV_EXC_JSON_DECODE_ERROR, "%s: line %d column %d (char %d)",
                                err.text, err.line < 1 ? 1 : err.line,
                                err.column < 1 ? 1 : err.column, err.position);
        return bv_from_json(vm, j, false);
}
