/* lexer: Python 3.11's tokenizer rules for the wrapped Body text.
 *
 * The lexer works on the text exactly as the reference agent hands it to
 * compile(): the Body re-indented inside `def __execution_plan_main():` with
 * the try/except trailer after it (see body_wrap()). It produces NEWLINE,
 * INDENT and DEDENT the way CPython's tokenizer does, joins lines inside
 * brackets and after a backslash, skips comments, and reports the
 * tokenizer's own errors with CPython's wording and line numbers, so that a
 * Body that Python refuses to compile is refused here with the same message.
 *
 * Tokens point into the source; string and number tokens are raw spans that
 * the parser decodes (lexer_decode_string(), lexer_parse_number()). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "body/syntax/ast.h"

typedef enum LexTokKind {
        TOK_ENDMARKER,
        TOK_NAME,    /* identifier that is not a keyword */
        TOK_KEYWORD, /* tok.id is a LexKeyword */
        TOK_NUMBER,
        TOK_STRING,
        TOK_NEWLINE,
        TOK_INDENT,
        TOK_DEDENT,
        TOK_OP,    /* tok.id is a LexOp */
        TOK_ERROR, /* the parser's stand-in once the lexer has failed */
} LexTokKind;

typedef enum LexKeyword {
        KW_FALSE,
        KW_NONE,
        KW_TRUE,
        KW_AND,
        KW_AS,
        KW_ASSERT,
        KW_ASYNC,
        KW_AWAIT,
        KW_BREAK,
        KW_CLASS,
        KW_CONTINUE,
        KW_DEF,
        KW_DEL,
        KW_ELIF,
        KW_ELSE,
        KW_EXCEPT,
        KW_FINALLY,
        KW_FOR,
        KW_FROM,
        KW_GLOBAL,
        KW_IF,
        KW_IMPORT,
        KW_IN,
        KW_IS,
        KW_LAMBDA,
        KW_NONLOCAL,
        KW_NOT,
        KW_OR,
        KW_PASS,
        KW_RAISE,
        KW_RETURN,
        KW_TRY,
        KW_WHILE,
        KW_WITH,
        KW_YIELD,
        _KW_MAX,
} LexKeyword;

typedef enum LexOp {
        OP_LPAR,
        OP_RPAR,
        OP_LSQB,
        OP_RSQB,
        OP_LBRACE,
        OP_RBRACE,
        OP_COLON,
        OP_COMMA,
        OP_SEMI,
        OP_PLUS,
        OP_MINUS,
        OP_STAR,
        OP_SLASH,
        OP_VBAR,
        OP_AMPER,
        OP_LESS,
        OP_GREATER,
        OP_EQUAL,
        OP_DOT,
        OP_PERCENT,
        OP_EQEQUAL,
        OP_NOTEQUAL,
        OP_LESSEQUAL,
        OP_GREATEREQUAL,
        OP_TILDE,
        OP_CIRCUMFLEX,
        OP_LEFTSHIFT,
        OP_RIGHTSHIFT,
        OP_DOUBLESTAR,
        OP_PLUSEQUAL,
        OP_MINEQUAL,
        OP_STAREQUAL,
        OP_SLASHEQUAL,
        OP_PERCENTEQUAL,
        OP_AMPEREQUAL,
        OP_VBAREQUAL,
        OP_CIRCUMFLEXEQUAL,
        OP_LEFTSHIFTEQUAL,
        OP_RIGHTSHIFTEQUAL,
        OP_DOUBLESTAREQUAL,
        OP_DOUBLESLASH,
        OP_DOUBLESLASHEQUAL,
        OP_AT,
        OP_ATEQUAL,
        OP_RARROW,
        OP_ELLIPSIS,
        OP_COLONEQUAL,
        /* A character CPython's tokenizer passes on as an operator that no
         * grammar rule accepts ($, ?, !, `): the parser reports "invalid
         * syntax" where it meets it. */
        OP_UNKNOWN,
} LexOp;

typedef struct LexToken {
        LexTokKind kind;
        int id;       /* LexKeyword or LexOp */
        int line;     /* wrapped-text line of the first character */
        int end_line; /* line of the last character */
        const char *start;
        size_t len;
        int level; /* bracket nesting after this token */
} LexToken;

/* CPython's limits: MAXLEVEL nested brackets, MAXINDENT indentation levels. */
#define LEX_MAX_LEVEL  200
#define LEX_MAX_INDENT 100

typedef struct Lexer {
        const char *src;
        size_t len;
        size_t pos;
        int line;
        size_t line_start;
        bool at_bol;
        bool done;
        int pending; /* > 0: INDENTs to emit, < 0: DEDENTs */
        int indent;  /* index of the top of indstack */
        int indstack[LEX_MAX_INDENT];
        int level;
        char parenstack[LEX_MAX_LEVEL];
        int parenline[LEX_MAX_LEVEL];
        AstError *err;     /* where errors are reported */
        int nonascii_line; /* first identifier with letters beyond ASCII, 0 if none */
} Lexer;

void lexer_init(Lexer *lx, const char *src, size_t len, AstError *err);

/* A saved lexer position, for the parser's speculative parses. The used part
 * of the bracket and indentation stacks is kept inline when it is short (as
 * it almost always is), so that a saved state costs a few hundred bytes of
 * C stack rather than a whole Lexer. */
#define LEX_SAVE_INLINE 16
typedef struct LexState {
        size_t pos, line_start;
        int line, pending, indent, level, nonascii_line;
        bool at_bol, done;
        char paren_inline[LEX_SAVE_INLINE];
        int parenline_inline[LEX_SAVE_INLINE];
        int ind_inline[LEX_SAVE_INLINE];
        char *paren; /* paren_inline, or malloc'd with parenline and ind after it */
        int *parenline;
        int *ind;
        void *heap;
} LexState;

/* Returns 0 or -ENOMEM. lexer_state_free() must follow either way. */
int lexer_save(const Lexer *lx, LexState *st);
void lexer_restore(Lexer *lx, const LexState *st);
void lexer_state_free(LexState *st);

/* Next token. Returns 0, or -1 with *lx->err filled (a tokenizer error). At
 * the end it keeps returning TOK_ENDMARKER. With open brackets at the end of
 * the text it returns -1 with err->kind AST_ERR_EOF_IN_BRACKETS and no
 * message: the parser decides what to report (see parser.c). */
int lexer_next(Lexer *lx, LexToken *tok);

/* A string token, decoded. */
typedef struct LexString {
        char *s; /* arena memory, NUL-terminated; an f-string's text is left undecoded */
        size_t len;
        bool fstring; /* f prefix: the f-string parser splits and decodes s */
        bool raw;     /* r prefix */
        bool bytes;   /* b prefix: outside the subset, reported by the parser */
} LexString;

/* Decode one string token (prefix, quotes and escapes). Returns 0 or -1
 * with *err filled. */
int lexer_decode_string(const LexToken *tok, AstArena *arena, AstError *err, LexString *ret);

/* Decode escapes in part of an f-string's literal text (the same rules as an
 * ordinary string, raw or not). */
int lexer_decode_escapes(const char *s, size_t n, bool raw, int line, AstArena *arena,
                         AstError *err, char **ret, size_t *ret_len);

/* The value of a number token: an int (*ret_int, or ret_big for an integer
 * beyond int64) or a float (*ret_float). Returns AST_INT, AST_FLOAT, or -1
 * with *err filled (imaginary literals are outside the subset). */
int lexer_parse_number(const LexToken *tok, AstError *err, int64_t *ret_int, double *ret_float,
                       bool *ret_big);

const char *lexer_keyword_name(int kw);
const char *lexer_op_text(int op);
