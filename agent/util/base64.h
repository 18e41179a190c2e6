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

#include <stdbool.h>
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

/* base64_decode() piece by piece, for text too large to decode into one
 * buffer: feed each piece in order, then finish. */
typedef struct Base64Decoder {
        unsigned char leftchar; /* the bits of the quantum not yet written */
        int quad_pos;           /* alphabet characters of the quantum seen, 0-3 */
        int pads;               /* '=' seen since the last alphabet character */
        bool done;              /* a pad ended the data: the rest is ignored */
        size_t n;               /* bytes written so far */
} Base64Decoder;

#define BASE64_DECODER_INIT ((Base64Decoder){0})

/* The most bytes base64_decoder_feed() writes for a piece of len bytes. */
size_t base64_decoded_max(size_t len);

/* Decode the next piece text[0..len) into out, which has room for
 * base64_decoded_max(len) bytes; returns how many bytes it wrote. Pieces
 * may be cut anywhere. */
size_t base64_decoder_feed(Base64Decoder *d, const char *text, size_t len, void *out);

/* After the last piece: 0 when the whole text was valid, else 1 with
 * *ret_error as base64_decode() words it (owned), or -ENOMEM. */
int base64_decoder_finish(const Base64Decoder *d, char **ret_error);

/* Decode text that is exactly what b64encode writes: groups of four
 * alphabet characters, the last of which may end in "=" or "==" (the bits
 * that padding leaves over are not checked). Returns 0 with *ret (owned,
 * NUL-terminated) and *ret_len, -EINVAL for any other text, or -ENOMEM. */
int base64_decode_canonical(const char *text, size_t len, char **ret, size_t *ret_len);
