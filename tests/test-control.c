/* Tests for control/: request parsing, the exact reply lines, the socket's
 * address (also for a storage path too long for sun_path), and the client
 * against a server of this test's own: a reply, no agent, no answer, an
 * answer that is not JSON. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control/control.h"
#include "util/macro.h"
#include "test-lib.h"

static char tmpdir[] = "/tmp/test-control.XXXXXX";

static const struct {
        const char *line;
        const char *command; /* NULL: refused */
        const char *error;
} requests[] = {
        {"{\"command\":\"status\"}", "status", NULL},
        {"{\"command\": \"cancel\", \"id\": \"x\"}", "cancel", NULL},
        {"", NULL, "the request is not a JSON object"},
        {"status", NULL, "the request is not a JSON object"},
        {"[\"status\"]", NULL, "the request is not a JSON object"},
        {"{\"command\":\"a\",\"command\":\"b\"}", NULL, "the request is not a JSON object"},
        {"{}", NULL, "the request has no \"command\" string"},
        {"{\"command\":\"\"}", NULL, "the request has no \"command\" string"},
        {"{\"command\":1}", NULL, "the request has no \"command\" string"},
};

START_TEST(test_request_parse)
{
        json_t *req = NULL;
        const char *command = NULL, *error = NULL;
        int rc = control_request_parse(requests[_i].line, strlen(requests[_i].line), &req, &command,
                                       &error);

        if (requests[_i].command) {
                ck_assert_int_eq(rc, 0);
                ck_assert_str_eq(command, requests[_i].command);
                json_decref(req);
        } else {
                ck_assert_int_eq(rc, -EINVAL);
                ck_assert_str_eq(error, requests[_i].error);
                ck_assert_ptr_null(req);
        }
}
END_TEST

START_TEST(test_replies)
{
        _cleanup_json_ json_t *body = json_pack("{s{si}}", "status", "a", 1);
        _cleanup_free_ char *ok = NULL, *empty = NULL, *err = NULL;
        size_t len = 0;

        ck_assert_int_eq(control_reply_ok(body, &ok, &len), 0);
        ck_assert_str_eq(ok, "{\"ok\":true,\"protocol\":1,\"status\":{\"a\":1}}\n");
        ck_assert_uint_eq(len, strlen(ok));
        ck_assert_int_eq(control_reply_ok(NULL, &empty, &len), 0);
        ck_assert_str_eq(empty, "{\"ok\":true,\"protocol\":1}\n");
        ck_assert_int_eq(control_reply_error("unknown \"x\"", &err, &len), 0);
        ck_assert_str_eq(err, "{\"ok\":false,\"protocol\":1,\"error\":\"unknown \\\"x\\\"\"}\n");
}
END_TEST

START_TEST(test_address)
{
        char dir[200];
        struct sockaddr_un sa;

        ck_assert_int_eq(control_address("/var/murano/plans/control", -1, &sa), 0);
        ck_assert_str_eq(sa.sun_path, "/var/murano/plans/control/muranoagent.sock");
        memset(dir, 'd', sizeof(dir) - 1);
        dir[0] = '/';
        dir[sizeof(dir) - 1] = '\0';
        ck_assert_int_eq(control_address(dir, -1, &sa), -ENAMETOOLONG);
        ck_assert_int_eq(control_address(dir, 7, &sa), 0);
        ck_assert_str_eq(sa.sun_path, "/proc/self/fd/7/muranoagent.sock");
}
END_TEST

/* A server for one connection: reads the request line, then answers with
 * reply (NULL: stays silent until the client gives up). */
typedef struct Server {
        int fd;
        const char *reply;
        char request[256];
} Server;

static void *serve(void *arg)
{
        Server *s = arg;
        int c = accept(s->fd, NULL, NULL);
        size_t n = 0;
        ssize_t k;

        ck_assert_int_ge(c, 0);
        while (n < sizeof(s->request) - 1 && (k = read(c, s->request + n, 1)) == 1)
                if (s->request[n++] == '\n')
                        break;
        s->request[n] = '\0';
        if (s->reply)
                ck_assert_int_eq(write(c, s->reply, strlen(s->reply)), (ssize_t)strlen(s->reply));
        else
                (void)read(c, s->request + n, 1); /* until the client closes */
        close(c);
        return NULL;
}

/* Listen in <storage>/control as the daemon does. */
static int listen_in(const char *storage, int *ret_dir_fd)
{
        char dir[4096];
        struct sockaddr_un sa;
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        snprintf(dir, sizeof(dir), "%s/control", storage);
        ck_assert_int_eq(mkdir(storage, 0700), 0);
        ck_assert_int_eq(mkdir(dir, 0700), 0);
        *ret_dir_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_eq(control_address(dir, *ret_dir_fd, &sa), 0);
        ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        ck_assert_int_eq(listen(fd, 1), 0);
        return fd;
}

static int call(const char *storage, const char *reply, int timeout_ms, json_t **ret,
                char **ret_error, char *ret_request)
{
        _cleanup_json_ json_t *req = json_pack("{ss}", "command", "status");
        Server s = {.reply = reply};
        pthread_t t;
        int dir_fd, rc;

        s.fd = listen_in(storage, &dir_fd);
        ck_assert_int_eq(pthread_create(&t, NULL, serve, &s), 0);
        rc = control_call(storage, req, timeout_ms, ret, ret_error);
        pthread_join(t, NULL);
        close(s.fd);
        close(dir_fd);
        strcpy(ret_request, s.request);
        return rc;
}

START_TEST(test_call)
{
        char storage[4096], request[256];
        _cleanup_json_ json_t *reply = NULL;
        _cleanup_free_ char *error = NULL;

        snprintf(storage, sizeof(storage), "%s/ok", tmpdir);
        ck_assert_int_eq(call(storage, "{\"ok\":true,\"protocol\":1,\"status\":{}}\n", 2000, &reply,
                              &error, request),
                         0);
        ck_assert_str_eq(request, "{\"command\":\"status\"}\n");
        ck_assert(json_is_true(json_object_get(reply, "ok")));
        ck_assert_ptr_null(error);
}
END_TEST

START_TEST(test_call_long_path)
{
        char storage[4096], request[256];
        _cleanup_json_ json_t *reply = NULL;
        _cleanup_free_ char *error = NULL;
        size_t n;

        /* Longer than sun_path: reached through the directory's descriptor. */
        n = (size_t)snprintf(storage, sizeof(storage), "%s/", tmpdir);
        memset(storage + n, 'l', 150);
        storage[n + 150] = '\0';
        ck_assert_int_eq(
                call(storage, "{\"ok\":false,\"error\":\"no\"}", 2000, &reply, &error, request), 0);
        ck_assert(json_is_false(json_object_get(reply, "ok")));
}
END_TEST

START_TEST(test_call_silent)
{
        char storage[4096], request[256];
        json_t *reply = NULL;
        _cleanup_free_ char *error = NULL;

        snprintf(storage, sizeof(storage), "%s/silent", tmpdir);
        ck_assert_int_eq(call(storage, NULL, 200, &reply, &error, request), -ETIMEDOUT);
        ck_assert_ptr_null(reply);
        ck_assert_ptr_nonnull(strstr(error, "did not answer in time"));
}
END_TEST

START_TEST(test_call_garbage)
{
        char storage[4096], request[256];
        json_t *reply = NULL;
        _cleanup_free_ char *error = NULL;

        snprintf(storage, sizeof(storage), "%s/garbage", tmpdir);
        ck_assert_int_eq(call(storage, "hello\n", 2000, &reply, &error, request), -EPROTO);
        ck_assert_ptr_nonnull(strstr(error, "sent no JSON object"));
}
END_TEST

START_TEST(test_call_nobody)
{
        char storage[4096];
        _cleanup_json_ json_t *req = json_pack("{ss}", "command", "status");
        json_t *reply = NULL;
        _cleanup_free_ char *error = NULL;

        snprintf(storage, sizeof(storage), "%s/nobody", tmpdir);
        ck_assert_int_eq(control_call(storage, req, 200, &reply, &error), -ENOENT);
        ck_assert_ptr_nonnull(strstr(error, "is muranoagent running with this configuration?"));
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_loop_test(tc, test_request_parse, 0, ELEMENTSOF(requests));
        tcase_add_test(tc, test_replies);
        tcase_add_test(tc, test_address);
        tcase_add_test(tc, test_call);
        tcase_add_test(tc, test_call_long_path);
        tcase_add_test(tc, test_call_silent);
        tcase_add_test(tc, test_call_garbage);
        tcase_add_test(tc, test_call_nobody);
}

int main(void)
{
        int ret;

        if (!mkdtemp(tmpdir)) {
                perror("mkdtemp");
                return EXIT_FAILURE;
        }
        ret = check_main_one("control", "core", NULL, NULL, 10, add_tests);
        rm_rf(tmpdir);
        return ret;
}
