/* Tests for the Chef and Puppet executors, with the fake chef-solo, berks
 * and puppet of tests/data/exec/bin on PATH. In the expected logs "@"
 * stands for the test's temporary directory; the script's directory is
 * @/deploy. File contents and command lines are the reference's (its
 * executors and tests/unit/executors/), except that the files go into the
 * script's directory, where the commands also run. */
#include "test-exec.h"
#include "test-lib.h"

/* ---- Chef ---- */

/* The log of chef-solo run on @/deploy/solo.rb (node.json with the run list
 * only) whose cookbook_path is COOKBOOKS. */
#define CHEF_SOLO_LOG(cookbooks)                                                                   \
        "program: chef-solo\n"                                                                     \
        "cwd: @/deploy\n"                                                                          \
        "arg1: -j\n"                                                                               \
        "arg2: node.json\n"                                                                        \
        "arg3: -c\n"                                                                               \
        "arg4: @/deploy/solo.rb\n"                                                                 \
        "file node.json:\n"                                                                        \
        "{\"run_list\": [\"recipe[cookbook::recipe]\"]}\n"                                         \
        "end node.json\n"                                                                          \
        "file @/deploy/solo.rb:\n"                                                                 \
        "cookbook_path \"" cookbooks "\"\n"                                                        \
        "end @/deploy/solo.rb\n"

/* The log of berks vendoring into @/deploy/berks-cookbooks from the
 * Berksfile BERKSFILE, whose one line is LINE. */
#define BERKS_LOG(berksfile, line)                                                                 \
        "program: berks\n"                                                                         \
        "cwd: @/deploy\n"                                                                          \
        "arg1: vendor\n"                                                                           \
        "arg2: --berksfile=" berksfile "\n"                                                        \
        "arg3: @/deploy/berks-cookbooks\n"                                                         \
        "target is a directory\n"                                                                  \
        "file " berksfile ":\n" line "\n"                                                          \
        "end " berksfile "\n"

START_TEST(test_chef_no_attributes)
{
        Exec *e = new_exec("Chef", "cookbook::recipe", "{}");
        Outcome o = call(e, deploy, NULL, NULL, NULL);
        char *cmd = NULL;

        ck_assert_int_eq(o.r, 0);
        ck_assert_str_eq(o.result, "{\"exitCode\": 0, \"stdout\": null, \"stderr\": null}");
        ck_assert_int_ge(asprintf(&cmd, "/bin/sh|-c|chef-solo -j node.json -c %s/solo.rb", deploy),
                         0);
        ck_assert_str_eq(fake.argv, cmd);
        ck_assert_str_eq(fake.cwd, deploy);
        ck_assert_str_eq(fake.what, "script deploy (chef-solo)");
        ck_assert_ptr_null(o.cwd); /* only Application changes directory */
        check_log(CHEF_SOLO_LOG("@/deploy"));
        free(cmd);
        outcome_clear(&o);
        exec_free(e);
}
END_TEST

/* node.json for the attributes a call passes (falsy ones are left out). */
static const struct {
        const char *args;
        const char *kwargs;
        const char *node;
} chef_attrs[] = {
        {"[{\"att1\": \"value1\", \"att2\": \"value2\"}]", NULL,
         "{\"run_list\": [\"recipe[cookbook::recipe]\"], "
         "\"cookbook\": {\"att1\": \"value1\", \"att2\": \"value2\"}}"},
        {NULL, "{\"recipe_attributes\": {\"port\": 80, \"on\": true, \"x\": [1.5, null]}}",
         "{\"run_list\": [\"recipe[cookbook::recipe]\"], "
         "\"cookbook\": {\"port\": 80, \"on\": true, \"x\": [1.5, null]}}"},
        {"[{}]", NULL, "{\"run_list\": [\"recipe[cookbook::recipe]\"]}"},
        {"[0, \"ignored input\"]", NULL, "{\"run_list\": [\"recipe[cookbook::recipe]\"]}"},
        {"[[\"a\"]]", NULL,
         "{\"run_list\": [\"recipe[cookbook::recipe]\"], \"cookbook\": [\"a\"]}"},
        {"[{\"k\": \"\\u00e9\"}]", NULL,
         "{\"run_list\": [\"recipe[cookbook::recipe]\"], \"cookbook\": {\"k\": \"\\u00e9\"}}"},
};

START_TEST(test_chef_attributes)
{
        Exec *e = new_exec("Chef", "cookbook::recipe", "{}");
        Outcome o = call(e, deploy, NULL, chef_attrs[_i].args, chef_attrs[_i].kwargs);
        char *node = tmp_path("deploy/", "node.json");
        char *text = read_text(node);

        ck_assert_int_eq(o.r, 0);
        ck_assert_str_eq(text, chef_attrs[_i].node);
        free(text);
        free(node);
        outcome_clear(&o);
        exec_free(e);
}
END_TEST

START_TEST(test_chef_files)
{
        Exec *e = new_exec("Chef", "a::b::c", "{}");
        char *dir = tmp_path("new/", "dir");
        char *solo = tmp_path("new/dir/", "solo.rb");
        char *node = tmp_path("new/dir/", "node.json");
        char *text;
        Outcome o;

        /* A script without files has no directory yet: it is made. The
         * last "::" splits cookbook and recipe. */
        o = call(e, dir, NULL, "[{\"x\": 1}]", NULL);
        ck_assert_int_eq(o.r, 0);
        outcome_clear(&o);
        text = read_text(node);
        ck_assert_str_eq(text, "{\"run_list\": [\"recipe[a::b::c]\"], \"a::b\": {\"x\": 1}}");
        free(text);
        /* solo.rb is written once; node.json at every call. */
        write_text(solo, "cookbook_path \"/elsewhere\"", 0644);
        o = call(e, dir, NULL, NULL, NULL);
        ck_assert_int_eq(o.r, 0);
        outcome_clear(&o);
        text = read_text(solo);
        ck_assert_str_eq(text, "cookbook_path \"/elsewhere\"");
        free(text);
        text = read_text(node);
        ck_assert_str_eq(text, "{\"run_list\": [\"recipe[a::b::c]\"]}");
        free(text);
        free(dir);
        free(solo);
        free(node);
        exec_free(e);
}
END_TEST

START_TEST(test_chef_output)
{
        Exec *e = new_exec("Chef", "cookbook::recipe", "{\"verifyExitcode\": false}");
        Exec *v = new_exec("Chef", "cookbook::recipe", NULL);
        Exec *q = new_exec("Chef", "cookbook::recipe", "{\"captureStdout\": false}");
        Outcome o;

        /* stdout lines containing ERROR are added to stderr. */
        fake_env("EXEC_FAKE_CHEF_SOLO_STDOUT=ok\\nan ERROR here\\nERROR again");
        fake_env("EXEC_FAKE_CHEF_SOLO_STDERR=warn\\n");
        fake_env("EXEC_FAKE_CHEF_SOLO_EXIT=2");
        o = call(e, deploy, NULL, NULL, NULL);
        ck_assert_int_eq(o.r, 0);
        ck_assert_str_eq(o.result, "{\"exitCode\": 2, \"stdout\": \"ok\\nan ERROR here\\nERROR "
                                   "again\", \"stderr\": \"warn\\nan ERROR here\\nERROR again\"}");
        outcome_clear(&o);
        /* The name in the message is the EntryPoint. */
        o = call(v, deploy, NULL, NULL, NULL);
        check_error(&o, 100, "Script cookbook::recipe returned error code",
                    "{\"exitCode\": 2, \"stdout\": \"ok\\nan ERROR here\\nERROR again\", "
                    "\"stderr\": \"warn\\nan ERROR here\\nERROR again\"}");
        outcome_clear(&o);
        /* The reference crashes here ('NoneType' has no splitlines). */
        o = call(q, deploy, NULL, NULL, NULL);
        check_error(&o, 100, "Script cookbook::recipe returned error code",
                    "{\"exitCode\": 2, \"stdout\": null, \"stderr\": \"warn\"}");
        outcome_clear(&o);
        exec_free(e);
        exec_free(v);
        exec_free(q);
}
END_TEST

START_TEST(test_chef_berkshelf)
{
        Exec *e = new_exec("Chef", "cookbook::recipe", "{\"useBerkshelf\": true}");
        Exec *c = new_exec("Chef", "cookbook::recipe",
                           "{\"useBerkshelf\": 1, \"berksfilePath\": \"custom/customFile\"}");
        char *dir = tmp_path("deploy/", "cookbook");
        char *berksfile = tmp_path("deploy/cookbook/", "Berksfile");
        Outcome o;

        /* Berkshelf's default Berksfile is <cookbook>/Berksfile. */
        ck_assert_int_eq(mkdir(dir, 0700), 0);
        write_text(berksfile, "site :opscode", 0644);
        o = call(e, deploy, NULL, NULL, NULL);
        ck_assert_int_eq(o.r, 0);
        outcome_clear(&o);
        check_log(BERKS_LOG("@/deploy/cookbook/Berksfile", "site :opscode")
                          CHEF_SOLO_LOG("@/deploy/berks-cookbooks"));
        ck_assert_int_eq(unlink(logpath), 0);
        free(dir);
        free(berksfile);

        /* A custom berksfilePath, relative to the script's directory. */
        dir = tmp_path("deploy/", "custom");
        berksfile = tmp_path("deploy/custom/", "customFile");
        ck_assert_int_eq(mkdir(dir, 0700), 0);
        write_text(berksfile, "x", 0644);
        o = call(c, deploy, NULL, NULL, NULL);
        ck_assert_int_eq(o.r, 0);
        outcome_clear(&o);
        check_log(BERKS_LOG("@/deploy/custom/customFile", "x")
                          CHEF_SOLO_LOG("@/deploy/berks-cookbooks"));
        ck_assert_str_eq(fake.what, "script deploy (chef-solo)");
        free(dir);
        free(berksfile);
        exec_free(e);
        exec_free(c);
}
END_TEST

START_TEST(test_chef_berkshelf_errors)
{
        Exec *e = new_exec("Chef", "cookbook::recipe", "{\"useBerkshelf\": true}");
        Exec *nv = new_exec("Chef", "cookbook::recipe",
                            "{\"useBerkshelf\": true, \"verifyExitcode\": false}");
        Exec *bad = new_exec("Chef", "cookbook::recipe",
                             "{\"useBerkshelf\": true, \"berksfilePath\": 5}");
        char *dir = tmp_path("deploy/", "cookbook");
        char *berksfile = tmp_path("deploy/cookbook/", "Berksfile");
        char *msg = NULL;
        Outcome o = call(e, deploy, NULL, NULL, NULL);

        ck_assert_int_ge(asprintf(&msg, "Berskfile %s not found", berksfile), 0);
        check_error(&o, 100, msg, NULL);
        outcome_clear(&o);
        ck_assert_int_eq(fake.calls, 0);
        o = call(bad, deploy, NULL, NULL, NULL);
        check_error(&o, 1, "join() argument must be str, bytes, or os.PathLike object, not 'int'",
                    NULL);
        outcome_clear(&o);

        /* berks fails: with verifyExitcode the command runner's own check
         * speaks first; without it, the Berkshelf message. chef-solo does
         * not run. */
        ck_assert_int_eq(mkdir(dir, 0700), 0);
        write_text(berksfile, "x", 0644);
        fake_env("EXEC_FAKE_BERKS_EXIT=3");
        fake_env("EXEC_FAKE_BERKS_STDOUT=fetching");
        o = call(e, deploy, NULL, NULL, NULL);
        check_error(&o, 100, "Script cookbook::recipe returned error code",
                    "{\"exitCode\": 3, \"stdout\": \"fetching\", \"stderr\": null}");
        outcome_clear(&o);
        o = call(nv, deploy, NULL, NULL, NULL);
        check_error(&o, 100, "Berks returned error code",
                    "{\"exitCode\": 3, \"stdout\": \"fetching\", \"stderr\": null}");
        outcome_clear(&o);
        ck_assert_int_eq(fake.calls, 2);
        ck_assert_str_eq(fake.what, "script deploy (berks vendor)");
        free(msg);
        free(dir);
        free(berksfile);
        exec_free(e);
        exec_free(nv);
        exec_free(bad);
}
END_TEST

/* Errors of both configuration-management executors that no command sees. */
START_TEST(test_cm_errors)
{
        Exec *chef = new_exec("Chef", "wrong", NULL);
        Exec *puppet = new_exec("Puppet", "wrong", NULL);
        Exec *chef_ok = new_exec("Chef", "cookbook::recipe", NULL);
        Exec *puppet_ok = new_exec("Puppet", "module::recipe", NULL);
        char *file = tmp_path("", "plainfile");
        Outcome o = call(chef, deploy, NULL, NULL, NULL);

        check_error(&o, 100, "Module recipe name format wrong is not valid", NULL);
        outcome_clear(&o);
        o = call(puppet, deploy, NULL, NULL, NULL);
        check_error(&o, 100, "Module recipe name format wrong is not valid", NULL);
        outcome_clear(&o);
        /* Attributes without .copy() (Chef) or .items() (Puppet): the
         * reference's handler then fails on e.strerror. */
        o = call(chef_ok, deploy, NULL, "[\"text\"]", NULL);
        check_error(&o, 1, "'AttributeError' object has no attribute 'strerror'", NULL);
        outcome_clear(&o);
        o = call(puppet_ok, deploy, NULL, "[[\"x\"]]", NULL);
        check_error(&o, 1, "'AttributeError' object has no attribute 'strerror'", NULL);
        outcome_clear(&o);
        /* An OSError while writing the files. */
        write_text(file, "", 0644);
        o = call(chef_ok, file, NULL, NULL, NULL);
        check_error(&o, 100, "Cookbook cookbook returned error code recipe: File exists",
                    "{\"exitCode\": 2, \"stdout\": null, \"stderr\": \"File exists\"}");
        outcome_clear(&o);
        o = call(puppet_ok, file, NULL, NULL, NULL);
        check_error(&o, 100, "Module module returned error code recipe: File exists",
                    "{\"exitCode\": 2, \"stdout\": null, \"stderr\": \"File exists\"}");
        outcome_clear(&o);
        ck_assert_int_eq(fake.calls, 0);
        free(file);
        exec_free(chef);
        exec_free(puppet);
        exec_free(chef_ok);
        exec_free(puppet_ok);
}
END_TEST

/* ---- Puppet ---- */

#define HIERA_LOG                                                                                  \
        "file hiera.yaml:\n"                                                                       \
        "backends: yaml\n"                                                                         \
        "hierarchy: '%{env}'\n"                                                                    \
        "logger: console\n"                                                                        \
        "yaml:\n"                                                                                  \
        "  datadir: /etc/puppet/hieradata\n"                                                       \
        "\n"                                                                                       \
        "end hiera.yaml\n"

#define PUPPET_ARGS_LOG                                                                            \
        "program: puppet\n"                                                                        \
        "cwd: @/deploy\n"                                                                          \
        "arg1: apply\n"                                                                            \
        "arg2: --hiera_config=hiera.yaml\n"                                                        \
        "arg3: --modulepath\n"                                                                     \
        "arg4: @/deploy\n"                                                                         \
        "arg5: manifest.pp\n"

START_TEST(test_puppet_no_attributes)
{
        Exec *e = new_exec("Puppet", "module::recipe", "{}");
        Outcome o = call(e, deploy, "apply", NULL, NULL);
        char *cmd = NULL;

        ck_assert_int_eq(o.r, 0);
        ck_assert_str_eq(o.result, "{\"exitCode\": 0, \"stdout\": null, \"stderr\": null}");
        ck_assert_int_ge(asprintf(&cmd,
                                  "/bin/sh|-c|puppet apply --hiera_config=hiera.yaml "
                                  "--modulepath %s manifest.pp",
                                  deploy),
                         0);
        ck_assert_str_eq(fake.argv, cmd);
        ck_assert_str_eq(fake.cwd, deploy);
        ck_assert_str_eq(fake.what, "script deploy (puppet apply)");
        check_log(PUPPET_ARGS_LOG HIERA_LOG "file manifest.pp:\n"
                                            "node 'default' { class { module::recipe:}}\n"
                                            "end manifest.pp\n");
        free(cmd);
        outcome_clear(&o);
        exec_free(e);
}
END_TEST

/* default.yaml for the attributes a call passes. */
static const struct {
        const char *entry_point;
        const char *args;
        const char *manifest;
        const char *default_yaml; /* NULL: not written */
} puppet_attrs[] = {
        {"module::recipe", "[{\"att1\": \"value1\", \"att2\": \"value2\"}]",
         "node 'default' { class { module::recipe:}}",
         "module::att1: value1\nmodule::att2: value2\n"},
        {"module::recipe",
         "[{\"port\": 8080, \"users\": [\"a\", \"b\"], \"opts\": {\"x\": true, \"y\": null}, "
         "\"name\": \"yes\", \"ratio\": 0.5, \"motd\": \"Hello, world: hi\"}]",
         "node 'default' { class { module::recipe:}}",
         "module::motd: 'Hello, world: hi'\nmodule::name: 'yes'\nmodule::opts:\n  x: true\n"
         "  y: null\nmodule::port: 8080\nmodule::ratio: 0.5\nmodule::users:\n- a\n- b\n"},
        {"module::", "[{}]", "node 'default' { class { module:}}", "{}\n"},
        {"module::recipe", "[null]", "node 'default' { class { module::recipe:}}", NULL},
};

START_TEST(test_puppet_attributes)
{
        Exec *e = new_exec("Puppet", puppet_attrs[_i].entry_point, NULL);
        Outcome o = call(e, deploy, NULL, puppet_attrs[_i].args, NULL);
        char *manifest = tmp_path("deploy/", "manifest.pp");
        char *yaml = tmp_path("deploy/", "default.yaml");
        char *text;

        ck_assert_int_eq(o.r, 0);
        text = read_text(manifest);
        ck_assert_str_eq(text, puppet_attrs[_i].manifest);
        free(text);
        text = read_text(yaml);
        if (puppet_attrs[_i].default_yaml)
                ck_assert_str_eq(text, puppet_attrs[_i].default_yaml);
        else
                ck_assert_ptr_null(text);
        free(text);
        free(manifest);
        free(yaml);
        outcome_clear(&o);
        exec_free(e);
}
END_TEST

START_TEST(test_puppet_files_and_output)
{
        Exec *e = new_exec("Puppet", "module::recipe", NULL);
        char *dir = tmp_path("new/", "dir");
        char *hiera = tmp_path("new/dir/", "hiera.yaml");
        char *text;
        Outcome o;

        /* The directory is made; hiera.yaml is written only once. */
        o = call(e, dir, NULL, NULL, NULL);
        ck_assert_int_eq(o.r, 0);
        outcome_clear(&o);
        ck_assert_str_eq(fake.cwd, dir);
        write_text(hiera, ":backends: []\n", 0644);
        fake_env("EXEC_FAKE_PUPPET_STDOUT=Notice: ok\\nError: ERROR x\\n");
        fake_env("EXEC_FAKE_PUPPET_EXIT=4");
        o = call(e, dir, NULL, NULL, NULL);
        check_error(&o, 100, "Script module::recipe returned error code",
                    "{\"exitCode\": 4, \"stdout\": \"Notice: ok\\nError: ERROR x\", "
                    "\"stderr\": \"Error: ERROR x\"}");
        outcome_clear(&o);
        text = read_text(hiera);
        ck_assert_str_eq(text, ":backends: []\n");
        free(text);
        free(hiera);
        free(dir);
        exec_free(e);
}
END_TEST

static Suite *exec_chef_suite(void)
{
        Suite *s = suite_create("exec-chef");
        TCase *tc = tcase_create("chef");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_chef_no_attributes);
        tcase_add_loop_test(tc, test_chef_attributes, 0, (int)ELEMENTSOF(chef_attrs));
        tcase_add_test(tc, test_chef_files);
        tcase_add_test(tc, test_chef_output);
        tcase_add_test(tc, test_chef_berkshelf);
        tcase_add_test(tc, test_chef_berkshelf_errors);
        tcase_add_test(tc, test_cm_errors);
        suite_add_tcase(s, tc);

        tc = tcase_create("puppet");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_puppet_no_attributes);
        tcase_add_loop_test(tc, test_puppet_attributes, 0, (int)ELEMENTSOF(puppet_attrs));
        tcase_add_test(tc, test_puppet_files_and_output);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return check_run(exec_chef_suite());
}
