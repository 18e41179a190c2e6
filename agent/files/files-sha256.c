/* The optional Sha256 key of a file entry (our extension; the reference has
 * none): the SHA-256 of an inline file's decoded content or of an HTTP
 * download must equal it.
 *
 * OpenSSL's EVP digest API: EVP_MD_CTX_new() must be paired with
 * EVP_MD_CTX_free() on every path; EVP_sha256() returns a static object
 * that is not freed. */
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <string.h>
#include <unistd.h>

#include "files/files-internal.h"
#include "util/hexid.h"

int files_sha256_hex(const void *data, size_t len, char hex[static FILES_SHA256_HEX + 1])
{
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned n = 0;

        if (EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) != 1 || n * 2 != FILES_SHA256_HEX)
                return -EIO;
        hex_encode(md, n, hex);
        return 0;
}

static void md_ctx_freep(EVP_MD_CTX **ctx)
{
        EVP_MD_CTX_free(*ctx);
}

int files_sha256_file_at(int dfd, const char *name, char hex[static FILES_SHA256_HEX + 1])
{
        _cleanup_(md_ctx_freep) EVP_MD_CTX *ctx = NULL;
        _cleanup_close_ int fd = -1;
        unsigned char md[EVP_MAX_MD_SIZE];
        char buf[65536];
        unsigned n = 0;

        fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        ctx = EVP_MD_CTX_new();
        if (!ctx)
                return -ENOMEM;
        if (EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1)
                return -EIO;
        for (;;) {
                ssize_t got = read(fd, buf, sizeof(buf));

                if (got < 0 && errno == EINTR)
                        continue;
                if (got < 0)
                        return -errno;
                if (got == 0)
                        break;
                if (EVP_DigestUpdate(ctx, buf, (size_t)got) != 1)
                        return -EIO;
        }
        if (EVP_DigestFinal_ex(ctx, md, &n) != 1 || n * 2 != FILES_SHA256_HEX)
                return -EIO;
        hex_encode(md, n, hex);
        return 0;
}

int files_sha256_wanted(const json_t *file_def, const char *file_id,
                        char want[static FILES_SHA256_HEX + 1], PlanError *err)
{
        const json_t *v = json_object_get(file_def, "Sha256");
        const char *s;

        want[0] = 0;
        if (!v)
                return 0;
        s = json_string_value(v);
        if (!s || json_string_length(v) != FILES_SHA256_HEX ||
            strspn(s, "0123456789abcdefABCDEF") != FILES_SHA256_HEX)
                return files_fail(err, PLAN_CODE_EXCEPTION,
                                  "Invalid Sha256 in file %s: expected 64 hexadecimal digits",
                                  file_id);
        for (size_t i = 0; i < FILES_SHA256_HEX; i++)
                want[i] = (char)(s[i] >= 'A' && s[i] <= 'F' ? s[i] - 'A' + 'a' : s[i]);
        want[FILES_SHA256_HEX] = 0;
        return 0;
}

int files_sha256_verify(const char *file_id, const char *want, const char *got, PlanError *err)
{
        if (streq(want, got))
                return 0;
        return files_fail(err, PLAN_CODE_EXCEPTION,
                          "Checksum mismatch for file %s: expected %s, got %s", file_id, want, got);
}
