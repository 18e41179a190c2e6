/* Fresh random identifiers spelled as Python's uuid.uuid4().hex, and bytes
 * spelled in lowercase hex. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Write the 2n lowercase hex digits of bytes[0..n) and a NUL into out. */
void hex_encode(const void *bytes, size_t n, char *out);

/* Whether the n bytes at s are all lowercase hex digits, as
 * hex_encode() writes them. */
bool hex_is_lower(const char *s, size_t n);

/* Write 32 lowercase hex digits and a NUL into buf: a version-4 UUID from
 * the kernel's random source. Returns 0 or -errno. */
int hexid_new(char buf[static 33]);
