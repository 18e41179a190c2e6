/* parser-simple: the statements of one line (assignment, return, import,
 * raise, del, assert, ...), with CPython's messages for bad targets. */
#include <string.h>

#include "body/syntax/parser.h"

bool parser_bitwise_or_level(const AstExpr *e)
{
        if (e->flags & AST_F_PARENS)
                return true;
        switch (e->kind) {
        case AST_COMPARE:
        case AST_BOOLOP:
        case AST_IFEXP:
        case AST_LAMBDA:
        case AST_STARRED:
        case AST_TUPLE:
                return false;
        case AST_UNARY:
                return e->op != AST_OP_NOT;
        default:
                return true;
        }
}

/* Does e begin with a bitwise_or (and not with `not`, lambda, `*`)? */
static bool starts_with_bitwise_or(const AstExpr *e)
{
        if (e->flags & AST_F_PARENS)
                return true;
        switch (e->kind) {
        case AST_TUPLE:
                return e->seq.n > 0 && starts_with_bitwise_or(e->seq.items[0]);
        case AST_BOOLOP:
                return starts_with_bitwise_or(e->chain.items[0]);
        case AST_IFEXP:
                return starts_with_bitwise_or(e->ifexp.body);
        case AST_LAMBDA:
        case AST_STARRED:
                return false;
        case AST_UNARY:
                return e->op != AST_OP_NOT;
        default:
                return true;
        }
}

/* CPython's `!(list|tuple|genexp|'True'|'None'|'False')` before the
 * bitwise_or of invalid_named_expression: what the expression starts with. */
bool parser_starts_with_excluded(const AstExpr *e)
{
        for (;;) {
                if (e->flags & AST_F_PARENS)
                        return e->kind == AST_TUPLE || e->kind == AST_GENEXP;
                switch (e->kind) {
                case AST_BINOP:
                        e = e->chain.items[0];
                        continue;
                case AST_ATTR:
                        e = e->attr.value;
                        continue;
                case AST_SUBSCRIPT:
                        e = e->sub.value;
                        continue;
                case AST_CALL:
                        e = e->call.func;
                        continue;
                case AST_LIST:
                case AST_TUPLE:
                case AST_GENEXP:
                case AST_TRUE:
                case AST_FALSE:
                case AST_NONE:
                        return true;
                default:
                        return false;
                }
        }
}

/* The error for an assignment with a target that cannot be assigned to,
 * chosen as CPython's second parsing pass chooses it (invalid_assignment
 * and invalid_named_expression in Grammar/python.gram). */
static int bad_assignment(Parser *p, AstExpr **targets, int n, AstExpr *value)
{
        AstExpr *t1 = targets[0];
        bool bare_tuple = t1->kind == AST_TUPLE && !(t1->flags & AST_F_PARENS) && t1->seq.n > 0;
        AstExpr *last = bare_tuple ? t1->seq.items[t1->seq.n - 1] : t1;
        AstExpr *next = n > 1 ? targets[1] : value;
        bool rhs_ok = starts_with_bitwise_or(next) && !(n > 1 && parser_bitwise_or_level(next));
        if (rhs_ok && last->kind == AST_NAME && !(last->flags & AST_F_PARENS))
                return parser_error(p, last->line,
                                    "invalid syntax. Maybe you meant '==' or ':=' instead of '='?");
        if (rhs_ok && parser_bitwise_or_level(last) && !parser_starts_with_excluded(last))
                return parser_error(
                        p, last->line,
                        "cannot assign to %s here. Maybe you meant '==' instead of '='?",
                        parser_expr_name(last));
        for (int i = 0; i < n; i++)
                if (parser_check_target(p, targets[i], TARGET_STAR) < 0)
                        return -1;
        return 0;
}

static int valid_targets(Parser *p, AstExpr **targets, int n);

/* An assignment to a bad target whose value does not parse: CPython's
 * invalid_assignment still names the target, and its "here" variant applies
 * when a bitwise_or follows the first '='. m is the mark after the last '='
 * read. */
static void unparsed_assignment(Parser *p, AstExpr **targets, int n, const ParserMark *m)
{
        if (parser_reset(p, m) < 0)
                return;
        if (n == 1) {
                AstExpr *b;
                p->no_invalid++;
                PARSER_SPEC(p, b = parser_bitwise_or(p));
                p->no_invalid--;
                bool ok = b && !parser_is_op(p, 0, OP_EQUAL) && !parser_is_op(p, 0, OP_COLONEQUAL);
                if (!parser_error_is_soft(p))
                        return;
                ast_error_clear(p->err);
                if (ok && bad_assignment(p, targets, 1, b) < 0)
                        return;
        }
        for (int i = 0; i < n; i++)
                if (parser_check_target(p, targets[i], TARGET_STAR) < 0)
                        return;
}

static int valid_targets(Parser *p, AstExpr **targets, int n)
{
        AstError probe = {0};
        AstError *saved = p->err;
        p->err = &probe;
        int r = 0;
        for (int i = 0; i < n && r == 0; i++)
                r = parser_check_target(p, targets[i], TARGET_STAR);
        p->err = saved;
        ast_error_clear(&probe);
        return r;
}

/* A lone *x where a value is wanted: CPython's compiler refuses it. */
AstExpr *parser_no_lone_star(Parser *p, AstExpr *e)
{
        if (e && e->kind == AST_STARRED && !(e->flags & AST_F_PARENS))
                parser_late_error(p, e->line, "can't use starred expression here");
        return e;
}

static AstExpr *rhs(Parser *p)
{
        if (parser_is_kw(p, 0, KW_YIELD))
                return parser_yield_expr(p);
        return parser_no_lone_star(p, parser_star_expressions(p));
}

static int aug_op(int op)
{
        switch (op) {
        case OP_PLUSEQUAL:
                return AST_OP_ADD;
        case OP_MINEQUAL:
                return AST_OP_SUB;
        case OP_STAREQUAL:
                return AST_OP_MUL;
        case OP_SLASHEQUAL:
                return AST_OP_TRUEDIV;
        case OP_DOUBLESLASHEQUAL:
                return AST_OP_FLOORDIV;
        case OP_PERCENTEQUAL:
                return AST_OP_MOD;
        case OP_DOUBLESTAREQUAL:
                return AST_OP_POW;
        case OP_LEFTSHIFTEQUAL:
                return AST_OP_LSHIFT;
        case OP_RIGHTSHIFTEQUAL:
                return AST_OP_RSHIFT;
        case OP_AMPEREQUAL:
                return AST_OP_AND;
        case OP_VBAREQUAL:
                return AST_OP_OR;
        case OP_CIRCUMFLEXEQUAL:
                return AST_OP_XOR;
        case OP_ATEQUAL:
                return AST_OP_MATMUL;
        default:
                return -1;
        }
}

static AstStmt *annotation(Parser *p, AstExpr *e, int line)
{
        parser_advance(p); /* ':' */
        if (!parser_expression(p))
                return NULL;
        bool single = (e->kind == AST_NAME && !(e->flags & AST_F_PARENS)) || e->kind == AST_ATTR ||
                      e->kind == AST_SUBSCRIPT ||
                      (e->kind == AST_NAME && (e->flags & AST_F_PARENS));
        if (!single) {
                if (e->kind == AST_TUPLE || e->kind == AST_LIST)
                        parser_error(p, e->line, "only single target (not %s) can be annotated",
                                     e->kind == AST_TUPLE ? "tuple" : "list");
                else
                        parser_error(p, e->line, "illegal target for annotation");
                return NULL;
        }
        if (parser_accept_op(p, OP_EQUAL) && !rhs(p))
                return NULL;
        parser_unsupported(p, line, "variable annotations are");
        return parser_stmt_new(p, AST_S_PASS, line);
}

static AstStmt *assignment_or_expr(Parser *p)
{
        int line = parser_peek(p, 0)->line;
        AstExpr *e = parser_star_expressions(p);
        if (!e)
                return NULL;
        const LexToken *t = parser_peek(p, 0);
        if (t->kind == TOK_OP && t->id == OP_COLON)
                return annotation(p, e, line);
        if (t->kind == TOK_OP && t->id == OP_EQUAL) {
                size_t base = p->n_stack;
                AstExpr *value = e;
                while (parser_accept_op(p, OP_EQUAL)) {
                        if (parser_push(p, value) < 0)
                                return NULL;
                        _cleanup_parser_mark_ ParserMark m = {0};
                        if (parser_mark(p, &m) < 0)
                                return NULL;
                        value = rhs(p);
                        if (!value) {
                                int n = (int)(p->n_stack - base);
                                AstExpr **ts = ast_alloc(p->arena, (size_t)n * sizeof(*ts));
                                if (!ts) {
                                        parser_nomem(p);
                                        return NULL;
                                }
                                memcpy(ts, p->stack + base, (size_t)n * sizeof(*ts));
                                if (parser_error_is_soft(p) && valid_targets(p, ts, n) < 0)
                                        unparsed_assignment(p, ts, n, &m);
                                p->n_stack = base;
                                return NULL;
                        }
                }
                int n = (int)(p->n_stack - base);
                AstExpr **targets = (AstExpr **)parser_collect(p, base);
                if (!targets)
                        return NULL;
                if (valid_targets(p, targets, n) < 0) {
                        if (bad_assignment(p, targets, n, value) == 0)
                                parser_generic_error(p);
                        return NULL;
                }
                for (int i = 0; i < n; i++)
                        if (parser_check_target(p, targets[i], TARGET_STAR) < 0)
                                return NULL;
                AstStmt *s = parser_stmt_new(p, AST_S_ASSIGN, line);
                if (!s)
                        return NULL;
                s->assign.targets = targets;
                s->assign.n_targets = n;
                s->assign.value = value;
                return s;
        }
        int op = t->kind == TOK_OP ? aug_op(t->id) : -1;
        if (op >= 0) {
                parser_advance(p);
                AstExpr *value = rhs(p);
                if (!value)
                        return NULL;
                if (e->kind != AST_NAME && e->kind != AST_ATTR && e->kind != AST_SUBSCRIPT) {
                        parser_error(p, e->line,
                                     "'%s' is an illegal expression for augmented assignment",
                                     parser_expr_name(e));
                        return NULL;
                }
                if (op == AST_OP_MATMUL)
                        parser_unsupported(p, line, "the '@' operator is");
                AstStmt *s = parser_stmt_new(p, AST_S_AUGASSIGN, line);
                if (!s)
                        return NULL;
                s->op = (uint8_t)op;
                s->aug.target = e;
                s->aug.value = value;
                return s;
        }
        AstStmt *s = parser_stmt_new(p, AST_S_EXPR, line);
        if (!s)
                return NULL;
        s->expr.value = parser_no_lone_star(p, e);
        return s;
}

/* dotted_name: NAME ('.' NAME)*, as one interned string. */
static const char *dotted_name(Parser *p, const char **ret_first)
{
        const LexToken *t = parser_peek(p, 0);
        if (t->kind != TOK_NAME) {
                parser_generic_error(p);
                return NULL;
        }
        const char *start = t->start;
        const char *first = parser_name(p, t);
        size_t end = t->len;
        parser_advance(p);
        bool dotted = false;
        while (parser_is_op(p, 0, OP_DOT) && parser_peek(p, 1)->kind == TOK_NAME) {
                /* Whitespace may sit around the dots; rebuild the name. */
                dotted = true;
                parser_advance(p);
                const LexToken *n = parser_peek(p, 0);
                end = (size_t)(n->start + n->len - start);
                parser_advance(p);
        }
        if (parser_is_op(p, 0, OP_DOT)) {
                parser_generic_error(p);
                return NULL;
        }
        if (ret_first)
                *ret_first = first;
        if (!dotted)
                return first;
        char buf[1024];
        size_t o = 0;
        for (size_t i = 0; i < end && o + 1 < sizeof buf; i++)
                if (start[i] != ' ' && start[i] != '\t' && start[i] != '\\' && start[i] != '\n' &&
                    start[i] != '\014')
                        buf[o++] = start[i];
        const char *s = ast_intern(p->interner, p->arena, buf, o);
        if (!s)
                parser_nomem(p);
        return s;
}

static int bind_name(Parser *p, AstAlias *a, const char *name, int line)
{
        a->target = parser_expr_new(p, AST_NAME, line);
        if (!a->target)
                return -1;
        a->target->name.id = name;
        return 0;
}

/* Move the aliases pushed since base into s->import: s, or NULL when memory
 * runs out. */
static AstStmt *import_names(Parser *p, AstStmt *s, size_t base)
{
        size_t n = p->n_stack - base;
        AstAlias **as = (AstAlias **)parser_collect(p, base);
        if (!as || !(s->import.names = ast_alloc(p->arena, n * sizeof(AstAlias)))) {
                parser_nomem(p);
                return NULL;
        }
        for (size_t i = 0; i < n; i++)
                s->import.names[i] = *as[i];
        s->import.n_names = (int)n;
        return s;
}

static AstStmt *import_stmt(Parser *p)
{
        int line = parser_peek(p, 0)->line;
        parser_advance(p);
        AstStmt *s = parser_stmt_new(p, AST_S_IMPORT, line);
        if (!s)
                return NULL;
        size_t base = p->n_stack;
        do {
                AstAlias *a = ast_alloc(p->arena, sizeof(*a));
                if (!a) {
                        parser_nomem(p);
                        goto fail;
                }
                const char *first;
                a->name = dotted_name(p, &first);
                if (!a->name)
                        goto fail;
                a->module = first;
                const char *bound = first;
                if (parser_accept_kw(p, KW_AS)) {
                        const LexToken *t = parser_peek(p, 0);
                        if (t->kind != TOK_NAME) {
                                parser_generic_error(p);
                                goto fail;
                        }
                        bound = parser_name(p, t);
                        a->module = a->name;
                        parser_advance(p);
                }
                if (!bound || bind_name(p, a, bound, line) < 0 || parser_push(p, a) < 0)
                        goto fail;
        } while (parser_accept_op(p, OP_COMMA));
        return import_names(p, s, base);
fail:
        p->n_stack = base;
        return NULL;
}

static AstStmt *from_stmt(Parser *p)
{
        int line = parser_peek(p, 0)->line;
        parser_advance(p);
        AstStmt *s = parser_stmt_new(p, AST_S_IMPORTFROM, line);
        if (!s)
                return NULL;
        int dots = 0;
        for (;;) {
                if (parser_accept_op(p, OP_DOT))
                        dots++;
                else if (parser_accept_op(p, OP_ELLIPSIS))
                        dots += 3;
                else
                        break;
        }
        if (dots > 0)
                parser_unsupported(p, line, "relative imports are");
        if (parser_is_kw(p, 0, KW_IMPORT) && dots > 0) {
                s->import.module = "";
        } else {
                s->import.module = dotted_name(p, NULL);
                if (!s->import.module)
                        return NULL;
        }
        if (!parser_accept_kw(p, KW_IMPORT)) {
                parser_generic_error(p);
                return NULL;
        }
        if (parser_accept_op(p, OP_STAR)) {
                /* CPython's symbol table refuses it inside a function; at
                 * module level (a Body with a bare \r) we do not offer it. */
                parser_late_error(p, line, "import * only allowed at module level");
                return s;
        }
        bool parens = parser_accept_op(p, OP_LPAR);
        size_t base = p->n_stack;
        for (;;) {
                const LexToken *t = parser_peek(p, 0);
                if (t->kind != TOK_NAME) {
                        parser_generic_error(p);
                        goto fail;
                }
                AstAlias *a = ast_alloc(p->arena, sizeof(*a));
                if (!a) {
                        parser_nomem(p);
                        goto fail;
                }
                a->name = parser_name(p, t);
                parser_advance(p);
                const char *bound = a->name;
                if (parser_accept_kw(p, KW_AS)) {
                        t = parser_peek(p, 0);
                        if (t->kind != TOK_NAME) {
                                parser_generic_error(p);
                                goto fail;
                        }
                        bound = parser_name(p, t);
                        parser_advance(p);
                }
                if (!a->name || !bound || bind_name(p, a, bound, line) < 0 || parser_push(p, a) < 0)
                        goto fail;
                if (!parser_accept_op(p, OP_COMMA))
                        break;
                if (parens && parser_is_op(p, 0, OP_RPAR))
                        break;
                if (!parens && parser_peek(p, 0)->kind == TOK_NEWLINE) {
                        parser_error(p, parser_peek(p, 0)->line,
                                     "trailing comma not allowed without surrounding parentheses");
                        goto fail;
                }
        }
        if (parens && parser_expect_op(p, OP_RPAR) < 0)
                goto fail;
        return import_names(p, s, base);
fail:
        p->n_stack = base;
        return NULL;
}

static AstStmt *del_stmt(Parser *p)
{
        int line = parser_peek(p, 0)->line;
        parser_advance(p);
        AstExpr *e = parser_star_expressions(p);
        if (!e)
                return NULL;
        if (parser_check_target(p, e, TARGET_DEL) < 0)
                return NULL;
        if (!parser_is_op(p, 0, OP_SEMI) && parser_peek(p, 0)->kind != TOK_NEWLINE) {
                parser_generic_error(p);
                return NULL;
        }
        AstStmt *s = parser_stmt_new(p, AST_S_DEL, line);
        if (!s)
                return NULL;
        if (e->kind == AST_TUPLE && !(e->flags & AST_F_PARENS)) {
                s->del.targets = e->seq.items;
                s->del.n_targets = e->seq.n;
        } else {
                s->del.targets = ast_alloc(p->arena, sizeof(AstExpr *));
                if (!s->del.targets) {
                        parser_nomem(p);
                        return NULL;
                }
                s->del.targets[0] = e;
                s->del.n_targets = 1;
        }
        return s;
}

static bool at_end_of_stmt(Parser *p)
{
        const LexToken *t = parser_peek(p, 0);
        return t->kind == TOK_NEWLINE || (t->kind == TOK_OP && t->id == OP_SEMI);
}

static AstStmt *global_stmt(Parser *p, const char *what)
{
        int line = parser_peek(p, 0)->line;
        parser_advance(p);
        parser_unsupported(p, line, what);
        do {
                if (parser_peek(p, 0)->kind != TOK_NAME) {
                        parser_generic_error(p);
                        return NULL;
                }
                parser_advance(p);
        } while (parser_accept_op(p, OP_COMMA));
        return parser_stmt_new(p, AST_S_PASS, line);
}

AstStmt *parser_simple_stmt(Parser *p)
{
        const LexToken *t = parser_peek(p, 0);
        if (t->kind != TOK_KEYWORD)
                return assignment_or_expr(p);
        int line = t->line;
        AstStmt *s;
        switch (t->id) {
        case KW_RETURN:
                parser_advance(p);
                s = parser_stmt_new(p, AST_S_RETURN, line);
                if (s && !at_end_of_stmt(p) &&
                    !(s->expr.value = parser_no_lone_star(p, parser_star_expressions(p))))
                        return NULL;
                return s;
        case KW_PASS:
        case KW_BREAK:
        case KW_CONTINUE: {
                int kind = t->id == KW_PASS    ? AST_S_PASS
                           : t->id == KW_BREAK ? AST_S_BREAK
                                               : AST_S_CONTINUE;
                parser_advance(p);
                return parser_stmt_new(p, kind, line);
        }
        case KW_RAISE:
                parser_advance(p);
                s = parser_stmt_new(p, AST_S_RAISE, line);
                if (!s || at_end_of_stmt(p))
                        return s;
                if (!(s->raise.exc = parser_expression(p)))
                        return NULL;
                if (parser_accept_kw(p, KW_FROM) && !(s->raise.cause = parser_expression(p)))
                        return NULL;
                return s;
        case KW_DEL:
                return del_stmt(p);
        case KW_ASSERT:
                parser_advance(p);
                s = parser_stmt_new(p, AST_S_ASSERT, line);
                if (!s || !(s->assert_.test = parser_expression(p)))
                        return NULL;
                if (parser_accept_op(p, OP_COMMA) && !(s->assert_.msg = parser_expression(p)))
                        return NULL;
                return s;
        case KW_IMPORT:
                return import_stmt(p);
        case KW_FROM:
                return from_stmt(p);
        case KW_GLOBAL:
                return global_stmt(p, "'global' statements are");
        case KW_NONLOCAL:
                return global_stmt(p, "'nonlocal' statements are");
        case KW_YIELD: {
                AstExpr *e = parser_yield_expr(p);
                if (!e)
                        return NULL;
                if (parser_is_op(p, 0, OP_EQUAL)) {
                        parser_error(p, e->line, "assignment to yield expression not possible");
                        return NULL;
                }
                s = parser_stmt_new(p, AST_S_EXPR, line);
                if (s)
                        s->expr.value = e;
                return s;
        }
        default:
                return assignment_or_expr(p);
        }
}
