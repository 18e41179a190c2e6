/* One child process on the libuv loop: spawn, capture, timeout, kill, and a
 * single report once the exit and end of file on every pipe are in.
 *
 * The child is started by child-launch.c (clone3) and watched through its
 * pidfd with a poll handle; on kernels that refuse clone3, by uv_spawn()
 * and its process handle (see child_spawn_method()).
 *
 * libuv's memory rule, followed here: every handle that was initialised is
 * closed with uv_close(), and the Child that embeds the handles is freed only
 * when the last close callback has run. uv_spawn() initialises the process
 * handle even when it fails, so that one is closed on every path too. The
 * pidfd is closed in its poll handle's close callback, when libuv no longer
 * watches it. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "child/child-capture.h"
#include "child/child-launch.h"
#include "child/child.h"
#include "util/macro.h"

extern char **environ;

/* One read from a pipe; the buffer is shared by both pipes of a child,
 * since libuv hands it back to read_cb before it asks for it again. */
#define CHILD_READ_SIZE 65536

/* A captured stream's life: open until end of file (or a read error), or
 * until the eof grace cuts it; child_stream_close() is the one place that
 * ends it. */
typedef enum ChildStreamState {
        CHILD_STREAM_NONE, /* not captured: there is no pipe */
        CHILD_STREAM_OPEN, /* reading */
        CHILD_STREAM_EOF,  /* closed at end of file or a read error */
        CHILD_STREAM_CUT,  /* closed before end of file, when the eof grace was over */
} ChildStreamState;

typedef struct ChildStream {
        Child *child;   /* borrowed: the owner */
        uv_pipe_t pipe; /* the read end; initialised unless CHILD_STREAM_NONE */
        ChildStreamState state;
        ChildCapture capture;
} ChildStream;

/* A child's life, as tmux's job.c keeps a job's: the exit of the direct
 * child and end of file on the pipes come in either order, and the child is
 * over only when both are in (and an end that began has sent its SIGKILL).
 * It only moves forward, and only in child_move(). */
typedef enum ChildState {
        CHILD_RUNNING, /* the direct child's exit is not in yet */
        CHILD_EXITED,  /* reaped, or it never ran; pipes (or SIGKILL) still due */
        CHILD_CLOSING, /* over: the handles are closing and the report is due */
} ChildState;

/* How far an end (a timeout or child_cancel()) has gone, independent of
 * the exit: processes of the group may outlive the direct child. Only
 * child_signal() moves it. */
typedef enum ChildEnd {
        CHILD_END_NONE, /* nobody asked the child to end */
        CHILD_END_TERM, /* SIGTERM went out; SIGKILL follows after kill_grace_ms */
        CHILD_END_KILL, /* SIGKILL went out */
} ChildEnd;

struct Child {
        uv_loop_t *loop;          /* borrowed */
        pid_t pid;                /* the direct child, 0 until it runs */
        int pidfd;                /* clone3: the child's pidfd, -1 otherwise; owned by exit_poll */
        uv_poll_t exit_poll;      /* clone3: readable when the child exited */
        uv_process_t process;     /* the uv_spawn() fallback */
        uv_timer_t timeout_timer; /* spawn -> SIGTERM */
        uv_timer_t kill_timer;    /* SIGTERM -> SIGKILL */
        uv_timer_t eof_timer;     /* exit -> pipes cut */
        ChildStream out, err;

        unsigned handles; /* initialised handles whose close callback is still due */
        /* Which way the exit is watched, a fact fixed at the spawn rather
         * than a stage of the child's life: uv_spawn() was called, so the
         * process handle needs closing (else the pidfd's poll handle,
         * closed when the exit came, or none when nothing ran). */
        bool process_handle;
        ChildState state;
        ChildEnd end;

        uint64_t kill_grace_ms;
        uint64_t eof_grace_ms;
        void (*kill_tree)(void *userdata, int sig);
        void *kill_userdata;
        void (*on_output)(void *userdata, int stream, const char *data, size_t len);
        void *output_userdata;
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

        if (s->state == CHILD_STREAM_NONE)
                return;
        r = child_capture_finish(&s->capture, o);
        if (r < 0 && c->result.error == 0)
                c->result.error = r;
        o->cut = s->state == CHILD_STREAM_CUT;
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
        if (c->state == CHILD_CLOSING && c->handles == 0)
                child_report(c);
}

static void child_on_close(uv_handle_t *h)
{
        child_handle_closed(h->data);
}

static void child_poll_on_close(uv_handle_t *h)
{
        Child *c = h->data;

        close(c->pidfd);
        c->pidfd = -1;
        child_handle_closed(c);
}

static void child_stream_on_close(uv_handle_t *h)
{
        ChildStream *s = h->data;

        child_handle_closed(s->child);
}

static bool child_stream_open(const ChildStream *s)
{
        return s->state == CHILD_STREAM_OPEN;
}

static void child_stream_close(ChildStream *s, bool cut)
{
        if (!child_stream_open(s))
                return;
        s->state = cut ? CHILD_STREAM_CUT : CHILD_STREAM_EOF;
        uv_read_stop((uv_stream_t *)&s->pipe);
        uv_close((uv_handle_t *)&s->pipe, child_stream_on_close);
}

/* Send sig to everything the child started: its process group, and the
 * hook's tree. ESRCH from the group only means it is empty. */
static void child_signal(Child *c, int sig)
{
        ChildEnd to = sig == SIGKILL ? CHILD_END_KILL : CHILD_END_TERM;

        if (c->end < to)
                c->end = to;
        if (c->kill_tree)
                c->kill_tree(c->kill_userdata, sig);
        if (c->pid > 0)
                (void)kill(-c->pid, sig);
}

/* Whether any process is left in the child's process group. After the
 * direct child was reaped, its pid stays reserved as long as the group has
 * members, so this cannot hit a stranger while it answers yes; a group that
 * just emptied answers no. */
static bool child_group_alive(const Child *c)
{
        return c->pid > 0 && (kill(-c->pid, 0) == 0 || errno == EPERM);
}

static void child_close_all(Child *c)
{
        /* The pipes are closed already: the caller saw both at end of file. */
        uv_close((uv_handle_t *)&c->timeout_timer, child_on_close);
        uv_close((uv_handle_t *)&c->kill_timer, child_on_close);
        uv_close((uv_handle_t *)&c->eof_timer, child_on_close);
        if (c->process_handle)
                uv_close((uv_handle_t *)&c->process, child_on_close);
        /* The poll handle was closed when the exit came. */
}

/* The one place where the child's state changes: one step forward, on
 * the exit (RUNNING to EXITED) or when all is in (EXITED to CLOSING, which
 * closes the handles; the last close callback reports). */
static void child_move(Child *c, ChildState to)
{
        assert(to == c->state + 1);
        c->state = to;
        if (to == CHILD_CLOSING)
                child_close_all(c);
}

/* The state machine's one gate: the child is over when the exit is in, no
 * pipe is open, and an end that began has sent its SIGKILL (or found no
 * process left to send it to). */
static void child_check_done(Child *c)
{
        if (c->state != CHILD_EXITED || child_stream_open(&c->out) || child_stream_open(&c->err))
                return;
        if (c->end == CHILD_END_TERM) {
                /* Processes of the group that live on after the SIGTERM
                 * get the grace and then SIGKILL from the kill timer, which
                 * comes back here. */
                if (child_group_alive(c))
                        return;
                child_signal(c, SIGKILL);
        }
        child_move(c, CHILD_CLOSING);
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
        if (c->end != CHILD_END_NONE || c->state == CHILD_CLOSING)
                return;
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

static void child_exited(Child *c, int exit_status, int term_signal)
{
        child_move(c, CHILD_EXITED);
        c->result.exit_status = exit_status;
        c->result.term_signal = term_signal;
        if (child_stream_open(&c->out) || child_stream_open(&c->err))
                uv_timer_start(&c->eof_timer, child_on_eof_timer, c->eof_grace_ms, 0);
        child_check_done(c);
}

static void child_on_exit(uv_process_t *p, int64_t exit_status, int term_signal)
{
        child_exited(p->data, (int)exit_status, term_signal);
}

/* The pidfd is readable: the child exited. A poll error (which only a
 * broken descriptor could cause) ends the child, so that it is not lost. */
static void child_on_pidfd(uv_poll_t *h, int status, int events)
{
        Child *c = h->data;
        int exit_status = 0, term_signal = 0, r;

        (void)events;
        r = child_launch_reap(c->pidfd, c->pid, false, &exit_status, &term_signal);
        if (r == 0 && status >= 0)
                return; /* not over: keep watching */
        if (r == 0) {
                /* The watch broke: end the child rather than lose it. */
                (void)kill(-c->pid, SIGKILL);
                r = child_launch_reap(c->pidfd, c->pid, true, &exit_status, &term_signal);
                if (c->result.error == 0)
                        c->result.error = child_errno_from_uv(status);
        }
        if (r < 0 && c->result.error == 0)
                c->result.error = r;
        uv_poll_stop(h);
        uv_close((uv_handle_t *)h, child_poll_on_close);
        child_exited(c, exit_status, term_signal);
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
                if (c->on_output)
                        c->on_output(c->output_userdata, s == &c->out ? 1 : 2, buf->base,
                                     (size_t)n);
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

        if (!child_stream_open(s))
                return;
        r = uv_read_start((uv_stream_t *)&s->pipe, child_on_alloc, child_on_read);
        if (r < 0) {
                if (s->child->result.error == 0)
                        s->child->result.error = child_errno_from_uv(r);
                child_stream_close(s, false);
        }
}

/* How children are started, decided once per process: the best the kernel
 * accepts, lowered for good the first time it refuses (see child.h). -1 is
 * not decided yet. */
static int child_method = -1;

ChildSpawnMethod child_spawn_method(void)
{
        if (child_method < 0)
                child_method = CHILD_SPAWN_CLONE3_CGROUP;
        return (ChildSpawnMethod)child_method;
}

bool child_spawn_shares_memory(void)
{
        return child_spawn_method() != CHILD_SPAWN_FORK && child_launch_shares_memory();
}

void child_spawn_method_limit(ChildSpawnMethod m)
{
        if (m < child_spawn_method())
                child_method = m;
}

void child_spawn_method_reset(void)
{
        child_method = -1;
}

/* Start the program with clone3() and watch its pidfd. Returns 0 when it
 * runs, a CHILD_LAUNCH_* refusal, or a negative errno (a spawn error). */
static int child_start_clone3(Child *c, const ChildSpec *spec, int out_fd, int err_fd)
{
        ChildLaunch l = {
                .argv = spec->argv,
                .envp = spec->envp ? spec->envp : environ,
                .cwd = spec->cwd,
                .n_fds = 3 + spec->n_extra_fds,
                .cgroup_fd = spec->cgroup_fd > 0 ? spec->cgroup_fd : -1,
                .audit_proc_fd = spec->audit_proc_fd > 0 ? spec->audit_proc_fd : -1,
                .pre_exec = spec->pre_exec,
                .exec_failed = spec->exec_failed,
                .exec_data = spec->exec_data,
        };
        int r;

        snprintf(l.audit_uid, sizeof(l.audit_uid), "%lu", (unsigned long)spec->audit_uid);
        l.fds[0] = -1;
        l.fds[1] = out_fd >= 0 ? out_fd : spec->passthrough_fd > 0 ? spec->passthrough_fd : -1;
        l.fds[2] = err_fd >= 0 ? err_fd : spec->passthrough_fd > 0 ? spec->passthrough_fd : -1;
        for (size_t i = 0; i < spec->n_extra_fds; i++)
                l.fds[3 + i] = spec->extra_fds[i];
        r = child_launch(&l, &c->pid, &c->pidfd);
        if (r != 0)
                return r;
        uv_poll_init(c->loop, &c->exit_poll, c->pidfd);
        c->exit_poll.data = c;
        c->handles++;
        r = uv_poll_start(&c->exit_poll, UV_READABLE, child_on_pidfd);
        if (r < 0) {
                /* Without a watch the exit would never be seen: end the
                 * child at once and reap it here. */
                int status, sig;

                (void)kill(-c->pid, SIGKILL);
                (void)child_launch_reap(c->pidfd, c->pid, true, &status, &sig);
                uv_close((uv_handle_t *)&c->exit_poll, child_poll_on_close);
                c->pid = 0;
                return child_errno_from_uv(r);
        }
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

/* The fallback for kernels without clone3: libuv forks and execs. */
static int child_start_uv(Child *c, const ChildSpec *spec, int out_fd, int err_fd)
{
        uv_process_options_t opts = {0};
        uv_stdio_container_t stdio[3 + CHILD_EXTRA_FDS_MAX];
        int r;

        stdio[0] = (uv_stdio_container_t){.flags = UV_IGNORE};
        stdio[1] = child_stdio(spec, out_fd);
        stdio[2] = child_stdio(spec, err_fd);
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
        r = child_errno_from_uv(uv_spawn(c->loop, &c->process, &opts));
        c->process.data = c;
        if (r == 0)
                c->pid = c->process.pid;
        return r;
}

/* child_start(): the kernel refused what the spec needs; nothing ran. */
#define CHILD_START_REFUSED 1

/* Start the program by the best method the kernel accepts. Returns 0, a
 * negative errno (a spawn error), or CHILD_START_REFUSED when the spec
 * needs what the kernel just refused (a cgroup, or the hooks without
 * clone3); child_spawn_method() has been lowered then. */
static int child_start(Child *c, const ChildSpec *spec, int out_fd, int err_fd)
{
        int r;

        if (child_spawn_method() != CHILD_SPAWN_FORK) {
                r = child_start_clone3(c, spec, out_fd, err_fd);
                if (r == CHILD_LAUNCH_NO_CGROUP) {
                        child_spawn_method_limit(CHILD_SPAWN_CLONE3);
                        return CHILD_START_REFUSED;
                }
                if (r != CHILD_LAUNCH_NO_CLONE3)
                        return r;
                child_spawn_method_limit(CHILD_SPAWN_FORK);
                if (spec->pre_exec || spec->exec_failed)
                        return CHILD_START_REFUSED;
        }
        return child_start_uv(c, spec, out_fd, err_fd);
}

static int child_spec_check(const ChildSpec *spec)
{
        if (!spec || !spec->argv || !spec->argv[0] || !spec->argv[0][0])
                return -EINVAL;
        if (spec->n_extra_fds > CHILD_EXTRA_FDS_MAX || (spec->n_extra_fds > 0 && !spec->extra_fds))
                return -EINVAL;
        return 0;
}

/* Initialise the stream's pipe handle on the read end, which it then owns.
 * Returns 0 or a negative errno; the handle needs closing either way. */
static int child_stream_init(Child *c, ChildStream *s, int read_fd)
{
        int r;

        s->child = c;
        uv_pipe_init(c->loop, &s->pipe, 0);
        s->pipe.data = s;
        c->handles++;
        s->state = CHILD_STREAM_OPEN;
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

/* Undo a spawn that was refused before anything ran (-EOPNOTSUPP): close
 * what was opened and free the Child without a report. */
static void child_abandon_closed(Child *c)
{
        if (--c->handles == 0)
                child_free(c);
}

static void child_abandon_on_close(uv_handle_t *h)
{
        child_abandon_closed(h->data);
}

static void child_abandon_stream_on_close(uv_handle_t *h)
{
        ChildStream *s = h->data;

        child_abandon_closed(s->child);
}

static void child_abandon(Child *c)
{
        uv_close((uv_handle_t *)&c->timeout_timer, child_abandon_on_close);
        uv_close((uv_handle_t *)&c->kill_timer, child_abandon_on_close);
        uv_close((uv_handle_t *)&c->eof_timer, child_abandon_on_close);
        if (child_stream_open(&c->out))
                uv_close((uv_handle_t *)&c->out.pipe, child_abandon_stream_on_close);
        if (child_stream_open(&c->err))
                uv_close((uv_handle_t *)&c->err.pipe, child_abandon_stream_on_close);
}

int child_spawn(uv_loop_t *loop, const ChildSpec *spec, child_done_cb done, void *userdata,
                Child **ret)
{
        int pout[2] = {-1, -1}, perr[2] = {-1, -1};
        Child *c;
        int r;

        r = child_spec_check(spec);
        if (r < 0)
                return r;
        if (!loop || !done)
                return -EINVAL;
        if (spec->cgroup_fd > 0 && child_spawn_method() != CHILD_SPAWN_CLONE3_CGROUP)
                return -EOPNOTSUPP;
        if ((spec->pre_exec || spec->exec_failed) && child_spawn_method() == CHILD_SPAWN_FORK)
                return -EOPNOTSUPP;

        /* Everything that can fail without leaving a handle behind comes
         * first, so that an error here means nothing on the loop. The pipes
         * are close-on-exec: the child dup2()s the write ends onto 1 and 2,
         * which clears the flag on the copies only. */
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->pidfd = -1;
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
        c->on_output = spec->on_output;
        c->output_userdata = spec->output_userdata;
        c->done = done;
        c->userdata = userdata;
        c->out.child = c->err.child = c;
        child_capture_init(&c->out.capture, spec->output_limit);
        child_capture_init(&c->err.capture, spec->output_limit);
        child_timer_init(c, &c->timeout_timer);
        child_timer_init(c, &c->kill_timer);
        child_timer_init(c, &c->eof_timer);

        if (spec->capture_stdout)
                r = child_stream_init(c, &c->out, pout[0]);
        if (spec->capture_stderr) {
                if (r == 0)
                        r = child_stream_init(c, &c->err, perr[0]);
                else
                        closep(&perr[0]); /* never handed to a pipe handle */
        }
        if (r == 0)
                r = child_start(c, spec, pout[1], perr[1]);
        /* The child has its copies of the write ends, or never will. */
        closep(&pout[1]);
        closep(&perr[1]);

        if (r == CHILD_START_REFUSED) {
                /* Nothing ran and nothing will be reported: the caller
                 * joins the cgroup another way and spawns again. */
                child_abandon(c);
                return -EOPNOTSUPP;
        }
        if (r < 0) {
                /* The program never ran: report it from the loop, like any
                 * other end, once the handles are closed. */
                c->result.spawn_error = r;
                child_move(c, CHILD_EXITED);
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
        if (!c || c->state == CHILD_CLOSING)
                return;
        c->result.cancelled = true;
        child_end(c);
}

pid_t child_get_pid(const Child *c)
{
        return c && !c->result.spawn_error ? c->pid : 0;
}

int child_result_exit_code(const ChildResult *r)
{
        if (r->spawn_error)
                return 127;
        if (r->term_signal)
                return -r->term_signal;
        return r->exit_status;
}
