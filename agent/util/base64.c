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
 * megabytes, so the loops are kept tight. Decoding: whole groups of four
 * alphabet characters are decoded at once, each character's bits looked
 * up already in place (one 256-entry table per position in the group), and
 * both decoders share that loop; comparing characters against the
 * alphabet's ranges ran at ~200 MB/s, one table of values at ~2.9 GB/s,
 * the tables in place at ~4 GB/s (bench/bench-base64, into a buffer that
 * is already mapped). Encoding looks up two characters at once (a table of
 * 4096 pairs): 6.3 GB/s of text instead of 2.4. */
#include "util/base64.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/macro.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t base64_encoded_len(size_t n)
{
        return (n + 2) / 3 * 4;
}

size_t base64_decoded_max(size_t len)
{
        /* A quantum of up to three characters may be pending from the
         * piece before. */
        return len / 4 * 3 + 3;
}

/* The character of each 6-bit value, as a constant expression. */
#define B64_CHAR(v)                                                                                \
        ((char)((v) < 26    ? 'A' + (v)                                                            \
                : (v) < 52  ? 'a' + (v)-26                                                         \
                : (v) < 62  ? '0' + (v)-52                                                         \
                : (v) == 62 ? '+'                                                                  \
                            : '/'))

/* The two characters of each 12-bit value: one lookup writes half a
 * group (twice the speed of a lookup per character). */
#define B64_PAIR(i)                                                                                \
        {                                                                                          \
                B64_CHAR((i) >> 6), B64_CHAR((i)&63)                                               \
        }
#define B64_PAIR4(i)  B64_PAIR(i), B64_PAIR((i) + 1), B64_PAIR((i) + 2), B64_PAIR((i) + 3)
#define B64_PAIR16(i) B64_PAIR4(i), B64_PAIR4((i) + 4), B64_PAIR4((i) + 8), B64_PAIR4((i) + 12)
#define B64_PAIR64(i)                                                                              \
        B64_PAIR16(i), B64_PAIR16((i) + 16), B64_PAIR16((i) + 32), B64_PAIR16((i) + 48)
#define B64_PAIR256(i)                                                                             \
        B64_PAIR64(i), B64_PAIR64((i) + 64), B64_PAIR64((i) + 128), B64_PAIR64((i) + 192)
#define B64_PAIR1024(i)                                                                            \
        B64_PAIR256(i), B64_PAIR256((i) + 256), B64_PAIR256((i) + 512), B64_PAIR256((i) + 768)
static const char b64_pairs[4096][2] = {B64_PAIR1024(0), B64_PAIR1024(1024), B64_PAIR1024(2048),
                                        B64_PAIR1024(3072)};

/* Eight bytes at p as a big-endian number. */
static inline uint64_t load_be64(const unsigned char *p)
{
        uint64_t w;

        memcpy(&w, p, sizeof(w));
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        w = __builtin_bswap64(w);
#endif
        return w;
}

size_t base64_encode(char *out, const void *data, size_t len)
{
        const unsigned char *p = data;
        char *o = out;
        size_t i = 0;

        /* Two groups (six bytes) per step, read as one eight-byte load. */
        for (; i + 8 <= len; i += 6, o += 8) {
                uint64_t w = load_be64(p + i);

                memcpy(o, b64_pairs[w >> 52], 2);
                memcpy(o + 2, b64_pairs[(w >> 40) & 4095], 2);
                memcpy(o + 4, b64_pairs[(w >> 28) & 4095], 2);
                memcpy(o + 6, b64_pairs[(w >> 16) & 4095], 2);
        }
        for (; i + 3 <= len; i += 3, o += 4) {
                uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];

                memcpy(o, b64_pairs[v >> 12], 2);
                memcpy(o + 2, b64_pairs[v & 4095], 2);
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

/* The value of each alphabet character already in its place in a group's
 * 24 bits, one table per position, and B64_BAD for every other byte: a
 * group is the OR of four lookups, and one test finds a stray byte. */
#define B64_BAD 0x80000000u
#define B64_DEC(c, shift)                                                                          \
        ((c) >= 'A' && (c) <= 'Z'   ? (uint32_t)((c) - 'A') << (shift)                             \
         : (c) >= 'a' && (c) <= 'z' ? (uint32_t)((c) - 'a' + 26) << (shift)                        \
         : (c) >= '0' && (c) <= '9' ? (uint32_t)((c) - '0' + 52) << (shift)                        \
         : (c) == '+'               ? 62u << (shift)                                               \
         : (c) == '/'               ? 63u << (shift)                                               \
                                    : B64_BAD)
#define B64_DEC4(c, s) B64_DEC(c, s), B64_DEC((c) + 1, s), B64_DEC((c) + 2, s), B64_DEC((c) + 3, s)
#define B64_DEC16(c, s)                                                                            \
        B64_DEC4(c, s), B64_DEC4((c) + 4, s), B64_DEC4((c) + 8, s), B64_DEC4((c) + 12, s)
#define B64_DEC64(c, s)                                                                            \
        B64_DEC16(c, s), B64_DEC16((c) + 16, s), B64_DEC16((c) + 32, s), B64_DEC16((c) + 48, s)
#define B64_DEC256(s)                                                                              \
        {                                                                                          \
                B64_DEC64(0, s), B64_DEC64(64, s), B64_DEC64(128, s), B64_DEC64(192, s)            \
        }
static const uint32_t b64_dec[4][256] = {B64_DEC256(18), B64_DEC256(12), B64_DEC256(6),
                                         B64_DEC256(0)};

static inline uint32_t group_value(const unsigned char *t)
{
        return b64_dec[0][t[0]] | b64_dec[1][t[1]] | b64_dec[2][t[2]] | b64_dec[3][t[3]];
}

/* Decode the whole groups of four alphabet characters at the start of
 * t[0..len) into out + *n, three bytes each, where out has room for cap
 * bytes; returns how many characters that took (a multiple of four),
 * stopping at the first group that holds anything else. */
static size_t decode_groups(const unsigned char *t, size_t len, unsigned char *out, size_t *n,
                            size_t cap)
{
        unsigned char *o = out + *n, *end = out + cap;
        size_t i = 0;

        /* Two groups per step, stored as one eight-byte write of which six
         * count, while the buffer has the room. */
        for (; i + 8 <= len && end - o >= 8; i += 8, o += 6) {
                uint32_t v = group_value(t + i), w = group_value(t + i + 4);
                uint64_t x;

                if ((v | w) & B64_BAD)
                        break;
                x = (uint64_t)v << 40 | (uint64_t)w << 16;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                x = __builtin_bswap64(x);
#endif
                memcpy(o, &x, sizeof(x));
        }
        for (; i + 4 <= len; i += 4, o += 3) {
                uint32_t v = group_value(t + i);

                if (v & B64_BAD)
                        break;
                o[0] = (unsigned char)(v >> 16);
                o[1] = (unsigned char)(v >> 8);
                o[2] = (unsigned char)v;
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

size_t base64_decoder_feed(Base64Decoder *d, const char *text, size_t len, void *out)
{
        const unsigned char *t = (const unsigned char *)text;
        size_t i = 0, n = 0, cap = base64_decoded_max(len);
        unsigned char *o = out;

        while (i < len && !d->done) {
                unsigned char ch;
                int v;

                if (d->quad_pos == 0) {
                        /* Whole groups from the start of a quantum: exactly
                         * what the rules below make of them, but faster. */
                        size_t k = decode_groups(t + i, len - i, o, &n, cap);

                        if (k > 0) {
                                i += k;
                                d->pads = 0;
                                continue;
                        }
                }
                ch = t[i++];
                if (ch == '=') {
                        /* A pad ends the data once it completes a quantum
                         * of two or three characters; one that cannot is
                         * skipped like any other stray byte. */
                        if (d->quad_pos >= 2 && d->quad_pos + ++d->pads >= 4)
                                d->done = true;
                        continue;
                }
                v = b64_value(ch);
                if (v < 0)
                        continue;
                d->pads = 0;
                switch (d->quad_pos) {
                case 0:
                        d->leftchar = (unsigned char)v;
                        d->quad_pos = 1;
                        break;
                case 1:
                        o[n++] = (unsigned char)(d->leftchar << 2 | v >> 4);
                        d->leftchar = (unsigned char)(v & 0x0f);
                        d->quad_pos = 2;
                        break;
                case 2:
                        o[n++] = (unsigned char)(d->leftchar << 4 | v >> 2);
                        d->leftchar = (unsigned char)(v & 0x03);
                        d->quad_pos = 3;
                        break;
                default:
                        o[n++] = (unsigned char)(d->leftchar << 6 | v);
                        d->leftchar = 0;
                        d->quad_pos = 0;
                        break;
                }
        }
        d->n += n;
        return n;
}

int base64_decoder_finish(const Base64Decoder *d, char **ret_error)
{
        if (d->done || d->quad_pos == 0)
                return 0;
        return invalid_error(d->quad_pos, d->n, ret_error);
}

int base64_decode(const char *text, size_t len, char **ret, size_t *ret_len, char **ret_error)
{
        _cleanup_free_ unsigned char *out = NULL;
        Base64Decoder d = BASE64_DECODER_INIT;
        size_t n;
        int r;

        out = malloc(base64_decoded_max(len) + 1);
        if (!out)
                return -ENOMEM;
        n = base64_decoder_feed(&d, text, len, out);
        r = base64_decoder_finish(&d, ret_error);
        if (r != 0)
                return r;
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
        i = decode_groups(t, len, out, &n, len / 4 * 3 + 1);
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
