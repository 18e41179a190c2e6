/* What the executor files share: the function table of an executor type,
 * the Exec object, and helpers for errors, commands, output text, paths and
 * the YAML writer. Included only by agent/exec/ and its tests. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "body/body.h"
#include "exec/exec.h"
#include "proc/proc.h"
#include "util/macro.h"
#include "util/strbuf.h"

typedef struct ExecOps {
        ExecType type;
        const char *name;     /* the Type value in a plan */
        const char *qualname; /* run()'s name in Python's TypeError texts */
        const char *arg_name; /* run()'s parameter after `function` */
        /* `arg` is that parameter's value, NULL when it was not given. */
        int (*run)(Exec *e, const char *path, const json_t *arg, const ProcRunner *runner,
                   char **io_cwd, json_t **ret_result, BodyCallError *ret_err);
} ExecOps;

struct Exec {
        const ExecOps *ops;
        char *script;        /* the key in Scripts */
        char *entry_point;   /* EntryPoint; Chef and Puppet name themselves by it */
        json_t *options;     /* the Options object (own reference), NULL for none */
        char *options_error; /* Options was truthy but not a dict: the Python error */
        bool capture_stdout;
        bool capture_stderr;
        bool verify_exitcode;
};

extern const ExecOps exec_application_ops;
extern const ExecOps exec_chef_ops;
extern const ExecOps exec_puppet_ops;

/* ---- errors (exec.c) ---- */

/* Fill err with code, message and info (taken over, may be NULL) and
 * return 1; -ENOMEM if the message cannot be built (info is released). */
int exec_error(BodyCallError *err, int code, json_t *info, const char *fmt, ...) _printf_(4, 5);

/* An OSError as Python prints it: "[Errno 2] No such file or directory:
 * '/x'", code 1. */
int exec_error_os(BodyCallError *err, int errnum, const char *path);

/* Chef and Puppet: EntryPoint "module::recipe", split at the last "::".
 * 1 with the reference's code 100 error when there is no "::". */
int exec_module_split(const Exec *e, char **ret_module, char **ret_recipe, BodyCallError *err);

/* Chef and Puppet: an OSError while writing their files, as the reference
 * reports it: "<kind> <module> returned error code <recipe>: <strerror>"
 * (code 100) with AdditionalInfo {"exitCode": 2, "stdout": null,
 * "stderr": <strerror>}. */
int exec_error_config(BodyCallError *err, const char *kind, const char *module, const char *recipe,
                      int errnum);

/* The reference's handler for those errors reads e.strerror, which only
 * OSError has: any other exception there (bad attributes, nesting too
 * deep) becomes this AttributeError (code 1). `exc` is the Python type of
 * the original exception. */
int exec_error_no_strerror(BodyCallError *err, const char *exc);

/* Options[key] (borrowed), NULL when absent. */
const json_t *exec_option(const Exec *e, const char *key);

/* ---- commands and results (exec-command.c) ---- */

typedef struct ExecCommand {
        const char *shell; /* the text for /bin/sh -c */
        const char *cwd;   /* absolute */
        const char *step;  /* the runner's logs say "script <key> (<step>)"; NULL: "script <key>" */
        const char *name;  /* {name} in "Script {name} ..." messages */
        bool error_lines;  /* Chef and Puppet: stdout lines with ERROR join stderr */
} ExecCommand;

/* Run the command with the script's capture options and build the result
 * object. 1 with err for a command that did not run to its end (timeout,
 * spawn failure, stop), and with verifyExitcode on, for one that exited
 * with another code than 0: "Script {name} returned error code" (code 100,
 * AdditionalInfo = the result). */
int exec_command(const Exec *e, const ExecCommand *c, const ProcRunner *runner, json_t **ret_result,
                 BodyCallError *ret_err);

/* Chef and Puppet: exec_command() for one of their commands, run in dir.
 * Their messages name the script by its EntryPoint, and lines of stdout
 * that contain ERROR join stderr. */
int exec_recipe_command(const Exec *e, const char *shell, const char *dir, const char *step,
                        const ProcRunner *runner, json_t **ret_result, BodyCallError *ret_err);

/* Captured bytes as Python's text mode gives them: UTF-8 with U+FFFD for
 * each invalid sequence (errors="replace"), "\r\n" and "\r" turned into
 * "\n". Appends to out. */
int exec_text_decode(const char *s, size_t len, StrBuf *out);

/* For each line of text (str.splitlines()) that contains "ERROR", append
 * the line and "\n" to out. */
int exec_text_error_lines(const char *text, size_t len, StrBuf *out);

/* `text.strip() if text else None`: a new JSON string, or null when text is
 * NULL or empty. A whitespace-only text gives "". */
int exec_text_result(const char *text, size_t len, json_t **ret);

/* ---- paths and files (exec-fs.c) ---- */

/* os.path.normpath of an absolute path; -EINVAL for a relative one. */
int exec_path_normalize(const char *path, char **ret);
/* os.path.join(a, b): b itself when absolute. */
char *exec_path_join(const char *a, const char *b);
/* os.path.dirname and os.path.basename. */
char *exec_path_dirname(const char *path);
const char *exec_path_basename(const char *path);

/* Append s for a shell command line: unchanged when it consists only of
 * characters that need no quoting (as Python's shlex.quote decides),
 * single-quoted otherwise. */
int exec_shell_word(StrBuf *out, const char *s);

/* The os.path predicates (following symlinks). */
bool exec_is_file(const char *path);
bool exec_is_dir(const char *path);
bool exec_exists(const char *path);

/* open(path, "w").write(data); 0 or a negative errno. */
int exec_write_file(const char *path, const char *data, size_t len);
/* os.makedirs(path): 0 or a negative errno (-EEXIST when path exists). */
int exec_mkdirs(const char *path);

/* ---- YAML (exec-yaml.c) ---- */

/* Append yaml.dump(v, default_flow_style=False) of an object. -EINVAL for
 * something else or nesting deeper than 1000 levels. */
int exec_yaml_dump(const json_t *v, StrBuf *out);
