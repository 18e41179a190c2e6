/* Log entries to journald over its native protocol, without libsystemd.
 *
 * systemd documents the protocol as stable and meant to be reimplemented
 * (systemd.io/JOURNAL_NATIVE_PROTOCOL): one datagram per entry to
 * /run/systemd/journal/socket, holding the fields one after another, each
 * "NAME=value\n", or, for a value with a newline in it, "NAME\n", the
 * value's length as a little-endian 64-bit number, the value and "\n".
 * journald adds the trusted fields (_PID, _SYSTEMD_UNIT, ...) itself from
 * the socket's credentials. libsystemd's sd_journal_sendv() does the same
 * and would cost every idle agent 0.9 MiB of resident memory, like the
 * sd_notify() we also do without (README.md, "Dependencies").
 *
 * An entry too large for one datagram (the kernel's default send buffer is
 * some 200 KiB) goes as the protocol says: written to a memfd, sealed
 * against change, and the descriptor sent in a datagram of its own
 * (SCM_RIGHTS); journald reads the entry from it. Only when that fails too
 * does log.c write the entry to stderr, which is the journal too, as
 * text. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/log-internal.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"

bool log_journal_is_stderr(void)
{
        const char *v = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;
        char end;

        /* "DEV:INODE" of the stream systemd connected to stdout and stderr;
         * when stderr was redirected since, the numbers no longer match. */
        if (!v || sscanf(v, "%llu:%llu%c", &dev, &ino, &end) != 2)
                return false;
        if (fstat(STDERR_FILENO, &st) < 0)
                return false;
        return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

int log_journal_open(LogJournal *j, const char *socket_path)
{
        const char *path = socket_path ? socket_path : JOURNAL_SOCKET;
        size_t len = strlen(path);
        int fd;

        if (len >= sizeof(j->addr.sun_path))
                return -ENAMETOOLONG;
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        j->fd = fd;
        j->addr = (struct sockaddr_un){.sun_family = AF_UNIX};
        memcpy(j->addr.sun_path, path, len + 1);
        j->addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + 1);
        return 0;
}

void log_journal_close(LogJournal *j)
{
        if (j->fd >= 0)
                close(j->fd);
        j->fd = -1;
}

static int field(StrBuf *b, const char *name, const char *value)
{
        size_t len = strlen(value);
        uint8_t le[8];
        int r;

        if (!memchr(value, '\n', len))
                return strbuf_printf(b, "%s=%s\n", name, value);
        for (size_t i = 0; i < 8; i++)
                le[i] = (uint8_t)((uint64_t)len >> (8 * i));
        r = strbuf_printf(b, "%s\n", name);
        if (r == 0)
                r = strbuf_append(b, (const char *)le, sizeof(le));
        if (r == 0)
                r = strbuf_append(b, value, len);
        if (r == 0)
                r = strbuf_putc(b, '\n');
        return r;
}

/* The source file as the repository names it: meson compiles "../agent/x.c". */
static const char *source_path(const char *file)
{
        while (strncmp(file, "../", 3) == 0)
                file += 3;
        return file;
}

/* Send the entry's len bytes at data through a sealed memfd, for an entry
 * larger than a datagram may be. */
static int send_memfd(const LogJournal *j, const char *data, size_t len)
{
        union {
                struct cmsghdr h;
                char space[CMSG_SPACE(sizeof(int))];
        } control = {0};
        struct msghdr mh = {.msg_name = (void *)&j->addr,
                            .msg_namelen = j->addr_len,
                            .msg_control = control.space,
                            .msg_controllen = sizeof(control.space)};
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        _cleanup_close_ int fd =
                memfd_create("muranoagent-journal", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        ssize_t n;

        if (fd < 0)
                return -errno;
        for (size_t at = 0; at < len; at += (size_t)n) {
                n = write(fd, data + at, len - at);
                if (n < 0 && errno == EINTR)
                        n = 0;
                else if (n <= 0)
                        return n < 0 ? -errno : -EIO;
        }
        /* journald takes a memfd only when nobody can change it any more. */
        if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
                return -errno;
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
        do
                n = sendmsg(j->fd, &mh, MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        return n < 0 ? -errno : 0;
}

int log_journal_send(const LogJournal *j, const LogEntry *e)
{
        /* syslog(3) priorities: LOG_DEBUG, LOG_INFO, LOG_WARNING, LOG_ERR. */
        static const char priorities[] = {'7', '6', '4', '3'};
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        char priority[2] = {priorities[e->level], '\0'}, line[16];
        struct iovec iov;
        struct msghdr mh = {.msg_name = (void *)&j->addr,
                            .msg_namelen = j->addr_len,
                            .msg_iov = &iov,
                            .msg_iovlen = 1};
        ssize_t n;
        int r;

        snprintf(line, sizeof(line), "%d", e->line);
        r = field(&b, "MESSAGE", e->message);
        if (r == 0)
                r = field(&b, "PRIORITY", priority);
        if (r == 0)
                r = field(&b, "SYSLOG_IDENTIFIER", LOG_PROGRAM);
        if (r == 0 && e->plan_id)
                r = field(&b, "PLAN_ID", e->plan_id);
        if (r == 0 && e->file)
                r = field(&b, "CODE_FILE", source_path(e->file));
        if (r == 0 && e->file)
                r = field(&b, "CODE_LINE", line);
        if (r == 0 && e->func)
                r = field(&b, "CODE_FUNC", e->func);
        if (r < 0)
                return r;
        iov = (struct iovec){.iov_base = b.data, .iov_len = b.len};
        do
                n = sendmsg(j->fd, &mh, MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        if (n < 0 && (errno == EMSGSIZE || errno == ENOBUFS))
                return send_memfd(j, b.data, b.len);
        if (n < 0)
                return -errno;
        return (size_t)n == b.len ? 0 : -EMSGSIZE;
}
