/* libFuzzer target for plan parsing and validation: any bytes, as JSON from
 * the wire and as YAML from a file, must give a document or an error, never
 * a crash, a hang or a leak. */
#include <stddef.h>
#include <stdint.h>

#include "plan/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void judge(json_t *plan)
{
        PlanError err = {0};

        plan_validate(plan, &err);
        plan_error_clear(&err);
        json_decref(plan);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        PlanLimits lim = PLAN_LIMITS_DEFAULT;
        PlanError err = {0};
        json_t *plan = NULL;

        lim.max_bytes = 1 << 20;
        if (plan_parse_json((const char *)data, size, &lim, &plan, &err) == 0)
                judge(plan);
        plan_error_clear(&err);

        plan = NULL;
        if (plan_parse_yaml((const char *)data, size, &lim, &plan, &err) == 0)
                judge(plan);
        plan_error_clear(&err);
        return 0;
}
