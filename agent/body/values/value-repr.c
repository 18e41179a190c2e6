/* str() and repr() exactly as CPython 3.11 spells them, because they reach
 * shell command lines: quote choice and escapes of strings, float repr,
 * [...] for a list that contains itself, and the str() of exceptions. */
#include "body/values/value-internal.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "util/pyjson.h"
#include "util/utf8.h"

uint32_t bv__cp_at(const char *s, size_t len, size_t off, size_t *ret_size)
{
        uint32_t cp = 0;
        int n = utf8_decode(s + off, len - off, &cp);
        if (n < 0) {
                /* Strings are valid UTF-8 by construction; be safe anyway. */
                cp = (unsigned char)s[off];
                n = 1;
        }
        if (ret_size)
                *ret_size = (size_t)n;
        return cp;
}

int bv__put_cp_escape(StrBuf *out, uint32_t cp)
{
        if (cp < 0x100)
                return strbuf_printf(out, "\\x%02x", cp);
        if (cp < 0x10000)
                return strbuf_printf(out, "\\u%04x", cp);
        return strbuf_printf(out, "\\U%08x", cp);
}

int bv__repr_str(StrBuf *out, const char *s, size_t len)
{
        char quote = '\'';
        size_t i = 0;
        int r;

        if (memchr(s, '\'', len) && !memchr(s, '"', len))
                quote = '"';
        if ((r = strbuf_putc(out, quote)) < 0)
                return r;
        while (i < len) {
                size_t start = i, n;
                /* Copy runs of plain ASCII in one go. */
                while (i < len && (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7f &&
                       s[i] != '\\' && s[i] != quote)
                        i++;
                if (i > start && (r = strbuf_append(out, s + start, i - start)) < 0)
                        return r;
                if (i >= len)
                        break;
                uint32_t cp = bv__cp_at(s, len, i, &n);
                if (cp == (unsigned char)quote || cp == '\\')
                        r = strbuf_printf(out, "\\%c", (char)cp);
                else if (cp == '\n')
                        r = strbuf_puts(out, "\\n");
                else if (cp == '\r')
                        r = strbuf_puts(out, "\\r");
                else if (cp == '\t')
                        r = strbuf_puts(out, "\\t");
                else if (bv__unicode_isprintable(cp))
                        r = strbuf_append(out, s + i, n);
                else
                        r = bv__put_cp_escape(out, cp);
                if (r < 0)
                        return r;
                i += n;
        }
        return strbuf_putc(out, quote);
}

static int repr_value(BodyVM *vm, BodyValue *v, StrBuf *out, BvReprCtx *ctx, bool as_str)
{
        return bv__type(v)->repr(vm, v, out, ctx, as_str);
}

static int repr_items(BodyVM *vm, BodyValue **items, size_t n, StrBuf *out, BvReprCtx *ctx)
{
        for (size_t i = 0; i < n; i++) {
                if (i > 0)
                        BV_PUT(strbuf_puts(out, ", "));
                if (repr_value(vm, items[i], out, ctx, false) < 0)
                        return -1;
        }
        return 0;
}

/* The entries of a dict or set: as the dict/set itself (all == true:
 * "k: v" for dicts, members for sets), or as one of the three views. */
static int repr_dict_items(BodyVM *vm, BodyValue *d, StrBuf *out, BvReprCtx *ctx, bool all,
                           BvDictView view)
{
        size_t pos = 0, i = 0;
        BodyValue *k, *v;
        bool pairs = all ? d->kind == BV_DICT : view == BV_VIEW_ITEMS;

        while (bv_dict_next(d, &pos, &k, &v)) {
                if (i++ > 0)
                        BV_PUT(strbuf_puts(out, ", "));
                if (!all && view == BV_VIEW_ITEMS)
                        BV_PUT(strbuf_putc(out, '('));
                if ((all || view != BV_VIEW_VALUES) && repr_value(vm, k, out, ctx, false) < 0)
                        return -1;
                if (pairs)
                        BV_PUT(strbuf_puts(out, all ? ": " : ", "));
                if ((pairs || (!all && view == BV_VIEW_VALUES)) &&
                    repr_value(vm, v, out, ctx, false) < 0)
                        return -1;
                if (!all && view == BV_VIEW_ITEMS)
                        BV_PUT(strbuf_putc(out, ')'));
        }
        return 0;
}

static int put(BodyVM *vm, StrBuf *out, const char *s)
{
        int r = strbuf_puts(out, s);
        return r < 0 ? bv__buf_error(vm, r) : 0;
}

int bv__container_repr(BodyVM *vm, BodyValue *v, StrBuf *out, BvReprCtx *ctx, bool as_str)
{
        const char *close;
        int r;

        for (size_t i = 0; i < ctx->n && i < ELEMENTSOF(ctx->stack); i++)
                if (ctx->stack[i] == v)
                        return put(vm, out,
                                   v->kind == BV_LIST    ? "[...]"
                                   : v->kind == BV_TUPLE ? "(...)"
                                                         : "{...}");
        switch (v->kind) {
        case BV_LIST:
                r = put(vm, out, "[");
                close = "]";
                break;
        case BV_TUPLE:
                r = put(vm, out, "(");
                close = v->list.len == 1 ? ",)" : ")";
                break;
        case BV_SET:
                if (v->dict.len == 0)
                        return put(vm, out, "set()");
                r = put(vm, out, "{");
                close = "}";
                break;
        case BV_DICT:
                r = put(vm, out, "{");
                close = "}";
                break;
        default: /* BV_DICTVIEW */
                r = put(vm, out, bv_type_name(v));
                if (r == 0)
                        r = put(vm, out, "([");
                close = "])";
                break;
        }
        if (r < 0 || bv_depth_enter(vm) < 0)
                return -1;
        if (ctx->n < ELEMENTSOF(ctx->stack))
                ctx->stack[ctx->n] = v;
        ctx->n++;
        if (v->kind == BV_LIST || v->kind == BV_TUPLE)
                r = repr_items(vm, v->list.items, v->list.len, out, ctx);
        else if (v->kind == BV_DICTVIEW)
                r = repr_dict_items(vm, v->dictview.dict, out, ctx, false, v->dictview.view);
        else
                r = repr_dict_items(vm, v, out, ctx, true, BV_VIEW_KEYS);
        ctx->n--;
        bv_depth_leave(vm);
        if (r < 0)
                return -1;
        return put(vm, out, close);
}

int bv__uuid_str(const uint8_t u[16], char buf[static 37])
{
        static const char hex[] = "0123456789abcdef";
        char *p = buf;

        for (int i = 0; i < 16; i++) {
                if (i == 4 || i == 6 || i == 8 || i == 10)
                        *p++ = '-';
                *p++ = hex[u[i] >> 4];
                *p++ = hex[u[i] & 15];
        }
        *p = '\0';
        return 0;
}

static int exc_str(BodyVM *vm, BodyValue *v, StrBuf *out, BvReprCtx *ctx)
{
        BodyValue *args = v->exc.args;
        const BvClass *c = v->exc.cls;

        if (args->list.len == 2 && args->list.items[0]->kind == BV_INT &&
            !args->list.items[0]->big && bv_class_is_subclass(c, bv_exc_class(BV_EXC_OS_ERROR))) {
                BV_PUT(strbuf_printf(out, "[Errno %" PRId64 "] ", args->list.items[0]->i));
                if (repr_value(vm, args->list.items[1], out, ctx, true) < 0)
                        return -1;
                if (v->exc.filename) {
                        BV_PUT(strbuf_puts(out, ": "));
                        return repr_value(vm, v->exc.filename, out, ctx, false);
                }
                return 0;
        }
        if (args->list.len == 0)
                return 0;
        if (args->list.len == 1)
                return repr_value(vm, args->list.items[0], out, ctx,
                                  c != bv_exc_class(BV_EXC_KEY_ERROR));
        return repr_value(vm, args, out, ctx, false);
}

/* ---- the repr slots of the core's kinds ---- */

#define REPR BV__REPR_DECL

REPR(bv__none_repr)
{
        BV_PUT(strbuf_puts(out, "None"));
        return 0;
}

REPR(bv__bool_repr)
{
        BV_PUT(strbuf_puts(out, v->b ? "True" : "False"));
        return 0;
}

REPR(bv__int_repr)
{
        if (v->big)
                return bv__int_str(vm, v, out);
        BV_PUT(strbuf_printf(out, "%" PRId64, v->i));
        return 0;
}

REPR(bv__float_repr)
{
        char buf[40];

        pyfloat_repr(v->f, buf);
        BV_PUT(strbuf_puts(out, buf));
        return 0;
}

REPR(bv__str_repr)
{
        if (as_str)
                BV_PUT(strbuf_append(out, v->str.data, v->str.len));
        else
                BV_PUT(bv__repr_str(out, v->str.data, v->str.len));
        return 0;
}

REPR(bv__range_repr)
{
        if (v->range.z[0])
                return bv__range_repr_big(vm, v, out);
        if (v->range.step == 1)
                BV_PUT(strbuf_printf(out, "range(%" PRId64 ", %" PRId64 ")", v->range.start,
                                     v->range.stop));
        else
                BV_PUT(strbuf_printf(out, "range(%" PRId64 ", %" PRId64 ", %" PRId64 ")",
                                     v->range.start, v->range.stop, v->range.step));
        return 0;
}

REPR(bv__slice_repr)
{
        BV_PUT(strbuf_puts(out, "slice("));
        if (repr_value(vm, v->slice.start, out, ctx, false) < 0)
                return -1;
        BV_PUT(strbuf_puts(out, ", "));
        if (repr_value(vm, v->slice.stop, out, ctx, false) < 0)
                return -1;
        BV_PUT(strbuf_puts(out, ", "));
        if (repr_value(vm, v->slice.step, out, ctx, false) < 0)
                return -1;
        BV_PUT(strbuf_putc(out, ')'));
        return 0;
}

/* <map object at 0x...>: iterators and whatever has no repr of its own. */
REPR(bv__object_repr)
{
        BV_PUT(strbuf_printf(out, "<%s object at %p>", bv_type_name(v), (void *)v));
        return 0;
}

REPR(bv__builtin_repr)
{
        BV_PUT(strbuf_printf(out, "<built-in function %s>", v->builtin->name));
        return 0;
}

REPR(bv__method_repr)
{
        if (v->method.self->kind == BV_CLASS) {
                BV_PUT(strbuf_printf(out, "<method '%s' of '%s' objects>", v->method.def->name,
                                     v->method.self->cls->name));
                return 0;
        }
        BV_PUT(strbuf_printf(out, "<built-in method %s of %s object at %p>", v->method.def->name,
                             bv_type_name(v->method.self), (void *)v->method.self));
        return 0;
}

REPR(bv__function_repr)
{
        BV_PUT(strbuf_printf(out, "<function %s at %p>", v->function.qualname, (void *)v));
        return 0;
}

REPR(bv__module_repr)
{
        BV_PUT(strbuf_printf(out, "<module '%s' (built-in)>", v->module->name));
        return 0;
}

REPR(bv__script_repr)
{
        BV_PUT(strbuf_printf(out, "<muranoagent.script_runner.%s object at %p>", bv_type_name(v),
                             (void *)v));
        return 0;
}

REPR(bv__file_repr)
{
        BV_PUT(strbuf_puts(out, "<_io.TextIOWrapper name="));
        BV_PUT(bv__repr_str(out, v->file.name, strlen(v->file.name)));
        BV_PUT(strbuf_puts(out, " mode="));
        BV_PUT(bv__repr_str(out, v->file.mode, strlen(v->file.mode)));
        BV_PUT(strbuf_puts(out, " encoding='UTF-8'>"));
        return 0;
}

REPR(bv__uuid_repr)
{
        char buf[40];

        bv__uuid_str(v->uuid, buf);
        BV_PUT(strbuf_printf(out, as_str ? "%s" : "UUID('%s')", buf));
        return 0;
}

REPR(bv__exc_repr)
{
        if (as_str)
                return exc_str(vm, v, out, ctx);
        BV_PUT(strbuf_puts(out, v->exc.cls->name));
        if (v->exc.args->list.len == 1) {
                BV_PUT(strbuf_putc(out, '('));
                if (repr_value(vm, v->exc.args->list.items[0], out, ctx, false) < 0)
                        return -1;
                BV_PUT(strbuf_putc(out, ')'));
                return 0;
        }
        return repr_value(vm, v->exc.args, out, ctx, false);
}

REPR(bv__class_repr)
{
        if (v->cls->module)
                BV_PUT(strbuf_printf(out, "<class '%s.%s'>", v->cls->module, v->cls->name));
        else
                BV_PUT(strbuf_printf(out, "<class '%s'>", v->cls->name));
        return 0;
}

int bv_str(BodyVM *vm, BodyValue *v, StrBuf *out)
{
        BvReprCtx ctx = {.n = 0};
        return repr_value(vm, v, out, &ctx, true);
}

int bv_repr(BodyVM *vm, BodyValue *v, StrBuf *out)
{
        BvReprCtx ctx = {.n = 0};
        return repr_value(vm, v, out, &ctx, false);
}

BodyValue *bv_to_str(BodyVM *vm, BodyValue *v)
{
        _cleanup_strbuf_ StrBuf b = bv__buf(vm);

        if (v->kind == BV_STR)
                return bv_ref(v);
        if (bv_str(vm, v, &b) < 0)
                return NULL;
        return bv_str_from_buf(vm, &b);
}

BodyValue *bv_to_repr(BodyVM *vm, BodyValue *v)
{
        _cleanup_strbuf_ StrBuf b = bv__buf(vm);

        if (bv_repr(vm, v, &b) < 0)
                return NULL;
        return bv_str_from_buf(vm, &b);
}
