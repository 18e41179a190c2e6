/* eval-stmt: statements, assignment targets and control flow (see eval.h). */
#include <string.h>

#include "body/eval/eval.h"

static ExecResult fail(Eval *ev, int line)
{
        eval_fail(ev, line);
        return EXEC_ERROR;
}

static int assign_unpack(Eval *ev, const AstExpr *target, BodyValue *v)
{
        BodyVM *vm = ev->vm;
        int n = target->seq.n, star = -1;
        for (int i = 0; i < n; i++)
                if (target->seq.items[i]->kind == AST_STARRED)
                        star = i;
        if (star < 0) {
                BodyValue *small[8], **out = small;
                if ((size_t)n > ELEMENTSOF(small) &&
                    !(out = bv_mem_alloc(vm, (size_t)n * sizeof(*out))))
                        return -1;
                int unpacked = bv_unpack(vm, v, (size_t)n, out);
                int r = unpacked;
                for (int i = 0; r == 0 && i < n; i++)
                        r = eval_assign(ev, target->seq.items[i], out[i]);
                if (unpacked == 0)
                        for (int i = 0; i < n; i++)
                                bv_unref(out[i]);
                if (out != small)
                        bv_mem_free(vm, out, (size_t)n * sizeof(*out));
                return r;
        }
        /* a, *b, c = v: the starred target takes a list of what is left. */
        if (v->kind != BV_LIST && v->kind != BV_TUPLE && v->kind != BV_STR && v->kind != BV_DICT &&
            v->kind != BV_SET && v->kind != BV_DICTVIEW && v->kind != BV_RANGE &&
            v->kind != BV_ITER && v->kind != BV_FILE) {
                bv_raise(vm, BV_EXC_TYPE_ERROR, "cannot unpack non-iterable %s object",
                         bv_type_name(v));
                return -1;
        }
        _cleanup_bv_ BodyValue *all = bv_list_from_iterable(vm, v);
        if (!all)
                return -1;
        size_t len = all->list.len, before = (size_t)star, after = (size_t)(n - star - 1);
        if (len < before + after) {
                bv_raise(vm, BV_EXC_VALUE_ERROR,
                         "not enough values to unpack (expected at least %zu, got %zu)",
                         before + after, len);
                return -1;
        }
        for (size_t i = 0; i < before; i++)
                if (eval_assign(ev, target->seq.items[i], all->list.items[i]) < 0)
                        return -1;
        _cleanup_bv_ BodyValue *mid = bv_list_new(vm, len - before - after);
        if (!mid)
                return -1;
        for (size_t i = before; i < len - after; i++)
                if (bv_list_append(vm, mid, all->list.items[i]) < 0)
                        return -1;
        if (eval_assign(ev, target->seq.items[star]->starred.value, mid) < 0)
                return -1;
        for (size_t i = 0; i < after; i++)
                if (eval_assign(ev, target->seq.items[star + 1 + (int)i],
                                all->list.items[len - after + i]) < 0)
                        return -1;
        return 0;
}

int eval_assign(Eval *ev, const AstExpr *target, BodyValue *v)
{
        BodyVM *vm = ev->vm;
        int r;
        switch (target->kind) {
        case AST_NAME:
                return eval_store_name(ev, target, v);
        case AST_ATTR: {
                _cleanup_bv_ BodyValue *obj = eval_expr(ev, target->attr.value);
                r = obj ? bv_setattr(vm, obj, target->attr.attr, v) : -1;
                break;
        }
        case AST_SUBSCRIPT: {
                _cleanup_bv_ BodyValue *obj = eval_expr(ev, target->sub.value);
                if (!obj)
                        return -1;
                _cleanup_bv_ BodyValue *key = eval_expr(ev, target->sub.index);
                r = key ? bv_setitem(vm, obj, key, v) : -1;
                break;
        }
        case AST_TUPLE:
        case AST_LIST:
                r = assign_unpack(ev, target, v);
                break;
        default:
                bv_raise(vm, BV_EXC_SYSTEM_ERROR, "cannot assign to %d", target->kind);
                r = -1;
                break;
        }
        if (r < 0)
                eval_fail(ev, target->line);
        return r;
}

static int delete_target(Eval *ev, const AstExpr *t)
{
        BodyVM *vm = ev->vm;
        int r;
        switch (t->kind) {
        case AST_NAME:
                r = eval_delete_name(ev, t);
                break;
        case AST_ATTR: {
                _cleanup_bv_ BodyValue *obj = eval_expr(ev, t->attr.value);
                r = obj ? bv_delattr(vm, obj, t->attr.attr) : -1;
                break;
        }
        case AST_SUBSCRIPT: {
                _cleanup_bv_ BodyValue *obj = eval_expr(ev, t->sub.value);
                if (!obj)
                        return -1;
                _cleanup_bv_ BodyValue *key = eval_expr(ev, t->sub.index);
                r = key ? bv_delitem(vm, obj, key) : -1;
                break;
        }
        default:
                for (int i = 0; i < t->seq.n; i++)
                        if (delete_target(ev, t->seq.items[i]) < 0)
                                return -1;
                return 0;
        }
        if (r < 0)
                eval_fail(ev, t->line);
        return r;
}

static ExecResult augassign(Eval *ev, const AstStmt *s)
{
        BodyVM *vm = ev->vm;
        const AstExpr *t = s->aug.target;
        _cleanup_bv_ BodyValue *obj = NULL, *key = NULL, *old = NULL, *rhs = NULL, *nv = NULL;
        switch (t->kind) {
        case AST_NAME:
                old = eval_load_name(ev, t);
                break;
        case AST_ATTR:
                obj = eval_expr(ev, t->attr.value);
                old = obj ? bv_getattr(vm, obj, t->attr.attr) : NULL;
                break;
        default:
                obj = eval_expr(ev, t->sub.value);
                key = obj ? eval_expr(ev, t->sub.index) : NULL;
                old = key ? bv_getitem(vm, obj, key) : NULL;
                break;
        }
        if (!old)
                return fail(ev, t->line);
        rhs = eval_expr(ev, s->aug.value);
        if (!rhs)
                return EXEC_ERROR;
        nv = bv_binop_inplace(vm, (BvBinOp)s->op, old, rhs);
        if (!nv)
                return fail(ev, s->line);
        int r;
        if (t->kind == AST_NAME)
                r = eval_store_name(ev, t, nv);
        else if (t->kind == AST_ATTR)
                r = bv_setattr(vm, obj, t->attr.attr, nv);
        else
                r = bv_setitem(vm, obj, key, nv);
        return r < 0 ? fail(ev, s->line) : EXEC_NORMAL;
}

static ExecResult for_stmt(Eval *ev, const AstStmt *s)
{
        BodyVM *vm = ev->vm;
        _cleanup_bv_ BodyValue *src = eval_expr(ev, s->for_.iter);
        if (!src)
                return EXEC_ERROR;
        _cleanup_bv_ BodyValue *it = bv_iter(vm, src);
        if (!it)
                return fail(ev, s->for_.iter->line);
        for (;;) {
                BodyValue *x;
                int r = bv_next(vm, it, &x);
                if (r < 0)
                        return fail(ev, s->line);
                if (r == 0)
                        break;
                r = bv_step(vm) < 0 ? -1 : eval_assign(ev, s->for_.target, x);
                bv_unref(x);
                if (r < 0)
                        return fail(ev, s->line);
                ExecResult e = eval_block(ev, s->for_.body, s->for_.n_body);
                if (e == EXEC_BREAK)
                        return EXEC_NORMAL;
                if (e == EXEC_RETURN || e == EXEC_ERROR)
                        return e;
        }
        return eval_block(ev, s->for_.orelse, s->for_.n_orelse);
}

static ExecResult while_stmt(Eval *ev, const AstStmt *s)
{
        for (;;) {
                BodyValue *t = eval_expr(ev, s->if_.test);
                if (!t)
                        return EXEC_ERROR;
                bool go = bv_truthy(t);
                bv_unref(t);
                if (!go)
                        break;
                ExecResult e = eval_block(ev, s->if_.body, s->if_.n_body);
                if (e == EXEC_BREAK)
                        return EXEC_NORMAL;
                if (e == EXEC_RETURN || e == EXEC_ERROR)
                        return e;
        }
        return eval_block(ev, s->if_.orelse, s->if_.n_orelse);
}

/* Run a try statement's except clauses for the pending exception. */
static ExecResult handle(Eval *ev, const AstStmt *s)
{
        BodyVM *vm = ev->vm;
        int line = vm->exc_line;
        _cleanup_bv_ BodyValue *exc = bv_exc_take(vm);
        for (int i = 0; i < s->try_.n_handlers; i++) {
                const AstHandler *h = &s->try_.handlers[i];
                int match;
                if (!h->type) {
                        match = bv_exc_catchable(exc);
                } else {
                        _cleanup_bv_ BodyValue *t = eval_expr(ev, h->type);
                        if (!t)
                                return EXEC_ERROR;
                        match = bv_exc_match(vm, exc, t);
                        if (match < 0)
                                return fail(ev, h->line);
                }
                if (!match)
                        continue;
                if (h->name && eval_store_name(ev, h->name, exc) < 0)
                        return EXEC_ERROR;
                Handled handled = {.exc = exc, .line = line, .prev = ev->handled};
                ev->handled = &handled;
                ExecResult r = eval_block(ev, h->body, h->n_body);
                ev->handled = handled.prev;
                /* `except E as e` ends with an implicit `del e`. */
                if (h->name) {
                        const AstExpr *n = h->name;
                        if (n->name.scope == AST_SCOPE_LOCAL) {
                                bv_unref(ev->frame->env->list.items[n->name.slot]);
                                ev->frame->env->list.items[n->name.slot] = NULL;
                        } else if (n->name.scope == AST_SCOPE_GLOBAL) {
                                bv_unref(ev->globals[n->name.slot]);
                                ev->globals[n->name.slot] = NULL;
                        }
                }
                return r;
        }
        bv_exc_restore(vm, exc, line);
        return EXEC_ERROR;
}

static ExecResult try_stmt(Eval *ev, const AstStmt *s)
{
        BodyVM *vm = ev->vm;
        ExecResult r = eval_block(ev, s->try_.body, s->try_.n_body);
        if (r == EXEC_ERROR && vm->fatal == 0 && s->try_.n_handlers > 0)
                r = handle(ev, s);
        else if (r == EXEC_NORMAL)
                r = eval_block(ev, s->try_.orelse, s->try_.n_orelse);
        if (s->try_.n_final == 0 || vm->fatal < 0)
                return r;
        /* finally: runs whatever happened, and what it does itself (return,
         * break, an exception) replaces what was going on. */
        int line = vm->exc_line;
        _cleanup_bv_ BodyValue *exc = r == EXEC_ERROR ? bv_exc_take(vm) : NULL;
        _cleanup_bv_ BodyValue *ret = NULL;
        if (r == EXEC_RETURN)
                ret = TAKE_PTR(ev->frame->retval);
        ExecResult f = eval_block(ev, s->try_.final, s->try_.n_final);
        if (f != EXEC_NORMAL)
                return f;
        if (exc)
                bv_exc_restore(vm, exc, line);
        if (ret)
                ev->frame->retval = TAKE_PTR(ret);
        return r;
}

/* The exit of a with block: close the file, keeping the block's own
 * exception (a file's __exit__ never swallows one). */
static ExecResult with_exit(Eval *ev, BodyValue *ctx, ExecResult r, int line)
{
        BodyVM *vm = ev->vm;
        int exc_line = vm->exc_line;
        _cleanup_bv_ BodyValue *exc = r == EXEC_ERROR ? bv_exc_take(vm) : NULL;
        _cleanup_bv_ BodyValue *close = bv_getattr(vm, ctx, "close");
        _cleanup_bv_ BodyValue *res = close ? bv_call(vm, close, NULL, 0, NULL) : NULL;
        if (!res)
                return fail(ev, line);
        if (exc)
                bv_exc_restore(vm, exc, exc_line);
        return r;
}

static ExecResult with_stmt(Eval *ev, const AstStmt *s, int i)
{
        BodyVM *vm = ev->vm;
        if (i == s->with.n_items)
                return eval_block(ev, s->with.body, s->with.n_body);
        const AstWithItem *w = &s->with.items[i];
        _cleanup_bv_ BodyValue *ctx = eval_expr(ev, w->ctx);
        if (!ctx)
                return EXEC_ERROR;
        /* Files are the only context managers a Body can make: __enter__
         * returns the file and __exit__ closes it. */
        if (ctx->kind != BV_FILE) {
                bv_raise(vm, BV_EXC_TYPE_ERROR,
                         "'%s' object does not support the context manager protocol",
                         bv_type_name(ctx));
                return fail(ev, s->line);
        }
        if (!ctx->file.fp) {
                bv_raise(vm, BV_EXC_VALUE_ERROR, "I/O operation on closed file.");
                return fail(ev, s->line);
        }
        ExecResult r;
        if (w->target && eval_assign(ev, w->target, ctx) < 0)
                r = EXEC_ERROR;
        else
                r = with_stmt(ev, s, i + 1);
        if (vm->fatal < 0)
                return EXEC_ERROR;
        return with_exit(ev, ctx, r, s->line);
}

static ExecResult raise_stmt(Eval *ev, const AstStmt *s)
{
        BodyVM *vm = ev->vm;
        if (!s->raise.exc) {
                if (!ev->handled) {
                        bv_raise(vm, BV_EXC_RUNTIME_ERROR, "No active exception to reraise");
                        return fail(ev, s->line);
                }
                bv_exc_restore(vm, ev->handled->exc, ev->handled->line);
                return EXEC_ERROR;
        }
        _cleanup_bv_ BodyValue *x = eval_expr(ev, s->raise.exc);
        if (!x)
                return EXEC_ERROR;
        if (s->raise.cause) {
                _cleanup_bv_ BodyValue *c = eval_expr(ev, s->raise.cause);
                if (!c)
                        return EXEC_ERROR;
                bool ok = c->kind == BV_NONE || c->kind == BV_EXCEPTION ||
                          (c->kind == BV_CLASS && (c->cls->flags & BV_CLASS_EXCEPTION));
                if (!ok) {
                        bv_raise(vm, BV_EXC_TYPE_ERROR,
                                 "exception causes must derive from BaseException");
                        return fail(ev, s->line);
                }
        }
        bv_raise_object(vm, x);
        return fail(ev, s->line);
}

static ExecResult import_stmt(Eval *ev, const AstStmt *s)
{
        BodyVM *vm = ev->vm;
        for (int i = 0; i < s->import.n_names; i++) {
                const AstAlias *a = &s->import.names[i];
                BodyValue *m = ev->lib->import(vm, a->name);
                if (m && a->module != a->name)
                        m = ev->lib->import(vm, a->module);
                if (!m)
                        return fail(ev, s->line);
                int r = eval_store_name(ev, a->target, m);
                bv_unref(m);
                if (r < 0)
                        return fail(ev, s->line);
        }
        return EXEC_NORMAL;
}

static ExecResult import_from_stmt(Eval *ev, const AstStmt *s)
{
        BodyVM *vm = ev->vm;
        _cleanup_bv_ BodyValue *m = ev->lib->import(vm, s->import.module);
        if (!m)
                return fail(ev, s->line);
        for (int i = 0; i < s->import.n_names; i++) {
                const AstAlias *a = &s->import.names[i];
                _cleanup_bv_ BodyValue *v = bv_getattr(vm, m, a->name);
                if (!v) {
                        if (vm->exc && vm->exc->exc.cls == bv_exc_class(BV_EXC_ATTRIBUTE_ERROR))
                                bv_raise(vm, BV_EXC_IMPORT_ERROR,
                                         "cannot import name '%s' from '%s' (unknown location)",
                                         a->name, s->import.module);
                        return fail(ev, s->line);
                }
                if (eval_store_name(ev, a->target, v) < 0)
                        return fail(ev, s->line);
        }
        return EXEC_NORMAL;
}

static ExecResult assert_stmt(Eval *ev, const AstStmt *s)
{
        BodyVM *vm = ev->vm;
        _cleanup_bv_ BodyValue *t = eval_expr(ev, s->assert_.test);
        if (!t)
                return EXEC_ERROR;
        if (bv_truthy(t))
                return EXEC_NORMAL;
        _cleanup_bv_ BodyValue *msg = NULL;
        if (s->assert_.msg && !(msg = eval_expr(ev, s->assert_.msg)))
                return EXEC_ERROR;
        BodyValue *cls = (BodyValue *)&bv_exc_class(BV_EXC_ASSERTION_ERROR)->value;
        _cleanup_bv_ BodyValue *exc = bv_call(vm, cls, msg ? &msg : NULL, msg ? 1 : 0, NULL);
        if (exc)
                bv_raise_object(vm, exc);
        return fail(ev, s->line);
}

static ExecResult exec_stmt(Eval *ev, const AstStmt *s)
{
        BodyVM *vm = ev->vm;
        if (bv_step(vm) < 0)
                return fail(ev, s->line);
        switch (s->kind) {
        case AST_S_EXPR: {
                BodyValue *v = eval_expr(ev, s->expr.value);
                if (!v)
                        return EXEC_ERROR;
                bv_unref(v);
                return EXEC_NORMAL;
        }
        case AST_S_ASSIGN: {
                _cleanup_bv_ BodyValue *v = eval_expr(ev, s->assign.value);
                if (!v)
                        return EXEC_ERROR;
                for (int i = 0; i < s->assign.n_targets; i++)
                        if (eval_assign(ev, s->assign.targets[i], v) < 0)
                                return EXEC_ERROR;
                return EXEC_NORMAL;
        }
        case AST_S_AUGASSIGN:
                return augassign(ev, s);
        case AST_S_RETURN: {
                BodyValue *v = s->expr.value ? eval_expr(ev, s->expr.value) : bv_none();
                if (!v)
                        return EXEC_ERROR;
                bv_unref(ev->frame->retval);
                ev->frame->retval = v;
                return EXEC_RETURN;
        }
        case AST_S_IF: {
                BodyValue *t = eval_expr(ev, s->if_.test);
                if (!t)
                        return EXEC_ERROR;
                bool yes = bv_truthy(t);
                bv_unref(t);
                if (yes)
                        return eval_block(ev, s->if_.body, s->if_.n_body);
                return eval_block(ev, s->if_.orelse, s->if_.n_orelse);
        }
        case AST_S_FOR:
                return for_stmt(ev, s);
        case AST_S_WHILE:
                return while_stmt(ev, s);
        case AST_S_BREAK:
                return EXEC_BREAK;
        case AST_S_CONTINUE:
                return EXEC_CONTINUE;
        case AST_S_PASS:
                return EXEC_NORMAL;
        case AST_S_IMPORT:
                return import_stmt(ev, s);
        case AST_S_IMPORTFROM:
                return import_from_stmt(ev, s);
        case AST_S_WITH:
                return with_stmt(ev, s, 0);
        case AST_S_TRY:
                return try_stmt(ev, s);
        case AST_S_RAISE:
                return raise_stmt(ev, s);
        case AST_S_DEF: {
                _cleanup_bv_ BodyValue *f = eval_make_function(ev, s->def.fn);
                if (!f || eval_store_name(ev, s->def.target, f) < 0)
                        return fail(ev, s->line);
                return EXEC_NORMAL;
        }
        case AST_S_DEL:
                for (int i = 0; i < s->del.n_targets; i++)
                        if (delete_target(ev, s->del.targets[i]) < 0)
                                return EXEC_ERROR;
                return EXEC_NORMAL;
        case AST_S_ASSERT:
                return assert_stmt(ev, s);
        default:
                bv_raise(vm, BV_EXC_SYSTEM_ERROR, "unexpected statement");
                return fail(ev, s->line);
        }
}

ExecResult eval_block(Eval *ev, AstStmt *const *body, int n)
{
        for (int i = 0; i < n; i++) {
                ExecResult r = exec_stmt(ev, body[i]);
                if (r != EXEC_NORMAL)
                        return r;
        }
        return EXEC_NORMAL;
}
