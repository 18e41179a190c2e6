/* util/gmp-lazy: when libgmp cannot be loaded, the first integer beyond 64
 * bits fails with a clear error (MemoryError in a Body, a plan error in the
 * parser) and nothing crashes; integers within 64 bits never need GMP.
 *
 * Every test makes the library name unresolvable before the first load,
 * so the whole program (forked or not, as under valgrind) runs without
 * GMP. That GMP works when it loads is what test-body, test-body-values
 * and test-plan check. */
#include <check.h>
#include <jansson.h>
#include <string.h>

#include "body/body.h"
#include "test-lib.h"
#include "plan/plan.h"
#include "util/gmp-lazy.h"
#include "util/macro.h"
#include "util/pyjson.h"

#define MISSING "libgmp-missing-for-test.so.10"

static void setup(void)
{
        gmp_lazy_lib.library = MISSING;
}

static void teardown(void)
{
}

static void run(const char *body, BodyOutcome *o)
{
        BodyHost host = {0};

        ck_assert_int_eq(body_run(body, strlen(body), NULL, NULL, 0, &host, NULL, o), 0);
}

START_TEST(test_load_fails)
{
        ck_assert_int_eq(gmp_lazy_load(), -1);
        ck_assert_ptr_nonnull(strstr(gmp_lazy_error(), MISSING));
        /* Asking again gives the same answer. */
        ck_assert_int_eq(gmp_lazy_load(), -1);
}
END_TEST

/* Each way of making the first big integer raises MemoryError with the
 * loader's reason. */
START_TEST(test_body_big_is_memory_error)
{
        static const char *const bodies[] = {
                "return 2 ** 64",
                "return 9223372036854775807 + 1",
                "return -9223372036854775807 * 3",
                "return 1 << 64",
                "return int('1' * 30)",
                "return 18446744073709551616",
                "return int(1e20)",
                "return round(9223372036854775807, -1)",
                "return pow(3, -1, 7)",
                "x = 2 ** 62\nreturn x * x",
                "return len(range(-9223372036854775808, 9223372036854775807))",
        };

        for (size_t i = 0; i < ELEMENTSOF(bodies); i++) {
                BodyOutcome o;
                _cleanup_free_ char *want = NULL;

                run(bodies[i], &o);
                ck_assert_msg(o.error_code == 1, "%s: code %d", bodies[i], o.error_code);
                ck_assert_str_eq(o.exc_type, "MemoryError");
                ck_assert_int_ne(asprintf(&want,
                                          "integers beyond 64 bits need GMP, which cannot be "
                                          "loaded: %s",
                                          gmp_lazy_error()),
                                 -1);
                ck_assert_str_eq(o.message, want);
                ck_assert_ptr_nonnull(strstr(o.message, MISSING));
                body_outcome_clear(&o);
        }
}
END_TEST

/* Integers within 64 bits, and floats beyond them, need no GMP. */
START_TEST(test_body_small_without_gmp)
{
        static const struct {
                const char *body, *json;
        } cases[] = {
                {"return 2 ** 62 + (2 ** 62 - 1)", "9223372036854775807"},
                {"return ~9223372036854775807", "-9223372036854775808"},
                {"return int('-9223372036854775808')", "-9223372036854775808"},
                {"return [round(1234567, -3), round(-2500, -3), round(3500, -3), round(5, -19), "
                 "round(-5 * 10 ** 18, -19), round(7, -40)]",
                 "[1235000, -2000, 4000, 0, 0, 0]"},
                {"return round(-9223372036854775807, -18)", "-9000000000000000000"},
                {"return hex(255) + oct(8) + bin(5) + str(-7) + '%x' % 255 + format(10, 'b')",
                 "\"0xff0o100b101-7ff1010\""},
                {"d = {1e20: 'a', 2.0 ** 64: 'b'}\nreturn [d[1e20], d[18446744073709551616.0], "
                 "1e20 == 1e20, int(1e18)]",
                 "[\"a\", \"b\", true, 1000000000000000000]"},
                {"return pow(3, 200, 7)", "2"},
                {"r = range(-4611686018427387904, 4611686018427387904, 2 ** 61)\n"
                 "return [r[1], r[-1], 5 in r, r == range(-2 ** 62, 2 ** 62 - 1, 2 ** 61), "
                 "list(reversed(range(3)))]",
                 "[-2305843009213693952, 2305843009213693952, false, true, [2, 1, 0]]"},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                BodyOutcome o;
                _cleanup_free_ char *text = NULL;

                run(cases[i].body, &o);
                ck_assert_msg(o.error_code == 0, "%s: %s %s", cases[i].body,
                              o.exc_type ? o.exc_type : "", o.message ? o.message : "");
                ck_assert_int_eq(pyjson_dumps(o.value, &text), 0);
                ck_assert_str_eq(text, cases[i].json);
                body_outcome_clear(&o);
        }
        /* GMP was never needed, so never tried: no reason recorded. */
        ck_assert_str_eq(gmp_lazy_error(), "");
}
END_TEST

START_TEST(test_plan_yaml_big_is_error)
{
        static const char yaml[] = "FormatVersion: 2.1.0\n"
                                   "ID: x\n"
                                   "Parameters:\n"
                                   "  n: 18446744073709551616\n";
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        _cleanup_json_ json_t *doc = NULL;
        _cleanup_free_ char *want = NULL;

        ck_assert_int_ne(plan_parse_yaml(yaml, strlen(yaml), NULL, &doc, &err), 0);
        ck_assert_ptr_null(doc);
        ck_assert_ptr_nonnull(err.message);
        ck_assert_int_ne(asprintf(&want,
                                  "Integer beyond 64 bits needs GMP, which cannot be loaded: %s "
                                  "(line 4, column 6)",
                                  gmp_lazy_error()),
                         -1);
        ck_assert_str_eq(err.message, want);
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_test(tc, test_body_small_without_gmp);
        tcase_add_test(tc, test_load_fails);
        tcase_add_test(tc, test_body_big_is_memory_error);
        tcase_add_test(tc, test_plan_yaml_big_is_error);
}

int main(void)
{
        return check_main_one("gmp-lazy", "gmp-lazy", setup, teardown, 30, add_tests);
}
