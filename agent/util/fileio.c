/* Whole-file reads with a size cap (see fileio.h). */
#include "util/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/macro.h"

/* Read fd to its end into a new NUL-terminated buffer. The first buffer
 * holds hint bytes and one more, so that a file of the size expected is
 * read with one allocation and its end seen without another; the buffer
 * then doubles, never past max + 1 bytes of data, which is how a file
 * over max is caught without reading all of it. */
static int read_fd(int fd, size_t max, size_t hint, char **ret, size_t *ret_len)
{
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, cap = 0;

        for (;;) {
                ssize_t n;

                if (len + 1 >= cap) {
                        size_t ncap = cap ? cap * 2 : hint + 2;
                        char *p;
                        if (ncap > max + 2)
                                ncap = max + 2;
                        if (ncap <= len + 1)
                                return -EFBIG;
                        p = realloc(buf, ncap);
                        if (!p)
                                return -ENOMEM;
                        buf = p;
                        cap = ncap;
                }
                n = read(fd, buf + len, cap - len - 1);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        break;
                len += (size_t)n;
                if (len > max)
                        return -EFBIG;
        }
        buf[len] = '\0';
        *ret = TAKE_PTR(buf);
        if (ret_len)
                *ret_len = len;
        return 0;
}

int file_read_all(const char *path, size_t max, char **ret, size_t *ret_len)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

        if (fd < 0)
                return -errno;
        /* Configuration and plan files are small, and files under /proc
         * and /sys say they have no size at all: start with a page. */
        return read_fd(fd, max, 4094, ret, ret_len);
}

int file_read_regular_at(int dirfd, const char *path, size_t max, char **ret, size_t *ret_len)
{
        _cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

        if (fd < 0)
                return -errno;
        return file_read_regular_fd(fd, max, ret, ret_len);
}

int file_read_regular_fd(int fd, size_t max, char **ret, size_t *ret_len)
{
        struct stat st;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        if ((uint64_t)st.st_size > max)
                return -EFBIG;
        /* The size is a hint: the file is still read to its end, so one
         * that grows is read whole (up to max) or refused. */
        return read_fd(fd, max, (size_t)st.st_size, ret, ret_len);
}

ssize_t file_pread_full(int fd, void *buf, size_t len, off_t off)
{
        size_t got = 0;

        while (got < len) {
                ssize_t k = pread(fd, (char *)buf + got, len - got, off + (off_t)got);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        break;
                got += (size_t)k;
        }
        return (ssize_t)got;
}

int file_write_all(int fd, const void *data, size_t len)
{
        const char *p = data;

        while (len > 0) {
                ssize_t w = write(fd, p, len);

                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0)
                        return -errno;
                p += w;
                len -= (size_t)w;
        }
        return 0;
}
