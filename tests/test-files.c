/* Tests for the files module: the on-disk layout of a plan's files, byte-exact
 * bodies, Base64 as Python decodes it, refusing Names and IDs that would
 * escape, Sha256 of inline files, and cleanup. Downloads are in
 * test-files-download.c. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files/files-internal.h"
#include "files/files.h"
#include "plan/plan.h"
#include "test-files.h"
#include "plan/plan-internal.h"
#include "util/base64.h"
#include "util/strbuf.h"
#include "test-lib.h"

/* --- layout ------------------------------------------------------------- */

START_TEST(test_layout)
{
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        _cleanup_(files_freep) Files *f = NULL;
        _cleanup_json_ json_t *plan = NULL;
        _cleanup_free_ char *root = pathf("%s/state/murano", storage);
        _cleanup_free_ char *cache = NULL, *path = NULL, *p = NULL;
        unsigned char all[256];
        char *data;
        size_t len;

        ck_assert_int_eq(
                plan_parse_file(TEST_DATA_DIR "/files/plan-layout.json", NULL, &plan, &err), 0);
        ck_assert_int_eq(plan_validate(plan, &err), 0);

        /* Missing parents are made; the cache dir is named by the plan ID. */
        ck_assert_int_eq(files_new(root, "0123456789abcdef0123456789abcdef", plan, NULL, NULL, &f),
                         0);
        cache = pathf("%s/files/0123456789abcdef0123456789abcdef", root);
        ck_assert_str_eq(files_cache_dir(f), cache);
        ck_assert_uint_eq(mode_of(cache) & 07777, 0700);
        free(p), p = pathf("%s/files", root);
        ck_assert_uint_eq(mode_of(p) & 07777, 0700);
        ck_assert(S_ISDIR(mode_of(root)));
        /* Lazy: nothing is written before a script asks. */
        free(p), p = pathf("%s/scriptFile", cache);
        ck_assert(!exists(p));

        ck_assert_int_eq(files_prepare_script(f, "deploy", &path, &err), 0);
        free(p), p = pathf("%s/deploy/deploy.sh", cache);
        ck_assert_str_eq(path, p);
        free(p), p = pathf("%s/scriptFile", cache);
        assert_link(path, p);
        data = slurp(path, &len);
        ck_assert_uint_eq(len, 10); /* "echo hello", no newline added */
        ck_assert_str_eq(data, "echo hello");
        free(data);
        ck_assert(S_ISREG(mode_of(p)));

        /* Names with sub-directories; CRLF kept. */
        free(p), p = pathf("%s/deploy/lib/common/util.sh", cache);
        _cleanup_free_ char *target = pathf("%s/a1b2c3d4e5f60718293a4b5c6d7e8f90", cache);
        assert_link(p, target);
        data = slurp(p, NULL);
        ck_assert_str_eq(data, "#!/bin/sh\r\nutil() { :; }\r\n");
        free(data);
        free(p), p = pathf("%s/deploy/lib/common", cache);
        ck_assert(S_ISDIR(mode_of(p)));

        /* The dictionary item {"binaryFile": ...}: Base64 wrapped at 76
         * columns with a final newline, all 256 byte values. */
        free(p), p = pathf("%s/deploy/data/all-bytes.bin", cache);
        free(target), target = pathf("%s/binaryFile", cache);
        assert_link(p, target);
        data = slurp(p, &len);
        for (int i = 0; i < 256; i++)
                all[i] = (unsigned char)i;
        ck_assert_uint_eq(len, 256);
        ck_assert(memcmp(data, all, 256) == 0);
        free(data);

        /* Chef: the folder; the shared file is not written again. */
        free(p), p = pathf("%s/a1b2c3d4e5f60718293a4b5c6d7e8f90", cache);
        FILE *fp = fopen(p, "w");
        ck_assert_ptr_nonnull(fp);
        fputs("changed by a script", fp);
        fclose(fp);
        free(path), path = NULL;
        ck_assert_int_eq(files_prepare_script(f, "cook", &path, &err), 0);
        free(p), p = pathf("%s/cook", cache);
        ck_assert_str_eq(path, p);
        free(p), p = pathf("%s/cook/lib/common/util.sh", cache);
        data = slurp(p, NULL);
        ck_assert_str_eq(data, "changed by a script");
        free(data);

        /* Puppet without files: the folder exists all the same. */
        free(path), path = NULL;
        ck_assert_int_eq(files_prepare_script(f, "puppet", &path, &err), 0);
        free(p), p = pathf("%s/puppet", cache);
        ck_assert_str_eq(path, p);
        ck_assert(S_ISDIR(mode_of(p)));

        /* putFile.sh's readlink gives the cached file. */
        free(path), path = NULL;
        ck_assert_int_eq(files_prepare_script(f, "putFile", &path, &err), 0);
        free(p), p = pathf("%s/putFile/destinationFile", cache);
        free(target), target = pathf("%s/destinationFile", cache);
        assert_link(p, target);
        data = slurp(p, NULL);
        ck_assert_str_eq(data, "hello\n");
        free(data);

        /* Calling again changes nothing and gives the same path. */
        free(path), path = NULL;
        ck_assert_int_eq(files_prepare_script(f, "deploy", &path, &err), 0);
        ck_assert_int_eq(files_prepare_script(f, "nosuch", &path, &err), -ENOENT);

        f = files_free(f);
        ck_assert(!exists(cache));
        free(p), p = pathf("%s/files", root);
        ck_assert(exists(p));
}
END_TEST

START_TEST(test_rerun_and_relative_storage)
{
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        _cleanup_(files_freep) Files *f = NULL;
        _cleanup_json_ json_t *plan = one_script_plan("[]", "");
        _cleanup_free_ char *stale = pathf("%s/files/p1/stale", storage);
        _cleanup_free_ char *path = NULL, *want = NULL, *cwd = getcwd(NULL, 0);

        /* A cache dir left from an earlier run of the plan is emptied. */
        _cleanup_free_ char *files_dir = pathf("%s/files", storage);
        _cleanup_free_ char *cache_dir = pathf("%s/files/p1", storage);
        ck_assert_int_eq(mkdir(files_dir, 0700), 0);
        ck_assert_int_eq(mkdir(cache_dir, 0755), 0);
        ck_assert_int_eq(close(open(stale, O_WRONLY | O_CREAT, 0644)), 0);

        /* A relative storage is made absolute, so the links are. */
        ck_assert_int_eq(chdir(storage), 0);
        ck_assert_int_eq(files_new(".", "p1", plan, NULL, NULL, &f), 0);
        ck_assert_int_eq(chdir(cwd), 0);
        ck_assert(!exists(stale));
        ck_assert_uint_eq(mode_of(cache_dir) & 07777, 0700);
        ck_assert_int_eq(files_prepare_script(f, "s", &path, &err), 0);
        want = pathf("%s/files/p1/ep", storage);
        assert_link(path, want);
}
END_TEST

START_TEST(test_unsafe_plan_id)
{
        _cleanup_(files_freep) Files *f = NULL;
        _cleanup_json_ json_t *plan = one_script_plan("[]", "");
        _cleanup_free_ char *keep = pathf("%s/keep", storage);
        _cleanup_free_ char *files_dir = pathf("%s/files/", storage);
        const char *ids[] = {"..", ".", "", "a/b", NULL};

        ck_assert_int_eq(close(open(keep, O_WRONLY | O_CREAT, 0644)), 0);
        for (size_t i = 0; i < ELEMENTSOF(ids); i++) {
                const char *name;

                ck_assert_int_eq(files_new(storage, ids[i], plan, NULL, NULL, &f), 0);
                ck_assert(exists(keep));
                ck_assert_int_eq(strncmp(files_cache_dir(f), files_dir, strlen(files_dir)), 0);
                name = files_cache_dir(f) + strlen(files_dir);
                ck_assert_uint_eq(strlen(name), 32);
                ck_assert_uint_eq(strspn(name, "0123456789abcdef"), 32);
                f = files_free(f);
        }
}
END_TEST

/* --- bodies --------------------------------------------------------------- */

/* The same plan parsed as the daemon parses it, with every run of a
 * Files' body left in the plan's text (plan_parse_json_kept(), threshold
 * 1 instead of 64 KiB), gives the same file or the same error. */
static void prepare_kept(const char *more_files, const char *name, const char *want_data,
                         size_t want_len, const PlanError *want_err, int want_r)
{
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        _cleanup_(plan_text_freep) PlanText *t = NULL;
        _cleanup_(files_freep) Files *f = NULL;
        _cleanup_json_ json_t *plan = NULL;
        _cleanup_free_ char *text = one_script_text("[\"x\"]", more_files), *path = NULL, *p = NULL,
                            *data = NULL;
        FilesOptions fo = FILES_OPTIONS_DEFAULT;
        size_t len = 0;

        ck_assert_int_eq(plan_parse_json_kept_runs(&text, strlen(text), NULL, 1, &plan, &t, &err),
                         0);
        /* At least "ep"'s body, "true", is kept. */
        ck_assert_ptr_nonnull(t);
        ck_assert_ptr_null(text);
        fo.plan_text = t;
        ck_assert_int_eq(files_new(storage, "p2", plan, NULL, &fo, &f), 0);
        ck_assert_int_eq(files_prepare_script(f, "s", &path, &err), want_r);
        if (want_r == 0) {
                p = pathf("%s/s/%s", files_cache_dir(f), name);
                data = slurp(p, &len);
                ck_assert_uint_eq(len, want_len);
                ck_assert(memcmp(data, want_data, len) == 0);
        } else {
                ck_assert_int_eq(err.code, want_err->code);
                ck_assert_str_eq(err.message, want_err->message);
        }
}

static void prepare_one(const char *more_files, const char *name, char **ret_data, size_t *ret_len,
                        PlanError *err, int want_r)
{
        _cleanup_(files_freep) Files *f = NULL;
        _cleanup_json_ json_t *plan = one_script_plan("[\"x\"]", more_files);
        _cleanup_free_ char *path = NULL, *p = NULL;

        ck_assert_int_eq(files_new(storage, "p1", plan, NULL, NULL, &f), 0);
        ck_assert_int_eq(files_prepare_script(f, "s", &path, err), want_r);
        if (want_r == 0) {
                p = pathf("%s/s/%s", files_cache_dir(f), name);
                *ret_data = slurp(p, ret_len);
                prepare_kept(more_files, name, *ret_data, *ret_len, NULL, want_r);
        } else
                prepare_kept(more_files, name, NULL, 0, err, want_r);
}

START_TEST(test_text_byte_exact)
{
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        char *data;
        size_t len;

        prepare_one("\"x\": {\"Name\": \"t\", \"BodyType\": \"Text\", \"Body\": \"a\\r\\nb\\r\\nno "
                    "end\"}",
                    "t", &data, &len, &err, 0);
        ck_assert_uint_eq(len, 12);
        ck_assert(memcmp(data, "a\r\nb\r\nno end", 12) == 0);
        free(data);
        prepare_one("\"x\": {\"Name\": \"t\", \"BodyType\": \"Text\", \"Body\": \"h\\u00e9\\n\"}",
                    "t", &data, &len, &err, 0);
        ck_assert_uint_eq(len, 4);
        ck_assert(memcmp(data, "h\xc3\xa9\n", 4) == 0);
        free(data);
        prepare_one("\"x\": {\"Name\": \"t\", \"BodyType\": \"Text\", \"Body\": \"\"}", "t", &data,
                    &len, &err, 0);
        ck_assert_uint_eq(len, 0);
        free(data);
}
END_TEST

START_TEST(test_base64_engine_style)
{
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        char *data;
        size_t len;

        /* The engine's own form: one line and "\n"; and PutFile's, without. */
        prepare_one("\"x\": {\"Name\": \"b\", \"BodyType\": \"Base64\", \"Body\": \"dGV4dA==\\n\"}",
                    "b", &data, &len, &err, 0);
        ck_assert_uint_eq(len, 4);
        ck_assert(memcmp(data, "text", 4) == 0);
        free(data);
        prepare_one("\"x\": {\"Name\": \"b\", \"BodyType\": \"Base64\", \"Body\": \"AP8A/w==\"}",
                    "b", &data, &len, &err, 0);
        ck_assert_uint_eq(len, 4);
        ck_assert(memcmp(data, "\x00\xff\x00\xff", 4) == 0);
        free(data);
        /* Escapes inside the Base64 text (an encoder that writes "\/", or
         * "\u0051" for Q), in the middle of a quantum: the runs around them
         * are kept in the plan's text, the escapes decoded by jansson. */
        prepare_one("\"x\": {\"Name\": \"b\", \"BodyType\": \"Base64\", \"Body\": "
                    "\"\\/\\/79\\u0051UJD\\u000a\"}",
                    "b", &data, &len, &err, 0);
        ck_assert_uint_eq(len, 6);
        ck_assert(memcmp(data,
                         "\xff\xfe\xfd"
                         "ABC",
                         6) == 0);
        free(data);
}
END_TEST

/* A body of many pieces (the file is decoded 64 KiB of text at a time),
 * wrapped at 76 characters as MIME writes it, so that pieces are cut in
 * the middle of quanta and of line breaks. */
START_TEST(test_base64_large)
{
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        _cleanup_free_ unsigned char *bytes = malloc(300001);
        _cleanup_free_ char *b64 = malloc(base64_encoded_len(300001)), *data = NULL;
        _cleanup_strbuf_ StrBuf file = STRBUF_INIT;
        uint32_t x = 88172645u;
        size_t k, len;

        ck_assert_ptr_nonnull(bytes);
        ck_assert_ptr_nonnull(b64);
        for (size_t i = 0; i < 300001; i++) {
                x ^= x << 13, x ^= x >> 17, x ^= x << 5;
                bytes[i] = (unsigned char)x;
        }
        k = base64_encode(b64, bytes, 300001);
        ck_assert_int_ge(strbuf_puts(&file, "\"x\": {\"Name\": \"b\", \"BodyType\": \"Base64\", "
                                            "\"Body\": \""),
                         0);
        for (size_t i = 0; i < k; i += 76) {
                ck_assert_int_ge(strbuf_append(&file, b64 + i, k - i < 76 ? k - i : 76), 0);
                ck_assert_int_ge(strbuf_puts(&file, "\\n"), 0);
        }
        ck_assert_int_ge(strbuf_puts(&file, "\"}"), 0);
        prepare_one(file.data, "b", &data, &len, &err, 0);
        ck_assert_uint_eq(len, 300001);
        ck_assert(memcmp(data, bytes, len) == 0);
}
END_TEST

/* As the reference, which opens the file before it decodes: an invalid
 * body leaves the file there, empty. */
START_TEST(test_base64_invalid_empty)
{
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        _cleanup_(files_freep) Files *f = NULL;
        _cleanup_json_ json_t *plan = one_script_plan(
                "[\"x\"]", "\"x\": {\"Name\": \"b\", \"BodyType\": \"Base64\", \"Body\": "
                           "\"QUJD\\nQUJDRA\\n\"}");
        _cleanup_free_ char *path = NULL, *p = NULL, *data = NULL;
        size_t len = 1;

        ck_assert_int_eq(files_new(storage, "p1", plan, NULL, NULL, &f), 0);
        ck_assert_int_eq(files_prepare_script(f, "s", &path, &err), FILES_FAILED);
        ck_assert_str_eq(err.message, "Incorrect padding");
        p = pathf("%s/x", files_cache_dir(f));
        data = slurp(p, &len);
        ck_assert_uint_eq(len, 0);
}
END_TEST

START_TEST(test_base64_invalid)
{
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;

        prepare_one("\"x\": {\"Name\": \"b\", \"BodyType\": \"Base64\", \"Body\": \"dGV4d\\n\"}",
                    "b", NULL, NULL, &err, FILES_FAILED);
        ck_assert_int_eq(err.code, 1);
        ck_assert_str_eq(err.message, "Invalid base64-encoded string: number of data characters "
                                      "(5) cannot be 1 more than a multiple of 4");
        prepare_one("\"x\": {\"Name\": \"b\", \"BodyType\": \"Base64\", \"Body\": \"dGV4dA\"}", "b",
                    NULL, NULL, &err, FILES_FAILED);
        ck_assert_int_eq(err.code, 1);
        ck_assert_str_eq(err.message, "Incorrect padding");
        prepare_one("\"x\": {\"Name\": \"b\", \"BodyType\": \"Base64\", \"Body\": 5}", "b", NULL,
                    NULL, &err, FILES_FAILED);
        ck_assert_str_eq(err.message,
                         "argument should be a bytes-like object or ASCII string, not 'int'");
        prepare_one("\"x\": {\"Name\": \"b\", \"BodyType\": \"Text\", \"Body\": null}", "b", NULL,
                    NULL, &err, FILES_FAILED);
        ck_assert_str_eq(err.message, "write() argument must be str, not NoneType");
}
END_TEST

/* --- names ---------------------------------------------------------------- */

START_TEST(test_name_through_symlink)
{
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        _cleanup_(files_freep) Files *f = NULL;
        _cleanup_json_ json_t *plan = one_script_plan(
                "[\"x\", \"y\"]", "\"x\": {\"Name\": \"a\", \"BodyType\": \"Text\", \"Body\": "
                                  "\"1\"}, \"y\": {\"Name\": \"a/b\", \"BodyType\": \"Text\", "
                                  "\"Body\": \"2\"}");
        _cleanup_free_ char *path = NULL, *p = NULL;

        ck_assert_int_eq(files_new(storage, "p1", plan, NULL, NULL, &f), 0);
        ck_assert_int_eq(files_prepare_script(f, "s", &path, &err), FILES_FAILED);
        ck_assert_int_eq(err.code, 1);
        ck_assert_str_eq(err.message, "Invalid Name in file y: a/b goes through the symbolic link "
                                      "a, which is refused");
        p = pathf("%s/x", files_cache_dir(f));
        ck_assert(S_ISREG(mode_of(p)));
        free(p), p = pathf("%s/b", files_cache_dir(f));
        ck_assert(!exists(p));
}
END_TEST

START_TEST(test_name_through_planted_symlink)
{
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        _cleanup_(files_freep) Files *f = NULL;
        _cleanup_json_ json_t *plan = one_script_plan(
                "[\"y\"]", "\"y\": {\"Name\": \"etc/sub/evil\", \"BodyType\": \"Text\", "
                           "\"Body\": \"2\"}");
        _cleanup_free_ char *outside = pathf("%s/outside", storage);
        _cleanup_free_ char *path = NULL, *p = NULL, *dir = NULL;

        /* An earlier script of the plan made s/etc a symlink out. */
        ck_assert_int_eq(mkdir(outside, 0700), 0);
        ck_assert_int_eq(files_new(storage, "p1", plan, NULL, NULL, &f), 0);
        dir = pathf("%s/s", files_cache_dir(f));
        ck_assert_int_eq(mkdir(dir, 0700), 0);
        p = pathf("%s/s/etc", files_cache_dir(f));
        ck_assert_int_eq(symlink(outside, p), 0);
        ck_assert_int_eq(files_prepare_script(f, "s", &path, &err), FILES_FAILED);
        ck_assert_str_eq(err.message, "Invalid Name in file y: etc/sub/evil goes through the "
                                      "symbolic link etc, which is refused");
        free(p), p = pathf("%s/sub", outside);
        ck_assert(!exists(p));

        /* The script folder itself replaced by a symlink. */
        f = files_free(f);
        ck_assert_int_eq(files_new(storage, "p1", plan, NULL, NULL, &f), 0);
        free(dir), dir = pathf("%s/s", files_cache_dir(f));
        ck_assert_int_eq(symlink(outside, dir), 0);
        ck_assert_int_eq(files_prepare_script(f, "s", &path, &err), FILES_FAILED);
        free(p), p = pathf("[Errno 17] File exists: '%s'", dir);
        ck_assert_str_eq(err.message, p);
        free(p), p = pathf("%s/etc", outside);
        ck_assert(!exists(p));
        f = files_free(f);
        ck_assert(S_ISDIR(mode_of(outside))); /* removal did not follow the link */
}
END_TEST

START_TEST(test_planted_longer_file)
{
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        _cleanup_(files_freep) Files *f = NULL;
        _cleanup_json_ json_t *plan = one_script_plan(
                "[\"y\"]", "\"y\": {\"Name\": \"n\", \"BodyType\": \"Text\", \"Body\": \"2\"}");
        _cleanup_free_ char *path = NULL, *p = NULL, *data = NULL;
        FILE *fp;

        /* An earlier script left a longer file of its own at the name: it
         * is written over, nothing of it left after the new body. */
        ck_assert_int_eq(files_new(storage, "p1", plan, NULL, NULL, &f), 0);
        p = pathf("%s/y", files_cache_dir(f));
        fp = fopen(p, "w");
        ck_assert_ptr_nonnull(fp);
        fputs("left behind by a script", fp);
        fclose(fp);
        ck_assert_int_eq(files_prepare_script(f, "s", &path, &err), 0);
        data = slurp(p, NULL);
        ck_assert_str_eq(data, "2");
}
END_TEST

/* What an earlier script put at the name of a file not yet written: a
 * hard link to a file elsewhere (which must not be truncated or written
 * through), a symlink (to a file elsewhere, or to nothing) or a FIFO. Each
 * is refused as the open meets it, and nothing outside is written. */
START_TEST(test_planted_special)
{
        static const char *const want[] = {"[Errno 17] File exists",
                                           "[Errno 40] Too many levels of symbolic links",
                                           "[Errno 40] Too many levels of symbolic links",
                                           "[Errno 6] No such device or address"};
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        _cleanup_(files_freep) Files *f = NULL;
        _cleanup_json_ json_t *plan = one_script_plan(
                "[\"y\"]", "\"y\": {\"Name\": \"n\", \"BodyType\": \"Text\", \"Body\": \"2\"}");
        _cleanup_free_ char *outside = pathf("%s/precious", storage),
                            *gone = pathf("%s/gone", storage);
        _cleanup_free_ char *path = NULL, *p = NULL, *msg = NULL, *data = NULL;
        FILE *fp;

        fp = fopen(outside, "w");
        ck_assert_ptr_nonnull(fp);
        fputs("keep me", fp);
        fclose(fp);
        ck_assert_int_eq(files_new(storage, "p1", plan, NULL, NULL, &f), 0);
        p = pathf("%s/y", files_cache_dir(f));
        if (_i == 0)
                ck_assert_int_eq(link(outside, p), 0);
        else if (_i == 1)
                ck_assert_int_eq(symlink(outside, p), 0);
        else if (_i == 2)
                ck_assert_int_eq(symlink(gone, p), 0);
        else
                ck_assert_int_eq(mkfifo(p, 0600), 0);
        ck_assert_int_eq(files_prepare_script(f, "s", &path, &err), FILES_FAILED);
        msg = pathf("%s: '%s'", want[_i], p);
        ck_assert_str_eq(err.message, msg);
        data = slurp(outside, NULL);
        ck_assert_str_eq(data, "keep me");
        ck_assert(!exists(gone));
}
END_TEST

static const struct {
        const char *file;   /* the extra file "y" */
        const char *items;  /* the script's Files */
        const char *script; /* the script name */
        int code;
        const char *message;
} bad_cases[] = {
        {"\"y\": {\"Name\": \"../../etc/x\", \"BodyType\": \"Text\", \"Body\": \"\"}", "[\"y\"]",
         "s", 2, "Invalid Name in file y: contains a '..' component"},
        {"\"y\": {\"Name\": \"/etc/x\", \"BodyType\": \"Text\", \"Body\": \"\"}", "[\"y\"]", "s", 2,
         "Invalid Name in file y: absolute path"},
        {"\"y\": {\"Name\": \"d/\", \"BodyType\": \"Text\", \"Body\": \"\"}", "[\"y\"]", "s", 2,
         "Invalid Name in file y: does not end in a file name"},
        {"\"y\": {\"Name\": 5, \"BodyType\": \"Text\", \"Body\": \"\"}", "[\"y\"]", "s", 2,
         "Invalid Name in file y: not a string"},
        {"\"../y\": {\"Name\": \"n\", \"BodyType\": \"Text\", \"Body\": \"\"}", "[\"../y\"]", "s",
         1, "Invalid file ID '../y': contains a '/'"},
        {"\"..\": {\"Name\": \"n\", \"BodyType\": \"Text\", \"Body\": \"\"}", "[\"..\"]", "s", 1,
         "Invalid file ID '..': is '.' or '..'"},
        {"\"y\": {\"Name\": \"n\", \"BodyType\": \"Text\", \"Body\": \"\"}", "[\"z\"]", "s", 1,
         "'z'"},
        {"\"y\": {\"Name\": \"n\", \"BodyType\": \"Text\"}", "[\"y\"]", "s", 1, "'Body'"},
        {"\"y\": \"str\"", "[\"y\"]", "s", 1, "'str' object has no attribute 'get'"},
        {"\"y\": {\"Name\": \"n\", \"BodyType\": \"Text\", \"Body\": \"\"}", "[[\"y\"]]", "s", 1,
         "unhashable type: 'list'"},
        {"\"y\": {\"Name\": \"n\", \"BodyType\": \"Text\", \"Body\": \"\"}", "[{}]", "s", 1,
         "list index out of range"},
        {"\"y\": {\"Name\": \"n\", \"BodyType\": \"Text\", \"Body\": \"\"}", "[5]", "s", 1, "5"},
        {"\"y\": {\"Name\": \"n\", \"BodyType\": \"Text\", \"Body\": \"\"}", "7", "s", 1,
         "'int' object is not iterable"},
        /* A file ID equal to the script name: the file is written first,
         * then the folder cannot be made (the reference's order). */
        {"\"s\": {\"Name\": \"n\", \"BodyType\": \"Text\", \"Body\": \"\"}", "[\"s\"]", "s", 1,
         "[Errno 17] File exists: 'CACHE/s'"},
        {"\"y\": {\"Name\": \"n\", \"BodyType\": \"Text\", \"Body\": \"\"}", "[\"y\"]", "..", 1,
         "Invalid script name '..': is '.' or '..'"},
};

START_TEST(test_bad_files)
{
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        _cleanup_(files_freep) Files *f = NULL;
        _cleanup_json_ json_t *plan = NULL;
        _cleanup_free_ char *path = NULL, *text = NULL, *want = NULL, *leak = NULL;
        const char *cache_tag;

        text = pathf("{\"ID\": \"p1\", \"Scripts\": {\"%s\": {\"Type\": \"Application\", "
                     "\"EntryPoint\": \"ep\", \"Files\": %s}}, \"Files\": {\"ep\": {\"Name\": "
                     "\"run.sh\", \"BodyType\": \"Text\", \"Body\": \"true\"}, %s}}",
                     bad_cases[_i].script, bad_cases[_i].items, bad_cases[_i].file);
        plan = load_plan(text);
        ck_assert_int_eq(files_new(storage, "p1", plan, NULL, NULL, &f), 0);
        ck_assert_int_eq(files_prepare_script(f, bad_cases[_i].script, &path, &err), FILES_FAILED);
        ck_assert_ptr_null(path);
        ck_assert_int_eq(err.code, bad_cases[_i].code);
        cache_tag = strstr(bad_cases[_i].message, "CACHE");
        if (cache_tag)
                want = pathf("%.*s%s%s", (int)(cache_tag - bad_cases[_i].message),
                             bad_cases[_i].message, files_cache_dir(f), cache_tag + 5);
        ck_assert_str_eq(err.message, want ? want : bad_cases[_i].message);
        /* Nothing escaped: storage holds only files/. */
        leak = pathf("%s/etc", storage);
        ck_assert(!exists(leak));
}
END_TEST

/* --- Sha256 --------------------------------------------------------------- */

START_TEST(test_sha256_inline)
{
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        char *data;
        size_t len;

        /* sha256("hello\n"), in capitals: case does not matter. */
        prepare_one("\"x\": {\"Name\": \"t\", \"BodyType\": \"Base64\", \"Body\": \"aGVsbG8K\", "
                    "\"Sha256\": "
                    "\"5891B5B522D5DF086D0FF0B110FBD9D21BB4FC7163AF34D08286A2E846F6BE03\"}",
                    "t", &data, &len, &err, 0);
        ck_assert_uint_eq(len, 6);
        free(data);
        prepare_one("\"x\": {\"Name\": \"t\", \"BodyType\": \"Text\", \"Body\": \"hello\", "
                    "\"Sha256\": "
                    "\"5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03\"}",
                    "t", NULL, NULL, &err, FILES_FAILED);
        ck_assert_int_eq(err.code, 1);
        ck_assert_str_eq(err.message,
                         "Checksum mismatch for file x: expected "
                         "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03, got "
                         "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
}
END_TEST

/* --- cleanup -------------------------------------------------------------- */

START_TEST(test_cleanup)
{
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        _cleanup_(files_freep) Files *f = NULL;
        _cleanup_json_ json_t *plan = one_script_plan("[]", "");
        _cleanup_free_ char *outside = pathf("%s/outside", storage);
        _cleanup_free_ char *keep = pathf("%s/outside/keep", storage);
        _cleanup_free_ char *path = NULL, *p = NULL, *cache = NULL;
        _cleanup_strbuf_ StrBuf deep = STRBUF_INIT;
        DIR *d;
        int n = 0;

        ck_assert_int_eq(mkdir(outside, 0700), 0);
        ck_assert_int_eq(close(open(keep, O_WRONLY | O_CREAT, 0644)), 0);
        ck_assert_int_eq(files_new(storage, "p1", plan, NULL, NULL, &f), 0);
        ck_assert_int_eq(files_prepare_script(f, "s", &path, &err), 0);
        cache = strdup(files_cache_dir(f));

        /* What scripts may leave: a tree deeper than the remover keeps
         * open, a directory without permissions, and links out. */
        ck_assert_int_eq(strbuf_printf(&deep, "%s/s", cache), 0);
        for (int i = 0; i < 100; i++) {
                ck_assert_int_eq(strbuf_puts(&deep, "/d"), 0);
                ck_assert_int_eq(mkdir(deep.data, 0755), 0);
        }
        p = pathf("%s/f", deep.data);
        ck_assert_int_eq(close(open(p, O_WRONLY | O_CREAT, 0644)), 0);
        free(p), p = pathf("%s/s/locked", cache);
        ck_assert_int_eq(mkdir(p, 0700), 0);
        free(p), p = pathf("%s/s/locked/f", cache);
        ck_assert_int_eq(close(open(p, O_WRONLY | O_CREAT, 0644)), 0);
        free(p), p = pathf("%s/s/locked", cache);
        ck_assert_int_eq(chmod(p, 0), 0);
        free(p), p = pathf("%s/s/out", cache);
        ck_assert_int_eq(symlink(outside, p), 0);

        f = files_free(f);
        ck_assert(!exists(cache));
        ck_assert(exists(keep));
        free(p), p = pathf("%s/files", storage);
        d = opendir(p);
        ck_assert_ptr_nonnull(d);
        for (struct dirent *de; (de = readdir(d));)
                n += !streq(de->d_name, ".") && !streq(de->d_name, "..");
        closedir(d);
        ck_assert_int_eq(n, 0);
}
END_TEST

/* Whatever holds the cache dir's name at the start, a symlink (to a
 * directory outside, or to nothing) or a file, is removed, never followed,
 * and the cache dir made in its place. */
START_TEST(test_cache_name_taken)
{
        _cleanup_json_ json_t *plan = one_script_plan("[]", "");
        _cleanup_free_ char *outside = pathf("%s/outside", storage);
        _cleanup_free_ char *keep = pathf("%s/outside/keep", storage);
        _cleanup_free_ char *files_dir = pathf("%s/files", storage);
        _cleanup_free_ char *cache = pathf("%s/files/p1", storage);

        ck_assert_int_eq(mkdir(outside, 0700), 0);
        ck_assert_int_eq(close(open(keep, O_WRONLY | O_CREAT, 0644)), 0);
        ck_assert_int_eq(mkdir(files_dir, 0700), 0);
        for (int i = 0; i < 3; i++) {
                Files *f = NULL;

                if (i == 0)
                        ck_assert_int_eq(symlink(outside, cache), 0);
                else if (i == 1)
                        ck_assert_int_eq(symlink("/nonexistent", cache), 0);
                else
                        ck_assert_int_eq(close(open(cache, O_WRONLY | O_CREAT, 0644)), 0);
                ck_assert_int_eq(files_new(storage, "p1", plan, NULL, NULL, &f), 0);
                ck_assert_uint_eq(mode_of(cache) & (S_IFMT | 07777), S_IFDIR | 0700);
                ck_assert(exists(keep));
                f = files_free(f);
                ck_assert(!exists(cache));
                ck_assert(exists(keep));
        }
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_test(tc, test_layout);
        tcase_add_test(tc, test_rerun_and_relative_storage);
        tcase_add_test(tc, test_unsafe_plan_id);
        tcase_add_test(tc, test_text_byte_exact);
        tcase_add_test(tc, test_base64_engine_style);
        tcase_add_test(tc, test_base64_invalid);
        tcase_add_test(tc, test_base64_large);
        tcase_add_test(tc, test_base64_invalid_empty);
        tcase_add_test(tc, test_name_through_symlink);
        tcase_add_test(tc, test_name_through_planted_symlink);
        tcase_add_test(tc, test_planted_longer_file);
        tcase_add_loop_test(tc, test_planted_special, 0, 4);
        tcase_add_loop_test(tc, test_bad_files, 0, ELEMENTSOF(bad_cases));
        tcase_add_test(tc, test_sha256_inline);
        tcase_add_test(tc, test_cleanup);
        tcase_add_test(tc, test_cache_name_taken);
}

int main(void)
{
        return check_main_one("files", "core", setup, teardown, 60, add_tests);
}
