/* RSA-SHA256 signatures with OpenSSL (see send-sign.h).
 *
 * OpenSSL's memory rule, once: every object made here (BIO, EVP_PKEY,
 * EVP_MD_CTX) is freed by its own _free on every path; the EVP_PKEY_CTX
 * that EVP_DigestSignInit hands out belongs to the EVP_MD_CTX. OpenSSL's
 * error queue is drained before returning so that nothing leaks into a
 * later, unrelated failure. */
#include "send/send-sign.h"

#include <errno.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/macro.h"
#include "util/strbuf.h"

static int sign_fail(char **ret_error, const char *fmt, ...) _printf_(2, 3);
static int sign_fail(char **ret_error, const char *fmt, ...)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        unsigned long e = ERR_peek_last_error();
        char detail[256];
        va_list ap;
        int r;

        ERR_clear_error();
        if (!ret_error)
                return SEND_SIGN_INVALID;
        va_start(ap, fmt);
        r = strbuf_vprintf(&b, fmt, ap);
        va_end(ap);
        if (r >= 0 && e != 0) {
                ERR_error_string_n(e, detail, sizeof(detail));
                r = strbuf_printf(&b, " (%s)", detail);
        }
        if (r < 0)
                return r;
        free(*ret_error);
        *ret_error = NULL;
        r = strbuf_steal(&b, ret_error);
        return r < 0 ? r : SEND_SIGN_INVALID;
}

/* The engine loads its key with password=None: an encrypted key is an
 * error, never a prompt on the terminal. */
static int no_passphrase(char *buf, int size, int rwflag, void *userdata)
{
        return -1;
}

static void bio_freep(BIO **p)
{
        BIO_free(*p);
}

static void pkey_freep(EVP_PKEY **p)
{
        EVP_PKEY_free(*p);
}

static void md_ctx_freep(EVP_MD_CTX **p)
{
        EVP_MD_CTX_free(*p);
}

int send_sign(const char *key_path, const char *queue, const void *body, size_t len,
              unsigned char **ret_sig, size_t *ret_len, char **ret_error)
{
        _cleanup_(bio_freep) BIO *bio = NULL;
        _cleanup_(pkey_freep) EVP_PKEY *key = NULL;
        _cleanup_(md_ctx_freep) EVP_MD_CTX *ctx = NULL;
        _cleanup_free_ unsigned char *sig = NULL;
        EVP_PKEY_CTX *pctx = NULL;
        size_t sig_len = 0;

        bio = BIO_new_file(key_path, "r");
        if (!bio)
                return sign_fail(ret_error, "cannot open the signing key %s: %s", key_path,
                                 strerror(errno));
        key = PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL);
        if (!key)
                return sign_fail(ret_error, "%s is not an unencrypted PEM private key", key_path);
        if (EVP_PKEY_get_base_id(key) != EVP_PKEY_RSA)
                return sign_fail(ret_error, "%s is not an RSA key", key_path);

        ctx = EVP_MD_CTX_new();
        if (!ctx) {
                ERR_clear_error();
                return -ENOMEM;
        }
        if (EVP_DigestSignInit(ctx, &pctx, EVP_sha256(), NULL, key) != 1 ||
            EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING) != 1 ||
            EVP_DigestSignUpdate(ctx, queue, strlen(queue)) != 1 ||
            EVP_DigestSignUpdate(ctx, body, len) != 1 ||
            EVP_DigestSignFinal(ctx, NULL, &sig_len) != 1)
                return sign_fail(ret_error, "cannot sign with %s", key_path);
        sig = malloc(sig_len);
        if (!sig) {
                ERR_clear_error();
                return -ENOMEM;
        }
        if (EVP_DigestSignFinal(ctx, sig, &sig_len) != 1)
                return sign_fail(ret_error, "cannot sign with %s", key_path);
        *ret_sig = TAKE_PTR(sig);
        *ret_len = sig_len;
        return 0;
}
