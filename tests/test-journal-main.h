/* The main() of the journal's test programs (test-journal*.c): one suite
 * named after the program, whose one tcase, "core", gives each test a fresh
 * storage directory (setup() and teardown() in test-journal.h). */
#pragma once

#include "test-journal.h"

static inline int journal_test_main(const char *name, void (*add_tests)(TCase *tc))
{
        Suite *s = suite_create(name);
        TCase *tc = tcase_create("core");
        SRunner *sr;
        int failed;

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        add_tests(tc);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
