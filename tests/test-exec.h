/* Shared by test-exec.c and test-exec-chef.c: a fake ProcRunner that
 * really runs each command with posix_spawn and waitpid, with PATH leading
 * to the fake chef-solo, puppet and berks of tests/data/exec/bin (they
 * record their arguments, working directory and files into a log), a
 * temporary directory per test, and helpers to make one Body call and
 * compare its outcome. Included once per test program. */
#pragma once

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec/exec-internal.h"
#include "util/fileio.h"
#include "util/pyjson.h"
#include "test-lib.h"

#define BIN_DIR TEST_DATA_DIR "/exec/bin"

/* What the fake runner saw, and what it should do instead of running. */
static struct {
        int calls;
        char *argv; /* the last request's argv, joined with '|' */
        char *cwd;
        char *what;
        bool capture_stdout;
        bool capture_stderr;
        int fail_kind; /* PROC_FAIL_*: report this instead of running */
        int ret;       /* a negative errno to return instead of running */
        char *env[8];
} fake;

static char tmp[] = "/tmp/test-exec-XXXXXX";
static char *tmpdir; /* tmp after mkdtemp; the script directory is tmp/deploy */
static char *deploy; /* tmp/deploy */
static char *logpath;

_unused_ static void setup(void)
{
        strcpy(tmp, "/tmp/test-exec-XXXXXX");
        tmpdir = mkdtemp(tmp);
        ck_assert_ptr_nonnull(tmpdir);
        ck_assert_int_ge(asprintf(&deploy, "%s/deploy", tmpdir), 0);
        ck_assert_int_ge(asprintf(&logpath, "%s/fake.log", tmpdir), 0);
        ck_assert_int_eq(mkdir(deploy, 0700), 0);
        ck_assert_int_ge(asprintf(&fake.env[0], "PATH=%s:/usr/bin:/bin", BIN_DIR), 0);
        ck_assert_int_ge(asprintf(&fake.env[1], "EXEC_FAKE_LOG=%s", logpath), 0);
}

_unused_ static void teardown(void)
{
        rm_rf(tmpdir);
        free(deploy);
        free(logpath);
        free(fake.argv);
        free(fake.cwd);
        free(fake.what);
        for (size_t i = 0; i < ELEMENTSOF(fake.env); i++)
                free(fake.env[i]);
        memset(&fake, 0, sizeof fake);
}

/* Extra environment for the fake programs, e.g. "EXEC_FAKE_BERKS_EXIT=3". */
_unused_ static void fake_env(const char *assignment)
{
        size_t i = 0;
        while (fake.env[i])
                i++;
        ck_assert_uint_lt(i + 1, ELEMENTSOF(fake.env));
        fake.env[i] = strdup(assignment);
}

_unused_ static int read_fd(int fd, StrBuf *b)
{
        char buf[4096];
        ssize_t n = read(fd, buf, sizeof buf);
        if (n > 0)
                ck_assert_int_eq(strbuf_append(b, buf, (size_t)n), 0);
        return (int)n;
}

_unused_ static int fake_run(void *userdata, const ProcRequest *req, ProcResult *ret)
{
        posix_spawn_file_actions_t fa;
        StrBuf argv = STRBUF_INIT, out = STRBUF_INIT, err = STRBUF_INIT;
        int po[2], pe[2], status;
        pid_t pid;

        fake.calls++;
        for (size_t i = 0; req->argv[i]; i++)
                strbuf_printf(&argv, "%s%s", i ? "|" : "", req->argv[i]);
        free(fake.argv);
        free(fake.cwd);
        free(fake.what);
        strbuf_steal(&argv, &fake.argv);
        fake.cwd = strdup(req->cwd);
        fake.what = strdup(req->what);
        fake.capture_stdout = req->capture_stdout;
        fake.capture_stderr = req->capture_stderr;
        if (fake.ret)
                return fake.ret;
        if (fake.fail_kind) {
                *ret = (ProcResult){.exit_code = -9, .failure_kind = fake.fail_kind};
                ret->failure = strdup("the runner's reason");
                if (req->capture_stdout) {
                        ret->out = strdup("partial\n");
                        ret->out_len = 8;
                }
                return 0;
        }
        ck_assert_int_eq(pipe2(po, O_CLOEXEC), 0);
        ck_assert_int_eq(pipe2(pe, O_CLOEXEC), 0);
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        if (req->capture_stdout)
                posix_spawn_file_actions_adddup2(&fa, po[1], 1);
        else
                posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        if (req->capture_stderr)
                posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
        else
                posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addchdir_np(&fa, req->cwd);
        ck_assert_int_eq(
                posix_spawn(&pid, req->argv[0], &fa, NULL, (char *const *)req->argv, fake.env), 0);
        posix_spawn_file_actions_destroy(&fa);
        close(po[1]);
        close(pe[1]);
        for (struct pollfd p[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
             p[0].fd >= 0 || p[1].fd >= 0;) {
                ck_assert_int_ge(poll(p, 2, -1), 0);
                for (int i = 0; i < 2; i++)
                        if (p[i].fd >= 0 && p[i].revents &&
                            read_fd(p[i].fd, i ? &err : &out) <= 0) {
                                close(p[i].fd);
                                p[i].fd = -1;
                        }
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        *ret = (ProcResult){.exit_code =
                                    WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status)};
        if (req->capture_stdout) {
                ret->out_len = out.len;
                strbuf_steal(&out, &ret->out);
        }
        if (req->capture_stderr) {
                ret->err_len = err.len;
                strbuf_steal(&err, &ret->err);
        }
        strbuf_free(&out);
        strbuf_free(&err);
        return 0;
}

static const ProcRunner runner = {.userdata = NULL, .run = fake_run};

/* ---- helpers ---- */

_unused_ static json_t *parse(const char *text)
{
        json_error_t e;
        json_t *v = json_loads(text, JSON_DECODE_ANY, &e);
        ck_assert_msg(v, "bad test JSON %s: %s", text, e.text);
        return v;
}

_unused_ static char *dumps(const json_t *v)
{
        char *s = NULL;
        ck_assert_int_eq(pyjson_dumps(v, &s), 0);
        return s;
}

_unused_ static void write_text(const char *path, const char *text, mode_t mode)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
}

_unused_ static char *read_text(const char *path)
{
        char *text = NULL;
        size_t len;
        if (file_read_all(path, 1 << 20, &text, &len) < 0)
                return NULL;
        return text;
}

/* tmpdir/<a><b> */
_unused_ static char *tmp_path(const char *a, const char *b)
{
        char *path = NULL;
        ck_assert_int_ge(asprintf(&path, "%s/%s%s", tmpdir, a, b), 0);
        return path;
}

/* Lay the entry file out as agent/files does: the content under files/,
 * a symlink to it in the script's directory. Returns the symlink. */
_unused_ static char *entry_file(const char *name, const char *body)
{
        char *file = tmp_path("files-", name);
        char *link = tmp_path("deploy/", name);
        write_text(file, body, 0644);
        ck_assert_int_eq(symlink(file, link), 0);
        free(file);
        return link;
}

_unused_ static Exec *new_exec(const char *type, const char *entry_point, const char *options)
{
        char *text = NULL;
        json_t *script;
        BodyCallError err = {0};
        Exec *e = NULL;

        ck_assert_int_ge(asprintf(&text, "{\"Type\": \"%s\", \"EntryPoint\": \"%s\"%s%s}", type,
                                  entry_point, options ? ", \"Options\": " : "",
                                  options ? options : ""),
                         0);
        script = parse(text);
        ck_assert_int_eq(exec_new("deploy", script, &e, &err), 0);
        json_decref(script);
        free(text);
        return e;
}

typedef struct Outcome {
        int r;
        char *result; /* json.dumps of the result, or NULL */
        BodyCallError err;
        char *info; /* json.dumps of AdditionalInfo, or NULL */
        char *cwd;  /* io_cwd after the call */
} Outcome;

_unused_ static void outcome_clear(Outcome *o)
{
        free(o->result);
        free(o->info);
        free(o->cwd);
        exec_error_clear(&o->err);
        *o = (Outcome){0};
}

/* One Body call, passed through as the runner does it. */
_unused_ static Outcome call(Exec *e, const char *path, const char *function, const char *args,
                             const char *kwargs)
{
        json_t *a = parse(args ? args : "[]"), *k = parse(kwargs ? kwargs : "{}");
        BodyCall c = {.script = "deploy", .function = function, .args = a, .kwargs = k};
        json_t *result = NULL;
        Outcome o = {0};

        o.r = exec_check_call(&c, &o.err);
        if (o.r == 0)
                o.r = exec_run(e, path, &c, &runner, &o.cwd, &result, &o.err);
        if (o.r == 0) {
                o.result = dumps(result);
                json_decref(result);
        }
        if (o.r == 1 && o.err.additional_info)
                o.info = dumps(o.err.additional_info);
        json_decref(a);
        json_decref(k);
        return o;
}

_unused_ static void check_error(const Outcome *o, int code, const char *message, const char *info)
{
        ck_assert_int_eq(o->r, 1);
        ck_assert_int_eq(o->err.code, code);
        ck_assert_str_eq(o->err.message, message);
        if (info)
                ck_assert_str_eq(o->info, info);
        else
                ck_assert_ptr_null(o->info);
}

/* The fake programs' log with @ standing for the temporary directory. */
_unused_ static void check_log(const char *expected)
{
        StrBuf want = STRBUF_INIT;
        char *got = read_text(logpath);

        for (const char *p = expected; *p; p++)
                ck_assert_int_eq(*p == '@' ? strbuf_puts(&want, tmpdir) : strbuf_putc(&want, *p),
                                 0);
        ck_assert_ptr_nonnull(got);
        ck_assert_str_eq(got, want.data);
        strbuf_free(&want);
        free(got);
}
