/* The local control socket (control/control.h has the protocol): a
 * uv_pipe_t listening in <storage>/control, a directory of mode 0700 that
 * the agent owns, one request and one reply per connection, answered on
 * the loop from memory, so an answer never waits for the broker or the
 * disk. A command is one line of the table below. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control/control.h"
#include "daemon/daemon-cancel.h"
#include "daemon/daemon-internal.h"
#include "log/log.h"
#include "util/macro.h"

/* Connections served at once; more wait in the listen backlog. */
#define CONTROL_CONN_MAX 8
/* A client that has not sent its whole request by then is dropped. */
#define CONTROL_CONN_TIMEOUT_MS 5000
/* While an async command waits, how often its client is checked for a
 * hangup, so that one that went away frees its slot. */
#define CONTROL_HANGUP_CHECK_MS 250

typedef struct ControlConn ControlConn;

/* A command: fill *ret_body (a new JSON object, the reply's fields) and
 * return 0, or return a negative errno with *ret_error (static text) for
 * a refusal. */
typedef int (*control_command_fn)(Daemon *d, const json_t *request, json_t **ret_body,
                                  const char **ret_error);

static int command_status(Daemon *d, const json_t *request, json_t **ret_body,
                          const char **ret_error)
{
        json_t *status = daemon_status_json(d);

        *ret_body = status ? json_pack("{so}", "status", status) : NULL;
        if (!*ret_body) {
                *ret_error = "out of memory";
                return -ENOMEM;
        }
        return 0;
}

static const struct {
        const char *name;
        control_command_fn fn;
        control_async_fn async; /* instead of fn: a command that answers later */
} control_commands[] = {
        {"status", command_status, NULL},
        {"cancel", NULL, daemon_cancel_command},
};

typedef struct DaemonControl {
        Daemon *d;
        uv_pipe_t listener;
        char *dir;                 /* owned: <storage>/control */
        char *path;                /* owned: the socket's path as bound */
        int dir_fd;                /* the directory, when the path is too long to bind by name */
        struct ControlConn *conns; /* open connections, a list */
        unsigned n_conns;
        unsigned open_handles; /* the listener's and every connection's */
        bool closing;
} DaemonControl;

typedef struct ControlConn {
        DaemonControl *c;
        struct ControlConn *next, **prev;
        uv_pipe_t pipe;
        uv_timer_t timer;
        uv_write_t write;
        char buf[CONTROL_REQUEST_MAX];
        size_t len;
        char *reply;
        unsigned open_handles;
        bool answered;
        bool pending; /* an async command has yet to answer */
} ControlConn;

static void control_maybe_free(DaemonControl *c)
{
        if (!c->closing || c->open_handles > 0)
                return;
        if (c->dir_fd >= 0)
                close(c->dir_fd);
        free(c->dir);
        free(c->path);
        free(c);
}

static void conn_on_close(uv_handle_t *h)
{
        ControlConn *k = h->data;
        DaemonControl *c = k->c;

        if (--k->open_handles > 0)
                return;
        /* The client went away before the answer: nobody waits for it. */
        if (k->pending)
                daemon_cancel_detach(c->d, k);
        *k->prev = k->next;
        if (k->next)
                k->next->prev = k->prev;
        free(k->reply);
        free(k);
        c->n_conns--;
        c->open_handles--;
        control_maybe_free(c);
}

static void conn_close(ControlConn *k)
{
        if (!uv_is_closing((uv_handle_t *)&k->pipe)) {
                uv_close((uv_handle_t *)&k->pipe, conn_on_close);
                uv_close((uv_handle_t *)&k->timer, conn_on_close);
        }
}

static void conn_on_written(uv_write_t *w, int status)
{
        conn_close(w->data);
}

/* Send line (taken) and close once it is out. */
static void conn_reply(ControlConn *k, char *line, size_t len)
{
        uv_buf_t b = uv_buf_init(line, (unsigned)len);

        k->answered = true;
        k->reply = line;
        uv_read_stop((uv_stream_t *)&k->pipe);
        k->write.data = k;
        if (!line || uv_write(&k->write, (uv_stream_t *)&k->pipe, &b, 1, conn_on_written) < 0)
                conn_close(k);
}

static void conn_reply_error(ControlConn *k, const char *message)
{
        char *line = NULL;
        size_t len = 0;

        (void)control_reply_error(message, &line, &len);
        conn_reply(k, line, len);
}

/* An async command waits: a client that hung up (POLLHUP: closed, not just
 * shut its writing side, which clients that send the request and then EOF
 * do) is not waited for; its request settles without telling anyone. */
static void conn_on_hangup_check(uv_timer_t *t)
{
        ControlConn *k = t->data;
        struct pollfd p = {.events = POLLIN};
        uv_os_fd_t fd;

        if (!k->pending || uv_fileno((uv_handle_t *)&k->pipe, &fd) < 0)
                return;
        p.fd = fd;
        if (poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR)))
                conn_close(k);
}

static void conn_dispatch(ControlConn *k, const char *line, size_t len)
{
        Daemon *d = k->c->d;
        _cleanup_json_ json_t *req = NULL, *body = NULL;
        const char *command = NULL, *error = NULL;
        char *reply = NULL;
        size_t reply_len = 0;
        int rc;

        if (control_request_parse(line, len, &req, &command, &error) < 0) {
                conn_reply_error(k, error);
                return;
        }
        for (size_t i = 0; i < ELEMENTSOF(control_commands); i++) {
                if (!streq(control_commands[i].name, command))
                        continue;
                if (control_commands[i].async) {
                        /* It answers when it is done, however long that
                         * takes; the client has a time limit of its own. */
                        uv_read_stop((uv_stream_t *)&k->pipe);
                        uv_timer_start(&k->timer, conn_on_hangup_check, CONTROL_HANGUP_CHECK_MS,
                                       CONTROL_HANGUP_CHECK_MS);
                        k->pending = true;
                        rc = control_commands[i].async(d, req, k, &error);
                        if (rc < 0) {
                                k->pending = false;
                                uv_timer_stop(&k->timer);
                                conn_reply_error(k, error ? error : strerror(-rc));
                        }
                        return;
                }
                rc = control_commands[i].fn(d, req, &body, &error);
                if (rc < 0) {
                        conn_reply_error(k, error ? error : strerror(-rc));
                        return;
                }
                rc = control_reply_ok(body, &reply, &reply_len);
                if (rc < 0) {
                        conn_reply_error(k, "out of memory");
                        return;
                }
                conn_reply(k, reply, reply_len);
                return;
        }
        conn_reply_error(k, "unknown command");
}

void daemon_control_answer(ControlConn *k, const json_t *body, const char *error)
{
        char *reply = NULL;
        size_t reply_len = 0;

        k->pending = false;
        uv_timer_stop(&k->timer);
        if (error || control_reply_ok(body, &reply, &reply_len) < 0)
                conn_reply_error(k, error ? error : "out of memory");
        else
                conn_reply(k, reply, reply_len);
}

static void conn_on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
        ControlConn *k = h->data;

        *buf = uv_buf_init(k->buf + k->len, (unsigned)(sizeof(k->buf) - k->len));
}

static void conn_on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
        ControlConn *k = s->data;
        char *nl;

        if (k->answered)
                return;
        if (n < 0) {
                /* The end before a newline: the request is what came. */
                if (n == UV_EOF && k->len > 0)
                        conn_dispatch(k, k->buf, k->len);
                else
                        conn_close(k);
                return;
        }
        nl = memchr(k->buf + k->len, '\n', (size_t)n);
        k->len += (size_t)n;
        if (nl)
                conn_dispatch(k, k->buf, (size_t)(nl - k->buf));
        else if (k->len == sizeof(k->buf))
                conn_reply_error(k, "the request is too long");
}

static void conn_on_timeout(uv_timer_t *t)
{
        conn_close(t->data);
}

/* Only the agent's own user (root) may ask: the directory's mode keeps
 * others out already, and SO_PEERCRED says who connected in any case. */
static bool peer_allowed(ControlConn *k, uid_t *ret_uid)
{
        struct ucred cred;
        socklen_t len = sizeof(cred);
        uv_os_fd_t fd;

        *ret_uid = (uid_t)-1;
        if (uv_fileno((uv_handle_t *)&k->pipe, &fd) < 0 ||
            getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
                return false;
        *ret_uid = cred.uid;
        return cred.uid == 0 || cred.uid == geteuid();
}

static void on_connection(uv_stream_t *server, int status)
{
        DaemonControl *c = server->data;
        ControlConn *k;
        uid_t uid;

        if (status < 0 || c->closing)
                return;
        k = calloc(1, sizeof(*k));
        if (!k)
                return;
        k->c = c;
        k->next = c->conns;
        k->prev = &c->conns;
        if (c->conns)
                c->conns->prev = &k->next;
        c->conns = k;
        uv_pipe_init(c->d->loop, &k->pipe, 0);
        uv_timer_init(c->d->loop, &k->timer);
        k->pipe.data = k->timer.data = k;
        k->open_handles = 2;
        c->n_conns++;
        c->open_handles++;
        if (uv_accept(server, (uv_stream_t *)&k->pipe) < 0) {
                conn_close(k);
                return;
        }
        if (!peer_allowed(k, &uid)) {
                log_warning(NULL, "control socket: refused a request from uid %ld",
                            uid == (uid_t)-1 ? -1L : (long)uid);
                conn_reply_error(k, "permission denied: the control socket is root's");
                return;
        }
        if (c->n_conns > CONTROL_CONN_MAX) {
                conn_reply_error(k, "busy: too many requests at once");
                return;
        }
        uv_timer_start(&k->timer, conn_on_timeout, CONTROL_CONN_TIMEOUT_MS, 0);
        if (uv_read_start((uv_stream_t *)&k->pipe, conn_on_alloc, conn_on_read) < 0)
                conn_close(k);
}

/* <storage>/control, mode 0700, a real directory of ours. */
static int make_dir(const char *dir)
{
        struct stat st;

        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
                return -errno;
        if (lstat(dir, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
                return -EPERM;
        if ((st.st_mode & 07777) != 0700 && chmod(dir, 0700) < 0)
                return -errno;
        return 0;
}

static int listen_on(DaemonControl *c)
{
        struct sockaddr_un sa;
        int rc;

        rc = make_dir(c->dir);
        if (rc < 0)
                return rc;
        if (control_address(c->dir, -1, &sa) < 0) {
                c->dir_fd = open(c->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (c->dir_fd < 0)
                        return -errno;
                control_address(c->dir, c->dir_fd, &sa);
        }
        c->path = strdup(sa.sun_path);
        if (!c->path)
                return -ENOMEM;
        /* The journal's lock says no other agent uses this storage, so a
         * socket left here is a dead agent's. */
        if (unlink(c->path) < 0 && errno != ENOENT)
                return -errno;
        rc = uv_pipe_bind(&c->listener, c->path);
        if (rc == 0)
                rc = uv_listen((uv_stream_t *)&c->listener, CONTROL_CONN_MAX, on_connection);
        return rc == 0 ? 0 : -(rc == UV_EADDRINUSE ? EADDRINUSE : -rc);
}

static void listener_on_close(uv_handle_t *h)
{
        DaemonControl *c = h->data;

        c->open_handles--;
        control_maybe_free(c);
}

int daemon_control_start(Daemon *d)
{
        DaemonControl *c = calloc(1, sizeof(*c));
        int rc;

        if (!c)
                return -ENOMEM;
        c->d = d;
        c->dir_fd = -1;
        uv_pipe_init(d->loop, &c->listener, 0);
        c->listener.data = c;
        c->open_handles = 1;
        rc = control_dir_path(d->cfg->storage, &c->dir);
        if (rc == 0)
                rc = listen_on(c);
        if (rc < 0) {
                log_warning(NULL,
                            "cannot serve the control socket in %s/%s: %s; "
                            "muranoagent status will not answer",
                            d->cfg->storage, CONTROL_DIR_NAME, strerror(-rc));
                c->closing = true;
                uv_close((uv_handle_t *)&c->listener, listener_on_close);
                return rc;
        }
        d->observe.control = c;
        return 0;
}

void daemon_control_stop(Daemon *d)
{
        DaemonControl *c = d->observe.control;

        if (!c)
                return;
        d->observe.control = NULL;
        c->closing = true;
        unlink(c->path);
        for (ControlConn *k = c->conns; k; k = k->next)
                conn_close(k);
        uv_close((uv_handle_t *)&c->listener, listener_on_close);
}
