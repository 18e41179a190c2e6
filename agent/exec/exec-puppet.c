/* exec-puppet: the Puppet executor, run(function, recipe_attributes=None,
 * input=None), for an EntryPoint "module::class".
 *
 * As the reference: hiera.yaml (written once), manifest.pp declaring the
 * class for node 'default', default.yaml with the attributes as
 * "<module>::<name>" keys when attributes are given, then "puppet apply
 * --hiera_config=hiera.yaml --modulepath <dir> manifest.pp". The YAML files
 * are PyYAML's text (exec-yaml.c). Lines of stdout that contain ERROR are
 * added to stderr, as for Chef.
 *
 * Deliberate difference: the reference writes these files into, and runs
 * puppet from, the agent's working directory of the moment; we use the
 * script's own directory <dir>, creating it if the script has no files.
 * default.yaml stays where the reference puts it, beside hiera.yaml, although
 * that hiera.yaml looks for data in /etc/puppet/hieradata. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec-internal.h"

/* yaml.dump() of the reference's hiera configuration. */
static const char hiera_yaml[] = "backends: yaml\n"
                                 "hierarchy: '%{env}'\n"
                                 "logger: console\n"
                                 "yaml:\n"
                                 "  datadir: /etc/puppet/hieradata\n";

static int write_in(const char *dir, const char *name, const char *text, size_t len)
{
        _cleanup_free_ char *path = exec_path_join(dir, name);

        if (!path)
                return -ENOMEM;
        return exec_write_file(path, text, len);
}

/* default.yaml, or 0 without writing when there are no attributes. */
static int write_hiera_data(const char *dir, const char *module, const char *recipe,
                            const json_t *attrs, BodyCallError *err)
{
        _cleanup_json_ json_t *data = json_object();
        _cleanup_strbuf_ StrBuf text = STRBUF_INIT;
        _cleanup_strbuf_ StrBuf key = STRBUF_INIT;
        const char *name;
        json_t *value;
        int r;

        if (!attrs || json_is_null(attrs))
                return 0;
        /* The reference calls attrs.items(), which only a dict has. */
        if (!json_is_object(attrs))
                return exec_error_no_strerror(err, "AttributeError");
        if (!data)
                return -ENOMEM;
        json_object_foreach ((json_t *)attrs, name, value) {
                size_t len = json_object_iter_key_len(json_object_key_to_iter(name));
                strbuf_reset(&key);
                if ((r = strbuf_printf(&key, "%s::", module)) < 0 ||
                    (r = strbuf_append(&key, name, len)) < 0)
                        return r;
                if (json_object_setn_new(data, key.data, key.len, json_incref(value)) < 0)
                        return -ENOMEM;
        }
        r = exec_yaml_dump(data, &text);
        if (r == -EINVAL)
                return exec_error_no_strerror(err, "RecursionError");
        if (r < 0)
                return r;
        if ((r = write_in(dir, "default.yaml", text.data, text.len)) < 0)
                return exec_error_config(err, "Module", module, recipe, -r);
        return 0;
}

/* The reference's try block. */
static int write_files(const char *dir, const char *module, const char *recipe, const json_t *attrs,
                       BodyCallError *err)
{
        _cleanup_free_ char *hiera = exec_path_join(dir, "hiera.yaml");
        _cleanup_free_ char *manifest = NULL;
        int r;

        if (!hiera)
                return -ENOMEM;
        if (!exec_is_dir(dir) && (r = exec_mkdirs(dir)) < 0)
                return exec_error_config(err, "Module", module, recipe, -r);
        if (!exec_exists(hiera) && (r = exec_write_file(hiera, hiera_yaml, strlen(hiera_yaml))) < 0)
                return exec_error_config(err, "Module", module, recipe, -r);
        /* "module::" declares the module's main class. */
        r = recipe[0] ? asprintf(&manifest, "node 'default' { class { %s::%s:}}", module, recipe)
                      : asprintf(&manifest, "node 'default' { class { %s:}}", module);
        if (r < 0) {
                manifest = NULL;
                return -ENOMEM;
        }
        if ((r = write_in(dir, "manifest.pp", manifest, strlen(manifest))) < 0)
                return exec_error_config(err, "Module", module, recipe, -r);
        return write_hiera_data(dir, module, recipe, attrs, err);
}

static int puppet_run(Exec *e, const char *path, const json_t *attrs, const ProcRunner *runner,
                      char **io_cwd, json_t **ret_result, BodyCallError *ret_err)
{
        _cleanup_free_ char *module = NULL;
        _cleanup_free_ char *recipe = NULL;
        _cleanup_free_ char *dir = NULL;
        _cleanup_strbuf_ StrBuf cmd = STRBUF_INIT;
        int r;

        if ((r = exec_module_split(e, path, &module, &recipe, &dir, ret_err)) != 0)
                return r;
        if ((r = write_files(dir, module, recipe, attrs, ret_err)) != 0)
                return r;
        if ((r = strbuf_puts(&cmd, "puppet apply --hiera_config=hiera.yaml --modulepath ")) < 0 ||
            (r = exec_shell_word(&cmd, dir)) < 0 || (r = strbuf_puts(&cmd, " manifest.pp")) < 0)
                return r;
        return exec_recipe_command(e, cmd.data, dir, "puppet apply", runner, ret_result, ret_err);
}

const ExecOps exec_puppet_ops = {
        .type = EXEC_PUPPET,
        .name = "Puppet",
        .qualname = "PuppetExecutor.run",
        .arg_name = "recipe_attributes",
        .run = puppet_run,
};
