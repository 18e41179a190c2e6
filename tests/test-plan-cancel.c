/* Tests for the cancel message (agent/plan/plan-cancel.c): its exact bytes,
 * what is and is not one, and that a plan validator reading it as a plan
 * refuses it, as the reference's validation.py and our own older agents
 * would (docs/compatibility.md, "Cancel messages"). */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan-cancel.h"
#include "plan/plan.h"
#include "util/macro.h"
#include "util/pyjson.h"
#include "test-lib.h"

#define MSG_ID "0123456789abcdef0123456789abcdef"

START_TEST(test_build_bytes)
{
        _cleanup_free_ char *body = NULL;

        ck_assert_int_eq(plan_cancel_build("5b1f0e3c9d2a4b7e", MSG_ID, &body), 0);
        ck_assert_str_eq(body, "{\"Control\": \"Cancel\", \"PlanID\": \"5b1f0e3c9d2a4b7e\", "
                               "\"ID\": \"" MSG_ID "\", \"Stamp\": 0}");
        /* As json.dumps writes it: ASCII only. */
        body = (free(body), NULL);
        ck_assert_int_eq(plan_cancel_build("caf\xc3\xa9", MSG_ID, &body), 0);
        ck_assert_str_eq(body, "{\"Control\": \"Cancel\", \"PlanID\": \"caf\\u00e9\", "
                               "\"ID\": \"" MSG_ID "\", \"Stamp\": 0}");
}
END_TEST

START_TEST(test_build_bad_id)
{
        char long_id[PLAN_CANCEL_ID_MAX + 2];
        char *body = NULL;

        memset(long_id, 'a', sizeof(long_id) - 1);
        long_id[sizeof(long_id) - 1] = '\0';
        ck_assert_int_eq(plan_cancel_build("", MSG_ID, &body), -EINVAL);
        ck_assert_int_eq(plan_cancel_build(long_id, MSG_ID, &body), -EINVAL);
        long_id[PLAN_CANCEL_ID_MAX] = '\0';
        ck_assert_int_eq(plan_cancel_build(long_id, MSG_ID, &body), 0);
        free(body);
}
END_TEST

START_TEST(test_parse_round_trip)
{
        _cleanup_free_ char *body = NULL, *id = NULL, *error = NULL;

        ck_assert_int_eq(plan_cancel_build("plan-7", MSG_ID, &body), 0);
        ck_assert_int_eq(plan_cancel_parse(body, strlen(body), &id, &error), 1);
        ck_assert_str_eq(id, "plan-7");
        ck_assert_ptr_null(error);
}
END_TEST

/* The loop skips the parse of a body that cannot name the Control key;
 * one that names it through an escape is still a cancel. */
START_TEST(test_parse_escaped_key)
{
        static const char *const bodies[] = {
                "{\"\\u0043ontrol\": \"Cancel\", \"PlanID\": \"plan-8\"}",
                "{\"C\\u006Fntrol\": \"Cancel\", \"PlanID\": \"plan-8\"}",
                "{\"Control\": \"Cancel\", \"PlanID\": \"plan-8\"}",
        };

        for (size_t i = 0; i < ELEMENTSOF(bodies); i++) {
                _cleanup_free_ char *id = NULL, *error = NULL;

                ck_assert_int_eq(plan_cancel_parse(bodies[i], strlen(bodies[i]), &id, &error), 1);
                ck_assert_str_eq(id, "plan-8");
        }
}
END_TEST

/* Bodies that are not control messages: the daemon treats them as plans. */
static const char *const not_control[] = {
        "",
        "not json",
        "[1, 2]",
        "{}",
        "{\"FormatVersion\": \"2.0.0\", \"Body\": \"return\", \"Scripts\": {}}",
        /* A plan that happens to have a Control key stays a plan. */
        "{\"Control\": \"Cancel\", \"PlanID\": \"x\", \"Scripts\": {}}",
        "{\"Control\": \"Cancel\", \"PlanID\": \"x\", \"Body\": \"return\"}",
        "{\"Control\": \"Cancel\", \"PlanID\": \"x\", \"FormatVersion\": \"2.0.0\"}",
        /* A key given twice is no document. */
        "{\"Control\": \"Cancel\", \"PlanID\": \"x\", \"PlanID\": \"y\"}",
        "{\"control\": \"Cancel\", \"PlanID\": \"x\"}",
        /* \u0000 is refused in every document the agent reads. */
        "{\"Control\": \"Cancel\", \"PlanID\": \"a\\u0000b\"}",
};

START_TEST(test_parse_not_control)
{
        const char *body = not_control[_i];
        char *id = NULL, *error = NULL;

        ck_assert_int_eq(plan_cancel_parse(body, strlen(body), &id, &error), 0);
        ck_assert_ptr_null(id);
        ck_assert_ptr_null(error);
}
END_TEST

static const struct {
        const char *body;
        const char *error;
} invalid[] = {
        {"{\"Control\": \"Stop\", \"PlanID\": \"x\"}",
         "unknown control message (Control is not \"Cancel\")"},
        {"{\"Control\": 1, \"PlanID\": \"x\"}",
         "unknown control message (Control is not \"Cancel\")"},
        {"{\"Control\": \"Cancel\"}",
         "cancel message without a PlanID (a non-empty string of at most 255 bytes)"},
        {"{\"Control\": \"Cancel\", \"PlanID\": \"\"}",
         "cancel message without a PlanID (a non-empty string of at most 255 bytes)"},
        {"{\"Control\": \"Cancel\", \"PlanID\": 7}",
         "cancel message without a PlanID (a non-empty string of at most 255 bytes)"},
};

START_TEST(test_parse_invalid)
{
        _cleanup_free_ char *id = NULL, *error = NULL;
        const char *body = invalid[_i].body;

        ck_assert_int_eq(plan_cancel_parse(body, strlen(body), &id, &error), PLAN_CANCEL_INVALID);
        ck_assert_ptr_null(id);
        ck_assert_str_eq(error, invalid[_i].error);
}
END_TEST

/* A body over PLAN_CANCEL_MAX is a plan, whatever it holds. */
START_TEST(test_parse_too_large)
{
        _cleanup_free_ char *body = malloc(PLAN_CANCEL_MAX + 64);
        char *id = NULL, *error = NULL;
        int n;

        ck_assert_ptr_nonnull(body);
        n = snprintf(body, PLAN_CANCEL_MAX + 64,
                     "{\"Control\": \"Cancel\", \"PlanID\": \"x\", \"Pad\": \"");
        memset(body + n, 'p', PLAN_CANCEL_MAX - n);
        strcpy(body + PLAN_CANCEL_MAX, "\"}");
        ck_assert_int_eq(plan_cancel_parse(body, strlen(body), &id, &error), 0);
        ck_assert_ptr_null(id);
}
END_TEST

/* Read as a plan, the message is refused: the reference drops it at its
 * stamp check (Stamp 0 is never above its last stamp, which starts at 0,
 * execution_plan_queue.py get_execution_plan), and its validation, were it
 * reached, refuses it as our validator (the reference's rules) does here. */
START_TEST(test_refused_as_plan)
{
        _cleanup_free_ char *body = NULL;
        _cleanup_json_ json_t *plan = NULL;
        PlanError err = {0};
        PlanLimits lim = PLAN_LIMITS_DEFAULT;

        ck_assert_int_eq(plan_cancel_build("plan-7", MSG_ID, &body), 0);
        ck_assert_int_eq(plan_parse_json(body, strlen(body), &lim, &plan, &err), 0);
        ck_assert_int_eq(json_integer_value(json_object_get(plan, "Stamp")), 0);
        ck_assert(json_is_integer(json_object_get(plan, "Stamp")));
        ck_assert_int_eq(plan_validate(plan, &err), PLAN_INVALID);
        ck_assert_int_eq(err.code, 2);
        ck_assert_str_eq(err.message, "Scripts is not in the execution plan");
        plan_error_clear(&err);
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_test(tc, test_build_bytes);
        tcase_add_test(tc, test_build_bad_id);
        tcase_add_test(tc, test_parse_round_trip);
        tcase_add_test(tc, test_parse_escaped_key);
        tcase_add_loop_test(tc, test_parse_not_control, 0, (int)ELEMENTSOF(not_control));
        tcase_add_loop_test(tc, test_parse_invalid, 0, (int)ELEMENTSOF(invalid));
        tcase_add_test(tc, test_parse_too_large);
        tcase_add_test(tc, test_refused_as_plan);
}

int main(void)
{
        return check_main_one("plan-cancel", "cancel", NULL, NULL, 30, add_tests);
}
