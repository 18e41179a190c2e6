/* exec-chef: the Chef executor, run(function, recipe_attributes=None,
 * input=None), for an EntryPoint "cookbook::recipe".
 *
 * As the reference: with the useBerkshelf option, "berks vendor" first
 * fetches the cookbooks named by a Berksfile into <dir>/berks-cookbooks;
 * then solo.rb (written once) points chef-solo at the cookbooks, node.json
 * (written at every call) holds the run list and the attributes, and
 * "chef-solo -j node.json -c <dir>/solo.rb" runs. Lines of stdout that
 * contain ERROR are added to stderr. Messages name the script by its
 * EntryPoint, because the reference builds Chef executors from it.
 *
 * Deliberate difference: the reference writes node.json into, and runs
 * chef-solo from, whatever the agent's working directory happened to be;
 * we use the script's own directory <dir> for both. Paths on the command
 * lines are shell-quoted when they need it (they never do for the paths
 * the agent makes). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec-internal.h"
#include "util/pyjson.h"
#include "util/pyrepr.h"

#define SOLO_RB   "solo.rb"
#define NODE_JSON "node.json"

static int run_berks(Exec *e, const char *dir, const char *module, const ProcRunner *runner,
                     char **ret_cookbooks, BodyCallError *err)
{
        const json_t *opt = exec_option(e, "berksfilePath");
        _cleanup_free_ char *relative = NULL;
        _cleanup_free_ char *berksfile = NULL;
        _cleanup_free_ char *cookbooks = NULL;
        _cleanup_strbuf_ StrBuf cmd = STRBUF_INIT;
        _cleanup_json_ json_t *result = NULL;
        int r;

        if (!opt || json_is_null(opt)) {
                if (asprintf(&relative, "%s/Berksfile", module) < 0) {
                        relative = NULL;
                        return -ENOMEM;
                }
        } else if (!pyjson_is_string(opt)) {
                return exec_error(err, EXEC_ERROR_EXCEPTION, NULL,
                                  "join() argument must be str, bytes, or os.PathLike object, "
                                  "not '%s'",
                                  pyrepr_type_name(opt));
        } else if (!(relative = strdup(json_string_value(opt)))) {
                return -ENOMEM;
        }
        berksfile = exec_path_join(dir, relative);
        cookbooks = exec_path_join(dir, "berks-cookbooks");
        if (!berksfile || !cookbooks)
                return -ENOMEM;
        if (!exec_is_file(berksfile))
                return exec_error(err, EXEC_ERROR_SCRIPT, NULL, "Berskfile %s not found",
                                  berksfile);
        if (!exec_is_dir(cookbooks) && (r = exec_mkdirs(cookbooks)) < 0)
                return exec_error_os(err, -r, cookbooks);

        if ((r = strbuf_puts(&cmd, "berks vendor --berksfile=")) < 0 ||
            (r = exec_shell_word(&cmd, berksfile)) < 0 || (r = strbuf_putc(&cmd, ' ')) < 0 ||
            (r = exec_shell_word(&cmd, cookbooks)) < 0)
                return r;
        /* With verifyExitcode (the default) the reference's command runner
         * raises first, so "Berks returned error code" is seen only with
         * verifyExitcode off. */
        if ((r = exec_recipe_command(e, cmd.data, dir, "berks vendor", runner, &result, err)) != 0)
                return r;
        if (json_integer_value(json_object_get(result, "exitCode")) != 0)
                return exec_error(err, EXEC_ERROR_SCRIPT, TAKE_PTR(result),
                                  "Berks returned error code");
        *ret_cookbooks = TAKE_PTR(cookbooks);
        return 0;
}

/* node.json: the run list, and the attributes under the cookbook's name
 * when they are truthy (the reference copies them with .copy(), which
 * dicts and lists have). */
static int node_json(const char *module, const char *recipe, const json_t *attrs, char **ret,
                     BodyCallError *err)
{
        _cleanup_json_ json_t *node = json_object();
        _cleanup_free_ char *item = NULL;
        int r;

        if (!node || asprintf(&item, "recipe[%s::%s]", module, recipe) < 0) {
                item = NULL;
                return -ENOMEM;
        }
        if (json_object_set_new(node, "run_list", json_pack("[s]", item)) < 0)
                return -ENOMEM;
        if (attrs && pyrepr_truthy(attrs)) {
                if (!json_is_object(attrs) && !json_is_array(attrs))
                        return exec_error_no_strerror(err, "AttributeError");
                if (json_object_set_new(node, module, json_deep_copy(attrs)) < 0)
                        return -ENOMEM;
        }
        r = pyjson_dumps(node, ret);
        if (r == -EINVAL)
                return exec_error_no_strerror(err, "RecursionError");
        return r;
}

/* The reference's try block: solo.rb and node.json. */
static int write_files(const char *dir, const char *cookbooks, const char *module,
                       const char *recipe, const json_t *attrs, BodyCallError *err)
{
        _cleanup_free_ char *solo = exec_path_join(dir, SOLO_RB);
        _cleanup_free_ char *node_path = exec_path_join(dir, NODE_JSON);
        _cleanup_free_ char *text = NULL;
        int r;

        if (!solo || !node_path)
                return -ENOMEM;
        if (!exec_exists(solo)) {
                if (!exec_is_dir(dir) && (r = exec_mkdirs(dir)) < 0)
                        return exec_error_config(err, "Cookbook", module, recipe, -r);
                if (asprintf(&text, "cookbook_path \"%s\"", cookbooks) < 0) {
                        text = NULL;
                        return -ENOMEM;
                }
                if ((r = exec_write_file(solo, text, strlen(text))) < 0)
                        return exec_error_config(err, "Cookbook", module, recipe, -r);
                free(TAKE_PTR(text));
        }
        /* solo.rb exists now, so its directory does: node.json can go there. */
        if ((r = node_json(module, recipe, attrs, &text, err)) != 0)
                return r;
        if ((r = exec_write_file(node_path, text, strlen(text))) < 0)
                return exec_error_config(err, "Cookbook", module, recipe, -r);
        return 0;
}

static int chef_run(Exec *e, const char *path, const json_t *attrs, const ProcRunner *runner,
                    char **io_cwd, json_t **ret_result, BodyCallError *ret_err)
{
        _cleanup_free_ char *module = NULL;
        _cleanup_free_ char *recipe = NULL;
        _cleanup_free_ char *dir = NULL;
        _cleanup_free_ char *cookbooks = NULL;
        _cleanup_free_ char *solo = NULL;
        _cleanup_strbuf_ StrBuf cmd = STRBUF_INIT;
        int r;

        if ((r = exec_module_split(e, path, &module, &recipe, &dir, ret_err)) != 0)
                return r;
        if (pyrepr_truthy(exec_option(e, "useBerkshelf"))) {
                if ((r = run_berks(e, dir, module, runner, &cookbooks, ret_err)) != 0)
                        return r;
        } else if (!(cookbooks = strdup(dir))) {
                return -ENOMEM;
        }
        if ((r = write_files(dir, cookbooks, module, recipe, attrs, ret_err)) != 0)
                return r;

        solo = exec_path_join(dir, SOLO_RB);
        if (!solo)
                return -ENOMEM;
        if ((r = strbuf_puts(&cmd, "chef-solo -j " NODE_JSON " -c ")) < 0 ||
            (r = exec_shell_word(&cmd, solo)) < 0)
                return r;
        return exec_recipe_command(e, cmd.data, dir, "chef-solo", runner, ret_result, ret_err);
}

const ExecOps exec_chef_ops = {
        .type = EXEC_CHEF,
        .name = "Chef",
        .qualname = "ChefExecutor.run",
        .arg_name = "recipe_attributes",
        .run = chef_run,
};
