/* libFuzzer target for the Body interpreter: any bytes as a Body must give a
 * value or an error result, never a crash, a hang, undefined behaviour or a
 * leak. The limits are tight (100000 steps, 16 MiB of values) so that each
 * input is quick, and open() is confined to a scratch directory so that the
 * fuzzer cannot write over the system: the reference agent allows open()
 * anywhere, which is fine for real plans but not for random Bodies. */
#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "body/body.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char scratch[] = "/tmp/fuzz-body-XXXXXX";
static json_t *parameters;
static const char *const scripts[] = {"deploy", "setup", "runCommand", "executeRecipe"};

/* Scripts succeed with a little output, except that a call whose first
 * argument is the string "fail" raises the executor's error 100. */
static int fake_call(void *userdata, const BodyCall *call, json_t **ret, BodyCallError *err)
{
        const char *first = json_string_value(json_array_get(call->args, 0));

        if (first && strcmp(first, "fail") == 0) {
                err->code = 100;
                err->message = strdup("Script deploy returned error code");
                err->additional_info =
                        json_pack("{s:i, s:n, s:s}", "exitCode", 1, "stdout", "stderr", "boom");
                return err->message ? 1 : -ENOMEM;
        }
        *ret = json_pack("{s:i, s:s, s:n}", "exitCode", 0, "stdout", "out", "stderr");
        return *ret ? 0 : -ENOMEM;
}

static const char *fake_cwd(void *userdata)
{
        return scratch;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        return ftw->level > 0 ? remove(path) : 0;
}

/* Empty the scratch directory; at exit, remove it too. */
static void clear_scratch(void)
{
        nftw(scratch, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void remove_scratch(void)
{
        clear_scratch();
        rmdir(scratch);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        if (!mkdtemp(scratch)) {
                perror("mkdtemp");
                abort();
        }
        atexit(remove_scratch);
        parameters = json_loads("{\"appName\": \"wordpress app\", \"enablePHP\": true, \"port\": "
                                "8080, \"ratio\": 0.5, \"none\": null, \"list\": [1, \"a\", "
                                "[]], \"env\": {\"A\": \"it's\", \"B\": \"say \\\"hi\\\"\"}}",
                                0, NULL);
        if (!parameters)
                abort();
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        BodyHost host = {.userdata = NULL, .call_script = fake_call, .cwd = fake_cwd};
        BodyLimits lim = BODY_LIMITS_DEFAULT;
        BodyOutcome o = {0};
        static unsigned runs;

        /* Bodies write files (uuid4 names among them): keep the directory small. */
        if (++runs % 4096 == 0)
                clear_scratch();
        lim.max_steps = 100000;
        lim.max_memory = 16u << 20;
        lim.max_string = 1u << 20;
        lim.open_root = scratch;
        /* A negative return (the agent itself failed) leaves o untouched;
         * clearing the zeroed outcome is harmless then. */
        body_run((const char *)data, size, parameters, scripts,
                 sizeof(scripts) / sizeof(scripts[0]), &host, &lim, &o);
        body_outcome_clear(&o);
        return 0;
}
