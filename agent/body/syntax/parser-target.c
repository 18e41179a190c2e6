/* parser-target: assignment, for and del targets, and the messages CPython
 * gives when an expression cannot be one (_PyPegen_get_expr_name and
 * _PyPegen_get_invalid_target in Parser/pegen.c). */
#include <string.h>

#include "body/syntax/parser.h"

const char *parser_expr_name(const AstExpr *e)
{
        switch (e->kind) {
        case AST_ATTR:
                return "attribute";
        case AST_SUBSCRIPT:
                return "subscript";
        case AST_STARRED:
                return "starred";
        case AST_NAME:
                return "name";
        case AST_LIST:
                return "list";
        case AST_TUPLE:
                return "tuple";
        case AST_LAMBDA:
                return "lambda";
        case AST_CALL:
                return "function call";
        case AST_BOOLOP:
        case AST_BINOP:
        case AST_UNARY:
                return "expression";
        case AST_GENEXP:
                return "generator expression";
        case AST_LISTCOMP:
                return "list comprehension";
        case AST_SETCOMP:
                return "set comprehension";
        case AST_DICTCOMP:
                return "dict comprehension";
        case AST_DICT:
                return "dict literal";
        case AST_SET:
                return "set display";
        case AST_FSTRING:
        case AST_FVALUE:
                return "f-string expression";
        case AST_NONE:
                return "None";
        case AST_TRUE:
                return "True";
        case AST_FALSE:
                return "False";
        case AST_ELLIPSIS:
                return "ellipsis";
        case AST_COMPARE:
                return "comparison";
        case AST_IFEXP:
                return "conditional expression";
        default:
                return "literal";
        }
}

/* The first part of e that cannot be a target, or NULL. */
static AstExpr *invalid_target(AstExpr *e, ParserTargetKind kind)
{
        switch (e->kind) {
        case AST_LIST:
        case AST_TUPLE:
                for (int i = 0; i < e->seq.n; i++) {
                        AstExpr *bad = invalid_target(e->seq.items[i], kind);
                        if (bad)
                                return bad;
                }
                return NULL;
        case AST_STARRED:
                if (kind == TARGET_DEL)
                        return e;
                return invalid_target(e->starred.value, kind);
        case AST_COMPARE:
                /* `for a in b` parsed as an expression is a comparison whose
                 * left side is the target. */
                if (kind == TARGET_FOR)
                        return e->chain.ops[0] == AST_CMP_IN
                                       ? invalid_target(e->chain.items[0], kind)
                                       : NULL;
                return e;
        case AST_NAME:
        case AST_SUBSCRIPT:
        case AST_ATTR:
                return NULL;
        default:
                return e;
        }
}

static int count_starred(const AstExpr *e)
{
        int n = 0;
        for (int i = 0; i < e->seq.n; i++)
                n += e->seq.items[i]->kind == AST_STARRED;
        return n;
}

/* Starred targets: the errors of CPython's compiler. */
static void check_starred(Parser *p, AstExpr *e, bool top)
{
        if (e->kind == AST_STARRED) {
                if (top)
                        parser_late_error(p, e->line,
                                          "starred assignment target must be in a list or tuple");
                return;
        }
        if (e->kind != AST_LIST && e->kind != AST_TUPLE)
                return;
        if (count_starred(e) > 1)
                parser_late_error(p, e->line, "multiple starred expressions in assignment");
        for (int i = 0; i < e->seq.n; i++)
                check_starred(p, e->seq.items[i], false);
}

int parser_check_target(Parser *p, AstExpr *e, ParserTargetKind kind)
{
        AstExpr *bad = invalid_target(e, kind);
        if (bad) {
                if (kind == TARGET_DEL)
                        return parser_error(p, bad->line, "cannot delete %s",
                                            parser_expr_name(bad));
                return parser_error(p, bad->line, "cannot assign to %s", parser_expr_name(bad));
        }
        if (kind != TARGET_DEL)
                check_starred(p, e, true);
        return 0;
}

/* star_targets for `for` and comprehensions: bitwise_or expressions
 * separated by commas, so that the `in` after them is not taken for a
 * comparison. */
AstExpr *parser_star_targets(Parser *p, ParserTargetKind kind)
{
        int line = parser_peek(p, 0)->line;
        size_t base = p->n_stack;
        bool trailing = false;
        _cleanup_parser_mark_ ParserMark m = {0};
        if (parser_mark(p, &m) < 0)
                return NULL;
        for (;;) {
                AstExpr *e;
                if (parser_is_op(p, 0, OP_STAR)) {
                        int sline = parser_peek(p, 0)->line;
                        parser_advance(p);
                        AstExpr *v = parser_bitwise_or(p);
                        if (!v)
                                goto fail;
                        e = parser_expr_new(p, AST_STARRED, sline);
                        if (!e)
                                goto fail;
                        e->starred.value = v;
                        if (parser_fix_depth(p, e) < 0)
                                goto fail;
                } else {
                        e = parser_bitwise_or(p);
                        if (!e)
                                goto fail;
                }
                if (parser_push(p, e) < 0)
                        goto fail;
                trailing = false;
                if (!parser_accept_op(p, OP_COMMA))
                        break;
                trailing = true;
                if (parser_is_kw(p, 0, KW_IN) || parser_is_op(p, 0, OP_EQUAL))
                        break;
        }
        AstExpr *target;
        size_t n = p->n_stack - base;
        if (n == 1 && !trailing) {
                target = p->stack[base];
                p->n_stack = base;
        } else {
                target = parser_expr_new(p, AST_TUPLE, line);
                if (!target)
                        goto fail;
                target->seq.n = (int)n;
                target->seq.items = (AstExpr **)parser_collect(p, base);
                if (!target->seq.items || parser_fix_depth(p, target) < 0)
                        return NULL;
        }
        if (!parser_is_kw(p, 0, KW_IN)) {
                /* CPython's invalid_for_target: the targets parsed as an
                 * expression, with the specialised checks on; a bad target
                 * in it is named. Otherwise the error is where the 'in'
                 * should be. */
                _cleanup_parser_mark_ ParserMark here = {0};
                if (parser_mark(p, &here) < 0)
                        return NULL;
                if (parser_reset(p, &m) < 0)
                        return NULL;
                AstExpr *e;
                PARSER_SPEC(p, e = parser_star_expressions(p));
                if (!e && (!parser_error_is_soft(p) || !p->err->generic))
                        return NULL;
                ast_error_clear(p->err);
                if (e && parser_check_target(p, e, kind) < 0)
                        return NULL;
                if (parser_reset(p, &here) == 0)
                        parser_generic_error(p);
                return NULL;
        }
        if (parser_check_target(p, target, kind) < 0)
                return NULL;
        return target;
fail:
        p->n_stack = base;
        return NULL;
}
