/* Base64 as CPython 3.11 writes and reads it (see base64.h).
 *
 * base64.b64decode(text) with validate=False is binascii.a2b_base64(text,
 * strict_mode=False), and that decoder is lenient in a precise way: every
 * byte outside the alphabet (newlines, spaces, anything non-ASCII) is
 * skipped; '=' is skipped too unless it completes a quantum that has at
 * least two data characters, and then decoding stops, ignoring whatever
 * follows; a quantum left unfinished at the end is an error. Engine bodies
 * are one line ending in "\n", but plans written by hand may wrap lines, so
 * this is reproduced rule for rule. OpenSSL's decoders are stricter
 * (EVP_DecodeUpdate refuses stray characters, EVP_DecodeBlock does not skip
 * anything), which would refuse bodies the reference accepts, so the
 * decoder is our own.
 *
 * A plan.json carries a whole message body this way, up to tens of
 * megabytes, so the loops are kept tight: each character's value comes
 * from a 256-entry table (comparing it against the alphabet's ranges ran at
 * ~200 MB/s, the table at over 2 GB/s), and whole groups of four alphabet
 * characters are decoded at once; both decoders share that loop. */
#include "util/base64.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/macro.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t base64_encoded_len(size_t n)
{
        return (n + 2) / 3 * 4;
}

size_t base64_encode(char *out, const void *data, size_t len)
{
        const unsigned char *p = data;
        char *o = out;
        size_t i = 0;

        for (; i + 3 <= len; i += 3) {
                uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
                *o++ = alphabet[v >> 18];
                *o++ = alphabet[(v >> 12) & 63];
                *o++ = alphabet[(v >> 6) & 63];
                *o++ = alphabet[v & 63];
        }
        if (i < len) {
                uint32_t v = (uint32_t)p[i] << 16;
                if (i + 1 < len)
                        v |= (uint32_t)p[i + 1] << 8;
                *o++ = alphabet[v >> 18];
                *o++ = alphabet[(v >> 12) & 63];
                *o++ = i + 1 < len ? alphabet[(v >> 6) & 63] : '=';
                *o++ = '=';
        }
        return (size_t)(o - out);
}

int base64_append(StrBuf *out, const void *data, size_t len)
{
        /* A multiple of three, so that only the last chunk is padded. */
        enum { CHUNK = 768 };
        const unsigned char *p = data;
        char text[CHUNK / 3 * 4];

        while (len > 0) {
                size_t n = len < CHUNK ? len : CHUNK;
                int r = strbuf_append(out, text, base64_encode(text, p, n));

                if (r < 0)
                        return r;
                p += n;
                len -= n;
        }
        return 0;
}

/* The value of each byte as a Base64 character: 0-63 for the alphabet, X
 * (any value with bit 7 set) for every other byte, '=' included. */
#define X 0xff
static const uint8_t b64_values[256] = {
        // clang-format off
         X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,
         X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,
         X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X, 62,  X,  X,  X, 63,
        52, 53, 54, 55, 56, 57, 58, 59, 60, 61,  X,  X,  X,  X,  X,  X,
         X,  0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14,
        15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25,  X,  X,  X,  X,  X,
         X, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40,
        41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51,  X,  X,  X,  X,  X,
         X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,
         X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,
         X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,
         X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,
         X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,
         X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,
         X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,
         X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,
        // clang-format on
};
#undef X

#define B64_INVALID 0x80

/* The value of a base64 alphabet character, or -1. */
static inline int b64_value(unsigned char c)
{
        uint8_t v = b64_values[c];

        return v & B64_INVALID ? -1 : v;
}

/* Decode the whole groups of four alphabet characters at the start of
 * t[0..len) into out + *n, three bytes each; returns how many characters
 * that took (a multiple of four), stopping at the first group that holds
 * anything else. */
static size_t decode_groups(const unsigned char *t, size_t len, unsigned char *out, size_t *n)
{
        unsigned char *o = out + *n;
        size_t i = 0;

        for (; i + 4 <= len; i += 4) {
                uint32_t a = b64_values[t[i]], b = b64_values[t[i + 1]];
                uint32_t c = b64_values[t[i + 2]], d = b64_values[t[i + 3]];
                uint32_t v;

                /* One test for the four: only a byte outside the alphabet
                 * has a value with bit 7 set. */
                if ((a | b | c | d) & B64_INVALID)
                        break;
                v = a << 18 | b << 12 | c << 6 | d;
                o[0] = (unsigned char)(v >> 16);
                o[1] = (unsigned char)(v >> 8);
                o[2] = (unsigned char)v;
                o += 3;
        }
        *n = (size_t)(o - out);
        return i;
}

static int invalid_error(int quad_pos, size_t n, char **ret_error)
{
        char *msg;
        int r;

        if (quad_pos == 1)
                /* binascii counts the data characters it has seen: three
                 * per complete output triple, plus this one. */
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

int base64_decode(const char *text, size_t len, char **ret, size_t *ret_len, char **ret_error)
{
        const unsigned char *t = (const unsigned char *)text;
        _cleanup_free_ unsigned char *out = NULL;
        unsigned char leftchar = 0;
        size_t i = 0, n = 0;
        int quad_pos = 0, pads = 0;

        out = malloc(len / 4 * 3 + 4);
        if (!out)
                return -ENOMEM;

        while (i < len) {
                unsigned char ch;
                int v;

                if (quad_pos == 0) {
                        /* Whole groups from the start of a quantum: exactly
                         * what the rules below make of them, but faster. */
                        size_t k = decode_groups(t + i, len - i, out, &n);

                        if (k > 0) {
                                i += k;
                                pads = 0;
                                continue;
                        }
                }
                ch = t[i++];
                if (ch == '=') {
                        /* A pad ends the data once it completes a quantum
                         * of two or three characters; one that cannot is
                         * skipped like any other stray byte. */
                        if (quad_pos >= 2 && quad_pos + ++pads >= 4)
                                goto done;
                        continue;
                }
                v = b64_value(ch);
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
        if (quad_pos != 0)
                return invalid_error(quad_pos, n, ret_error);

done:
        out[n] = 0;
        *ret = (char *)TAKE_PTR(out);
        *ret_len = n;
        return 0;
}

int base64_decode_canonical(const char *text, size_t len, char **ret, size_t *ret_len)
{
        const unsigned char *t = (const unsigned char *)text;
        _cleanup_free_ unsigned char *out = NULL;
        size_t i, n = 0;

        if (len % 4 != 0)
                return -EINVAL;
        out = malloc(len / 4 * 3 + 1);
        if (!out)
                return -ENOMEM;
        i = decode_groups(t, len, out, &n);
        if (i < len) {
                /* Padding, only in the last group: "xx==" or "xxx=". The
                 * bits it leaves over are not checked. */
                int a = b64_value(t[i]), b = b64_value(t[i + 1]), c = b64_value(t[i + 2]);

                if (i + 4 != len || a < 0 || b < 0 || t[i + 3] != '=' || (c < 0 && t[i + 2] != '='))
                        return -EINVAL;
                out[n++] = (unsigned char)(a << 2 | b >> 4);
                if (c >= 0)
                        out[n++] = (unsigned char)(b << 4 | c >> 2);
        }
        out[n] = 0;
        *ret = (char *)TAKE_PTR(out);
        *ret_len = n;
        return 0;
}
