/* eval: the evaluator's state, names and frames, and the program as the
 * reference runs it (see eval.h). */
#include <errno.h>
#include <string.h>

#include "body/eval/eval.h"

/* The evaluator stores AST operators as they are and hands them to the value
 * module: both must number them alike. */
_Static_assert(AST_OP_ADD == (int)BV_OP_ADD && AST_OP_SUB == (int)BV_OP_SUB &&
                       AST_OP_MUL == (int)BV_OP_MUL && AST_OP_TRUEDIV == (int)BV_OP_TRUEDIV &&
                       AST_OP_FLOORDIV == (int)BV_OP_FLOORDIV && AST_OP_MOD == (int)BV_OP_MOD &&
                       AST_OP_POW == (int)BV_OP_POW && AST_OP_LSHIFT == (int)BV_OP_LSHIFT &&
                       AST_OP_RSHIFT == (int)BV_OP_RSHIFT && AST_OP_AND == (int)BV_OP_AND &&
                       AST_OP_OR == (int)BV_OP_OR && AST_OP_XOR == (int)BV_OP_XOR,
               "binary operators");
_Static_assert(AST_OP_NEG == (int)BV_OP_NEG && AST_OP_POS == (int)BV_OP_POS &&
                       AST_OP_INVERT == (int)BV_OP_INVERT && AST_OP_NOT == (int)BV_OP_NOT,
               "unary operators");
_Static_assert(AST_CMP_EQ == (int)BV_CMP_EQ && AST_CMP_NE == (int)BV_CMP_NE &&
                       AST_CMP_LT == (int)BV_CMP_LT && AST_CMP_LE == (int)BV_CMP_LE &&
                       AST_CMP_GT == (int)BV_CMP_GT && AST_CMP_GE == (int)BV_CMP_GE &&
                       AST_CMP_IN == (int)BV_CMP_IN && AST_CMP_NOT_IN == (int)BV_CMP_NOT_IN &&
                       AST_CMP_IS == (int)BV_CMP_IS && AST_CMP_IS_NOT == (int)BV_CMP_IS_NOT,
               "comparison operators");

static const char main_name[] = "__execution_plan_main";

BodyValue *eval_env_new(Eval *ev, const AstScope *scope, BodyValue *parent)
{
        size_t n = (size_t)scope->n_slots;
        BodyValue *env = bv_list_new(ev->vm, n + 1);
        if (!env)
                return NULL;
        /* Slots start unbound (NULL); the value module's list code releases
         * NULL items like any other. */
        memset(env->list.items, 0, (n + 1) * sizeof(BodyValue *));
        env->list.items[n] = bv_ref(parent);
        env->list.len = n + 1;
        return env;
}

static BodyValue *frame_env(Eval *ev, int up)
{
        BodyValue *env = ev->frame->env;
        for (int i = 0; i < up && env; i++)
                env = env->list.items[env->list.len - 1];
        return env;
}

BodyValue *eval_load_name(Eval *ev, const AstExpr *e)
{
        BodyVM *vm = ev->vm;
        BodyValue *v;
        switch (e->name.scope) {
        case AST_SCOPE_LOCAL:
                v = ev->frame->env->list.items[e->name.slot];
                if (v)
                        return bv_ref(v);
                return bv_raise(vm, BV_EXC_UNBOUND_LOCAL_ERROR,
                                "cannot access local variable '%s' where it is not associated "
                                "with a value",
                                e->name.id);
        case AST_SCOPE_FREE: {
                BodyValue *env = frame_env(ev, e->name.up);
                v = env ? env->list.items[e->name.slot] : NULL;
                if (v)
                        return bv_ref(v);
                return bv_raise(vm, BV_EXC_NAME_ERROR,
                                "cannot access free variable '%s' where it is not associated "
                                "with a value in enclosing scope",
                                e->name.id);
        }
        default:
                v = ev->globals[e->name.slot];
                if (v)
                        return bv_ref(v);
                v = ev->lib->builtin(e->name.id);
                if (v)
                        return bv_ref(v);
                return bv_raise(vm, BV_EXC_NAME_ERROR, "name '%s' is not defined", e->name.id);
        }
}

static BodyValue **name_slot(Eval *ev, const AstExpr *e)
{
        switch (e->name.scope) {
        case AST_SCOPE_LOCAL:
                return &ev->frame->env->list.items[e->name.slot];
        case AST_SCOPE_FREE: {
                BodyValue *env = frame_env(ev, e->name.up);
                return env ? &env->list.items[e->name.slot] : NULL;
        }
        default:
                return &ev->globals[e->name.slot];
        }
}

int eval_store_name(Eval *ev, const AstExpr *e, BodyValue *v)
{
        BodyValue **slot = name_slot(ev, e);
        if (!slot) {
                bv_raise_fatal(ev->vm, -EINVAL);
                return -1;
        }
        BodyValue *old = *slot;
        *slot = bv_ref(v);
        bv_unref(old);
        return 0;
}

int eval_delete_name(Eval *ev, const AstExpr *e)
{
        BodyValue **slot = name_slot(ev, e);
        if (!slot || !*slot) {
                if (e->name.scope == AST_SCOPE_GLOBAL)
                        bv_raise(ev->vm, BV_EXC_NAME_ERROR, "name '%s' is not defined", e->name.id);
                else
                        bv_raise(ev->vm, BV_EXC_UNBOUND_LOCAL_ERROR,
                                 "cannot access local variable '%s' where it is not associated "
                                 "with a value",
                                 e->name.id);
                return -1;
        }
        bv_unref(*slot);
        *slot = NULL;
        return 0;
}

int eval_init(Eval *ev, BodyVM *vm, const EvalLibrary *lib, const AstModule *mod,
              const json_t *parameters)
{
        *ev = (Eval){.vm = vm, .lib = lib, .mod = mod, .n_globals = mod->scope.n_slots};
        ev->globals = bv_mem_alloc(vm, ((size_t)ev->n_globals + 1) * sizeof(BodyValue *));
        if (!ev->globals)
                return -1;
        memset(ev->globals, 0, ((size_t)ev->n_globals + 1) * sizeof(BodyValue *));
        vm->eval = ev;
        vm->call = eval_call_function;
        /* The reference's globals: args, then one callable per script (a
         * script called "args" replaces it, as dict.update() would). */
        for (int i = 0; i < ev->n_globals; i++) {
                const char *name = mod->scope.slots[i];
                BodyValue *v = NULL;
                for (size_t k = 0; k < vm->n_scripts && !v; k++)
                        if (streq(vm->scripts[k], name))
                                v = bv_script_new(vm, name);
                if (!v && streq(name, "args"))
                        v = bv_args_new(vm, parameters);
                else if (!v)
                        continue;
                if (!v)
                        return -1;
                ev->globals[i] = v;
        }
        return 0;
}

void eval_done(Eval *ev)
{
        if (!ev->vm)
                return;
        if (ev->globals) {
                for (int i = 0; i < ev->n_globals; i++)
                        bv_unref(ev->globals[i]);
                bv_mem_free(ev->vm, ev->globals, ((size_t)ev->n_globals + 1) * sizeof(BodyValue *));
        }
        ev->globals = NULL;
        ev->vm->eval = NULL;
        ev->vm->call = NULL;
}

BodyValue *eval_program(Eval *ev)
{
        const AstModule *m = ev->mod;
        Frame frame = {.scope = &m->scope};
        ev->frame = &frame;
        /* Everything but the reference's trailer runs at module level: the
         * def, and whatever a Body with a bare \r put beside it. The
         * trailer's call is made here, so that the exception keeps its line;
         * its `except Exception` is what turns an exception into a result,
         * which the caller does for every exception alike. */
        int n = m->n_body;
        const AstStmt *trailer = n > 0 ? m->body[n - 1] : NULL;
        if (!trailer || trailer->kind != AST_S_TRY)
                return bv_raise_fatal(ev->vm, -EINVAL);
        ExecResult r = eval_block(ev, m->body, n - 1);
        ev->frame = NULL;
        if (r == EXEC_ERROR)
                return NULL;
        int line = trailer->try_.n_body > 0 ? trailer->try_.body[0]->line : trailer->line;
        BodyValue *fn = NULL;
        for (int i = 0; i < ev->n_globals; i++)
                if (streq(m->scope.slots[i], main_name))
                        fn = ev->globals[i];
        if (!fn) {
                bv_raise(ev->vm, BV_EXC_NAME_ERROR, "name '%s' is not defined", main_name);
                return eval_fail(ev, line);
        }
        ev->frame = &frame;
        BodyValue *result = bv_call(ev->vm, fn, NULL, 0, NULL);
        ev->frame = NULL;
        if (!result)
                return eval_fail(ev, line);
        return result;
}
