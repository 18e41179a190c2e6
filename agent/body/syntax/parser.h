/* parser: the wrapped Body text to an AstModule.
 *
 * parser_wrap_body() builds the program exactly as execution_plan_runner.py
 * does (expandtabs(4), dedent, four spaces, `def __execution_plan_main():`
 * and the try/except trailer); parser_compile() does what the reference's
 * compile() call does with it: tokenize and parse the whole program with
 * Python 3.11's grammar, then resolve its names (ast-resolve.c).
 * Syntax that Python accepts but the interpreter does not support (class,
 * yield, global, ...) is parsed all the same and reported afterwards, so a
 * Body that Python refuses is always refused with Python's own message.
 *
 * The parser is recursive descent over CPython's PEG grammar. Where CPython
 * has a specialised error rule (invalid_*), the parser checks the same
 * situation at the point where it fails; everything else is "invalid
 * syntax" at the furthest token read, as CPython reports it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "body/syntax/ast.h"
#include "body/syntax/lexer.h"

/* Build the program text the reference compiles. *ret is malloc'd and NUL
 * terminated; *ret_body_lines is how many lines the Body contributes. */
int parser_wrap_body(const char *body, size_t len, char **ret, size_t *ret_len,
                     int *ret_body_lines);

/* Compile wrapped program text (see parser_wrap_body()). Returns 0 with *ret
 * filled (nodes in arena), or -1 with *err filled. */
int parser_compile(const char *text, size_t len, AstArena *arena, AstModule *ret, AstError *err);

/* What a compilation cost, for tests that bound the parser's work. */
typedef struct ParserStats {
        /* Tokens the lexer produced, counting those produced again after
         * the parser went back to an earlier position. */
        uint64_t tokens;
} ParserStats;

/* parser_compile(), filling *stats (success or not). */
int parser_compile_stats(const char *text, size_t len, AstArena *arena, AstModule *ret,
                         AstError *err, ParserStats *stats);

/* ---- internal to parser*.c ---- */

/* A position to come back to. Declare it with _cleanup_parser_mark_ (and
 * zero-initialized), which releases what parser_mark() saved. */
typedef struct ParserMark {
        LexState lx;
        LexToken tok[4];
        int ntok;
        int prev_level, prev_line;
        size_t n_stack;
        bool saved;
} ParserMark;

typedef struct Parser {
        Lexer lx;
        AstArena *arena;
        AstInterner *interner;
        AstError *err;
        LexToken tok[4]; /* lookahead: tok[0] is the current token */
        int ntok;
        LexToken error_tok; /* handed out once the lexer has failed */
        /* The furthest token read by what corresponds to CPython's first
         * pass: where "invalid syntax" is. The checks that stand for its
         * second pass (with p->spec > 0) do not move it... */
        const char *last_pos;
        int last_line;
        int last_kind; /* INDENT/DEDENT there make it an IndentationError */
        /* ...but they do move this one, which decides whether an unclosed
         * bracket is reported instead of an error (see finish_error()). */
        int max_line;
        int spec;
        /* Where `expression` was parsed without the specialised checks: as
         * CPython memoizes that result, a later parse there does without
         * them too (see parser_expression()). Open addressing over token
         * start pointers. */
        const char **memo;
        size_t n_memo, cap_memo;
        const char *memo_skip;
        uint32_t *memo_counts; /* the same by offset (see parser-memo.c) */
        bool memo_counts_failed;
        /* Bracketed parts that failed (see parser-memo.c). */
        struct ParserFailure *fails;
        size_t n_fails, cap_fails;
        /* Since the innermost ParserProbe began: the deepest p->depth and
         * the furthest token lexed. */
        int peak_depth;
        const char *far;
        uint64_t n_lexed;     /* tokens the lexer produced */
        uint64_t n_structure; /* of them NEWLINE, INDENT, DEDENT and ENDMARKER */
        int prev_level;       /* bracket level after the last token consumed */
        int prev_line;        /* line where the last token consumed ends */
        int depth;            /* recursion of the parse, against AST_MAX_DEPTH */
        /* Errors CPython's compiler (not its parser) reports, such as
         * "keyword argument repeated": they come after every parse error. */
        char *late;
        int late_line;
        /* The first construct Python accepts but we do not: reported once
         * the whole program has compiled. */
        char *unsupported;
        int unsupported_line;
        /* Parsing the expression of an f-string: errors say "f-string: ". */
        bool in_fstring;
        /* Inside the operand of a specialised error check: CPython's
         * *_without_invalid rules, which do not nest such checks. */
        int no_invalid;
        /* Scratch stack for building node arrays. */
        void **stack;
        size_t n_stack, cap_stack;
} Parser;

/* Failures of bracketed parts, remembered so that the speculative parses
 * (parser-memo.c) do not parse the same brackets again and again. */
typedef enum ParserMemoRule {
        PARSER_MEMO_TRAILER, /* a call or subscript trailer of a primary */
        PARSER_MEMO_ATOM,    /* a parenthesized form or a display */
} ParserMemoRule;

/* The state a parse that may be remembered started in. */
typedef struct ParserProbe {
        const char *pos; /* start of the opening bracket */
        ParserMemoRule rule;
        bool on;         /* the parse may be remembered at all */
        bool no_invalid; /* the specialised checks were off */
        size_t n_memo;
        uint64_t n_structure;
        int depth;
        int outer_peak;        /* Parser.peak_depth before */
        const char *outer_far; /* Parser.far before */
} ParserProbe;

/* The `expression` memo (see Parser.memo). */
bool parser_memo_has(Parser *p, const char *pos);
void parser_memo_add(Parser *p, const char *pos);

/* Did the part that starts with the opening bracket at pos fail before in
 * a way that would repeat now? Then the caller fails as the parse would,
 * without parsing: a trailer is not part of the primary, an atom raises
 * the generic error. */
bool parser_memo_failed(Parser *p, ParserMemoRule rule, const char *pos);
/* Around the parse of such a part. `failed`: the parse returned a failure;
 * it is remembered when the pending error is the generic one. */
void parser_memo_begin(Parser *p, ParserProbe *pr, ParserMemoRule rule, const char *pos);
void parser_memo_end(Parser *p, const ParserProbe *pr, bool failed);
/* Free both memos. */
void parser_memo_free(Parser *p);

/* Run what corresponds to CPython's second pass (see Parser.last_line). */
#define PARSER_SPEC(p, stmt)                                                                       \
        do {                                                                                       \
                (p)->spec++;                                                                       \
                stmt;                                                                              \
                (p)->spec--;                                                                       \
        } while (0)

/* Tokens. */
const LexToken *parser_peek(Parser *p, int k);
void parser_advance(Parser *p);
bool parser_is_op(Parser *p, int k, int op);
bool parser_is_kw(Parser *p, int k, int kw);
bool parser_accept_op(Parser *p, int op);
/* Consume the operator op: 0, or -1 with the generic "invalid syntax"
 * error when another token stands there. */
int parser_expect_op(Parser *p, int op);
bool parser_accept_kw(Parser *p, int kw);
/* Returns 0, or -1 with MemoryError (AST_ERR_NOMEM) raised. */
int parser_mark(Parser *p, ParserMark *m);
int parser_reset(Parser *p, const ParserMark *m);
void parser_mark_done(ParserMark *m);
#define _cleanup_parser_mark_ __attribute__((cleanup(parser_mark_done)))
const char *parser_name(Parser *p, const LexToken *t);

/* Errors. */
int parser_error(Parser *p, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* IndentationError "expected an indented block after WHAT on line
 * WHAT_LINE" at line (as parser_error(): only outside *_without_invalid). */
int parser_expected_block(Parser *p, int line, const char *what, int what_line);
/* "invalid syntax" at the furthest token (or an IndentationError when that
 * token is an INDENT or a DEDENT). */
int parser_generic_error(Parser *p);
int parser_generic_error_at(Parser *p, int line);
/* Is the pending error one a speculative parse may drop? Tokenizer errors,
 * running out of memory and nesting too deep are kept. */
bool parser_error_is_soft(Parser *p);
/* Remember the first unsupported construct ("'class' definitions are");
 * parsing goes on. */
void parser_unsupported(Parser *p, int line, const char *what);
void parser_late_error(Parser *p, int line, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* Did the lexer fail (the current token is TOK_ERROR)? */
static inline bool parser_failed(const LexToken *t)
{
        return t->kind == TOK_ERROR;
}
int parser_enter(Parser *p);
static inline void parser_leave(Parser *p)
{
        p->depth--;
}
/* Parse rule one nesting level deeper (parser_enter() .. parser_leave()):
 * its node, or NULL with the error set. */
AstExpr *parser_nested(Parser *p, AstExpr *(*rule)(Parser *p));
int parser_nomem(Parser *p);

/* Arrays: push items, then collect the top n into the arena. */
int parser_push(Parser *p, void *item);
/* Make room for item n of the arena array *items (a T ** passed as void *,
 * elements of `size` bytes, *cap of them), doubling it from 8: 0, or -1 when
 * memory runs out (error set). */
int parser_reserve(Parser *p, void *items, size_t n, size_t *cap, size_t size);
void **parser_collect(Parser *p, size_t base);

/* Nodes. */
AstExpr *parser_expr_new(Parser *p, int kind, int line);
AstStmt *parser_stmt_new(Parser *p, int kind, int line);
int parser_set_depth(Parser *p, AstExpr *e, int depth);
/* Compute e->depth from its children (CPython's nesting of the same tree). */
int parser_fix_depth(Parser *p, AstExpr *e);

/* Expressions (parser-expr.c). */
AstExpr *parser_expression(Parser *p);
AstExpr *parser_named_expression(Parser *p);
AstExpr *parser_star_expressions(Parser *p);
AstExpr *parser_disjunction(Parser *p);
AstExpr *parser_bitwise_or(Parser *p);
AstExpr *parser_comparison(Parser *p);
/* Is e, syntactically, a bitwise_or (an operand of a comparison)? */
bool parser_bitwise_or_level(const AstExpr *e);
/* Does e start with a list, tuple, genexp, True, None or False? */
bool parser_starts_with_excluded(const AstExpr *e);
AstExpr *parser_yield_expr(Parser *p);
bool parser_starts_expression(Parser *p, int k);
int parser_arguments(Parser *p, AstExpr *call);
int parser_params(Parser *p, AstParams *params, bool lambda, int closer);
AstExpr *parser_lambda(Parser *p);
int parser_comprehension(Parser *p, AstExpr *comp);
/* At `for` after elt (and value, in a dict): a comprehension node of kind
 * with its for and if clauses, or NULL with the error set. */
AstExpr *parser_comprehension_node(Parser *p, int kind, AstExpr *elt, AstExpr *value, int line);
AstFunction *parser_function_new(Parser *p, const char *name, int line);

/* Shared by parser-expr.c, parser-ops.c and parser-atom.c. */
AstExpr *parser_starred(Parser *p);
AstExpr *parser_star_named_expression(Parser *p);
/* A node of `kind` whose seq.items are the stack's items from base. */
AstExpr *parser_seq_node(Parser *p, int kind, int line, size_t base);
/* item, or item (',' item)* [','] as a tuple, where more() says whether
 * another item follows a comma. NULL with the error set. */
AstExpr *parser_comma_tuple(Parser *p, AstExpr *(*item)(Parser *p), bool (*more)(Parser *p));
AstExpr *parser_atom(Parser *p);
/* At `for` (or `async for`): a comprehension starts. */
bool parser_at_for(Parser *p);

/* Strings (parser-fstring.c): adjacent STRING tokens into one node. */
AstExpr *parser_strings(Parser *p);

/* Targets (parser-target.c). */
/* Python's name for what an expression is, in "cannot assign to %s". */
const char *parser_expr_name(const AstExpr *e);
typedef enum ParserTargetKind {
        TARGET_STAR, /* assignment, with-as */
        TARGET_FOR,  /* for and comprehension targets */
        TARGET_DEL,
} ParserTargetKind;
/* Check that e can be assigned to (or deleted); on failure report
 * CPython's message. */
int parser_check_target(Parser *p, AstExpr *e, ParserTargetKind kind);
/* Parse star_targets (for, comprehension): a target list up to 'in'. */
AstExpr *parser_star_targets(Parser *p, ParserTargetKind kind);

/* Statements (parser-stmt.c, parser-simple.c). */
int parser_statements(Parser *p, LexTokKind until, AstStmt ***ret, int *ret_n);
int parser_block(Parser *p, const char *what, int what_line, AstStmt ***ret, int *ret_n);
AstStmt *parser_simple_stmt(Parser *p);
AstExpr *parser_no_lone_star(Parser *p, AstExpr *e);
AstExpr *parser_name_expr(Parser *p, const LexToken *t);
