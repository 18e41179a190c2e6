/* util/yaml-lazy: when libyaml cannot be loaded, a YAML plan is rejected
 * with the loader's reason and nothing crashes, while JSON plans never need
 * it (that the program does not link it: test-link).
 *
 * Every test makes the library name unresolvable before the first load,
 * so the whole program (forked or not, as under valgrind) runs without
 * libyaml. That YAML plans parse when it loads is what test-plan checks. */
#include <check.h>
#include <pthread.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "plan/plan.h"
#include "test-lib.h"
#include "util/macro.h"
#include "util/yaml-lazy.h"

#define MISSING "libyaml-missing-for-test.so.2"

static void setup(void)
{
        yaml_lazy_lib.library = MISSING;
}

static void teardown(void)
{
}

START_TEST(test_plan_yaml_is_error)
{
        static const char yaml[] = "FormatVersion: 2.1.0\nID: x\n";
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        _cleanup_json_ json_t *doc = NULL;
        _cleanup_free_ char *want = NULL;

        ck_assert_int_eq(plan_parse_yaml(yaml, strlen(yaml), NULL, &doc, &err), PLAN_INVALID);
        ck_assert_ptr_null(doc);
        ck_assert_int_eq(err.code, PLAN_CODE_EXCEPTION);
        ck_assert_int_ne(asprintf(&want, "YAML plans need libyaml, which cannot be loaded: %s",
                                  yaml_lazy_error()),
                         -1);
        ck_assert_str_eq(err.message, want);
        ck_assert_ptr_nonnull(strstr(err.message, MISSING));
        /* Asking again gives the same answer. */
        ck_assert_int_eq(yaml_lazy_load(), -1);
}
END_TEST

/* A JSON plan, in text or from a file, never tries to load libyaml. */
START_TEST(test_plan_json_without_yaml)
{
        static const char json[] = "{\"FormatVersion\": \"2.1.0\", \"ID\": \"x\"}";
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        _cleanup_json_ json_t *doc = NULL, *file = NULL;

        ck_assert_int_eq(plan_parse_json(json, strlen(json), NULL, &doc, &err), 0);
        ck_assert_str_eq(json_string_value(json_object_get(doc, "ID")), "x");
        ck_assert_int_eq(
                plan_parse_file(TEST_DATA_DIR "/files/plan-layout.json", NULL, &file, &err), 0);
        ck_assert_ptr_nonnull(file);
        ck_assert_str_eq(yaml_lazy_error(), "");
}
END_TEST

/* The loader itself (util/lazylib.h), on libc: a symbol the library
 * lacks fails the load with the library's and the symbol's names, and
 * every later call too; threads that load at once all get the table. */
static const char *const libc_missing[] = {"strlen", "no_such_symbol_for_a_test"};
static void *libc_missing_slots[2];
static LazyLib libc_missing_lib = LAZYLIB_INIT("libc.so.6", libc_missing, libc_missing_slots, 2);

START_TEST(test_lazylib_missing_symbol)
{
        ck_assert_int_eq(lazylib_load(&libc_missing_lib), -1);
        ck_assert_str_eq(lazylib_error(&libc_missing_lib),
                         "libc.so.6: no symbol no_such_symbol_for_a_test");
        ck_assert_int_eq(lazylib_load(&libc_missing_lib), -1);
        ck_assert_str_eq(lazylib_error(&libc_missing_lib),
                         "libc.so.6: no symbol no_such_symbol_for_a_test");
}
END_TEST

static const char *const libc_found[] = {"strlen", "strcmp"};
static void *libc_found_slots[2];
static LazyLib libc_found_lib = LAZYLIB_INIT("libc.so.6", libc_found, libc_found_slots, 2);

static void *load_and_call(void *unused)
{
        size_t (*len)(const char *);

        if (lazylib_load(&libc_found_lib) != 0)
                return NULL;
        len = (size_t(*)(const char *))libc_found_slots[0];
        return len("four") == 4 ? libc_found_slots[1] : NULL;
}

START_TEST(test_lazylib_threads)
{
        pthread_t t[8];
        void *got;

        for (size_t i = 0; i < ELEMENTSOF(t); i++)
                ck_assert_int_eq(pthread_create(&t[i], NULL, load_and_call, NULL), 0);
        for (size_t i = 0; i < ELEMENTSOF(t); i++) {
                ck_assert_int_eq(pthread_join(t[i], &got), 0);
                ck_assert_ptr_nonnull(got);
                ck_assert_ptr_eq(got, libc_found_slots[1]);
        }
        ck_assert_int_eq(((int (*)(const char *, const char *))got)("a", "b"), strcmp("a", "b"));
        ck_assert_str_eq(lazylib_error(&libc_found_lib), "");
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_test(tc, test_lazylib_missing_symbol);
        tcase_add_test(tc, test_lazylib_threads);
        tcase_add_test(tc, test_plan_json_without_yaml);
        tcase_add_test(tc, test_plan_yaml_is_error);
}

int main(void)
{
        return check_main_one("yaml-lazy", "yaml-lazy", setup, teardown, 30, add_tests);
}
