/* Tests for daemon-notify.c: the exact datagrams the daemon sends to
 * $NOTIFY_SOCKET, bound here as a path and as an abstract name, with the
 * sender's credentials systemd checks; the addresses refused; the
 * watchdog's variables; and daemon-watchdog.c's pings, with the loop run
 * on a thread of its own so that the test thread can stand for the
 * transport's I/O thread: a ping from it while the loop waits (the loop not
 * woken), none while the loop is wedged in a callback, and the fallback
 * timer when nobody else pings. */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <semaphore.h>
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

/* Receive one datagram (recvmsg() flags: MSG_DONTWAIT when it must be
 * there already) and check its bytes and its sender. */
static void expect_flags(int fd, const char *want, int flags)
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

        n = recvmsg(fd, &mh, flags);
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

static void expect(int fd, const char *want)
{
        expect_flags(fd, want, 0);
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

/* ---- the pings (daemon-watchdog.c) ---------------------------------------
 * The watchdog's interval is 1 s: a ping is due once the last one is
 * 250 ms old, the loop is healthy while busy for less than 250 ms, and the
 * fallback fires 750 ms after the last ping. The test thread stands for the
 * transport's I/O thread. Assertions that something does not happen hold
 * however slow the machine is; those that something does wait up to 5 s. */

#define WD_USEC    "1000000"
#define QUARTER_MS 250

typedef struct LoopThread {
        uv_loop_t loop;
        DaemonWatchdog w;
        uv_async_t stop;  /* keeps the loop alive; its callback ends the loop */
        uv_async_t wedge; /* an I/O callback that blocks until release */
        uv_timer_t timer; /* a timer callback that does the same */
        sem_t wedged, release;
        pid_t tid;
        uv_thread_t thread;
} LoopThread;

static LoopThread lt;

static void wedge_here(void)
{
        sem_post(&lt.wedged);
        while (sem_wait(&lt.release) < 0)
                ck_assert_int_eq(errno, EINTR);
}

static void on_wedge_async(uv_async_t *a)
{
        wedge_here();
}

static void on_wedge_timer(uv_timer_t *t)
{
        wedge_here();
}

static void on_stop(uv_async_t *a)
{
        daemon_watchdog_close(&lt.w);
        uv_close((uv_handle_t *)&lt.stop, NULL);
        uv_close((uv_handle_t *)&lt.wedge, NULL);
        uv_close((uv_handle_t *)&lt.timer, NULL);
}

static void loop_main(void *arg)
{
        lt.tid = gettid();
        ck_assert_int_eq(uv_run(&lt.loop, UV_RUN_DEFAULT), 0);
}

static void sleep_ms(unsigned ms)
{
        struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};

        while (nanosleep(&ts, &ts) < 0)
                ck_assert_int_eq(errno, EINTR);
}

/* No datagram for ms milliseconds. */
static void expect_none_for(int fd, unsigned ms)
{
        struct pollfd p = {.fd = fd, .events = POLLIN};

        ck_assert_int_eq(poll(&p, 1, (int)ms), 0);
}

static uint64_t elapsed_ms(uint64_t since_ns)
{
        return (uv_hrtime() - since_ns) / 1000000;
}

/* The loop thread's voluntary context switches: one per wake-up. */
static unsigned long loop_wakeups(void)
{
        _cleanup_free_ char *path = NULL;
        unsigned long n = 0;
        char line[256];
        FILE *f;

        ck_assert_int_gt(asprintf(&path, "/proc/self/task/%d/status", (int)lt.tid), 0);
        f = fopen(path, "re");
        ck_assert_ptr_nonnull(f);
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "voluntary_ctxt_switches: %lu", &n) == 1)
                        break;
        fclose(f);
        return n;
}

/* Bind the notify socket, start the watchdog and the loop thread, and
 * receive the first ping, which the loop sends before it first waits. A
 * timer_ms above 0 starts lt.timer to wedge the loop then. */
static int loop_start(unsigned timer_ms, uint64_t *ret_first_ns)
{
        _cleanup_free_ char *path = NULL;
        int fd;

        ck_assert_int_gt(asprintf(&path, "%s/notify", tmpdir), 0);
        /* Left behind by a test that failed before loop_stop(). */
        (void)unlink(path);
        fd = bind_notify(path);
        set_or_unset("WATCHDOG_USEC", WD_USEC);
        set_or_unset("WATCHDOG_PID", "SELF");
        memset(&lt, 0, sizeof(lt));
        ck_assert_int_eq(sem_init(&lt.wedged, 0, 0), 0);
        ck_assert_int_eq(sem_init(&lt.release, 0, 0), 0);
        ck_assert_int_eq(uv_loop_init(&lt.loop), 0);
        ck_assert_int_eq(uv_async_init(&lt.loop, &lt.stop, on_stop), 0);
        ck_assert_int_eq(uv_async_init(&lt.loop, &lt.wedge, on_wedge_async), 0);
        ck_assert_int_eq(uv_timer_init(&lt.loop, &lt.timer), 0);
        if (timer_ms)
                ck_assert_int_eq(uv_timer_start(&lt.timer, on_wedge_timer, timer_ms, 0), 0);
        ck_assert_int_eq(daemon_watchdog_start(&lt.w, &lt.loop), 1);
        ck_assert_int_eq(uv_thread_create(&lt.thread, loop_main, NULL), 0);
        expect(fd, "WATCHDOG=1");
        *ret_first_ns = uv_hrtime();
        return fd;
}

static void loop_stop(int fd)
{
        _cleanup_free_ char *path = NULL;

        ck_assert_int_eq(uv_async_send(&lt.stop), 0);
        ck_assert_int_eq(uv_thread_join(&lt.thread), 0);
        ck_assert_int_eq(uv_loop_close(&lt.loop), 0);
        sem_destroy(&lt.wedged);
        sem_destroy(&lt.release);
        unsetenv("WATCHDOG_USEC");
        unsetenv("WATCHDOG_PID");
        close(fd);
        ck_assert_int_gt(asprintf(&path, "%s/notify", tmpdir), 0);
        ck_assert_int_eq(unlink(path), 0);
}

/* Off: nothing started, nothing to close, no ping. */
START_TEST(test_watchdog_off)
{
        uv_loop_t loop;
        DaemonWatchdog w;

        ck_assert_int_eq(uv_loop_init(&loop), 0);
        set_or_unset("WATCHDOG_USEC", WD_USEC);
        set_or_unset("WATCHDOG_PID", "1");
        ck_assert_int_eq(daemon_watchdog_start(&w, &loop), 0);
        daemon_watchdog_offer(&w);
        set_or_unset("WATCHDOG_PID", "x");
        ck_assert_int_eq(daemon_watchdog_start(&w, &loop), -EINVAL);
        daemon_watchdog_close(&w);
        ck_assert_int_eq(uv_run(&loop, UV_RUN_NOWAIT), 0);
        ck_assert_int_eq(uv_loop_close(&loop), 0);
        unsetenv("WATCHDOG_USEC");
        unsetenv("WATCHDOG_PID");
}
END_TEST

/* (a) A wake-up of another thread pings while the loop waits in epoll, and
 * the loop does not wake for it; a second offer right after does not ping. */
START_TEST(test_watchdog_offer_idle)
{
        uint64_t first;
        unsigned long before;
        int fd = loop_start(0, &first);

        sleep_ms(QUARTER_MS + 100);
        before = loop_wakeups();
        daemon_watchdog_offer(&lt.w);
        expect_flags(fd, "WATCHDOG=1", MSG_DONTWAIT);
        daemon_watchdog_offer(&lt.w);
        expect_none(fd);
        ck_assert_uint_eq(loop_wakeups(), before);
        ck_assert_uint_lt(elapsed_ms(first), 750);
        loop_stop(fd);
}
END_TEST

/* (b) A loop wedged in a callback, an I/O callback (uv_async, which runs
 * before any uv_check handle would) or a timer's: another thread's offer
 * pings while the loop has been busy for less than a quarter of the
 * interval, and not after; neither does the fallback, which the wedged loop
 * cannot run. Released, the loop pings before it waits again. */
static const bool wedge_in_timer[] = {false, true};

START_TEST(test_watchdog_wedged)
{
        uint64_t first, wedged;
        int fd = loop_start(wedge_in_timer[_i] ? QUARTER_MS + 50 : 0, &first);

        if (!wedge_in_timer[_i]) {
                sleep_ms(QUARTER_MS + 50);
                ck_assert_int_eq(uv_async_send(&lt.wedge), 0);
        }
        ck_assert_int_eq(sem_wait(&lt.wedged), 0);
        wedged = uv_hrtime();
        daemon_watchdog_offer(&lt.w);
        if (elapsed_ms(wedged) < QUARTER_MS / 2 && elapsed_ms(first) >= QUARTER_MS)
                expect_flags(fd, "WATCHDOG=1", MSG_DONTWAIT);
        sleep_ms(QUARTER_MS + 50);
        daemon_watchdog_offer(&lt.w);
        expect_none(fd);
        /* Past the fallback's time too. */
        expect_none_for(fd, 1000);
        daemon_watchdog_offer(&lt.w);
        expect_none(fd);
        sem_post(&lt.release);
        expect(fd, "WATCHDOG=1");
        loop_stop(fd);
}
END_TEST

/* (c) Nobody else wakes: the loop's fallback pings three quarters of the
 * interval after the last ping (the old timer pinged at half), and a ping
 * from another thread pushes it back without waking the loop. */
START_TEST(test_watchdog_fallback)
{
        uint64_t first, second;
        unsigned long before;
        int fd = loop_start(0, &first);

        expect_none_for(fd, 600);
        expect(fd, "WATCHDOG=1");
        second = uv_hrtime();
        ck_assert_uint_ge((second - first) / 1000000, 600);

        sleep_ms(QUARTER_MS + 150);
        before = loop_wakeups();
        daemon_watchdog_offer(&lt.w);
        expect_flags(fd, "WATCHDOG=1", MSG_DONTWAIT);
        /* Not at second + 750 ms, but 750 ms after the offer's ping. */
        expect_none_for(fd, 600);
        ck_assert_uint_eq(loop_wakeups(), before);
        expect(fd, "WATCHDOG=1");
        loop_stop(fd);
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_test(tc, test_path_socket);
        tcase_add_test(tc, test_abstract_socket);
        tcase_add_test(tc, test_no_socket);
        tcase_add_loop_test(tc, test_watchdog_usec, 0, ELEMENTSOF(watchdog_cases));
        tcase_add_test(tc, test_watchdog_off);
        tcase_add_test(tc, test_watchdog_offer_idle);
        tcase_add_loop_test(tc, test_watchdog_wedged, 0, ELEMENTSOF(wedge_in_timer));
        tcase_add_test(tc, test_watchdog_fallback);
}

int main(void)
{
        int ret;

        if (!mkdtemp(tmpdir)) {
                perror("mkdtemp");
                return EXIT_FAILURE;
        }
        ret = check_main_one("daemon-notify", "core", NULL, NULL, 20, add_tests);
        rmdir(tmpdir);
        return ret;
}
