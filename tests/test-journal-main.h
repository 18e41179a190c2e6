/* The main() of the journal's test programs (test-journal*.c): one suite
 * named after the program, whose one tcase, "core", gives each test a fresh
 * storage directory (setup() and teardown() in test-journal.h). */
#pragma once

#include "test-lib.h"
#include "test-journal.h"

static inline int journal_test_main(const char *name, void (*add_tests)(TCase *tc))
{
        return check_main_one(name, "core", setup, teardown, 60, add_tests);
}
