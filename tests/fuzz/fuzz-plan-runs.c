/* Differential libFuzzer target for plan_parse_json()'s fast path: long
 * stretches of string values are kept out of jansson (plan-json-runs.c).
 * The first input byte picks a threshold of 1 to 12 bytes, so short inputs
 * take the fast path; the rest is parsed both ways, and any difference in
 * the return value, the document (key order included) or the error (code,
 * text, line, column) aborts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan-internal.h"
#include "plan/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *parse(const char *text, size_t len, size_t min_run, int *ret, PlanError *err)
{
        PlanLimits lim = PLAN_LIMITS_DEFAULT;
        json_t *doc = NULL;
        size_t runs = 0;
        char *dump = NULL;

        lim.max_bytes = 1 << 20;
        lim.max_depth = 16;
        *ret = plan_parse_json_runs(text, len, &lim, min_run, &doc, &runs, err);
        if (doc) {
                dump = json_dumps(doc, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER);
                json_decref(doc);
        }
        return dump;
}

static int same_text(const char *a, const char *b)
{
        return (!a && !b) || (a && b && streq(a, b));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        PlanError plain_err = PLAN_ERROR_INIT, fast_err = PLAN_ERROR_INIT;
        int plain_rc, fast_rc;
        char *plain, *fast;

        if (size < 1)
                return 0;
        plain = parse((const char *)data + 1, size - 1, SIZE_MAX, &plain_rc, &plain_err);
        fast = parse((const char *)data + 1, size - 1, 1 + data[0] % 12, &fast_rc, &fast_err);
        if (plain_rc != fast_rc || !same_text(plain, fast) ||
            !same_text(plain_err.message, fast_err.message) || plain_err.line != fast_err.line ||
            plain_err.column != fast_err.column || plain_err.code != fast_err.code)
                abort();
        free(plain);
        free(fast);
        plan_error_clear(&plain_err);
        plan_error_clear(&fast_err);
        return 0;
}
