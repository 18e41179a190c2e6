/* Reading whole files with a size cap, for plans, config files and the
 * journal's files, and writing all of a buffer. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* Read the file at path into a new NUL-terminated buffer (*ret, *ret_len).
 * Returns 0, -EFBIG when the file is larger than max bytes, or -errno. */
int file_read_all(const char *path, size_t max, char **ret, size_t *ret_len);

/* The same for dirfd/path (openat() rules), for regular files only:
 * anything else is -EINVAL, and a file whose size is over max is refused
 * before it is read. The buffer is sized from the file's size up front. */
int file_read_regular_at(int dirfd, const char *path, size_t max, char **ret, size_t *ret_len);

/* The same for a descriptor the caller opened (with O_NOFOLLOW, say, or
 * to read its attributes too), read from where it is. */
int file_read_regular_fd(int fd, size_t max, char **ret, size_t *ret_len);

/* Read len bytes of fd at off into buf, through short reads and EINTR.
 * Returns the bytes read (fewer than len only at the end of the file) or
 * -errno. */
ssize_t file_pread_full(int fd, void *buf, size_t len, off_t off);

/* Write len bytes of data to fd, through short writes and EINTR.
 * Returns 0 or -errno. */
int file_write_all(int fd, const void *data, size_t len);
