/* Tests for the executors' common part and the Application executor. The
 * expected texts are the reference agent's (its executors, its unit tests,
 * and what CPython 3.11 prints), spelled out. */
#include "test-exec.h"

/* ---- output text: decoding, line breaks, strip ---- */

static const struct {
        const char *in;
        size_t len;
        const char *out; /* bytes.decode("utf-8", "replace") with newlines translated */
} decode_cases[] = {
        {"plain", 5, "plain"},
        {"a\r\nb\rc\n\r", 9, "a\nb\nc\n\n"},
        {"\xe2\x82", 2, "\xef\xbf\xbd"},
        {"\xe2\x82"
         "A",
         3,
         "\xef\xbf\xbd"
         "A"},
        {"\xf0\x80\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
        {"\xed\xa0\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
        {"\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd"},
        {"\xf4\x90\x80\x80", 4, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
        {"a\xf0\x9f\x98", 4, "a\xef\xbf\xbd"},
        {"\xf0\x9f\x98\x80\xc3\xa9", 6, "\xf0\x9f\x98\x80\xc3\xa9"},
        {"\xff\r", 2, "\xef\xbf\xbd\n"},
};

START_TEST(test_text_decode)
{
        StrBuf b = STRBUF_INIT;

        ck_assert_int_eq(exec_text_decode(decode_cases[_i].in, decode_cases[_i].len, &b), 0);
        ck_assert_str_eq(b.data ? b.data : "", decode_cases[_i].out);
        strbuf_free(&b);
}
END_TEST

START_TEST(test_text_result)
{
        static const struct {
                const char *in;
                const char *json;
        } cases[] = {
                {"", "null"},
                {" \t\n", "\"\""}, /* stripped, but not None: it was not empty */
                {"  hello  \n", "\"hello\""},
                {"\xc2\xa0x y\xe3\x80\x80\xe2\x80\xa8", "\"x y\""},
                {"\x1c\x1f"
                 "a"
                 "\xc2\x85",
                 "\"a\""},
                {"\xe2\x80\x8b"
                 "a",
                 "\"\\u200ba\""}, /* U+200B is not whitespace */
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                json_t *v = NULL;
                char *s;
                ck_assert_int_eq(exec_text_result(cases[i].in, strlen(cases[i].in), &v), 0);
                s = dumps(v);
                ck_assert_str_eq(s, cases[i].json);
                free(s);
                json_decref(v);
        }
}
END_TEST

START_TEST(test_text_error_lines)
{
        const char text[] = "ok\nan ERROR here\r\nx\vERROR2\x1e"
                            "y\xe2\x80\xa8"
                            "ERROR3";
        StrBuf b = STRBUF_INIT;

        ck_assert_int_eq(exec_text_error_lines(text, sizeof text - 1, &b), 0);
        ck_assert_str_eq(b.data, "an ERROR here\nERROR2\nERROR3\n");
        strbuf_reset(&b);
        ck_assert_int_eq(exec_text_error_lines("error\nERRO R\n", 13, &b), 0);
        ck_assert_uint_eq(b.len, 0);
        strbuf_free(&b);
}
END_TEST

START_TEST(test_paths)
{
        static const struct {
                const char *in, *norm, *dir, *word;
        } cases[] = {
                {"/a/b/c", "/a/b/c", "/a/b", "/a/b/c"},
                {"/a//b/./c/", "/a/b/c", "/a//b/./c", "/a//b/./c/"},
                {"/a/../../b", "/b", "/a/../..", "/a/../../b"},
                {"//a/b", "//a/b", "//a", "//a/b"},
                {"///a", "/a", "///", "///a"},
                {"/", "/", "/", "/"},
                {"/x y/it's", "/x y/it's", "/x y", "'/x y/it'\"'\"'s'"},
                {"/a@b%c+d=e:f,g.h-i_j", "/a@b%c+d=e:f,g.h-i_j", "/", "/a@b%c+d=e:f,g.h-i_j"},
        };
        char *s;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                StrBuf w = STRBUF_INIT;
                ck_assert_int_eq(exec_path_normalize(cases[i].in, &s), 0);
                ck_assert_str_eq(s, cases[i].norm);
                free(s);
                s = exec_path_dirname(cases[i].in);
                ck_assert_str_eq(s, cases[i].dir);
                free(s);
                ck_assert_int_eq(exec_shell_word(&w, cases[i].in), 0);
                ck_assert_str_eq(w.data, cases[i].word);
                strbuf_free(&w);
        }
        ck_assert_int_eq(exec_path_normalize("a/b", &s), -EINVAL);
        s = exec_path_join("/a/b", "c/d");
        ck_assert_str_eq(s, "/a/b/c/d");
        free(s);
        s = exec_path_join("/a/b/", "/abs");
        ck_assert_str_eq(s, "/abs");
        free(s);
        s = exec_path_join("/a/b/", "");
        ck_assert_str_eq(s, "/a/b/");
        free(s);
}
END_TEST

/* ---- Application ---- */

START_TEST(test_app_runs_entry_file)
{
        char *path = entry_file("deploy.sh", "#!/bin/sh\necho '  hello  '\necho ' warn ' >&2\n");
        char *target = tmp_path("files-", "deploy.sh");
        Exec *e = new_exec("Application", "ID2", NULL);
        Outcome o = call(e, path, NULL, NULL, NULL);
        struct stat st;

        ck_assert_int_eq(o.r, 0);
        ck_assert_str_eq(o.result,
                         "{\"exitCode\": 0, \"stdout\": \"hello\", \"stderr\": \"warn\"}");
        ck_assert_int_eq(exec_type(e), EXEC_APPLICATION);
        /* The reference's command text, trailing space included. */
        ck_assert_str_eq(fake.argv, "/bin/sh|-c|./\"deploy.sh\" ");
        ck_assert_str_eq(fake.cwd, deploy);
        ck_assert_str_eq(fake.what, "script deploy");
        ck_assert(fake.capture_stdout && fake.capture_stderr);
        /* os.chdir(dir) of the reference becomes the plan's directory. */
        ck_assert_str_eq(o.cwd, deploy);
        /* chmod(0500) went through the symlink to the file. */
        ck_assert_int_eq(stat(target, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0500);
        ck_assert_int_eq(lstat(path, &st), 0);
        ck_assert(S_ISLNK(st.st_mode));
        outcome_clear(&o);
        exec_free(e);
        free(target);
        free(path);
}
END_TEST

/* Each case runs its own entry file with some arguments and options. */
static const struct {
        const char *body;
        const char *args;
        const char *kwargs;
        const char *options;
        const char *result;
} app_cases[] = {
        /* Output: empty becomes null; whitespace-only is "" as in Python. */
        {"#!/bin/sh\ntrue\n", NULL, NULL, NULL,
         "{\"exitCode\": 0, \"stdout\": null, \"stderr\": null}"},
        {"#!/bin/sh\nprintf '  \\n\\t'\n", NULL, NULL, NULL,
         "{\"exitCode\": 0, \"stdout\": \"\", \"stderr\": null}"},
        {"#!/bin/sh\nprintf 'a\\r\\nb\\rc\\r\\n'\n", NULL, NULL, NULL,
         "{\"exitCode\": 0, \"stdout\": \"a\\nb\\nc\", \"stderr\": null}"},
        {"#!/bin/sh\nprintf '\\377ok\\342\\202'\n", NULL, NULL, NULL,
         "{\"exitCode\": 0, \"stdout\": \"\\ufffdok\\ufffd\", \"stderr\": null}"},
        {"#!/bin/sh\nprintf '\\302\\240x\\343\\200\\200'\n", NULL, NULL, NULL,
         "{\"exitCode\": 0, \"stdout\": \"x\", \"stderr\": null}"},
        {"#!/bin/sh\nprintf 'a\\000b'\n", NULL, NULL, NULL,
         "{\"exitCode\": 0, \"stdout\": \"a\\u0000b\", \"stderr\": null}"},
        /* No shebang, no final newline: sh runs it after ENOEXEC. */
        {"echo hello", NULL, NULL, NULL,
         "{\"exitCode\": 0, \"stdout\": \"hello\", \"stderr\": null}"},
        /* The commandline is raw shell text after str(). */
        {"#!/bin/sh\nprintf '%s|' $# \"$@\"\n", "[\"'a b' c\"]", NULL, NULL,
         "{\"exitCode\": 0, \"stdout\": \"2|a b|c|\", \"stderr\": null}"},
        {"#!/bin/sh\nprintf '%s|' $# \"$@\"\n", "[5]", NULL, NULL,
         "{\"exitCode\": 0, \"stdout\": \"1|5|\", \"stderr\": null}"},
        {"#!/bin/sh\nprintf '%s|' $# \"$@\"\n", "[true]", NULL, NULL,
         "{\"exitCode\": 0, \"stdout\": \"1|True|\", \"stderr\": null}"},
        {"#!/bin/sh\nprintf '%s|' $# \"$@\"\n", "[null]", NULL, NULL,
         "{\"exitCode\": 0, \"stdout\": \"1|None|\", \"stderr\": null}"},
        {"#!/bin/sh\nprintf '%s|' $# \"$@\"\n", "[[\"a\", \"b\"]]", NULL, NULL,
         "{\"exitCode\": 0, \"stdout\": \"2|[a,|b]|\", \"stderr\": null}"},
        {"#!/bin/sh\nprintf '%s|' $# \"$@\"\n", "[{\"k\": 1.5}]", NULL, NULL,
         "{\"exitCode\": 0, \"stdout\": \"2|{k:|1.5}|\", \"stderr\": null}"},
        {"#!/bin/sh\nprintf '%s|' $# \"$@\"\n", NULL, "{\"commandline\": \"x\"}", NULL,
         "{\"exitCode\": 0, \"stdout\": \"1|x|\", \"stderr\": null}"},
        /* input is accepted and ignored: stdin is not a pipe. */
        {"#!/bin/sh\nprintf '%s|' $# \"$@\"\ncat\n", "[\"x\", \"data\"]", NULL, NULL,
         "{\"exitCode\": 0, \"stdout\": \"1|x|\", \"stderr\": null}"},
        {"#!/bin/sh\nprintf '%s|' $# \"$@\"\n", NULL, "{\"input\": \"y\", \"function\": null}",
         NULL, NULL},
        /* Exit codes, with verifyExitcode off. */
        {"#!/bin/sh\necho out\nexit 3\n", NULL, NULL, "{\"verifyExitcode\": false}",
         "{\"exitCode\": 3, \"stdout\": \"out\", \"stderr\": null}"},
        {"#!/bin/sh\necho out\n", "[\"; kill -9 $$\"]", NULL, "{\"verifyExitcode\": 0}",
         "{\"exitCode\": -9, \"stdout\": \"out\", \"stderr\": null}"},
        /* Capture options, with Python's truth values. */
        {"#!/bin/sh\necho o\necho e >&2\n", NULL, NULL, "{\"captureStdout\": false}",
         "{\"exitCode\": 0, \"stdout\": null, \"stderr\": \"e\"}"},
        {"#!/bin/sh\necho o\necho e >&2\n", NULL, NULL, "{\"captureStderr\": false}",
         "{\"exitCode\": 0, \"stdout\": \"o\", \"stderr\": null}"},
        {"#!/bin/sh\necho o\necho e >&2\n", NULL, NULL,
         "{\"captureStdout\": \"\", \"captureStderr\": null}",
         "{\"exitCode\": 0, \"stdout\": null, \"stderr\": null}"},
        {"#!/bin/sh\necho o\necho e >&2\n", NULL, NULL,
         "{\"captureStdout\": \"false\", \"captureStderr\": [0]}",
         "{\"exitCode\": 0, \"stdout\": \"o\", \"stderr\": \"e\"}"},
        {"#!/bin/sh\necho o\necho e >&2\n", NULL, NULL, "[]",
         "{\"exitCode\": 0, \"stdout\": \"o\", \"stderr\": \"e\"}"},
};

START_TEST(test_app_cases)
{
        char *path = entry_file("run.sh", app_cases[_i].body);
        Exec *e = new_exec("Application", "ID2", app_cases[_i].options);
        Outcome o = call(e, path, NULL, app_cases[_i].args, app_cases[_i].kwargs);

        if (!app_cases[_i].result) {
                check_error(&o, 1,
                            "ApplicationExecutor.run() got multiple values for argument "
                            "'function'",
                            NULL);
        } else {
                ck_assert_int_eq(o.r, 0);
                ck_assert_str_eq(o.result, app_cases[_i].result);
        }
        outcome_clear(&o);
        exec_free(e);
        free(path);
}
END_TEST

START_TEST(test_app_verify_exitcode)
{
        char *path = entry_file("run.sh", "#!/bin/sh\necho out\necho err >&2\nexit 3\n");
        Exec *e = new_exec("Application", "ID2", "{\"verifyExitcode\": true}");
        Outcome o = call(e, path, "anything", NULL, NULL);

        check_error(&o, 100, "Script deploy returned error code",
                    "{\"exitCode\": 3, \"stdout\": \"out\", \"stderr\": \"err\"}");
        outcome_clear(&o);
        o = call(e, path, NULL, "[\"; kill -TERM $$\"]", NULL);
        check_error(&o, 100, "Script deploy returned error code",
                    "{\"exitCode\": -15, \"stdout\": \"out\", \"stderr\": \"err\"}");
        outcome_clear(&o);
        exec_free(e);
        free(path);
}
END_TEST

/* Calls that do not fit the signatures, with CPython 3.11's messages. */
static const struct {
        const char *type;
        const char *function;
        const char *args;
        const char *kwargs;
        const char *message;
} type_errors[] = {
        {"Application", NULL, "[1, 2, 3]", NULL,
         "ApplicationExecutor.run() takes from 2 to 4 positional arguments but 5 were given"},
        {"Application", "f", "[1, 2, 3, 4]", NULL,
         "ApplicationExecutor.run() takes from 2 to 4 positional arguments but 6 were given"},
        {"Application", NULL, NULL, "{\"x\": 1}",
         "ApplicationExecutor.run() got an unexpected keyword argument 'x'"},
        {"Application", NULL, "[1]", "{\"commandline\": 2}",
         "ApplicationExecutor.run() got multiple values for argument 'commandline'"},
        {"Application", NULL, "[1, 2, 3]", "{\"input\": 1}",
         "ApplicationExecutor.run() got multiple values for argument 'input'"},
        {"Application", NULL, "[1, 2, 3]", "{\"zz\": 1, \"input\": 1}",
         "ApplicationExecutor.run() got an unexpected keyword argument 'zz'"},
        {"Application", NULL, NULL, "{\"name\": 1, \"self\": 2}",
         "ScriptRunner.__call__() got multiple values for argument 'self'"},
        {"Application", "f", NULL, "{\"self\": 2}",
         "FunctionRunner.__call__() got multiple values for argument 'self'"},
        {"Application", "f", NULL, "{\"name\": 1}",
         "ScriptRunner.execute_function() got multiple values for argument 'name'"},
        {"Chef", NULL, NULL, "{\"commandline\": \"x\"}",
         "ChefExecutor.run() got an unexpected keyword argument 'commandline'"},
        {"Chef", NULL, "[{}]", "{\"recipe_attributes\": {}}",
         "ChefExecutor.run() got multiple values for argument 'recipe_attributes'"},
        {"Puppet", NULL, "[1, 2, 3]", NULL,
         "PuppetExecutor.run() takes from 2 to 4 positional arguments but 5 were given"},
};

START_TEST(test_type_errors)
{
        char *path = entry_file("run.sh", "#!/bin/sh\n");
        bool app = streq(type_errors[_i].type, "Application");
        Exec *e = new_exec(type_errors[_i].type, app ? "ID2" : "m::r", NULL);
        Outcome o = call(e, app ? path : deploy, type_errors[_i].function, type_errors[_i].args,
                         type_errors[_i].kwargs);

        check_error(&o, 1, type_errors[_i].message, NULL);
        ck_assert_int_eq(fake.calls, 0);
        ck_assert_ptr_null(o.cwd);
        outcome_clear(&o);
        exec_free(e);
        free(path);
}
END_TEST

/* A command that did not run to its end: the runner says why. */
START_TEST(test_app_failures)
{
        static const struct {
                int kind, code;
                const char *message, *info;
        } cases[] = {
                {PROC_FAIL_TIMEOUT, 101, "Script deploy timed out: the runner's reason",
                 "{\"exitCode\": null, \"stdout\": \"partial\", \"stderr\": null}"},
                {PROC_FAIL_SPAWN, 102, "Script deploy could not be started: the runner's reason",
                 NULL},
                {PROC_FAIL_STOPPED, 103, "Script deploy was stopped: the runner's reason",
                 "{\"exitCode\": null, \"stdout\": \"partial\", \"stderr\": null}"},
        };
        char *path = entry_file("run.sh", "#!/bin/sh\n");
        Exec *e = new_exec("Application", "ID2", "{\"verifyExitcode\": false}");
        Outcome o;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                fake.fail_kind = cases[i].kind;
                o = call(e, path, NULL, NULL, NULL);
                check_error(&o, cases[i].code, cases[i].message, cases[i].info);
                outcome_clear(&o);
        }
        fake.fail_kind = 0;
        fake.ret = -EIO;
        o = call(e, path, NULL, NULL, NULL);
        ck_assert_int_eq(o.r, -EIO);
        outcome_clear(&o);
        exec_free(e);
        free(path);
}
END_TEST

START_TEST(test_app_bad_paths)
{
        Exec *e = new_exec("Application", "ID2", NULL);
        char *nodir = tmp_path("nodir/", "run.sh");
        char *nofile = tmp_path("deploy/", "missing.sh");
        char *msg = NULL;
        Outcome o = call(e, nodir, NULL, NULL, NULL);

        ck_assert_int_ge(asprintf(&msg, "[Errno 2] No such file or directory: '%s/nodir'", tmpdir),
                         0);
        check_error(&o, 1, msg, NULL);
        ck_assert_ptr_null(o.cwd);
        outcome_clear(&o);
        free(msg);
        /* The reference changes directory before it chmods the file. */
        o = call(e, nofile, NULL, NULL, NULL);
        ck_assert_int_ge(asprintf(&msg, "[Errno 2] No such file or directory: '%s'", nofile), 0);
        check_error(&o, 1, msg, NULL);
        ck_assert_str_eq(o.cwd, deploy);
        outcome_clear(&o);
        o = call(e, "relative/run.sh", NULL, NULL, NULL);
        ck_assert_int_eq(o.r, -EINVAL);
        outcome_clear(&o);
        ck_assert_int_eq(fake.calls, 0);
        free(msg);
        free(nodir);
        free(nofile);
        exec_free(e);
}
END_TEST

START_TEST(test_new_and_options)
{
        json_t *script = parse("{\"Type\": \"Foo\", \"EntryPoint\": \"x\"}");
        BodyCallError err = {0};
        Exec *e = NULL;
        char *path = entry_file("run.sh", "#!/bin/sh\n");
        Outcome o;

        ck_assert_int_eq(exec_new("deploy", script, &e, &err), 1);
        ck_assert_ptr_null(e);
        ck_assert_int_eq(err.code, 1);
        ck_assert_str_eq(err.message, "The application type in deploy is not a valid executor Foo");
        exec_error_clear(&err);
        json_decref(script);
        script = parse("{\"Type\": \"Application\"}");
        ck_assert_int_eq(exec_new("deploy", script, &e, &err), -EINVAL);
        json_decref(script);

        e = new_exec("Chef", "a::b", NULL);
        ck_assert_int_eq(exec_type(e), EXEC_CHEF);
        ck_assert(exec_options_valid(e));
        exec_free(e);
        e = new_exec("Puppet", "a::b", NULL);
        ck_assert_int_eq(exec_type(e), EXEC_PUPPET);
        exec_free(e);

        /* A truthy Options that is not a dict fails at every call. */
        e = new_exec("Application", "ID2", "[\"x\"]");
        ck_assert(!exec_options_valid(e));
        o = call(e, path, NULL, NULL, NULL);
        check_error(&o, 1, "'list' object has no attribute 'get'", NULL);
        outcome_clear(&o);
        exec_free(e);
        e = new_exec("Application", "ID2", "\"abc\"");
        o = call(e, path, NULL, NULL, NULL);
        check_error(&o, 1, "'str' object has no attribute 'get'", NULL);
        outcome_clear(&o);
        exec_free(e);
        ck_assert_int_eq(fake.calls, 0);
        free(path);
}
END_TEST

static Suite *exec_suite(void)
{
        Suite *s = suite_create("exec");
        TCase *tc = tcase_create("text");

        tcase_add_loop_test(tc, test_text_decode, 0, (int)ELEMENTSOF(decode_cases));
        tcase_add_test(tc, test_text_result);
        tcase_add_test(tc, test_text_error_lines);
        tcase_add_test(tc, test_paths);
        suite_add_tcase(s, tc);

        tc = tcase_create("application");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_app_runs_entry_file);
        tcase_add_loop_test(tc, test_app_cases, 0, (int)ELEMENTSOF(app_cases));
        tcase_add_test(tc, test_app_verify_exitcode);
        tcase_add_loop_test(tc, test_type_errors, 0, (int)ELEMENTSOF(type_errors));
        tcase_add_test(tc, test_app_failures);
        tcase_add_test(tc, test_app_bad_paths);
        tcase_add_test(tc, test_new_and_options);
        suite_add_tcase(s, tc);

        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(exec_suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
