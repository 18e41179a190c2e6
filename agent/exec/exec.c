/* exec: the executor table, script options, and the argument binding that
 * gives Python's TypeError texts (see exec.h).
 *
 * The reference calls an executor as executor.run(function, *args,
 * **kwargs) through two wrappers (ScriptRunner.__call__ or
 * FunctionRunner.__call__, then ScriptRunner.execute_function); every
 * executor's run() has the signature run(self, function, <arg>=default,
 * input=None). What Python reports for a call that does not fit is part of
 * the result a plan sees, so the binding below follows CPython 3.11's order:
 * positional arguments fill the slots, then each keyword in call order must
 * name an empty slot, then the count of positional arguments is checked. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec-internal.h"
#include "util/pyrepr.h"
#include "util/pyjson.h"

static const ExecOps *const exec_table[] = {
        &exec_application_ops,
        &exec_chef_ops,
        &exec_puppet_ops,
};

void exec_error_clear(BodyCallError *err)
{
        if (!err)
                return;
        free(err->message);
        json_decref(err->additional_info);
        *err = (BodyCallError){0};
}

int exec_error(BodyCallError *err, int code, json_t *info, const char *fmt, ...)
{
        va_list ap;
        char *msg;
        int n;

        va_start(ap, fmt);
        n = vasprintf(&msg, fmt, ap);
        va_end(ap);
        if (n < 0) {
                json_decref(info);
                return -ENOMEM;
        }
        *err = (BodyCallError){.code = code, .message = msg, .additional_info = info};
        return 1;
}

/* strerror() may share one buffer between threads; the GNU strerror_r
 * gives a string that is either static or in buf. */
static const char *error_text(int errnum, char buf[static 128])
{
        return strerror_r(errnum, buf, 128);
}

int exec_error_os(BodyCallError *err, int errnum, const char *path)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        char buf[128];
        size_t head;
        int r;

        r = strbuf_printf(&b, "[Errno %d] %s: ", errnum, error_text(errnum, buf));
        head = b.len;
        if (r >= 0)
                r = pyrepr_string(&b, path, strlen(path));
        /* A path that is not UTF-8 (Python would show surrogate escapes)
         * goes in as it is, in quotes. */
        if (r == -EILSEQ) {
                b.len = head;
                b.data[head] = '\0';
                r = strbuf_printf(&b, "'%s'", path);
        }
        if (r < 0)
                return r;
        return exec_error(err, EXEC_ERROR_EXCEPTION, NULL, "%s", b.data);
}

int exec_module_split(const Exec *e, const char *path, char **ret_module, char **ret_recipe,
                      char **ret_dir, BodyCallError *err)
{
        const char *ep = e->entry_point, *sep = NULL, *p;
        char *module, *recipe;
        int r;

        for (p = strstr(ep, "::"); p; p = strstr(p + 1, "::"))
                sep = p;
        if (!sep)
                return exec_error(err, EXEC_ERROR_SCRIPT, NULL,
                                  "Module recipe name format %s is not valid", ep);
        module = strndup(ep, (size_t)(sep - ep));
        recipe = strdup(sep + 2);
        r = module && recipe ? exec_path_normalize(path, ret_dir) : -ENOMEM;
        if (r < 0) {
                free(module);
                free(recipe);
                return r;
        }
        *ret_module = module;
        *ret_recipe = recipe;
        return 0;
}

int exec_error_config(BodyCallError *err, const char *kind, const char *module, const char *recipe,
                      int errnum)
{
        char buf[128];
        const char *text = error_text(errnum, buf);
        json_t *info = json_pack("{s:i, s:n, s:s}", "exitCode", 2, "stdout", "stderr", text);

        if (!info)
                return -ENOMEM;
        return exec_error(err, EXEC_ERROR_SCRIPT, info, "%s %s returned error code %s: %s", kind,
                          module, recipe, text);
}

int exec_error_no_strerror(BodyCallError *err, const char *exc)
{
        return exec_error(err, EXEC_ERROR_EXCEPTION, NULL,
                          "'%s' object has no attribute 'strerror'", exc);
}

const json_t *exec_option(const Exec *e, const char *key)
{
        return e->options ? json_object_get(e->options, key) : NULL;
}

/* options.get(key, True), as a truth value. */
static bool option_default_true(const Exec *e, const char *key)
{
        const json_t *v = exec_option(e, key);
        return v ? pyrepr_truthy(v) : true;
}

/* ScriptRunner._load: `script_info.get("Options") or {}`, then .get() on it.
 * A truthy Options that is not a dict fails there, at every call. */
static int load_options(Exec *e, const json_t *script)
{
        const json_t *o = json_object_get(script, "Options");

        if (o && pyrepr_truthy(o) && !json_is_object(o)) {
                if (asprintf(&e->options_error, "'%s' object has no attribute 'get'",
                             pyrepr_type_name(o)) < 0) {
                        e->options_error = NULL;
                        return -ENOMEM;
                }
                return 0;
        }
        if (json_is_object(o))
                e->options = json_incref((json_t *)o);
        e->capture_stdout = option_default_true(e, "captureStdout");
        e->capture_stderr = option_default_true(e, "captureStderr");
        e->verify_exitcode = option_default_true(e, "verifyExitcode");
        return 0;
}

Exec *exec_free(Exec *e)
{
        if (!e)
                return NULL;
        free(e->script);
        free(e->entry_point);
        json_decref(e->options);
        free(e->options_error);
        free(e);
        return NULL;
}

DEFINE_CLEANUP(Exec, exec_free)

int exec_new(const char *script_name, const json_t *script, Exec **ret, BodyCallError *ret_err)
{
        _cleanup_(exec_freep) Exec *e = NULL;
        const json_t *type = json_object_get(script, "Type");
        const json_t *ep = json_object_get(script, "EntryPoint");
        const ExecOps *ops = NULL;
        int r;

        if (!pyjson_is_string(type) || !pyjson_is_string(ep))
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(exec_table); i++)
                if (streq(exec_table[i]->name, json_string_value(type)))
                        ops = exec_table[i];
        if (!ops)
                return exec_error(ret_err, EXEC_ERROR_EXCEPTION, NULL,
                                  "The application type in %s is not a valid executor %s",
                                  script_name, json_string_value(type));
        e = calloc(1, sizeof(Exec));
        if (!e)
                return -ENOMEM;
        e->ops = ops;
        e->script = strdup(script_name);
        e->entry_point = strdup(json_string_value(ep));
        if (!e->script || !e->entry_point)
                return -ENOMEM;
        if ((r = load_options(e, script)) < 0)
                return r;
        *ret = TAKE_PTR(e);
        return 0;
}

ExecType exec_type(const Exec *e)
{
        return e->ops->type;
}

bool exec_options_valid(const Exec *e)
{
        return !e->options_error;
}

int exec_check_call(const BodyCall *call, BodyCallError *ret_err)
{
        if (json_object_get(call->kwargs, "self"))
                return exec_error(ret_err, EXEC_ERROR_EXCEPTION, NULL,
                                  "%s.__call__() got multiple values for argument 'self'",
                                  call->function ? "FunctionRunner" : "ScriptRunner");
        if (json_object_get(call->kwargs, "name"))
                return exec_error(ret_err, EXEC_ERROR_EXCEPTION, NULL,
                                  "ScriptRunner.execute_function() got multiple values for "
                                  "argument 'name'");
        return 0;
}

/* Bind the call to run(self, function, <arg_name>=..., input=None) and give
 * the value of <arg_name> (NULL for its default). */
static int bind_arguments(const ExecOps *ops, const BodyCall *call, const json_t **ret_arg,
                          BodyCallError *err)
{
        const char *const params[] = {"self", "function", ops->arg_name, "input"};
        const json_t *slots[4] = {NULL};
        size_t n_pos = 2 + json_array_size(call->args);
        const char *key;
        json_t *value;

        /* self and function are always there; the Body's positional
         * arguments follow. */
        for (size_t i = 2; i < n_pos && i < ELEMENTSOF(params); i++)
                slots[i] = json_array_get(call->args, i - 2);
        json_object_foreach ((json_t *)call->kwargs, key, value) {
                size_t i;
                for (i = 0; i < ELEMENTSOF(params); i++)
                        if (streq(params[i], key))
                                break;
                if (i == ELEMENTSOF(params))
                        return exec_error(err, EXEC_ERROR_EXCEPTION, NULL,
                                          "%s() got an unexpected keyword argument '%s'",
                                          ops->qualname, key);
                if (i < n_pos)
                        return exec_error(err, EXEC_ERROR_EXCEPTION, NULL,
                                          "%s() got multiple values for argument '%s'",
                                          ops->qualname, key);
                slots[i] = value;
        }
        if (n_pos > ELEMENTSOF(params))
                return exec_error(err, EXEC_ERROR_EXCEPTION, NULL,
                                  "%s() takes from 2 to 4 positional arguments but %zu were given",
                                  ops->qualname, n_pos);
        *ret_arg = slots[2];
        return 0;
}

int exec_run(Exec *e, const char *path, const BodyCall *call, const ProcRunner *runner,
             char **io_cwd, json_t **ret_result, BodyCallError *ret_err)
{
        const json_t *arg = NULL;
        int r;

        if (!path || path[0] != '/')
                return -EINVAL;
        /* The reference loads the options before it calls run(). */
        if (e->options_error)
                return exec_error(ret_err, EXEC_ERROR_EXCEPTION, NULL, "%s", e->options_error);
        r = bind_arguments(e->ops, call, &arg, ret_err);
        if (r != 0)
                return r;
        return e->ops->run(e, path, arg, runner, io_cwd, ret_result, ret_err);
}
