/* exec-app: the Application executor, run(function, commandline='',
 * input=None).
 *
 * The reference changes the agent's working directory to the entry file's
 * directory, formats the command as './"<file name>" <commandline>' (the
 * commandline goes in as raw shell text, after Python's str() of whatever
 * the Body passed), makes the entry file 0500 through the symlink, and runs
 * the text with /bin/sh -c in that directory. `input` is accepted and
 * ignored, as in the reference, whose child's stdin is not a pipe. We do not
 * change the agent's own directory: the caller gets it in io_cwd instead. */
#include <errno.h>
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

static int app_run(Exec *e, const char *path, const json_t *arg, const ProcRunner *runner,
                   char **io_cwd, json_t **ret_result, BodyCallError *ret_err)
{
        _cleanup_strbuf_ StrBuf cmd = STRBUF_INIT;
        _cleanup_free_ char *dir = exec_path_dirname(path);
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
        if ((r = append_commandline(&cmd, arg, ret_err)) != 0)
                return r;
        /* S_IEXEC | S_IREAD, and chmod follows the symlink to the file. */
        if (chmod(path, S_IXUSR | S_IRUSR) < 0)
                return exec_error_os(ret_err, errno, path);
        c = (ExecCommand){
                .shell = cmd.data,
                .cwd = dir,
                .name = e->script,
                .error_lines = false,
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
