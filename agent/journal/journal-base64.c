/* Base64 as Python's base64.b64encode writes it (the standard alphabet,
 * '=' padding, no newlines), and its strict inverse. A plan.json carries a
 * whole message body this way, up to tens of megabytes, so both loops are
 * kept tight: no per-character library calls. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "journal/journal-internal.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t journal_b64_len(size_t n)
{
        return (n + 2) / 3 * 4;
}

size_t journal_b64_encode(char *out, const unsigned char *p, size_t len)
{
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

static int value(unsigned char c)
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

int journal_b64_decode(const char *s, size_t len, unsigned char **ret, size_t *ret_len)
{
        _cleanup_free_ unsigned char *out = NULL;
        size_t n = 0;

        if (len % 4 != 0)
                return -EINVAL;
        out = malloc(len / 4 * 3 + 1);
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < len; i += 4) {
                const unsigned char *q = (const unsigned char *)s + i;
                int a = value(q[0]), b = value(q[1]), c = value(q[2]), d = value(q[3]);

                if (a < 0 || b < 0)
                        return -EINVAL;
                out[n++] = (unsigned char)(a << 2 | b >> 4);
                if (c < 0 || d < 0) {
                        /* Padding: only in the last group, as "x=" or "==". */
                        if (i + 4 != len || q[3] != '=' || (c < 0 && q[2] != '='))
                                return -EINVAL;
                        if (c >= 0)
                                out[n++] = (unsigned char)(b << 4 | c >> 2);
                        break;
                }
                out[n++] = (unsigned char)(b << 4 | c >> 2);
                out[n++] = (unsigned char)(c << 6 | d);
        }
        out[n] = '\0';
        *ret = TAKE_PTR(out);
        *ret_len = n;
        return 0;
}
