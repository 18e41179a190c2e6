/* Reading whole files with a size cap, for plans and config files. */
#pragma once

#include <stddef.h>

/* Read the file at path into a new NUL-terminated buffer (*ret, *ret_len).
 * Returns 0, -EFBIG when the file is larger than max bytes, or -errno. */
int file_read_all(const char *path, size_t max, char **ret, size_t *ret_len);
