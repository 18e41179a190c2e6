/* parser-expr: expressions, from `expression` down to `atom`, following
 * CPython 3.11's Grammar/python.gram rule by rule. Left-associative binary
 * operators of one precedence level become one AST_BINOP chain, so that
 * neither the parser nor the evaluator recurses along a long a + b + c.
 *
 * CPython parses twice: a fast pass, and when that fails a second one with
 * its invalid_* rules, which raise the specialised messages. We parse once
 * with those checks built in; where a check must look further ahead than the
 * fast pass would, it runs with p->spec set (see parser.h). */
#include <string.h>

#include "body/syntax/parser.h"
#include "util/macro.h"

static AstExpr *disjunction(Parser *p);

static int max_int(int a, int b)
{
        return a > b ? a : b;
}

static int d(const AstExpr *e)
{
        return e ? e->depth : 0;
}

int parser_fix_depth(Parser *p, AstExpr *e)
{
        int m = 0;
        switch (e->kind) {
        case AST_ATTR:
                m = d(e->attr.value);
                break;
        case AST_SUBSCRIPT:
                m = max_int(d(e->sub.value), d(e->sub.index));
                break;
        case AST_SLICE:
                m = max_int(d(e->slice.lower), max_int(d(e->slice.upper), d(e->slice.step)));
                break;
        case AST_CALL:
                m = d(e->call.func);
                for (int i = 0; i < e->call.n_args; i++)
                        m = max_int(m, d(e->call.args[i]));
                for (int i = 0; i < e->call.n_kw; i++)
                        m = max_int(m, d(e->call.kw[i].value));
                break;
        case AST_UNARY:
                m = d(e->unary.operand);
                break;
        case AST_BINOP: {
                /* CPython nests a + b + c to the left: the first operand
                 * sits under every operator. */
                int n = e->chain.n;
                m = d(e->chain.items[0]) + n - 2;
                for (int i = 1; i < n; i++)
                        m = max_int(m, d(e->chain.items[i]) + n - 1 - i);
                break;
        }
        case AST_BOOLOP:
        case AST_COMPARE:
                for (int i = 0; i < e->chain.n; i++)
                        m = max_int(m, d(e->chain.items[i]));
                break;
        case AST_IFEXP:
                m = max_int(d(e->ifexp.test), max_int(d(e->ifexp.body), d(e->ifexp.orelse)));
                break;
        case AST_LAMBDA:
                m = d(e->lambda->expr);
                break;
        case AST_TUPLE:
        case AST_LIST:
        case AST_SET:
        case AST_FSTRING:
                for (int i = 0; i < e->seq.n; i++)
                        m = max_int(m, d(e->seq.items[i]));
                break;
        case AST_DICT:
                for (int i = 0; i < e->seq.n; i++)
                        m = max_int(m, max_int(d(e->seq.items[i]), d(e->seq.values[i])));
                break;
        case AST_LISTCOMP:
        case AST_SETCOMP:
        case AST_DICTCOMP:
        case AST_GENEXP:
                m = max_int(d(e->comp.elt), d(e->comp.value));
                for (int i = 0; i < e->comp.n_gens; i++) {
                        AstComprehension *g = &e->comp.gens[i];
                        m = max_int(m, max_int(d(g->target), d(g->iter)));
                        for (int k = 0; k < g->n_ifs; k++)
                                m = max_int(m, d(g->ifs[k]));
                }
                break;
        case AST_FVALUE:
                m = max_int(d(e->fvalue.value), d(e->fvalue.spec));
                break;
        case AST_STARRED:
                m = d(e->starred.value);
                break;
        default:
                break;
        }
        return parser_set_depth(p, e, m + 1);
}

bool parser_starts_expression(Parser *p, int k)
{
        const LexToken *t = parser_peek(p, k);
        switch (t->kind) {
        case TOK_NAME:
        case TOK_NUMBER:
        case TOK_STRING:
                return true;
        case TOK_KEYWORD:
                return t->id == KW_NOT || t->id == KW_LAMBDA || t->id == KW_TRUE ||
                       t->id == KW_FALSE || t->id == KW_NONE || t->id == KW_AWAIT;
        case TOK_OP:
                return t->id == OP_LPAR || t->id == OP_LSQB || t->id == OP_LBRACE ||
                       t->id == OP_MINUS || t->id == OP_PLUS || t->id == OP_TILDE ||
                       t->id == OP_ELLIPSIS;
        default:
                return false;
        }
}

static bool token_is(const LexToken *t, const char *s)
{
        size_t n = strlen(s);
        return t->kind == TOK_NAME && t->len == n && memcmp(t->start, s, n) == 0;
}

/* CPython compares soft keywords with strncmp() over the token's length, so
 * that any prefix of "match" or "case" counts as one (a quirk that decides
 * between two error messages). */
static bool soft_keyword(const LexToken *t)
{
        static const char *const soft[] = {"match", "case", "_"};
        if (t->kind != TOK_NAME)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(soft); i++)
                if (t->len <= strlen(soft[i]) && memcmp(t->start, soft[i], t->len) == 0)
                        return true;
        return false;
}

AstFunction *parser_function_new(Parser *p, const char *name, int line)
{
        AstFunction *fn = ast_alloc(p->arena, sizeof(*fn));
        if (!fn) {
                parser_nomem(p);
                return NULL;
        }
        fn->name = name;
        fn->line = line;
        return fn;
}

/* CPython's invalid_expression: a second expression b right after a. b is
 * parsed without the specialised checks (expression_without_invalid), which
 * may meet a tokenizer error further on, as CPython's second pass does.
 * Inside brackets this is "Perhaps you forgot a comma?". A PEG parser
 * accepts b as soon as its first atom parses, whatever trailers fail after
 * it. Returns 1 with that error raised, 0 when it does not apply, -1 for an
 * error that stands (a tokenizer error). */
static __attribute__((noinline)) int forgot_comma(Parser *p, AstExpr *a)
{
        LexToken first = *parser_peek(p, 0);
        bool simple = first.kind == TOK_NAME || first.kind == TOK_NUMBER ||
                      first.kind == TOK_STRING ||
                      (first.kind == TOK_KEYWORD &&
                       (first.id == KW_TRUE || first.id == KW_FALSE || first.id == KW_NONE)) ||
                      (first.kind == TOK_OP && first.id == OP_ELLIPSIS);
        AstExpr *b;
        /* b is expression_without_invalid, which CPython does not memoize as
         * `expression`; what it parses inside is. */
        const char *skip = p->memo_skip;
        p->memo_skip = first.start;
        p->no_invalid++;
        PARSER_SPEC(p, b = parser_expression(p));
        p->no_invalid--;
        p->memo_skip = skip;
        int level = p->prev_level;
        if (!b) {
                if (!parser_error_is_soft(p))
                        return -1;
                ast_error_clear(p->err);
                if (!simple)
                        return 0;
                level = first.level;
        }
        if (level == 0)
                return 0;
        parser_error(p, a->line, "invalid syntax. Perhaps you forgot a comma?");
        return 1;
}

/* An expression a followed by the start of another: always an error, which
 * CPython's second pass explains if it can (invalid_expression, then
 * invalid_legacy_expression). Returns a for the caller to fail on when no
 * rule applies, or NULL with the error raised. */
static __attribute__((noinline)) AstExpr *juxtaposed(Parser *p, AstExpr *a, bool name_string,
                                                     bool soft, bool legacy, int line)
{
        _cleanup_parser_mark_ ParserMark m = {0};
        if (parser_mark(p, &m) < 0)
                return NULL;
        /* print and exec skip the comma rule for the legacy one. */
        if (!name_string && !soft && !(legacy && a->kind == AST_NAME)) {
                if (forgot_comma(p, a) != 0)
                        return NULL;
                if (parser_reset(p, &m) < 0)
                        return NULL;
        }
        if (a->kind == AST_NAME && !(a->flags & AST_F_PARENS)) {
                /* invalid_legacy_expression: NAME !'(' star_expressions, with
                 * the specialised checks on inside. */
                AstExpr *b;
                PARSER_SPEC(p, b = parser_star_expressions(p));
                if (!b && (!parser_error_is_soft(p) || !p->err->generic))
                        return NULL;
                if (b && legacy) {
                        parser_error(p, line,
                                     "Missing parentheses in call to '%s'. Did you mean %s(...)?",
                                     a->name.id, a->name.id);
                        return NULL;
                }
                if (parser_reset(p, &m) < 0)
                        return NULL;
        }
        return a;
}

/* expression: disjunction ['if' disjunction 'else' expression] | lambdef,
 * with CPython's invalid_expression and invalid_legacy_expression checks. */
AstExpr *parser_expression(Parser *p)
{
        if (parser_enter(p) < 0)
                return NULL;
        AstExpr *r = NULL;
        const LexToken *t0 = parser_peek(p, 0);
        /* CPython memoizes `expression`: once parsed at a position without
         * its specialised checks (inside a *_without_invalid rule), a later
         * parse there returns that result and runs no check. */
        bool memoized = false;
        if (t0->kind != TOK_ERROR) {
                if (p->no_invalid && t0->start != p->memo_skip)
                        parser_memo_add(p, t0->start);
                else if (parser_memo_has(p, t0->start))
                        memoized = true;
        }
        if (memoized)
                p->no_invalid++;
        if (t0->kind == TOK_KEYWORD && t0->id == KW_LAMBDA) {
                r = parser_lambda(p);
                goto out;
        }
        bool name_string = t0->kind == TOK_NAME && parser_peek(p, 1)->kind == TOK_STRING;
        t0 = parser_peek(p, 0);
        bool soft = soft_keyword(t0);
        bool legacy = token_is(t0, "print") || token_is(t0, "exec");
        int line = t0->line;
        AstExpr *a = disjunction(p);
        if (!a)
                goto out;
        if (parser_accept_kw(p, KW_IF)) {
                AstExpr *b = disjunction(p);
                if (!b)
                        goto out;
                if (!parser_accept_kw(p, KW_ELSE)) {
                        if (p->no_invalid || parser_is_op(p, 0, OP_COLON))
                                parser_generic_error(p);
                        else
                                parser_error(p, a->line, "expected 'else' after 'if' expression");
                        goto out;
                }
                AstExpr *c = parser_expression(p);
                if (!c)
                        goto out;
                r = parser_expr_new(p, AST_IFEXP, a->line);
                if (!r)
                        goto out;
                r->ifexp.test = b;
                r->ifexp.body = a;
                r->ifexp.orelse = c;
                if (parser_fix_depth(p, r) < 0)
                        r = NULL;
                goto out;
        }
        if (p->no_invalid || !parser_starts_expression(p, 0)) {
                r = a;
                goto out;
        }
        r = juxtaposed(p, a, name_string, soft, legacy, line);
out:
        if (memoized)
                p->no_invalid--;
        parser_leave(p);
        return r;
}

/* named_expression: NAME ':=' expression | expression !':=', with
 * invalid_named_expression's messages for a lone '='. */
/* `e :=` with an expression after it: CPython's invalid_named_expression. */
static __attribute__((noinline)) AstExpr *walrus_error(Parser *p, AstExpr *e)
{
        /* Only when an expression follows, as CPython's rule says. */
        _cleanup_parser_mark_ ParserMark m = {0};
        if (parser_mark(p, &m) < 0)
                return NULL;
        parser_advance(p);
        AstExpr *v;
        p->no_invalid++;
        PARSER_SPEC(p, v = parser_expression(p));
        p->no_invalid--;
        if (v)
                parser_error(p, e->line, "cannot use assignment expressions with %s",
                             parser_expr_name(e));
        else if (parser_reset(p, &m) == 0)
                parser_generic_error(p);
        return NULL;
}

/* `e = x` where a value is expected: the two messages of
 * invalid_named_expression, when a bitwise_or follows that is not itself
 * followed by '='. */
static __attribute__((noinline)) AstExpr *equals_error(Parser *p, AstExpr *e)
{
        bool name = e->kind == AST_NAME && !(e->flags & AST_F_PARENS);
        bool other = parser_bitwise_or_level(e) && !parser_starts_with_excluded(e);
        if (!name && !other) {
                parser_generic_error(p);
                return NULL;
        }
        _cleanup_parser_mark_ ParserMark m = {0};
        if (parser_mark(p, &m) < 0)
                return NULL;
        parser_advance(p);
        AstExpr *b;
        p->no_invalid++;
        PARSER_SPEC(p, b = parser_bitwise_or(p));
        p->no_invalid--;
        if (!b || parser_is_op(p, 0, OP_EQUAL) || parser_is_op(p, 0, OP_COLONEQUAL)) {
                if (parser_reset(p, &m) == 0)
                        parser_generic_error(p);
                return NULL;
        }
        if (name)
                parser_error(p, e->line,
                             "invalid syntax. Maybe you meant '==' or ':=' instead of '='?");
        else
                parser_error(p, e->line,
                             "cannot assign to %s here. Maybe you meant '==' instead of '='?",
                             parser_expr_name(e));
        return NULL;
}

AstExpr *parser_named_expression(Parser *p)
{
        const LexToken *t = parser_peek(p, 0);
        if (t->kind == TOK_NAME && parser_is_op(p, 1, OP_COLONEQUAL)) {
                parser_unsupported(p, t->line, "assignment expressions (:=) are");
                parser_advance(p);
                parser_advance(p);
                return parser_expression(p);
        }
        AstExpr *e = parser_expression(p);
        if (!e)
                return NULL;
        if (parser_is_op(p, 0, OP_COLONEQUAL))
                return walrus_error(p, e);
        if (!parser_is_op(p, 0, OP_EQUAL) || p->no_invalid)
                return e;
        return equals_error(p, e);
}

AstExpr *parser_starred(Parser *p)
{
        int line = parser_peek(p, 0)->line;
        parser_advance(p);
        AstExpr *v = parser_bitwise_or(p);
        if (!v)
                return NULL;
        AstExpr *e = parser_expr_new(p, AST_STARRED, line);
        if (!e)
                return NULL;
        e->starred.value = v;
        return parser_fix_depth(p, e) < 0 ? NULL : e;
}

static AstExpr *star_expression(Parser *p)
{
        if (parser_is_op(p, 0, OP_STAR))
                return parser_starred(p);
        return parser_expression(p);
}

AstExpr *parser_star_named_expression(Parser *p)
{
        if (parser_is_op(p, 0, OP_STAR))
                return parser_starred(p);
        return parser_named_expression(p);
}

AstExpr *parser_seq_node(Parser *p, int kind, int line, size_t base)
{
        AstExpr *e = parser_expr_new(p, kind, line);
        if (!e) {
                p->n_stack = base;
                return NULL;
        }
        e->seq.n = (int)(p->n_stack - base);
        e->seq.items = (AstExpr **)parser_collect(p, base);
        if (!e->seq.items || parser_fix_depth(p, e) < 0)
                return NULL;
        return e;
}

AstExpr *parser_comma_tuple(Parser *p, AstExpr *(*item)(Parser *p), bool (*more)(Parser *p))
{
        int line = parser_peek(p, 0)->line;
        AstExpr *e = item(p);
        if (!e || !parser_is_op(p, 0, OP_COMMA))
                return e;
        size_t base = p->n_stack;
        if (parser_push(p, e) < 0)
                return NULL;
        while (parser_accept_op(p, OP_COMMA)) {
                if (!more(p))
                        break;
                e = item(p);
                if (!e || parser_push(p, e) < 0) {
                        p->n_stack = base;
                        return NULL;
                }
        }
        return parser_seq_node(p, AST_TUPLE, line, base);
}

static bool star_expression_follows(Parser *p)
{
        return parser_is_op(p, 0, OP_STAR) || parser_starts_expression(p, 0);
}

AstExpr *parser_star_expressions(Parser *p)
{
        return parser_comma_tuple(p, star_expression, star_expression_follows);
}

AstExpr *parser_yield_expr(Parser *p)
{
        int line = parser_peek(p, 0)->line;
        parser_advance(p);
        parser_unsupported(p, line, "'yield' expressions are");
        if (parser_accept_kw(p, KW_FROM)) {
                if (!parser_expression(p))
                        return NULL;
        } else if (parser_is_op(p, 0, OP_STAR) || parser_starts_expression(p, 0)) {
                if (!parser_star_expressions(p))
                        return NULL;
        }
        return parser_expr_new(p, AST_NONE, line);
}

static AstExpr *boolop(Parser *p, int kw, AstExpr *(*sub)(Parser *p))
{
        AstExpr *a = sub(p);
        if (!a || !parser_is_kw(p, 0, kw))
                return a;
        size_t base = p->n_stack;
        if (parser_push(p, a) < 0)
                return NULL;
        while (parser_accept_kw(p, kw)) {
                AstExpr *b = sub(p);
                if (!b || parser_push(p, b) < 0) {
                        p->n_stack = base;
                        return NULL;
                }
        }
        AstExpr *e = parser_expr_new(p, AST_BOOLOP, a->line);
        if (!e) {
                p->n_stack = base;
                return NULL;
        }
        e->op = kw == KW_OR;
        e->chain.n = (int)(p->n_stack - base);
        e->chain.items = (AstExpr **)parser_collect(p, base);
        if (!e->chain.items || parser_fix_depth(p, e) < 0)
                return NULL;
        return e;
}

static AstExpr *inversion(Parser *p)
{
        if (!parser_is_kw(p, 0, KW_NOT))
                return parser_comparison(p);
        int line = parser_peek(p, 0)->line;
        parser_advance(p);
        AstExpr *v = parser_nested(p, inversion);
        if (!v)
                return NULL;
        AstExpr *e = parser_expr_new(p, AST_UNARY, line);
        if (!e)
                return NULL;
        e->op = AST_OP_NOT;
        e->unary.operand = v;
        return parser_fix_depth(p, e) < 0 ? NULL : e;
}

static AstExpr *conjunction(Parser *p)
{
        return boolop(p, KW_AND, inversion);
}

static AstExpr *disjunction(Parser *p)
{
        return boolop(p, KW_OR, conjunction);
}

AstExpr *parser_disjunction(Parser *p)
{
        return disjunction(p);
}
