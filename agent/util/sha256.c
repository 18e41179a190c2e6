/* SHA-256 in hex (see sha256.h).
 *
 * The one-call SHA-256 of OpenSSL 3 (EVP_Digest, SHA256) fetches the
 * algorithm from a provider, and the first fetch loads OpenSSL's whole
 * provider machinery: +2.2 MiB of resident memory in a test program, kept
 * for the agent's life. The low-level SHA256_* calls compute the same
 * digest without it (+0.3 MiB). They are deprecated in OpenSSL 3 but
 * present; if they go, EVP_Digest is the replacement. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include "util/sha256.h"

#include <errno.h>
#include <openssl/sha.h>

#include "util/hexid.h"

int sha256_hex(const void *a, size_t a_len, const void *b, size_t b_len, char hex[static 65])
{
        unsigned char md[SHA256_DIGEST_LENGTH];
        SHA256_CTX ctx;

        if (SHA256_Init(&ctx) != 1 || SHA256_Update(&ctx, a, a_len) != 1 ||
            (b_len > 0 && SHA256_Update(&ctx, b, b_len) != 1) || SHA256_Final(md, &ctx) != 1)
                return -ENOMEM;
        hex_encode(md, sizeof(md), hex);
        return 0;
}
