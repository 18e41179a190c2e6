/* Strict UTF-8 decoding: no overlong forms, no surrogates, nothing above
 * U+10FFFF. Used wherever bytes from the wire become text. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Decode one code point from s[0..len). Returns the number of bytes used
 * (1-4) and writes *ret_cp, or -1 for an invalid or truncated sequence. */
int utf8_decode(const char *s, size_t len, uint32_t *ret_cp);

/* True when all of s[0..len) is valid UTF-8. On false, *ret_offset (if not
 * NULL) is the offset of the first bad byte. */
bool utf8_valid(const char *s, size_t len, size_t *ret_offset);

/* Number of code points in valid UTF-8 text. */
size_t utf8_length(const char *s, size_t len);

/* Encode cp (<= 0x10FFFF) into out; returns bytes written (1-4). */
int utf8_encode(uint32_t cp, char out[static 4]);

/* s[0..len) as valid UTF-8 in *ret (malloc'ed, NUL-terminated, length in
 * *ret_len): each byte that does not start a valid sequence becomes
 * U+FFFD, as Python's errors="replace" does for output of any encoding.
 * Returns 0 or -ENOMEM. */
int utf8_sanitize(const char *s, size_t len, char **ret, size_t *ret_len);

/* How many bytes at the end of s[0..len) are the start of a sequence that
 * is not complete yet (0-3): text cut there may be continued later. */
size_t utf8_incomplete_tail(const char *s, size_t len);
