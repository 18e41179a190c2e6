/* The check subcommand (see cmd-check.h). */
#include "cmd-check.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "result/result.h"
#include "util/macro.h"

static void print_error(const char *path, const json_t *plan, const PlanError *err)
{
        _cleanup_json_ json_t *doc = NULL;
        _cleanup_free_ char *text = NULL;
        const json_t *id = plan ? json_object_get(plan, "ID") : NULL;

        /* Parse messages already end with "(line L, column C)". */
        fprintf(stderr, "%s: error %d: %s\n", path, err->code, err->message);

        if (result_new_error(&doc, id, err->code, err->message, NULL) < 0 ||
            result_to_text(doc, &text) < 0) {
                fprintf(stderr, "%s: cannot build the error result: out of memory\n", path);
                puts("{}");
                return;
        }
        puts(text);
}

/* Judge one plan file; returns true when it is valid. */
static bool check_one(const char *path, const PlanLimits *lim)
{
        _cleanup_json_ json_t *plan = NULL;
        PlanError err = {0};
        bool ok = false;
        int r;

        r = plan_parse_file(path, lim, &plan, &err);
        if (r < 0) {
                char msg[512];
                snprintf(msg, sizeof(msg), "Cannot read plan file '%s': %s", path, strerror(-r));
                err.code = PLAN_CODE_EXCEPTION;
                err.message = strdup(msg);
                if (!err.message)
                        return false;
        } else if (r == 0)
                r = plan_validate(plan, &err);

        if (r == 0) {
                puts("ok");
                ok = true;
        } else
                print_error(path, plan, &err);
        plan_error_clear(&err);
        return ok;
}

int cmd_check(char *const *paths, int n, const PlanLimits *lim)
{
        int failed = 0;

        for (int i = 0; i < n; i++)
                if (!check_one(paths[i], lim))
                        failed++;
        fflush(stdout);
        return failed == 0 ? 0 : 1;
}
