/* Tests for daemon-notify.c: the exact datagrams the daemon sends to
 * $NOTIFY_SOCKET, bound here as a path and as an abstract name, with the
 * sender's credentials systemd checks; the addresses refused; and the
 * watchdog's variables and timer. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/daemon-internal.h"
#include "util/macro.h"
#include "test-lib.h"

static char tmpdir[] = "/tmp/test-daemon-notify.XXXXXX";

/* A datagram socket bound to addr (a path, or '@' and an abstract name),
 * with SO_PASSCRED so that each datagram carries the sender's credentials,
 * and a receive timeout so that a missing datagram fails the test. */
static int bind_notify(const char *addr)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        struct timeval tv = {.tv_sec = 5};
        size_t len = strlen(addr);
        int fd, one = 1;

        ck_assert_uint_lt(len, sizeof(sa.sun_path));
        memcpy(sa.sun_path, addr, len);
        if (addr[0] == '@')
                sa.sun_path[0] = '\0';
        else
                len++;
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)), 0);
        ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
        ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa,
                              (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)),
                         0);
        ck_assert_int_eq(setenv("NOTIFY_SOCKET", addr, 1), 0);
        return fd;
}

/* Receive one datagram and check its bytes and its sender. */
static void expect(int fd, const char *want)
{
        char buf[1024];
        union {
                struct cmsghdr h;
                char space[CMSG_SPACE(sizeof(struct ucred))];
        } ctl;
        struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
        struct msghdr mh = {.msg_iov = &iov,
                            .msg_iovlen = 1,
                            .msg_control = &ctl,
                            .msg_controllen = sizeof(ctl)};
        struct cmsghdr *c;
        struct ucred cred;
        ssize_t n;

        n = recvmsg(fd, &mh, 0);
        ck_assert_msg(n >= 0, "no datagram: %s", strerror(errno));
        ck_assert_int_eq(mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC), 0);
        ck_assert_int_eq((int)n, (int)strlen(want));
        ck_assert_mem_eq(buf, want, (size_t)n);
        c = CMSG_FIRSTHDR(&mh);
        ck_assert_ptr_nonnull(c);
        ck_assert_int_eq(c->cmsg_level, SOL_SOCKET);
        ck_assert_int_eq(c->cmsg_type, SCM_CREDENTIALS);
        memcpy(&cred, CMSG_DATA(c), sizeof(cred));
        ck_assert_int_eq(cred.pid, getpid());
        ck_assert_int_eq(cred.uid, getuid());
}

/* Nothing more is waiting. */
static void expect_none(int fd)
{
        char buf[16];

        ck_assert_int_eq(recv(fd, buf, sizeof(buf), MSG_DONTWAIT), -1);
        ck_assert_int_eq(errno, EAGAIN);
}

/* What daemon.c and daemon-pump.c send over a run, in order. */
static void send_and_check(int fd)
{
        Daemon d = {0};
        char long_id[400], want[300];

        daemon_notify_ready(&d, "consuming from q1");
        expect(fd, "READY=1\nSTATUS=consuming from q1");
        ck_assert(d.ready_notified);
        daemon_notify_status("running plan %s", "a1b2");
        expect(fd, "STATUS=running plan a1b2");
        daemon_notify_status("waiting for the broker: %s", "connection refused");
        expect(fd, "STATUS=waiting for the broker: connection refused");
        daemon_notify_ready(&d, "consuming from q1");
        expect(fd, "STATUS=consuming from q1");
        /* The text after STATUS= is cut at 255 bytes. */
        memset(long_id, 'x', sizeof(long_id) - 1);
        long_id[sizeof(long_id) - 1] = '\0';
        daemon_notify_status("running plan %s", long_id);
        snprintf(want, sizeof(want), "STATUS=running plan %.*s", 255 - 13, long_id);
        ck_assert_uint_eq(strlen(want), 7 + 255);
        expect(fd, want);
        daemon_notify_stopping();
        expect(fd, "STOPPING=1\nSTATUS=stopping");
        expect_none(fd);
}

START_TEST(test_path_socket)
{
        _cleanup_free_ char *path = NULL;
        int fd;

        ck_assert_int_gt(asprintf(&path, "%s/notify", tmpdir), 0);
        fd = bind_notify(path);
        send_and_check(fd);
        close(fd);
        ck_assert_int_eq(unlink(path), 0);
        /* Nobody listening: the error comes back, and nothing else happens. */
        ck_assert_int_eq(daemon_notify_send("READY=1"), -ENOENT);
}
END_TEST

START_TEST(test_abstract_socket)
{
        char name[64];
        int fd;

        snprintf(name, sizeof(name), "@muranoagent/test-notify/%ld", (long)getpid());
        fd = bind_notify(name);
        send_and_check(fd);
        close(fd);
        ck_assert_int_eq(daemon_notify_send("READY=1"), -ECONNREFUSED);
}
END_TEST

START_TEST(test_no_socket)
{
        Daemon d = {0};
        char too_long[200];

        ck_assert_int_eq(unsetenv("NOTIFY_SOCKET"), 0);
        ck_assert_int_eq(daemon_notify_send("READY=1"), 0);
        daemon_notify_ready(&d, "consuming");
        ck_assert(d.ready_notified);
        ck_assert_int_eq(setenv("NOTIFY_SOCKET", "", 1), 0);
        ck_assert_int_eq(daemon_notify_send("READY=1"), 0);

        /* Relative paths, an empty abstract name, other families (vsock:)
         * and names longer than sun_path are refused. */
        ck_assert_int_eq(setenv("NOTIFY_SOCKET", "run/notify", 1), 0);
        ck_assert_int_eq(daemon_notify_send("READY=1"), -EAFNOSUPPORT);
        ck_assert_int_eq(setenv("NOTIFY_SOCKET", "@", 1), 0);
        ck_assert_int_eq(daemon_notify_send("READY=1"), -EAFNOSUPPORT);
        ck_assert_int_eq(setenv("NOTIFY_SOCKET", "vsock:2:1234", 1), 0);
        ck_assert_int_eq(daemon_notify_send("READY=1"), -EAFNOSUPPORT);
        too_long[0] = '/';
        memset(too_long + 1, 'a', sizeof(too_long) - 2);
        too_long[sizeof(too_long) - 1] = '\0';
        ck_assert_int_eq(setenv("NOTIFY_SOCKET", too_long, 1), 0);
        ck_assert_int_eq(daemon_notify_send("READY=1"), -EAFNOSUPPORT);
        ck_assert_int_eq(unsetenv("NOTIFY_SOCKET"), 0);
}
END_TEST

static const struct {
        const char *usec, *pid; /* NULL: unset; "SELF": this process */
        int ret;
        uint64_t usec_value;
} watchdog_cases[] = {
        {NULL, NULL, 0, 0},
        {"", NULL, 0, 0},
        {"30000000", NULL, 1, 30000000},
        {"30000000", "SELF", 1, 30000000},
        {"30000000", "1", 0, 0}, /* meant for another process */
        {"30000000", "x", -EINVAL, 0},
        {"0", NULL, -EINVAL, 0},
        {"-5", NULL, -EINVAL, 0},
        {"12s", NULL, -EINVAL, 0},
        {"99999999999999999999999", NULL, -EINVAL, 0},
};

static void set_or_unset(const char *name, const char *value)
{
        char pid[32];

        if (!value) {
                ck_assert_int_eq(unsetenv(name), 0);
                return;
        }
        if (streq(value, "SELF")) {
                snprintf(pid, sizeof(pid), "%ld", (long)getpid());
                value = pid;
        }
        ck_assert_int_eq(setenv(name, value, 1), 0);
}

START_TEST(test_watchdog_usec)
{
        uint64_t usec = 7;

        set_or_unset("WATCHDOG_USEC", watchdog_cases[_i].usec);
        set_or_unset("WATCHDOG_PID", watchdog_cases[_i].pid);
        ck_assert_int_eq(daemon_watchdog_usec(&usec), watchdog_cases[_i].ret);
        ck_assert_uint_eq(usec, watchdog_cases[_i].ret == 1 ? watchdog_cases[_i].usec_value : 7);
        unsetenv("WATCHDOG_USEC");
        unsetenv("WATCHDOG_PID");
}
END_TEST

static void close_loop(uv_loop_t *loop, Daemon *d)
{
        uv_close((uv_handle_t *)&d->watchdog, NULL);
        ck_assert_int_eq(uv_run(loop, UV_RUN_DEFAULT), 0);
        ck_assert_int_eq(uv_loop_close(loop), 0);
}

/* The pings come from the loop, at half the interval. */
START_TEST(test_watchdog_pings)
{
        _cleanup_free_ char *path = NULL;
        uv_loop_t loop;
        Daemon d = {.loop = &loop};
        int fd;

        ck_assert_int_gt(asprintf(&path, "%s/notify", tmpdir), 0);
        fd = bind_notify(path);
        ck_assert_int_eq(uv_loop_init(&loop), 0);
        ck_assert_int_eq(uv_timer_init(&loop, &d.watchdog), 0);

        /* Off: no timer. */
        set_or_unset("WATCHDOG_USEC", "4000000");
        set_or_unset("WATCHDOG_PID", "1");
        daemon_watchdog_start(&d);
        ck_assert(!uv_is_active((uv_handle_t *)&d.watchdog));

        set_or_unset("WATCHDOG_PID", "SELF");
        daemon_watchdog_start(&d);
        ck_assert(uv_is_active((uv_handle_t *)&d.watchdog));
        ck_assert_uint_eq(uv_timer_get_repeat(&d.watchdog), 2000);
        uv_run(&loop, UV_RUN_NOWAIT);
        expect(fd, "WATCHDOG=1");
        expect_none(fd);
        uv_timer_stop(&d.watchdog);

        /* Below 2 ms the timer still repeats, every millisecond. */
        set_or_unset("WATCHDOG_USEC", "1000");
        daemon_watchdog_start(&d);
        ck_assert_uint_eq(uv_timer_get_repeat(&d.watchdog), 1);
        uv_run(&loop, UV_RUN_NOWAIT);
        expect(fd, "WATCHDOG=1");
        uv_timer_stop(&d.watchdog);

        unsetenv("WATCHDOG_USEC");
        unsetenv("WATCHDOG_PID");
        close_loop(&loop, &d);
        close(fd);
        ck_assert_int_eq(unlink(path), 0);
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_test(tc, test_path_socket);
        tcase_add_test(tc, test_abstract_socket);
        tcase_add_test(tc, test_no_socket);
        tcase_add_loop_test(tc, test_watchdog_usec, 0, ELEMENTSOF(watchdog_cases));
        tcase_add_test(tc, test_watchdog_pings);
}

int main(void)
{
        int ret;

        if (!mkdtemp(tmpdir)) {
                perror("mkdtemp");
                return EXIT_FAILURE;
        }
        ret = check_main_one("daemon-notify", "core", NULL, NULL, 4, add_tests);
        rmdir(tmpdir);
        return ret;
}
