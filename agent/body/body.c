/* body: body_run(), the entry point of the Body interpreter (see body.h):
 * wrap and compile the Body as the reference does, run it on a fresh VM,
 * and turn the result or the exception into a BodyOutcome. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "body/body.h"
#include "body/eval/eval.h"
#include "body/library/library.h"
#include "body/syntax/parser.h"

/* Each unit of max_depth is one nested evaluation in C; beyond this the C
 * stack of a 8 MiB thread is no longer safe, whatever the configuration
 * says (see docs/body.md). */
#define BODY_DEPTH_CAP 2000u

static int compile_error(const AstError *err, int body_lines, BodyOutcome *o)
{
        const char *type = ast_error_type(err);
        char *msg = NULL;
        int r;
        if (err->kind == AST_ERR_SYNTAX || err->kind == AST_ERR_INDENT)
                r = asprintf(&msg, "%s (<string>, line %d)", err->msg ? err->msg : "", err->line);
        else
                r = asprintf(&msg, "%s", err->msg ? err->msg : "");
        if (r < 0)
                return -ENOMEM;
        o->exc_type = strdup(type);
        if (!o->exc_type) {
                free(msg);
                return -ENOMEM;
        }
        o->message = msg;
        o->error_code = 1;
        /* SyntaxError counts the wrapper's def line; the Body's lines are
         * one less. An error found in the trailer (an empty Body, an
         * unterminated string) is put on the Body's last line. */
        int line = err->line - 1;
        if (err->line <= 0)
                line = 0;
        else if (line < 1)
                line = 1;
        else if (line > body_lines)
                line = body_lines;
        o->line = line;
        return 0;
}

static const EvalLibrary library = {
        .builtin = bv_builtin_lookup,
        .import = bv_import,
        .format = bv_format,
};

static int run(const AstModule *mod, const json_t *parameters, const char *const *scripts,
               size_t n_scripts, const BodyHost *host, const BodyLimits *limits, BodyOutcome *o)
{
        BodyLimits lim = limits ? *limits : BODY_LIMITS_DEFAULT;
        if (lim.max_depth > BODY_DEPTH_CAP)
                lim.max_depth = BODY_DEPTH_CAP;
        BodyVM vm;
        int r = bv_vm_init(&vm, &lim, host, scripts, n_scripts);
        if (r < 0)
                return r;
        Eval ev;
        BodyValue *result = NULL;
        json_t *value = NULL;
        if (eval_init(&ev, &vm, &library, mod, parameters) == 0)
                result = eval_program(&ev);
        if (result && bv_to_json(&vm, result, &value) == 0) {
                o->error_code = 0;
                o->value = value;
                r = 0;
        } else if (vm.fatal < 0) {
                r = vm.fatal;
        } else {
                r = bv_exc_to_outcome(&vm, o);
        }
        bv_unref(result);
        eval_done(&ev);
        bv_vm_done(&vm);
        return r;
}

int body_run(const char *source, size_t len, const json_t *parameters, const char *const *scripts,
             size_t n_scripts, const BodyHost *host, const BodyLimits *limits, BodyOutcome *ret)
{
        BodyOutcome o = {0};
        char *text = NULL;
        size_t text_len;
        int body_lines;
        int r = parser_wrap_body(source ? source : "", source ? len : 0, &text, &text_len,
                                 &body_lines);
        if (r < 0)
                return r;
        AstArena arena = {0};
        AstError err = {0};
        AstModule mod;
        if (parser_compile(text, text_len, &arena, &mod, &err) < 0)
                r = err.kind == AST_ERR_NOMEM ? -ENOMEM : compile_error(&err, body_lines, &o);
        else
                r = run(&mod, parameters, scripts, n_scripts, host, limits, &o);
        ast_error_clear(&err);
        ast_arena_free(&arena);
        free(text);
        if (r < 0) {
                body_outcome_clear(&o);
                return r;
        }
        *ret = o;
        return 0;
}

void body_outcome_clear(BodyOutcome *o)
{
        if (!o)
                return;
        json_decref(o->value);
        json_decref(o->additional_info);
        free(o->exc_type);
        free(o->message);
        *o = (BodyOutcome){0};
}
