/* Plan signatures with OpenSSL 3 (see signature.h).
 *
 * OpenSSL's memory rules, once: every EVP_PKEY, EVP_MD_CTX and
 * OSSL_DECODER_CTX made here is freed here; the EVP_PKEY_CTX that
 * EVP_DigestVerifyInit_ex hands back belongs to its EVP_MD_CTX. */
#include <errno.h>
#include <openssl/core_names.h>
#include <openssl/decoder.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "signature/signature.h"
#include "util/strbuf.h"

struct SignatureKey {
        EVP_PKEY *pkey;
        unsigned bits;
};

static int invalid(char **ret_error_text, const char *fmt, ...) _printf_(2, 3);
static int invalid(char **ret_error_text, const char *fmt, ...)
{
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vasprintf(ret_error_text, fmt, ap);
        va_end(ap);
        return n < 0 ? -ENOMEM : SIGNATURE_KEY_INVALID;
}

static bool is_blank(char c)
{
        return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* The PEM text with every line stripped of surrounding whitespace and
 * empty lines dropped, each line ending in '\n': what OpenSSL's PEM reader
 * expects, whatever indentation the config file carried. */
static int pem_normalize(const char *pem, StrBuf *out)
{
        for (const char *p = pem; *p;) {
                const char *end = strchr(p, '\n');
                const char *next = end ? end + 1 : p + strlen(p);
                int r;

                if (!end)
                        end = next;
                while (p < end && is_blank(*p))
                        p++;
                while (end > p && is_blank(end[-1]))
                        end--;
                if (end > p) {
                        r = strbuf_append(out, p, (size_t)(end - p));
                        if (r < 0)
                                return r;
                        r = strbuf_putc(out, '\n');
                        if (r < 0)
                                return r;
                }
                p = next;
        }
        return 0;
}

/* Check the block's frame: one "-----BEGIN <label>-----" line first, the
 * matching END line last, and a label that names a public key. */
static int pem_check(const char *text, size_t len, char **ret_error_text)
{
        static const char begin[] = "-----BEGIN ";
        static const char dashes[] = "-----\n";
        const char *eol, *label, *end_line;
        size_t label_len;
        char want_end[64];

        if (len == 0)
                return invalid(ret_error_text, "engine_key is empty");
        if (strncmp(text, begin, strlen(begin)) != 0)
                return invalid(ret_error_text,
                               "engine_key is not a PEM public key: it must start with a "
                               "\"-----BEGIN RSA PUBLIC KEY-----\" or \"-----BEGIN PUBLIC "
                               "KEY-----\" line");
        label = text + strlen(begin);
        eol = strchr(label, '\n');
        if (eol - label < 5 || strncmp(eol - 5, dashes, 5) != 0)
                return invalid(ret_error_text, "engine_key has a malformed -----BEGIN line");
        label_len = (size_t)(eol - 5 - label);
        if (label_len >= 11 && strncmp(label + label_len - 11, "PRIVATE KEY", 11) == 0)
                return invalid(ret_error_text,
                               "engine_key holds a private key; it must be the engine's public "
                               "key (\"-----BEGIN RSA PUBLIC KEY-----\")");
        if (!((label_len == 14 && strncmp(label, "RSA PUBLIC KEY", 14) == 0) ||
              (label_len == 10 && strncmp(label, "PUBLIC KEY", 10) == 0)))
                return invalid(ret_error_text,
                               "engine_key is a PEM block of type \"%.*s\", not \"RSA PUBLIC "
                               "KEY\" or \"PUBLIC KEY\"",
                               (int)(label_len > 40 ? 40 : label_len), label);
        snprintf(want_end, sizeof(want_end), "-----END %.*s-----\n", (int)label_len, label);
        end_line = strstr(eol, want_end);
        if (!end_line)
                return invalid(ret_error_text, "engine_key has no \"-----END %.*s-----\" line",
                               (int)label_len, label);
        if (end_line + strlen(want_end) != text + len)
                return invalid(ret_error_text, "engine_key has text after its -----END line");
        return 0;
}

static int key_decode(const char *text, size_t len, EVP_PKEY **ret, char **ret_error_text)
{
        const unsigned char *data = (const unsigned char *)text;
        OSSL_DECODER_CTX *dctx;
        EVP_PKEY *pkey = NULL;
        int ok;

        dctx = OSSL_DECODER_CTX_new_for_pkey(&pkey, "PEM", NULL, NULL, EVP_PKEY_PUBLIC_KEY, NULL,
                                             NULL);
        if (!dctx)
                return -ENOMEM;
        ok = OSSL_DECODER_from_data(dctx, &data, &len);
        OSSL_DECODER_CTX_free(dctx);
        if (!ok || !pkey) {
                EVP_PKEY_free(pkey);
                return invalid(ret_error_text,
                               "engine_key cannot be decoded as a public key (damaged Base64 "
                               "or key data)");
        }
        if (!EVP_PKEY_is_a(pkey, "RSA")) {
                EVP_PKEY_free(pkey);
                return invalid(ret_error_text,
                               "engine_key is not an RSA key; the engine signs with RSA");
        }
        *ret = pkey;
        return 0;
}

int signature_key_new(const char *pem, SignatureKey **ret, char **ret_error_text)
{
        _cleanup_strbuf_ StrBuf text = STRBUF_INIT;
        SignatureKey *k;
        EVP_PKEY *pkey = NULL;
        int bits, r;

        r = pem_normalize(pem ? pem : "", &text);
        if (r < 0)
                return r;
        r = pem_check(text.data ? text.data : "", text.len, ret_error_text);
        if (r != 0)
                return r;
        r = key_decode(text.data, text.len, &pkey, ret_error_text);
        ERR_clear_error();
        if (r != 0)
                return r;
        bits = EVP_PKEY_get_bits(pkey);
        if (bits < SIGNATURE_MIN_BITS) {
                EVP_PKEY_free(pkey);
                return invalid(ret_error_text,
                               "engine_key is a %d-bit RSA key; at least %d bits are required",
                               bits, SIGNATURE_MIN_BITS);
        }
        k = malloc(sizeof(*k));
        if (!k) {
                EVP_PKEY_free(pkey);
                return -ENOMEM;
        }
        k->pkey = pkey;
        k->bits = (unsigned)bits;
        *ret = k;
        return 0;
}

SignatureKey *signature_key_free(SignatureKey *k)
{
        if (!k)
                return NULL;
        EVP_PKEY_free(k->pkey);
        free(k);
        return NULL;
}

unsigned signature_key_bits(const SignatureKey *k)
{
        return k->bits;
}

int signature_verify(const SignatureKey *k, const char *queue, const void *body, size_t len,
                     const void *sig, size_t sig_len)
{
        EVP_PKEY_CTX *pctx = NULL;
        EVP_MD_CTX *ctx;
        int r;

        if (!sig || sig_len == 0)
                return SIGNATURE_MISSING;
        if (!queue)
                queue = "";
        ctx = EVP_MD_CTX_new();
        if (!ctx)
                return -ENOMEM;
        if (EVP_DigestVerifyInit_ex(ctx, &pctx, "SHA256", NULL, NULL, k->pkey, NULL) != 1 ||
            EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING) != 1 ||
            EVP_DigestVerifyUpdate(ctx, queue, strlen(queue)) != 1 ||
            (len > 0 && EVP_DigestVerifyUpdate(ctx, body, len) != 1)) {
                r = -ENOMEM;
                goto out;
        }
        /* 1 is a good signature. 0 is a bad one, and so is a negative
         * value here: the only input left is the signature, and one of
         * the wrong length fails that way. */
        r = EVP_DigestVerifyFinal(ctx, sig, sig_len) == 1 ? 0 : SIGNATURE_BAD;
out:
        EVP_MD_CTX_free(ctx);
        ERR_clear_error();
        return r;
}
