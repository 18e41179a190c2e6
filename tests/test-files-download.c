/* Tests for the files module's downloads: the reference's URL rules, the
 * argv of git, svn and muranoagent-fetch (recorded by a fake ProcRunner), failure
 * messages without passwords, and HTTP for real: muranoagent-fetch against a tiny
 * server on 127.0.0.1, alone and through files_prepare_script(). */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "files/files-internal.h"
#include "files/files.h"
#include "plan/plan.h"
#include "test-files.h"
#include "util/strbuf.h"
#include "test-lib.h"

/* --- a fake ProcRunner ---------------------------------------------------- */

enum {
        FAKE_OK,      /* record; create a file "checkout" in cwd; exit 0 */
        FAKE_EXIT,    /* record; print fake->stderr_text to stderr; exit 128 */
        FAKE_TIMEOUT, /* record; report a timeout */
        FAKE_RUN,     /* run muranoagent-fetch for real, in a forked child */
};

typedef struct Fake {
        int mode;
        int calls;
        char *argv;       /* the last argv, joined with '|' */
        char *cwd;        /* the last cwd */
        char *what;       /* the last what */
        bool capture_err; /* the last capture_stderr */
        const char *stderr_text;
} Fake;

static void fake_clear(Fake *f)
{
        free(f->argv);
        free(f->cwd);
        free(f->what);
}

/* The muranoagent-fetch that was built, from $MURANOAGENT_FETCH
 * (tests/meson.build). */
static const char *fetch_program(void)
{
        const char *p = getenv("MURANOAGENT_FETCH");

        ck_assert_msg(p && *p, "MURANOAGENT_FETCH is not set");
        return p;
}

/* Run muranoagent-fetch with argv (argv[0] is only its name) in a child
 * with stderr captured. Returns the exit status; *ret_err gets stderr. */
static int run_fetch_child(const char *const *argv, const char *cwd, char **ret_err)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        const char *program = fetch_program();
        int p[2], status;
        char buf[4096];
        ssize_t n;
        pid_t pid;

        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                dup2(p[1], STDERR_FILENO);
                if (cwd && chdir(cwd) < 0)
                        _exit(99);
                execv(program, (char **)argv);
                _exit(98);
        }
        close(p[1]);
        while ((n = read(p[0], buf, sizeof(buf))) > 0)
                ck_assert_int_eq(strbuf_append(&b, buf, (size_t)n), 0);
        close(p[0]);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status));
        ck_assert_int_eq(strbuf_puts(&b, ""), 0);
        ck_assert_int_eq(strbuf_steal(&b, ret_err), 0);
        return WEXITSTATUS(status);
}

static int fake_run(void *userdata, const ProcRequest *req, ProcResult *ret)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        Fake *fake = userdata;

        fake->calls++;
        for (size_t i = 0; req->argv[i]; i++) {
                if (i > 0)
                        ck_assert_int_eq(strbuf_putc(&b, '|'), 0);
                ck_assert_int_eq(strbuf_puts(&b, req->argv[i]), 0);
        }
        fake_clear(fake);
        ck_assert_int_eq(strbuf_steal(&b, &fake->argv), 0);
        fake->cwd = strdup(req->cwd);
        fake->what = strdup(req->what);
        fake->capture_err = req->capture_stderr;
        *ret = (ProcResult){0};

        switch (fake->mode) {
        case FAKE_OK: {
                _cleanup_free_ char *marker = pathf("%s/checkout", req->cwd);
                int fd = open(marker, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
                ck_assert_int_ge(fd, 0);
                close(fd);
                return 0;
        }
        case FAKE_EXIT:
                ret->exit_code = 128;
                ret->err = strdup(fake->stderr_text);
                ret->err_len = strlen(fake->stderr_text);
                return 0;
        case FAKE_TIMEOUT:
                ret->exit_code = -9;
                ret->failure = strdup("the script timeout (10 s) expired");
                ret->failure_kind = PROC_FAIL_TIMEOUT;
                return 0;
        default:
                /* argv[0] is the program files_new() found. */
                ck_assert_str_eq(req->argv[0], fetch_program());
                ret->exit_code = run_fetch_child(req->argv, req->cwd, &ret->err);
                ret->err_len = strlen(ret->err);
                return 0;
        }
}

/* --- a tiny HTTP server on 127.0.0.1 -------------------------------------- */

static const char BODY[] = "served body\n";
#define BODY_SHA256 "5b7889c89c3c5aac259aab45af205a7316871eb0956236be8146a2fb98278d06"

static void serve_one(int c)
{
        char req[4096], path[256] = "", resp[8192];
        size_t got = 0;
        int n = 0;

        while (got < sizeof(req) - 1) {
                ssize_t r = read(c, req + got, sizeof(req) - 1 - got);
                if (r <= 0)
                        break;
                got += (size_t)r;
                req[got] = 0;
                if (strstr(req, "\r\n\r\n"))
                        break;
        }
        req[got] = 0;
        sscanf(req, "GET %255s", path);

        if (streq(path, "/dir/file.txt"))
                n = snprintf(
                        resp, sizeof(resp),
                        "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
                        strlen(BODY), BODY);
        else if (streq(path, "/redirect"))
                n = snprintf(resp, sizeof(resp),
                             "HTTP/1.1 302 Found\r\nLocation: /dir/file.txt\r\n"
                             "Content-Length: 5\r\nConnection: close\r\n\r\nmoved");
        else if (streq(path, "/announced-big"))
                n = snprintf(
                        resp, sizeof(resp),
                        "HTTP/1.1 200 OK\r\nContent-Length: 5000\r\nConnection: close\r\n\r\n");
        else if (streq(path, "/unannounced-big")) {
                n = snprintf(resp, sizeof(resp), "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
                memset(resp + n, 'x', 5000);
                n += 5000;
        } else
                n = snprintf(resp, sizeof(resp),
                             "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n"
                             "Connection: close\r\n\r\nnot found");
        for (int off = 0; off < n;) {
                ssize_t w = write(c, resp + off, (size_t)(n - off));
                if (w <= 0)
                        break;
                off += (int)w;
        }
        shutdown(c, SHUT_WR);
        while (read(c, req, sizeof(req)) > 0)
                ;
        close(c);
}

typedef struct Server {
        pid_t pid;
        int port;
} Server;

static Server server_start(void)
{
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof(a);
        Server s;
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
        ck_assert_int_eq(listen(fd, 16), 0);
        ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
        s.port = ntohs(a.sin_port);
        s.pid = fork();
        ck_assert_int_ge(s.pid, 0);
        if (s.pid == 0) {
                for (;;) {
                        int c = accept(fd, NULL, NULL);
                        if (c >= 0)
                                serve_one(c);
                }
        }
        close(fd);
        return s;
}

static void server_stop(Server s)
{
        int status;

        kill(s.pid, SIGKILL);
        ck_assert_int_eq(waitpid(s.pid, &status, 0), s.pid);
}

/* --- downloads ------------------------------------------------------------ */

static json_t *download_plan(const char *url, const char *extra)
{
        _cleanup_free_ char *file = pathf(
                "\"d\": {\"Name\": \"src/repo\", \"Type\": \"Downloadable\", \"URL\": \"%s\"%s}",
                url, extra);
        return one_script_plan("[\"d\"]", file);
}

static const struct {
        const char *url;
        const char *argv; /* with CACHE for the cache dir, EXE for muranoagent-fetch */
        const char *what;
} argv_cases[] = {
        {"git://github.com/tomcat.git", "git|clone|git://github.com/tomcat.git|CACHE/d",
         "git clone of file d"},
        {"https://h/x.git", "git|clone|https://h/x.git|CACHE/d", "git clone of file d"},
        {"git+https://h/x", "git|clone|git+https://h/x|CACHE/d", "git clone of file d"},
        {"https://mysvn/svn/repo",
         "svn|checkout|https://mysvn/svn/repo|--non-interactive|--trust-server-cert|CACHE/d",
         "svn checkout of file d"},
        {"svn://test/x; rm -rf /",
         "svn|checkout|svn://test/x; rm -rf /|--non-interactive|--trust-server-cert|CACHE/d",
         "svn checkout of file d"},
        {"https://www.apache.org/licenses/LICENSE-2.0.txt?x=1",
         "EXE|--max-size|1073741824|--connect-timeout|30|--|"
         "https://www.apache.org/licenses/LICENSE-2.0.txt?x=1|CACHE/d/LICENSE-2.0.txt?x=1",
         "download of file d"},
};

static char *expand(const char *tmpl, const char *cache, const char *exe)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        char *s;

        for (const char *p = tmpl; *p;) {
                if (strncmp(p, "CACHE", 5) == 0) {
                        ck_assert_int_eq(strbuf_puts(&b, cache), 0);
                        p += 5;
                } else if (strncmp(p, "EXE", 3) == 0) {
                        ck_assert_int_eq(strbuf_puts(&b, exe), 0);
                        p += 3;
                } else
                        ck_assert_int_eq(strbuf_putc(&b, *p++), 0);
        }
        ck_assert_int_eq(strbuf_steal(&b, &s), 0);
        return s;
}

START_TEST(test_download_argv)
{
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        _cleanup_(files_freep) Files *f = NULL;
        _cleanup_json_ json_t *plan = download_plan(argv_cases[_i].url, "");
        _cleanup_free_ char *path = NULL, *want = NULL, *p = NULL, *target = NULL;
        const char *exe = fetch_program();
        Fake fake = {.mode = FAKE_OK};
        ProcRunner runner = {&fake, fake_run};

        ck_assert_int_eq(files_new(storage, "p1", plan, &runner, NULL, &f), 0);
        ck_assert_int_eq(files_prepare_script(f, "s", &path, &err), 0);
        ck_assert_int_eq(fake.calls, 1);
        want = expand(argv_cases[_i].argv, files_cache_dir(f), exe);
        ck_assert_str_eq(fake.argv, want);
        target = pathf("%s/d", files_cache_dir(f));
        ck_assert_str_eq(fake.cwd, target);
        ck_assert(fake.capture_err);
        ck_assert_str_eq(fake.what, argv_cases[_i].what);
        /* The symlink names the download folder. */
        p = pathf("%s/s/src/repo", files_cache_dir(f));
        assert_link(p, target);
        free(p), p = pathf("%s/checkout", target);
        ck_assert(exists(p));
        /* Once per plan. */
        free(path), path = NULL;
        ck_assert_int_eq(files_prepare_script(f, "s", &path, &err), 0);
        ck_assert_int_eq(fake.calls, 1);
        fake_clear(&fake);
}
END_TEST

START_TEST(test_download_failures)
{
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        _cleanup_(files_freep) Files *f = NULL;
        _cleanup_json_ json_t *plan = download_plan("https://user:s3cret@h/x.git", "");
        _cleanup_free_ char *path = NULL, *dir = NULL;
        Fake fake = {.mode = FAKE_EXIT,
                     .stderr_text = "Cloning into '/x'...\nfatal: unable to access "
                                    "'https://user:s3cret@h/x.git/': Could not resolve host: h\n"};
        ProcRunner runner = {&fake, fake_run};

        ck_assert_int_eq(files_new(storage, "p1", plan, &runner, NULL, &f), 0);
        ck_assert_int_eq(files_prepare_script(f, "s", &path, &err), FILES_FAILED);
        ck_assert_int_eq(err.code, 1);
        ck_assert_str_eq(err.message,
                         "Error to clone the git repository https://user:***@h/x.git: git exited "
                         "with status 128: Cloning into '/x'...\nfatal: unable to access "
                         "'https://user:***@h/x.git/': Could not resolve host: h");
        ck_assert_str_eq(fake.what, "git clone of file d");
        dir = pathf("%s/d", files_cache_dir(f));
        ck_assert(!exists(dir)); /* removed: a later call starts over */

        fake.mode = FAKE_TIMEOUT;
        ck_assert_int_eq(files_prepare_script(f, "s", &path, &err), FILES_FAILED);
        ck_assert_str_eq(err.message, "Error to clone the git repository https://user:***@h/x.git: "
                                      "the script timeout (10 s) expired");
        ck_assert_int_eq(fake.calls, 2);
        ck_assert(!exists(dir));

        fake.mode = FAKE_OK;
        ck_assert_int_eq(files_prepare_script(f, "s", &path, &err), 0);
        ck_assert_int_eq(fake.calls, 3);
        fake_clear(&fake);
}
END_TEST

static const struct {
        const char *file;
        const char *message;
} url_error_cases[] = {
        {"\"d\": {\"Name\": \"n\", \"Type\": \"Downloadable\"}",
         "No valid URL in file {'Name': 'n', 'Type': 'Downloadable'}"},
        {"\"d\": {\"Name\": \"n\", \"Type\": \"Downloadable\", \"URL\": \"path/only\"}",
         "Provided URL is not valid path/only"},
        {"\"d\": {\"Name\": \"n\", \"Type\": \"Downloadable\", \"URL\": \"http://[::1/x\"}",
         "Invalid IPv6 URL"},
        {"\"d\": {\"Name\": \"n\", \"Type\": \"Downloadable\", \"URL\": 5}",
         "'int' object has no attribute 'decode'"},
        {"\"d\": {\"Name\": \"n\", \"Type\": \"Downloadable\", \"URL\": \"\"}",
         "Provided URL is not valid "},
        {"\"d\": {\"Name\": \"n\", \"Type\": \"Downloadable\", \"URL\": \"https://u:p@h/dir/\"}",
         "Error to download the file https://u:***@h/dir/: the URL does not end in a file name"},
        {"\"d\": {\"Name\": \"n\", \"Type\": \"Downloadable\", \"URL\": \"git://h/r\", "
         "\"Sha256\": \"" BODY_SHA256 "\"}",
         "Sha256 is only supported for inline and HTTP files: file d is a git checkout"},
        {"\"d\": {\"Name\": \"n\", \"Type\": \"Downloadable\", \"URL\": \"svn://h/r\", "
         "\"Sha256\": \"" BODY_SHA256 "\"}",
         "Sha256 is only supported for inline and HTTP files: file d is an svn checkout"},
        {"\"d\": {\"Name\": \"n\", \"Type\": \"Downloadable\", \"URL\": \"https://h/f\", "
         "\"Sha256\": \"abc\"}",
         "Invalid Sha256 in file d: expected 64 hexadecimal digits"},
};

START_TEST(test_url_errors)
{
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        _cleanup_(files_freep) Files *f = NULL;
        _cleanup_json_ json_t *plan = one_script_plan("[\"d\"]", url_error_cases[_i].file);
        _cleanup_free_ char *path = NULL, *dir = NULL;
        Fake fake = {.mode = FAKE_OK};
        ProcRunner runner = {&fake, fake_run};

        ck_assert_int_eq(files_new(storage, "p1", plan, &runner, NULL, &f), 0);
        ck_assert_int_eq(files_prepare_script(f, "s", &path, &err), FILES_FAILED);
        ck_assert_int_eq(err.code, 1);
        ck_assert_str_eq(err.message, url_error_cases[_i].message);
        ck_assert_int_eq(fake.calls, 0);
        dir = pathf("%s/d", files_cache_dir(f));
        ck_assert(!exists(dir));
}
END_TEST

/* The reference's unit tests (test_files_manager.py), then more. */
static const struct {
        const char *url;
        FilesUrlKind kind;
} kind_cases[] = {
        {"https://sdfa/svn/ss", FILES_URL_SVN},
        {"svn://test", FILES_URL_SVN},
        {"httpp://sdfa/svn/ss", FILES_URL_HTTP},
        {"svn:sdfa/svn/ss", FILES_URL_HTTP},
        {"git://github.com/tomcat.git", FILES_URL_GIT},
        {"https://www.apache.org/licenses", FILES_URL_HTTP},
        {"git+http://h/r", FILES_URL_GIT},
        {"git+https:/h/r", FILES_URL_GIT},
        {"https://h/svn/r.git", FILES_URL_GIT},
        {"http:///svn/", FILES_URL_SVN},
        {"xhttps://a/svn/b", FILES_URL_SVN},
        {"https://a\n/svn/b", FILES_URL_HTTP},
        {"https://a/svn\n/svn/b", FILES_URL_HTTP},
        {"git+svn://x", FILES_URL_SVN},
        {"https://a/svnx/y", FILES_URL_HTTP},
        {"ftp://h/f.tgz", FILES_URL_HTTP},
};

START_TEST(test_url_kind)
{
        ck_assert_int_eq(files_url_kind(kind_cases[_i].url), kind_cases[_i].kind);
}
END_TEST

/* Against Python 3.11's urlsplit(u).scheme or .netloc. */
static const struct {
        const char *url;
        int want;
} check_cases[] = {
        {"https://x/y", 0},
        {"x:", 0},
        {"1x:y", FILES_URL_NO_LOCATION},
        {"//host/p", 0},
        {"///p", FILES_URL_NO_LOCATION},
        {"path/only", FILES_URL_NO_LOCATION},
        {"localhost:80", 0},
        {"user@host:repo.git", FILES_URL_NO_LOCATION},
        {"  http://x", 0},
        {"ht\ttp://x", 0},
        {"http://[::1/x", FILES_URL_BAD_IPV6},
        {"//[::1]/x", 0},
        {"//a]b/", FILES_URL_BAD_IPV6},
        {"a_b://x", FILES_URL_NO_LOCATION},
        {"?//x", FILES_URL_NO_LOCATION},
        {"//", FILES_URL_NO_LOCATION},
        {"http://[::1]:80/", 0},
};

START_TEST(test_url_check)
{
        ck_assert_int_eq(files_url_check(check_cases[_i].url), check_cases[_i].want);
}
END_TEST

START_TEST(test_url_mask)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        char *s;

        s = files_url_mask("https://user:pw@host/a:b@c");
        ck_assert_str_eq(s, "https://user:***@host/a:b@c");
        free(s);
        s = files_url_mask("https://token@host/x");
        ck_assert_str_eq(s, "https://token@host/x");
        free(s);
        s = files_url_mask("https://a:b@c:d@host/x");
        ck_assert_str_eq(s, "https://a:***@host/x");
        free(s);
        ck_assert_int_eq(files_text_scrub(&b, "x pw y \xff", 8, "https://u:pw@h/"), 0);
        ck_assert_str_eq(b.data, "x *** y ?");
        ck_assert_str_eq(files_url_last_piece("https://h/a/b.tgz"), "b.tgz");
}
END_TEST

/* --- muranoagent-fetch and HTTP downloads ------------------------------- */

START_TEST(test_fetch_url)
{
        Server srv = server_start();
        _cleanup_free_ char *dest = pathf("%s/out.txt", storage);
        _cleanup_free_ char *url = NULL, *err = NULL, *data = NULL;

        url = pathf("http://127.0.0.1:%d/dir/file.txt", srv.port);
        ck_assert_int_eq(
                run_fetch_child((const char *[]){"muranoagent-fetch", url, dest, NULL}, NULL, &err),
                0);
        ck_assert_str_eq(err, "");
        data = slurp(dest, NULL);
        ck_assert_str_eq(data, BODY);

        /* A redirect is followed. */
        free(data), free(err), free(url);
        ck_assert_int_eq(unlink(dest), 0);
        url = pathf("http://127.0.0.1:%d/redirect", srv.port);
        ck_assert_int_eq(
                run_fetch_child((const char *[]){"muranoagent-fetch", url, dest, NULL}, NULL, &err),
                0);
        data = slurp(dest, NULL);
        ck_assert_str_eq(data, BODY);

        /* 404 fails, and leaves no file. */
        free(err), free(url);
        url = pathf("http://127.0.0.1:%d/missing", srv.port);
        ck_assert_int_eq(
                run_fetch_child((const char *[]){"muranoagent-fetch", url, dest, NULL}, NULL, &err),
                1);
        ck_assert_str_eq(err, "the server answered with HTTP status 404\n");
        ck_assert(!exists(dest));

        /* The size limit, announced by Content-Length or not. */
        free(err), free(url);
        url = pathf("http://127.0.0.1:%d/announced-big", srv.port);
        ck_assert_int_eq(run_fetch_child((const char *[]){"muranoagent-fetch", "--max-size", "100",
                                                          url, dest, NULL},
                                         NULL, &err),
                         1);
        ck_assert_str_eq(err, "the file is larger than 100 bytes\n");
        ck_assert(!exists(dest));
        free(err), free(url);
        url = pathf("http://127.0.0.1:%d/unannounced-big", srv.port);
        ck_assert_int_eq(run_fetch_child((const char *[]){"muranoagent-fetch", "--max-size", "4999",
                                                          "--", url, dest, NULL},
                                         NULL, &err),
                         1);
        ck_assert_str_eq(err, "the file is larger than 4999 bytes\n");
        ck_assert(!exists(dest));
        free(err);
        ck_assert_int_eq(run_fetch_child((const char *[]){"muranoagent-fetch", "--max-size", "5000",
                                                          "--", url, dest, NULL},
                                         NULL, &err),
                         0);
        ck_assert(exists(dest));

        /* Other protocols are refused. */
        free(err);
        ck_assert_int_eq(run_fetch_child((const char *[]){"muranoagent-fetch", "file:///etc/passwd",
                                                          dest, NULL},
                                         NULL, &err),
                         1);
        ck_assert(!exists(dest));

        /* Command line errors. */
        free(err);
        ck_assert_int_eq(
                run_fetch_child((const char *[]){"muranoagent-fetch", url, NULL}, NULL, &err), 2);
        ck_assert_str_eq(err, "muranoagent-fetch: URL and DEST are needed\n"
                              "Usage: muranoagent-fetch [--max-size BYTES] [--connect-timeout "
                              "SECONDS] URL DEST\n");
        free(err);
        ck_assert_int_eq(run_fetch_child((const char *[]){"muranoagent-fetch", "--max-size", "x",
                                                          url, dest, NULL},
                                         NULL, &err),
                         2);
        server_stop(srv);
}
END_TEST

START_TEST(test_http_download)
{
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        _cleanup_(files_freep) Files *f = NULL;
        _cleanup_json_ json_t *plan = NULL;
        _cleanup_free_ char *url = NULL, *path = NULL, *p = NULL, *data = NULL, *want = NULL;
        Server srv = server_start();
        Fake fake = {.mode = FAKE_RUN};
        ProcRunner runner = {&fake, fake_run};

        url = pathf("http://127.0.0.1:%d/dir/file.txt", srv.port);
        plan = download_plan(url, ", \"Sha256\": \"" BODY_SHA256 "\"");
        ck_assert_int_eq(files_new(storage, "p1", plan, &runner, NULL, &f), 0);
        ck_assert_int_eq(files_prepare_script(f, "s", &path, &err), 0);
        ck_assert_str_eq(fake.what, "download of file d");
        p = pathf("%s/s/src/repo/file.txt", files_cache_dir(f));
        data = slurp(p, NULL);
        ck_assert_str_eq(data, BODY);
        f = files_free(f);
        json_decref(plan);

        /* A wrong Sha256: the download is removed again. */
        plan = download_plan(
                url, ", \"Sha256\": "
                     "\"0000000000000000000000000000000000000000000000000000000000000000\"");
        ck_assert_int_eq(files_new(storage, "p1", plan, &runner, NULL, &f), 0);
        ck_assert_int_eq(files_prepare_script(f, "s", &path, &err), FILES_FAILED);
        ck_assert_str_eq(err.message, "Checksum mismatch for file d: expected "
                                      "0000000000000000000000000000000000000000000000000000000000"
                                      "000000, got " BODY_SHA256);
        free(p), p = pathf("%s/d", files_cache_dir(f));
        ck_assert(!exists(p));
        f = files_free(f);
        json_decref(plan);

        /* 404: muranoagent-fetch's reason in the reference's wording. */
        free(url), url = pathf("http://127.0.0.1:%d/missing", srv.port);
        plan = download_plan(url, "");
        ck_assert_int_eq(files_new(storage, "p1", plan, &runner, NULL, &f), 0);
        ck_assert_int_eq(files_prepare_script(f, "s", &path, &err), FILES_FAILED);
        want = pathf("Error to download the file %s: the server answered with HTTP status 404",
                     url);
        ck_assert_str_eq(err.message, want);
        fake_clear(&fake);
        server_stop(srv);
}
END_TEST

/* Without muranoagent-fetch an HTTP download fails with a message, and the
 * lookup's explicit setting never falls back. */
START_TEST(test_fetch_missing)
{
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        _cleanup_(files_freep) Files *f = NULL;
        _cleanup_json_ json_t *plan = download_plan("https://u:pw@h/a/b.tgz", "");
        _cleanup_free_ char *saved = strdup(fetch_program()), *path = NULL, *found = NULL;
        Fake fake = {.mode = FAKE_OK};
        ProcRunner runner = {&fake, fake_run};

        ck_assert_int_eq(files_fetch_program_path(&found), 0);
        ck_assert_str_eq(found, saved);
        ck_assert_int_eq(setenv("MURANOAGENT_FETCH", "/nonexistent/muranoagent-fetch", 1), 0);
        free(found), found = NULL;
        ck_assert_int_eq(files_fetch_program_path(&found), -ENOENT);
        ck_assert_ptr_null(found);

        ck_assert_int_eq(files_new(storage, "p1", plan, &runner, NULL, &f), 0);
        ck_assert_int_eq(setenv("MURANOAGENT_FETCH", saved, 1), 0);
        ck_assert_int_eq(files_prepare_script(f, "s", &path, &err), FILES_FAILED);
        ck_assert_str_eq(err.message, "Error to download the file https://u:***@h/a/b.tgz: the "
                                      "download program muranoagent-fetch cannot be found");
        ck_assert_int_eq(fake.calls, 0);
}
END_TEST

/* A status other than 0 and 1 names the program. */
START_TEST(test_fetch_status)
{
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        _cleanup_(files_freep) Files *f = NULL;
        _cleanup_json_ json_t *plan = download_plan("http://h/a/b.tgz", "");
        _cleanup_free_ char *path = NULL;
        Fake fake = {.mode = FAKE_EXIT, .stderr_text = "oops\n"};
        ProcRunner runner = {&fake, fake_run};

        ck_assert_int_eq(files_new(storage, "p1", plan, &runner, NULL, &f), 0);
        ck_assert_int_eq(files_prepare_script(f, "s", &path, &err), FILES_FAILED);
        ck_assert_str_eq(err.message, "Error to download the file http://h/a/b.tgz: "
                                      "muranoagent-fetch exited with status 128: oops");
        fake_clear(&fake);
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_loop_test(tc, test_download_argv, 0, ELEMENTSOF(argv_cases));
        tcase_add_test(tc, test_download_failures);
        tcase_add_loop_test(tc, test_url_errors, 0, ELEMENTSOF(url_error_cases));
        tcase_add_loop_test(tc, test_url_kind, 0, ELEMENTSOF(kind_cases));
        tcase_add_loop_test(tc, test_url_check, 0, ELEMENTSOF(check_cases));
        tcase_add_test(tc, test_url_mask);
        tcase_add_test(tc, test_fetch_url);
        tcase_add_test(tc, test_http_download);
        tcase_add_test(tc, test_fetch_missing);
        tcase_add_test(tc, test_fetch_status);
}

int main(void)
{
        /* The HTTP tests talk to 127.0.0.1 directly. */
        unsetenv("http_proxy");
        unsetenv("https_proxy");
        unsetenv("HTTP_PROXY");
        unsetenv("HTTPS_PROXY");
        unsetenv("ALL_PROXY");
        unsetenv("all_proxy");
        return check_main_one("files-download", "core", setup, teardown, 60, add_tests);
}
