/* Tests for send/: building plans as the Murano engine builds them, byte for
 * byte (tests/data/send, whose expected files were produced by running the
 * engine's own build_execution_plan with the same ID and time stubs), the
 * engine's file-item rules, result matching and judging, and signing. */
#include <check.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "plan/plan.h"
#include "send/send-plan-internal.h"
#include "send/send-plan.h"
#include "send/send-result.h"
#include "send/send-sign.h"
#include "util/fileio.h"
#include "util/pyjson.h"
#include "test-lib.h"

/* --- seams: IDs "ID1", "ID2", ... and time.time() == 2, as the engine's
 * unit tests stub uuid4 and time --- */

static int fake_id(void *userdata, char buf[static 33])
{
        int *n = userdata;

        snprintf(buf, 33, "ID%d", ++*n);
        return 0;
}

static double fake_now(void *userdata)
{
        return 2;
}

static char *data_path(const char *rel)
{
        char *p = NULL;

        ck_assert_int_ge(asprintf(&p, "%s/send/%s", TEST_DATA_DIR, rel), 0);
        return p;
}

static char *fixture(const char *rel)
{
        char *path = data_path(rel), *text = NULL;

        ck_assert_int_eq(file_read_all(path, 1 << 20, &text, NULL), 0);
        free(path);
        return text;
}

/* Build tmpl with the stubs and resources dir `res` (relative to
 * tests/data/send); return the wire text, or NULL with *ret_error set. */
static char *build_text(const json_t *tmpl, const char *res, size_t max, char **ret_error)
{
        int counter = 0;
        char *resources = data_path(res), *text = NULL;
        SendPlanEnv env = {.resources = resources,
                           .max_file_bytes = max,
                           .new_id = fake_id,
                           .now = fake_now,
                           .userdata = &counter};
        json_t *plan = NULL;
        int r = send_plan_build(tmpl, &env, &plan, ret_error);

        free(resources);
        if (r != 0) {
                ck_assert_int_eq(r, SEND_PLAN_INVALID);
                ck_assert_ptr_nonnull(*ret_error);
                return NULL;
        }
        ck_assert_int_eq(pyjson_dumps(plan, &text), 0);
        json_decref(plan);
        return text;
}

static char *build_file(const char *tmpl_rel, const char *res)
{
        char *path = data_path(tmpl_rel), *error = NULL, *text;
        json_t *tmpl = NULL;

        ck_assert_int_eq(plan_parse_file(path, NULL, &tmpl, NULL), 0);
        text = build_text(tmpl, res, 0, &error);
        ck_assert_msg(text, "build failed: %s", error);
        json_decref(tmpl);
        free(path);
        return text;
}

/* The spec's section 3.8 plan, as the engine's test expects it. */
static const char spec_plan[] =
        "{\"FormatVersion\": \"2.0.0\", \"Version\": \"1.0.0\", \"Name\": \"Deploy Tomcat\", "
        "\"Parameters\": {\"appName\": \"$appName\"}, "
        "\"Body\": \"return deploy(args.appName).stdout\\n\", "
        "\"Scripts\": {\"deploy\": {\"Type\": \"Application\", \"Version\": \"1.0.0\", "
        "\"EntryPoint\": \"ID2\", \"Files\": [\"ID3\", \"ID4\"], "
        "\"Options\": {\"captureStdout\": true, \"captureStderr\": true}}}, "
        "\"ID\": \"ID1\", \"Stamp\": 20000, \"Action\": \"Execute\", "
        "\"Files\": {\"ID2\": {\"Name\": \"deployTomcat.sh\", \"BodyType\": \"Text\", "
        "\"Body\": \"text\"}, "
        "\"ID3\": {\"Name\": \"installer\", \"BodyType\": \"Base64\", \"Body\": \"dGV4dA==\\n\"}, "
        "\"ID4\": {\"Name\": \"common.sh\", \"BodyType\": \"Base64\", \"Body\": \"dGV4dA==\\n\"}}}";

START_TEST(test_spec_example)
{
        char *text = build_file("spec/Resources/application.template", "spec/Resources");
        char *want = fixture("spec/expected.json");

        ck_assert_str_eq(text, spec_plan);
        ck_assert_str_eq(text, want);
        free(text);
        free(want);
}
END_TEST

START_TEST(test_mixed_files)
{
        char *text = build_file("pkg/Resources/mixed.template", "pkg/Resources");
        char *want = fixture("pkg/mixed.expected.json");

        ck_assert_str_eq(text, want);
        /* CRLF and lone CR became LF; the binary file kept its CR LF. */
        ck_assert_ptr_nonnull(strstr(text, "\"first line\\nsecond line\\nthird line\\n\\nlast"));
        ck_assert_ptr_nonnull(strstr(text, "\"AAEC/v8gYmluYXJ5DQqA\\n\""));
        free(text);
        free(want);
}
END_TEST

START_TEST(test_v1)
{
        char *text = build_file("pkg/Resources/v1.template", "pkg/Resources");
        char *want = fixture("pkg/v1.expected.json");

        ck_assert_str_eq(text, want);
        free(text);
        free(want);
}
END_TEST

/* Templates given inline (JSON) with the plan the engine builds from them,
 * against tests/data/send/pkg/Resources. */
static const struct {
        const char *tmpl;
        const char *want;
} defaults[] = {
        /* ID, Stamp, Action and Files are added in that order. */
        {"{\"FormatVersion\": \"2.0.0\", \"Body\": \"return\"}",
         "{\"FormatVersion\": \"2.0.0\", \"Body\": \"return\", \"ID\": \"ID1\", \"Stamp\": 20000, "
         "\"Action\": \"Execute\", \"Files\": {}}"},
        /* An existing ID and Stamp are replaced where they stand; Action
         * and Files are kept. */
        {"{\"ID\": \"old\", \"Action\": \"Custom\", \"FormatVersion\": \"2.1.0\", "
         "\"Stamp\": 1, \"Files\": {}, \"Scripts\": {}}",
         "{\"ID\": \"ID1\", \"Action\": \"Custom\", \"FormatVersion\": \"2.1.0\", "
         "\"Stamp\": 20000, \"Files\": {}, \"Scripts\": {}}"},
        /* A FormatVersion of "" is falsy: the v1 path, only a Stamp. */
        {"{\"FormatVersion\": \"\", \"Scripts\": []}",
         "{\"FormatVersion\": \"\", \"Scripts\": [], \"Stamp\": 20000}"},
        /* An EntryPoint that is a known Name becomes its ID; one written as
         * "<name>" is looked up as written, so it is embedded again. */
        {"{\"FormatVersion\": \"2.0.0\", \"Files\": {\"f\": {\"Name\": \"deploy.sh\", "
         "\"BodyType\": \"Text\", \"Body\": \"x\"}}, \"Scripts\": {\"a\": {\"Type\": "
         "\"Application\", \"EntryPoint\": \"deploy.sh\"}, \"b\": {\"Type\": \"Application\", "
         "\"EntryPoint\": \"<deploy.sh>\"}}}",
         "{\"FormatVersion\": \"2.0.0\", \"Files\": {\"f\": {\"Name\": \"deploy.sh\", "
         "\"BodyType\": \"Text\", \"Body\": \"x\"}, \"ID2\": {\"Name\": \"deploy.sh\", "
         "\"BodyType\": \"Base64\", \"Body\": \"IyEvYmluL3NoCmVjaG8gImRlcGxveWluZyAkMSIK\\n\"}}, "
         "\"Scripts\": {\"a\": {\"Type\": \"Application\", \"EntryPoint\": \"f\"}, \"b\": "
         "{\"Type\": \"Application\", \"EntryPoint\": \"ID2\"}}, \"ID\": \"ID1\", "
         "\"Stamp\": 20000, \"Action\": \"Execute\"}"},
        /* Items naming a known file by "<name>", URL or mapping get its ID
         * (the engine itself raises KeyError/TypeError there). */
        {"{\"FormatVersion\": \"2.1.0\", \"Files\": {\"f\": {\"Name\": \"x.git\", \"Type\": "
         "\"Downloadable\", \"URL\": \"https://h/x.git\"}}, \"Scripts\": {\"c\": {\"Type\": "
         "\"Chef\", \"EntryPoint\": \"a::b\", \"Files\": [\"<x.git>\", \"https://h/y/x.git\", "
         "{\"x.git\": \"other\"}]}}}",
         "{\"FormatVersion\": \"2.1.0\", \"Files\": {\"f\": {\"Name\": \"x.git\", \"Type\": "
         "\"Downloadable\", \"URL\": \"https://h/x.git\"}}, \"Scripts\": {\"c\": {\"Type\": "
         "\"Chef\", \"EntryPoint\": \"a::b\", \"Files\": [\"f\", \"f\", \"f\"]}}, \"ID\": \"ID1\", "
         "\"Stamp\": 20000, \"Action\": \"Execute\"}"},
        /* "../" may leave scripts/ but not Resources/ (secure_join). */
        {"{\"FormatVersion\": \"2.0.0\", \"Scripts\": {\"s\": {\"Type\": \"Application\", "
         "\"EntryPoint\": \"../scripts/lib/./util.sh\"}}}",
         "{\"FormatVersion\": \"2.0.0\", \"Scripts\": {\"s\": {\"Type\": \"Application\", "
         "\"EntryPoint\": \"ID2\"}}, \"ID\": \"ID1\", \"Stamp\": 20000, \"Action\": \"Execute\", "
         "\"Files\": {\"ID2\": {\"Name\": \"../scripts/lib/./util.sh\", \"BodyType\": \"Text\", "
         "\"Body\": \"#!/bin/sh\\n# helpers\\nlog() { echo \\\"$@\\\"; }\\n\"}}}"},
};

START_TEST(test_defaults)
{
        json_t *tmpl = json_loads(defaults[_i].tmpl, JSON_DECODE_ANY, NULL);
        char *error = NULL, *text;

        ck_assert_ptr_nonnull(tmpl);
        text = build_text(tmpl, "pkg/Resources", 0, &error);
        ck_assert_msg(text, "build failed: %s", error);
        ck_assert_str_eq(text, defaults[_i].want);
        free(text);
        json_decref(tmpl);
}
END_TEST

#define APP(ep) "{\"FormatVersion\": \"2.0.0\", \"Scripts\": {\"deploy\": " ep "}}"

static const struct {
        const char *tmpl;
        size_t max;
        const char *want; /* the message, with @ for the resources path */
} errors[] = {
        {"[]", 0, "Incorrect execution plan: not a dictionary"},
        {"{\"FormatVersion\": 2.0}", 0, "FormatVersion is not a string"},
        {APP("{\"Type\": \"Application\"}"), 0, "No entry point in script deploy"},
        {APP("{\"EntryPoint\": \"deploy.sh\"}"), 0, "Script deploy has no Type"},
        {APP("[]"), 0, "Script deploy is not a dictionary"},
        {APP("{\"Type\": \"Application\", \"EntryPoint\": 5}"), 0,
         "EntryPoint of script deploy is not a string"},
        {APP("{\"Type\": \"Application\", \"EntryPoint\": \"nope.sh\"}"), 0,
         "cannot read @/scripts/nope.sh: No such file or directory"},
        {APP("{\"Type\": \"Application\", \"EntryPoint\": \"../../etc/passwd\"}"), 0,
         "path scripts/../../etc/passwd is not allowed: it leaves the resources directory"},
        {APP("{\"Type\": \"Application\", \"EntryPoint\": \"/etc/passwd\"}"), 0,
         "path /etc/passwd is not allowed: it leaves the resources directory"},
        {APP("{\"Type\": \"Application\", \"EntryPoint\": \"..\"}"), 0,
         "path scripts/.. is not allowed: it leaves the resources directory"},
        {APP("{\"Type\": \"Application\", \"EntryPoint\": \"blob.bin\"}"), 0,
         "cannot embed @/scripts/blob.bin as text: invalid UTF-8 at byte 3 (line 1); "
         "write it as <@/scripts/blob.bin> to embed it as Base64"},
        {APP("{\"Type\": \"Application\", \"EntryPoint\": \"deploy.sh\"}"), 8,
         "cannot embed @/scripts/deploy.sh: larger than 8 bytes"},
        {APP("{\"Type\": \"Chef\", \"EntryPoint\": \"a::b\", \"Files\": {}}"), 0,
         "Files of script deploy is not a list"},
        {APP("{\"Type\": \"Chef\", \"EntryPoint\": \"a::b\", \"Files\": [5]}"), 0,
         "Script deploy has a file item that is neither a file name nor a {name: file} mapping"},
        {APP("{\"Type\": \"Chef\", \"EntryPoint\": \"a::b\", \"Files\": [{}]}"), 0,
         "Script deploy has a file item that is neither a file name nor a {name: file} mapping"},
        {APP("{\"Type\": \"Chef\", \"EntryPoint\": \"a::b\", \"Files\": [\"http://[::1/x\"]}"), 0,
         "Invalid IPv6 URL: http://[::1/x"},
        {"{\"FormatVersion\": \"2.0.0\", \"Files\": {\"f\": {}}}", 0, "File f has no Name"},
        {"{\"FormatVersion\": \"2.0.0\", \"Files\": []}", 0, "Files is not a dictionary"},
        {"{\"FormatVersion\": \"2.0.0\", \"Scripts\": []}", 0, "Scripts is not a dictionary"},
        {"{\"Scripts\": 5}", 0, "Scripts is neither a list nor a dictionary"},
        {"{\"Scripts\": [\"deploy.sh\", 5]}", 0, "Scripts item 1 is not a name"},
};

/* s with every '@' replaced by at. */
static char *expand(const char *s, const char *at)
{
        StrBuf b = STRBUF_INIT;
        char *ret = NULL;

        for (; *s; s++)
                ck_assert_int_ge(*s == '@' ? strbuf_puts(&b, at) : strbuf_putc(&b, *s), 0);
        ck_assert_int_eq(strbuf_steal(&b, &ret), 0);
        return ret;
}

START_TEST(test_errors)
{
        json_t *tmpl = json_loads(errors[_i].tmpl, JSON_DECODE_ANY, NULL);
        char *res = data_path("pkg/Resources"), *want, *error = NULL, *text;

        ck_assert_ptr_nonnull(tmpl);
        want = expand(errors[_i].want, res);
        text = build_text(tmpl, "pkg/Resources", errors[_i].max, &error);
        ck_assert_ptr_null(text);
        ck_assert_str_eq(error, want);
        free(error);
        free(want);
        free(res);
        json_decref(tmpl);
}
END_TEST

static const struct {
        const char *s;
        int url;
        const char *name;
} items[] = {
        {"https://x/y", 1, "y"},
        {"http://h", 1, "h"},
        {"https://h/", 1, ""},
        {"svn+ssh://h/r", 1, "r"},
        {" https://x/a.git", 1, "a.git"},
        {"ht\ttps://x/b", 1, "b"},
        {"https://[::1]/x", 1, "x"},
        {"file:///x", 0, "file:///x"},
        {"git@github.com:a/b.git", 0, "git@github.com:a/b.git"},
        {"//host/x", 0, "//host/x"},
        {"1http://x", 0, "1http://x"},
        {"h_t://x", 0, "h_t://x"},
        {"https://?x", 0, "https://?x"},
        {"mailto:x", 0, "mailto:x"},
        {"a.sh", 0, "a.sh"},
        {"<bin.tgz>", 0, "bin.tgz"},
        {"<>", 0, ""},
        {"<", 0, "<"},
        {"<a", 0, "<a"},
};

START_TEST(test_items)
{
        char *name = NULL, *error = NULL;
        bool url = !items[_i].url;

        ck_assert_int_eq(send_plan_is_url(items[_i].s, &url, &error), 0);
        ck_assert_int_eq(url, items[_i].url);
        ck_assert_int_eq(send_plan_item_name(items[_i].s, &name, &error), 0);
        ck_assert_str_eq(name, items[_i].name);
        ck_assert_ptr_null(error);
        free(name);
}
END_TEST

static const struct {
        const char *file;
        const char *want; /* NULL: refused */
} paths[] = {
        {"a.sh", "R/scripts/a.sh"},
        {"lib//./b.sh", "R/scripts/lib/b.sh"},
        {"../x.sh", "R/x.sh"},
        {"a/../../scripts/c", "R/scripts/c"},
        {"../..", NULL},
        {"../../x", NULL},
        {"/abs", NULL},
        {"a/../..", NULL},
};

START_TEST(test_paths)
{
        char *path = NULL, *error = NULL;
        int r = send_plan_resource_path("R", paths[_i].file, &path, &error);

        if (paths[_i].want) {
                ck_assert_int_eq(r, 0);
                ck_assert_str_eq(path, paths[_i].want);
        } else {
                ck_assert_int_eq(r, SEND_PLAN_INVALID);
                ck_assert_ptr_nonnull(error);
        }
        free(path);
        free(error);
}
END_TEST

START_TEST(test_universal_newlines)
{
        char tmpl[] = "/tmp/test-send-XXXXXX";
        int fd = mkstemp(tmpl);
        static const char data[] = "a\r\nb\rc\r\r\n\nd\r";
        json_t *s = NULL;
        char *error = NULL;

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, data, sizeof(data) - 1), (ssize_t)sizeof(data) - 1);
        close(fd);
        ck_assert_int_eq(send_plan_read_text(tmpl, "t", 1024, &s, &error), 0);
        ck_assert_str_eq(json_string_value(s), "a\nb\nc\n\n\nd\n");
        json_decref(s);
        ck_assert_int_eq(send_plan_read_base64(tmpl, "t", 1024, "\n", &s, &error), 0);
        ck_assert_str_eq(json_string_value(s), "YQ0KYg1jDQ0KCmQN\n");
        json_decref(s);
        unlink(tmpl);
}
END_TEST

START_TEST(test_stamp)
{
        double now = send_plan_time_now();

        ck_assert_int_eq(send_plan_stamp(2), 20000);
        /* int(1700000000.123456 * 10000) and int(0.00015 * 10000) in Python. */
        ck_assert_int_eq(send_plan_stamp(1700000000.123456), 17000000001234LL);
        ck_assert_int_eq(send_plan_stamp(0.00015), 1);
        ck_assert(now > (double)time(NULL) - 2 && now < (double)time(NULL) + 2);
}
END_TEST

static const struct {
        const char *plan;
        const char *message_id; /* NULL: refused */
        const char *key;
} ids[] = {
        {"{}", "ID1", "\"ID1\""},           {"{\"ID\": \"abc\"}", "abc", "\"abc\""},
        {"{\"ID\": null}", "", "null"},     {"{\"ID\": \"\"}", "", "\"\""},
        {"{\"ID\": 0}", "", "0"},           {"{\"ID\": 42}", "42", "42"},
        {"{\"ID\": true}", "True", "true"}, {"{\"ID\": 1.5}", "1.5", "1.5"},
        {"{\"ID\": []}", "", "[]"},         {"{\"ID\": [\"a\"]}", NULL, NULL},
};

START_TEST(test_message_id)
{
        json_t *plan = json_loads(ids[_i].plan, 0, NULL), *key = NULL, *want;
        char *mid = NULL, *error = NULL;
        int counter = 0;
        SendPlanEnv env = {.new_id = fake_id, .userdata = &counter};
        int r = send_plan_message_id(plan, &env, &mid, &key, &error);

        if (!ids[_i].message_id) {
                ck_assert_int_eq(r, SEND_PLAN_INVALID);
                ck_assert_str_eq(error, "ID is neither a string nor a number");
                free(error);
        } else {
                ck_assert_int_eq(r, 0);
                ck_assert_str_eq(mid, ids[_i].message_id);
                want = json_loads(ids[_i].key, JSON_DECODE_ANY, NULL);
                ck_assert(json_equal(key, want));
                json_decref(want);
        }
        free(mid);
        json_decref(key);
        json_decref(plan);
}
END_TEST

static const struct {
        const char *body;
        const char *message_id;
        const char *key;
        int match;
        int failed;
} results[] = {
        {"{\"SourceID\": \"p1\", \"ErrorCode\": 0, \"FormatVersion\": \"2.0.0\"}", "x", "\"p1\"", 1,
         0},
        {"{\"SourceID\": \"p1\", \"ErrorCode\": 100, \"FormatVersion\": \"2.0.0\"}", "", "\"p1\"",
         1, 1},
        {"{\"SourceID\": \"p2\", \"ErrorCode\": 0}", "p1", "\"p1\"", 0, 0},
        /* Without SourceID the AMQP message_id decides. */
        {"{\"FormatVersion\": \"2.0.0\", \"ErrorCode\": null}", "p1", "\"p1\"", 1, 0},
        {"{\"SourceID\": null}", "p1", "\"p1\"", 0, 0},
        {"{\"SourceID\": 42, \"FormatVersion\": \"2.0.0\"}", "", "42", 1, 0},
        {"not json", "p1", "\"p1\"", 0, 0},
        {"[1, 2]", "p1", "\"p1\"", 0, 0},
        /* v1 results (no FormatVersion, or 1.x). */
        {"{\"IsException\": false, \"Result\": [{\"IsException\": false, \"Result\": [1]}]}", "p1",
         "\"p1\"", 1, 0},
        {"{\"IsException\": true, \"Result\": [\"T\", \"m\"]}", "p1", "\"p1\"", 1, 1},
        {"{\"FormatVersion\": \"1.0.0\", \"IsException\": false, \"Result\": "
         "[{\"IsException\": false}, {\"IsException\": true}]}",
         "p1", "\"p1\"", 1, 1},
        {"{\"IsException\": false, \"Result\": []}", "p1", "\"p1\"", 1, 1},
        {"{\"Result\": [{\"IsException\": false}]}", "p1", "\"p1\"", 1, 1},
        /* Agent._send returns None for an empty result. */
        {"{}", "p1", "\"p1\"", 1, 0},
        {"{\"FormatVersion\": 2, \"ErrorCode\": 0}", "p1", "\"p1\"", 1, 1},
};

START_TEST(test_results)
{
        json_t *key = json_loads(results[_i].key, JSON_DECODE_ANY, NULL), *doc = NULL;
        int r = send_result_match(results[_i].body, strlen(results[_i].body),
                                  results[_i].message_id, key, &doc);

        ck_assert_int_eq(r, results[_i].match);
        if (r == 1) {
                ck_assert_int_eq(send_result_failed(doc), results[_i].failed);
                json_decref(doc);
        }
        json_decref(key);
}
END_TEST

/* Write a key made by OpenSSL to a temporary PEM file. */
static char *write_key(EVP_PKEY *key, const char *passphrase)
{
        char *path = strdup("/tmp/test-send-key-XXXXXX");
        int fd = mkstemp(path);
        FILE *f = fdopen(fd, "w");

        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(PEM_write_PrivateKey(f, key, passphrase ? EVP_aes_128_cbc() : NULL,
                                              (unsigned char *)passphrase,
                                              passphrase ? (int)strlen(passphrase) : 0, NULL, NULL),
                         1);
        fclose(f);
        return path;
}

static int verify(EVP_PKEY *key, const char *data, const unsigned char *sig, size_t len)
{
        EVP_MD_CTX *ctx = EVP_MD_CTX_new();
        int ok = EVP_DigestVerifyInit(ctx, NULL, EVP_sha256(), NULL, key) == 1 &&
                 EVP_DigestVerify(ctx, sig, len, (const unsigned char *)data, strlen(data)) == 1;

        EVP_MD_CTX_free(ctx);
        return ok;
}

START_TEST(test_sign)
{
        EVP_PKEY *rsa = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
        EVP_PKEY *ec = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
        char *rsa_path = write_key(rsa, NULL), *ec_path = write_key(ec, NULL);
        char *locked_path = write_key(rsa, "secret");
        const char *body = "{\"Body\": \"return\"}";
        unsigned char *sig = NULL;
        size_t len = 0;
        char *error = NULL;

        ck_assert_int_eq(send_sign(rsa_path, "e1-h2", body, strlen(body), &sig, &len, &error), 0);
        ck_assert_uint_eq(len, 256);
        /* Over the queue name followed by the body, nothing else. */
        ck_assert(verify(rsa, "e1-h2{\"Body\": \"return\"}", sig, len));
        ck_assert(!verify(rsa, "{\"Body\": \"return\"}", sig, len));
        ck_assert(!verify(rsa, "e1-h3{\"Body\": \"return\"}", sig, len));
        free(sig);

        ck_assert_int_eq(send_sign(ec_path, "q", body, 1, &sig, &len, &error), SEND_SIGN_INVALID);
        ck_assert_ptr_nonnull(strstr(error, "is not an RSA key"));
        free(error);
        error = NULL;
        ck_assert_int_eq(send_sign(locked_path, "q", body, 1, &sig, &len, &error),
                         SEND_SIGN_INVALID);
        ck_assert_ptr_nonnull(strstr(error, "is not an unencrypted PEM private key"));
        free(error);
        error = NULL;
        ck_assert_int_eq(send_sign("/nonexistent/key.pem", "q", body, 1, &sig, &len, &error),
                         SEND_SIGN_INVALID);
        ck_assert_ptr_nonnull(strstr(error, "cannot open the signing key /nonexistent/key.pem"));
        free(error);

        unlink(rsa_path);
        unlink(ec_path);
        unlink(locked_path);
        free(rsa_path);
        free(ec_path);
        free(locked_path);
        EVP_PKEY_free(rsa);
        EVP_PKEY_free(ec);
}
END_TEST

static Suite *send_suite(void)
{
        Suite *s = suite_create("send");
        TCase *tc = tcase_create("plan");

        tcase_add_test(tc, test_spec_example);
        tcase_add_test(tc, test_mixed_files);
        tcase_add_test(tc, test_v1);
        tcase_add_loop_test(tc, test_defaults, 0, sizeof(defaults) / sizeof(defaults[0]));
        tcase_add_loop_test(tc, test_errors, 0, sizeof(errors) / sizeof(errors[0]));
        tcase_add_loop_test(tc, test_items, 0, sizeof(items) / sizeof(items[0]));
        tcase_add_loop_test(tc, test_paths, 0, sizeof(paths) / sizeof(paths[0]));
        tcase_add_test(tc, test_universal_newlines);
        tcase_add_test(tc, test_stamp);
        tcase_add_loop_test(tc, test_message_id, 0, sizeof(ids) / sizeof(ids[0]));
        suite_add_tcase(s, tc);

        tc = tcase_create("result");
        tcase_add_loop_test(tc, test_results, 0, sizeof(results) / sizeof(results[0]));
        suite_add_tcase(s, tc);

        tc = tcase_create("sign");
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_sign);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return check_run(send_suite());
}
