/* Tests for result/: key order, Time spelling, fresh IDs, and byte-exact
 * text compared with what the Python reference writes (tests/data/result). */
#include <check.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "result/result.h"
#include "util/fileio.h"
#include "util/macro.h"
#include "test-lib.h"

/* 2024-05-10 12:34:56 UTC */
#define T0 1715344496

static char *fixture(const char *name)
{
        char path[512];
        char *text = NULL;

        snprintf(path, sizeof(path), "%s/result/%s", TEST_DATA_DIR, name);
        ck_assert_int_eq(file_read_all(path, 1 << 20, &text, NULL), 0);
        return text;
}

START_TEST(test_success_bytes)
{
        struct timespec t = {T0, 123456789};
        json_t *sid = json_string("ID1"), *body, *r = NULL;
        char *text = NULL, *want = fixture("success.json");

        body = json_pack("{s:i,s:s,s:n}", "exitCode", 0, "stdout", "caf\xc3\xa9 ok", "stderr");
        ck_assert_int_eq(
                result_new_success_at(&r, "5b1f0e3c9d2a4b7e8f6a1c2d3e4f5a6b", &t, sid, body), 0);
        ck_assert_int_eq(result_set_reply_to(r, NULL), 0);
        ck_assert_int_eq(result_to_text(r, &text), 0);
        ck_assert_str_eq(text, want);
        free(text);
        free(want);
        json_decref(r);
        json_decref(body);
        json_decref(sid);
}
END_TEST

START_TEST(test_error_bytes)
{
        struct timespec t = {T0, 999}; /* below a microsecond: Python prints no fraction */
        json_t *sid = json_string("ID1"), *info, *r = NULL;
        char *text = NULL, *want = fixture("error-100.json");

        info = json_pack("{s:i,s:n,s:s}", "exitCode", 1, "stdout", "stderr", "boom");
        ck_assert_int_eq(result_new_error_at(&r, "5b1f0e3c9d2a4b7e8f6a1c2d3e4f5a6b", &t, sid, 100,
                                             "Script deploy returned error code", info),
                         0);
        ck_assert_int_eq(result_to_text(r, &text), 0);
        ck_assert_str_eq(text, want);
        free(text);
        free(want);
        json_decref(r);
        json_decref(info);
        json_decref(sid);
}
END_TEST

START_TEST(test_error_null_message)
{
        struct timespec t = {T0, 0};
        json_t *r = NULL;
        char *text = NULL;

        ck_assert_int_eq(result_new_error_at(&r, "0123456789abcdef0123456789abcdef", &t, NULL, 2,
                                             NULL, NULL),
                         0);
        ck_assert_int_eq(result_to_text(r, &text), 0);
        ck_assert_str_eq(
                text,
                "{\"FormatVersion\": \"2.0.0\", \"ID\": \"0123456789abcdef0123456789abcdef\", "
                "\"SourceID\": \"\", \"Action\": \"Execution:Result\", \"ErrorCode\": 2, "
                "\"Body\": {\"Message\": null, \"AdditionalInfo\": null}, "
                "\"Time\": \"2024-05-10 12:34:56\"}");
        free(text);
        json_decref(r);
}
END_TEST

static const struct {
        long nsec;
        const char *text;
} time_cases[] = {
        {0, "2024-05-10 12:34:56"},
        {999, "2024-05-10 12:34:56"},
        {1000, "2024-05-10 12:34:56.000001"},
        {123456789, "2024-05-10 12:34:56.123456"},
        {500000000, "2024-05-10 12:34:56.500000"},
};

START_TEST(test_time_format)
{
        struct timespec t = {T0, time_cases[_i].nsec};
        char buf[32];

        result_format_time(&t, buf);
        ck_assert_str_eq(buf, time_cases[_i].text);
}
END_TEST

START_TEST(test_fresh_id_and_time)
{
        json_t *r1 = NULL, *r2 = NULL, *sid = json_integer(7);
        regex_t id_re, time_re;
        const char *id1, *id2, *tm;
        const char *key;
        json_t *v;
        const char *order[] = {"FormatVersion", "ID",   "SourceID", "Action",
                               "ErrorCode",     "Body", "Time"};
        size_t i = 0;

        ck_assert_int_eq(
                regcomp(&id_re, "^[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$", REG_EXTENDED), 0);
        ck_assert_int_eq(
                regcomp(&time_re,
                        "^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{6})?$",
                        REG_EXTENDED),
                0);
        ck_assert_int_eq(result_new_success(&r1, sid, NULL), 0);
        ck_assert_int_eq(result_new_error(&r2, sid, 1, "'x'", NULL), 0);
        id1 = json_string_value(json_object_get(r1, "ID"));
        id2 = json_string_value(json_object_get(r2, "ID"));
        tm = json_string_value(json_object_get(r1, "Time"));
        ck_assert_int_eq(regexec(&id_re, id1, 0, NULL, 0), 0);
        ck_assert_int_eq(regexec(&id_re, id2, 0, NULL, 0), 0);
        ck_assert_str_ne(id1, id2);
        ck_assert_int_eq(regexec(&time_re, tm, 0, NULL, 0), 0);
        /* SourceID keeps the plan's own type, as Python's does. */
        ck_assert(json_is_integer(json_object_get(r1, "SourceID")));
        ck_assert(json_is_null(json_object_get(r1, "Body")));
        json_object_foreach (r1, key, v) {
                ck_assert_str_eq(key, order[i]);
                i++;
        }
        ck_assert_uint_eq(i, 7);
        regfree(&id_re);
        regfree(&time_re);
        json_decref(r1);
        json_decref(r2);
        json_decref(sid);
}
END_TEST

START_TEST(test_reply_to_last)
{
        struct timespec t = {T0, 0};
        json_t *r = NULL, *rt = json_string("my-queue");
        const char *key, *last = NULL;
        json_t *v;

        ck_assert_int_eq(
                result_new_success_at(&r, "0123456789abcdef0123456789abcdef", &t, NULL, NULL), 0);
        ck_assert_int_eq(result_set_reply_to(r, rt), 0);
        json_object_foreach (r, key, v)
                last = key;
        ck_assert_str_eq(last, "ReplyTo");
        ck_assert_str_eq(json_string_value(json_object_get(r, "ReplyTo")), "my-queue");
        json_decref(r);
        json_decref(rt);
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_test(tc, test_success_bytes);
        tcase_add_test(tc, test_error_bytes);
        tcase_add_test(tc, test_error_null_message);
        tcase_add_loop_test(tc, test_time_format, 0, ELEMENTSOF(time_cases));
        tcase_add_test(tc, test_fresh_id_and_time);
        tcase_add_test(tc, test_reply_to_last);
}

int main(void)
{
        return check_main_one("result", "core", NULL, NULL, 60, add_tests);
}
