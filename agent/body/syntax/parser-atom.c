/* parser-atom: atoms: names, numbers, strings, and the displays of
 * tuples, lists, sets and dicts with their comprehensions, with CPython's
 * messages for the mistakes made in them. */
#include <stdint.h>
#include <string.h>

#include "body/syntax/parser.h"
#include "util/macro.h"

static AstExpr *number(Parser *p, const LexToken *t)
{
        int64_t i = 0;
        double f = 0;
        bool big = false;
        int kind = lexer_parse_number(t, p->err, &i, &f, &big);
        if (kind < 0)
                return NULL;
        AstExpr *e = parser_expr_new(p,
                                     kind == AST_FLOAT ? AST_FLOAT
                                     : big             ? AST_BIGINT
                                                       : AST_INT,
                                     t->line);
        if (!e)
                return NULL;
        if (kind == AST_FLOAT) {
                e->f = f;
        } else if (big) {
                char *s = ast_alloc(p->arena, t->len + 1);
                if (!s) {
                        parser_nomem(p);
                        return NULL;
                }
                memcpy(s, t->start, t->len);
                s[t->len] = '\0';
                e->str.s = s;
                e->str.len = t->len;
        } else {
                e->i = i;
        }
        return e;
}

/* At `for` after elt (and value, in a dict): the comprehension of kind,
 * up to and with the closing bracket `close`. */
static AstExpr *comprehension_node(Parser *p, int kind, AstExpr *elt, AstExpr *value, int line,
                                   int close)
{
        if (elt->kind == AST_STARRED) {
                parser_error(p, elt->line, "iterable unpacking cannot be used in comprehension");
                return NULL;
        }
        AstExpr *e = parser_comprehension_node(p, kind, elt, value, line);
        if (!e || parser_expect_op(p, close) < 0)
                return NULL;
        return e;
}

bool parser_at_for(Parser *p)
{
        return parser_is_kw(p, 0, KW_FOR) ||
               (parser_is_kw(p, 0, KW_ASYNC) && parser_is_kw(p, 1, KW_FOR));
}

/* "did you forget parentheses around the comprehension target?", only when
 * a whole for clause follows, as CPython checks. */
static __attribute__((noinline)) int forgot_parentheses(Parser *p, AstExpr *first)
{
        int line = parser_peek(p, 0)->line;
        _cleanup_parser_mark_ ParserMark m = {0};
        if (parser_mark(p, &m) < 0)
                return -1;
        AstExpr probe = {.kind = AST_LISTCOMP, .line = line};
        int r;
        p->no_invalid++;
        PARSER_SPEC(p, r = parser_comprehension(p, &probe));
        p->no_invalid--;
        if (r == 0) {
                p->n_stack = m.n_stack;
                return parser_error(p, first->line,
                                    "did you forget parentheses around the comprehension target?");
        }
        if (parser_reset(p, &m) < 0)
                return -1;
        return parser_generic_error(p);
}

/* The items of a list, tuple or set display after its first; `close` ends
 * it. A comprehension after several items is CPython's "did you forget
 * parentheses around the comprehension target?". */
static int display_items(Parser *p, AstExpr *first, int close, bool check_comp)
{
        while (parser_accept_op(p, OP_COMMA)) {
                if (parser_is_op(p, 0, close))
                        break;
                AstExpr *e = parser_star_named_expression(p);
                if (!e || parser_push(p, e) < 0)
                        return -1;
        }
        if (check_comp && parser_at_for(p))
                return forgot_parentheses(p, first);
        return parser_expect_op(p, close);
}

static AstExpr *paren_atom(Parser *p, int line)
{
        if (parser_accept_op(p, OP_RPAR)) {
                AstExpr *e = parser_expr_new(p, AST_TUPLE, line);
                if (e)
                        e->flags |= AST_F_PARENS;
                return e;
        }
        if (parser_is_kw(p, 0, KW_YIELD)) {
                AstExpr *y = parser_yield_expr(p);
                if (!y)
                        return NULL;
                if (parser_expect_op(p, OP_RPAR) < 0)
                        return NULL;
                return y;
        }
        if (parser_is_op(p, 0, OP_DOUBLESTAR)) {
                int sline = parser_peek(p, 0)->line;
                parser_advance(p);
                if (parser_expression(p) && parser_is_op(p, 0, OP_RPAR))
                        parser_error(p, sline, "cannot use double starred expression here");
                else
                        parser_generic_error(p);
                return NULL;
        }
        AstExpr *first = parser_star_named_expression(p);
        if (!first)
                return NULL;
        if (parser_at_for(p)) {
                AstExpr *g = comprehension_node(p, AST_GENEXP, first, NULL, line, OP_RPAR);
                if (g)
                        g->flags |= AST_F_PARENS;
                return g;
        }
        if (parser_accept_op(p, OP_RPAR)) {
                if (first->kind == AST_STARRED) {
                        parser_error(p, first->line, "cannot use starred expression here");
                        return NULL;
                }
                first->flags |= AST_F_PARENS;
                return first;
        }
        if (!parser_is_op(p, 0, OP_COMMA)) {
                parser_generic_error(p);
                return NULL;
        }
        size_t base = p->n_stack;
        if (parser_push(p, first) < 0 || display_items(p, first, OP_RPAR, false) < 0) {
                p->n_stack = base;
                return NULL;
        }
        AstExpr *t = parser_seq_node(p, AST_TUPLE, line, base);
        if (t)
                t->flags |= AST_F_PARENS;
        return t;
}

static AstExpr *list_atom(Parser *p, int line)
{
        size_t base = p->n_stack;
        if (parser_accept_op(p, OP_RSQB))
                return parser_seq_node(p, AST_LIST, line, base);
        AstExpr *first = parser_star_named_expression(p);
        if (!first)
                return NULL;
        if (parser_at_for(p))
                return comprehension_node(p, AST_LISTCOMP, first, NULL, line, OP_RSQB);
        if (parser_push(p, first) < 0 || display_items(p, first, OP_RSQB, true) < 0) {
                p->n_stack = base;
                return NULL;
        }
        return parser_seq_node(p, AST_LIST, line, base);
}

/* key ':' value of a dict display, with invalid_kvpair's messages. */
static int kvpair(Parser *p, AstExpr *key)
{
        if (!parser_is_op(p, 0, OP_COLON))
                return parser_error(p, key->line, "':' expected after dictionary key");
        int cline = parser_peek(p, 0)->line;
        parser_advance(p);
        if (parser_is_op(p, 0, OP_STAR))
                return parser_error(p, parser_peek(p, 0)->line,
                                    "cannot use a starred expression in a dictionary value");
        if (parser_is_op(p, 0, OP_RBRACE) || parser_is_op(p, 0, OP_COMMA))
                return parser_error(p, cline, "expression expected after dictionary key and ':'");
        AstExpr *v = parser_expression(p);
        if (!v)
                return -1;
        if (parser_push(p, key) < 0 || parser_push(p, v) < 0)
                return -1;
        return 0;
}

static AstExpr *dict_node(Parser *p, int line, size_t base)
{
        size_t n = (p->n_stack - base) / 2;
        AstExpr *e = parser_expr_new(p, AST_DICT, line);
        if (!e) {
                p->n_stack = base;
                return NULL;
        }
        e->seq.n = (int)n;
        e->seq.items = ast_alloc(p->arena, (n ? n : 1) * sizeof(AstExpr *));
        e->seq.values = ast_alloc(p->arena, (n ? n : 1) * sizeof(AstExpr *));
        if (!e->seq.items || !e->seq.values) {
                parser_nomem(p);
                p->n_stack = base;
                return NULL;
        }
        for (size_t i = 0; i < n; i++) {
                e->seq.items[i] = p->stack[base + 2 * i];
                e->seq.values[i] = p->stack[base + 2 * i + 1];
        }
        p->n_stack = base;
        return parser_fix_depth(p, e) < 0 ? NULL : e;
}

static int dict_unpack(Parser *p)
{
        parser_advance(p); /* ** */
        AstExpr *v = parser_bitwise_or(p);
        if (!v)
                return -1;
        if (parser_push(p, NULL) < 0 || parser_push(p, v) < 0)
                return -1;
        return 0;
}

static AstExpr *brace_atom(Parser *p, int line)
{
        size_t base = p->n_stack;
        if (parser_accept_op(p, OP_RBRACE))
                return dict_node(p, line, base);
        bool is_dict;
        AstExpr *first = NULL;
        if (parser_is_op(p, 0, OP_DOUBLESTAR)) {
                if (dict_unpack(p) < 0)
                        goto fail;
                is_dict = true;
                if (parser_at_for(p)) {
                        parser_error(p, line,
                                     "dict unpacking cannot be used in dict comprehension");
                        goto fail;
                }
        } else {
                first = parser_star_named_expression(p);
                if (!first)
                        goto fail;
                is_dict = first->kind != AST_STARRED && parser_is_op(p, 0, OP_COLON);
                if (is_dict) {
                        if (kvpair(p, first) < 0)
                                goto fail;
                        if (parser_at_for(p)) {
                                AstExpr *v = p->stack[p->n_stack - 1];
                                p->n_stack = base;
                                return comprehension_node(p, AST_DICTCOMP, first, v, line,
                                                          OP_RBRACE);
                        }
                } else if (parser_at_for(p)) {
                        return comprehension_node(p, AST_SETCOMP, first, NULL, line, OP_RBRACE);
                }
        }
        if (!is_dict) {
                if (parser_push(p, first) < 0 || display_items(p, first, OP_RBRACE, true) < 0)
                        goto fail;
                return parser_seq_node(p, AST_SET, line, base);
        }
        while (parser_accept_op(p, OP_COMMA)) {
                if (parser_is_op(p, 0, OP_RBRACE))
                        break;
                if (parser_is_op(p, 0, OP_DOUBLESTAR)) {
                        if (dict_unpack(p) < 0)
                                goto fail;
                        continue;
                }
                /* CPython reports a key that is not followed by ':' as such,
                 * not as two expressions side by side. */
                p->no_invalid++;
                AstExpr *k = parser_expression(p);
                p->no_invalid--;
                if (!k || kvpair(p, k) < 0)
                        goto fail;
        }
        if (parser_expect_op(p, OP_RBRACE) < 0)
                goto fail;
        return dict_node(p, line, base);
fail:
        p->n_stack = base;
        return NULL;
}

/* A parenthesized form or a display, from its opening bracket t. A generic
 * failure is remembered (parser-memo.c): the error rules parse the same
 * brackets again and again. */
static AstExpr *bracket_atom(Parser *p, const LexToken *t)
{
        int open = t->id, line = t->line;
        const char *pos = t->start;
        if (parser_memo_failed(p, PARSER_MEMO_ATOM, pos)) {
                parser_generic_error(p);
                return NULL;
        }
        ParserProbe probe;
        parser_memo_begin(p, &probe, PARSER_MEMO_ATOM, pos);
        parser_advance(p);
        AstExpr *e = NULL;
        if (parser_enter(p) == 0) {
                e = open == OP_LPAR   ? paren_atom(p, line)
                    : open == OP_LSQB ? list_atom(p, line)
                                      : brace_atom(p, line);
                parser_leave(p);
        }
        parser_memo_end(p, &probe, !e);
        return e;
}

AstExpr *parser_atom(Parser *p)
{
        const LexToken *t = parser_peek(p, 0);
        int line = t->line;
        AstExpr *e;
        switch (t->kind) {
        case TOK_NAME:
                e = parser_name_expr(p, t);
                parser_advance(p);
                return e;
        case TOK_NUMBER:
                e = number(p, t);
                parser_advance(p);
                return e;
        case TOK_STRING:
                return parser_strings(p);
        case TOK_KEYWORD:
                if (t->id == KW_TRUE || t->id == KW_FALSE || t->id == KW_NONE) {
                        int kind = t->id == KW_TRUE    ? AST_TRUE
                                   : t->id == KW_FALSE ? AST_FALSE
                                                       : AST_NONE;
                        parser_advance(p);
                        return parser_expr_new(p, kind, line);
                }
                break;
        case TOK_OP:
                if (t->id == OP_ELLIPSIS) {
                        parser_unsupported(p, line, "the Ellipsis literal (...) is");
                        parser_advance(p);
                        return parser_expr_new(p, AST_ELLIPSIS, line);
                }
                if (t->id == OP_LPAR || t->id == OP_LSQB || t->id == OP_LBRACE)
                        return bracket_atom(p, t);
                break;
        case TOK_ERROR:
                return NULL;
        default:
                break;
        }
        parser_generic_error(p);
        return NULL;
}
