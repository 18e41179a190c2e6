/* Matching results to plans and judging them (see send-result.h). */
#include "send/send-result.h"

#include <errno.h>
#include <string.h>

#include "send/send-plan.h"
#include "util/macro.h"
#include "util/pyjson.h"
#include "util/pyrepr.h"

int send_result_match(const char *body, size_t len, const char *message_id, const json_t *key,
                      json_t **ret_doc)
{
        _cleanup_json_ json_t *doc =
                pyjson_loadb(body, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
        _cleanup_json_ json_t *mid = NULL;
        const json_t *source;

        if (!json_is_object(doc))
                return 0;
        source = json_object_get(doc, "SourceID");
        if (!source) {
                mid = json_string(message_id);
                if (!mid)
                        return -ENOMEM;
                source = mid;
        }
        if (!json_equal(source, key))
                return 0;
        *ret_doc = TAKE_PTR(doc);
        return 1;
}

static int v1_failed(const json_t *doc)
{
        const json_t *exc = json_object_get(doc, "IsException");
        const json_t *results, *last;

        /* result['IsException'] raises KeyError when it is missing. */
        if (!exc || pyrepr_truthy(exc))
                return 1;
        results = json_object_get(doc, "Result");
        if (!results)
                return 1; /* [][-1] raises IndexError */
        if (!json_is_array(results) || json_array_size(results) == 0)
                return 1;
        last = json_array_get(results, json_array_size(results) - 1);
        if (!json_is_object(last))
                return 1;
        exc = json_object_get(last, "IsException");
        return !exc || pyrepr_truthy(exc);
}

int send_result_failed(const json_t *doc)
{
        const json_t *fv;

        /* Agent._send returns None for a falsy result. */
        if (!pyrepr_truthy(doc))
                return 0;
        if (!json_is_object(doc))
                return 1;
        fv = json_object_get(doc, "FormatVersion");
        if (!fv || (json_is_string(fv) && strncmp(json_string_value(fv), "1.", 2) == 0))
                return v1_failed(doc);
        if (!json_is_string(fv))
                return 1; /* .startswith raises AttributeError */
        return pyrepr_truthy(json_object_get(doc, "ErrorCode"));
}
