/* The run subcommand (see cmd-run.h): one plan, one loop, one result. */
#include "cmd-run.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "log/log.h"
#include "plan/plan.h"
#include "result/result.h"
#include "runner/runner.h"
#include "util/macro.h"

typedef struct RunState {
        Runner *runner;
        const Config *cfg;
        uv_signal_t sigterm;
        uv_signal_t sigint;
        json_t *result; /* owned once the plan is over */
        int signals;
} RunState;

static void on_signal(uv_signal_t *s, int signum)
{
        RunState *st = s->data;

        /* The first signal gives the running script stop_grace seconds; a
         * second one kills it at once. */
        st->signals++;
        log_warning(runner_plan_id(st->runner), "%s received: stopping%s", strsignal(signum),
                    st->signals > 1 ? " now" : "");
        runner_stop(st->runner, st->signals > 1 ? 0 : st->cfg->agent.stop_grace);
}

static void on_done(Runner *r, json_t *result, void *userdata)
{
        RunState *st = userdata;

        st->result = result;
        uv_close((uv_handle_t *)&st->sigterm, NULL);
        uv_close((uv_handle_t *)&st->sigint, NULL);
}

/* Print a result document; returns the exit status it stands for. */
static int print_result(const json_t *result)
{
        _cleanup_free_ char *text = NULL;
        const json_t *code = json_object_get(result, "ErrorCode");

        if (result_to_text(result, &text) < 0) {
                fputs("muranoagent run: cannot write the result: out of memory\n", stderr);
                return 1;
        }
        puts(text);
        fflush(stdout);
        return json_integer_value(code) == 0 ? 0 : 1;
}

/* An error result for a plan that did not run. With_reply_to adds the plan's
 * ReplyTo (null when absent), as the reference does for every result that
 * went through its result.json rather than straight out of validation. */
static int print_error(const json_t *plan, int code, const char *message, bool with_reply_to)
{
        _cleanup_json_ json_t *doc = NULL;
        const json_t *id = plan ? json_object_get(plan, "ID") : NULL;

        if (result_new_error(&doc, id, code, message, NULL) < 0 ||
            (with_reply_to && result_set_reply_to(doc, json_object_get(plan, "ReplyTo")) < 0)) {
                fputs("muranoagent run: out of memory\n", stderr);
                return 1;
        }
        print_result(doc);
        return 1;
}

static int run_plan(const Config *cfg, const json_t *plan, const char *storage)
{
        _cleanup_free_ char *warning = NULL, *error = NULL;
        RunState st = {.cfg = cfg};
        uv_loop_t loop;
        int rc, status = 1;

        rc = uv_loop_init(&loop);
        if (rc < 0) {
                fprintf(stderr, "muranoagent run: %s\n", uv_strerror(rc));
                return 1;
        }
        rc = runner_new(&loop, cfg, storage, &st.runner, &warning, &error);
        if (warning)
                log_warning(NULL, "%s", warning);
        if (rc == RUNNER_UNAVAILABLE)
                status = print_error(plan, RESULT_CODE_SANDBOX, error, true);
        else if (rc < 0)
                status = print_error(plan, PLAN_CODE_EXCEPTION, strerror(-rc), true);
        if (rc != 0) {
                uv_loop_close(&loop);
                return status;
        }

        uv_signal_init(&loop, &st.sigterm);
        uv_signal_init(&loop, &st.sigint);
        st.sigterm.data = st.sigint.data = &st;
        uv_signal_start(&st.sigterm, on_signal, SIGTERM);
        uv_signal_start(&st.sigint, on_signal, SIGINT);

        rc = runner_start(st.runner, plan, json_object_get(plan, "ID"),
                          json_object_get(plan, "ReplyTo"), on_done, &st);
        if (rc < 0) {
                uv_close((uv_handle_t *)&st.sigterm, NULL);
                uv_close((uv_handle_t *)&st.sigint, NULL);
        } else
                uv_run(&loop, UV_RUN_DEFAULT);
        runner_free(st.runner);
        uv_run(&loop, UV_RUN_DEFAULT);
        if (uv_loop_close(&loop) != 0)
                log_error(NULL, "the event loop did not close cleanly");

        if (rc < 0)
                return print_error(plan, PLAN_CODE_EXCEPTION, strerror(-rc), true);
        if (!st.result)
                return print_error(plan, PLAN_CODE_EXCEPTION, "out of memory", true);
        status = print_result(st.result);
        json_decref(st.result);
        return status;
}

int cmd_run(const Config *cfg, char *const *args, int n)
{
        _cleanup_json_ json_t *plan = NULL;
        PlanLimits lim = {.max_bytes = cfg->agent.max_plan_size,
                          .max_depth = cfg->agent.max_plan_depth};
        const char *path = NULL, *storage = NULL;
        PlanError err = {0};
        int rc;

        for (int i = 0; i < n; i++) {
                if (streq(args[i], "--storage") && i + 1 < n)
                        storage = args[++i];
                else if (strncmp(args[i], "--storage=", 10) == 0)
                        storage = args[i] + 10;
                else if (args[i][0] != '-' && !path)
                        path = args[i];
                else {
                        fprintf(stderr, "muranoagent run: unexpected argument '%s'\n", args[i]);
                        return 2;
                }
        }
        if (!path) {
                fputs("muranoagent run: usage: muranoagent run PLAN [--storage DIR]\n", stderr);
                return 2;
        }

        rc = plan_parse_file(path, &lim, &plan, &err);
        if (rc < 0) {
                char msg[512];
                snprintf(msg, sizeof(msg), "Cannot read plan file '%s': %s", path, strerror(-rc));
                return print_error(NULL, PLAN_CODE_EXCEPTION, msg, false);
        }
        if (rc == 0)
                rc = plan_validate(plan, &err);
        if (rc != 0) {
                int status = print_error(plan, err.code, err.message,
                                         rc == PLAN_INVALID && err.at_run_time);
                plan_error_clear(&err);
                return status;
        }
        return run_plan(cfg, plan, storage);
}
