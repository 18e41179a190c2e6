/* Plan signatures (see signature.h), with the parts of OpenSSL that need no
 * provider: the key is parsed here (PEM, then DER) into its modulus and
 * exponent as BIGNUMs, and a signature is checked as RFC 8017, 8.2.2 says:
 * s^e mod n, with the low-level BN_mod_exp_mont(), is compared byte for
 * byte with the PKCS#1 v1.5 encoding of the SHA-256 digest that we build
 * ourselves, from the low-level SHA256_* calls (which journal-done.c uses
 * too). OpenSSL's EVP layer would do the same arithmetic, but its decoder
 * and its first fetch of an algorithm load the provider machinery:
 * 2.3 MiB more of libcrypto resident for the agent's life, against 0.4 MiB
 * this way (docs/footprint.md, "A signing key").
 *
 * The memory rules, once: the key's BIGNUMs and Montgomery context are made
 * in signature_key_new() and freed in signature_key_free(); a check makes
 * and frees its own BN_CTX and BIGNUMs. A key is only read by a check
 * (BN_mod_exp_mont() takes the Montgomery context as input), so several
 * threads may check with it at once. OpenSSL's BN calls push an error only
 * when they fail (out of memory); those paths clear the queue. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <errno.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/sha.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "signature/signature.h"
#include "util/base64.h"
#include "util/strbuf.h"

/* OpenSSL's own bounds for an RSA public key (rsa.h,
 * OPENSSL_RSA_MAX_MODULUS_BITS and friends): it refuses to check with a
 * larger modulus, or with a long exponent beside a modulus over 3072 bits. */
#define MAX_MODULUS_BITS       16384
#define SMALL_MODULUS_BITS     3072
#define MAX_PUBEXP_BITS_IF_BIG 64

struct SignatureKey {
        BIGNUM *n, *e;
        BN_MONT_CTX *mont;
        size_t len; /* bytes of the modulus: the length of every signature */
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

/* --- DER: just what the two public key structures need ----------------- */

typedef struct Der {
        const uint8_t *p, *end;
} Der;

/* The next element of d, of type tag, strictly DER (definite, shortest
 * length): its contents in *ret, d moved past it. */
static bool der_take(Der *d, uint8_t tag, Der *ret)
{
        size_t len, left = (size_t)(d->end - d->p);

        if (left < 2 || d->p[0] != tag)
                return false;
        len = d->p[1];
        d->p += 2;
        left -= 2;
        if (len & 0x80) {
                size_t n = len & 0x7f;

                if (n == 0 || n > 2 || left < n || d->p[0] == 0)
                        return false;
                len = n == 1 ? d->p[0] : (size_t)d->p[0] << 8 | d->p[1];
                if (len < 0x80)
                        return false;
                d->p += n;
                left -= n;
        }
        if (len > left)
                return false;
        *ret = (Der){d->p, d->p + len};
        d->p += len;
        return true;
}

/* A positive INTEGER in shortest form, as a BIGNUM. */
static bool der_uint(Der *d, BIGNUM **ret)
{
        Der v;
        size_t len;

        if (!der_take(d, 0x02, &v))
                return false;
        len = (size_t)(v.end - v.p);
        if (len == 0 || (v.p[0] & 0x80) || (len > 1 && v.p[0] == 0 && !(v.p[1] & 0x80)))
                return false;
        *ret = BN_bin2bn(v.p, (int)len, NULL);
        return *ret != NULL;
}

/* RSAPublicKey ::= SEQUENCE { modulus INTEGER, publicExponent INTEGER }
 * (RFC 8017, A.1.1), and nothing after it. */
static bool der_rsa_public_key(Der d, BIGNUM **n, BIGNUM **e)
{
        Der seq;

        return der_take(&d, 0x30, &seq) && d.p == d.end && der_uint(&seq, n) && der_uint(&seq, e) &&
               seq.p == seq.end;
}

/* SubjectPublicKeyInfo (RFC 5280, 4.1): 1 with the RSA key's numbers, 0
 * for a well-formed key of another algorithm, -1 for damaged data. */
static int der_spki(Der d, BIGNUM **n, BIGNUM **e)
{
        /* rsaEncryption, 1.2.840.113549.1.1.1 (RFC 8017, A.1) */
        static const uint8_t rsa_oid[] = {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01};
        Der spki, alg, oid, params, bits;

        if (!der_take(&d, 0x30, &spki) || d.p != d.end || !der_take(&spki, 0x30, &alg) ||
            !der_take(&alg, 0x06, &oid) || !der_take(&spki, 0x03, &bits) || spki.p != spki.end)
                return -1;
        if ((size_t)(oid.end - oid.p) != sizeof(rsa_oid) ||
            memcmp(oid.p, rsa_oid, sizeof(rsa_oid)) != 0)
                return 0;
        /* The parameters are NULL (RFC 3279, 2.3.1); absent is tolerated,
         * as OpenSSL does. */
        if (alg.p != alg.end && (!der_take(&alg, 0x05, &params) || params.p != params.end))
                return -1;
        if (alg.p != alg.end || bits.p == bits.end || bits.p[0] != 0)
                return -1;
        bits.p++;
        return der_rsa_public_key(bits, n, e) ? 1 : -1;
}

/* The DER bytes of the block checked by pem_check(): the Base64 of the
 * lines between its first and its last, joined. Only the Base64 alphabet
 * and its padding are accepted, as OpenSSL's PEM reader does. 1 for text
 * that is not Base64. */
static int pem_der(const char *text, size_t len, char **ret, size_t *ret_len)
{
        _cleanup_strbuf_ StrBuf b64 = STRBUF_INIT;
        const char *p = strchr(text, '\n') + 1, *last = text + len - 1;
        int r;

        while (last > p && last[-1] != '\n')
                last--;
        while (p < last) {
                const char *eol = memchr(p, '\n', (size_t)(last - p));

                r = strbuf_append(&b64, p, (size_t)(eol - p));
                if (r < 0)
                        return r;
                p = eol + 1;
        }
        r = base64_decode_canonical(b64.data ? b64.data : "", b64.len, ret, ret_len);
        return r == -EINVAL ? 1 : r;
}

static int key_decode(const char *text, size_t len, bool spki, SignatureKey *k,
                      char **ret_error_text)
{
        _cleanup_free_ char *der = NULL;
        size_t der_len = 0;
        Der d;
        int r;

        r = pem_der(text, len, &der, &der_len);
        if (r < 0)
                return r;
        /* An empty block decodes to no buffer at all: damaged key data. */
        if (r == 0 && der) {
                d = (Der){(const uint8_t *)der, (const uint8_t *)der + der_len};
                r = spki ? der_spki(d, &k->n, &k->e) : der_rsa_public_key(d, &k->n, &k->e) ? 1 : -1;
        } else {
                r = -1;
        }
        if (r == 0)
                return invalid(ret_error_text,
                               "engine_key is not an RSA key; the engine signs with RSA");
        if (r < 0 || !k->n || !k->e)
                return invalid(ret_error_text,
                               "engine_key cannot be decoded as a public key (damaged Base64 "
                               "or key data)");
        return 0;
}

/* What OpenSSL's RSA code would refuse to check with (see the bounds
 * above), refused at once instead of at every plan. */
static int key_check(const SignatureKey *k, char **ret_error_text)
{
        int bits = BN_num_bits(k->n);

        if (bits < SIGNATURE_MIN_BITS)
                return invalid(ret_error_text,
                               "engine_key is a %d-bit RSA key; at least %d bits are required",
                               bits, SIGNATURE_MIN_BITS);
        if (bits > MAX_MODULUS_BITS)
                return invalid(ret_error_text,
                               "engine_key is a %d-bit RSA key; at most %d bits are supported",
                               bits, MAX_MODULUS_BITS);
        if (!BN_is_odd(k->n) || !BN_is_odd(k->e) || BN_is_one(k->e) || BN_ucmp(k->e, k->n) >= 0 ||
            (bits > SMALL_MODULUS_BITS && BN_num_bits(k->e) > MAX_PUBEXP_BITS_IF_BIG))
                return invalid(ret_error_text,
                               "engine_key is not a valid RSA public key (its modulus or "
                               "exponent is impossible)");
        return 0;
}

int signature_key_new(const char *pem, SignatureKey **ret, char **ret_error_text)
{
        _cleanup_strbuf_ StrBuf text = STRBUF_INIT;
        _cleanup_(signature_key_freep) SignatureKey *k = NULL;
        int r;

        r = pem_normalize(pem ? pem : "", &text);
        if (r < 0)
                return r;
        r = pem_check(text.data ? text.data : "", text.len, ret_error_text);
        if (r != 0)
                return r;
        k = calloc(1, sizeof(*k));
        if (!k)
                return -ENOMEM;
        /* pem_check() let only "RSA PUBLIC KEY" and "PUBLIC KEY" through. */
        r = key_decode(text.data, text.len,
                       strncmp(text.data, "-----BEGIN PUBLIC KEY-----", 26) == 0, k,
                       ret_error_text);
        if (r == 0)
                r = key_check(k, ret_error_text);
        if (r == 0) {
                BN_CTX *ctx = BN_CTX_new();

                k->mont = ctx ? BN_MONT_CTX_new() : NULL;
                if (!k->mont || !BN_MONT_CTX_set(k->mont, k->n, ctx))
                        r = -ENOMEM;
                BN_CTX_free(ctx);
        }
        if (r != 0) {
                ERR_clear_error();
                return r;
        }
        k->bits = (unsigned)BN_num_bits(k->n);
        k->len = (size_t)BN_num_bytes(k->n);
        *ret = TAKE_PTR(k);
        return 0;
}

SignatureKey *signature_key_free(SignatureKey *k)
{
        if (!k)
                return NULL;
        BN_MONT_CTX_free(k->mont);
        BN_free(k->n);
        BN_free(k->e);
        free(k);
        return NULL;
}

unsigned signature_key_bits(const SignatureKey *k)
{
        return k->bits;
}

/* EMSA-PKCS1-v1_5 (RFC 8017, 9.2) of a SHA-256 digest, for a modulus of
 * len bytes: 00 01 FF..FF 00 DigestInfo digest. */
static void emsa_pkcs1_sha256(uint8_t *em, size_t len, const uint8_t digest[SHA256_DIGEST_LENGTH])
{
        /* DigestInfo's DER up to the digest, for SHA-256 (RFC 8017, 9.2,
         * note 1). */
        static const uint8_t prefix[] = {0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01,
                                         0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20};
        size_t t = sizeof(prefix) + SHA256_DIGEST_LENGTH;

        em[0] = 0x00;
        em[1] = 0x01;
        memset(em + 2, 0xff, len - t - 3);
        em[len - t - 1] = 0x00;
        memcpy(em + len - t, prefix, sizeof(prefix));
        memcpy(em + len - SHA256_DIGEST_LENGTH, digest, SHA256_DIGEST_LENGTH);
}

int signature_verify(const SignatureKey *k, const char *queue, const void *body, size_t len,
                     const void *sig, size_t sig_len)
{
        uint8_t digest[SHA256_DIGEST_LENGTH];
        _cleanup_free_ uint8_t *em = NULL, *got = NULL;
        BIGNUM *s = NULL, *m = NULL;
        SHA256_CTX sha;
        BN_CTX *ctx = NULL;
        int r;

        if (!sig || sig_len == 0)
                return SIGNATURE_MISSING;
        /* A signature is exactly as long as the modulus (RFC 8017, 8.2.2,
         * step 1). */
        if (sig_len != k->len)
                return SIGNATURE_BAD;
        if (!queue)
                queue = "";
        if (SHA256_Init(&sha) != 1 || SHA256_Update(&sha, queue, strlen(queue)) != 1 ||
            (len > 0 && SHA256_Update(&sha, body, len) != 1) || SHA256_Final(digest, &sha) != 1)
                return -ENOMEM; /* they cannot fail; nothing else to say */
        em = malloc(k->len);
        got = malloc(k->len);
        ctx = BN_CTX_new();
        s = BN_bin2bn(sig, (int)sig_len, NULL);
        m = BN_new();
        if (!em || !got || !ctx || !s || !m) {
                r = -ENOMEM;
                goto out;
        }
        /* RSAVP1 (RFC 8017, 5.2.2): the representative must be below n. */
        if (BN_ucmp(s, k->n) >= 0) {
                r = SIGNATURE_BAD;
                goto out;
        }
        if (!BN_mod_exp_mont(m, s, k->e, k->n, ctx, k->mont) ||
            BN_bn2binpad(m, got, (int)k->len) < 0) {
                r = -ENOMEM;
                goto out;
        }
        emsa_pkcs1_sha256(em, k->len, digest);
        r = memcmp(em, got, k->len) == 0 ? 0 : SIGNATURE_BAD;
out:
        BN_free(m);
        BN_free(s);
        BN_CTX_free(ctx);
        if (r < 0)
                ERR_clear_error();
        return r;
}
