/* exec: the executors that turn one call of a plan script into a result.
 *
 * A plan's Scripts entry has a Type: Application runs the entry file as a
 * shell command, Chef runs chef-solo (optionally after "berks vendor"),
 * Puppet runs "puppet apply". Each type is a small function table; an Exec
 * is one script bound to its table and Options. Running a call builds the
 * command line, the files Chef and Puppet need, and the result object
 * {"exitCode", "stdout", "stderr"} exactly as the reference agent does
 * (docs/executors.md lists every message and code, and the few deliberate
 * differences). The command itself runs through a ProcRunner, so this
 * module never touches processes or the event loop.
 *
 * Order of calls for one Body call of a script (the runner's job):
 *   1. exec_check_call()      the argument errors Python raises before any
 *                             file is touched;
 *   2. files preparation      agent/files/, at every call until the
 *                             script is "loaded": a call loads it when the
 *                             preparation succeeded and
 *                             exec_options_valid(); gives the Application
 *                             entry point's symlink path, or the
 *                             <cache>/<script> directory (keep it for the
 *                             later calls);
 *   3. exec_run()             with that path.
 *
 * Results: 0 success; 1 for an error the Body sees as an exception, with
 * the BodyCallError filled (same convention as BodyHost.call_script);
 * negative errno when the agent itself failed. */
#pragma once

#include <jansson.h>
#include <stdbool.h>

#include "body/body.h"
#include "proc/proc.h"
#include "result/result.h"

typedef enum ExecType {
        EXEC_APPLICATION,
        EXEC_CHEF,
        EXEC_PUPPET,
} ExecType;

/* ErrorCodes an executor gives. 1 and 100 are the reference's; 101-103 are
 * ours, for ends of a command the reference could not have (it had no
 * timeout, no sandbox and no stop): they sit in the reference's
 * CustomException range (100 + N) because they are script failures too. */
enum {
        EXEC_ERROR_EXCEPTION = 1, /* a Python exception in the reference */
        EXEC_ERROR_SCRIPT = 100,  /* CustomException(0): exit code, bad entry point, berks */
        EXEC_ERROR_TIMEOUT = RESULT_CODE_TIMEOUT,     /* 101: a time limit expired */
        EXEC_ERROR_SPAWN = RESULT_CODE_SANDBOX,       /* 102: could not start in its sandbox */
        EXEC_ERROR_STOPPED = RESULT_CODE_INTERRUPTED, /* 103: the agent is stopping */
        EXEC_ERROR_LIMIT = RESULT_CODE_LIMIT,         /* 106: memory_max or pids_max reached */
};

typedef struct Exec Exec;

/* One script of a validated plan: `script` is its Scripts entry, whose Type
 * and EntryPoint must be strings (-EINVAL otherwise). An unknown Type gives
 * 1 and the reference's ValueError (code 1), which the reference raises
 * before the Body starts. */
int exec_new(const char *script_name, const json_t *script, Exec **ret, BodyCallError *ret_err);
Exec *exec_free(Exec *e);

ExecType exec_type(const Exec *e);

/* False when the script's Options are truthy but not a dict: every
 * exec_run() then fails as the reference's ScriptRunner._load() did, and the
 * reference prepared the script's files again at every call, because its
 * "loaded" flag was never set. */
bool exec_options_valid(const Exec *e);

/* The checks Python makes while passing a call through the reference's
 * ScriptRunner, before files are prepared: a keyword argument named "self"
 * or "name" collides with a wrapper's own parameter. */
int exec_check_call(const BodyCall *call, BodyCallError *ret_err);

/* Run one call. `path` (absolute) is the entry file's symlink for
 * Application, the script's directory <cache>/<script> for Chef and Puppet.
 * `io_cwd`, if not NULL, is the plan's working directory as the reference's
 * os.chdir() leaves it: an Application call replaces it (freeing the old
 * string) with the entry file's directory; the runner hands it to
 * BodyHost.cwd. On success *ret_result is a new object {"exitCode",
 * "stdout", "stderr"}. */
int exec_run(Exec *e, const char *path, const BodyCall *call, const ProcRunner *runner,
             char **io_cwd, json_t **ret_result, BodyCallError *ret_err);

/* Free what a BodyCallError holds and zero it. */
void exec_error_clear(BodyCallError *err);
