/* Downloadable files (FormatVersion 2.1.0 and later): the reference's
 * _download_url_file(), with each download a command run through the plan's
 * ProcRunner, so that it gets the sandbox and time limits of the scripts.
 *
 *   git   git clone URL DIR            (the reference: GitPython's
 *                                       git.Git().clone(url, folder))
 *   svn   svn checkout URL --non-interactive --trust-server-cert DIR
 *                                      (the reference ran this through a
 *                                       shell; here it is an argv, so a URL
 *                                       cannot inject shell syntax)
 *   http  muranoagent-fetch ... URL DIR/<url.split('/')[-1]>
 *                                      (files-fetch.c)
 *
 * The messages are the ones the reference means to give: "Error to clone the
 * git repository URL: ..." and "Error to download the file URL: ...". (Its
 * Python 3 code reads e.message, which Python 3 exceptions lack, so it
 * actually reports "'X' object has no attribute 'message'".) A password in
 * the URL is shown as "***", in the URL and in what the command printed. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files/files-internal.h"
#include "util/pyrepr.h"
#include "util/pyjson.h"

/* The most of a command's stderr that goes into a message: its end, where
 * git and svn put the reason. */
#define STDERR_TAIL_MAX 2000

static bool is_space(char c)
{
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* The reference's checks of file_def['URL'] before anything is made. On
 * success *ret_url is the URL (borrowed from the plan). */
static int check_url(const json_t *file_def, const char **ret_url, PlanError *err)
{
        const json_t *url = json_object_get(file_def, "URL");
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        _cleanup_free_ char *masked = NULL;
        char *msg;
        int r;

        if (!url) {
                if (strbuf_puts(&b, "No valid URL in file ") < 0 || pyrepr_str(file_def, &b) < 0 ||
                    strbuf_steal(&b, &msg) < 0)
                        return -ENOMEM;
                plan_error_clear(err);
                *err = (PlanError){.code = PLAN_CODE_EXCEPTION, .message = msg};
                return FILES_FAILED;
        }
        if (!pyjson_is_string(url)) {
                /* urlsplit() decodes a value that is not a str with .decode()
                 * when it is true, and treats it as '' when it is false. */
                if (pyrepr_truthy(url))
                        return files_fail(err, PLAN_CODE_EXCEPTION,
                                          "'%s' object has no attribute 'decode'",
                                          pyrepr_type_name(url));
                if (strbuf_puts(&b, "Provided URL is not valid ") < 0 || pyrepr_str(url, &b) < 0 ||
                    strbuf_steal(&b, &msg) < 0)
                        return -ENOMEM;
                plan_error_clear(err);
                *err = (PlanError){.code = PLAN_CODE_EXCEPTION, .message = msg};
                return FILES_FAILED;
        }
        r = files_url_check(json_string_value(url));
        if (r < 0)
                return r;
        if (r == FILES_URL_BAD_IPV6)
                return files_fail(err, PLAN_CODE_EXCEPTION, "Invalid IPv6 URL");
        if (r == FILES_URL_NO_LOCATION) {
                masked = files_url_mask(json_string_value(url));
                if (!masked)
                        return -ENOMEM;
                return files_fail(err, PLAN_CODE_EXCEPTION, "Provided URL is not valid %s", masked);
        }
        *ret_url = json_string_value(url);
        return 0;
}

/* The failure message for a command that did not succeed. */
static int fail_command(PlanError *err, FilesUrlKind kind, const char *url, const char *program,
                        const ProcResult *res)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        _cleanup_free_ char *masked = files_url_mask(url);
        const char *text = res->err ? res->err : "";
        size_t len = res->err ? res->err_len : 0;
        char *msg;
        int r;

        if (!masked)
                return -ENOMEM;
        r = strbuf_printf(&b, "%s %s: ",
                          kind == FILES_URL_GIT ? "Error to clone the git repository"
                                                : "Error to download the file",
                          masked);
        /* Python's str.strip() of the captured text. */
        while (len > 0 && is_space(text[0]))
                text++, len--;
        while (len > 0 && is_space(text[len - 1]))
                len--;
        if (r >= 0 && res->failure)
                r = files_text_scrub(&b, res->failure, strlen(res->failure), url);
        else if (r >= 0 && kind == FILES_URL_HTTP && res->exit_code == 1 && len > 0)
                /* muranoagent-fetch's one line is the reason itself. */
                r = files_text_scrub(&b, text, len, url);
        else if (r >= 0) {
                r = strbuf_printf(&b, "%s exited with status %d", program, res->exit_code);
                if (r >= 0 && len > 0) {
                        r = strbuf_puts(&b, len > STDERR_TAIL_MAX ? ": ..." : ": ");
                        if (len > STDERR_TAIL_MAX) {
                                text += len - STDERR_TAIL_MAX;
                                len = STDERR_TAIL_MAX;
                        }
                        if (r >= 0)
                                r = files_text_scrub(&b, text, len, url);
                }
        }
        if (r < 0 || (r = strbuf_steal(&b, &msg)) < 0)
                return r;
        plan_error_clear(err);
        *err = (PlanError){.code = PLAN_CODE_EXCEPTION, .message = msg};
        return FILES_FAILED;
}

/* Check an HTTP download against the wanted Sha256. */
static int verify_download(Files *f, const char *file_id, const char *file_name, const char *want,
                           PlanError *err)
{
        _cleanup_close_ int dfd = -1;
        char got[FILES_SHA256_HEX + 1];
        int r;

        dfd = openat(f->cache_fd, file_id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        r = files_sha256_file_at(dfd, file_name, got);
        if (r == -ENOENT || r == -ELOOP)
                return files_fail(err, PLAN_CODE_EXCEPTION,
                                  "Checksum mismatch for file %s: expected %s, got no file",
                                  file_id, want);
        if (r < 0)
                return r;
        return files_sha256_verify(file_id, want, got, err);
}

typedef struct Command {
        const char *argv[12];
        char *owned[3];
        const char *program; /* for messages */
        const char *what_kind;
} Command;

static void command_done(Command *c)
{
        for (size_t i = 0; i < ELEMENTSOF(c->owned); i++)
                free(c->owned[i]);
}

static int command_build(Files *f, Command *c, FilesUrlKind kind, const char *url, const char *dir,
                         const char *file_name)
{
        size_t n = 0;

        switch (kind) {
        case FILES_URL_GIT:
                c->program = "git";
                c->what_kind = "git clone";
                c->argv[n++] = "git";
                c->argv[n++] = "clone";
                c->argv[n++] = url;
                c->argv[n++] = dir;
                break;
        case FILES_URL_SVN:
                c->program = "svn";
                c->what_kind = "svn checkout";
                c->argv[n++] = "svn";
                c->argv[n++] = "checkout";
                c->argv[n++] = url;
                c->argv[n++] = "--non-interactive";
                c->argv[n++] = "--trust-server-cert";
                c->argv[n++] = dir;
                break;
        default:
                c->program = "muranoagent-fetch";
                c->what_kind = "download";
                if (asprintf(&c->owned[0], "%" PRIu64, f->max_download_size) < 0)
                        c->owned[0] = NULL;
                if (asprintf(&c->owned[1], "%u", f->connect_timeout) < 0)
                        c->owned[1] = NULL;
                if (asprintf(&c->owned[2], "%s/%s", dir, file_name) < 0)
                        c->owned[2] = NULL;
                if (!c->owned[0] || !c->owned[1] || !c->owned[2])
                        return -ENOMEM;
                c->argv[n++] = f->fetch_program;
                c->argv[n++] = "--max-size";
                c->argv[n++] = c->owned[0];
                c->argv[n++] = "--connect-timeout";
                c->argv[n++] = c->owned[1];
                c->argv[n++] = "--";
                c->argv[n++] = url;
                c->argv[n++] = c->owned[2];
                break;
        }
        c->argv[n] = NULL;
        return 0;
}

/* Run the command into dir; on any failure the directory is removed, so a
 * later call starts over. */
static int run_download(Files *f, const char *file_id, FilesUrlKind kind, const char *url,
                        const char *file_name, const char *want, PlanError *err)
{
        _cleanup_free_ char *dir = NULL, *what = NULL;
        Command c = {0};
        ProcResult res = {0};
        ProcRequest req;
        int r;

        if (asprintf(&dir, "%s/%s", f->cache, file_id) < 0) {
                dir = NULL;
                return -ENOMEM;
        }
        if (mkdirat(f->cache_fd, file_id, 0777) < 0)
                return files_fail_os(err, errno, dir);
        /* The command runs as the sandbox's user and writes here. */
        if ((r = files_own_dir_at(f, f->cache_fd, file_id)) < 0) {
                r = files_fail_os(err, -r, dir);
                (void)files_rm_tree_at(f->cache_fd, file_id);
                return r;
        }
        if ((r = command_build(f, &c, kind, url, dir, file_name)) < 0)
                goto fail;
        if (asprintf(&what, "%s of file %s", c.what_kind, file_id) < 0) {
                what = NULL;
                r = -ENOMEM;
                goto fail;
        }
        req = (ProcRequest){
                .argv = c.argv,
                .cwd = dir,
                .capture_stdout = false,
                .capture_stderr = true,
                .what = what,
                .network = true,
        };
        r = f->runner.run(f->runner.userdata, &req, &res);
        if (r < 0)
                goto fail;
        if (res.failure || res.exit_code != 0)
                r = fail_command(err, kind, url, c.program, &res);
        else if (want[0])
                r = verify_download(f, file_id, file_name, want, err);
        proc_result_clear(&res);
        if (r != 0)
                goto fail;
        command_done(&c);
        return 0;
fail:
        command_done(&c);
        (void)files_rm_tree_at(f->cache_fd, file_id);
        return r;
}

int files_download(Files *f, const char *file_id, const json_t *file_def, PlanError *err)
{
        _cleanup_free_ char *masked = NULL;
        char want[FILES_SHA256_HEX + 1];
        const char *url = NULL, *file_name = NULL;
        FilesUrlKind kind;
        struct stat st;
        int r;

        if (json_object_get(f->done, file_id))
                return 0;
        /* The reference: `if os.path.isdir(folder): return folder`. */
        if (fstatat(f->cache_fd, file_id, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
                return json_object_set_new(f->done, file_id, json_true()) < 0 ? -ENOMEM : 0;
        if ((r = check_url(file_def, &url, err)) != 0)
                return r;
        kind = files_url_kind(url);
        if ((r = files_sha256_wanted(file_def, file_id, want, err)) != 0)
                return r;
        if (want[0] && kind != FILES_URL_HTTP)
                return files_fail(err, PLAN_CODE_EXCEPTION,
                                  "Sha256 is only supported for inline and HTTP files: file %s "
                                  "is a%s checkout",
                                  file_id, kind == FILES_URL_GIT ? " git" : "n svn");
        if (kind == FILES_URL_HTTP) {
                /* The reference saves to url.split('/')[-1]; a URL that
                 * ends in '/' gives no name to save to. */
                file_name = files_url_last_piece(url);
                if (files_component_problem(file_name, strlen(file_name))) {
                        masked = files_url_mask(url);
                        if (!masked)
                                return -ENOMEM;
                        return files_fail(err, PLAN_CODE_EXCEPTION,
                                          "Error to download the file %s: the URL does not end "
                                          "in a file name",
                                          masked);
                }
                if (!f->fetch_program) {
                        masked = files_url_mask(url);
                        if (!masked)
                                return -ENOMEM;
                        return files_fail(err, PLAN_CODE_EXCEPTION,
                                          "Error to download the file %s: the download program "
                                          "muranoagent-fetch cannot be found",
                                          masked);
                }
        }
        if (!f->have_runner)
                return -EINVAL;
        if ((r = run_download(f, file_id, kind, url, file_name, want, err)) != 0)
                return r;
        return json_object_set_new(f->done, file_id, json_true()) < 0 ? -ENOMEM : 0;
}
