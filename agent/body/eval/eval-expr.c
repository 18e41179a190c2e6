/* eval-expr: expressions (see eval.h). Calls, functions and comprehensions
 * are in eval-call.c. */
#include <string.h>

#include "body/eval/eval.h"
#include "util/strbuf.h"
#include "util/utf8.h"

static BodyValue *binop_chain(Eval *ev, const AstExpr *e)
{
        BodyVM *vm = ev->vm;
        BodyValue *acc = eval_expr(ev, e->chain.items[0]);
        for (int i = 1; acc && i < e->chain.n; i++) {
                BodyValue *rhs = eval_expr(ev, e->chain.items[i]);
                if (!rhs) {
                        bv_unref(acc);
                        return NULL;
                }
                BodyValue *r = bv_binop(vm, (BvBinOp)e->chain.ops[i - 1], acc, rhs);
                bv_unref(acc);
                bv_unref(rhs);
                acc = r;
        }
        return acc;
}

static BodyValue *boolop(Eval *ev, const AstExpr *e)
{
        /* `and` returns the first false operand, `or` the first true one,
         * else the last: the operands themselves, not booleans. */
        bool is_or = e->op != 0;
        BodyValue *v = eval_expr(ev, e->chain.items[0]);
        for (int i = 1; v && i < e->chain.n; i++) {
                if (bv_truthy(v) == is_or)
                        return v;
                bv_unref(v);
                v = eval_expr(ev, e->chain.items[i]);
        }
        return v;
}

static BodyValue *compare(Eval *ev, const AstExpr *e)
{
        BodyValue *left = eval_expr(ev, e->chain.items[0]);
        if (!left)
                return NULL;
        for (int i = 1; i < e->chain.n; i++) {
                BodyValue *right = eval_expr(ev, e->chain.items[i]);
                if (!right) {
                        bv_unref(left);
                        return NULL;
                }
                int r = bv_compare(ev->vm, (BvCmpOp)e->chain.ops[i - 1], left, right);
                bv_unref(left);
                left = right;
                if (r <= 0) {
                        bv_unref(left);
                        return r < 0 ? NULL : bv_bool(false);
                }
        }
        bv_unref(left);
        return bv_bool(true);
}

static BodyValue *slice_value(Eval *ev, const AstExpr *e)
{
        BodyValue *part[3] = {NULL, NULL, NULL};
        const AstExpr *src[3] = {e->slice.lower, e->slice.upper, e->slice.step};
        BodyValue *r = NULL;
        for (int i = 0; i < 3; i++)
                if (src[i] && !(part[i] = eval_expr(ev, src[i])))
                        goto out;
        r = bv_slice_new(ev->vm, part[0], part[1], part[2]);
out:
        for (int i = 0; i < 3; i++)
                bv_unref(part[i]);
        return r;
}

/* Append the items of an iterable (for *x in a display or a call). */
static int extend_list(Eval *ev, BodyValue *list, BodyValue *iterable)
{
        BodyVM *vm = ev->vm;
        _cleanup_bv_ BodyValue *it = bv_iter(vm, iterable);
        if (!it)
                return -1;
        for (;;) {
                BodyValue *x;
                int r = bv_next(vm, it, &x);
                if (r <= 0)
                        return r;
                if (bv_step(vm) < 0 || bv_list_append_take(vm, list, x) < 0)
                        return -1;
        }
}

static BodyValue *list_display(Eval *ev, const AstExpr *e)
{
        BodyVM *vm = ev->vm;
        _cleanup_bv_ BodyValue *list = bv_list_new(vm, (size_t)e->seq.n);
        if (!list)
                return NULL;
        for (int i = 0; i < e->seq.n; i++) {
                const AstExpr *x = e->seq.items[i];
                if (x->kind == AST_STARRED) {
                        _cleanup_bv_ BodyValue *v = eval_expr(ev, x->starred.value);
                        if (!v || extend_list(ev, list, v) < 0)
                                return eval_fail(ev, x->line);
                        continue;
                }
                BodyValue *v = eval_expr(ev, x);
                if (!v || bv_list_append_take(vm, list, v) < 0)
                        return NULL;
        }
        if (e->kind == AST_LIST)
                return TAKE_PTR(list);
        if (e->kind == AST_TUPLE)
                return bv_tuple_new(vm, list->list.items, list->list.len);
        _cleanup_bv_ BodyValue *set = bv_set_new(vm);
        if (!set)
                return NULL;
        for (size_t i = 0; i < list->list.len; i++)
                if (bv_set_add(vm, set, list->list.items[i]) < 0)
                        return NULL;
        return TAKE_PTR(set);
}

static BodyValue *dict_display(Eval *ev, const AstExpr *e)
{
        BodyVM *vm = ev->vm;
        _cleanup_bv_ BodyValue *d = bv_dict_new(vm);
        if (!d)
                return NULL;
        for (int i = 0; i < e->seq.n; i++) {
                if (!e->seq.items[i]) {
                        /* {**m}: the items of a dict (or a Bunch). */
                        _cleanup_bv_ BodyValue *m = eval_expr(ev, e->seq.values[i]);
                        if (!m)
                                return NULL;
                        if (m->kind != BV_DICT) {
                                bv_raise(vm, BV_EXC_TYPE_ERROR, "'%s' object is not a mapping",
                                         bv_type_name(m));
                                return eval_fail(ev, e->seq.values[i]->line);
                        }
                        size_t pos = 0;
                        BodyValue *k, *v;
                        while (bv_dict_next(m, &pos, &k, &v))
                                if (bv_step(vm) < 0 || bv_dict_set(vm, d, k, v) < 0)
                                        return NULL;
                        continue;
                }
                _cleanup_bv_ BodyValue *k = eval_expr(ev, e->seq.items[i]);
                if (!k)
                        return NULL;
                _cleanup_bv_ BodyValue *v = eval_expr(ev, e->seq.values[i]);
                if (!v)
                        return NULL;
                if (bv_dict_set(vm, d, k, v) < 0)
                        return eval_fail(ev, e->seq.items[i]->line);
        }
        return TAKE_PTR(d);
}

static BodyValue *subscript(Eval *ev, const AstExpr *e)
{
        _cleanup_bv_ BodyValue *obj = eval_expr(ev, e->sub.value);
        if (!obj)
                return NULL;
        _cleanup_bv_ BodyValue *key = e->sub.index->kind == AST_SLICE
                                              ? slice_value(ev, e->sub.index)
                                              : eval_expr(ev, e->sub.index);
        if (!key)
                return NULL;
        return bv_getitem(ev->vm, obj, key);
}

static BodyValue *attribute(Eval *ev, const AstExpr *e)
{
        _cleanup_bv_ BodyValue *obj = eval_expr(ev, e->attr.value);
        if (!obj)
                return NULL;
        return bv_getattr(ev->vm, obj, e->attr.attr);
}

/* ascii(): repr() with every non-ASCII character escaped. */
static int ascii_of(Eval *ev, BodyValue *v, StrBuf *out)
{
        _cleanup_strbuf_ StrBuf r = STRBUF_INIT;
        r.limit = ev->vm->limits.max_string;
        if (bv_repr(ev->vm, v, &r) < 0)
                return -1;
        for (size_t i = 0; i < r.len;) {
                uint32_t cp;
                int n = utf8_decode(r.data + i, r.len - i, &cp);
                int rc;
                if (n < 1)
                        n = 1, cp = (unsigned char)r.data[i];
                if (cp < 0x80)
                        rc = strbuf_putc(out, (char)cp);
                else if (cp <= 0xff)
                        rc = strbuf_printf(out, "\\x%02x", cp);
                else if (cp <= 0xffff)
                        rc = strbuf_printf(out, "\\u%04x", cp);
                else
                        rc = strbuf_printf(out, "\\U%08x", cp);
                if (rc < 0) {
                        bv_raise(ev->vm, BV_EXC_MEMORY_ERROR,
                                 "a string would exceed the Body string limit (%zu bytes)",
                                 ev->vm->limits.max_string);
                        return -1;
                }
                i += (size_t)n;
        }
        return 0;
}

static int fvalue(Eval *ev, const AstExpr *e, StrBuf *out)
{
        BodyVM *vm = ev->vm;
        _cleanup_bv_ BodyValue *v = eval_expr(ev, e->fvalue.value);
        if (!v)
                return -1;
        if (!e->fvalue.spec) {
                switch (e->op) {
                case 'r':
                        return bv_repr(vm, v, out);
                case 'a':
                        return ascii_of(ev, v, out);
                default:
                        /* format(x, '') is str(x) for every type we have. */
                        return bv_str(vm, v, out);
                }
        }
        if (e->op) {
                StrBuf conv = STRBUF_INIT;
                conv.limit = vm->limits.max_string;
                int r = e->op == 'r'   ? bv_repr(vm, v, &conv)
                        : e->op == 'a' ? ascii_of(ev, v, &conv)
                                       : bv_str(vm, v, &conv);
                if (r < 0) {
                        strbuf_free(&conv);
                        return -1;
                }
                bv_unref(v);
                v = bv_str_from_buf(vm, &conv);
                strbuf_free(&conv);
                if (!v)
                        return -1;
        }
        _cleanup_bv_ BodyValue *spec = eval_fstring(ev, e->fvalue.spec);
        if (!spec)
                return -1;
        return ev->lib->format(vm, v, spec->str.data, spec->str.len, out);
}

BodyValue *eval_fstring(Eval *ev, const AstExpr *e)
{
        BodyVM *vm = ev->vm;
        _cleanup_strbuf_ StrBuf out = STRBUF_INIT;
        out.limit = vm->limits.max_string;
        for (int i = 0; i < e->seq.n; i++) {
                const AstExpr *part = e->seq.items[i];
                if (part->kind == AST_STR) {
                        if (strbuf_append(&out, part->str.s, part->str.len) < 0)
                                return bv_raise(vm, BV_EXC_MEMORY_ERROR,
                                                "a string would exceed the Body string limit "
                                                "(%zu bytes)",
                                                vm->limits.max_string);
                        continue;
                }
                if (bv_step(vm) < 0 || fvalue(ev, part, &out) < 0)
                        return eval_fail(ev, part->line);
        }
        return bv_str_from_buf(vm, &out);
}

static BodyValue *constant(Eval *ev, const AstExpr *e)
{
        BodyVM *vm = ev->vm;
        switch (e->kind) {
        case AST_NONE:
                return bv_none();
        case AST_TRUE:
                return bv_bool(true);
        case AST_FALSE:
                return bv_bool(false);
        case AST_INT:
                return bv_int_new(vm, e->i);
        case AST_FLOAT:
                return bv_float_new(vm, e->f);
        case AST_STR:
                return bv_str_new(vm, e->str.s, e->str.len);
        case AST_BIGINT: {
                /* The literal's text, checked by the lexer: base prefix,
                 * digits and underscores, within the digit limit. */
                BodyValue *r = NULL;
                if (bv_int_parse(vm, e->str.s, e->str.len, 0, &r) > 0)
                        return bv_raise(vm, BV_EXC_SYSTEM_ERROR, "bad integer literal");
                return r;
        }
        default:
                return bv_raise(vm, BV_EXC_SYSTEM_ERROR, "unexpected constant");
        }
}

static BodyValue *eval_node(Eval *ev, const AstExpr *e)
{
        BodyVM *vm = ev->vm;
        switch (e->kind) {
        case AST_ATTR:
                return attribute(ev, e);
        case AST_SUBSCRIPT:
                return subscript(ev, e);
        case AST_SLICE:
                return slice_value(ev, e);
        case AST_CALL:
                return eval_call(ev, e);
        case AST_UNARY: {
                _cleanup_bv_ BodyValue *v = eval_expr(ev, e->unary.operand);
                if (!v)
                        return NULL;
                if (e->op == AST_OP_NOT)
                        return bv_bool(!bv_truthy(v));
                return bv_unop(vm, (BvUnaryOp)e->op, v);
        }
        case AST_BINOP:
                return binop_chain(ev, e);
        case AST_BOOLOP:
                return boolop(ev, e);
        case AST_COMPARE:
                return compare(ev, e);
        case AST_IFEXP: {
                _cleanup_bv_ BodyValue *t = eval_expr(ev, e->ifexp.test);
                if (!t)
                        return NULL;
                return eval_expr(ev, bv_truthy(t) ? e->ifexp.body : e->ifexp.orelse);
        }
        case AST_LAMBDA:
                return eval_make_function(ev, e->lambda);
        case AST_TUPLE:
        case AST_LIST:
        case AST_SET:
                return list_display(ev, e);
        case AST_DICT:
                return dict_display(ev, e);
        case AST_LISTCOMP:
        case AST_SETCOMP:
        case AST_DICTCOMP:
        case AST_GENEXP:
                return eval_comprehension(ev, e);
        case AST_FSTRING:
                return eval_fstring(ev, e);
        default:
                return bv_raise(vm, BV_EXC_SYSTEM_ERROR, "unexpected expression");
        }
}

BodyValue *eval_expr(Eval *ev, const AstExpr *e)
{
        BodyVM *vm = ev->vm;
        if (bv_step(vm) < 0)
                return eval_fail(ev, e->line);
        BodyValue *r;
        switch (e->kind) {
        case AST_NAME:
                r = eval_load_name(ev, e);
                break;
        case AST_NONE:
        case AST_TRUE:
        case AST_FALSE:
        case AST_INT:
        case AST_FLOAT:
        case AST_STR:
        case AST_BIGINT:
                r = constant(ev, e);
                break;
        default:
                /* Nested evaluation counts against max_depth, which also
                 * bounds how deep the C stack goes. */
                if (bv_depth_enter(vm) < 0)
                        return eval_fail(ev, e->line);
                r = eval_node(ev, e);
                bv_depth_leave(vm);
                break;
        }
        if (!r)
                return eval_fail(ev, e->line);
        return r;
}
