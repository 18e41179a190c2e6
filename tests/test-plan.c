/* Tests for plan parsing (agent/plan/plan.c, plan-json.c, plan-yaml.c,
 * plan-scalar.c): YAML and JSON give the same documents, scalars resolve as
 * PyYAML's safe_load resolves them, every refusal has its message and
 * position, and no input crashes, hangs or leaks.
 *
 * The expected values of the scalar table and the JSON twins of the
 * tests/data/plans/pair-*.yaml fixtures were produced by PyYAML 6.0 (with
 * timestamps kept as strings, our documented rule) and json.dumps. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test-lib.h"
#include "plan/plan.h"
#include "util/fileio.h"
#include "util/pyjson.h"
#include "util/strbuf.h"

#define PLANS     TEST_DATA_DIR "/plans/"
#define REFERENCE TEST_DATA_DIR "/../../plans/reference/"

typedef int (*ParseFn)(const char *, size_t, const PlanLimits *, json_t **, PlanError *);

static char *dumps(const json_t *v)
{
        char *s = NULL;

        ck_assert_int_eq(pyjson_dumps(v, &s), 0);
        return s;
}

static json_t *parse_file_ok(const char *path)
{
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        json_t *doc = NULL;
        int r = plan_parse_file(path, NULL, &doc, &err);

        ck_assert_msg(r == 0, "%s: %d %s", path, r, err.message ? err.message : "");
        return doc;
}

/* YAML and JSON fixtures give the same document, key order included:
 * json.dumps() of both is the same text. */
START_TEST(test_pairs)
{
        static const char *const names[] = {"application", "scalars", "keys", "nested"};
        char ypath[512], jpath[512];

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                snprintf(ypath, sizeof(ypath), PLANS "pair-%s.yaml", names[i]);
                snprintf(jpath, sizeof(jpath), PLANS "pair-%s.json", names[i]);
                _cleanup_json_ json_t *y = parse_file_ok(ypath);
                _cleanup_json_ json_t *j = parse_file_ok(jpath);
                _cleanup_free_ char *ys = dumps(y), *js = dumps(j);

                ck_assert(json_equal(y, j));
                ck_assert_str_eq(ys, js);
        }
}
END_TEST

/* Integers beyond 64 bits are kept exactly, in JSON and in YAML (the
 * expected texts are json.dumps of json.loads and of PyYAML's safe_load). */
START_TEST(test_big_integers)
{
        static const struct {
                bool yaml;
                const char *text, *dumps;
        } cases[] = {
                {false,
                 "{\"a\": 123456789012345678901234567890, \"b\": [-9223372036854775809, "
                 "9223372036854775808, 9223372036854775807, -9223372036854775808], \"c\": {\"d\": "
                 "18446744073709551616}, \"e\": \"123456789012345678901234567890\", \"f\": 1e30, "
                 "\"g\": -100000000000000000000}",
                 "{\"a\": 123456789012345678901234567890, \"b\": [-9223372036854775809, "
                 "9223372036854775808, 9223372036854775807, -9223372036854775808], \"c\": {\"d\": "
                 "18446744073709551616}, \"e\": \"123456789012345678901234567890\", \"f\": 1e+30, "
                 "\"g\": -100000000000000000000}"},
                {true,
                 "a: 9223372036854775808\nb: -9223372036854775809\nc: 0xffffffffffffffffff\nd: "
                 "0b10000000000000000000000000000000000000000000000000000000000000000000000\ne: "
                 "1_000_000_000_000_000_000_000\nf: 190:20:30:00:00:00:00:00:00:00:00:00\ng: "
                 "0777777777777777777777777\nh: [+99999999999999999999]\n",
                 "{\"a\": 9223372036854775808, \"b\": -9223372036854775809, \"c\": "
                 "4722366482869645213695, \"d\": 1180591620717411303424, \"e\": "
                 "1000000000000000000000, \"f\": 6905539630080000000000, \"g\": "
                 "4722366482869645213695, \"h\": [99999999999999999999]}"},
                /* Keys, which json.dumps writes as their decimal text. */
                {true,
                 "9223372036854775808: a\nm: {-0x1ffffffffffffffffff: b, 7: c, "
                 "0b1_0000000000000000000000000000000000000000000000000000000000000000: d}\n",
                 "{\"9223372036854775808\": \"a\", \"m\": {\"-9444732965739290427391\": \"b\", "
                 "\"7\": \"c\", \"18446744073709551616\": \"d\"}}"},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
                _cleanup_json_ json_t *doc = NULL;
                _cleanup_free_ char *text = NULL;
                ParseFn fn = cases[i].yaml ? plan_parse_yaml : plan_parse_json;

                ck_assert_msg(fn(cases[i].text, strlen(cases[i].text), NULL, &doc, &err) == 0,
                              "case %zu: %s", i, err.message ? err.message : "");
                text = dumps(doc);
                ck_assert_str_eq(text, cases[i].dumps);
        }
}
END_TEST

/* The hand-written YAML of the spec 3.8 plan is, byte for byte, the wire
 * JSON the engine sends. */
START_TEST(test_yaml_matches_wire)
{
        _cleanup_json_ json_t *y = parse_file_ok(PLANS "pair-application.yaml");
        _cleanup_free_ char *wire = NULL, *text = dumps(y);
        size_t len;

        ck_assert_int_eq(file_read_all(REFERENCE "application-wire.json", 1 << 20, &wire, &len), 0);
        ck_assert_str_eq(text, wire);
}
END_TEST

/* `k: <text>` and json.dumps(yaml.safe_load(...)['k']); NULL: PyYAML
 * refuses the text too. */
static const struct {
        const char *yaml;
        const char *json;
} scalars[] = {
        {"null", "null"},
        {"Null", "null"},
        {"NULL", "null"},
        {"nUll", "\"nUll\""},
        {"~", "null"},
        {"", "null"},
        {"true", "true"},
        {"True", "true"},
        {"TRUE", "true"},
        {"tRue", "\"tRue\""},
        {"yes", "true"},
        {"Yes", "true"},
        {"YES", "true"},
        {"y", "\"y\""},
        {"n", "\"n\""},
        {"on", "true"},
        {"ON", "true"},
        {"off", "false"},
        {"no", "false"},
        {"NO", "false"},
        {"0", "0"},
        {"-0", "0"},
        {"+5", "5"},
        {"1_000", "1000"},
        {"012", "10"},
        {"08", "\"08\""},
        {"0o17", "\"0o17\""},
        {"0x1F", "31"},
        {"0X1F", "\"0X1F\""},
        {"0x_1f", "31"},
        {"0b101", "5"},
        {"0b", "\"0b\""},
        {"-0b11", "-3"},
        {"1:30", "90"},
        {"-1:30", "-90"},
        {"1:60", "\"1:60\""},
        {"1:3:5", "3785"},
        {"190:20:30", "685230"},
        {"1.5", "1.5"},
        {"1.", "1.0"},
        {"1e3", "\"1e3\""},
        {"1.0e3", "\"1.0e3\""},
        {"1.0e+3", "1000.0"},
        {"1.0E-3", "0.001"},
        {".5", "0.5"},
        {"-.5", "\"-.5\""},
        {"+.5", "\"+.5\""},
        {"1_0.5", "10.5"},
        {"1:30.5", "90.5"},
        {"2001-12-14", "\"2001-12-14\""},
        {"2001-12-14 21:59:43.10 -5", "\"2001-12-14 21:59:43.10 -5\""},
        {"0.", "0.0"},
        {"-0.0", "-0.0"},
        {"0x", "\"0x\""},
        {"+0x10", "16"},
        {"9223372036854775807", "9223372036854775807"},
        {"-9223372036854775808", "-9223372036854775808"},
        {"1__0", "10"},
        {"_1", "\"_1\""},
        {"1_", "1"},
        {".e+1", "\".e+1\""},
        {"1.e+1", "10.0"},
        {"1.5e5", "\"1.5e5\""},
        {"0_", "0"},
        {"'quoted 1'", "\"quoted 1\""},
        {"\"2\"", "\"2\""},
        {"!!str 5", "\"5\""},
        {"!!int '0x10'", "16"},
        {"!!float 1e3", "1000.0"},
        {"!!float '7'", "7.0"},
        {"!!bool 'TRUE'", "true"},
        {"!!null abc", "null"},
        {"! 12", "12"},
        {"!!str", "\"\""},
        {"|\n  block 5\n", "\"block 5\\n\""},
        {">-\n  folded\n  text\n", "\"folded text\""},
        {"0b1_0", "2"},
        {"0x_ff", "255"},
        {"-0x10", "-16"},
        {"+0b1", "1"},
        {"0_17", "15"},
        {"-012", "-10"},
        {"1:0", "60"},
        {"1:00:00", "3600"},
        {"-1:30.25", "-90.25"},
        {"3.14159265358979323846", "3.141592653589793"},
        {"1_000.000_1", "1000.0001"},
        {"0.1e-3", "0.0001"},
        {"1.7976931348623157e+308", "1.7976931348623157e+308"},
        {"1.0e-400", "0.0"},
        {"yes please", "\"yes please\""},
        {"'a: b'", "\"a: b\""},
        {"a: b", NULL},
        {"~x", "\"~x\""},
        {"0b2", "\"0b2\""},
        {"-", NULL},
        {"+", "\"+\""},
        {".", "\".\""},
        {"..", "\"..\""},
        {"1.2.3", "\"1.2.3\""},
        {"1:2.3", "62.3"},
        {"1:2:3.5", "3723.5"},
        /* PyYAML refuses a plain "=" value (the !!value tag has no
         * constructor); we take it as a string. */
        {"=", "\"=\""},
        {"\"\\u00e9\\x41\\t\"", "\"\\u00e9A\\t\""},
};

START_TEST(test_scalar)
{
        _cleanup_strbuf_ StrBuf text = STRBUF_INIT;
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        _cleanup_json_ json_t *doc = NULL;
        _cleanup_free_ char *got = NULL;
        int r;

        ck_assert_int_eq(strbuf_printf(&text, "k: %s\n", scalars[_i].yaml), 0);
        r = plan_parse_yaml(text.data, text.len, NULL, &doc, &err);
        if (!scalars[_i].json) {
                ck_assert_int_eq(r, PLAN_INVALID);
                return;
        }
        ck_assert_msg(r == 0, "%s: %s", scalars[_i].yaml, err.message);
        got = dumps(json_object_get(doc, "k"));
        ck_assert_str_eq(got, scalars[_i].json);
}
END_TEST

static const struct {
        bool yaml;
        const char *text;
        size_t len; /* 0: strlen(text) */
        const char *message;
        int line, column;
} errors[] = {
        {false, "{\"a\": 1,", 0,
         "Plan is not valid JSON: string or '}' expected near end of file (line 1, column 8)", 1,
         8},
        {false, "{\n  \"x\": 1,\n  \"Body\": 1, \"Body\": 2}", 0,
         "Duplicate key 'Body' (line 3, column 14)", 3, 14},
        {false, "{\"a\\\"b\": 1, \"a\\\"b\": 2}", 0, "Duplicate key 'a\"b' (line 1, column 13)", 1,
         13},
        {false,
         "{\"abcdefghijklmnopqrstuvwxyz0123456789\": 1, \"abcdefghijklmnopqrstuvwxyz0123456789\": "
         "2}",
         0, "Duplicate key 'abcdefghijklmnopqrstuvwxyz0123456789' (line 1, column 45)", 1, 45},
        {false, "{\"a\": {\"k\": 1, \"k\": 2}}", 0, "Duplicate key 'k' (line 1, column 16)", 1, 16},
        {false, "{\"a\": \"x\\u0000y\"}", 0,
         "Plan contains an escaped NUL character, which is not supported (line 1, column 16)", 1,
         16},
        {false, "{\"a\\u0000\": 1}", 0,
         "Plan contains an escaped NUL character, which is not supported (line 1, column 10)", 1,
         10},
        {false, "{\"a\": 1}\0", 9, "Plan contains a NUL byte at byte offset 8 (line 1, column 9)",
         1, 9},
        {false, "{\"a\": \"\xc3\x28\"}", 0,
         "Plan is not valid UTF-8 at byte offset 7 (line 1, column 8)", 1, 8},
        {false, "{\n\"\xc3\xa9\": \"\xed\xa0\x80\"}", 0,
         "Plan is not valid UTF-8 at byte offset 9 (line 2, column 7)", 2, 7},
        {false, "[1, 2]", 0, "Plan is not a JSON object (got an array)", 0, 0},
        {false, "\"plan\"", 0, "Plan is not a JSON object (got a string)", 0, 0},
        {false, "42", 0, "Plan is not a JSON object (got a number)", 0, 0},
        {false, "true", 0, "Plan is not a JSON object (got a boolean)", 0, 0},
        {false, "null", 0, "Plan is not a JSON object (got null)", 0, 0},
        {false, "", 0, "Plan is empty", 0, 0},
        {false, " \n\t\r ", 0, "Plan is empty", 0, 0},
        {false, "{} x", 0,
         "Plan is not valid JSON: end of file expected near 'x' (line 1, column 4)", 1, 4},
        {false, "{\"a\": \"\\ud800\"}", 0,
         "Plan is not valid JSON: invalid Unicode '\\uD800' near '\"\\ud800\"' (line 1, column 14)",
         1, 14},
        {false, "{\"a\": " DIGITS_4301 "}", 0,
         "Integer has more than 4300 digits: 1111111111111111111111111111111111111... (line 1, "
         "column 7)",
         1, 7},
        {false, "{\"a\":\n [-" DIGITS_4301 "]}", 0,
         "Integer has more than 4300 digits: -111111111111111111111111111111111111... (line 2, "
         "column 3)",
         2, 3},
        {false, "{\"a\": 12345678901234567890123x}", 0,
         "Plan is not valid JSON: '}' expected near 'x' (line 1, column 30)", 1, 30},
        {false, "{12345678901234567890123: 1}", 0,
         "Plan is not valid JSON: string or '}' expected near '0' (line 1, column 2)", 1, 2},
        {false, "{\"a\": 1e999}", 0, "Number out of range: 1e999 (line 1, column 7)", 1, 7},
        {false, "{\"a\": NaN}", 0,
         "Plan is not valid JSON: invalid token near 'NaN' (line 1, column 9)", 1, 9},
        {false, "\xef\xbb\xbf{}", 0,
         "Plan is not valid JSON: unexpected UTF-8 byte order mark (line 1, column 1)", 1, 1},
        {false, "{\"a\": \"x\ty\"}", 0,
         "Plan is not valid JSON: control character 0x9 near '\"x' (line 1, column 8)", 1, 8},
        {false, "{'a': 1}", 0,
         "Plan is not valid JSON: string or '}' expected near ''' (line 1, column 2)", 1, 2},
        {false, "{\"\xc3\xa9\": \"\xc3\xbc\", x}", 0,
         "Plan is not valid JSON: string or '}' expected near 'x' (line 1, column 12)", 1, 12},

        {true, "a: 1\n b: 2\n", 0,
         "Plan is not valid YAML: mapping values are not allowed in this context (line 2, column "
         "3)",
         2, 3},
        {true, "a:\n\t- 1\n", 0,
         "Plan is not valid YAML: while scanning for the next token: found character that cannot "
         "start any token (line 2, column 1)",
         2, 1},
        {true, "\xc3\xbc: \"\xc3\xa9\"\nb: [1, 2\n", 0,
         "Plan is not valid YAML: while parsing a flow sequence: did not find expected ',' or ']' "
         "(line 3, column 1)",
         3, 1},
        {true, "- a\n- b\n", 0, "Plan is not a YAML mapping (got a sequence) (line 1, column 1)", 1,
         1},
        {true, "just text\n", 0, "Plan is not a YAML mapping (got a string) (line 1, column 1)", 1,
         1},
        {true, "42\n", 0, "Plan is not a YAML mapping (got a number) (line 1, column 1)", 1, 1},
        {true, "~\n", 0, "Plan is not a YAML mapping (got null) (line 1, column 1)", 1, 1},
        {true, "yes\n", 0, "Plan is not a YAML mapping (got a boolean) (line 1, column 1)", 1, 1},
        {true, "---\n", 0, "Plan is not a YAML mapping (got null) (line 2, column 1)", 2, 1},
        {true, "# only a comment\n", 0, "Plan is empty", 0, 0},
        {true, "a: 1\n---\nb: 2\n", 0, "Plan has more than one YAML document (line 2, column 1)", 2,
         1},
        {true, "a: &x 1\nb: *x\n", 0,
         "Plan uses a YAML alias (*x), which is not supported (line 2, column 4)", 2, 4},
        {true, "base: &b {x: 1}\nm:\n  <<: *b\n", 0,
         "Plan uses a YAML merge key (<<), which is not supported (line 3, column 3)", 3, 3},
        {true, "a: 1\nb: 2\na: 3\n", 0, "Duplicate key 'a' (line 3, column 1)", 3, 1},
        {true, "1: a\n\"1\": b\n", 0, "Duplicate key '1' (line 2, column 1)", 2, 1},
        {true, "a:\n  b: 1\n  b: 2\n", 0, "Duplicate key 'b' (line 3, column 3)", 3, 3},
        {true, "? [a, b]\n: c\n", 0,
         "Plan uses a sequence as a mapping key, which is not supported (line 1, column 3)", 1, 3},
        {true, "? {a: b}\n: c\n", 0,
         "Plan uses a mapping as a mapping key, which is not supported (line 1, column 3)", 1, 3},
        {true, "a: !foo bar\n", 0,
         "Plan uses the YAML tag !foo, which is not supported (line 1, column 4)", 1, 4},
        {true, "a: !!timestamp 2001-12-14\n", 0,
         "Plan uses the YAML tag !!timestamp, which is not supported (line 1, column 4)", 1, 4},
        {true, "a: !!binary aGVsbG8=\n", 0,
         "Plan uses the YAML tag !!binary, which is not supported (line 1, column 4)", 1, 4},
        {true, "a: !!set {x, y}\n", 0,
         "Plan uses the YAML tag !!set on a mapping, which is not supported (line 1, column 4)", 1,
         4},
        {true, "a: !!str {x: y}\n", 0,
         "Plan uses the YAML tag !!str on a mapping, which is not supported (line 1, column 4)", 1,
         4},
        {true, "a: !!map [x]\n", 0,
         "Plan uses the YAML tag !!map on a sequence, which is not supported (line 1, column 4)", 1,
         4},
        {true, "a: !!int abc\n", 0, "Plan has an invalid !!int value 'abc' (line 1, column 4)", 1,
         4},
        {true, "a: 0x_\n", 0, "Plan has an invalid !!int value '0x_' (line 1, column 4)", 1, 4},
        {true, "a: !!float abc\n", 0, "Plan has an invalid !!float value 'abc' (line 1, column 4)",
         1, 4},
        {true, "a: !!bool maybe\n", 0,
         "Plan has an invalid !!bool value 'maybe' (line 1, column 4)", 1, 4},
        {true, "a: 1\n? " DIGITS_4301 "\n: 1\n", 0,
         "Integer has more than 4300 digits: 1111111111111111111111111111111111111... (line 2, "
         "column 3)",
         2, 3},
        {true, "a: " DIGITS_4301 "\n", 0,
         "Integer has more than 4300 digits: 1111111111111111111111111111111111111... (line 1, "
         "column 4)",
         1, 4},
        {true, "a: .inf\n", 0,
         "Plan has a number that JSON cannot carry: '.inf' (line 1, column 4)", 1, 4},
        {true, "a: [1, .NaN]\n", 0,
         "Plan has a number that JSON cannot carry: '.NaN' (line 1, column 8)", 1, 8},
        {true, "a: \"x\\0y\"\n", 0,
         "Plan contains an escaped NUL character, which is not supported (line 1, column 4)", 1, 4},
        {true, "\"k\\x00\": 1\n", 0,
         "Plan contains an escaped NUL character, which is not supported (line 1, column 1)", 1, 1},
        {true, "a: b\x01\n", 0,
         "Plan is not valid YAML: control characters are not allowed (line 1, column 5)", 1, 5},
        {true, "a: b\n\xff\n", 0, "Plan is not valid UTF-8 at byte offset 5 (line 2, column 1)", 2,
         1},
        {true, "a: \"\\q\"\n", 0,
         "Plan is not valid YAML: while parsing a quoted scalar: found unknown escape character "
         "(line 1, column 5)",
         1, 5},
        {true, "a: \"\\ud800\"\n", 0,
         "Plan is not valid YAML: while parsing a quoted scalar: found invalid Unicode character "
         "escape code (line 1, column 7)",
         1, 7},
        {true, "a: b\n\0", 6, "Plan contains a NUL byte at byte offset 5 (line 2, column 1)", 2, 1},
};

START_TEST(test_errors)
{
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        json_t *doc = NULL;
        size_t len = errors[_i].len ? errors[_i].len : strlen(errors[_i].text);
        ParseFn fn = errors[_i].yaml ? plan_parse_yaml : plan_parse_json;

        ck_assert_int_eq(fn(errors[_i].text, len, NULL, &doc, &err), PLAN_INVALID);
        ck_assert_ptr_null(doc);
        ck_assert_int_eq(err.code, PLAN_CODE_EXCEPTION);
        ck_assert_str_eq(err.message, errors[_i].message);
        ck_assert_int_eq(err.line, errors[_i].line);
        ck_assert_int_eq(err.column, errors[_i].column);
        /* The verdict does not depend on having somewhere to put the why. */
        ck_assert_int_eq(fn(errors[_i].text, len, NULL, &doc, NULL), PLAN_INVALID);
}
END_TEST

static char *repeat(const char *head, const char *unit, size_t n, const char *tail)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        char *s;

        int r = strbuf_puts(&b, head);

        for (size_t i = 0; i < n; i++)
                r |= strbuf_puts(&b, unit);
        r |= strbuf_puts(&b, tail);
        r |= strbuf_steal(&b, &s);
        ck_assert_int_eq(r, 0);
        return s;
}

static void expect_ok(ParseFn fn, const char *s, const PlanLimits *lim)
{
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        json_t *doc = NULL;

        ck_assert_msg(fn(s, strlen(s), lim, &doc, &err) == 0, "%s", err.message);
        json_decref(doc);
}

static void expect_error(ParseFn fn, const char *s, const PlanLimits *lim, const char *message)
{
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        json_t *doc = NULL;

        ck_assert_int_eq(fn(s, strlen(s), lim, &doc, &err), PLAN_INVALID);
        ck_assert_ptr_null(doc);
        ck_assert_str_eq(err.message, message);
}

START_TEST(test_depth_limits)
{
        /* The object itself is level 1, so 63 brackets inside make 64. */
        _cleanup_free_ char *j64 = repeat("{\"a\":", "[", 63, "");
        _cleanup_free_ char *j65 = repeat("{\"a\":", "[", 64, "");
        _cleanup_free_ char *y64 = repeat("a: ", "[", 63, "");
        _cleanup_free_ char *y65 = repeat("a: ", "[", 64, "");
        _cleanup_free_ char *j64c = repeat(j64, "]", 63, "}");
        _cleanup_free_ char *j65c = repeat(j65, "]", 64, "}");
        _cleanup_free_ char *y64c = repeat(y64, "]", 63, "\n");
        _cleanup_free_ char *y65c = repeat(y65, "]", 64, "\n");
        _cleanup_free_ char *in_string = repeat("{\"a\": \"", "[{", 5000, "\"}");
        _cleanup_free_ char *deep = repeat("{\"a\":", "[", 3000, "");
        PlanLimits three = {.max_bytes = 1000, .max_depth = 3};
        PlanLimits huge = {.max_bytes = 1u << 24, .max_depth = 100000};

        expect_ok(plan_parse_json, j64c, NULL);
        expect_ok(plan_parse_yaml, y64c, NULL);
        expect_error(plan_parse_json, j65c, NULL,
                     "Plan is nested deeper than 64 levels (line 1, column 69)");
        expect_error(plan_parse_yaml, y65c, NULL,
                     "Plan is nested deeper than 64 levels (line 1, column 67)");

        expect_ok(plan_parse_json, "{\"a\": [[1]]}", &three);
        expect_error(plan_parse_json, "{\"a\": [[[1]]]}", &three,
                     "Plan is nested deeper than 3 levels (line 1, column 9)");
        expect_error(plan_parse_yaml, "a:\n  b:\n    c: [1]\n", &three,
                     "Plan is nested deeper than 3 levels (line 3, column 8)");

        /* Brackets inside strings do not count. */
        expect_ok(plan_parse_json, in_string, NULL);
        /* A limit above jansson's own is held at 2048. */
        expect_error(plan_parse_json, deep, &huge,
                     "Plan is nested deeper than 2048 levels (line 1, column 2053)");
}
END_TEST

START_TEST(test_size_limit)
{
        PlanLimits tiny = {.max_bytes = 10, .max_depth = 64};
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        json_t *doc = NULL;

        expect_ok(plan_parse_json, "{\"a\": 123}", &tiny);
        expect_error(plan_parse_json, "{\"a\": 1234}", &tiny, "Plan is larger than 10 bytes");
        expect_error(plan_parse_yaml, "a: 12345678", &tiny, "Plan is larger than 10 bytes");
        ck_assert_int_eq(plan_parse_yaml("a: 12345678", 11, &tiny, &doc, &err), PLAN_INVALID);
        ck_assert_int_eq(err.line, 0);
        ck_assert_int_eq(err.column, 0);
}
END_TEST

/* A megabyte of openers is refused at the limit, quickly and without
 * recursing a megabyte deep. */
START_TEST(test_megabyte_of_brackets)
{
        static const char *const units[] = {"[", "{", "{\"a\":", "- "};
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        json_t *doc = NULL;

        for (size_t i = 0; i < ELEMENTSOF(units); i++) {
                size_t n = (1u << 20) / strlen(units[i]);
                _cleanup_free_ char *s = repeat("", units[i], n, "");

                ck_assert_int_eq(plan_parse_json(s, strlen(s), NULL, &doc, &err), PLAN_INVALID);
                ck_assert_ptr_null(doc);
                ck_assert_int_eq(plan_parse_yaml(s, strlen(s), NULL, &doc, &err), PLAN_INVALID);
                ck_assert_ptr_null(doc);
        }
        /* A megabyte of block nesting in YAML. */
        for (int i = 0; b.len < (1u << 20); i++)
                if (strbuf_printf(&b, "%*sk:\n", i % 2000, "") < 0)
                        ck_abort_msg("out of memory");
        ck_assert_int_eq(plan_parse_yaml(b.data, b.len, NULL, &doc, &err), PLAN_INVALID);
        ck_assert_ptr_null(doc);
}
END_TEST

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rng(void)
{
        return test_rng(&rng_state);
}

/* Parse with both parsers; the only acceptable outcomes are a document
 * (an object) or a refusal with a message. Check records the place of
 * every assertion in a file, so this counts trouble and the caller asserts
 * once: a hundred thousand assertions would cost seconds. */
static int parse_any(const char *s, size_t len)
{
        ParseFn fns[] = {plan_parse_json, plan_parse_yaml};
        int bad = 0;

        for (size_t f = 0; f < ELEMENTSOF(fns); f++) {
                PlanError err = PLAN_ERROR_INIT;
                json_t *doc = NULL;
                int r = fns[f](s, len, NULL, &doc, &err);

                if (r == 0)
                        bad += !json_is_object(doc) || err.message;
                else
                        bad += r != PLAN_INVALID || doc || !err.message ||
                               err.code != PLAN_CODE_EXCEPTION;
                json_decref(doc);
                plan_error_clear(&err);
        }
        return bad;
}

START_TEST(test_random_bytes)
{
        static const char alphabet[] = "{}[]:,\"'\\-?!&*#|>%@` \t\n\r0123456789.eExabntru~";
        char buf[512];

        for (int round = 0; round < 3000; round++) {
                size_t len = rng() % sizeof(buf);
                bool text = round % 2;

                for (size_t i = 0; i < len; i++) {
                        uint64_t x = rng();
                        buf[i] = text ? alphabet[x % (sizeof(alphabet) - 1)] : (char)(x & 0xff);
                }
                ck_assert_msg(parse_any(buf, len) == 0, "round %d", round);
        }
}
END_TEST

START_TEST(test_every_prefix)
{
        static const char *const files[] = {PLANS "pair-application.json",
                                            PLANS "pair-application.yaml",
                                            PLANS "pair-nested.yaml"};

        for (size_t f = 0; f < ELEMENTSOF(files); f++) {
                _cleanup_free_ char *data = NULL;
                size_t len;

                ck_assert_int_eq(file_read_all(files[f], 1 << 20, &data, &len), 0);
                for (size_t n = 0; n <= len; n++)
                        if (parse_any(data, n) != 0)
                                ck_abort_msg("%s: prefix of %zu bytes", files[f], n);
        }
}
END_TEST

START_TEST(test_many_keys)
{
        _cleanup_strbuf_ StrBuf j = STRBUF_INIT, y = STRBUF_INIT;
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        _cleanup_json_ json_t *jd = NULL, *yd = NULL;
        const char *key;
        json_t *value;
        int i = 0, r = 0, wrong = 0;

        r |= strbuf_putc(&j, '{');
        for (int k = 0; k < 100000; k++) {
                r |= strbuf_printf(&j, "%s\"k%d\": %d", k ? ", " : "", k, k);
                r |= strbuf_printf(&y, "k%d: %d\n", k, k);
        }
        r |= strbuf_putc(&j, '}');
        ck_assert_int_eq(r, 0);

        ck_assert_int_eq(plan_parse_json(j.data, j.len, NULL, &jd, &err), 0);
        ck_assert_int_eq(plan_parse_yaml(y.data, y.len, NULL, &yd, &err), 0);
        ck_assert_uint_eq(json_object_size(jd), 100000);
        ck_assert(json_equal(jd, yd));
        json_object_foreach (yd, key, value) {
                char expect[16];
                snprintf(expect, sizeof(expect), "k%d", i);
                wrong += !streq(key, expect) || json_integer_value(value) != i;
                i++;
        }
        ck_assert_int_eq(wrong, 0);
        ck_assert_int_eq(i, 100000);

        /* The last key repeated: found however big the object. */
        ck_assert_int_eq(strbuf_puts(&y, "k99999: again\n"), 0);
        json_decref(yd);
        yd = NULL;
        ck_assert_int_eq(plan_parse_yaml(y.data, y.len, NULL, &yd, &err), PLAN_INVALID);
        ck_assert_str_eq(err.message, "Duplicate key 'k99999' (line 100001, column 1)");
}
END_TEST

static void write_file(const char *path, const char *data, size_t len)
{
        FILE *f = fopen(path, "w");

        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(data, 1, len, f), len);
        ck_assert_int_eq(fclose(f), 0);
}

START_TEST(test_parse_file)
{
        char dir[] = "/tmp/test-plan-XXXXXX", path[256];
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        PlanLimits small = {.max_bytes = 64, .max_depth = 64};
        json_t *doc = NULL;
        char big[100];

        ck_assert_ptr_nonnull(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/plan", dir);

        /* JSON after white space. The text is YAML too, so a refusal that
         * only the JSON parser makes shows which one ran. */
        write_file(path, " \n {\"a\": 1, \"a\": 2}", 19);
        ck_assert_int_eq(plan_parse_file(path, NULL, &doc, &err), PLAN_INVALID);
        ck_assert_str_eq(err.message, "Duplicate key 'a' (line 2, column 11)");

        /* A flow mapping that is not JSON goes to the JSON parser as well. */
        write_file(path, "{a: 1}", 6);
        ck_assert_int_eq(plan_parse_file(path, NULL, &doc, &err), PLAN_INVALID);
        ck_assert_str_eq(
                err.message,
                "Plan is not valid JSON: string or '}' expected near 'a' (line 1, column 2)");

        /* Anything else is YAML, a comment before a flow mapping included. */
        write_file(path, "# c\n{a: 1}\n", 11);
        ck_assert_int_eq(plan_parse_file(path, NULL, &doc, &err), 0);
        ck_assert_int_eq(json_integer_value(json_object_get(doc, "a")), 1);
        json_decref(doc);
        doc = NULL;

        memset(big, ' ', sizeof(big));
        big[0] = '{';
        big[sizeof(big) - 1] = '}';
        write_file(path, big, sizeof(big));
        ck_assert_int_eq(plan_parse_file(path, &small, &doc, &err), PLAN_INVALID);
        ck_assert_str_eq(err.message, "Plan is larger than 64 bytes");
        ck_assert_int_eq(plan_parse_file(path, NULL, &doc, &err), 0);
        json_decref(doc);
        doc = NULL;

        ck_assert_int_eq(unlink(path), 0);
        ck_assert_int_eq(plan_parse_file(path, NULL, &doc, &err), -ENOENT);
        ck_assert_int_eq(plan_parse_file(dir, NULL, &doc, &err), -EISDIR);
        ck_assert_ptr_null(doc);
        ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

static Suite *plan_suite(void)
{
        Suite *s = suite_create("plan");
        TCase *tc = tcase_create("parse");
        TCase *tr = tcase_create("robust");

        tcase_add_test(tc, test_pairs);
        tcase_add_test(tc, test_big_integers);
        tcase_add_test(tc, test_yaml_matches_wire);
        tcase_add_loop_test(tc, test_scalar, 0, (int)ELEMENTSOF(scalars));
        tcase_add_loop_test(tc, test_errors, 0, (int)ELEMENTSOF(errors));
        tcase_add_test(tc, test_depth_limits);
        tcase_add_test(tc, test_size_limit);
        tcase_add_test(tc, test_parse_file);
        suite_add_tcase(s, tc);

        /* Generous: these also run under valgrind. */
        tcase_set_timeout(tr, 600);
        tcase_add_test(tr, test_megabyte_of_brackets);
        tcase_add_test(tr, test_random_bytes);
        tcase_add_test(tr, test_every_prefix);
        tcase_add_test(tr, test_many_keys);
        suite_add_tcase(s, tr);
        return s;
}

int main(void)
{
        return check_run(plan_suite());
}
