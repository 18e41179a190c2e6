/* parser-stmt: blocks and compound statements (if, while, for, with, try,
 * def, and the constructs parsed only to be reported: class, match,
 * decorators, async), with CPython's "expected ':'" and "expected an
 * indented block" errors. Simple statements are in parser-simple.c. */
#include <stdio.h>
#include <string.h>

#include "body/syntax/parser.h"

static int simple_stmts(Parser *p, size_t base);
static int statement(Parser *p);

int parser_statements(Parser *p, LexTokKind until, AstStmt ***ret, int *ret_n)
{
        size_t base = p->n_stack;
        for (;;) {
                const LexToken *t = parser_peek(p, 0);
                if (t->kind == until)
                        break;
                if (t->kind == TOK_ERROR || t->kind == TOK_ENDMARKER || t->kind == TOK_DEDENT ||
                    t->kind == TOK_INDENT) {
                        p->n_stack = base;
                        return parser_generic_error(p);
                }
                if (statement(p) < 0) {
                        p->n_stack = base;
                        return -1;
                }
        }
        size_t n = p->n_stack - base;
        if (n == 0) {
                p->n_stack = base;
                return parser_generic_error(p);
        }
        void **a = parser_collect(p, base);
        if (!a)
                return -1;
        *ret = (AstStmt **)a;
        *ret_n = (int)n;
        return 0;
}

int parser_block(Parser *p, const char *what, int what_line, AstStmt ***ret, int *ret_n)
{
        if (parser_peek(p, 0)->kind != TOK_NEWLINE) {
                size_t base = p->n_stack;
                if (simple_stmts(p, base) < 0)
                        return -1;
                size_t n = p->n_stack - base;
                void **a = parser_collect(p, base);
                if (!a)
                        return -1;
                *ret = (AstStmt **)a;
                *ret_n = (int)n;
                return 0;
        }
        parser_advance(p);
        const LexToken *t = parser_peek(p, 0);
        if (t->kind != TOK_INDENT) {
                if (parser_failed(t))
                        return -1;
                return parser_expected_block(p, t->line, what, what_line);
        }
        parser_advance(p);
        if (parser_enter(p) < 0)
                return -1;
        int r = parser_statements(p, TOK_DEDENT, ret, ret_n);
        parser_leave(p);
        if (r < 0)
                return -1;
        parser_advance(p); /* DEDENT */
        return 0;
}

/* "expected ':'" where CPython's invalid_*_stmt rules see a NEWLINE in its
 * place; anything else there is a generic error. */
static int expect_colon(Parser *p)
{
        if (parser_accept_op(p, OP_COLON))
                return 0;
        const LexToken *t = parser_peek(p, 0);
        if (t->kind == TOK_NEWLINE)
                return parser_error(p, t->line, "expected ':'");
        return parser_generic_error(p);
}

/* A forced token (`&&':'` in the grammar): "expected ':'" whatever stands
 * there. */
static int expect_forced(Parser *p, int op)
{
        if (parser_accept_op(p, op))
                return 0;
        const LexToken *t = parser_peek(p, 0);
        if (parser_failed(t))
                return -1;
        return parser_error(p, t->line, "expected '%s'", lexer_op_text(op));
}

AstExpr *parser_name_expr(Parser *p, const LexToken *t)
{
        AstExpr *e = parser_expr_new(p, AST_NAME, t->line);
        if (!e)
                return NULL;
        e->name.id = parser_name(p, t);
        return e->name.id ? e : NULL;
}

static AstStmt **single_stmt_array(Parser *p, AstStmt *s)
{
        AstStmt **a = ast_alloc(p->arena, sizeof(*a));
        if (!a) {
                parser_nomem(p);
                return NULL;
        }
        a[0] = s;
        return a;
}

static AstStmt *if_stmt(Parser *p, const char *kw)
{
        int line = parser_peek(p, 0)->line;
        parser_advance(p);
        AstStmt *s = parser_stmt_new(p, AST_S_IF, line);
        if (!s)
                return NULL;
        s->if_.test = parser_named_expression(p);
        if (!s->if_.test || expect_colon(p) < 0)
                return NULL;
        char what[32];
        snprintf(what, sizeof what, "'%s' statement", kw);
        /* CPython's rule names the condition's line here (a=named_expression
         * shadows a='if'); they differ only for a multi-line condition. */
        if (parser_block(p, what, s->if_.test->line, &s->if_.body, &s->if_.n_body) < 0)
                return NULL;
        if (parser_is_kw(p, 0, KW_ELIF)) {
                AstStmt *e = if_stmt(p, "elif");
                if (!e || !(s->if_.orelse = single_stmt_array(p, e)))
                        return NULL;
                s->if_.n_orelse = 1;
        } else if (parser_is_kw(p, 0, KW_ELSE)) {
                int eline = parser_peek(p, 0)->line;
                parser_advance(p);
                if (expect_forced(p, OP_COLON) < 0 ||
                    parser_block(p, "'else' statement", eline, &s->if_.orelse, &s->if_.n_orelse) <
                            0)
                        return NULL;
        }
        return s;
}

static int else_block(Parser *p, AstStmt ***ret, int *ret_n)
{
        if (!parser_is_kw(p, 0, KW_ELSE))
                return 0;
        int line = parser_peek(p, 0)->line;
        parser_advance(p);
        if (expect_forced(p, OP_COLON) < 0)
                return -1;
        return parser_block(p, "'else' statement", line, ret, ret_n);
}

static AstStmt *while_stmt(Parser *p)
{
        int line = parser_peek(p, 0)->line;
        parser_advance(p);
        AstStmt *s = parser_stmt_new(p, AST_S_WHILE, line);
        if (!s)
                return NULL;
        s->if_.test = parser_named_expression(p);
        if (!s->if_.test || expect_colon(p) < 0)
                return NULL;
        if (parser_block(p, "'while' statement", line, &s->if_.body, &s->if_.n_body) < 0 ||
            else_block(p, &s->if_.orelse, &s->if_.n_orelse) < 0)
                return NULL;
        return s;
}

static AstStmt *for_stmt(Parser *p)
{
        int line = parser_peek(p, 0)->line;
        parser_advance(p);
        AstStmt *s = parser_stmt_new(p, AST_S_FOR, line);
        if (!s)
                return NULL;
        s->for_.target = parser_star_targets(p, TARGET_FOR);
        if (!s->for_.target)
                return NULL;
        if (!parser_accept_kw(p, KW_IN)) {
                parser_generic_error(p);
                return NULL;
        }
        s->for_.iter = parser_no_lone_star(p, parser_star_expressions(p));
        if (!s->for_.iter || expect_colon(p) < 0)
                return NULL;
        if (parser_block(p, "'for' statement", line, &s->for_.body, &s->for_.n_body) < 0 ||
            else_block(p, &s->for_.orelse, &s->for_.n_orelse) < 0)
                return NULL;
        return s;
}

static int with_item(Parser *p, bool parens)
{
        AstWithItem *w = ast_alloc(p->arena, sizeof(*w));
        if (!w)
                return parser_nomem(p);
        w->ctx = parser_expression(p);
        if (!w->ctx)
                return -1;
        if (parser_accept_kw(p, KW_AS)) {
                if (parser_is_op(p, 0, OP_STAR)) {
                        /* star_target: *x parses, the compiler refuses it. */
                        int line = parser_peek(p, 0)->line;
                        parser_advance(p);
                        AstExpr *v = parser_expression(p);
                        if (!v || !(w->target = parser_expr_new(p, AST_STARRED, line)))
                                return -1;
                        w->target->starred.value = v;
                } else {
                        w->target = parser_expression(p);
                }
                if (!w->target)
                        return -1;
                /* A NEWLINE here is the caller's "expected ':'". */
                if (!parser_is_op(p, 0, OP_COMMA) && !(parens && parser_is_op(p, 0, OP_RPAR)) &&
                    !parser_is_op(p, 0, OP_COLON) && parser_peek(p, 0)->kind != TOK_NEWLINE)
                        return parser_generic_error(p);
                if (parser_check_target(p, w->target, TARGET_STAR) < 0)
                        return -1;
        }
        return parser_push(p, w);
}

static int with_items(Parser *p, bool parens)
{
        for (;;) {
                if (with_item(p, parens) < 0)
                        return -1;
                if (!parser_accept_op(p, OP_COMMA))
                        return 0;
                if (parens && parser_is_op(p, 0, OP_RPAR))
                        return 0;
        }
}

static AstStmt *with_stmt(Parser *p)
{
        int line = parser_peek(p, 0)->line;
        parser_advance(p);
        AstStmt *s = parser_stmt_new(p, AST_S_WITH, line);
        if (!s)
                return NULL;
        size_t base = p->n_stack;
        bool done = false;
        if (parser_is_op(p, 0, OP_LPAR)) {
                /* with (a as b, c): tried first, as CPython does; when that
                 * does not parse, the parenthesis starts an expression. */
                _cleanup_parser_mark_ ParserMark m = {0};
                if (parser_mark(p, &m) < 0)
                        return NULL;
                parser_advance(p);
                int r = with_items(p, true);
                if (r == 0 && parser_accept_op(p, OP_RPAR) && parser_is_op(p, 0, OP_COLON))
                        done = true;
                else if (parser_reset(p, &m) < 0)
                        return NULL;
        }
        if (!done && with_items(p, false) < 0) {
                p->n_stack = base;
                return NULL;
        }
        size_t n = p->n_stack - base;
        AstWithItem **items = (AstWithItem **)parser_collect(p, base);
        if (!items)
                return NULL;
        s->with.items = ast_alloc(p->arena, n * sizeof(AstWithItem));
        if (!s->with.items) {
                parser_nomem(p);
                return NULL;
        }
        for (size_t i = 0; i < n; i++)
                s->with.items[i] = *items[i];
        s->with.n_items = (int)n;
        if (expect_colon(p) < 0 ||
            parser_block(p, "'with' statement", line, &s->with.body, &s->with.n_body) < 0)
                return NULL;
        return s;
}

static int except_clause(Parser *p)
{
        int line = parser_peek(p, 0)->line;
        parser_advance(p);
        AstHandler *h = ast_alloc(p->arena, sizeof(*h));
        if (!h)
                return parser_nomem(p);
        h->line = line;
        if (parser_is_op(p, 0, OP_STAR)) {
                parser_unsupported(p, line, "'except*' clauses are");
                parser_advance(p);
        }
        if (!parser_is_op(p, 0, OP_COLON)) {
                if (parser_peek(p, 0)->kind == TOK_NEWLINE)
                        return parser_error(p, parser_peek(p, 0)->line, "expected ':'");
                h->type = parser_expression(p);
                if (!h->type)
                        return -1;
                if (parser_is_op(p, 0, OP_COMMA))
                        return parser_error(p, h->type->line,
                                            "multiple exception types must be parenthesized");
                if (parser_accept_kw(p, KW_AS)) {
                        const LexToken *t = parser_peek(p, 0);
                        if (t->kind != TOK_NAME)
                                return parser_generic_error(p);
                        h->name = parser_name_expr(p, t);
                        if (!h->name)
                                return -1;
                        parser_advance(p);
                }
        }
        if (expect_colon(p) < 0 ||
            parser_block(p, "'except' statement", line, &h->body, &h->n_body) < 0)
                return -1;
        return parser_push(p, h);
}

static AstStmt *try_stmt(Parser *p)
{
        int line = parser_peek(p, 0)->line;
        parser_advance(p);
        AstStmt *s = parser_stmt_new(p, AST_S_TRY, line);
        if (!s)
                return NULL;
        if (expect_forced(p, OP_COLON) < 0 ||
            parser_block(p, "'try' statement", line, &s->try_.body, &s->try_.n_body) < 0)
                return NULL;
        size_t base = p->n_stack;
        while (parser_is_kw(p, 0, KW_EXCEPT))
                if (except_clause(p) < 0) {
                        p->n_stack = base;
                        return NULL;
                }
        size_t n = p->n_stack - base;
        if (n > 0) {
                AstHandler **hs = (AstHandler **)parser_collect(p, base);
                if (!hs)
                        return NULL;
                s->try_.handlers = ast_alloc(p->arena, n * sizeof(AstHandler));
                if (!s->try_.handlers) {
                        parser_nomem(p);
                        return NULL;
                }
                for (size_t i = 0; i < n; i++)
                        s->try_.handlers[i] = *hs[i];
                s->try_.n_handlers = (int)n;
                if (else_block(p, &s->try_.orelse, &s->try_.n_orelse) < 0)
                        return NULL;
        }
        if (parser_is_kw(p, 0, KW_FINALLY)) {
                int fline = parser_peek(p, 0)->line;
                parser_advance(p);
                if (expect_forced(p, OP_COLON) < 0 ||
                    parser_block(p, "'finally' statement", fline, &s->try_.final,
                                 &s->try_.n_final) < 0)
                        return NULL;
        } else if (n == 0) {
                const LexToken *t = parser_peek(p, 0);
                if (!parser_failed(t))
                        parser_error(p, t->line, "expected 'except' or 'finally' block");
                return NULL;
        }
        return s;
}

static AstStmt *def_stmt(Parser *p)
{
        int line = parser_peek(p, 0)->line;
        parser_advance(p);
        const LexToken *t = parser_peek(p, 0);
        if (t->kind != TOK_NAME) {
                parser_generic_error(p);
                return NULL;
        }
        AstStmt *s = parser_stmt_new(p, AST_S_DEF, line);
        if (!s || !(s->def.target = parser_name_expr(p, t)))
                return NULL;
        parser_advance(p);
        AstFunction *fn = parser_function_new(p, s->def.target->name.id, line);
        if (!fn)
                return NULL;
        s->def.fn = fn;
        if (expect_forced(p, OP_LPAR) < 0 || parser_params(p, &fn->params, false, OP_RPAR) < 0)
                return NULL;
        if (parser_expect_op(p, OP_RPAR) < 0)
                return NULL;
        if (parser_accept_op(p, OP_RARROW)) {
                parser_unsupported(p, line, "function annotations are");
                if (!parser_expression(p))
                        return NULL;
        }
        if (expect_forced(p, OP_COLON) < 0 ||
            parser_block(p, "function definition", line, &fn->body, &fn->n_body) < 0)
                return NULL;
        return s;
}

static AstStmt *class_stmt(Parser *p)
{
        int line = parser_peek(p, 0)->line;
        parser_advance(p);
        parser_unsupported(p, line, "'class' definitions are");
        if (parser_peek(p, 0)->kind != TOK_NAME) {
                parser_generic_error(p);
                return NULL;
        }
        parser_advance(p);
        if (parser_accept_op(p, OP_LPAR)) {
                AstExpr *bases = parser_expr_new(p, AST_CALL, line);
                if (!bases || parser_arguments(p, bases) < 0)
                        return NULL;
        }
        AstStmt **body;
        int n;
        if (expect_colon(p) < 0 || parser_block(p, "class definition", line, &body, &n) < 0)
                return NULL;
        return parser_stmt_new(p, AST_S_PASS, line);
}

/* A match statement: CPython tries one first when a line starts with the
 * soft keyword `match`; it can only be one if the line ends in a colon at
 * bracket level 0. We do not parse its patterns: the block is skipped and
 * reported as unsupported. */
static bool looks_like_match(Parser *p)
{
        const LexToken *t = parser_peek(p, 0);
        if (t->kind != TOK_NAME || t->len != 5 || memcmp(t->start, "match", 5) != 0)
                return false;
        const LexToken *n = parser_peek(p, 1);
        if (n->kind == TOK_NEWLINE || n->kind == TOK_ENDMARKER || n->kind == TOK_ERROR ||
            (n->kind == TOK_OP && n->id != OP_LPAR && n->id != OP_LSQB && n->id != OP_LBRACE &&
             n->id != OP_MINUS && n->id != OP_STAR && n->id != OP_TILDE))
                return false;
        _cleanup_parser_mark_ ParserMark m = {0};
        if (parser_mark(p, &m) < 0)
                return false;
        LexToken last = {0};
        bool colon_end = false;
        int max_line = p->max_line;
        p->spec++;
        for (;;) {
                const LexToken *x = parser_peek(p, 0);
                if (x->kind == TOK_ERROR || x->kind == TOK_ENDMARKER)
                        break;
                if (x->kind == TOK_NEWLINE) {
                        colon_end = last.kind == TOK_OP && last.id == OP_COLON && last.level == 0;
                        break;
                }
                last = *x;
                parser_advance(p);
        }
        p->spec--;
        p->max_line = max_line;
        /* A tokenizer error on the line is left for the real parse to meet. */
        ast_error_clear(p->err);
        parser_reset(p, &m);
        return colon_end;
}

static AstStmt *match_stmt(Parser *p)
{
        int line = parser_peek(p, 0)->line;
        parser_unsupported(p, line, "'match' statements are");
        while (parser_peek(p, 0)->kind != TOK_NEWLINE)
                parser_advance(p);
        parser_advance(p);
        const LexToken *t = parser_peek(p, 0);
        if (t->kind != TOK_INDENT) {
                if (!parser_failed(t))
                        parser_expected_block(p, t->line, "'match' statement", line);
                return NULL;
        }
        int level = 0;
        do {
                t = parser_peek(p, 0);
                if (t->kind == TOK_ERROR || t->kind == TOK_ENDMARKER) {
                        parser_generic_error(p);
                        return NULL;
                }
                if (t->kind == TOK_INDENT)
                        level++;
                else if (t->kind == TOK_DEDENT)
                        level--;
                parser_advance(p);
        } while (level > 0);
        return parser_stmt_new(p, AST_S_PASS, line);
}

static AstStmt *decorated(Parser *p)
{
        parser_unsupported(p, parser_peek(p, 0)->line, "decorators are");
        while (parser_accept_op(p, OP_AT)) {
                if (!parser_named_expression(p))
                        return NULL;
                if (parser_peek(p, 0)->kind != TOK_NEWLINE) {
                        parser_generic_error(p);
                        return NULL;
                }
                parser_advance(p);
        }
        if (parser_is_kw(p, 0, KW_CLASS))
                return class_stmt(p);
        parser_accept_kw(p, KW_ASYNC);
        if (!parser_is_kw(p, 0, KW_DEF)) {
                parser_generic_error(p);
                return NULL;
        }
        return def_stmt(p);
}

/* A compound statement, or NULL with *ret_is false when the line holds
 * simple statements. */
static AstStmt *compound_stmt(Parser *p, bool *ret_is)
{
        const LexToken *t = parser_peek(p, 0);
        *ret_is = true;
        if (t->kind == TOK_OP && t->id == OP_AT)
                return decorated(p);
        if (t->kind == TOK_NAME && looks_like_match(p))
                return match_stmt(p);
        if (t->kind != TOK_KEYWORD) {
                *ret_is = false;
                return NULL;
        }
        switch (t->id) {
        case KW_IF:
                return if_stmt(p, "if");
        case KW_WHILE:
                return while_stmt(p);
        case KW_FOR:
                return for_stmt(p);
        case KW_WITH:
                return with_stmt(p);
        case KW_TRY:
                return try_stmt(p);
        case KW_DEF:
                return def_stmt(p);
        case KW_CLASS:
                return class_stmt(p);
        case KW_ASYNC:
                parser_unsupported(p, t->line, "'async' statements are");
                parser_advance(p);
                if (parser_is_kw(p, 0, KW_DEF))
                        return def_stmt(p);
                if (parser_is_kw(p, 0, KW_FOR))
                        return for_stmt(p);
                if (parser_is_kw(p, 0, KW_WITH))
                        return with_stmt(p);
                parser_generic_error(p);
                return NULL;
        default:
                *ret_is = false;
                return NULL;
        }
}

/* Push the statement(s) of one line or compound statement. */
static int statement(Parser *p)
{
        bool is_compound;
        AstStmt *s = compound_stmt(p, &is_compound);
        if (!is_compound)
                return simple_stmts(p, p->n_stack);
        if (!s)
                return -1;
        return parser_push(p, s);
}

static int simple_stmts(Parser *p, size_t base)
{
        for (;;) {
                AstStmt *s = parser_simple_stmt(p);
                if (!s || parser_push(p, s) < 0) {
                        p->n_stack = base;
                        return -1;
                }
                if (!parser_accept_op(p, OP_SEMI) || parser_peek(p, 0)->kind == TOK_NEWLINE)
                        break;
        }
        if (parser_peek(p, 0)->kind != TOK_NEWLINE) {
                p->n_stack = base;
                return parser_generic_error(p);
        }
        parser_advance(p);
        return 0;
}
