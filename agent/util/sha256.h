/* SHA-256 in hex, for names and digests the agent computes per plan. */
#pragma once

#include <stddef.h>

/* The SHA-256 of a[0..a_len) followed by b[0..b_len) (b may be NULL when
 * b_len is 0), as 64 lowercase hex digits and a NUL. Returns 0 or -ENOMEM. */
int sha256_hex(const void *a, size_t a_len, const void *b, size_t b_len, char hex[static 65]);
