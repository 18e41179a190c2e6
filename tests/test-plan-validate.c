/* Tests for plan validation (agent/plan/plan-validate.c, plan-version.c) and
 * for util/pyrepr, which renders the Python values in its messages.
 *
 * The table below pairs each fixture under tests/data/plans/ with the
 * ErrorCode and Body.Message of its result. Every row whose last field is
 * false was produced by the reference validator itself: muranoagent/
 * validation.py at commit 9ae3969, run by CPython 3.11 with semantic_version
 * 2.9 on the same file (plus the KeyError('Body') that the reference raises
 * right after validation). The rows marked true are our deliberate
 * differences (docs/plans.md): the readiness probe without Files, and our
 * checks of ID, Stamp and file Names. */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan-internal.h"
#include "plan/plan.h"
#include "util/fileio.h"
#include "util/pyjson.h"
#include "util/pyrepr.h"
#include "test-lib.h"

#define PLANS     TEST_DATA_DIR "/plans/"
#define EXAMPLES  TEST_DATA_DIR "/../../plans/examples/"
#define REFERENCE TEST_DATA_DIR "/../../plans/reference/"

static const struct {
        const char *file;
        int code; /* 0 = valid */
        const char *message;
        bool ours; /* the reference answers differently, on purpose */
} cases[] = {
        {"validate-body-missing-and-bad-name.json", 1, "'Body'", false},
        {"validate-body-missing.json", 1, "'Body'", false},
        {"validate-both-missing-files-first-check.json", 2, "Files is not in the execution plan",
         false},
        {"validate-file-bad-bodytype.json", 2, "Incorrect BodyType in file ID2", false},
        {"validate-file-bodytype-null.json", 2, "Incorrect BodyType in file ID2", false},
        {"validate-file-invalid-list.json", 2, "Invalid file ID3: [1, 'a', None]", false},
        {"validate-file-invalid-repr.json", 2,
         "Invalid file ID3: {'Name': \"it's\", 'q': 'say \"hi\"', 'both': '\\'\"', 't': True, 'f': "
         "False, 'n': None, 'l': [1, 2.5, -0.0, 1e+16, 1e-05, 123456789.125], 'd': {'k': {}}, 'e': "
         "[], 'ctl': 'a\\nb\\tc\\r\\x1f\\x7f\\\\', 'u': "
         "'é\\u200b\\xa0\\xad\\u2028😀\\U000e0001\\ud7ff\\ue000', 'big': 9007199254740993}",
         false},
        {"validate-file-invalid-string.json", 2, "Invalid file ID3: hello world", false},
        {"validate-file-invalid.json", 2, "Invalid file ID3: {'Name': 'common.sh'}", false},
        {"validate-file-no-bodytype.json", 2, "Incorrect BodyType entry in file ID2", false},
        {"validate-file-no-name.json", 2, "Incorrect Name entry in file ID2", false},
        {"validate-file-type-no-name.json", 2, "Incorrect Name entry in file ID1", false},
        {"validate-file-type-no-url.json", 2, "Incorrect URL entry in file ID1", false},
        {"validate-files-missing.json", 2, "Files is not in the execution plan", false},
        {"validate-files-not-dict.json", 2, "Files is not a dictionary", false},
        {"validate-id-not-string.json", 2, "ID is not a string", true},
        {"validate-id-big-int.json", 2, "ID is not a string", true},
        {"validate-misses-file-bool-item.json", 2, "Script deploy misses file True", false},
        {"validate-misses-file-dict-files.json", 2, "Script deploy misses file nope", false},
        {"validate-misses-file-dict-item.json", 2,
         "Script deploy misses file {'java': 'https://github.com/java.git', 'x': 1}", false},
        {"validate-misses-file-float-item.json", 2, "Script deploy misses file 1e+16", false},
        {"validate-misses-file-big-int-item.json", 2,
         "Script deploy misses file 123456789012345678901234567890", false},
        {"validate-misses-file-int-item.json", 2, "Script deploy misses file 5", false},
        {"validate-misses-file-null-item.json", 2, "Script deploy misses file None", false},
        {"validate-misses-file-string-files.json", 2, "Script deploy misses file I", false},
        {"validate-misses-file.json", 2, "Script deploy misses file ID9", false},
        {"validate-name-absolute.json", 2, "Invalid Name in file ID2: absolute path", true},
        {"validate-name-dot.json", 2, "Invalid Name in file ID2: does not end in a file name",
         true},
        {"validate-name-dotdot-alone.json", 2,
         "Invalid Name in file ID2: contains a '..' component", true},
        {"validate-name-dotdot.json", 2, "Invalid Name in file ID2: contains a '..' component",
         true},
        {"validate-name-download-absolute.json", 2, "Invalid Name in file ID1: absolute path",
         true},
        {"validate-name-empty.json", 2, "Invalid Name in file ID2: empty", true},
        {"validate-name-not-string.json", 2, "Invalid Name in file ID2: not a string", true},
        {"validate-name-trailing-slash.json", 2,
         "Invalid Name in file ID2: does not end in a file name", true},
        {"validate-ok-application-2.0.0.json", 0, NULL, false},
        {"validate-ok-application-2.1.0.json", 0, NULL, false},
        {"validate-ok-chef-2.1.0.json", 0, NULL, false},
        {"validate-ok-timeout-float.json", 0, NULL, true},
        {"validate-ok-chef-berksfile-2.2.0.json", 0, NULL, false},
        {"validate-ok-chef-berkshelf-2.2.0.json", 0, NULL, false},
        {"validate-ok-name-subdir.json", 0, NULL, false},
        {"validate-ok-script-files-dict-item.json", 0, NULL, false},
        {"validate-ok-version-1.0.0-default.json", 0, NULL, false},
        {"validate-ok-version-build.json", 0, NULL, false},
        {"validate-ok-version-prerelease-2.1.0-rc1.json", 0, NULL, false},
        {"validate-ok-version-trailing-newline.json", 0, NULL, false},
        {"validate-ok-wait-ready.json", 0, NULL, true},
        {"validate-options-not-dict.json", 2, "Options is not a dictionary", false},
        {"validate-reference-0.0.0-no-scripts.json", 2, "Scripts is not in the execution plan",
         false},
        {"validate-reference-2.1.0-no-files.json", 2, "Files is not in the execution plan", false},
        {"validate-reference-berkshelf-2.1.0.json", 2,
         "Script has an option useBerkshelf invalid for version 2.1.0", false},
        {"validate-script-entrypoint-null.json", 2, "Incorrect EntryPoint entry in script deploy",
         false},
        {"validate-script-files-empty-dict-item.json", 1, "list index out of range", false},
        {"validate-script-files-int.json", 1, "'int' object is not iterable", false},
        {"validate-script-files-list-item.json", 1, "unhashable type: 'list'", false},
        {"validate-script-files-null.json", 1, "'NoneType' object is not iterable", false},
        {"validate-script-is-bool.json", 1, "argument of type 'bool' is not iterable", false},
        {"validate-script-is-int.json", 1, "argument of type 'int' is not iterable", false},
        {"validate-script-is-list-with-type.json", 1,
         "list indices must be integers or slices, not str", false},
        {"validate-script-is-list.json", 2, "Incorrect Type entry in script deploy", false},
        {"validate-script-is-null.json", 1, "argument of type 'NoneType' is not iterable", false},
        {"validate-script-is-string-with-type.json", 1,
         "string indices must be integers, not 'str'", false},
        {"validate-script-is-string.json", 2, "Incorrect Type entry in script deploy", false},
        {"validate-script-name-unicode.json", 2, "Incorrect EntryPoint entry in script déploy ☃",
         false},
        {"validate-script-no-entrypoint.json", 2, "Incorrect EntryPoint entry in script deploy",
         false},
        {"validate-script-no-type.json", 2, "Incorrect Type entry in script deploy", false},
        {"validate-script-type-not-string.json", 2, "Incorrect Type entry in script deploy", false},
        {"validate-scripts-missing.json", 2, "Scripts is not in the execution plan", false},
        {"validate-scripts-not-dict.json", 2, "Scripts is not a dictionary", false},
        {"validate-stamp-bool.json", 2, "Stamp is not an integer", true},
        {"validate-stamp-float.json", 2, "Stamp is not an integer", true},
        {"validate-stamp-not-integer.json", 2, "Stamp is not an integer", true},
        {"validate-timeout-string.json", 2, "Timeout is not a positive number of seconds", true},
        {"validate-timeout-zero.json", 2, "Timeout is not a positive number of seconds", true},
        {"validate-timeout-negative.json", 2, "Timeout is not a positive number of seconds", true},
        {"validate-timeout-null.json", 2, "Timeout is not a positive number of seconds", true},
        {"validate-v1-plan.json", 2, "Files is not in the execution plan", false},
        {"validate-v20-download-file.json", 2,
         "Download file is ID1 not valid for this version 2.0.0", false},
        {"validate-v20-file-is-null.json", 1, "'NoneType' object has no attribute 'keys'", false},
        {"validate-v20-file-is-string.json", 1, "'str' object has no attribute 'keys'", false},
        {"validate-v20-misses-entry-point.json", 2,
         "Script deploy misses entry point deployTomcat.sh", false},
        {"validate-v20-newline-version-message.json", 2,
         "Type Puppet is not valid for format 2.0.0", false},
        {"validate-v20-type-chef.json", 2, "Type Chef is not valid for format 2.0.0", false},
        {"validate-v20-type-quoted.json", 2, "Type it's \"x\" is not valid for format 2.0.0",
         false},
        {"validate-v20-url-only-file.json", 2,
         "Download file is ID2 not valid for this version 2.0.0", false},
        {"validate-v21-chef-no-colons.json", 2,
         "Wrong EntryPoint cookbook:recipe for Puppet/Chef executors. :: needed", false},
        {"validate-v21-file-is-int.json", 1, "argument of type 'int' is not iterable", false},
        {"validate-v21-file-list-body.json", 1, "list indices must be integers or slices, not str",
         false},
        {"validate-v21-file-list-type-missing-url.json", 2, "Incorrect URL entry in file ID3",
         false},
        {"validate-v21-file-string-body.json", 2, "Incorrect URL entry in file ID3", false},
        {"validate-v21-file-string-type.json", 2, "Invalid file ID3: TypeURLName", true},
        {"validate-v21-invalid-type.json", 2, "Script has not a valid type Ansible", false},
        {"validate-v21-misses-entry-point.json", 2, "Script deploy misses entry point x.sh", false},
        {"validate-v21-no-options.json", 1, "'Options'", false},
        {"validate-v21-options-int.json", 1, "'int' object is not iterable", false},
        {"validate-v21-options-list.json", 2,
         "Script has an option useBerkshelf invalid for version 2.1.0", false},
        {"validate-v21-options-null.json", 1, "'NoneType' object is not iterable", false},
        {"validate-v21-options-string.json", 0, NULL, false},
        {"validate-v22-berksfile-puppet.json", 2,
         "Script has an option berksfilePath invalid for type Puppet", false},
        {"validate-v22-no-options.json", 1, "'Options'", false},
        {"validate-v22-rc-berkshelf-application.json", 2,
         "Script has an option useBerkshelf invalid for type Application", false},
        {"validate-v22-rc-berkshelf-chef.json", 0, NULL, false},
        {"validate-version-build-leading-zero-ok.json", 0, NULL, false},
        {"validate-version-empty-build-identifier.json", 1, "Invalid empty identifier '' in 'b.'",
         false},
        {"validate-version-empty-dict.json", 1, "Invalid empty version string: {}", false},
        {"validate-version-empty-identifier.json", 1, "Invalid empty identifier '' in 'a..b'",
         false},
        {"validate-version-empty-list.json", 1, "Invalid empty version string: []", false},
        {"validate-version-empty.json", 1, "Invalid empty version string: ''", false},
        {"validate-version-false.json", 1, "Invalid empty version string: False", false},
        {"validate-version-float.json", 1, "expected string or bytes-like object, got 'float'",
         false},
        {"validate-version-invalid-2.0.json", 1, "Invalid version string: '2.0'", false},
        {"validate-version-invalid-newlines.json", 1, "Invalid version string: '2.0.0\\n\\n'",
         false},
        {"validate-version-invalid-quote.json", 1, "Invalid version string: \"it's\"", false},
        {"validate-version-leading-zero-identifier.json", 1,
         "Invalid leading zero in identifier '01'", false},
        {"validate-version-leading-zero-major.json", 1, "Invalid leading zero in major: '02.0.0'",
         false},
        {"validate-version-leading-zero-patch.json", 1, "Invalid leading zero in patch: '2.0.00'",
         false},
        {"validate-version-list.json", 1, "expected string or bytes-like object, got 'list'",
         false},
        {"validate-version-null.json", 1, "Call either Version('1.2.3') or Version(major=1, ...).",
         false},
        {"validate-version-true.json", 1, "expected string or bytes-like object, got 'bool'",
         false},
        {"validate-version-unsupported-1000.json", 9,
         "Unsupported format version 1000.0.0 (I support versions <=2.2.0)", false},
        {"validate-version-unsupported-build.json", 9,
         "Unsupported format version 3.0.0+b.1 (I support versions <=2.2.0)", false},
        {"validate-version-unsupported-prerelease.json", 9,
         "Unsupported format version 2.2.1-alpha (I support versions <=2.2.0)", false},
        {"validate-version-unsupported.json", 9,
         "Unsupported format version 2.3.0 (I support versions <=2.2.0)", false},
        {"validate-version-zero-float.json", 1, "Invalid empty version string: 0.0", false},
        {"validate-version-zero.json", 1, "Invalid empty version string: 0", false},
        {"validate-yaml-float-version.yaml", 1, "expected string or bytes-like object, got 'float'",
         false},
        {"validate-yaml-int-version.yaml", 1, "expected string or bytes-like object, got 'int'",
         false},
        {"validate-yaml-unquoted-version.yaml", 0, NULL, false},
};

static void load(const char *path, json_t **ret)
{
        PlanError err = PLAN_ERROR_INIT;
        int r = plan_parse_file(path, NULL, ret, &err);

        ck_assert_msg(r == 0, "%s: %d %s", path, r, err.message ? err.message : "");
        plan_error_clear(&err);
}

START_TEST(test_validate_table)
{
        char path[512];
        _cleanup_json_ json_t *plan = NULL;
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        int r;

        snprintf(path, sizeof(path), PLANS "%s", cases[_i].file);
        load(path, &plan);
        r = plan_validate(plan, &err);
        if (cases[_i].code == 0) {
                ck_assert_msg(r == 0, "%s: %s", cases[_i].file, err.message ? err.message : "");
                ck_assert_ptr_null(err.message);
                return;
        }
        ck_assert_msg(r == PLAN_INVALID, "%s: r=%d", cases[_i].file, r);
        ck_assert_int_eq(err.code, cases[_i].code);
        ck_assert_str_eq(err.message, cases[_i].message);
        /* Validation messages are the reference's: no position. */
        ck_assert_int_eq(err.line, 0);
        ck_assert_int_eq(err.column, 0);
}
END_TEST

/* The reference's own unit-test plans (muranoagent/tests/unit/
 * execution_plan.py and test_app.py), re-typed as fixtures. */
START_TEST(test_reference_unit_plans)
{
        static const struct {
                const char *file;
                int code;
        } plans[] = {
                {"validate-ok-chef-2.1.0.json", 0},              /* ExPlanDownloable */
                {"validate-ok-application-2.1.0.json", 0},       /* ExPlanApplication */
                {"validate-ok-chef-berkshelf-2.2.0.json", 0},    /* ExPlanBerkshelf */
                {"validate-ok-chef-berksfile-2.2.0.json", 0},    /* ExPlanCustomBerskfile */
                {"validate-reference-0.0.0-no-scripts.json", 2}, /* wrong format */
                {"validate-version-unsupported-1000.json", 9},   /* over max */
                {"validate-v20-download-file.json", 2},          /* 2.0.0 + Downloadable */
                {"validate-reference-2.1.0-no-files.json", 2},   /* ExPlanDownloableNoFiles */
                {"validate-reference-berkshelf-2.1.0.json", 2},  /* ExPlanBerkWrongVersion */
        };

        for (size_t i = 0; i < ELEMENTSOF(plans); i++) {
                char path[512];
                _cleanup_json_ json_t *plan = NULL;
                _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
                int r;

                snprintf(path, sizeof(path), PLANS "%s", plans[i].file);
                load(path, &plan);
                r = plan_validate(plan, &err);
                ck_assert_int_eq(r, plans[i].code ? PLAN_INVALID : 0);
                ck_assert_int_eq(err.code, plans[i].code);
        }
}
END_TEST

START_TEST(test_examples_valid)
{
        static const char *const files[] = {"telnet.yaml", "runcommand.yaml", "putfile.yaml",
                                            "apache.yaml", "hello.json"};

        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                char path[512];
                _cleanup_json_ json_t *plan = NULL;
                _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;

                snprintf(path, sizeof(path), EXAMPLES "%s", files[i]);
                load(path, &plan);
                ck_assert_msg(plan_validate(plan, &err) == 0, "%s: %s", files[i], err.message);
                ck_assert(json_is_string(json_object_get(plan, "Body")));
                ck_assert(json_is_string(json_object_get(plan, "ID")));
        }
}
END_TEST

/* The engine-built plan of spec 3.8 is valid, and json.dumps() of what we
 * parsed gives the wire bytes back. */
START_TEST(test_reference_wire_plan)
{
        _cleanup_json_ json_t *plan = NULL;
        _cleanup_free_ char *bytes = NULL, *again = NULL;
        size_t len;

        ck_assert_int_eq(file_read_all(REFERENCE "application-wire.json", 1 << 20, &bytes, &len),
                         0);
        ck_assert_int_eq(plan_parse_json(bytes, len, NULL, &plan, NULL), 0);
        ck_assert_int_eq(plan_validate(plan, NULL), 0);
        ck_assert_int_eq(pyjson_dumps(plan, &again), 0);
        ck_assert_str_eq(again, bytes);
        ck_assert_str_eq(json_string_value(json_object_get(plan, "ID")), "ID1");
        ck_assert_int_eq(json_integer_value(json_object_get(plan, "Stamp")), 20000);
}
END_TEST

START_TEST(test_error_reuse_and_null)
{
        _cleanup_json_ json_t *a = json_pack("{s:s}", "FormatVersion", "9.0.0");
        _cleanup_json_ json_t *b = json_pack("{s:s}", "FormatVersion", "2.0");
        _cleanup_json_ json_t *list = json_array();
        PlanError err = PLAN_ERROR_INIT;

        ck_assert_int_eq(plan_validate(a, &err), PLAN_INVALID);
        ck_assert_int_eq(err.code, 9);
        /* A second failure replaces the first message (no leak). */
        ck_assert_int_eq(plan_validate(b, &err), PLAN_INVALID);
        ck_assert_int_eq(err.code, 1);
        ck_assert_str_eq(err.message, "Invalid version string: '2.0'");
        plan_error_clear(&err);
        ck_assert_ptr_null(err.message);
        ck_assert_int_eq(err.code, 0);
        plan_error_clear(NULL);

        ck_assert_int_eq(plan_validate(a, NULL), PLAN_INVALID);
        ck_assert_int_eq(plan_validate(list, &err), -EINVAL);
        ck_assert_ptr_null(err.message);
}
END_TEST

/* A plan built in memory can carry what our parsers refuse: a NUL inside a
 * Name, or a key with a NUL inside. */
START_TEST(test_validate_in_memory_oddities)
{
        _cleanup_json_ json_t *plan =
                json_pack("{s:s, s:s, s:{}, s:{s:{s:s, s:s, s:s%}}}", "FormatVersion", "2.0.0",
                          "Body", "return", "Scripts", "Files", "f1", "BodyType", "Text", "Body",
                          "x", "Name", "a\0b", (size_t)3);
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;

        ck_assert_ptr_nonnull(plan);
        ck_assert_int_eq(plan_validate(plan, &err), PLAN_INVALID);
        ck_assert_str_eq(err.message, "Invalid Name in file f1: contains a NUL character");
}
END_TEST

static const struct {
        const char *version;
        int cmp220, cmp200, cmp210; /* sign of the comparison with 2.2.0, 2.0.0, 2.1.0 */
        bool lt210, lt220;          /* Spec('<2.1.0'), Spec('<2.2.0') */
} versions[] = {
        {"2.2.0", 0, 1, 1, false, false},
        {"2.2.0+build", 0, 1, 1, false, false},
        {"2.2.0-rc1", -1, 1, 1, false, false},
        {"2.1.0-rc1", -1, 1, -1, false, true},
        {"2.1.0-0", -1, 1, -1, false, true},
        {"2.0.9", -1, 1, -1, true, true},
        {"2.0.0-alpha", -1, -1, -1, true, true},
        {"1.0.0", -1, -1, -1, true, true},
        {"2.3.0-a", 1, 1, 1, false, false},
        {"10.0.0", 1, 1, 1, false, false},
        {"2.10.0", 1, 1, 1, false, false},
        {"99999999999999999999.0.0", 1, 1, 1, false, false},
        {"0.0.0", -1, -1, -1, true, true},
};

static int sign(int x)
{
        return (x > 0) - (x < 0);
}

START_TEST(test_version_compare)
{
        _cleanup_json_ json_t *s = json_string(versions[_i].version);
        PlanVersion v;

        ck_assert_int_eq(plan_version_parse(s, &v, NULL), 0);
        ck_assert_int_eq(sign(plan_version_cmp(&v, 2, 2, 0)), versions[_i].cmp220);
        ck_assert_int_eq(sign(plan_version_cmp(&v, 2, 0, 0)), versions[_i].cmp200);
        ck_assert_int_eq(sign(plan_version_cmp(&v, 2, 1, 0)), versions[_i].cmp210);
        ck_assert_int_eq(plan_version_lt(&v, 2, 1, 0), versions[_i].lt210);
        ck_assert_int_eq(plan_version_lt(&v, 2, 2, 0), versions[_i].lt220);
}
END_TEST

/* Version texts and what semantic_version 2.9/2.10 says about them. */
static const struct {
        const char *text;
        const char *error; /* NULL: valid, and str(Version) is text without a final newline */
} version_texts[] = {
        {"2.0.0", NULL},
        {"2.0.0\n", NULL},
        {"1.2.3-a.b-c.0+001.x-y", NULL},
        {"2.0.0-", "Invalid version string: '2.0.0-'"},
        {"2.0.0+", "Invalid version string: '2.0.0+'"},
        {"2.0.0-a+b+c", "Invalid version string: '2.0.0-a+b+c'"},
        {"2.0.0-a_b", "Invalid version string: '2.0.0-a_b'"},
        {" 2.0.0", "Invalid version string: ' 2.0.0'"},
        {"v2.0.0", "Invalid version string: 'v2.0.0'"},
        {"2.0.0\r\n", "Invalid version string: '2.0.0\\r\\n'"},
        {"\n", "Invalid version string: '\\n'"},
        {"2.0.0.0", "Invalid version string: '2.0.0.0'"},
        {"00.1.1", "Invalid leading zero in major: '00.1.1'"},
        {"1.01.1", "Invalid leading zero in minor: '1.01.1'"},
        {"1.0.0-a.00", "Invalid leading zero in identifier '00'"},
        {"1.0.0-.a", "Invalid empty identifier '' in '.a'"},
        {"1.0.0+a..b", "Invalid empty identifier '' in 'a..b'"},
        {"1.0.0-0a", NULL},
        /* Python's \d takes fullwidth digits and semantic_version reads 2.0.0;
         * we take ASCII digits only (docs/plans.md, "Known limits"). */
        {"２.０.０", "Invalid version string: '２.０.０'"},
};

START_TEST(test_version_texts)
{
        _cleanup_json_ json_t *s = json_string(version_texts[_i].text);
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        PlanVersion v;
        int r = plan_version_parse(s, &v, &err);

        if (!version_texts[_i].error) {
                size_t n = strlen(version_texts[_i].text);
                ck_assert_int_eq(r, 0);
                if (version_texts[_i].text[n - 1] == '\n')
                        n--;
                ck_assert_uint_eq(v.text_len, n);
                return;
        }
        ck_assert_int_eq(r, PLAN_INVALID);
        ck_assert_int_eq(err.code, 1);
        ck_assert_str_eq(err.message, version_texts[_i].error);
}
END_TEST

/* Python 3.11's repr() and str() of json.loads(text). */
static const struct {
        const char *json;
        const char *repr;
        const char *str;
} reprs[] = {
        {"\"plain\"", "'plain'", "plain"},
        {"\"it's\"", "\"it's\"", "it's"},
        {"\"say \\\"hi\\\"\"", "'say \"hi\"'", "say \"hi\""},
        {"\"both ' and \\\"\"", "'both \\' and \"'", "both ' and \""},
        {"\"back\\\\slash\"", "'back\\\\slash'", "back\\slash"},
        {"\"\\n\\t\\r\\u0001\\u001f\\u007f\"", "'\\n\\t\\r\\x01\\x1f\\x7f'", "\n\t\r\x01\x1f\x7f"},
        {"\"\\u0080\\u00a0\\u00ad\\u00e9\\u0378\\u200b\\u2028\\u3000\\ue000\\ud7ff\\uffff\"",
         "'\\x80\\xa0\\xad\u00e9\\u0378\\u200b\\u2028\\u3000\\ue000\\ud7ff\\uffff'", NULL},
        {"\"\\ud83d\\ude00\\udb40\\udc01\\udbff\\udfff\"", "'\U0001F600\\U000e0001\\U0010ffff'",
         NULL},
        {"\"\\u0300 combining\"", "'\u0300 combining'", "\u0300 combining"},
        {"\"\\u061c\\u180e\\ufeff\"", "'\\u061c\\u180e\\ufeff'", NULL},
        {"true", "True", "True"},
        {"false", "False", "False"},
        {"null", "None", "None"},
        {"0", "0", "0"},
        {"-17", "-17", "-17"},
        {"9223372036854775807", "9223372036854775807", "9223372036854775807"},
        {"1.5", "1.5", "1.5"},
        {"-0.0", "-0.0", "-0.0"},
        {"1e16", "1e+16", "1e+16"},
        {"1e-05", "1e-05", "1e-05"},
        {"123456789.125", "123456789.125", "123456789.125"},
        {"[]", "[]", "[]"},
        {"{}", "{}", "{}"},
        {"[1, \"a\", null, [true]]", "[1, 'a', None, [True]]", "[1, 'a', None, [True]]"},
        {"{\"k\": \"v\", \"n\": {\"x\": [1.0]}, \"q\": \"'\"}",
         "{'k': 'v', 'n': {'x': [1.0]}, 'q': \"'\"}", "{'k': 'v', 'n': {'x': [1.0]}, 'q': \"'\"}"},
        {"{\"'\": \"\\\"\"}", "{\"'\": '\"'}", "{\"'\": '\"'}"},
};

START_TEST(test_pyrepr)
{
        _cleanup_json_ json_t *v = json_loads(reprs[_i].json, JSON_DECODE_ANY, NULL);
        _cleanup_strbuf_ StrBuf r = STRBUF_INIT;
        _cleanup_strbuf_ StrBuf s = STRBUF_INIT;

        ck_assert_ptr_nonnull(v);
        ck_assert_int_eq(pyrepr_repr(v, &r), 0);
        ck_assert_str_eq(r.data, reprs[_i].repr);
        ck_assert_int_eq(pyrepr_str(v, &s), 0);
        if (reprs[_i].str)
                ck_assert_str_eq(s.data, reprs[_i].str);
        else
                ck_assert_mem_eq(s.data, json_string_value(v), json_string_length(v));
}
END_TEST

START_TEST(test_pyrepr_edges)
{
        _cleanup_json_ json_t *nul = json_stringn("a\0b", 3);
        _cleanup_json_ json_t *deep = json_array();
        _cleanup_json_ json_t *types = json_pack("[{}[]sifbbn]", "s", 1, 1.5, 1, 0);
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        static const char *const names[] = {"dict",  "list", "str",  "int",
                                            "float", "bool", "bool", "NoneType"};
        json_t *cur = deep;

        ck_assert_int_eq(pyrepr_repr(nul, &b), 0);
        ck_assert_str_eq(b.data, "'a\\x00b'");
        strbuf_reset(&b);
        ck_assert_int_eq(pyrepr_string(&b, "\xff", 1), -EILSEQ);
        strbuf_reset(&b);
        ck_assert_int_eq(pyrepr_repr(NULL, &b), 0);
        ck_assert_str_eq(b.data, "None");

        /* Python gives up with RecursionError; we with -EINVAL. */
        for (int i = 0; i < 1100; i++) {
                json_t *next = json_array();
                json_array_append_new(cur, next);
                cur = next;
        }
        strbuf_reset(&b);
        ck_assert_int_eq(pyrepr_repr(deep, &b), -EINVAL);

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                ck_assert_str_eq(pyrepr_type_name(json_array_get(types, i)), names[i]);

        /* bool() of each: the values are truthy in pairs, falsy first. */
        {
                _cleanup_json_ json_t *vals = json_pack("[{}{si}[][i]ssiIffbbn]", "k", 1, 0, "",
                                                        "0", 0, (json_int_t)-1, 0.0, -0.5, 0, 1);
                static const bool truth[] = {false, true,  false, true,  false, true, false,
                                             true,  false, true,  false, true,  false};

                ck_assert_uint_eq(json_array_size(vals), ELEMENTSOF(truth));
                for (size_t i = 0; i < ELEMENTSOF(truth); i++)
                        ck_assert_int_eq(pyrepr_truthy(json_array_get(vals, i)), truth[i]);
                ck_assert(!pyrepr_truthy(NULL));
        }

        /* A size-capped buffer reports -E2BIG, as every StrBuf user does. */
        StrBuf small = {.limit = 4};
        ck_assert_int_eq(pyrepr_repr(types, &small), -E2BIG);
        strbuf_free(&small);
}
END_TEST

static Suite *plan_validate_suite(void)
{
        Suite *s = suite_create("plan-validate");
        TCase *tc = tcase_create("validate");
        TCase *tv = tcase_create("version");
        TCase *tr = tcase_create("pyrepr");

        tcase_add_loop_test(tc, test_validate_table, 0, (int)ELEMENTSOF(cases));
        tcase_add_test(tc, test_reference_unit_plans);
        tcase_add_test(tc, test_examples_valid);
        tcase_add_test(tc, test_reference_wire_plan);
        tcase_add_test(tc, test_error_reuse_and_null);
        tcase_add_test(tc, test_validate_in_memory_oddities);
        suite_add_tcase(s, tc);

        tcase_add_loop_test(tv, test_version_compare, 0, (int)ELEMENTSOF(versions));
        tcase_add_loop_test(tv, test_version_texts, 0, (int)ELEMENTSOF(version_texts));
        suite_add_tcase(s, tv);

        tcase_add_loop_test(tr, test_pyrepr, 0, (int)ELEMENTSOF(reprs));
        tcase_add_test(tr, test_pyrepr_edges);
        suite_add_tcase(s, tr);
        return s;
}

int main(void)
{
        return check_run(plan_validate_suite());
}
