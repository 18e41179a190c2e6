/* Tests for util/pyjson: the text must be what CPython 3.11's json.dumps and
 * repr(float) write. Every expected string below was produced by python3. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/pyjson.h"
#include "util/utf8.h"
#include "test-lib.h"

static const struct {
        double value;
        const char *repr;
} float_cases[] = {
        {0.1, "0.1"},
        {1.0, "1.0"},
        {-0.0, "-0.0"},
        {0.0, "0.0"},
        {1e16, "1e+16"},
        {1e15, "1000000000000000.0"},
        {123456789.123, "123456789.123"},
        {1e-5, "1e-05"},
        {0.0001, "0.0001"},
        {1.5e-7, "1.5e-07"},
        {3.141592653589793, "3.141592653589793"},
        {1e300, "1e+300"},
        {2.5e+22, "2.5e+22"},
        {1.0 / 3.0, "0.3333333333333333"},
        {100.0, "100.0"},
        {5e-324, "5e-324"},
        {1.7976931348623157e308, "1.7976931348623157e+308"},
        {12345678901234567.0, "1.2345678901234568e+16"},
        {0.5, "0.5"},
        {123.456e-10, "1.23456e-08"},
        {-2.75, "-2.75"},
};

START_TEST(test_float_repr)
{
        char buf[32];

        pyfloat_repr(float_cases[_i].value, buf);
        ck_assert_str_eq(buf, float_cases[_i].repr);
}
END_TEST

START_TEST(test_float_special)
{
        char buf[32];

        pyfloat_repr(INFINITY, buf);
        ck_assert_str_eq(buf, "inf");
        pyfloat_repr(-INFINITY, buf);
        ck_assert_str_eq(buf, "-inf");
        pyfloat_repr(NAN, buf);
        ck_assert_str_eq(buf, "nan");
        pyjson_float(INFINITY, buf);
        ck_assert_str_eq(buf, "Infinity");
        pyjson_float(-INFINITY, buf);
        ck_assert_str_eq(buf, "-Infinity");
        pyjson_float(NAN, buf);
        ck_assert_str_eq(buf, "NaN");
}
END_TEST

static char *dumps_with(const char *json_text, PyJsonOptions opt)
{
        json_error_t err;
        json_t *v = json_loads(json_text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
        StrBuf b = STRBUF_INIT;
        char *out = NULL;

        ck_assert_msg(v, "bad test input: %s", err.text);
        ck_assert_int_eq(pyjson_dump(v, &opt, &b), 0);
        ck_assert_int_eq(strbuf_steal(&b, &out), 0);
        json_decref(v);
        return out;
}

START_TEST(test_dumps_default)
{
        char *s = dumps_with(
                "{\"a\":[1,\"\\u00e9\\u2028\\ud83d\\ude00\\u007f\\u0000\\n\\t\\\"\\\\\"],"
                "\"b\":{},\"c\":[],\"d\":null,\"e\":true,\"f\":false,\"g\":1.0}",
                PYJSON_DEFAULTS);
        ck_assert_str_eq(
                s, "{\"a\": [1, \"\\u00e9\\u2028\\ud83d\\ude00\\u007f\\u0000\\n\\t\\\"\\\\\"], "
                   "\"b\": {}, \"c\": [], \"d\": null, \"e\": true, \"f\": false, "
                   "\"g\": 1.0}");
        free(s);
}
END_TEST

START_TEST(test_dumps_indent_sorted)
{
        PyJsonOptions opt = PYJSON_DEFAULTS;
        char *s;

        opt.indent = 2;
        s = dumps_with("{\"a\":[1,2,{\"b\":[]}],\"z\":{}}", opt);
        ck_assert_str_eq(s, "{\n  \"a\": [\n    1,\n    2,\n    {\n      \"b\": []\n    }\n  ],\n"
                            "  \"z\": {}\n}");
        free(s);

        opt = PYJSON_DEFAULTS;
        opt.sort_keys = true;
        s = dumps_with("{\"b\":1,\"a\":2}", opt);
        ck_assert_str_eq(s, "{\"a\": 2, \"b\": 1}");
        free(s);
}
END_TEST

START_TEST(test_quote_raw_utf8)
{
        StrBuf b = STRBUF_INIT;

        ck_assert_int_eq(pyjson_quote(&b, "\xc3\xa9\x7f\x01", 4, false), 0);
        ck_assert_str_eq(b.data, "\"\xc3\xa9\x7f\\u0001\"");
        strbuf_reset(&b);
        /* A lone continuation byte is not text. */
        ck_assert_int_eq(pyjson_quote(&b, "a\x80", 2, true), -EILSEQ);
        strbuf_free(&b);
}
END_TEST

START_TEST(test_insertion_order)
{
        json_t *o = json_object();
        char *s = NULL;

        json_object_set_new(o, "z", json_integer(1));
        json_object_set_new(o, "a", json_integer(2));
        json_object_set_new(o, "m", json_integer(3));
        /* Replacing a value keeps its place, as in a Python dict. */
        json_object_set_new(o, "z", json_integer(4));
        ck_assert_int_eq(pyjson_dumps(o, &s), 0);
        ck_assert_str_eq(s, "{\"z\": 4, \"a\": 2, \"m\": 3}");
        free(s);
        json_decref(o);
}
END_TEST

START_TEST(test_buffer_limit)
{
        StrBuf b = STRBUF_INIT;
        json_t *v = json_string("0123456789");
        PyJsonOptions opt = PYJSON_DEFAULTS;

        b.limit = 8;
        ck_assert_int_eq(pyjson_dump(v, &opt, &b), -E2BIG);
        strbuf_free(&b);
        json_decref(v);
}
END_TEST

/* Integers beyond 64 bits: read exactly (json.loads), written back as
 * json.dumps writes them, errors where jansson would put them. */
START_TEST(test_bigint_round_trip)
{
        static const char *const texts[] = {
                "[9223372036854775807, -9223372036854775808, 9223372036854775808, "
                "-9223372036854775809, 18446744073709551616]",
                "{\"a\": {\"b\": [123456789012345678901234567890, "
                "\"123456789012345678901234567890\", "
                "1.5e+30]}, \"c\": -99999999999999999999999}",
                "123456789012345678901234567890",
                "[\"12345678901234567890123 \\\" 99999999999999999999\", 99999999999999999999]",
        };

        for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
                json_error_t err;
                json_t *doc = pyjson_loadb(texts[i], strlen(texts[i]), JSON_DECODE_ANY, &err);
                char *out = NULL;

                ck_assert_msg(doc != NULL, "%s: %s", texts[i], err.text);
                ck_assert_int_eq(pyjson_dumps(doc, &out), 0);
                ck_assert_str_eq(out, texts[i]);
                free(out);
                json_decref(doc);
        }
        {
                json_t *doc = pyjson_loadb("[18446744073709551616]", 22, 0, NULL);
                ck_assert_str_eq(pyjson_bigint_digits(json_array_get(doc, 0)),
                                 "18446744073709551616");
                json_t *text = json_string("x");
                ck_assert_ptr_null(pyjson_bigint_digits(text));
                json_decref(text);
                json_decref(doc);
        }
}
END_TEST

START_TEST(test_bigint_errors)
{
        static const struct {
                const char *text;
                size_t flags;
                const char *error;
                int line, column;
        } cases[] = {
                /* A syntax error is the text's own, at its own place. */
                {"[12345678901234567890123,]", 0, "unexpected token near ']'", 1, 26},
                {"{12345678901234567890123: 1}", 0, "string or '}' expected near '0'", 1, 2},
                {"[1e999]", 0, "real number overflow near '1e999'", 1, 6},
                {"[18446744073709551616, \"\\u0000\"]", 0,
                 "\\u0000 is not allowed without JSON_ALLOW_NUL near '\"\\u0000\"'", 1, 31},
                {"[18446744073709551616, \"\\u0000\"]", JSON_ALLOW_NUL,
                 "integers beyond 64 bits cannot be read from a text that also holds \\u0000 "
                 "escapes",
                 1, 2},
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                json_error_t err;
                json_t *doc =
                        pyjson_loadb(cases[i].text, strlen(cases[i].text), cases[i].flags, &err);
                ck_assert_ptr_null(doc);
                ck_assert_str_eq(err.text, cases[i].error);
                ck_assert_int_eq(err.line, cases[i].line);
                ck_assert_int_eq(err.column, cases[i].column);
        }
        {
                /* CPython's limit: 4300 digits are read, 4301 are not. */
                char text[4400];
                json_error_t err;
                json_t *doc;

                memset(text, '7', 4300);
                text[4300] = '\0';
                doc = pyjson_loadb(text, 4300, JSON_DECODE_ANY, &err);
                ck_assert_ptr_nonnull(doc);
                ck_assert_uint_eq(strlen(pyjson_bigint_digits(doc)), 4300);
                json_decref(doc);
                text[4300] = '7';
                text[4301] = '\0';
                ck_assert_ptr_null(pyjson_loadb(text, 4301, JSON_DECODE_ANY, &err));
                ck_assert_str_eq(err.text, "Exceeds the limit (4300 digits) for integer string "
                                           "conversion: value has 4301 digits");
                ck_assert_int_eq(json_error_code(&err), json_error_numeric_overflow);
                ck_assert_int_eq(err.position, 4301);
        }
}
END_TEST

START_TEST(test_utf8)
{
        uint32_t cp;
        size_t off = 0;
        char out[4];

        ck_assert_int_eq(utf8_decode("\xf0\x9f\x98\x80", 4, &cp), 4);
        ck_assert_uint_eq(cp, 0x1f600);
        ck_assert_int_eq(utf8_decode("\xc0\x80", 2, &cp), -1);     /* overlong */
        ck_assert_int_eq(utf8_decode("\xed\xa0\x80", 3, &cp), -1); /* surrogate */
        ck_assert_int_eq(utf8_decode("\xf4\x90\x80\x80", 4, &cp), -1);
        ck_assert_int_eq(utf8_decode("\xe2\x82", 2, &cp), -1); /* truncated */
        ck_assert(!utf8_valid("ab\xff", 3, &off));
        ck_assert_uint_eq(off, 2);
        ck_assert(utf8_valid("h\xc3\xa9llo", 6, NULL));
        ck_assert_uint_eq(utf8_length("h\xc3\xa9llo", 6), 5);
        ck_assert_int_eq(utf8_encode(0x20ac, out), 3);
        ck_assert(memcmp(out, "\xe2\x82\xac", 3) == 0);
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_loop_test(tc, test_float_repr, 0,
                            (int)(sizeof(float_cases) / sizeof(float_cases[0])));
        tcase_add_test(tc, test_float_special);
        tcase_add_test(tc, test_dumps_default);
        tcase_add_test(tc, test_dumps_indent_sorted);
        tcase_add_test(tc, test_quote_raw_utf8);
        tcase_add_test(tc, test_insertion_order);
        tcase_add_test(tc, test_buffer_limit);
        tcase_add_test(tc, test_utf8);
        tcase_add_test(tc, test_bigint_round_trip);
        tcase_add_test(tc, test_bigint_errors);
}

int main(void)
{
        return check_main_one("pyjson", "core", NULL, NULL, 60, add_tests);
}
