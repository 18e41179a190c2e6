/* uuid4().hex-compatible identifiers (see hexid.h). */
#include "util/hexid.h"

#include <errno.h>
#include <stdint.h>
#include <sys/random.h>

int hexid_new(char buf[static 33])
{
        static const char hex[] = "0123456789abcdef";
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
        for (int i = 0; i < 16; i++) {
                buf[2 * i] = hex[b[i] >> 4];
                buf[2 * i + 1] = hex[b[i] & 0xf];
        }
        buf[32] = '\0';
        return 0;
}
