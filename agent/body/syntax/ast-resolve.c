/* ast-resolve: Python's scope rules, decided once before evaluation.
 *
 * A name assigned anywhere in a function (parameter, assignment target,
 * for/with/except target, import, def, del) is local to the whole function,
 * which is why reading it before the assignment is an UnboundLocalError.
 * Other names are looked up in the enclosing functions (closures), then in
 * the module's globals and the builtins. Comprehensions and lambdas are
 * functions of their own, as in Python 3. The first pass collects every
 * scope's locals; the second annotates every AST_NAME and reports what
 * CPython's compiler reports: 'break' outside loop and the like. */
#include <string.h>

#include "body/syntax/ast.h"

typedef struct Resolver {
        AstArena *arena;
        AstError *err;
        AstScope *module;
} Resolver;

static int nomem(Resolver *r)
{
        return ast_error_replace(r->err, AST_ERR_NOMEM, 0, "out of memory");
}

static int declare(Resolver *r, AstScope *s, const char *name)
{
        if (ast_scope_slot(s, r->arena, name, true) < -1)
                return nomem(r);
        return 0;
}

static int declare_target(Resolver *r, AstScope *s, AstExpr *t)
{
        switch (t->kind) {
        case AST_NAME:
                return declare(r, s, t->name.id);
        case AST_TUPLE:
        case AST_LIST:
                for (int i = 0; i < t->seq.n; i++)
                        if (declare_target(r, s, t->seq.items[i]) < 0)
                                return -1;
                return 0;
        case AST_STARRED:
                return declare_target(r, s, t->starred.value);
        default:
                return 0;
        }
}

typedef int (*ExprVisit)(Resolver *r, AstScope *s, AstExpr *e);

/* Visit, in evaluation order, the sub-expressions of the expression kinds
 * whose children all belong to the same scope as the expression itself.
 * Both passes share this; each handles names, lambdas and comprehensions
 * (which open scopes) itself. Returns -1 on the first failure, 0 when done,
 * 1 when e is not one of these kinds. */
static int visit_children(Resolver *r, AstScope *s, AstExpr *e, ExprVisit visit)
{
        switch (e->kind) {
        case AST_ATTR:
                return visit(r, s, e->attr.value);
        case AST_SUBSCRIPT:
                return visit(r, s, e->sub.value) < 0 ? -1 : visit(r, s, e->sub.index);
        case AST_SLICE:
                return visit(r, s, e->slice.lower) < 0 || visit(r, s, e->slice.upper) < 0
                               ? -1
                               : visit(r, s, e->slice.step);
        case AST_CALL:
                if (visit(r, s, e->call.func) < 0)
                        return -1;
                for (int i = 0; i < e->call.n_args; i++)
                        if (visit(r, s, e->call.args[i]) < 0)
                                return -1;
                for (int i = 0; i < e->call.n_kw; i++)
                        if (visit(r, s, e->call.kw[i].value) < 0)
                                return -1;
                return 0;
        case AST_UNARY:
                return visit(r, s, e->unary.operand);
        case AST_BINOP:
        case AST_BOOLOP:
        case AST_COMPARE:
                for (int i = 0; i < e->chain.n; i++)
                        if (visit(r, s, e->chain.items[i]) < 0)
                                return -1;
                return 0;
        case AST_IFEXP:
                return visit(r, s, e->ifexp.test) < 0 || visit(r, s, e->ifexp.body) < 0
                               ? -1
                               : visit(r, s, e->ifexp.orelse);
        case AST_TUPLE:
        case AST_LIST:
        case AST_SET:
        case AST_FSTRING:
                for (int i = 0; i < e->seq.n; i++)
                        if (visit(r, s, e->seq.items[i]) < 0)
                                return -1;
                return 0;
        case AST_DICT:
                for (int i = 0; i < e->seq.n; i++)
                        if (visit(r, s, e->seq.items[i]) < 0 || visit(r, s, e->seq.values[i]) < 0)
                                return -1;
                return 0;
        case AST_FVALUE:
                return visit(r, s, e->fvalue.value) < 0 ? -1 : visit(r, s, e->fvalue.spec);
        case AST_STARRED:
                return visit(r, s, e->starred.value);
        default:
                return 1;
        }
}

static int collect_stmts(Resolver *r, AstScope *s, AstStmt **b, int n);
static int collect_expr(Resolver *r, AstScope *s, AstExpr *e);

static AstScope *closure_parent(AstScope *s)
{
        return s->is_module ? NULL : s;
}

/* CPython's __qualname__: "f" at module level, "outer.<locals>.f" inside. */
static int set_qualname(Resolver *r, AstScope *outer, AstFunction *fn)
{
        if (!outer->qualname) {
                fn->qualname = fn->name;
        } else {
                size_t a = strlen(outer->qualname), b = strlen(fn->name);
                char *q = ast_alloc(r->arena, a + b + sizeof(".<locals>."));
                if (!q)
                        return nomem(r);
                memcpy(q, outer->qualname, a);
                memcpy(q + a, ".<locals>.", 10);
                memcpy(q + a + 10, fn->name, b + 1);
                fn->qualname = q;
        }
        fn->scope.qualname = fn->qualname;
        return 0;
}

static int collect_params(Resolver *r, AstScope *outer, AstFunction *fn)
{
        AstParams *pa = &fn->params;
        fn->scope.parent = closure_parent(outer);
        if (set_qualname(r, outer, fn) < 0)
                return -1;
        for (int i = 0; i < pa->n_pos + pa->n_kwonly; i++)
                if (declare(r, &fn->scope, pa->names[i]) < 0)
                        return -1;
        if (pa->vararg && declare(r, &fn->scope, pa->vararg) < 0)
                return -1;
        if (pa->kwarg && declare(r, &fn->scope, pa->kwarg) < 0)
                return -1;
        /* Defaults are evaluated where the function is defined. */
        for (int i = 0; i < pa->n_defaults; i++)
                if (collect_expr(r, outer, pa->defaults[i]) < 0)
                        return -1;
        for (int i = 0; i < pa->n_kwonly; i++)
                if (pa->kw_defaults[i] && collect_expr(r, outer, pa->kw_defaults[i]) < 0)
                        return -1;
        return 0;
}

static int collect_expr(Resolver *r, AstScope *s, AstExpr *e)
{
        if (!e)
                return 0;
        switch (e->kind) {
        case AST_LAMBDA:
                if (collect_params(r, s, e->lambda) < 0)
                        return -1;
                return collect_expr(r, &e->lambda->scope, e->lambda->expr);
        case AST_LISTCOMP:
        case AST_SETCOMP:
        case AST_DICTCOMP:
        case AST_GENEXP: {
                AstScope *cs = &e->comp.fn->scope;
                cs->parent = closure_parent(s);
                if (set_qualname(r, s, e->comp.fn) < 0)
                        return -1;
                /* The first iterable belongs to the enclosing scope. */
                if (collect_expr(r, s, e->comp.gens[0].iter) < 0)
                        return -1;
                for (int g = 0; g < e->comp.n_gens; g++) {
                        AstComprehension *c = &e->comp.gens[g];
                        if (declare_target(r, cs, c->target) < 0 ||
                            (g > 0 && collect_expr(r, cs, c->iter) < 0))
                                return -1;
                        for (int k = 0; k < c->n_ifs; k++)
                                if (collect_expr(r, cs, c->ifs[k]) < 0)
                                        return -1;
                }
                return collect_expr(r, cs, e->comp.elt) < 0 ? -1
                                                            : collect_expr(r, cs, e->comp.value);
        }
        default:
                return visit_children(r, s, e, collect_expr) < 0 ? -1 : 0;
        }
}

static int collect_stmt(Resolver *r, AstScope *s, AstStmt *st)
{
        switch (st->kind) {
        case AST_S_EXPR:
        case AST_S_RETURN:
                return collect_expr(r, s, st->expr.value);
        case AST_S_ASSIGN:
                for (int i = 0; i < st->assign.n_targets; i++)
                        if (declare_target(r, s, st->assign.targets[i]) < 0 ||
                            collect_expr(r, s, st->assign.targets[i]) < 0)
                                return -1;
                return collect_expr(r, s, st->assign.value);
        case AST_S_AUGASSIGN:
                if (declare_target(r, s, st->aug.target) < 0 ||
                    collect_expr(r, s, st->aug.target) < 0)
                        return -1;
                return collect_expr(r, s, st->aug.value);
        case AST_S_IF:
        case AST_S_WHILE:
                if (collect_expr(r, s, st->if_.test) < 0 ||
                    collect_stmts(r, s, st->if_.body, st->if_.n_body) < 0)
                        return -1;
                return collect_stmts(r, s, st->if_.orelse, st->if_.n_orelse);
        case AST_S_FOR:
                if (declare_target(r, s, st->for_.target) < 0 ||
                    collect_expr(r, s, st->for_.target) < 0 ||
                    collect_expr(r, s, st->for_.iter) < 0 ||
                    collect_stmts(r, s, st->for_.body, st->for_.n_body) < 0)
                        return -1;
                return collect_stmts(r, s, st->for_.orelse, st->for_.n_orelse);
        case AST_S_IMPORT:
        case AST_S_IMPORTFROM:
                for (int i = 0; i < st->import.n_names; i++)
                        if (declare_target(r, s, st->import.names[i].target) < 0)
                                return -1;
                return 0;
        case AST_S_WITH:
                for (int i = 0; i < st->with.n_items; i++) {
                        AstWithItem *w = &st->with.items[i];
                        if (collect_expr(r, s, w->ctx) < 0)
                                return -1;
                        if (w->target && (declare_target(r, s, w->target) < 0 ||
                                          collect_expr(r, s, w->target) < 0))
                                return -1;
                }
                return collect_stmts(r, s, st->with.body, st->with.n_body);
        case AST_S_TRY:
                if (collect_stmts(r, s, st->try_.body, st->try_.n_body) < 0)
                        return -1;
                for (int i = 0; i < st->try_.n_handlers; i++) {
                        AstHandler *h = &st->try_.handlers[i];
                        if (collect_expr(r, s, h->type) < 0 ||
                            (h->name && declare_target(r, s, h->name) < 0) ||
                            collect_stmts(r, s, h->body, h->n_body) < 0)
                                return -1;
                }
                if (collect_stmts(r, s, st->try_.orelse, st->try_.n_orelse) < 0)
                        return -1;
                return collect_stmts(r, s, st->try_.final, st->try_.n_final);
        case AST_S_RAISE:
                return collect_expr(r, s, st->raise.exc) < 0 ? -1
                                                             : collect_expr(r, s, st->raise.cause);
        case AST_S_DEF:
                if (declare_target(r, s, st->def.target) < 0 ||
                    collect_params(r, s, st->def.fn) < 0)
                        return -1;
                return collect_stmts(r, &st->def.fn->scope, st->def.fn->body, st->def.fn->n_body);
        case AST_S_DEL:
                for (int i = 0; i < st->del.n_targets; i++)
                        if (declare_target(r, s, st->del.targets[i]) < 0 ||
                            collect_expr(r, s, st->del.targets[i]) < 0)
                                return -1;
                return 0;
        case AST_S_ASSERT:
                return collect_expr(r, s, st->assert_.test) < 0
                               ? -1
                               : collect_expr(r, s, st->assert_.msg);
        default:
                return 0;
        }
}

static int collect_stmts(Resolver *r, AstScope *s, AstStmt **b, int n)
{
        for (int i = 0; i < n; i++)
                if (collect_stmt(r, s, b[i]) < 0)
                        return -1;
        return 0;
}

/* ---- second pass --------------------------------------------------------- */

static int resolve_name(Resolver *r, AstScope *s, AstExpr *e)
{
        if (!s->is_module) {
                int slot = ast_scope_slot(s, r->arena, e->name.id, false);
                if (slot >= 0) {
                        e->name.scope = AST_SCOPE_LOCAL;
                        e->name.slot = slot;
                        return 0;
                }
                int up = 0;
                for (AstScope *t = s->parent; t; t = t->parent) {
                        up++;
                        slot = ast_scope_slot(t, r->arena, e->name.id, false);
                        if (slot >= 0) {
                                e->name.scope = AST_SCOPE_FREE;
                                e->name.up = (int16_t)up;
                                e->name.slot = slot;
                                return 0;
                        }
                }
        }
        int g = ast_scope_slot(r->module, r->arena, e->name.id, true);
        if (g < 0)
                return nomem(r);
        e->name.scope = AST_SCOPE_GLOBAL;
        e->name.slot = g;
        return 0;
}

static int resolve_stmts(Resolver *r, AstScope *s, AstStmt **b, int n, int loops);
static int resolve_expr(Resolver *r, AstScope *s, AstExpr *e);

static int resolve_function(Resolver *r, AstScope *outer, AstFunction *fn)
{
        AstParams *pa = &fn->params;
        for (int i = 0; i < pa->n_defaults; i++)
                if (resolve_expr(r, outer, pa->defaults[i]) < 0)
                        return -1;
        for (int i = 0; i < pa->n_kwonly; i++)
                if (resolve_expr(r, outer, pa->kw_defaults[i]) < 0)
                        return -1;
        if (fn->expr)
                return resolve_expr(r, &fn->scope, fn->expr);
        return resolve_stmts(r, &fn->scope, fn->body, fn->n_body, 0);
}

static int resolve_expr(Resolver *r, AstScope *s, AstExpr *e)
{
        if (!e)
                return 0;
        switch (e->kind) {
        case AST_NAME:
                return resolve_name(r, s, e);
        case AST_LAMBDA:
                return resolve_function(r, s, e->lambda);
        case AST_LISTCOMP:
        case AST_SETCOMP:
        case AST_DICTCOMP:
        case AST_GENEXP: {
                AstScope *cs = &e->comp.fn->scope;
                if (resolve_expr(r, s, e->comp.gens[0].iter) < 0)
                        return -1;
                for (int g = 0; g < e->comp.n_gens; g++) {
                        AstComprehension *c = &e->comp.gens[g];
                        if (resolve_expr(r, cs, c->target) < 0 ||
                            (g > 0 && resolve_expr(r, cs, c->iter) < 0))
                                return -1;
                        for (int k = 0; k < c->n_ifs; k++)
                                if (resolve_expr(r, cs, c->ifs[k]) < 0)
                                        return -1;
                }
                return resolve_expr(r, cs, e->comp.elt) < 0 ? -1
                                                            : resolve_expr(r, cs, e->comp.value);
        }
        default:
                return visit_children(r, s, e, resolve_expr) < 0 ? -1 : 0;
        }
}

static int compile_error(Resolver *r, int line, const char *msg)
{
        return ast_error_set(r->err, AST_ERR_SYNTAX, line, "%s", msg);
}

static int resolve_stmt(Resolver *r, AstScope *s, AstStmt *st, int loops)
{
        switch (st->kind) {
        case AST_S_EXPR:
                return resolve_expr(r, s, st->expr.value);
        case AST_S_RETURN:
                if (s->is_module)
                        return compile_error(r, st->line, "'return' outside function");
                return resolve_expr(r, s, st->expr.value);
        case AST_S_BREAK:
                return loops ? 0 : compile_error(r, st->line, "'break' outside loop");
        case AST_S_CONTINUE:
                return loops ? 0 : compile_error(r, st->line, "'continue' not properly in loop");
        case AST_S_ASSIGN:
                if (resolve_expr(r, s, st->assign.value) < 0)
                        return -1;
                for (int i = 0; i < st->assign.n_targets; i++)
                        if (resolve_expr(r, s, st->assign.targets[i]) < 0)
                                return -1;
                return 0;
        case AST_S_AUGASSIGN:
                return resolve_expr(r, s, st->aug.target) < 0 ? -1
                                                              : resolve_expr(r, s, st->aug.value);
        case AST_S_IF:
                if (resolve_expr(r, s, st->if_.test) < 0 ||
                    resolve_stmts(r, s, st->if_.body, st->if_.n_body, loops) < 0)
                        return -1;
                return resolve_stmts(r, s, st->if_.orelse, st->if_.n_orelse, loops);
        case AST_S_WHILE:
                if (resolve_expr(r, s, st->if_.test) < 0 ||
                    resolve_stmts(r, s, st->if_.body, st->if_.n_body, loops + 1) < 0)
                        return -1;
                return resolve_stmts(r, s, st->if_.orelse, st->if_.n_orelse, loops);
        case AST_S_FOR:
                if (resolve_expr(r, s, st->for_.iter) < 0 ||
                    resolve_expr(r, s, st->for_.target) < 0 ||
                    resolve_stmts(r, s, st->for_.body, st->for_.n_body, loops + 1) < 0)
                        return -1;
                return resolve_stmts(r, s, st->for_.orelse, st->for_.n_orelse, loops);
        case AST_S_IMPORT:
        case AST_S_IMPORTFROM:
                for (int i = 0; i < st->import.n_names; i++)
                        if (resolve_expr(r, s, st->import.names[i].target) < 0)
                                return -1;
                return 0;
        case AST_S_WITH:
                for (int i = 0; i < st->with.n_items; i++)
                        if (resolve_expr(r, s, st->with.items[i].ctx) < 0 ||
                            resolve_expr(r, s, st->with.items[i].target) < 0)
                                return -1;
                return resolve_stmts(r, s, st->with.body, st->with.n_body, loops);
        case AST_S_TRY:
                if (resolve_stmts(r, s, st->try_.body, st->try_.n_body, loops) < 0)
                        return -1;
                for (int i = 0; i < st->try_.n_handlers; i++) {
                        AstHandler *h = &st->try_.handlers[i];
                        if (resolve_expr(r, s, h->type) < 0 || resolve_expr(r, s, h->name) < 0 ||
                            resolve_stmts(r, s, h->body, h->n_body, loops) < 0)
                                return -1;
                }
                if (resolve_stmts(r, s, st->try_.orelse, st->try_.n_orelse, loops) < 0)
                        return -1;
                return resolve_stmts(r, s, st->try_.final, st->try_.n_final, loops);
        case AST_S_RAISE:
                return resolve_expr(r, s, st->raise.exc) < 0 ? -1
                                                             : resolve_expr(r, s, st->raise.cause);
        case AST_S_DEF:
                if (resolve_expr(r, s, st->def.target) < 0)
                        return -1;
                return resolve_function(r, s, st->def.fn);
        case AST_S_DEL:
                for (int i = 0; i < st->del.n_targets; i++)
                        if (resolve_expr(r, s, st->del.targets[i]) < 0)
                                return -1;
                return 0;
        case AST_S_ASSERT:
                return resolve_expr(r, s, st->assert_.test) < 0
                               ? -1
                               : resolve_expr(r, s, st->assert_.msg);
        default:
                return 0;
        }
}

static int resolve_stmts(Resolver *r, AstScope *s, AstStmt **b, int n, int loops)
{
        for (int i = 0; i < n; i++)
                if (resolve_stmt(r, s, b[i], loops) < 0)
                        return -1;
        return 0;
}

int ast_resolve(AstModule *m, AstArena *a, AstError *err)
{
        Resolver r = {.arena = a, .err = err, .module = &m->scope};
        m->scope.is_module = true;
        if (collect_stmts(&r, &m->scope, m->body, m->n_body) < 0)
                return -1;
        return resolve_stmts(&r, &m->scope, m->body, m->n_body, 0);
}
