/* Base64 with the standard alphabet and '=' padding, as CPython 3.11's
 * base64 module writes and reads it.
 *
 * The reference agent meets Base64 in two places: inline file bodies
 * (files_manager, base64.b64decode) and the journal's plan.json (Data and
 * Signature, base64.b64encode on the way in). Encoding is b64encode's:
 * no line breaks. Decoding comes in two strengths: base64_decode() is
 * b64decode(text) rule for rule, lenient in CPython's precise way, for
 * bodies that may be written by hand; base64_decode_canonical() accepts
 * only what b64encode writes, for files the agents write themselves. */
#pragma once

#include <stddef.h>

#include "util/strbuf.h"

/* Length of the Base64 text of n bytes. */
size_t base64_encoded_len(size_t n);

/* Write the Base64 text of data[0..len) to out (base64_encoded_len(len)
 * bytes, no NUL); returns the length written. */
size_t base64_encode(char *out, const void *data, size_t len);

/* Append the Base64 text of data[0..len) to out. Returns 0, -ENOMEM or
 * -E2BIG (the buffer's limit). */
int base64_append(StrBuf *out, const void *data, size_t len);

/* Decode text as Python 3.11's base64.b64decode(text) (validate=False)
 * does: bytes outside the alphabet are skipped, decoding stops at the
 * padding that completes a quantum, and an unfinished quantum is an error.
 * Returns 0 with *ret (owned, NUL-terminated for convenience) and *ret_len;
 * 1 when the text is not valid, with *ret_error set to binascii.Error's text
 * ("Incorrect padding", "Invalid base64-encoded string: number of data
 * characters (5) cannot be 1 more than a multiple of 4"), owned; or
 * -ENOMEM. */
int base64_decode(const char *text, size_t len, char **ret, size_t *ret_len, char **ret_error);

/* Decode text that is exactly what b64encode writes: groups of four
 * alphabet characters, the last of which may end in "=" or "==" (the bits
 * that padding leaves over are not checked). Returns 0 with *ret (owned,
 * NUL-terminated) and *ret_len, -EINVAL for any other text, or -ENOMEM. */
int base64_decode_canonical(const char *text, size_t len, char **ret, size_t *ret_len);
