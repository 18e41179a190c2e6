/* Whole-file reads with a size cap (see fileio.h). */
#include "util/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/macro.h"

int file_read_all(const char *path, size_t max, char **ret, size_t *ret_len)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, cap = 0;

        if (fd < 0)
                return -errno;
        for (;;) {
                ssize_t n;

                if (len + 1 >= cap) {
                        size_t ncap = cap ? cap * 2 : 4096;
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
        if (!buf && !(buf = malloc(1)))
                return -ENOMEM;
        buf[len] = '\0';
        *ret = TAKE_PTR(buf);
        if (ret_len)
                *ret_len = len;
        return 0;
}
