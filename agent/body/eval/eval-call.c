/* eval-call: calls, user functions (def and lambda) with Python's argument
 * binding and its error messages, and comprehensions. */
#include <string.h>

#include "body/eval/eval.h"
#include "util/strbuf.h"

/* The payload of a BV_FUNCTION. One allocation, accounted to the VM: the
 * struct, then the values of the defaults. */
typedef struct EvalFunc {
        const AstFunction *fn;
        BodyVM *vm;
        size_t mem;
        BodyValue *env;          /* the defining frame, or NULL at module level */
        BodyValue **defaults;    /* params.n_defaults */
        BodyValue **kw_defaults; /* params.n_kwonly, NULL where required */
        BodyValue *storage[];
} EvalFunc;

static void func_destroy(void *payload)
{
        EvalFunc *f = payload;
        const AstParams *pa = &f->fn->params;
        bv_unref(f->env);
        for (int i = 0; i < pa->n_defaults + pa->n_kwonly; i++)
                bv_unref(f->storage[i]);
        bv_mem_free(f->vm, f, f->mem);
}

BodyValue *eval_make_function(Eval *ev, const AstFunction *fn)
{
        BodyVM *vm = ev->vm;
        const AstParams *pa = &fn->params;
        size_t nd = (size_t)(pa->n_defaults + pa->n_kwonly);
        size_t mem = sizeof(EvalFunc) + nd * sizeof(BodyValue *);
        EvalFunc *f = bv_mem_alloc(vm, mem);
        if (!f)
                return NULL;
        memset(f, 0, mem);
        f->fn = fn;
        f->vm = vm;
        f->mem = mem;
        f->defaults = f->storage;
        f->kw_defaults = f->storage + pa->n_defaults;
        /* Defaults are evaluated once, here, left to right. */
        for (size_t i = 0; i < nd; i++) {
                const AstExpr *d = i < (size_t)pa->n_defaults ? pa->defaults[i]
                                                              : pa->kw_defaults[i - pa->n_defaults];
                if (d && !(f->storage[i] = eval_expr(ev, d))) {
                        func_destroy(f);
                        return NULL;
                }
        }
        f->env = bv_ref(ev->frame->env);
        return bv_function_new(vm, fn->qualname, f, func_destroy);
}

/* The parameters in [from, to) left unbound, listed as CPython's
 * format_missing() does: "'a'", "'a' and 'b'", "'a', 'b', and 'c'". */
static __attribute__((noinline)) int missing_error(Eval *ev, const AstFunction *fn,
                                                   BodyValue *const *slot, int from, int to,
                                                   const char *kind)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        int n = 0, k = 0;
        for (int i = from; i < to; i++)
                n += !slot[i];
        for (int i = from; i < to; i++) {
                if (slot[i])
                        continue;
                const char *sep = k == 0 ? "" : n == 2 ? " and " : k == n - 1 ? ", and " : ", ";
                k++;
                if (strbuf_printf(&b, "%s'%s'", sep, fn->params.names[i]) < 0) {
                        bv_raise_fatal(ev->vm, -ENOMEM);
                        return -1;
                }
        }
        bv_raise(ev->vm, BV_EXC_TYPE_ERROR, "%s() missing %d required %s argument%s: %s",
                 fn->qualname, n, kind, n == 1 ? "" : "s", b.data ? b.data : "");
        return -1;
}

static __attribute__((noinline)) int too_many_error(Eval *ev, const AstFunction *fn, size_t given,
                                                    int kwonly_given)
{
        const AstParams *pa = &fn->params;
        char sig[96], kw[96] = "";
        if (pa->n_defaults)
                snprintf(sig, sizeof sig, "from %d to %d positional arguments",
                         pa->n_pos - pa->n_defaults, pa->n_pos);
        else
                snprintf(sig, sizeof sig, "%d positional argument%s", pa->n_pos,
                         pa->n_pos == 1 ? "" : "s");
        if (kwonly_given)
                snprintf(kw, sizeof kw, " positional argument%s (and %d keyword-only argument%s)",
                         given != 1 ? "s" : "", kwonly_given, kwonly_given != 1 ? "s" : "");
        bv_raise(ev->vm, BV_EXC_TYPE_ERROR, "%s() takes %s but %zu%s %s given", fn->qualname, sig,
                 given, kw, given == 1 && !kwonly_given ? "was" : "were");
        return -1;
}

/* Bind the arguments of a call to the frame's slots: positional parameters,
 * keyword-only ones, then *args and **kwargs. */
static int bind_arguments(Eval *ev, EvalFunc *f, BodyValue *env, BodyValue **args, size_t n,
                          BodyValue *kwargs)
{
        BodyVM *vm = ev->vm;
        const AstFunction *fn = f->fn;
        const AstParams *pa = &fn->params;
        BodyValue **slot = env->list.items;
        int n_named = pa->n_pos + pa->n_kwonly;
        int var_slot = n_named, kw_slot = n_named + (pa->vararg ? 1 : 0);
        size_t n_pos = (size_t)pa->n_pos;

        for (size_t i = 0; i < n && i < n_pos; i++)
                slot[i] = bv_ref(args[i]);
        if (pa->vararg && !(slot[var_slot] = bv_tuple_new(vm, n > n_pos ? args + n_pos : NULL,
                                                          n > n_pos ? n - n_pos : 0)))
                return -1;
        if (pa->kwarg && !(slot[kw_slot] = bv_dict_new(vm)))
                return -1;
        size_t pos = 0;
        BodyValue *k, *v;
        while (kwargs && bv_dict_next(kwargs, &pos, &k, &v)) {
                const char *name = k->str.data;
                int i;
                for (i = 0; i < n_named; i++)
                        if (streq(pa->names[i], name))
                                break;
                if (i < n_named) {
                        if (slot[i]) {
                                bv_raise(vm, BV_EXC_TYPE_ERROR,
                                         "%s() got multiple values for argument '%s'", fn->qualname,
                                         name);
                                return -1;
                        }
                        slot[i] = bv_ref(v);
                } else if (pa->kwarg) {
                        if (bv_dict_set(vm, slot[kw_slot], k, v) < 0)
                                return -1;
                } else {
                        bv_raise(vm, BV_EXC_TYPE_ERROR,
                                 "%s() got an unexpected keyword argument '%s'", fn->qualname,
                                 name);
                        return -1;
                }
        }
        if (n > n_pos && !pa->vararg) {
                int kwonly_given = 0;
                for (int i = pa->n_pos; i < n_named; i++)
                        kwonly_given += slot[i] != NULL;
                return too_many_error(ev, fn, n, kwonly_given);
        }
        int first_default = pa->n_pos - pa->n_defaults;
        bool missing = false;
        for (int i = 0; i < pa->n_pos; i++) {
                if (slot[i])
                        continue;
                if (i >= first_default)
                        slot[i] = bv_ref(f->defaults[i - first_default]);
                else
                        missing = true;
        }
        if (missing)
                return missing_error(ev, fn, slot, 0, pa->n_pos, "positional");
        for (int i = pa->n_pos; i < n_named; i++) {
                if (slot[i])
                        continue;
                if (f->kw_defaults[i - pa->n_pos])
                        slot[i] = bv_ref(f->kw_defaults[i - pa->n_pos]);
                else
                        missing = true;
        }
        if (missing)
                return missing_error(ev, fn, slot, pa->n_pos, n_named, "keyword-only");
        return 0;
}

BodyValue *eval_call_function(BodyVM *vm, BodyValue *fnval, BodyValue **args, size_t n,
                              BodyValue *kwargs)
{
        Eval *ev = vm->eval;
        EvalFunc *f = fnval->function.payload;
        const AstFunction *fn = f->fn;
        if (bv_depth_enter(vm) < 0)
                return NULL;
        BodyValue *result = NULL;
        _cleanup_bv_ BodyValue *env = eval_env_new(ev, &fn->scope, f->env);
        if (env && bind_arguments(ev, f, env, args, n, kwargs) == 0) {
                Frame frame = {.env = env, .scope = &fn->scope, .prev = ev->frame};
                ev->frame = &frame;
                if (fn->expr) {
                        result = eval_expr(ev, fn->expr);
                } else {
                        ExecResult r = eval_block(ev, fn->body, fn->n_body);
                        if (r == EXEC_RETURN)
                                result = frame.retval ? frame.retval : bv_none();
                        else if (r != EXEC_ERROR)
                                result = bv_none();
                        else
                                bv_unref(frame.retval);
                }
                ev->frame = frame.prev;
        }
        bv_depth_leave(vm);
        return result;
}

/* The name CPython puts before "() argument after * must be ...". */
static const char *callable_name(BodyValue *fv)
{
        switch (fv->kind) {
        case BV_FUNCTION:
                return fv->function.qualname;
        case BV_BUILTIN:
                return fv->builtin->name;
        case BV_METHOD:
                return fv->method.def->name;
        case BV_CLASS:
                return fv->cls->name;
        default:
                return bv_type_name(fv);
        }
}

typedef struct ArgVec {
        BodyValue *small[8];
        BodyValue **v;
        size_t n, cap;
        BodyVM *vm;
} ArgVec;

static int argvec_push(ArgVec *a, BodyValue *x)
{
        if (a->n == a->cap) {
                size_t nc = a->cap * 2;
                BodyValue **nv = bv_mem_alloc(a->vm, nc * sizeof(*nv));
                if (!nv) {
                        bv_unref(x);
                        return -1;
                }
                memcpy(nv, a->v, a->n * sizeof(*nv));
                if (a->v != a->small)
                        bv_mem_free(a->vm, a->v, a->cap * sizeof(*nv));
                a->v = nv;
                a->cap = nc;
        }
        a->v[a->n++] = x;
        return 0;
}

static void argvec_free(ArgVec *a)
{
        for (size_t i = 0; i < a->n; i++)
                bv_unref(a->v[i]);
        if (a->v != a->small)
                bv_mem_free(a->vm, a->v, a->cap * sizeof(*a->v));
}

static int star_args(Eval *ev, ArgVec *a, BodyValue *fv, BodyValue *x)
{
        BodyVM *vm = ev->vm;
        _cleanup_bv_ BodyValue *it = bv_iter(vm, x);
        if (!it) {
                if (vm->exc && vm->exc->exc.cls == bv_exc_class(BV_EXC_TYPE_ERROR))
                        bv_raise(vm, BV_EXC_TYPE_ERROR,
                                 "%s() argument after * must be an iterable, not %s",
                                 callable_name(fv), bv_type_name(x));
                return -1;
        }
        for (;;) {
                BodyValue *item;
                int r = bv_next(vm, it, &item);
                if (r <= 0)
                        return r;
                if (bv_step(vm) < 0) {
                        bv_unref(item);
                        return -1;
                }
                if (argvec_push(a, item) < 0)
                        return -1;
        }
}

static int keyword_arg(Eval *ev, BodyValue *kwargs, BodyValue *fv, BodyValue *key, BodyValue *value)
{
        BodyValue *old;
        int r = bv_dict_lookup(ev->vm, kwargs, key, &old);
        if (r < 0)
                return -1;
        if (r > 0) {
                bv_raise(ev->vm, BV_EXC_TYPE_ERROR,
                         "%s() got multiple values for keyword argument '%s'", callable_name(fv),
                         key->str.data);
                return -1;
        }
        return bv_dict_set(ev->vm, kwargs, key, value);
}

static int double_star(Eval *ev, BodyValue *kwargs, BodyValue *fv, BodyValue *m)
{
        BodyVM *vm = ev->vm;
        if (m->kind != BV_DICT) {
                bv_raise(vm, BV_EXC_TYPE_ERROR, "%s() argument after ** must be a mapping, not %s",
                         callable_name(fv), bv_type_name(m));
                return -1;
        }
        size_t pos = 0;
        BodyValue *k, *v;
        while (bv_dict_next(m, &pos, &k, &v)) {
                if (k->kind != BV_STR) {
                        bv_raise(vm, BV_EXC_TYPE_ERROR, "keywords must be strings");
                        return -1;
                }
                if (bv_step(vm) < 0 || keyword_arg(ev, kwargs, fv, k, v) < 0)
                        return -1;
        }
        return 0;
}

BodyValue *eval_call(Eval *ev, const AstExpr *e)
{
        BodyVM *vm = ev->vm;
        _cleanup_bv_ BodyValue *fv = eval_expr(ev, e->call.func);
        if (!fv)
                return NULL;
        ArgVec a = {.v = a.small, .cap = ELEMENTSOF(a.small), .vm = vm};
        _cleanup_bv_ BodyValue *kwargs = NULL;
        BodyValue *r = NULL;
        for (int i = 0; i < e->call.n_args; i++) {
                const AstExpr *x = e->call.args[i];
                if (x->kind == AST_STARRED) {
                        _cleanup_bv_ BodyValue *v = eval_expr(ev, x->starred.value);
                        if (!v || star_args(ev, &a, fv, v) < 0)
                                goto out;
                        continue;
                }
                BodyValue *v = eval_expr(ev, x);
                if (!v || argvec_push(&a, v) < 0)
                        goto out;
        }
        if (e->call.n_kw > 0 && !(kwargs = bv_dict_new(vm)))
                goto out;
        for (int i = 0; i < e->call.n_kw; i++) {
                const AstKeyword *k = &e->call.kw[i];
                _cleanup_bv_ BodyValue *v = eval_expr(ev, k->value);
                if (!v)
                        goto out;
                if (!k->name) {
                        if (double_star(ev, kwargs, fv, v) < 0)
                                goto out;
                        continue;
                }
                _cleanup_bv_ BodyValue *key = bv_str_new_cstr(vm, k->name);
                if (!key || keyword_arg(ev, kwargs, fv, key, v) < 0)
                        goto out;
        }
        r = bv_call(vm, fv, a.v, a.n, kwargs);
out:
        argvec_free(&a);
        return r;
}

/* ---- comprehensions ------------------------------------------------------ */

static int comp_add(Eval *ev, const AstExpr *e, BodyValue *result)
{
        BodyVM *vm = ev->vm;
        _cleanup_bv_ BodyValue *x = eval_expr(ev, e->comp.elt);
        if (!x)
                return -1;
        switch (e->kind) {
        case AST_SETCOMP:
                return bv_set_add(vm, result, x);
        case AST_DICTCOMP: {
                _cleanup_bv_ BodyValue *v = eval_expr(ev, e->comp.value);
                if (!v)
                        return -1;
                return bv_dict_set(vm, result, x, v);
        }
        default:
                return bv_list_append(vm, result, x);
        }
}

/* One `for` of the comprehension, over the iterator it. */
static int comp_level(Eval *ev, const AstExpr *e, int g, BodyValue *it, BodyValue *result)
{
        BodyVM *vm = ev->vm;
        const AstComprehension *c = &e->comp.gens[g];
        for (;;) {
                BodyValue *x;
                int r = bv_next(vm, it, &x);
                if (r <= 0)
                        return r < 0 ? eval_fail(ev, c->iter->line), -1 : 0;
                r = bv_step(vm) < 0 ? -1 : eval_assign(ev, c->target, x);
                bv_unref(x);
                if (r < 0)
                        return -1;
                bool keep = true;
                for (int k = 0; k < c->n_ifs && keep; k++) {
                        _cleanup_bv_ BodyValue *t = eval_expr(ev, c->ifs[k]);
                        if (!t)
                                return -1;
                        keep = bv_truthy(t);
                }
                if (!keep)
                        continue;
                if (g + 1 < e->comp.n_gens) {
                        _cleanup_bv_ BodyValue *src = eval_expr(ev, e->comp.gens[g + 1].iter);
                        if (!src)
                                return -1;
                        _cleanup_bv_ BodyValue *it2 = bv_iter(vm, src);
                        if (!it2)
                                return eval_fail(ev, e->comp.gens[g + 1].iter->line), -1;
                        if (comp_level(ev, e, g + 1, it2, result) < 0)
                                return -1;
                } else if (comp_add(ev, e, result) < 0) {
                        return eval_fail(ev, e->comp.elt->line), -1;
                }
        }
}

BodyValue *eval_comprehension(Eval *ev, const AstExpr *e)
{
        BodyVM *vm = ev->vm;
        const AstFunction *fn = e->comp.fn;
        /* The first iterable is evaluated where the comprehension is; the
         * rest runs in a scope of its own, as a function would. */
        _cleanup_bv_ BodyValue *src = eval_expr(ev, e->comp.gens[0].iter);
        if (!src)
                return NULL;
        _cleanup_bv_ BodyValue *it = bv_iter(vm, src);
        if (!it)
                return NULL;
        _cleanup_bv_ BodyValue *result = e->kind == AST_SETCOMP    ? bv_set_new(vm)
                                         : e->kind == AST_DICTCOMP ? bv_dict_new(vm)
                                                                   : bv_list_new(vm, 0);
        if (!result)
                return NULL;
        _cleanup_bv_ BodyValue *env = eval_env_new(ev, &fn->scope, ev->frame->env);
        if (!env || bv_depth_enter(vm) < 0)
                return NULL;
        Frame frame = {.env = env, .scope = &fn->scope, .prev = ev->frame};
        ev->frame = &frame;
        int r = comp_level(ev, e, 0, it, result);
        ev->frame = frame.prev;
        bv_depth_leave(vm);
        if (r < 0)
                return NULL;
        /* A generator expression is evaluated at once, to a list that its
         * consumer iterates: see docs/body.md. */
        if (e->kind == AST_GENEXP)
                return bv_iter(vm, result);
        return TAKE_PTR(result);
}
