/* What every Check program's main() does: run a suite and turn its
 * failures into the exit status, and the one-tcase suite with a fixture
 * and a time limit that most of them build. */
#pragma once

#include <check.h>
#include <stdlib.h>

/* A decimal literal of 4301 digits, one past CPython 3.11's limit on
 * int/str conversion (sys.int_info.default_max_str_digits). */
#define DIGITS_100                                                                                 \
        "1111111111111111111111111111111111111111111111111111111111111111111111111111111111111111" \
        "111"                                                                                      \
        "111111111"
#define DIGITS_1000                                                                                \
        DIGITS_100 DIGITS_100 DIGITS_100 DIGITS_100 DIGITS_100 DIGITS_100 DIGITS_100 DIGITS_100    \
                DIGITS_100 DIGITS_100
#define DIGITS_4301                                                                                \
        DIGITS_1000 DIGITS_1000 DIGITS_1000 DIGITS_1000 DIGITS_100 DIGITS_100 DIGITS_100 "1"

static inline int check_run(Suite *s)
{
        SRunner *sr = srunner_create(s);
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* Suite name with one tcase, tc_name, whose tests each get fixture_setup() and
 * fixture_teardown() around them (checked fixtures: run in the test's process)
 * and timeout seconds; add_tests adds them. */
static inline int check_main_one(const char *name, const char *tc_name, void (*fixture_setup)(void),
                                 void (*fixture_teardown)(void), double timeout,
                                 void (*add_tests)(TCase *tc))
{
        Suite *s = suite_create(name);
        TCase *tc = tcase_create(tc_name);

        tcase_add_checked_fixture(tc, fixture_setup, fixture_teardown);
        tcase_set_timeout(tc, timeout);
        add_tests(tc);
        suite_add_tcase(s, tc);
        return check_run(s);
}
