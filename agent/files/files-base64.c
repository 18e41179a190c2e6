/* Base64 bodies, decoded as the reference decodes them.
 *
 * The reference calls base64.b64decode(body) with validate=False, which is
 * binascii.a2b_base64(body, strict_mode=False) in CPython 3.11. That decoder
 * is lenient in a precise way: every byte outside the alphabet (newlines,
 * spaces, anything non-ASCII) is skipped; '=' is skipped too unless it
 * completes a quantum that has at least two data characters, and then
 * decoding stops, ignoring whatever follows; a quantum left unfinished at
 * the end is an error. Engine bodies are one line ending in "\n", but plans
 * written by hand may wrap lines, so this is reproduced rule for rule.
 * OpenSSL's decoders are stricter (EVP_DecodeUpdate refuses stray
 * characters, EVP_DecodeBlock does not skip anything), which would refuse
 * bodies the reference accepts, so the decoder is our own. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "files/files-internal.h"

/* The value of a base64 alphabet character, or -1. */
static int b64_value(unsigned char c)
{
        if (c >= 'A' && c <= 'Z')
                return c - 'A';
        if (c >= 'a' && c <= 'z')
                return c - 'a' + 26;
        if (c >= '0' && c <= '9')
                return c - '0' + 52;
        if (c == '+')
                return 62;
        if (c == '/')
                return 63;
        return -1;
}

int files_b64decode(const char *text, size_t len, char **ret, size_t *ret_len, char **ret_error)
{
        _cleanup_free_ unsigned char *out = NULL;
        unsigned char leftchar = 0;
        size_t n = 0;
        int quad_pos = 0, pads = 0;

        out = malloc(len / 4 * 3 + 4);
        if (!out)
                return -ENOMEM;

        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)text[i];
                int v;

                if (c == '=') {
                        /* A pad ends the data once it completes a quantum
                         * of two or three characters; one that cannot is
                         * skipped like any other stray byte. */
                        if (quad_pos >= 2 && quad_pos + ++pads >= 4)
                                goto done;
                        continue;
                }
                v = b64_value(c);
                if (v < 0)
                        continue;
                pads = 0;
                switch (quad_pos) {
                case 0:
                        leftchar = (unsigned char)v;
                        quad_pos = 1;
                        break;
                case 1:
                        out[n++] = (unsigned char)(leftchar << 2 | v >> 4);
                        leftchar = (unsigned char)(v & 0x0f);
                        quad_pos = 2;
                        break;
                case 2:
                        out[n++] = (unsigned char)(leftchar << 4 | v >> 2);
                        leftchar = (unsigned char)(v & 0x03);
                        quad_pos = 3;
                        break;
                default:
                        out[n++] = (unsigned char)(leftchar << 6 | v);
                        leftchar = 0;
                        quad_pos = 0;
                        break;
                }
        }

        if (quad_pos != 0) {
                char *msg;
                int r;

                if (quad_pos == 1)
                        /* binascii counts the data characters it has seen:
                         * three per complete output triple, plus this one. */
                        r = asprintf(&msg,
                                     "Invalid base64-encoded string: number of data characters "
                                     "(%zu) cannot be 1 more than a multiple of 4",
                                     n / 3 * 4 + 1);
                else
                        r = asprintf(&msg, "Incorrect padding");
                if (r < 0)
                        return -ENOMEM;
                *ret_error = msg;
                return 1;
        }

done:
        out[n] = 0;
        *ret = (char *)TAKE_PTR(out);
        *ret_len = n;
        return 0;
}
