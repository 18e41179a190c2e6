/* eval: runs the AST of a compiled Body on the values of value.h.
 *
 * The evaluator owns names, scopes, statements, control flow and user
 * functions (def, lambda, comprehensions); every operation on a value goes
 * through the value module (bv_*). Frames keep their slots in a BV_LIST
 * value whose last item is the enclosing function's frame, so that closures
 * keep exactly what they need alive and the VM's end-of-run sweep reclaims
 * cycles (a function stored in its own frame).
 *
 * Every statement and every expression node evaluated costs one step
 * (bv_step); nested expression evaluation and calls count against the
 * depth limit (bv_depth_enter), which also bounds the C recursion. A failed
 * evaluation returns NULL / EXEC_ERROR with the exception pending in
 * vm->exc; the innermost node that fails records its Body line. */
#pragma once

#include "body/syntax/ast.h"
#include "body/values/value.h"

typedef struct Frame {
        BodyValue *env; /* BV_LIST: n_slots slots (NULL = unbound), then the parent env */
        const AstScope *scope;
        BodyValue *retval; /* set by `return` */
        struct Frame *prev;
} Frame;

/* An exception being handled by an except clause, for a bare `raise`. It
 * lives on the C stack of the handler; exc is borrowed from it. */
typedef struct Handled {
        BodyValue *exc;
        int line;
        struct Handled *prev;
} Handled;

/* What the evaluator takes from the library (body/library), which it does
 * not include: body.c hands it over. */
typedef struct EvalLibrary {
        /* The builtin bound to a name, borrowed and immortal, or NULL. */
        BodyValue *(*builtin)(const char *name);
        /* import NAME: the module, or NULL with an exception pending. */
        BodyValue *(*import)(BodyVM *vm, const char *name);
        /* format(v, spec) of an f-string field, appended to out: 0 or -1. */
        int (*format)(BodyVM *vm, BodyValue *v, const char *spec, size_t spec_len, StrBuf *out);
} EvalLibrary;

typedef struct Eval {
        BodyVM *vm;
        const EvalLibrary *lib;
        const AstModule *mod;
        BodyValue **globals; /* one per module slot, owned, NULL when unbound */
        int n_globals;
        Frame *frame; /* innermost; the module's frame has env == NULL */
        Handled *handled;
} Eval;

typedef enum ExecResult {
        EXEC_NORMAL,
        EXEC_RETURN,
        EXEC_BREAK,
        EXEC_CONTINUE,
        EXEC_ERROR,
} ExecResult;

/* Body line of a wrapped-text line, as BodyOutcome.line counts. */
static inline int eval_body_line(int wrapped_line)
{
        return wrapped_line > 1 ? wrapped_line - 1 : 0;
}

/* Record where the pending exception was raised, unless a deeper node did. */
static inline void *eval_fail(Eval *ev, int wrapped_line)
{
        if (ev->vm->exc && ev->vm->exc_line == 0)
                ev->vm->exc_line = eval_body_line(wrapped_line);
        return NULL;
}

/* eval-expr.c */
BodyValue *eval_expr(Eval *ev, const AstExpr *e);
BodyValue *eval_fstring(Eval *ev, const AstExpr *e);

/* eval-call.c */
BodyValue *eval_call(Eval *ev, const AstExpr *e);
BodyValue *eval_make_function(Eval *ev, const AstFunction *fn);
BodyValue *eval_comprehension(Eval *ev, const AstExpr *e);
/* vm->call: call a BV_FUNCTION. */
BodyValue *eval_call_function(BodyVM *vm, BodyValue *fn, BodyValue **args, size_t n,
                              BodyValue *kwargs);

/* eval-stmt.c */
ExecResult eval_block(Eval *ev, AstStmt *const *body, int n);
/* Bind v (borrowed) to a target: name, attribute, subscript, or a tuple or
 * list of targets (unpacking, with one starred target at most). */
int eval_assign(Eval *ev, const AstExpr *target, BodyValue *v);

/* eval.c */
BodyValue *eval_env_new(Eval *ev, const AstScope *scope, BodyValue *parent);
BodyValue *eval_load_name(Eval *ev, const AstExpr *e);
int eval_store_name(Eval *ev, const AstExpr *e, BodyValue *v);
int eval_delete_name(Eval *ev, const AstExpr *e);
/* Run a compiled program: the module's statements but the reference's
 * trailer, then __execution_plan_main(). Returns the function's result, or
 * NULL with an exception pending. */
BodyValue *eval_program(Eval *ev);
int eval_init(Eval *ev, BodyVM *vm, const EvalLibrary *lib, const AstModule *mod,
              const json_t *parameters);
void eval_done(Eval *ev);
