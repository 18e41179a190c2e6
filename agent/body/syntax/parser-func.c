/* parser-func: call arguments, parameter lists, lambda and comprehensions,
 * with the messages of CPython's invalid_arguments, invalid_kwarg,
 * invalid_parameters and invalid_star_etc rules. */
#include <string.h>

#include "body/syntax/parser.h"

/* After '(' of a call: arguments up to and including ')'. Positional
 * arguments collect on the scratch stack first, keywords after them. */
int parser_arguments(Parser *p, AstExpr *call)
{
        size_t base = p->n_stack;
        /* Keywords are kept apart until the end. */
        AstKeyword **kws = NULL;
        size_t n_kw = 0, cap_kw = 0;
        bool seen_kw = false, seen_dstar = false;
        int n_args = 0;
        while (!parser_is_op(p, 0, OP_RPAR)) {
                const LexToken *t = parser_peek(p, 0);
                int line = t->line;
                AstExpr *value = NULL;
                const char *kwname = NULL;
                bool is_kw = false;
                if (t->kind == TOK_OP && t->id == OP_STAR) {
                        parser_advance(p);
                        AstExpr *v = parser_expression(p);
                        if (!v)
                                goto out;
                        if (seen_dstar) {
                                parser_error(p, line,
                                             "iterable argument unpacking follows "
                                             "keyword argument unpacking");
                                goto out;
                        }
                        value = parser_expr_new(p, AST_STARRED, line);
                        if (!value)
                                goto out;
                        value->starred.value = v;
                        if (parser_fix_depth(p, value) < 0)
                                goto out;
                } else if (t->kind == TOK_OP && t->id == OP_DOUBLESTAR) {
                        parser_advance(p);
                        value = parser_expression(p);
                        if (!value)
                                goto out;
                        is_kw = true;
                        seen_dstar = true;
                } else if (t->kind == TOK_NAME && parser_is_op(p, 1, OP_EQUAL)) {
                        kwname = parser_name(p, t);
                        if (!kwname)
                                goto out;
                        parser_advance(p);
                        parser_advance(p);
                        value = parser_expression(p);
                        if (!value)
                                goto out;
                        if (parser_at_for(p)) {
                                parser_error(p, line,
                                             "invalid syntax. Maybe you meant '==' or "
                                             "':=' instead of '='?");
                                goto out;
                        }
                        for (size_t i = 0; i < n_kw; i++)
                                if (kws[i]->name == kwname)
                                        parser_late_error(p, line, "keyword argument repeated: %s",
                                                          kwname);
                        is_kw = true;
                        seen_kw = true;
                } else if (t->kind == TOK_KEYWORD &&
                           (t->id == KW_TRUE || t->id == KW_FALSE || t->id == KW_NONE) &&
                           parser_is_op(p, 1, OP_EQUAL)) {
                        parser_error(p, line, "cannot assign to %s", lexer_keyword_name(t->id));
                        goto out;
                } else {
                        if (t->kind == TOK_NAME && parser_is_op(p, 1, OP_COLONEQUAL)) {
                                parser_unsupported(p, line, "assignment expressions (:=) are");
                                parser_advance(p);
                                parser_advance(p);
                        }
                        value = parser_expression(p);
                        if (!value)
                                goto out;
                        if (parser_is_op(p, 0, OP_EQUAL)) {
                                parser_error(p, value->line,
                                             "expression cannot contain "
                                             "assignment, perhaps you meant \"==\"?");
                                goto out;
                        }
                        if (parser_at_for(p)) {
                                AstExpr *g = parser_comprehension_node(p, AST_GENEXP, value, NULL,
                                                                       value->line);
                                if (!g)
                                        goto out;
                                if (n_args > 0 || n_kw > 0 || !parser_is_op(p, 0, OP_RPAR)) {
                                        parser_error(p, value->line,
                                                     "Generator expression must be parenthesized");
                                        goto out;
                                }
                                value = g;
                        }
                        if (seen_dstar || seen_kw) {
                                parser_error(p, value->line,
                                             seen_dstar ? "positional argument follows keyword "
                                                          "argument unpacking"
                                                        : "positional argument follows keyword "
                                                          "argument");
                                goto out;
                        }
                }
                if (is_kw) {
                        if (parser_reserve(p, &kws, n_kw, &cap_kw, sizeof(*kws)) < 0)
                                goto out;
                        AstKeyword *k = ast_alloc(p->arena, sizeof(*k));
                        if (!k) {
                                parser_nomem(p);
                                goto out;
                        }
                        k->name = kwname;
                        k->value = value;
                        kws[n_kw++] = k;
                } else {
                        if (parser_push(p, value) < 0)
                                goto out;
                        n_args++;
                }
                if (!parser_accept_op(p, OP_COMMA))
                        break;
        }
        if (parser_expect_op(p, OP_RPAR) < 0)
                goto out;
        call->call.n_args = n_args;
        call->call.args = (AstExpr **)parser_collect(p, base);
        if (!call->call.args)
                return -1;
        call->call.n_kw = (int)n_kw;
        if (n_kw) {
                call->call.kw = ast_alloc(p->arena, n_kw * sizeof(AstKeyword));
                if (!call->call.kw)
                        return parser_nomem(p);
                for (size_t i = 0; i < n_kw; i++)
                        call->call.kw[i] = *kws[i];
        }
        return 0;
out:
        p->n_stack = base;
        return -1;
}

/* One parameter name, with an annotation for def (unsupported). */
static const char *param_name(Parser *p, bool lambda)
{
        const LexToken *t = parser_peek(p, 0);
        if (t->kind != TOK_NAME) {
                parser_generic_error(p);
                return NULL;
        }
        const char *name = parser_name(p, t);
        int line = t->line;
        parser_advance(p);
        if (!lambda && parser_is_op(p, 0, OP_COLON)) {
                parser_unsupported(p, line, "function annotations are");
                parser_advance(p);
                if (!parser_expression(p))
                        return NULL;
        }
        return name;
}

static bool at_close(Parser *p, int closer)
{
        return parser_is_op(p, 0, closer);
}

/* Parameters of a def (closer ')') or a lambda (closer ':'), up to the
 * closer, which is left in place. */
int parser_params(Parser *p, AstParams *params, bool lambda, int closer)
{
        size_t base = p->n_stack;
        /* Positional names and defaults go to the stack as pairs. */
        int n_pos = 0, n_kwonly = 0, n_defaults = 0;
        bool seen_default = false, seen_star = false, seen_dstar = false;
        while (!at_close(p, closer)) {
                const LexToken *t = parser_peek(p, 0);
                int line = t->line;
                if (seen_dstar) {
                        if (t->kind == TOK_NAME ||
                            (t->kind == TOK_OP &&
                             (t->id == OP_STAR || t->id == OP_DOUBLESTAR || t->id == OP_SLASH)))
                                parser_error(p, line,
                                             "arguments cannot follow var-keyword argument");
                        else
                                parser_generic_error(p);
                        goto fail;
                }
                if (t->kind == TOK_OP && t->id == OP_SLASH) {
                        parser_unsupported(p, line, "positional-only parameters are");
                        parser_advance(p);
                } else if (t->kind == TOK_OP && t->id == OP_STAR) {
                        parser_advance(p);
                        if (seen_star) {
                                if (parser_peek(p, 0)->kind == TOK_NAME ||
                                    parser_is_op(p, 0, OP_COMMA))
                                        parser_error(p, line, "* argument may appear only once");
                                else
                                        parser_generic_error(p);
                                goto fail;
                        }
                        seen_star = true;
                        if (parser_peek(p, 0)->kind == TOK_NAME) {
                                params->vararg = param_name(p, lambda);
                                if (!params->vararg)
                                        goto fail;
                                if (parser_is_op(p, 0, OP_EQUAL)) {
                                        parser_error(p, parser_peek(p, 0)->line,
                                                     "var-positional argument cannot have "
                                                     "default value");
                                        goto fail;
                                }
                        } else if (!parser_is_op(p, 0, OP_COMMA) || parser_is_op(p, 1, closer) ||
                                   parser_is_op(p, 1, OP_DOUBLESTAR)) {
                                parser_error(p, line, "named arguments must follow bare *");
                                goto fail;
                        }
                } else if (t->kind == TOK_OP && t->id == OP_DOUBLESTAR) {
                        parser_advance(p);
                        params->kwarg = param_name(p, lambda);
                        if (!params->kwarg)
                                goto fail;
                        if (parser_is_op(p, 0, OP_EQUAL)) {
                                parser_error(p, parser_peek(p, 0)->line,
                                             "var-keyword argument cannot have default value");
                                goto fail;
                        }
                        seen_dstar = true;
                } else if (t->kind == TOK_NAME) {
                        const char *name = param_name(p, lambda);
                        if (!name)
                                goto fail;
                        AstExpr *def = NULL;
                        if (parser_accept_op(p, OP_EQUAL)) {
                                if (parser_is_op(p, 0, OP_COMMA) || at_close(p, closer)) {
                                        parser_error(p, parser_peek(p, 0)->line,
                                                     "expected default value expression");
                                        goto fail;
                                }
                                def = parser_expression(p);
                                if (!def)
                                        goto fail;
                        }
                        if (!seen_star) {
                                if (def) {
                                        seen_default = true;
                                        n_defaults++;
                                } else if (seen_default) {
                                        parser_error(p, line,
                                                     "non-default argument follows "
                                                     "default argument");
                                        goto fail;
                                }
                                n_pos++;
                        } else {
                                n_kwonly++;
                        }
                        if (parser_push(p, (void *)name) < 0 || parser_push(p, def) < 0)
                                goto fail;
                } else {
                        parser_generic_error(p);
                        goto fail;
                }
                if (!parser_accept_op(p, OP_COMMA))
                        break;
        }
        if (!at_close(p, closer)) {
                parser_generic_error(p);
                goto fail;
        }
        int n = n_pos + n_kwonly;
        params->n_pos = n_pos;
        params->n_kwonly = n_kwonly;
        params->n_defaults = n_defaults;
        params->names = ast_alloc(p->arena, (size_t)(n ? n : 1) * sizeof(char *));
        params->defaults =
                ast_alloc(p->arena, (size_t)(n_defaults ? n_defaults : 1) * sizeof(AstExpr *));
        params->kw_defaults =
                ast_alloc(p->arena, (size_t)(n_kwonly ? n_kwonly : 1) * sizeof(AstExpr *));
        if (!params->names || !params->defaults || !params->kw_defaults) {
                parser_nomem(p);
                goto fail;
        }
        for (int i = 0; i < n; i++) {
                params->names[i] = p->stack[base + 2 * (size_t)i];
                AstExpr *def = p->stack[base + 2 * (size_t)i + 1];
                if (i < n_pos) {
                        if (def)
                                params->defaults[i - (n_pos - n_defaults)] = def;
                } else {
                        params->kw_defaults[i - n_pos] = def;
                }
        }
        p->n_stack = base;
        /* CPython's symbol table: the same name twice. */
        const char *all[3] = {params->vararg, params->kwarg, NULL};
        for (int i = 0; i < n + 2; i++) {
                const char *a = i < n ? params->names[i] : all[i - n];
                if (!a)
                        continue;
                for (int k = i + 1; k < n + 2; k++) {
                        const char *b = k < n ? params->names[k] : all[k - n];
                        if (a == b) {
                                parser_late_error(p, parser_peek(p, 0)->line,
                                                  "duplicate argument '%s' in function definition",
                                                  a);
                                return 0;
                        }
                }
        }
        return 0;
fail:
        p->n_stack = base;
        return -1;
}

AstExpr *parser_lambda(Parser *p)
{
        int line = parser_peek(p, 0)->line;
        parser_advance(p);
        AstExpr *e = parser_expr_new(p, AST_LAMBDA, line);
        if (!e)
                return NULL;
        AstFunction *fn = parser_function_new(p, "<lambda>", line);
        if (!fn)
                return NULL;
        e->lambda = fn;
        if (parser_params(p, &fn->params, true, OP_COLON) < 0)
                return NULL;
        if (parser_expect_op(p, OP_COLON) < 0)
                return NULL;
        fn->expr = parser_expression(p);
        if (!fn->expr || parser_fix_depth(p, e) < 0)
                return NULL;
        return e;
}

/* for_if_clauses: ('for' star_targets 'in' disjunction ('if' disjunction)*)+ */
AstExpr *parser_comprehension_node(Parser *p, int kind, AstExpr *elt, AstExpr *value, int line)
{
        AstExpr *e = parser_expr_new(p, kind, line);
        if (!e)
                return NULL;
        e->comp.elt = elt;
        e->comp.value = value;
        if (parser_comprehension(p, e) < 0 || parser_fix_depth(p, e) < 0)
                return NULL;
        return e;
}

int parser_comprehension(Parser *p, AstExpr *comp)
{
        size_t base = p->n_stack;
        const char *name = comp->kind == AST_LISTCOMP   ? "<listcomp>"
                           : comp->kind == AST_SETCOMP  ? "<setcomp>"
                           : comp->kind == AST_DICTCOMP ? "<dictcomp>"
                                                        : "<genexpr>";
        comp->comp.fn = parser_function_new(p, name, comp->line);
        if (!comp->comp.fn)
                return -1;
        comp->comp.fn->scope.is_comprehension = true;
        while (parser_is_kw(p, 0, KW_FOR) || parser_is_kw(p, 0, KW_ASYNC)) {
                if (parser_is_kw(p, 0, KW_ASYNC)) {
                        parser_unsupported(p, parser_peek(p, 0)->line,
                                           "asynchronous comprehensions are");
                        parser_advance(p);
                        if (!parser_is_kw(p, 0, KW_FOR))
                                goto generic;
                }
                parser_advance(p);
                AstComprehension *g = ast_alloc(p->arena, sizeof(*g));
                if (!g) {
                        parser_nomem(p);
                        goto fail;
                }
                g->target = parser_star_targets(p, TARGET_FOR);
                if (!g->target)
                        goto fail;
                parser_advance(p); /* 'in', checked by parser_star_targets */
                g->iter = parser_disjunction(p);
                if (!g->iter)
                        goto fail;
                size_t ifs = p->n_stack;
                while (parser_accept_kw(p, KW_IF)) {
                        AstExpr *c = parser_disjunction(p);
                        if (!c || parser_push(p, c) < 0) {
                                p->n_stack = ifs;
                                goto fail;
                        }
                }
                g->n_ifs = (int)(p->n_stack - ifs);
                g->ifs = (AstExpr **)parser_collect(p, ifs);
                if (!g->ifs || parser_push(p, g) < 0)
                        goto fail;
        }
        size_t n = p->n_stack - base;
        AstComprehension **gs = (AstComprehension **)parser_collect(p, base);
        if (!gs)
                return -1;
        comp->comp.gens = ast_alloc(p->arena, n * sizeof(AstComprehension));
        if (!comp->comp.gens)
                return parser_nomem(p);
        for (size_t i = 0; i < n; i++)
                comp->comp.gens[i] = *gs[i];
        comp->comp.n_gens = (int)n;
        return 0;
generic:
        parser_generic_error(p);
fail:
        p->n_stack = base;
        return -1;
}
