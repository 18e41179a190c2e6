/* Tests for exec-yaml: the PyYAML text of Puppet's default.yaml. The cases
 * and their expected text come from PyYAML itself
 * (tests/data/exec/gen-yaml-cases.py); a few are spelled out here too, so
 * that the rules stay readable. */
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec-internal.h"
#include "test-lib.h"

static json_t *cases;

static char *dump(const json_t *v, int *ret_r)
{
        StrBuf b = STRBUF_INIT;
        char *s = NULL;

        *ret_r = exec_yaml_dump(v, &b);
        if (*ret_r >= 0)
                ck_assert_int_eq(strbuf_steal(&b, &s), 0);
        strbuf_free(&b);
        return s;
}

static void check_text(const char *json, const char *expected)
{
        json_error_t e;
        json_t *v = json_loads(json, JSON_ALLOW_NUL, &e);
        int r;
        char *s;

        ck_assert_msg(v, "bad test JSON %s: %s", json, e.text);
        s = dump(v, &r);
        ck_assert_int_eq(r, 0);
        ck_assert_str_eq(s, expected);
        free(s);
        json_decref(v);
}

START_TEST(test_yaml_puppet_attributes)
{
        check_text("{\"module::att2\": \"value2\", \"module::att1\": \"value1\"}",
                   "module::att1: value1\nmodule::att2: value2\n");
        check_text("{\"m::port\": 8080, \"m::on\": true, \"m::off\": false, \"m::x\": null}",
                   "m::off: false\nm::on: true\nm::port: 8080\nm::x: null\n");
        /* Sequences inside a mapping are not indented; empty ones are flow. */
        check_text("{\"m::l\": [\"a\", [1, 2], {\"k\": \"v\", \"j\": []}], \"m::e\": {}}",
                   "m::e: {}\nm::l:\n- a\n- - 1\n  - 2\n- j: []\n  k: v\n");
        check_text("{}", "{}\n");
}
END_TEST

START_TEST(test_yaml_scalar_styles)
{
        /* Text that would read back as something else is quoted. */
        check_text("{\"a\": \"yes\", \"b\": \"1.0\", \"c\": \"\", \"d\": \"~\"}",
                   "a: 'yes'\nb: '1.0'\nc: ''\nd: '~'\n");
        check_text("{\"a\": \"%{env}\", \"b\": \"it's\", \"c\": \" x\"}",
                   "a: '%{env}'\nb: it's\nc: ' x'\n");
        /* Line breaks: single quotes, each break doubled. */
        check_text("{\"a\": \"line1\\nline2\"}", "a: 'line1\n\n  line2'\n");
        /* Outside printable ASCII: double quotes and escapes. */
        check_text("{\"a\": \"\\u00e9\\t\\u0000\"}", "a: \"\\xE9\\t\\0\"\n");
        check_text("{\"a\": 1e20, \"b\": 1.5}", "a: 1.0e+20\nb: 1.5\n");
}
END_TEST

START_TEST(test_yaml_refuses)
{
        json_t *v = json_array();
        json_t *deep = json_object();
        json_t *cur = deep;
        int r;

        ck_assert_ptr_null(dump(v, &r));
        ck_assert_int_eq(r, -EINVAL);
        for (int i = 0; i < 1100; i++) {
                json_t *next = json_object();
                json_object_set_new(cur, "k", next);
                cur = next;
        }
        ck_assert_ptr_null(dump(deep, &r));
        ck_assert_int_eq(r, -EINVAL);
        json_decref(v);
        json_decref(deep);
}
END_TEST

/* Every case of the fixture, each a [value, text] pair. */
START_TEST(test_yaml_pyyaml_cases)
{
        json_t *c = json_array_get(cases, (size_t)_i);
        int r;
        char *s = dump(json_array_get(c, 0), &r);

        ck_assert_int_eq(r, 0);
        ck_assert_msg(streq(s, json_string_value(json_array_get(c, 1))),
                      "case %d:\nexpected:\n%s\ngot:\n%s", _i,
                      json_string_value(json_array_get(c, 1)), s);
        free(s);
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_test(tc, test_yaml_puppet_attributes);
        tcase_add_test(tc, test_yaml_scalar_styles);
        tcase_add_test(tc, test_yaml_refuses);
        tcase_add_loop_test(tc, test_yaml_pyyaml_cases, 0, (int)json_array_size(cases));
}

int main(void)
{
        json_error_t e;
        json_t *doc = json_load_file(TEST_DATA_DIR "/exec/yaml-cases.json", JSON_ALLOW_NUL, &e);
        int ret;

        if (!doc) {
                fprintf(stderr, "yaml-cases.json: %s (line %d)\n", e.text, e.line);
                return EXIT_FAILURE;
        }
        cases = json_object_get(doc, "cases");
        if (json_array_size(cases) < 100) {
                fprintf(stderr, "yaml-cases.json has too few cases\n");
                return EXIT_FAILURE;
        }
        ret = check_main_one("exec-yaml", "core", NULL, NULL, 60, add_tests);
        json_decref(doc);
        return ret;
}
