/* One child process on the libuv loop: spawn, capture, timeout, kill, and a
 * single report once the exit and end of file on every pipe are in.
 *
 * libuv's memory rule, followed here: every handle that was initialised is
 * closed with uv_close(), and the Child that embeds the handles is freed only
 * when the last close callback has run. uv_spawn() initialises the process
 * handle even when it fails, so that one is closed on every path too. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "child/child-capture.h"
#include "child/child.h"
#include "util/macro.h"

/* One read from a pipe; the buffer is shared by both pipes of a child,
 * since libuv hands it back to read_cb before it asks for it again. */
#define CHILD_READ_SIZE 65536

typedef struct ChildStream {
        Child *child;   /* borrowed: the owner */
        uv_pipe_t pipe; /* the read end; initialised only when captured */
        bool captured;  /* the pipe exists */
        bool open;      /* reading: neither end of file nor cut yet */
        bool cut;       /* closed before end of file */
        ChildCapture capture;
} ChildStream;

struct Child {
        uv_loop_t *loop; /* borrowed */
        uv_process_t process;
        uv_timer_t timeout_timer; /* spawn -> SIGTERM */
        uv_timer_t kill_timer;    /* SIGTERM -> SIGKILL */
        uv_timer_t eof_timer;     /* exit -> pipes cut */
        ChildStream out, err;

        unsigned handles;    /* initialised handles whose close callback is still due */
        bool process_handle; /* uv_spawn() was called, so the process handle needs closing */
        bool exited;         /* the exit callback came, or the program never ran */
        bool ending;         /* SIGTERM (or an immediate SIGKILL) went out */
        bool killed;         /* SIGKILL went out */
        bool closing;        /* over: the handles are closing and the report is due */

        uint64_t kill_grace_ms;
        uint64_t eof_grace_ms;
        void (*kill_tree)(void *userdata, int sig);
        void *kill_userdata;
        child_done_cb done;
        void *userdata;

        ChildResult result;
        char buf[CHILD_READ_SIZE];
};

/* libuv's codes on Unix are negative errno values, apart from its own few
 * (UV_EOF, UV_EAI_*, UV_ECHARSET, ...), all below -1000; those become -EIO. */
static int child_errno_from_uv(int r)
{
        return r < -1000 ? -EIO : r;
}

static void child_free(Child *c)
{
        child_capture_clear(&c->out.capture);
        child_capture_clear(&c->err.capture);
        free(c->result.out.data);
        free(c->result.err.data);
        free(c);
}

static void child_finish_output(Child *c, ChildStream *s, ChildOutput *o)
{
        int r;

        if (!s->captured)
                return;
        r = child_capture_finish(&s->capture, o);
        if (r < 0 && c->result.error == 0)
                c->result.error = r;
        o->cut = s->cut;
}

/* The last close callback: build the outputs, report, and free. */
static void child_report(Child *c)
{
        child_finish_output(c, &c->out, &c->result.out);
        child_finish_output(c, &c->err, &c->result.err);
        c->done(c, &c->result, c->userdata);
        child_free(c);
}

static void child_handle_closed(Child *c)
{
        c->handles--;
        if (c->closing && c->handles == 0)
                child_report(c);
}

static void child_on_close(uv_handle_t *h)
{
        child_handle_closed(h->data);
}

static void child_stream_on_close(uv_handle_t *h)
{
        ChildStream *s = h->data;

        child_handle_closed(s->child);
}

static void child_stream_close(ChildStream *s, bool cut)
{
        if (!s->open)
                return;
        s->open = false;
        s->cut = cut;
        uv_read_stop((uv_stream_t *)&s->pipe);
        uv_close((uv_handle_t *)&s->pipe, child_stream_on_close);
}

/* Send sig to everything the child started: its process group, and the
 * hook's tree. ESRCH from the group only means it is empty. */
static void child_signal(Child *c, int sig)
{
        if (sig == SIGKILL)
                c->killed = true;
        if (c->kill_tree)
                c->kill_tree(c->kill_userdata, sig);
        if (c->process.pid > 0)
                (void)kill(-c->process.pid, sig);
}

/* Whether any process is left in the child's process group. After the
 * direct child was reaped, its pid stays reserved as long as the group has
 * members, so this cannot hit a stranger while it answers yes; a group that
 * just emptied answers no. */
static bool child_group_alive(const Child *c)
{
        return c->process.pid > 0 && (kill(-c->process.pid, 0) == 0 || errno == EPERM);
}

static void child_close_all(Child *c)
{
        c->closing = true;
        /* The pipes are closed already: the caller saw both at end of file. */
        uv_close((uv_handle_t *)&c->timeout_timer, child_on_close);
        uv_close((uv_handle_t *)&c->kill_timer, child_on_close);
        uv_close((uv_handle_t *)&c->eof_timer, child_on_close);
        if (c->process_handle)
                uv_close((uv_handle_t *)&c->process, child_on_close);
}

/* The state machine's one gate: the child is over when the exit is in, no
 * pipe is open, and an end that began has sent its SIGKILL (or found no
 * process left to send it to). */
static void child_check_done(Child *c)
{
        if (c->closing || !c->exited || c->out.open || c->err.open)
                return;
        if (c->ending && !c->killed) {
                /* Processes of the group that live on after the SIGTERM
                 * get the grace and then SIGKILL from the kill timer, which
                 * comes back here. */
                if (child_group_alive(c))
                        return;
                child_signal(c, SIGKILL);
        }
        child_close_all(c);
}

static void child_on_kill_timer(uv_timer_t *t)
{
        Child *c = t->data;

        child_signal(c, SIGKILL);
        child_check_done(c);
}

/* Begin the end: SIGTERM now and SIGKILL after the grace, or SIGKILL at once
 * when there is no grace. */
static void child_end(Child *c)
{
        if (c->ending || c->closing)
                return;
        c->ending = true;
        if (c->kill_grace_ms == 0) {
                child_signal(c, SIGKILL);
        } else {
                child_signal(c, SIGTERM);
                uv_timer_start(&c->kill_timer, child_on_kill_timer, c->kill_grace_ms, 0);
        }
        child_check_done(c);
}

static void child_on_timeout(uv_timer_t *t)
{
        Child *c = t->data;

        c->result.timed_out = true;
        child_end(c);
}

static void child_on_eof_timer(uv_timer_t *t)
{
        Child *c = t->data;

        child_stream_close(&c->out, true);
        child_stream_close(&c->err, true);
        child_check_done(c);
}

static void child_on_exit(uv_process_t *p, int64_t exit_status, int term_signal)
{
        Child *c = p->data;

        c->exited = true;
        c->result.exit_status = (int)exit_status;
        c->result.term_signal = term_signal;
        if (c->out.open || c->err.open)
                uv_timer_start(&c->eof_timer, child_on_eof_timer, c->eof_grace_ms, 0);
        child_check_done(c);
}

static void child_on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
        ChildStream *s = h->data;

        *buf = uv_buf_init(s->child->buf, sizeof(s->child->buf));
}

static void child_on_read(uv_stream_t *h, ssize_t n, const uv_buf_t *buf)
{
        ChildStream *s = h->data;
        Child *c = s->child;
        int r;

        if (n > 0) {
                r = child_capture_append(&s->capture, buf->base, (size_t)n);
                if (r < 0 && c->result.error == 0)
                        c->result.error = r;
                return;
        }
        if (n == 0)
                return; /* nothing to read after all (EAGAIN) */
        if (n != UV_EOF && c->result.error == 0)
                c->result.error = child_errno_from_uv((int)n);
        child_stream_close(s, false);
        child_check_done(c);
}

/* Start reading a captured stream; one that cannot be read is over. */
static void child_stream_start(ChildStream *s)
{
        int r;

        if (!s->open)
                return;
        r = uv_read_start((uv_stream_t *)&s->pipe, child_on_alloc, child_on_read);
        if (r < 0) {
                if (s->child->result.error == 0)
                        s->child->result.error = child_errno_from_uv(r);
                child_stream_close(s, false);
        }
}

static int child_spec_check(const ChildSpec *spec)
{
        if (!spec || !spec->argv || !spec->argv[0] || !spec->argv[0][0])
                return -EINVAL;
        if (spec->n_extra_fds > CHILD_EXTRA_FDS_MAX || (spec->n_extra_fds > 0 && !spec->extra_fds))
                return -EINVAL;
        return 0;
}

/* Where one of the child's stdout and stderr goes. write_fd is the pipe's
 * write end for a captured stream, -1 otherwise. */
static uv_stdio_container_t child_stdio(const ChildSpec *spec, int write_fd)
{
        uv_stdio_container_t s = {.flags = UV_IGNORE}; /* libuv opens /dev/null */

        if (write_fd >= 0) {
                s.flags = UV_INHERIT_FD;
                s.data.fd = write_fd;
        } else if (spec->passthrough_fd > 0) {
                s.flags = UV_INHERIT_FD;
                s.data.fd = spec->passthrough_fd;
        }
        return s;
}

/* Initialise the stream's pipe handle on the read end, which it then owns.
 * Returns 0 or a negative errno; the handle needs closing either way. */
static int child_stream_open(Child *c, ChildStream *s, int read_fd)
{
        int r;

        s->child = c;
        s->captured = true;
        uv_pipe_init(c->loop, &s->pipe, 0);
        s->pipe.data = s;
        c->handles++;
        s->open = true;
        r = uv_pipe_open(&s->pipe, read_fd);
        if (r < 0) {
                close(read_fd);
                return child_errno_from_uv(r);
        }
        return 0;
}

static void child_timer_init(Child *c, uv_timer_t *t)
{
        uv_timer_init(c->loop, t);
        t->data = c;
        c->handles++;
}

int child_spawn(uv_loop_t *loop, const ChildSpec *spec, child_done_cb done, void *userdata,
                Child **ret)
{
        int pout[2] = {-1, -1}, perr[2] = {-1, -1};
        uv_process_options_t opts = {0};
        uv_stdio_container_t stdio[3 + CHILD_EXTRA_FDS_MAX];
        Child *c;
        int r;

        r = child_spec_check(spec);
        if (r < 0)
                return r;
        if (!loop || !done)
                return -EINVAL;

        /* Everything that can fail without leaving a handle behind comes
         * first, so that an error here means nothing on the loop. The pipes
         * are close-on-exec: libuv dup2()s the write ends onto 1 and 2 in the
         * child, which clears the flag on the copies only. */
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        if ((spec->capture_stdout && pipe2(pout, O_CLOEXEC) < 0) ||
            (spec->capture_stderr && pipe2(perr, O_CLOEXEC) < 0)) {
                r = -errno;
                closep(&pout[0]);
                closep(&pout[1]);
                free(c);
                return r;
        }

        c->loop = loop;
        c->kill_grace_ms = spec->kill_grace_ms;
        c->eof_grace_ms = spec->eof_grace_ms ? spec->eof_grace_ms : CHILD_EOF_GRACE_DEFAULT_MS;
        c->kill_tree = spec->kill_tree;
        c->kill_userdata = spec->kill_userdata;
        c->done = done;
        c->userdata = userdata;
        c->out.child = c->err.child = c;
        child_capture_init(&c->out.capture, spec->output_limit);
        child_capture_init(&c->err.capture, spec->output_limit);
        child_timer_init(c, &c->timeout_timer);
        child_timer_init(c, &c->kill_timer);
        child_timer_init(c, &c->eof_timer);

        if (spec->capture_stdout)
                r = child_stream_open(c, &c->out, pout[0]);
        if (spec->capture_stderr) {
                if (r == 0)
                        r = child_stream_open(c, &c->err, perr[0]);
                else
                        closep(&perr[0]); /* never handed to a pipe handle */
        }

        if (r == 0) {
                stdio[0] = (uv_stdio_container_t){.flags = UV_IGNORE};
                stdio[1] = child_stdio(spec, pout[1]);
                stdio[2] = child_stdio(spec, perr[1]);
                for (size_t i = 0; i < spec->n_extra_fds; i++)
                        stdio[3 + i] = (uv_stdio_container_t){
                                .flags = UV_INHERIT_FD,
                                .data.fd = spec->extra_fds[i],
                        };
                opts.exit_cb = child_on_exit;
                opts.file = spec->argv[0];
                opts.args = (char **)spec->argv;
                opts.env = (char **)spec->envp;
                opts.cwd = spec->cwd;
                opts.flags = UV_PROCESS_DETACHED;
                opts.stdio_count = 3 + (int)spec->n_extra_fds;
                opts.stdio = stdio;
                c->process_handle = true;
                c->handles++;
                r = child_errno_from_uv(uv_spawn(loop, &c->process, &opts));
                c->process.data = c;
        }
        /* The child has its copies of the write ends, or never will. */
        closep(&pout[1]);
        closep(&perr[1]);

        if (r < 0) {
                /* The program never ran: report it from the loop, like any
                 * other end, once the handles are closed. */
                c->result.spawn_error = r;
                c->exited = true;
                child_stream_close(&c->out, false);
                child_stream_close(&c->err, false);
                child_check_done(c);
        } else {
                child_stream_start(&c->out);
                child_stream_start(&c->err);
                /* The loop's idea of now may be old when the caller worked
                 * long in this iteration; the timeout counts from the spawn. */
                uv_update_time(loop);
                if (spec->timeout_ms > 0)
                        uv_timer_start(&c->timeout_timer, child_on_timeout, spec->timeout_ms, 0);
        }
        if (ret)
                *ret = c;
        return 0;
}

void child_cancel(Child *c)
{
        if (!c || c->closing)
                return;
        c->result.cancelled = true;
        child_end(c);
}

pid_t child_get_pid(const Child *c)
{
        return c && !c->result.spawn_error ? c->process.pid : 0;
}

int child_result_exit_code(const ChildResult *r)
{
        if (r->spawn_error)
                return 127;
        if (r->term_signal)
                return -r->term_signal;
        return r->exit_status;
}
