/* uuid4().hex-compatible identifiers (see hexid.h). */
#include "util/hexid.h"

#include <errno.h>
#include <stdint.h>
#include <sys/random.h>

void hex_encode(const void *bytes, size_t n, char *out)
{
        static const char digits[] = "0123456789abcdef";
        const uint8_t *b = bytes;

        for (size_t i = 0; i < n; i++) {
                out[2 * i] = digits[b[i] >> 4];
                out[2 * i + 1] = digits[b[i] & 0xf];
        }
        out[2 * n] = '\0';
}

bool hex_is_lower(const char *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        return true;
}

int hexid_new(char buf[static 33])
{
        uint8_t b[16];
        size_t got = 0;

        while (got < sizeof(b)) {
                ssize_t n = getrandom(b + got, sizeof(b) - got, 0);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                got += (size_t)n;
        }
        /* RFC 4122 version 4, variant 10xx, as uuid.uuid4() sets them. */
        b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);
        b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
        hex_encode(b, sizeof(b), buf);
        return 0;
}
