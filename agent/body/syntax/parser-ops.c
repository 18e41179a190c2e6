/* parser-ops: comparisons, the binary operators by precedence, unary
 * operators, power, and primaries (attribute, call and subscript trailers).
 * See parser-expr.c for the rest of the expression grammar. */
#include <stdint.h>
#include <string.h>

#include "body/syntax/parser.h"
#include "util/macro.h"

static AstExpr *bitwise_or(Parser *p);
static AstExpr *factor(Parser *p);
static AstExpr *slices(Parser *p);
static AstExpr *primary(Parser *p);

static int compare_op(Parser *p)
{
        const LexToken *t = parser_peek(p, 0);
        if (t->kind == TOK_OP) {
                switch (t->id) {
                case OP_EQEQUAL:
                        return AST_CMP_EQ;
                case OP_NOTEQUAL:
                        return AST_CMP_NE;
                case OP_LESS:
                        return AST_CMP_LT;
                case OP_LESSEQUAL:
                        return AST_CMP_LE;
                case OP_GREATER:
                        return AST_CMP_GT;
                case OP_GREATEREQUAL:
                        return AST_CMP_GE;
                default:
                        return -1;
                }
        }
        if (t->kind != TOK_KEYWORD)
                return -1;
        if (t->id == KW_IN)
                return AST_CMP_IN;
        if (t->id == KW_NOT && parser_is_kw(p, 1, KW_IN))
                return AST_CMP_NOT_IN;
        if (t->id == KW_IS)
                return parser_is_kw(p, 1, KW_NOT) ? AST_CMP_IS_NOT : AST_CMP_IS;
        return -1;
}

/* A chain of operands with operators between them (comparisons and one
 * precedence level of binary operators): the operators collect in a local
 * array that grows in the arena. */
typedef struct OpVec {
        uint8_t small[8];
        uint8_t *v;
        size_t n, cap;
} OpVec;

static int opvec_push(Parser *p, OpVec *o, int op)
{
        if (!o->v) {
                o->v = o->small;
                o->cap = sizeof(o->small);
        }
        if (o->n == o->cap) {
                uint8_t *nv = ast_alloc(p->arena, o->cap * 2);
                if (!nv)
                        return parser_nomem(p);
                memcpy(nv, o->v, o->n);
                o->v = nv;
                o->cap *= 2;
        }
        o->v[o->n++] = (uint8_t)op;
        return 0;
}

static AstExpr *chain_node(Parser *p, int kind, int line, size_t base, const OpVec *o)
{
        AstExpr *e = parser_expr_new(p, kind, line);
        if (!e) {
                p->n_stack = base;
                return NULL;
        }
        e->chain.n = (int)(p->n_stack - base);
        e->chain.ops = ast_alloc(p->arena, o->n);
        if (!e->chain.ops) {
                parser_nomem(p);
                p->n_stack = base;
                return NULL;
        }
        memcpy(e->chain.ops, o->v, o->n);
        e->chain.items = (AstExpr **)parser_collect(p, base);
        if (!e->chain.items || parser_fix_depth(p, e) < 0)
                return NULL;
        return e;
}

/* One precedence level of left-associative binary operators, or the
 * comparisons (a chain of AstCmpOp, read by compare_op()). */
typedef struct BinLevel {
        AstExpr *(*sub)(Parser *p);
        int ops[5][2]; /* token op, AstBinOp; ended by {-1, -1} */
        bool compare;
} BinLevel;

static AstExpr *shift_expr(Parser *p);
static AstExpr *sum(Parser *p);
static AstExpr *term(Parser *p);
static AstExpr *bitwise_xor(Parser *p);
static AstExpr *bitwise_and(Parser *p);

static const BinLevel level_compare = {bitwise_or, {{-1, -1}}, true};
static const BinLevel level_or = {bitwise_xor, {{OP_VBAR, AST_OP_OR}, {-1, -1}}};
static const BinLevel level_xor = {bitwise_and, {{OP_CIRCUMFLEX, AST_OP_XOR}, {-1, -1}}};
static const BinLevel level_and = {shift_expr, {{OP_AMPER, AST_OP_AND}, {-1, -1}}};
static const BinLevel level_shift = {
        sum, {{OP_LEFTSHIFT, AST_OP_LSHIFT}, {OP_RIGHTSHIFT, AST_OP_RSHIFT}, {-1, -1}}};
static const BinLevel level_sum = {term, {{OP_PLUS, AST_OP_ADD}, {OP_MINUS, AST_OP_SUB}, {-1, -1}}};
static const BinLevel level_term = {factor,
                                    {{OP_STAR, AST_OP_MUL},
                                     {OP_SLASH, AST_OP_TRUEDIV},
                                     {OP_DOUBLESLASH, AST_OP_FLOORDIV},
                                     {OP_PERCENT, AST_OP_MOD},
                                     {OP_AT, AST_OP_MATMUL}}};

static int level_op(Parser *p, const BinLevel *lv)
{
        if (lv->compare)
                return compare_op(p);
        const LexToken *t = parser_peek(p, 0);
        if (t->kind != TOK_OP)
                return -1;
        for (int i = 0; i < 5 && lv->ops[i][0] >= 0; i++)
                if (lv->ops[i][0] == t->id)
                        return lv->ops[i][1];
        return -1;
}

static AstExpr *binary(Parser *p, const BinLevel *lv)
{
        AstExpr *a = lv->sub(p);
        if (!a)
                return NULL;
        int op = level_op(p, lv);
        if (op < 0)
                return a;
        size_t base = p->n_stack;
        OpVec ops = {0};
        if (parser_push(p, a) < 0)
                return NULL;
        while ((op = level_op(p, lv)) >= 0) {
                if (!lv->compare && op == AST_OP_MATMUL)
                        parser_unsupported(p, parser_peek(p, 0)->line, "the '@' operator is");
                parser_advance(p);
                if (lv->compare && (op == AST_CMP_NOT_IN || op == AST_CMP_IS_NOT))
                        parser_advance(p);
                AstExpr *b = lv->sub(p);
                if (!b || parser_push(p, b) < 0 || opvec_push(p, &ops, op) < 0) {
                        p->n_stack = base;
                        return NULL;
                }
        }
        return chain_node(p, lv->compare ? AST_COMPARE : AST_BINOP, a->line, base, &ops);
}

AstExpr *parser_comparison(Parser *p)
{
        return binary(p, &level_compare);
}

static AstExpr *bitwise_or(Parser *p)
{
        return binary(p, &level_or);
}

AstExpr *parser_bitwise_or(Parser *p)
{
        return bitwise_or(p);
}

static AstExpr *bitwise_xor(Parser *p)
{
        return binary(p, &level_xor);
}

static AstExpr *bitwise_and(Parser *p)
{
        return binary(p, &level_and);
}

static AstExpr *shift_expr(Parser *p)
{
        return binary(p, &level_shift);
}

static AstExpr *sum(Parser *p)
{
        return binary(p, &level_sum);
}

static AstExpr *term(Parser *p)
{
        return binary(p, &level_term);
}

static AstExpr *power(Parser *p)
{
        const LexToken *t = parser_peek(p, 0);
        if (t->kind == TOK_KEYWORD && t->id == KW_AWAIT) {
                parser_unsupported(p, t->line, "'await' expressions are");
                parser_advance(p);
        }
        AstExpr *a = primary(p);
        if (!a || !parser_is_op(p, 0, OP_DOUBLESTAR))
                return a;
        parser_advance(p);
        /* 2 ** 2 ** 2 ... nests to the right: count it. */
        AstExpr *b = parser_nested(p, factor);
        if (!b)
                return NULL;
        AstExpr *e = parser_expr_new(p, AST_BINOP, a->line);
        if (!e)
                return NULL;
        e->chain.n = 2;
        e->chain.items = ast_alloc(p->arena, 2 * sizeof(AstExpr *));
        e->chain.ops = ast_alloc(p->arena, 1);
        if (!e->chain.items || !e->chain.ops) {
                parser_nomem(p);
                return NULL;
        }
        e->chain.items[0] = a;
        e->chain.items[1] = b;
        e->chain.ops[0] = AST_OP_POW;
        return parser_fix_depth(p, e) < 0 ? NULL : e;
}

static AstExpr *factor(Parser *p)
{
        const LexToken *t = parser_peek(p, 0);
        int op = -1;
        if (t->kind == TOK_OP)
                op = t->id == OP_MINUS   ? AST_OP_NEG
                     : t->id == OP_PLUS  ? AST_OP_POS
                     : t->id == OP_TILDE ? AST_OP_INVERT
                                         : -1;
        if (op < 0)
                return power(p);
        int line = t->line;
        parser_advance(p);
        AstExpr *v = parser_nested(p, factor);
        if (!v)
                return NULL;
        /* -1 is a constant. (-9223372036854775808 stays a negation of a
         * big literal, which normalises to the int64 value.) */
        if (op == AST_OP_NEG && !(v->flags & AST_F_PARENS)) {
                if (v->kind == AST_INT) {
                        v->i = -v->i;
                        v->line = line;
                        return v;
                }
                if (v->kind == AST_FLOAT) {
                        v->f = -v->f;
                        v->line = line;
                        return v;
                }
        }
        AstExpr *e = parser_expr_new(p, AST_UNARY, line);
        if (!e)
                return NULL;
        e->op = (uint8_t)op;
        e->unary.operand = v;
        return parser_fix_depth(p, e) < 0 ? NULL : e;
}

/* slices: slice !',' | ','.slice+ [','] */
static AstExpr *one_slice(Parser *p)
{
        int line = parser_peek(p, 0)->line;
        AstExpr *lower = NULL;
        if (!parser_is_op(p, 0, OP_COLON)) {
                if (parser_is_op(p, 0, OP_STAR))
                        return parser_starred(p);
                lower = parser_named_expression(p);
                if (!lower || !parser_is_op(p, 0, OP_COLON))
                        return lower;
        }
        parser_advance(p);
        AstExpr *e = parser_expr_new(p, AST_SLICE, line);
        if (!e)
                return NULL;
        e->slice.lower = lower;
        if (!parser_is_op(p, 0, OP_COLON) && !parser_is_op(p, 0, OP_RSQB) &&
            !parser_is_op(p, 0, OP_COMMA) && !(e->slice.upper = parser_expression(p)))
                return NULL;
        if (parser_accept_op(p, OP_COLON) && !parser_is_op(p, 0, OP_RSQB) &&
            !parser_is_op(p, 0, OP_COMMA) && !(e->slice.step = parser_expression(p)))
                return NULL;
        return parser_fix_depth(p, e) < 0 ? NULL : e;
}

static bool slice_follows(Parser *p)
{
        return !parser_is_op(p, 0, OP_RSQB);
}

static AstExpr *slices(Parser *p)
{
        return parser_comma_tuple(p, one_slice, slice_follows);
}

/* A call or subscript trailer after e, in *ret. A generic failure inside
 * means the trailer is not part of the primary (*ret is NULL and the parser
 * is back before it); other errors stand (-1). Such a failure is remembered
 * (parser-memo.c): the error rules parse the same brackets again and again.
 * Out of line, so that the mark takes stack only while a trailer is parsed. */
static __attribute__((noinline)) int trailer(Parser *p, AstExpr *e, AstExpr **ret)
{
        const LexToken *t = parser_peek(p, 0);
        int open = t->id;
        const char *pos = t->start;
        if (parser_memo_failed(p, PARSER_MEMO_TRAILER, pos)) {
                *ret = NULL;
                return 0;
        }
        _cleanup_parser_mark_ ParserMark m = {0};
        if (parser_mark(p, &m) < 0)
                return -1;
        AstExpr *x = parser_expr_new(p, open == OP_LPAR ? AST_CALL : AST_SUBSCRIPT, e->line);
        if (!x)
                return -1;
        ParserProbe probe;
        parser_memo_begin(p, &probe, PARSER_MEMO_TRAILER, pos);
        parser_advance(p);
        int r;
        if (open == OP_LPAR) {
                x->call.func = e;
                r = parser_arguments(p, x);
        } else {
                x->sub.value = e;
                x->sub.index = slices(p);
                r = x->sub.index ? 0 : -1;
                if (r == 0)
                        r = parser_expect_op(p, OP_RSQB);
        }
        parser_memo_end(p, &probe, r < 0);
        if (r < 0) {
                if (!p->err->generic || parser_reset(p, &m) < 0)
                        return -1;
                x = NULL;
        }
        *ret = x;
        return 0;
}

/* primary: atom followed by .name, (args) and [slices]. CPython's primary
 * is left-recursive PEG: a trailer that does not parse is simply not part
 * of it, and the caller fails on the token after what did parse. */
static AstExpr *primary(Parser *p)
{
        AstExpr *e = parser_atom(p);
        while (e) {
                const LexToken *t = parser_peek(p, 0);
                if (t->kind != TOK_OP)
                        break;
                if (t->id == OP_DOT) {
                        const LexToken *n = parser_peek(p, 1);
                        if (n->kind != TOK_NAME)
                                break;
                        /* CPython 3.11 blames an attribute that ends on a
                         * later line on the line of its name. */
                        AstExpr *a = parser_expr_new(p, AST_ATTR, n->line);
                        if (!a || !(a->attr.attr = parser_name(p, n)))
                                return NULL;
                        parser_advance(p);
                        parser_advance(p);
                        a->attr.value = e;
                        e = a;
                } else if (t->id == OP_LPAR || t->id == OP_LSQB) {
                        AstExpr *x;
                        if (trailer(p, e, &x) < 0)
                                return NULL;
                        if (!x)
                                break;
                        e = x;
                } else {
                        break;
                }
                if (parser_fix_depth(p, e) < 0)
                        return NULL;
        }
        return e;
}
