/* Agent.build_execution_plan as the engine runs it (see send-plan.h).
 *
 * jansson keeps an object's keys in insertion order and replaces a value in
 * place, as a Python dict does, so doing the engine's steps in the engine's
 * order gives the engine's key order on the wire. */
#include "send/send-plan.h"
#include "send/send-plan-internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/hexid.h"
#include "util/macro.h"
#include "util/pyjson.h"
#include "util/pyrepr.h"

typedef struct Builder {
        const SendPlanEnv *env;
        json_t *plan;  /* borrowed: the copy being built */
        json_t *files; /* borrowed: plan["Files"] */
        json_t *names; /* owned: file Name -> file ID, the engine's `files` */
        char **error;
} Builder;

double send_plan_time_now(void)
{
        struct timespec ts;
        int64_t ns;

        clock_gettime(CLOCK_REALTIME, &ts);
        ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        /* CPython's _PyTime_AsSecondsDouble: whole seconds are divided as
         * integers, anything else as doubles. */
        if (ns % 1000000000 == 0)
                return (double)(ns / 1000000000);
        return (double)ns / 1e9;
}

int64_t send_plan_stamp(double now)
{
        double v = now * 10000.0;

        /* int() truncates toward zero. */
        if (!isfinite(v) || v >= 9.2e18 || v <= -9.2e18)
                return 0;
        return (int64_t)v;
}

static int new_id(const SendPlanEnv *env, char buf[static 33])
{
        if (env->new_id)
                return env->new_id(env->userdata, buf);
        return hexid_new(buf);
}

static double now(const SendPlanEnv *env)
{
        return env->now ? env->now(env->userdata) : send_plan_time_now();
}

static size_t max_file(const SendPlanEnv *env)
{
        return env->max_file_bytes ? env->max_file_bytes : SEND_PLAN_MAX_FILE;
}

/* {"Name": name, "URL": url, "Type": "Downloadable"} for a URL, else
 * {"Name": name, "BodyType": T, "Body": B} with the file's content. */
static int file_description(Builder *b, const char *name, const char *value, json_t **ret)
{
        _cleanup_json_ json_t *d = json_object();
        _cleanup_free_ char *path = NULL;
        _cleanup_free_ char *shown = NULL;
        bool binary = send_plan_is_base64(value), url;
        json_t *body = NULL;
        int r;

        if (!d)
                return -ENOMEM;
        r = send_plan_is_url(value, &url, b->error);
        if (r != 0)
                return r;
        if (url) {
                if (json_object_set_new(d, "Name", json_string(name)) < 0 ||
                    json_object_set_new(d, "URL", json_string(value)) < 0 ||
                    json_object_set_new(d, "Type", json_string("Downloadable")) < 0)
                        return -ENOMEM;
                *ret = TAKE_PTR(d);
                return 0;
        }

        /* "<path>" is at least two characters long. */
        shown = binary ? strndup(value + 1, strlen(value) - 2) : strdup(value);
        if (!shown)
                return -ENOMEM;
        r = send_plan_resource_path(b->env->resources, shown, &path, b->error);
        if (r != 0)
                return r;
        if (binary)
                r = send_plan_read_base64(path, path, max_file(b->env), "\n", &body, b->error);
        else
                r = send_plan_read_text(path, path, max_file(b->env), &body, b->error);
        if (r != 0)
                return r;
        if (json_object_set_new(d, "Name", json_string(name)) < 0 ||
            json_object_set_new(d, "BodyType", json_string(binary ? "Base64" : "Text")) < 0 ||
            json_object_set_new(d, "Body", body) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(d);
        return 0;
}

/* A script file item: a string, or an object whose first key is the name
 * and whose first value is the file (engine _get_name/_get_file_value). */
static int item_parts(Builder *b, const char *script, const json_t *item, const char **ret_key,
                      const char **ret_value)
{
        if (json_is_string(item)) {
                *ret_key = *ret_value = json_string_value(item);
                return 0;
        }
        if (json_is_object(item) && json_object_size(item) > 0) {
                void *it = json_object_iter((json_t *)item);
                const json_t *v = json_object_iter_value(it);

                if (json_is_string(v)) {
                        *ret_key = json_object_iter_key(it);
                        *ret_value = json_string_value(v);
                        return 0;
                }
        }
        return send_plan_fail(b->error,
                              "Script %s has a file item that is neither a file name nor "
                              "a {name: file} mapping",
                              script);
}

/* Embed a file under a fresh ID (engine _place_file) and return the ID. */
static int place_file(Builder *b, const char *script, const json_t *item, json_t **ret_id)
{
        _cleanup_json_ json_t *desc = NULL;
        _cleanup_json_ json_t *id = NULL;
        _cleanup_free_ char *name = NULL;
        const char *key, *value;
        char buf[33];
        int r;

        r = item_parts(b, script, item, &key, &value);
        if (r != 0)
                return r;
        r = send_plan_item_name(key, &name, b->error);
        if (r != 0)
                return r;
        r = new_id(b->env, buf);
        if (r < 0)
                return r;
        id = json_string(buf);
        if (!id)
                return -ENOMEM;
        r = file_description(b, name, value, &desc);
        if (r != 0)
                return r;
        if (json_object_set(b->files, buf, desc) < 0 || json_object_set(b->names, name, id) < 0)
                return -ENOMEM;
        *ret_id = TAKE_PTR(id);
        return 0;
}

static int build_script(Builder *b, const char *name, json_t *script)
{
        json_t *type, *entry, *files;
        size_t i;
        int r;

        if (!json_is_object(script))
                return send_plan_fail(b->error, "Script %s is not a dictionary", name);
        entry = json_object_get(script, "EntryPoint");
        if (!entry)
                return send_plan_fail(b->error, "No entry point in script %s", name);
        type = json_object_get(script, "Type");
        if (!type)
                return send_plan_fail(b->error, "Script %s has no Type", name);

        if (json_is_string(type) && streq(json_string_value(type), "Application")) {
                json_t *known, *id = NULL;

                if (!json_is_string(entry))
                        return send_plan_fail(b->error, "EntryPoint of script %s is not a string",
                                              name);
                /* The engine looks the EntryPoint up as written, not by the
                 * name it would be embedded under. */
                known = json_object_get(b->names, json_string_value(entry));
                if (known)
                        id = json_incref(known);
                else {
                        r = place_file(b, name, entry, &id);
                        if (r != 0)
                                return r;
                }
                if (json_object_set_new(script, "EntryPoint", id) < 0)
                        return -ENOMEM;
        }

        files = json_object_get(script, "Files");
        if (!files)
                return 0;
        if (!json_is_array(files))
                return send_plan_fail(b->error, "Files of script %s is not a list", name);
        for (i = 0; i < json_array_size(files); i++) {
                const json_t *item = json_array_get(files, i);
                _cleanup_free_ char *item_name = NULL;
                const char *key, *value;
                json_t *known, *id = NULL;

                r = item_parts(b, name, item, &key, &value);
                if (r == 0)
                        r = send_plan_item_name(key, &item_name, b->error);
                if (r != 0)
                        return r;
                /* A known name is replaced by its ID. The engine indexes its
                 * map with the item itself there, which only works for plain
                 * names (it raises for "<x>", URLs and mappings); using the
                 * name is what it means. */
                known = json_object_get(b->names, item_name);
                if (known)
                        id = json_incref(known);
                else {
                        r = place_file(b, name, item, &id);
                        if (r != 0)
                                return r;
                }
                if (json_array_set_new(files, i, id) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int build_v2(Builder *b)
{
        json_t *files, *scripts, *script;
        const char *key;
        char id[33];
        int r;

        r = new_id(b->env, id);
        if (r < 0)
                return r;
        if (json_object_set_new(b->plan, "ID", json_string(id)) < 0 ||
            json_object_set_new(b->plan, "Stamp", json_integer(send_plan_stamp(now(b->env)))) < 0)
                return -ENOMEM;
        if (!json_object_get(b->plan, "Action") &&
            json_object_set_new(b->plan, "Action", json_string("Execute")) < 0)
                return -ENOMEM;
        if (!json_object_get(b->plan, "Files") &&
            json_object_set_new(b->plan, "Files", json_object()) < 0)
                return -ENOMEM;

        files = json_object_get(b->plan, "Files");
        if (!json_is_object(files))
                return send_plan_fail(b->error, "Files is not a dictionary");
        b->files = files;
        json_object_foreach (files, key, script) {
                const json_t *fname =
                        json_is_object(script) ? json_object_get(script, "Name") : NULL;

                if (!fname)
                        return send_plan_fail(b->error, "File %s has no Name", key);
                /* Only text names can ever match a script's file items. */
                if (json_is_string(fname) &&
                    json_object_set_new(b->names, json_string_value(fname), json_string(key)) < 0)
                        return -ENOMEM;
        }

        scripts = json_object_get(b->plan, "Scripts");
        if (!scripts)
                return 0;
        if (!json_is_object(scripts))
                return send_plan_fail(b->error, "Scripts is not a dictionary");
        json_object_foreach (scripts, key, script) {
                r = build_script(b, key, script);
                if (r != 0)
                        return r;
        }
        return 0;
}

static int v1_embed(Builder *b, json_t *bodies, const char *name)
{
        _cleanup_free_ char *path = NULL;
        json_t *body = NULL;
        int r;

        r = send_plan_resource_path(b->env->resources, name, &path, b->error);
        if (r == 0)
                r = send_plan_read_base64(path, path, max_file(b->env), "", &body, b->error);
        if (r != 0)
                return r;
        return json_array_append_new(bodies, body) < 0 ? -ENOMEM : 0;
}

/* The v1 (Windows agent) path: each script name (a list item, or a key when
 * Scripts is a dictionary) becomes the Base64 text of Resources/scripts/<name>,
 * and only a Stamp is added. */
static int build_v1(Builder *b)
{
        _cleanup_json_ json_t *bodies = json_array();
        json_t *scripts = json_object_get(b->plan, "Scripts"), *v;
        const char *key;
        size_t i;
        int r = 0;

        if (!bodies)
                return -ENOMEM;
        if (json_is_array(scripts)) {
                json_array_foreach (scripts, i, v) {
                        if (!json_is_string(v))
                                return send_plan_fail(b->error, "Scripts item %zu is not a name",
                                                      i);
                        r = v1_embed(b, bodies, json_string_value(v));
                        if (r != 0)
                                return r;
                }
        } else if (json_is_object(scripts)) {
                json_object_foreach (scripts, key, v) {
                        r = v1_embed(b, bodies, key);
                        if (r != 0)
                                return r;
                }
        } else if (scripts)
                return send_plan_fail(b->error, "Scripts is neither a list nor a dictionary");

        if (json_object_set(b->plan, "Scripts", bodies) < 0 ||
            json_object_set_new(b->plan, "Stamp", json_integer(send_plan_stamp(now(b->env)))) < 0)
                return -ENOMEM;
        return 0;
}

int send_plan_build(const json_t *tmpl, const SendPlanEnv *env, json_t **ret, char **ret_error)
{
        _cleanup_json_ json_t *plan = NULL;
        _cleanup_json_ json_t *names = NULL;
        const json_t *fv;
        Builder b;
        int r;

        if (!json_is_object(tmpl))
                return send_plan_fail(ret_error, "Incorrect execution plan: not a dictionary");
        plan = json_deep_copy(tmpl);
        names = json_object();
        if (!plan || !names)
                return -ENOMEM;
        b = (Builder){.env = env, .plan = plan, .names = names, .error = ret_error};

        fv = json_object_get(plan, "FormatVersion");
        if (!fv || !pyrepr_truthy(fv) ||
            (json_is_string(fv) && strncmp(json_string_value(fv), "1.", 2) == 0))
                r = build_v1(&b);
        else if (!json_is_string(fv))
                r = send_plan_fail(ret_error, "FormatVersion is not a string");
        else
                r = build_v2(&b);
        if (r != 0)
                return r;
        *ret = TAKE_PTR(plan);
        return 0;
}

int send_plan_message_id(const json_t *plan, const SendPlanEnv *env, char **ret_message_id,
                         json_t **ret_key, char **ret_error)
{
        _cleanup_json_ json_t *key = NULL;
        _cleanup_free_ char *text = NULL;
        const json_t *id = json_object_get(plan, "ID");
        char buf[33];
        int r;

        if (!id) {
                r = new_id(env, buf);
                if (r < 0)
                        return r;
                key = json_string(buf);
                text = strdup(buf);
        } else {
                key = json_deep_copy(id);
                if (!pyrepr_truthy(id))
                        text = strdup("");
                else if (json_is_string(id))
                        text = strndup(json_string_value(id), json_string_length(id));
                else if (json_is_integer(id)) {
                        if (asprintf(&text, "%" JSON_INTEGER_FORMAT, json_integer_value(id)) < 0)
                                text = NULL;
                } else if (json_is_true(id))
                        text = strdup("True");
                else if (json_is_real(id)) {
                        pyfloat_repr(json_real_value(id), buf);
                        text = strdup(buf);
                } else
                        return send_plan_fail(ret_error, "ID is neither a string nor a number");
        }
        if (!key || !text)
                return -ENOMEM;
        *ret_message_id = TAKE_PTR(text);
        *ret_key = TAKE_PTR(key);
        return 0;
}
