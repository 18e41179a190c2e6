/* muranoagent cancel (see cmd-cancel.h). */
#include "cmd-cancel.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "control/control.h"
#include "plan/plan-cancel.h"
#include "util/macro.h"

int cmd_cancel(const Config *cfg, char **args, int n_args)
{
        _cleanup_json_ json_t *req = NULL, *reply = NULL;
        _cleanup_free_ char *error = NULL;
        const char *outcome, *message;
        int rc;

        if (n_args != 1 || !*args[0] || strlen(args[0]) > PLAN_CANCEL_ID_MAX) {
                fputs("Usage: muranoagent [OPTIONS] cancel PLAN_ID\n", stderr);
                return 2;
        }
        req = json_pack("{ssss}", "command", "cancel", "plan_id", args[0]);
        if (!req)
                return 1;
        rc = control_call(cfg->storage, req, CMD_CANCEL_TIMEOUT_MS, &reply, &error);
        if (rc < 0) {
                fprintf(stderr, "muranoagent cancel: %s\n", error ? error : strerror(-rc));
                return 1;
        }
        outcome = json_string_value(json_object_get(reply, "outcome"));
        message = json_string_value(json_object_get(reply, "message"));
        if (!json_is_true(json_object_get(reply, "ok")) || !outcome || !message) {
                message = json_string_value(json_object_get(reply, "error"));
                fprintf(stderr, "muranoagent cancel: the agent refused: %s\n",
                        message ? message : "no reason given");
                return 1;
        }
        printf("plan %s: %s\n", args[0], message);
        return streq(outcome, "stopping") || streq(outcome, "answered") ? 0 : 1;
}
