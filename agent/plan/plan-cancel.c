/* The cancel message (see plan-cancel.h). */
#include "plan/plan-cancel.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/macro.h"
#include "util/pyjson.h"

int plan_cancel_build(const char *plan_id, const char *msg_id, char **ret)
{
        _cleanup_json_ json_t *msg = NULL;
        size_t n = strlen(plan_id);

        if (n == 0 || n > PLAN_CANCEL_ID_MAX)
                return -EINVAL;
        /* Keys in this order on the wire: jansson keeps insertion order. */
        msg = json_object();
        if (!msg || json_object_set_new(msg, "Control", json_string("Cancel")) < 0 ||
            json_object_set_new(msg, "PlanID", json_string(plan_id)) < 0 ||
            json_object_set_new(msg, "ID", json_string(msg_id)) < 0 ||
            json_object_set_new(msg, "Stamp", json_integer(0)) < 0)
                return -ENOMEM;
        return pyjson_dumps(msg, ret);
}

static int invalid(char **ret_error, const char *why)
{
        *ret_error = strdup(why);
        return *ret_error ? PLAN_CANCEL_INVALID : -ENOMEM;
}

int plan_cancel_parse(const char *body, size_t len, char **ret_plan_id, char **ret_error)
{
        _cleanup_json_ json_t *doc = NULL;
        const json_t *control, *id;

        if (len > PLAN_CANCEL_MAX)
                return 0;
        /* A body that names no Control key is not parsed: neither its
         * letters as they are nor an escape (\u0043ontrol, the one way
         * JSON writes a letter otherwise) occurs in it. So a plan, which
         * the daemon parses again on the pool, costs the loop a scan. */
        if (!memmem(body, len, "Control", 7) && !memmem(body, len, "\\u", 2))
                return 0;
        doc = pyjson_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
        control = json_object_get(doc, "Control");
        /* Whatever looks like a plan is one, and is judged as a plan. */
        if (!control || json_object_get(doc, "FormatVersion") || json_object_get(doc, "Scripts") ||
            json_object_get(doc, "Body"))
                return 0;
        if (!json_is_string(control) || !streq(json_string_value(control), "Cancel"))
                return invalid(ret_error, "unknown control message (Control is not \"Cancel\")");
        id = json_object_get(doc, "PlanID");
        if (!json_is_string(id) || json_string_length(id) == 0 ||
            json_string_length(id) > PLAN_CANCEL_ID_MAX)
                return invalid(ret_error,
                               "cancel message without a PlanID (a non-empty string of at most "
                               "255 bytes)");
        *ret_plan_id = strdup(json_string_value(id));
        return *ret_plan_id ? 1 : -ENOMEM;
}
