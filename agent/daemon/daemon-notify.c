/* systemd readiness and liveness, without libsystemd. Outside systemd
 * ($NOTIFY_SOCKET unset) every call is a cheap no-op. When the watchdog
 * pings go is daemon-watchdog.c's business; daemon_notify_send() is safe on
 * any thread (a socket of its own per datagram, and nothing changes the
 * environment once the daemon runs).
 *
 * sd_notify(3) ("NOTES") documents the protocol as stable and meant to be
 * reimplemented: one datagram holding the newline-separated assignments,
 * sent to the AF_UNIX socket named by $NOTIFY_SOCKET, an abstract-namespace
 * name when it begins with '@'. The kernel attaches our credentials for the
 * receiver (systemd sets SO_PASSCRED), so nothing more is sent. Linking
 * libsystemd for these few lines cost 0.9 MiB of RSS (it brings libgcrypt,
 * liblz4, liblzma, libzstd and libcap; README.md, "Dependencies").
 *
 * The variables are left in the environment, as sd_notify(0, ...) left
 * them when libsystemd sent these messages. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/daemon-internal.h"

int daemon_notify_send(const char *text)
{
        const char *name = getenv("NOTIFY_SOCKET");
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        struct iovec iov = {.iov_base = (void *)text, .iov_len = strlen(text)};
        struct msghdr mh = {.msg_name = &sa, .msg_iov = &iov, .msg_iovlen = 1};
        size_t len;
        ssize_t n;
        int fd, r = 0;

        if (!name || !*name)
                return 0;
        len = strlen(name);
        /* A path must keep its terminating NUL inside sun_path; an abstract
         * name is exactly its bytes after the leading NUL that replaces '@'. */
        if ((name[0] != '/' && name[0] != '@') || len < 2 || len >= sizeof(sa.sun_path))
                return -EAFNOSUPPORT;
        memcpy(sa.sun_path, name, len);
        if (name[0] == '@') {
                sa.sun_path[0] = '\0';
                mh.msg_namelen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
        } else
                mh.msg_namelen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + 1);

        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        do
                n = sendmsg(fd, &mh, MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                r = -errno;
        else if ((size_t)n != iov.iov_len)
                r = -EMSGSIZE;
        close(fd);
        return r;
}

void daemon_notify_ready(Daemon *d, const char *status)
{
        char *text;

        if (asprintf(&text, "%sSTATUS=%s", d->ready_notified ? "" : "READY=1\n", status) < 0)
                return;
        d->ready_notified = true;
        (void)daemon_notify_send(text);
        free(text);
}

void daemon_notify_status(const char *fmt, ...)
{
        /* The status text is cut at 255 bytes; the prefix is not counted. */
        char text[sizeof("STATUS=") - 1 + 256] = "STATUS=";
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(text + sizeof("STATUS=") - 1, 256, fmt, ap);
        va_end(ap);
        (void)daemon_notify_send(text);
}

void daemon_notify_stopping(void)
{
        (void)daemon_notify_send("STOPPING=1\nSTATUS=stopping");
}

int daemon_watchdog_usec(uint64_t *ret)
{
        const char *usec = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");
        unsigned long long v;
        char *end;

        /* sd_watchdog_enabled(3): WATCHDOG_PID, when set, names the process
         * the watchdog is meant for; another process must not ping. */
        if (pid && *pid) {
                errno = 0;
                v = strtoull(pid, &end, 10);
                if (errno != 0 || *end || v == 0)
                        return -EINVAL;
                if (v != (unsigned long long)getpid())
                        return 0;
        }
        if (!usec || !*usec)
                return 0;
        if (*usec < '0' || *usec > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(usec, &end, 10);
        if (errno != 0 || *end || v == 0)
                return -EINVAL;
        *ret = v;
        return 1;
}
