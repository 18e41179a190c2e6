/* Plan validation: the reference's validate_plan(), then our own checks.
 *
 * The first part reproduces muranoagent/validation.py (murano-agent 9ae3969)
 * statement by statement: the same order, codes and texts. Where that code
 * meets a value of an unexpected type, Python raises an exception (TypeError,
 * AttributeError, IndexError, KeyError) that the agent reports with code 1
 * and str(exception); those are reproduced too, with CPython 3.11's wording,
 * because the engine shows Body.Message to people and a script that parses
 * it must see the same text from either agent. The Python value of a JSON
 * document is what json.loads() builds: dict, list, str, int, float, bool,
 * None. So `'Type' in script` is a key test for a dict, a substring test for
 * a str and an element test for a list, and `for x in script['Files']`
 * walks keys, elements or characters.
 *
 * After the reference's checks come, in this order: the KeyError the
 * reference raises later, when it reads plan.Body (so every plan the
 * reference answers gets its answer), and then checks of our own that stop
 * plans the reference would run into trouble with: ID must be a string,
 * Stamp an integer, and each file a dictionary whose Name is a safe relative
 * path (the agent makes a symlink by that name inside the script folder). */
#include "plan/plan.h"

#include <errno.h>
#include <string.h>

#include "plan/plan-internal.h"
#include "util/pyrepr.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/pyjson.h"

typedef struct Validator {
        const json_t *plan;
        const json_t *files; /* borrowed: plan['Files'], NULL when absent */
        PlanVersion v;
        bool v20; /* v in Spec('>=2.0.0,<2.1.0') */
        bool v21; /* v in Spec('>=2.1.0') */
        PlanError *err;
} Validator;

/* A message under construction; the first failed append sticks. */
typedef struct Msg {
        StrBuf b;
        int r;
} Msg;

#define MSG_INIT                                                                                   \
        {                                                                                          \
                STRBUF_INIT, 0                                                                     \
        }

static void msg_putn(Msg *m, const char *s, size_t n)
{
        if (m->r >= 0)
                m->r = strbuf_append(&m->b, s, n);
}

static void msg_puts(Msg *m, const char *s)
{
        msg_putn(m, s, strlen(s));
}

/* '{0}'.format(value) is str(value). */
static void msg_str(Msg *m, const json_t *value)
{
        if (m->r >= 0)
                m->r = pyrepr_str(value, &m->b);
}

static void msg_version(Msg *m, const Validator *val)
{
        msg_putn(m, val->v.text, val->v.text_len);
}

static int msg_fail(Msg *m, PlanError *err, int code)
{
        char *message;

        if (m->r >= 0)
                m->r = strbuf_steal(&m->b, &message);
        strbuf_free(&m->b);
        if (m->r < 0)
                return m->r;
        return plan_error_take(err, code, 0, 0, message);
}

static int fail(PlanError *err, int code, const char *fmt, ...) _printf_(3, 4);
static int fail(PlanError *err, int code, const char *fmt, ...)
{
        Msg m = MSG_INIT;
        va_list ap;

        va_start(ap, fmt);
        m.r = strbuf_vprintf(&m.b, fmt, ap);
        va_end(ap);
        return msg_fail(&m, err, code);
}

/* Python's `name in x`. */
static int py_contains(PlanError *err, const json_t *x, const char *name, bool *ret)
{
        size_t n = strlen(name), i;
        json_t *item;

        /* A big integer (util/pyjson.h) is an int, as the default says. */
        switch (pyjson_bigint_digits(x) ? JSON_INTEGER : json_typeof(x)) {
        case JSON_OBJECT:
                *ret = json_object_get(x, name) != NULL;
                return 0;
        case JSON_STRING:
                *ret = memmem(json_string_value(x), json_string_length(x), name, n) != NULL;
                return 0;
        case JSON_ARRAY:
                *ret = false;
                json_array_foreach (x, i, item)
                        if (pyjson_is_string(item) && json_string_length(item) == n &&
                            memcmp(json_string_value(item), name, n) == 0)
                                *ret = true;
                return 0;
        default:
                return fail(err, PLAN_CODE_EXCEPTION, "argument of type '%s' is not iterable",
                            pyrepr_type_name(x));
        }
}

/* Python's x[name], once `name in x` held. */
static int py_getitem(PlanError *err, const json_t *x, const char *name, const json_t **ret)
{
        if (pyjson_is_string(x))
                return fail(err, PLAN_CODE_EXCEPTION, "string indices must be integers, not 'str'");
        if (json_is_array(x))
                return fail(err, PLAN_CODE_EXCEPTION,
                            "list indices must be integers or slices, not str");
        *ret = json_object_get(x, name);
        return 0;
}

/* What `for item in x` visits, as a new array: keys, elements or characters. */
static int py_iterate(PlanError *err, const json_t *x, json_t **ret)
{
        json_t *items;
        const char *key, *s;
        size_t key_len, len;
        json_t *value;

        switch (pyjson_bigint_digits(x) ? JSON_INTEGER : json_typeof(x)) {
        case JSON_ARRAY:
                *ret = json_incref((json_t *)x);
                return 0;
        case JSON_OBJECT:
                if (!(items = json_array()))
                        return -ENOMEM;
                json_object_keylen_foreach(
                        (json_t *)x, key, key_len,
                        value) if (json_array_append_new(items, json_stringn(key, key_len)) < 0)
                {
                        json_decref(items);
                        return -ENOMEM;
                }
                *ret = items;
                return 0;
        case JSON_STRING:
                if (!(items = json_array()))
                        return -ENOMEM;
                s = json_string_value(x);
                len = json_string_length(x);
                for (size_t i = 0; i < len;) {
                        uint32_t cp;
                        int n = utf8_decode(s + i, len - i, &cp);
                        if (n <= 0)
                                n = 1;
                        if (json_array_append_new(items, json_stringn(s + i, (size_t)n)) < 0) {
                                json_decref(items);
                                return -ENOMEM;
                        }
                        i += (size_t)n;
                }
                *ret = items;
                return 0;
        default:
                return fail(err, PLAN_CODE_EXCEPTION, "'%s' object is not iterable",
                            pyrepr_type_name(x));
        }
}

static bool files_has(const Validator *val, const char *key, size_t len)
{
        return val->files && json_object_getn(val->files, key, len) != NULL;
}

static bool string_is(const json_t *v, const char *s)
{
        return pyjson_is_string(v) && json_string_length(v) == strlen(s) &&
               memcmp(json_string_value(v), s, strlen(s)) == 0;
}

static int check_type_entry(Validator *val, const char *name, size_t name_len, const json_t *script)
{
        static const char *const attrs[] = {"Type", "EntryPoint"};

        for (size_t i = 0; i < ELEMENTSOF(attrs); i++) {
                const json_t *value = NULL;
                bool has;
                int r;

                if ((r = py_contains(val->err, script, attrs[i], &has)) != 0)
                        return r;
                if (has && (r = py_getitem(val->err, script, attrs[i], &value)) != 0)
                        return r;
                if (!has || !pyjson_is_string(value)) {
                        Msg m = MSG_INIT;
                        msg_puts(&m, "Incorrect ");
                        msg_puts(&m, attrs[i]);
                        msg_puts(&m, " entry in script ");
                        msg_putn(&m, name, name_len);
                        return msg_fail(&m, val->err, PLAN_CODE_FORMAT);
                }
        }
        return 0;
}

static int check_entry_point_file(Validator *val, const char *name, size_t name_len,
                                  const json_t *ep)
{
        Msg m = MSG_INIT;

        if (files_has(val, json_string_value(ep), json_string_length(ep)))
                return 0;
        msg_puts(&m, "Script ");
        msg_putn(&m, name, name_len);
        msg_puts(&m, " misses entry point ");
        msg_str(&m, ep);
        return msg_fail(&m, val->err, PLAN_CODE_FORMAT);
}

static int check_options(Validator *val, const json_t *script, const json_t *type)
{
        _cleanup_json_ json_t *options = NULL;
        const json_t *o = json_object_get(script, "Options");
        json_t *option;
        size_t i;
        int r;

        if (!o)
                return fail(val->err, PLAN_CODE_EXCEPTION, "'Options'");
        if ((r = py_iterate(val->err, o, &options)) != 0)
                return r;
        json_array_foreach (options, i, option) {
                Msg m = MSG_INIT;

                if (!string_is(option, "useBerkshelf") && !string_is(option, "berksfilePath"))
                        continue;
                if (plan_version_lt(&val->v, 2, 2, 0)) {
                        msg_puts(&m, "Script has an option ");
                        msg_str(&m, option);
                        msg_puts(&m, " invalid for version ");
                        msg_version(&m, val);
                        return msg_fail(&m, val->err, PLAN_CODE_FORMAT);
                }
                if (!string_is(type, "Chef")) {
                        msg_puts(&m, "Script has an option ");
                        msg_str(&m, option);
                        msg_puts(&m, " invalid for type ");
                        msg_str(&m, type);
                        return msg_fail(&m, val->err, PLAN_CODE_FORMAT);
                }
        }
        return 0;
}

static int check_script_files(Validator *val, const char *name, size_t name_len,
                              const json_t *script)
{
        _cleanup_json_ json_t *items = NULL;
        const json_t *files = json_object_get(script, "Files");
        json_t *item;
        size_t i;
        int r;

        if (!files)
                return 0;
        if ((r = py_iterate(val->err, files, &items)) != 0)
                return r;
        json_array_foreach (items, i, item) {
                bool found;
                Msg m = MSG_INIT;

                if (json_is_object(item)) {
                        void *it = json_object_iter(item);
                        if (!it)
                                return fail(val->err, PLAN_CODE_EXCEPTION,
                                            "list index out of range");
                        found = files_has(val, json_object_iter_key(it),
                                          json_object_iter_key_len(it));
                } else if (json_is_array(item))
                        return fail(val->err, PLAN_CODE_EXCEPTION, "unhashable type: 'list'");
                else
                        found = pyjson_is_string(item) &&
                                files_has(val, json_string_value(item), json_string_length(item));
                if (found)
                        continue;
                msg_puts(&m, "Script ");
                msg_putn(&m, name, name_len);
                msg_puts(&m, " misses file ");
                msg_str(&m, item);
                return msg_fail(&m, val->err, PLAN_CODE_FORMAT);
        }
        return 0;
}

static int check_script(Validator *val, const char *name, size_t name_len, const json_t *script)
{
        const json_t *type, *ep;
        int r;

        if ((r = check_type_entry(val, name, name_len, script)) != 0)
                return r;
        /* Both entries exist and are strings, so script is a dict. */
        type = json_object_get(script, "Type");
        ep = json_object_get(script, "EntryPoint");

        if (val->v20) {
                if (!string_is(type, "Application")) {
                        Msg m = MSG_INIT;
                        msg_puts(&m, "Type ");
                        msg_str(&m, type);
                        msg_puts(&m, " is not valid for format ");
                        msg_version(&m, val);
                        return msg_fail(&m, val->err, PLAN_CODE_FORMAT);
                }
                if ((r = check_entry_point_file(val, name, name_len, ep)) != 0)
                        return r;
        }
        if (val->v21) {
                if (!string_is(type, "Application") && !string_is(type, "Chef") &&
                    !string_is(type, "Puppet")) {
                        Msg m = MSG_INIT;
                        msg_puts(&m, "Script has not a valid type ");
                        msg_str(&m, type);
                        return msg_fail(&m, val->err, PLAN_CODE_FORMAT);
                }
                if (string_is(type, "Application")) {
                        if ((r = check_entry_point_file(val, name, name_len, ep)) != 0)
                                return r;
                } else if (!memmem(json_string_value(ep), json_string_length(ep), "::", 2)) {
                        Msg m = MSG_INIT;
                        msg_puts(&m, "Wrong EntryPoint ");
                        msg_str(&m, ep);
                        msg_puts(&m, " for Puppet/Chef executors. :: needed");
                        return msg_fail(&m, val->err, PLAN_CODE_FORMAT);
                }
                if ((r = check_options(val, script, type)) != 0)
                        return r;
        }
        return check_script_files(val, name, name_len, script);
}

static int fail_file(Validator *val, const char *prefix, const char *key, size_t key_len,
                     const char *suffix)
{
        Msg m = MSG_INIT;

        msg_puts(&m, prefix);
        msg_putn(&m, key, key_len);
        msg_puts(&m, suffix);
        return msg_fail(&m, val->err, PLAN_CODE_FORMAT);
}

static int check_file(Validator *val, const char *key, size_t key_len, const json_t *file)
{
        static const char *const download[] = {"Type", "URL", "Name"};
        static const char *const inline_[] = {"BodyType", "Body", "Name"};
        const char *const *attrs = NULL;
        bool has;
        int r;

        if (val->v20) {
                const char *k;
                json_t *unused;

                if (!json_is_object(file))
                        return fail(val->err, PLAN_CODE_EXCEPTION,
                                    "'%s' object has no attribute 'keys'", pyrepr_type_name(file));
                json_object_foreach ((json_t *)file, k, unused)
                        if (streq(k, "Type") || streq(k, "URL")) {
                                Msg m = MSG_INIT;
                                msg_puts(&m, "Download file is ");
                                msg_putn(&m, key, key_len);
                                msg_puts(&m, " not valid for this version ");
                                msg_version(&m, val);
                                return msg_fail(&m, val->err, PLAN_CODE_FORMAT);
                        }
        }

        if ((r = py_contains(val->err, file, "Type", &has)) != 0)
                return r;
        if (has)
                attrs = download;
        else {
                if ((r = py_contains(val->err, file, "Body", &has)) != 0)
                        return r;
                if (has)
                        attrs = inline_;
        }
        if (!attrs) {
                Msg m = MSG_INIT;
                msg_puts(&m, "Invalid file ");
                msg_putn(&m, key, key_len);
                msg_puts(&m, ": ");
                msg_str(&m, file);
                return msg_fail(&m, val->err, PLAN_CODE_FORMAT);
        }
        for (size_t i = 0; i < 3; i++) {
                if ((r = py_contains(val->err, file, attrs[i], &has)) != 0)
                        return r;
                if (!has) {
                        Msg m = MSG_INIT;
                        msg_puts(&m, "Incorrect ");
                        msg_puts(&m, attrs[i]);
                        msg_puts(&m, " entry in file ");
                        msg_putn(&m, key, key_len);
                        return msg_fail(&m, val->err, PLAN_CODE_FORMAT);
                }
        }
        if (attrs == inline_) {
                const json_t *body_type = NULL;
                if ((r = py_getitem(val->err, file, "BodyType", &body_type)) != 0)
                        return r;
                if (!string_is(body_type, "Text") && !string_is(body_type, "Base64"))
                        return fail_file(val, "Incorrect BodyType in file ", key, key_len, "");
        }
        return 0;
}

/* muranoagent.validation.validate_plan(). */
static int check_reference(Validator *val)
{
        static const char *const required[] = {"Scripts", "Files"};
        static const char *const dicts[] = {"Scripts", "Files", "Options"};
        const json_t *scripts, *value;
        const char *key;
        size_t key_len;
        int r;

        r = plan_version_parse(json_object_get(val->plan, "FormatVersion"), &val->v, val->err);
        if (r != 0)
                return r;
        if (plan_version_cmp(&val->v, 2, 2, 0) > 0) {
                Msg m = MSG_INIT;
                msg_puts(&m, "Unsupported format version ");
                msg_version(&m, val);
                msg_puts(&m, " (I support versions <=2.2.0)");
                return msg_fail(&m, val->err, PLAN_CODE_VERSION);
        }
        val->v20 = plan_version_cmp(&val->v, 2, 0, 0) >= 0 && plan_version_lt(&val->v, 2, 1, 0);
        val->v21 = plan_version_cmp(&val->v, 2, 1, 0) >= 0;

        scripts = json_object_get(val->plan, "Scripts");
        for (size_t i = 0; i < ELEMENTSOF(required); i++) {
                if (json_object_get(val->plan, required[i]))
                        continue;
                /* Engine observation 6: the engine's readiness probe,
                 * {"Body": "return", "FormatVersion": "2.0.0", "Scripts": {}},
                 * has no Files. The reference answers it with code 2 and,
                 * since it has no Stamp, re-sends that error forever; the
                 * engine's waitReady()/isReady() wait for a success. A plan
                 * with an empty Scripts object and no Files is therefore
                 * treated as having empty Files: a deliberate difference,
                 * listed in docs/compatibility.md. */
                if (streq(required[i], "Files") && json_is_object(scripts) &&
                    json_object_size(scripts) == 0)
                        continue;
                return fail(val->err, PLAN_CODE_FORMAT, "%s is not in the execution plan",
                            required[i]);
        }
        for (size_t i = 0; i < ELEMENTSOF(dicts); i++) {
                value = json_object_get(val->plan, dicts[i]);
                if (value && !json_is_object(value))
                        return fail(val->err, PLAN_CODE_FORMAT, "%s is not a dictionary", dicts[i]);
        }
        val->files = json_object_get(val->plan, "Files");

        json_object_keylen_foreach((json_t *)scripts, key, key_len,
                                   value) if ((r = check_script(val, key, key_len, value)) !=
                                              0) return r;
        if (val->files)
                json_object_keylen_foreach((json_t *)val->files, key, key_len,
                                           value) if ((r = check_file(val, key, key_len, value)) !=
                                                      0) return r;
        return 0;
}

/* Why a file Name is unsafe as a path below the script folder, or NULL. */
static const char *name_problem(const json_t *name)
{
        const char *s, *last;
        size_t len;

        if (!pyjson_is_string(name))
                return "not a string";
        s = json_string_value(name);
        len = json_string_length(name);
        if (len == 0)
                return "empty";
        if (memchr(s, '\0', len))
                return "contains a NUL character";
        if (s[0] == '/')
                return "absolute path";
        for (const char *p = s; p;) {
                const char *slash = strchr(p, '/');
                size_t n = slash ? (size_t)(slash - p) : strlen(p);
                if (n == 2 && p[0] == '.' && p[1] == '.')
                        return "contains a '..' component";
                p = slash ? slash + 1 : NULL;
        }
        last = strrchr(s, '/');
        last = last ? last + 1 : s;
        if (streq(last, "") || streq(last, "."))
                return "does not end in a file name";
        return NULL;
}

/* Our checks, after everything the reference does. */
static int check_ours(Validator *val)
{
        const json_t *id = json_object_get(val->plan, "ID");
        const json_t *stamp = json_object_get(val->plan, "Stamp");
        const json_t *timeout = json_object_get(val->plan, "Timeout");
        const json_t *file;
        const char *key;
        size_t key_len;

        if (id && !pyjson_is_string(id))
                return fail(val->err, PLAN_CODE_FORMAT, "ID is not a string");
        if (stamp && !json_is_integer(stamp))
                return fail(val->err, PLAN_CODE_FORMAT, "Stamp is not an integer");
        /* Ours: the plan's own time limit (docs/plans.md), in seconds. */
        if (timeout && !(json_is_number(timeout) && json_number_value(timeout) > 0))
                return fail(val->err, PLAN_CODE_FORMAT,
                            "Timeout is not a positive number of seconds");
        if (!val->files)
                return 0;
        json_object_keylen_foreach((json_t *)val->files, key, key_len, file)
        {
                const char *problem;

                /* A str or list can pass the reference's `in` tests
                 * ("TypeURLName"); it is no file description all the same,
                 * and the reference's own wording says so. */
                if (!json_is_object(file)) {
                        Msg m = MSG_INIT;
                        msg_puts(&m, "Invalid file ");
                        msg_putn(&m, key, key_len);
                        msg_puts(&m, ": ");
                        msg_str(&m, file);
                        return msg_fail(&m, val->err, PLAN_CODE_FORMAT);
                }
                problem = name_problem(json_object_get(file, "Name"));
                if (problem) {
                        Msg m = MSG_INIT;
                        msg_puts(&m, "Invalid Name in file ");
                        msg_putn(&m, key, key_len);
                        msg_puts(&m, ": ");
                        msg_puts(&m, problem);
                        return msg_fail(&m, val->err, PLAN_CODE_FORMAT);
                }
        }
        return 0;
}

int plan_validate(const json_t *plan, PlanError *err)
{
        Validator val = {.plan = plan, .err = err};
        int r;

        if (!json_is_object(plan))
                return -EINVAL;
        if ((r = check_reference(&val)) != 0)
                return r;
        /* The reference does not validate Body: it fails later, reading
         * plan.Body, with KeyError('Body') and code 1. Checked here, right
         * after the reference's own checks, so the answer is the same. */
        if (!json_object_get(plan, "Body")) {
                r = fail(err, PLAN_CODE_EXCEPTION, "'Body'");
                if (err)
                        err->at_run_time = true;
                return r;
        }
        return check_ours(&val);
}
