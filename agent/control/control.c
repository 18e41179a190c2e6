/* The control socket's protocol: addresses, request parsing, reply lines,
 * and the blocking client (see control.h). */
#include "control/control.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util/macro.h"

int control_dir_path(const char *storage, char **ret)
{
        if (asprintf(ret, "%s/%s", storage, CONTROL_DIR_NAME) < 0)
                return -ENOMEM;
        return 0;
}

int control_address(const char *dir, int dir_fd, struct sockaddr_un *ret)
{
        int n;

        *ret = (struct sockaddr_un){.sun_family = AF_UNIX};
        n = snprintf(ret->sun_path, sizeof(ret->sun_path), "%s/%s", dir, CONTROL_SOCKET_NAME);
        if (n >= 0 && (size_t)n < sizeof(ret->sun_path))
                return 0;
        if (dir_fd < 0)
                return -ENAMETOOLONG;
        /* A storage path too long for sun_path (108 bytes) is reached
         * through the directory's descriptor instead. */
        snprintf(ret->sun_path, sizeof(ret->sun_path), "/proc/self/fd/%d/%s", dir_fd,
                 CONTROL_SOCKET_NAME);
        return 0;
}

int control_request_parse(const char *line, size_t len, json_t **ret, const char **ret_command,
                          const char **ret_error)
{
        json_t *req, *cmd;

        req = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
        if (!req || !json_is_object(req)) {
                json_decref(req);
                *ret_error = "the request is not a JSON object";
                return -EINVAL;
        }
        cmd = json_object_get(req, "command");
        if (!json_is_string(cmd) || json_string_length(cmd) == 0) {
                json_decref(req);
                *ret_error = "the request has no \"command\" string";
                return -EINVAL;
        }
        *ret = req;
        *ret_command = json_string_value(cmd);
        return 0;
}

/* reply as one line: compact, in insertion order, with a newline. */
static int reply_text(json_t *reply, char **ret, size_t *ret_len)
{
        char *text = json_dumps(reply, JSON_COMPACT);
        size_t n;
        char *line;

        if (!text)
                return -ENOMEM;
        n = strlen(text);
        line = realloc(text, n + 2);
        if (!line) {
                free(text);
                return -ENOMEM;
        }
        line[n] = '\n';
        line[n + 1] = '\0';
        *ret = line;
        *ret_len = n + 1;
        return 0;
}

int control_reply_ok(const json_t *body, char **ret, size_t *ret_len)
{
        _cleanup_json_ json_t *reply = json_object();
        const char *key;
        json_t *value;

        if (!reply || json_object_set_new(reply, "ok", json_true()) < 0 ||
            json_object_set_new(reply, "protocol", json_integer(CONTROL_PROTOCOL)) < 0)
                return -ENOMEM;
        json_object_foreach ((json_t *)body, key, value) {
                if (json_object_set(reply, key, value) < 0)
                        return -ENOMEM;
        }
        return reply_text(reply, ret, ret_len);
}

int control_reply_error(const char *message, char **ret, size_t *ret_len)
{
        _cleanup_json_ json_t *reply =
                json_pack("{sbsiss}", "ok", 0, "protocol", CONTROL_PROTOCOL, "error", message);

        if (!reply)
                return -ENOMEM;
        return reply_text(reply, ret, ret_len);
}

/* ---- the client ----------------------------------------------------------- */

static int64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for events on fd until deadline; -ETIMEDOUT when it passes. */
static int wait_fd(int fd, short events, int64_t deadline)
{
        struct pollfd p = {.fd = fd, .events = events};
        int64_t left;
        int n;

        for (;;) {
                left = deadline - now_ms();
                if (left <= 0)
                        return -ETIMEDOUT;
                n = poll(&p, 1, (int)left);
                if (n > 0)
                        return 0;
                if (n == 0)
                        return -ETIMEDOUT;
                if (errno != EINTR)
                        return -errno;
        }
}

/* *ret_error = the formatted sentence; returns rc. */
static int fail(char **ret_error, int rc, const char *fmt, ...) _printf_(3, 4);
static int fail(char **ret_error, int rc, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(ret_error, fmt, ap) < 0)
                *ret_error = NULL;
        va_end(ap);
        return rc;
}

/* Connect to the socket in dir, by path or through its descriptor. */
static int connect_socket(const char *dir, char **ret_error)
{
        _cleanup_close_ int dir_fd = -1, fd = -1;
        struct sockaddr_un sa;
        int rc;

        if (control_address(dir, -1, &sa) < 0) {
                dir_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (dir_fd < 0)
                        return fail(ret_error, -errno, "cannot open %s: %s", dir, strerror(errno));
                control_address(dir, dir_fd, &sa);
        }
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return fail(ret_error, -errno, "cannot make a socket for %s: %s", dir,
                            strerror(errno));
        /* A local connect completes at once, or fails: no wait needed. */
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                rc = -errno;
                if (rc == -ENOENT || rc == -ECONNREFUSED)
                        return fail(ret_error, rc,
                                    "no agent answers at %s/" CONTROL_SOCKET_NAME
                                    " (%s): is muranoagent running with this configuration?",
                                    dir, strerror(-rc));
                if (rc == -EACCES || rc == -EPERM)
                        return fail(ret_error, rc,
                                    "cannot reach %s/" CONTROL_SOCKET_NAME
                                    " (%s): the control socket is root's",
                                    dir, strerror(-rc));
                return fail(ret_error, rc, "cannot connect to %s/" CONTROL_SOCKET_NAME ": %s", dir,
                            strerror(-rc));
        }
        if (fcntl(fd, F_SETFL, O_NONBLOCK) < 0)
                return fail(ret_error, -errno, "cannot use the socket in %s: %s", dir,
                            strerror(errno));
        rc = fd;
        fd = -1;
        return rc;
}

static int send_all(int fd, const char *buf, size_t len, int64_t deadline)
{
        ssize_t n;
        int rc;

        while (len > 0) {
                n = send(fd, buf, len, MSG_NOSIGNAL);
                if (n > 0) {
                        buf += n;
                        len -= (size_t)n;
                        continue;
                }
                if (n < 0 && errno != EAGAIN && errno != EINTR)
                        return -errno;
                rc = wait_fd(fd, POLLOUT, deadline);
                if (rc < 0)
                        return rc;
        }
        return 0;
}

/* Read until the reply's newline (or the end) into *ret. */
static int recv_line(int fd, int64_t deadline, char **ret, size_t *ret_len)
{
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, cap = 0;
        ssize_t n;
        int rc;

        for (;;) {
                if (len + 4096 > cap) {
                        size_t ncap = cap ? 2 * cap : 16384;
                        char *nbuf;
                        if (ncap > CONTROL_REPLY_MAX + 4096)
                                return -EMSGSIZE;
                        nbuf = realloc(buf, ncap);
                        if (!nbuf)
                                return -ENOMEM;
                        buf = nbuf;
                        cap = ncap;
                }
                n = recv(fd, buf + len, cap - len - 1, 0);
                if (n == 0)
                        break;
                if (n > 0) {
                        char *nl = memchr(buf + len, '\n', (size_t)n);
                        len += (size_t)n;
                        if (nl) {
                                len = (size_t)(nl - buf);
                                break;
                        }
                        continue;
                }
                if (errno != EAGAIN && errno != EINTR)
                        return -errno;
                rc = wait_fd(fd, POLLIN, deadline);
                if (rc < 0)
                        return rc;
        }
        buf[len] = '\0';
        *ret = TAKE_PTR(buf);
        *ret_len = len;
        return 0;
}

int control_call(const char *storage, const json_t *request, int timeout_ms, json_t **ret,
                 char **ret_error)
{
        int64_t deadline = now_ms() + timeout_ms;
        _cleanup_free_ char *dir = NULL, *text = NULL, *line = NULL;
        _cleanup_close_ int fd = -1;
        size_t len = 0;
        json_t *reply;
        int rc;

        *ret_error = NULL;
        if (control_dir_path(storage, &dir) < 0)
                return -ENOMEM;
        fd = connect_socket(dir, ret_error);
        if (fd < 0)
                return fd;
        rc = wait_fd(fd, POLLOUT, deadline);
        if (rc == 0) {
                text = json_dumps(request, JSON_COMPACT);
                rc = text ? 0 : -ENOMEM;
        }
        if (rc == 0) {
                char *nl = realloc(text, strlen(text) + 2);
                rc = nl ? 0 : -ENOMEM;
                if (nl) {
                        text = nl;
                        strcat(text, "\n");
                }
        }
        if (rc == 0)
                rc = send_all(fd, text, strlen(text), deadline);
        if (rc == 0)
                rc = recv_line(fd, deadline, &line, &len);
        if (rc == -ETIMEDOUT)
                return fail(ret_error, rc, "the agent at %s did not answer in time (%s)", dir,
                            strerror(-rc));
        if (rc < 0)
                return fail(ret_error, rc, "talking to the agent at %s: %s", dir, strerror(-rc));
        reply = json_loadb(line, len, 0, NULL);
        if (!json_is_object(reply)) {
                json_decref(reply);
                return fail(ret_error, -EPROTO, "the agent at %s sent no JSON object (%s)", dir,
                            strerror(EPROTO));
        }
        *ret = reply;
        return 0;
}
