/* exec-app: the Application executor, run(function, commandline='',
 * input=None).
 *
 * The reference changes the agent's working directory to the entry file's
 * directory, formats the command as './"<file name>" <commandline>' (the
 * commandline goes in as raw shell text, after Python's str() of whatever
 * the Body passed), makes the entry file 0500 through the symlink, and runs
 * the text with /bin/sh -c in that directory. `input` is accepted and
 * ignored, as in the reference, whose child's stdin is not a pipe. We do not
 * change the agent's own directory: the caller gets it in io_cwd instead.
 *
 * When that text is one the shell would only execute (no expansion, no
 * quoting beyond the file name's), the request also carries the argv the
 * shell would execute, which the runner may start without the shell, with
 * /bin/sh -c as the fallback (docs/executors.md, "Direct execution"). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "exec/exec-internal.h"
#include "util/pyrepr.h"

/* str.format's {1} of the commandline: str() for every JSON value. */
static int append_commandline(StrBuf *cmd, const json_t *arg, BodyCallError *err)
{
        int r;

        if (!arg)
                return 0;
        r = pyrepr_str(arg, cmd);
        if (r == -EINVAL)
                return exec_error(err, EXEC_ERROR_EXCEPTION, NULL,
                                  "maximum recursion depth exceeded while getting the repr of "
                                  "an object");
        return r;
}

/* The conservative set: characters that are literal in an unquoted shell
 * word in every position but the first word's "=" (an assignment). */
static bool direct_word_char(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               (c != '\0' && strchr("_-./,:=+@%", c));
}

int exec_app_direct_argv(const char *name, const char *commandline, char ***ret)
{
        size_t words = 0, name_len = strlen(name), cl_len = strlen(commandline);
        char **argv, *p;

        /* Inside "..." only these four are special. */
        if (name_len == 0 || strpbrk(name, "$`\"\\"))
                return EXEC_APP_NOT_DIRECT;
        for (size_t i = 0; i < cl_len; i++) {
                bool start = i == 0 || commandline[i - 1] == ' ';

                if (commandline[i] == ' ') {
                        /* No leading, double or trailing space. */
                        if (start || i + 1 == cl_len)
                                return EXEC_APP_NOT_DIRECT;
                        continue;
                }
                words += start;
                if (!direct_word_char(commandline[i]) || (words == 1 && commandline[i] == '='))
                        return EXEC_APP_NOT_DIRECT;
        }
        /* The vector, then "./<name>", then the words, NUL-separated. */
        argv = malloc((words + 2) * sizeof(char *) + name_len + 3 + cl_len + 1);
        if (!argv)
                return -ENOMEM;
        p = (char *)(argv + words + 2);
        argv[0] = p;
        memcpy(p, "./", 2);
        memcpy(p + 2, name, name_len + 1);
        p += name_len + 3;
        memcpy(p, commandline, cl_len + 1);
        for (size_t w = 1; w <= words; w++) {
                argv[w] = p;
                p += strcspn(p, " ");
                *p++ = '\0';
        }
        argv[words + 1] = NULL;
        *ret = argv;
        return 0;
}

static int app_run(Exec *e, const char *path, const json_t *arg, const ProcRunner *runner,
                   char **io_cwd, json_t **ret_result, BodyCallError *ret_err)
{
        _cleanup_strbuf_ StrBuf cmd = STRBUF_INIT;
        _cleanup_free_ char *dir = exec_path_dirname(path);
        _cleanup_free_ char **direct = NULL;
        size_t prefix;
        ExecCommand c;
        struct stat st;
        int r;

        if (!dir)
                return -ENOMEM;
        /* Where the reference's os.chdir(dir) would fail. */
        if (stat(dir, &st) < 0)
                return exec_error_os(ret_err, errno, dir);
        if (!S_ISDIR(st.st_mode))
                return exec_error_os(ret_err, ENOTDIR, dir);
        if (io_cwd) {
                char *d = strdup(dir);
                if (!d)
                        return -ENOMEM;
                free(*io_cwd);
                *io_cwd = d;
        }
        if ((r = strbuf_printf(&cmd, "./\"%s\" ", exec_path_basename(path))) < 0)
                return r;
        prefix = cmd.len;
        if ((r = append_commandline(&cmd, arg, ret_err)) != 0)
                return r;
        r = exec_app_direct_argv(exec_path_basename(path), cmd.data + prefix, &direct);
        if (r < 0)
                return r;
        /* S_IEXEC | S_IREAD, and chmod follows the symlink to the file. */
        if (chmod(path, S_IXUSR | S_IRUSR) < 0)
                return exec_error_os(ret_err, errno, path);
        c = (ExecCommand){
                .shell = cmd.data,
                .cwd = dir,
                .name = e->script,
                .error_lines = false,
                .direct_argv = (const char *const *)direct,
        };
        return exec_command(e, &c, runner, ret_result, ret_err);
}

const ExecOps exec_application_ops = {
        .type = EXEC_APPLICATION,
        .name = "Application",
        .qualname = "ApplicationExecutor.run",
        .arg_name = "commandline",
        .run = app_run,
};
