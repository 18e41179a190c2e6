/* ast: the syntax tree of a wrapped Body, the arena it lives in, and the
 * compile errors that the lexer, parser and scope analysis report.
 *
 * Every node is allocated from one AstArena and freed with it in one go, so
 * parsing does one malloc per 16 KiB of nodes and never frees piecemeal. The
 * tree is read-only once ast_resolve() has annotated the names; the
 * evaluator walks it directly. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct AstArenaChunk AstArenaChunk;

typedef struct AstArena {
        AstArenaChunk *head;
        size_t used; /* bytes used in head */
        size_t cap;  /* bytes available in head */
} AstArena;

/* Zeroed, 8-byte aligned memory that lives as long as the arena, or NULL. */
void *ast_alloc(AstArena *a, size_t n);
char *ast_strndup(AstArena *a, const char *s, size_t n);
void ast_arena_free(AstArena *a);

/* What went wrong while compiling, in the terms Python reports it. */
typedef enum AstErrKind {
        AST_ERR_NONE,
        AST_ERR_SYNTAX,    /* SyntaxError */
        AST_ERR_INDENT,    /* IndentationError */
        AST_ERR_RECURSION, /* RecursionError: nesting beyond the compiler's limit */
        AST_ERR_VALUE,     /* ValueError: NUL bytes in the source */
        AST_ERR_NOMEM,     /* the agent ran out of memory */
        /* The lexer reached the end inside brackets; the parser turns this
         * into "'(' was never closed" or a generic error, as CPython does. */
        AST_ERR_EOF_IN_BRACKETS,
} AstErrKind;

typedef struct AstError {
        AstErrKind kind;
        /* A generic "invalid syntax": a tokenizer error further on, or an
         * unclosed bracket on an earlier line, replaces it (CPython's
         * _PyPegen_tokenize_full_source_to_check_for_errors). */
        bool generic;
        /* A tokenizer error CPython records without raising it at once
         * (bad dedent, too deep, bad line continuation): it does not
         * replace a generic error found earlier. */
        bool soft;
        bool from_lexer; /* raised by the tokenizer rather than the parser */
        /* Raised where CPython raises it at once (string decoding, f-strings):
         * a speculative parse may not drop it. */
        bool sticky;
        /* "unexpected indent": CPython does not look at the rest of the text
         * for a better error (see parser.c, finish_error()). */
        bool final;
        int line;  /* line in the wrapped text, 0 for none */
        char *msg; /* owned (malloc), without the "(<string>, line N)" suffix */
} AstError;

/* Record an error (the first one wins unless `force`). Returns -1. */
int ast_error_set(AstError *e, AstErrKind kind, int line, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
int ast_error_replace(AstError *e, AstErrKind kind, int line, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
void ast_error_clear(AstError *e);
/* Python's class name for the error: "SyntaxError", "IndentationError", ... */
const char *ast_error_type(const AstError *e);

/* Nesting beyond which compiling fails with RecursionError, as CPython's
 * "maximum recursion depth exceeded during compilation" does at about this
 * depth of the tree. It also bounds the evaluator's C recursion. */
#define AST_MAX_DEPTH 2990

typedef struct AstExpr AstExpr;
typedef struct AstStmt AstStmt;
typedef struct AstScope AstScope;

typedef enum AstExprKind {
        AST_NONE,
        AST_TRUE,
        AST_FALSE,
        AST_ELLIPSIS,
        AST_INT,
        AST_BIGINT, /* an integer literal beyond int64: its text in str */
        AST_FLOAT,
        AST_STR,
        AST_FSTRING, /* parts: AST_STR and AST_FVALUE */
        AST_FVALUE,
        AST_NAME,
        AST_ATTR,
        AST_SUBSCRIPT,
        AST_SLICE,
        AST_CALL,
        AST_UNARY,
        AST_BINOP,   /* a left-associative chain: a + b - c */
        AST_BOOLOP,  /* a and b and c / a or b */
        AST_COMPARE, /* a < b <= c */
        AST_IFEXP,
        AST_LAMBDA,
        AST_TUPLE,
        AST_LIST,
        AST_SET,
        AST_DICT,
        AST_LISTCOMP,
        AST_SETCOMP,
        AST_DICTCOMP,
        AST_GENEXP,
        AST_STARRED, /* *x in a call or a display */
} AstExprKind;

/* How a name is found: a slot of the current frame, a slot of an enclosing
 * function's frame (`up` levels out), or the module's globals and then the
 * builtins. */
typedef enum AstNameScope {
        AST_SCOPE_LOCAL,
        AST_SCOPE_FREE,
        AST_SCOPE_GLOBAL,
} AstNameScope;

/* Operators, numbered as the value module numbers them (BvBinOp, BvUnaryOp,
 * BvCmpOp: eval.c checks that they agree), so that the evaluator passes them
 * on unchanged. The AST does not depend on value.h. */
typedef enum AstBinOp {
        AST_OP_ADD,
        AST_OP_SUB,
        AST_OP_MUL,
        AST_OP_TRUEDIV,
        AST_OP_FLOORDIV,
        AST_OP_MOD,
        AST_OP_POW,
        AST_OP_LSHIFT,
        AST_OP_RSHIFT,
        AST_OP_AND,
        AST_OP_OR,
        AST_OP_XOR,
        AST_OP_MATMUL, /* parsed, reported as unsupported */
} AstBinOp;

typedef enum AstUnaryOp {
        AST_OP_NEG,
        AST_OP_POS,
        AST_OP_INVERT,
        AST_OP_NOT,
} AstUnaryOp;

typedef enum AstCmpOp {
        AST_CMP_EQ,
        AST_CMP_NE,
        AST_CMP_LT,
        AST_CMP_LE,
        AST_CMP_GT,
        AST_CMP_GE,
        AST_CMP_IN,
        AST_CMP_NOT_IN,
        AST_CMP_IS,
        AST_CMP_IS_NOT,
} AstCmpOp;

typedef struct AstKeyword {
        const char *name; /* NULL for **kwargs */
        AstExpr *value;
} AstKeyword;

/* One `for ... in ... if ...` of a comprehension. */
typedef struct AstComprehension {
        AstExpr *target;
        AstExpr *iter;
        AstExpr **ifs;
        int n_ifs;
} AstComprehension;

/* Parameters of a def or lambda: positional (with defaults for the last
 * n_defaults), *args, keyword-only (defaults may be NULL), **kwargs. */
typedef struct AstParams {
        const char **names; /* positional, then keyword-only */
        int n_pos;
        int n_kwonly;
        AstExpr **defaults; /* for the last n_defaults positional parameters */
        int n_defaults;
        AstExpr **kw_defaults; /* n_kwonly entries, NULL where required */
        const char *vararg;    /* NULL: none */
        const char *kwarg;     /* NULL: none */
} AstParams;

/* A function scope: the Body's def, a nested def, a lambda or a
 * comprehension. Slots are numbered parameters first. */
struct AstScope {
        AstScope *parent;     /* enclosing function scope, NULL at module level */
        const char *qualname; /* of the function this is the scope of */
        const char **slots;
        int n_slots;
        int cap_slots;
        int *index; /* hash index of slots once there are many */
        size_t n_index;
        bool is_module;
        bool is_comprehension;
};

typedef struct AstFunction {
        const char *name;     /* "<lambda>", "<listcomp>", or the def's name */
        const char *qualname; /* "f", "outer.<locals>.inner" */
        AstParams params;
        AstStmt **body; /* def */
        int n_body;
        AstExpr *expr; /* lambda */
        AstScope scope;
        int line;
} AstFunction;

/* AstExpr.flags */
enum {
        AST_F_PARENS = 1u << 0, /* written in parentheses: (a < b), (a, b) */
};

struct AstExpr {
        uint8_t kind;
        uint8_t op; /* unary op, boolop (0 and, 1 or), fvalue conversion */
        uint8_t flags;
        uint16_t depth; /* nesting, for the compile-time limit */
        int line;       /* wrapped-text line */
        union {
                int64_t i;
                double f;
                struct {
                        const char *s; /* UTF-8, NUL-terminated */
                        size_t len;
                } str;
                struct {
                        const char *id; /* interned: equal names are the same pointer */
                        uint8_t scope;  /* AstNameScope */
                        int16_t up;     /* FREE: frames out */
                        int32_t slot;   /* LOCAL, FREE: slot; GLOBAL: global index */
                } name;
                struct {
                        AstExpr *value;
                        const char *attr;
                } attr;
                struct {
                        AstExpr *value;
                        AstExpr *index;
                } sub;
                struct {
                        AstExpr *lower, *upper, *step; /* NULL when absent */
                } slice;
                struct {
                        AstExpr *func;
                        AstExpr **args; /* AST_STARRED for *x */
                        int n_args;
                        AstKeyword *kw;
                        int n_kw;
                } call;
                struct {
                        AstExpr *operand;
                } unary;
                struct {
                        /* items[0] op[0] items[1] op[1] items[2] ...; for
                         * COMPARE ops[i] is a BvCmpOp, for BINOP a BvBinOp. */
                        AstExpr **items;
                        uint8_t *ops;
                        int n; /* items */
                } chain;
                struct {
                        AstExpr *test, *body, *orelse;
                } ifexp;
                AstFunction *lambda;
                struct {
                        AstExpr **items;  /* TUPLE, LIST, SET, FSTRING; DICT keys (NULL: **x) */
                        AstExpr **values; /* DICT values */
                        int n;
                } seq;
                struct {
                        AstExpr *elt;   /* DICTCOMP key */
                        AstExpr *value; /* DICTCOMP value */
                        AstComprehension *gens;
                        int n_gens;
                        AstFunction *fn; /* the comprehension's scope */
                } comp;
                struct {
                        AstExpr *value;
                        AstExpr *spec; /* AST_FSTRING or NULL */
                } fvalue;
                struct {
                        AstExpr *value;
                } starred;
        };
};

typedef enum AstStmtKind {
        AST_S_EXPR,
        AST_S_ASSIGN,
        AST_S_AUGASSIGN,
        AST_S_RETURN,
        AST_S_IF,
        AST_S_FOR,
        AST_S_WHILE,
        AST_S_BREAK,
        AST_S_CONTINUE,
        AST_S_PASS,
        AST_S_IMPORT,
        AST_S_IMPORTFROM,
        AST_S_WITH,
        AST_S_TRY,
        AST_S_RAISE,
        AST_S_DEF,
        AST_S_DEL,
        AST_S_ASSERT,
} AstStmtKind;

typedef struct AstAlias {
        const char *name;   /* module (import a.b) or member (from m import x) */
        const char *module; /* import: the module bound, "a" for `import a.b`, "a.b" with as */
        AstExpr *target;    /* the name bound: AST_NAME */
} AstAlias;

typedef struct AstWithItem {
        AstExpr *ctx;
        AstExpr *target; /* NULL without `as` */
} AstWithItem;

typedef struct AstHandler {
        AstExpr *type; /* NULL: bare except */
        AstExpr *name; /* AST_NAME after `as`, or NULL */
        AstStmt **body;
        int n_body;
        int line;
} AstHandler;

struct AstStmt {
        uint8_t kind;
        uint8_t op; /* AUGASSIGN: BvBinOp */
        int line;
        union {
                struct {
                        AstExpr *value;
                } expr; /* EXPR, RETURN (value may be NULL) */
                struct {
                        AstExpr **targets; /* a = b = value */
                        int n_targets;
                        AstExpr *value;
                } assign;
                struct {
                        AstExpr *target;
                        AstExpr *value;
                } aug;
                struct {
                        AstExpr *test;
                        AstStmt **body;
                        int n_body;
                        AstStmt **orelse;
                        int n_orelse;
                } if_; /* IF, WHILE */
                struct {
                        AstExpr *target;
                        AstExpr *iter;
                        AstStmt **body;
                        int n_body;
                        AstStmt **orelse;
                        int n_orelse;
                } for_;
                struct {
                        const char *module; /* IMPORTFROM */
                        AstAlias *names;
                        int n_names;
                } import;
                struct {
                        AstWithItem *items;
                        int n_items;
                        AstStmt **body;
                        int n_body;
                } with;
                struct {
                        AstStmt **body;
                        int n_body;
                        AstHandler *handlers;
                        int n_handlers;
                        AstStmt **orelse;
                        int n_orelse;
                        AstStmt **final;
                        int n_final;
                } try_;
                struct {
                        AstExpr *exc;   /* NULL: bare raise */
                        AstExpr *cause; /* raise X from Y */
                } raise;
                struct {
                        AstFunction *fn;
                        AstExpr *target; /* AST_NAME the def binds */
                } def;
                struct {
                        AstExpr **targets;
                        int n_targets;
                } del;
                struct {
                        AstExpr *test;
                        AstExpr *msg;
                } assert_;
        };
};

/* A whole compiled program: the module's statements and its global names. */
typedef struct AstModule {
        AstStmt **body;
        int n_body;
        AstScope scope;      /* is_module: its slots are the global names */
        int body_first_line; /* wrapped line of the Body's first line (2) */
        int body_last_line;  /* wrapped line of the Body's last line */
} AstModule;

/* Interned identifier table used while parsing. */
typedef struct AstInterner {
        const char **slots;
        size_t n_slots; /* power of two */
        size_t count;
} AstInterner;

const char *ast_intern(AstInterner *in, AstArena *a, const char *s, size_t n);
void ast_interner_free(AstInterner *in);

/* Scope analysis: decide for every name whether it is a local slot, a slot
 * of an enclosing function or a global, and give every global an index.
 * Reports the compile errors that CPython's symbol table reports
 * ('return' outside function, 'break' outside loop, ...). */
int ast_resolve(AstModule *m, AstArena *a, AstError *err);

/* Slot index of name in scope (adding it when `add`), or -1. */
int ast_scope_slot(AstScope *s, AstArena *a, const char *name, bool add);
