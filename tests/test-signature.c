/* Tests for plan signatures, against keys and signatures made with the
 * openssl command line and with murano's own signing code
 * (tests/data/signature/make-fixtures.sh): the key in every shape it
 * reaches the agent in, keys that must be refused with a clear reason,
 * and signatures that must and must not verify. */
#include <check.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "signature/signature.h"
#include "util/base64.h"
#include "util/fileio.h"
#include "util/macro.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "test-lib.h"

#define DATA TEST_DATA_DIR "/signature/"

static char *load(const char *name, size_t *ret_len)
{
        _cleanup_free_ char *path = NULL;
        char *data = NULL;

        ck_assert_int_ge(asprintf(&path, "%s%s", DATA, name), 0);
        ck_assert_int_eq(file_read_all(path, 1 << 20, &data, ret_len), 0);
        return data;
}

static SignatureKey *key_from(const char *pem)
{
        SignatureKey *k = NULL;
        char *err = NULL;
        int r = signature_key_new(pem, &k, &err);

        if (r != 0)
                ck_abort_msg("key refused (%d): %s", r, err ? err : "");
        ck_assert_ptr_null(err);
        return k;
}

static SignatureKey *key_file(const char *name)
{
        _cleanup_free_ char *pem = load(name, NULL);

        return key_from(pem);
}

/* --- keys --------------------------------------------------------------- */

static const struct {
        const char *file;
        int r;
        const char *error;
} key_file_cases[] = {
        {"engine-pkcs1.pem", 0, NULL},
        {"engine-spki.pem", 0, NULL},
        {"other-pkcs1.pem", 0, NULL},
        {"short-pkcs1.pem", SIGNATURE_KEY_INVALID,
         "engine_key is a 512-bit RSA key; at least 1024 bits are required"},
        {"ec-spki.pem", SIGNATURE_KEY_INVALID,
         "engine_key is not an RSA key; the engine signs with RSA"},
        {"engine.key", SIGNATURE_KEY_INVALID,
         "engine_key holds a private key; it must be the engine's public key (\"-----BEGIN RSA "
         "PUBLIC KEY-----\")"},
};

START_TEST(test_key_files)
{
        _cleanup_free_ char *pem = load(key_file_cases[_i].file, NULL), *err = NULL;
        _cleanup_(signature_key_freep) SignatureKey *k = NULL;

        ck_assert_int_eq(signature_key_new(pem, &k, &err), key_file_cases[_i].r);
        if (key_file_cases[_i].r == 0) {
                ck_assert_ptr_nonnull(k);
                ck_assert_ptr_null(err);
                ck_assert_uint_eq(signature_key_bits(k), 2048);
        } else {
                ck_assert_ptr_null(k);
                ck_assert_str_eq(err, key_file_cases[_i].error);
        }
        /* Nothing of ours is left in OpenSSL's error queue. */
        ck_assert_uint_eq(ERR_peek_error(), 0);
}
END_TEST

/* The good key, re-shaped: how() turns its text into another text. */
static char *reshape(int how)
{
        _cleanup_free_ char *pem = load("engine-pkcs1.pem", NULL);
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        char *s, *save = NULL;

        switch (how) {
        case 0: /* the config dialect's value: a leading newline, no final one */
                strbuf_putc(&b, '\n');
                strbuf_append(&b, pem, strlen(pem) - 1);
                break;
        case 1: /* CRLF line ends */
                for (char *l = strtok_r(pem, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
                        strbuf_printf(&b, "%s\r\n", l);
                break;
        case 2: /* the agent.conf text itself: TAB-indented lines, blank lines */
                strbuf_puts(&b, "\n");
                for (char *l = strtok_r(pem, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
                        strbuf_printf(&b, "\t%s\n", l);
                strbuf_puts(&b, "\n\n");
                break;
        default: /* spaces around, as a hand-edited file may have */
                for (char *l = strtok_r(pem, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
                        strbuf_printf(&b, "  %s  \n", l);
                break;
        }
        ck_assert_int_eq(strbuf_steal(&b, &s), 0);
        return s;
}

START_TEST(test_key_shapes)
{
        _cleanup_free_ char *pem = reshape(_i);
        _cleanup_(signature_key_freep) SignatureKey *k = key_from(pem);

        ck_assert_uint_eq(signature_key_bits(k), 2048);
}
END_TEST

/* Texts derived from the good key by replacing from..to with with. */
static const struct {
        const char *from, *with;
        const char *error;
} bad_key_cases[] = {
        {NULL, "", "engine_key is empty"},
        {NULL, "\n\t\n  \n", "engine_key is empty"},
        {NULL, "hello",
         "engine_key is not a PEM public key: it must start with a \"-----BEGIN RSA PUBLIC "
         "KEY-----\" or \"-----BEGIN PUBLIC KEY-----\" line"},
        {NULL, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
         "engine_key is a PEM block of type \"CERTIFICATE\", not \"RSA PUBLIC KEY\" or \"PUBLIC "
         "KEY\""},
        {"-----BEGIN RSA PUBLIC KEY-----", "-----BEGIN RSA PUBLIC KEY",
         "engine_key has a malformed -----BEGIN line"},
        {"-----END RSA PUBLIC KEY-----", "",
         "engine_key has no \"-----END RSA PUBLIC KEY-----\" line"},
        {"-----END RSA PUBLIC KEY-----", "-----END PUBLIC KEY-----",
         "engine_key has no \"-----END RSA PUBLIC KEY-----\" line"},
        {"-----END RSA PUBLIC KEY-----", "-----END RSA PUBLIC KEY-----\nmore",
         "engine_key has text after its -----END line"},
        {"MII", "MIZ", "engine_key cannot be decoded as a public key (damaged Base64 or key data)"},
        {"MII", "M*I", "engine_key cannot be decoded as a public key (damaged Base64 or key data)"},
};

START_TEST(test_bad_keys)
{
        _cleanup_free_ char *pem = load("engine-pkcs1.pem", NULL), *text = NULL, *err = NULL;
        SignatureKey *k = (SignatureKey *)1;
        const char *from = bad_key_cases[_i].from;

        if (!from) {
                text = strdup(bad_key_cases[_i].with);
        } else {
                char *at = strstr(pem, from);
                ck_assert_ptr_nonnull(at);
                ck_assert_int_ge(asprintf(&text, "%.*s%s%s", (int)(at - pem), pem,
                                          bad_key_cases[_i].with, at + strlen(from)),
                                 0);
        }
        ck_assert_int_eq(signature_key_new(text, &k, &err), SIGNATURE_KEY_INVALID);
        ck_assert_ptr_eq(k, (SignatureKey *)1);
        ck_assert_str_eq(err, bad_key_cases[_i].error);
        ck_assert_uint_eq(ERR_peek_error(), 0);
}
END_TEST

/* The key exactly as Murano writes it into agent.conf, through the
 * configuration parser, verifies the engine's signature. */
START_TEST(test_config_key)
{
        _cleanup_free_ char *queue = load("queue.txt", NULL), *body = NULL, *sig = NULL;
        _cleanup_(signature_key_freep) SignatureKey *k = NULL;
        ConfigSource src = {DATA "agent.conf", false};
        ConfigDiag diag = CONFIG_DIAG_INIT;
        Config *c = NULL;
        size_t body_len, sig_len;

        ck_assert_int_eq(config_load(&c, &src, 1, &diag), 0);
        ck_assert_ptr_nonnull(c->engine_key);
        ck_assert_int_eq(strncmp(c->engine_key, "\n-----BEGIN RSA PUBLIC KEY-----\n", 32), 0);
        ck_assert_str_eq(c->rabbitmq.input_queue, queue);
        k = key_from(c->engine_key);
        body = load("plan.json", &body_len);
        sig = load("plan.sig", &sig_len);
        ck_assert_int_eq(signature_verify(k, c->rabbitmq.input_queue, body, body_len, sig, sig_len),
                         0);
        config_free(c);
        config_diag_done(&diag);
}
END_TEST

/* --- signatures --------------------------------------------------------- */

static char *queue, *body, *sig, *sig_noqueue, *sig_engine;
static size_t body_len, sig_len, sig_noqueue_len, sig_engine_len;
static SignatureKey *pkcs1, *spki, *other;

static void sig_setup(void)
{
        queue = load("queue.txt", NULL);
        body = load("plan.json", &body_len);
        sig = load("plan.sig", &sig_len);
        sig_noqueue = load("plan-noqueue.sig", &sig_noqueue_len);
        sig_engine = load("plan-engine.sig", &sig_engine_len);
        pkcs1 = key_file("engine-pkcs1.pem");
        spki = key_file("engine-spki.pem");
        other = key_file("other-pkcs1.pem");
}

static void sig_teardown(void)
{
        free(queue);
        free(body);
        free(sig);
        free(sig_noqueue);
        free(sig_engine);
        signature_key_free(pkcs1);
        signature_key_free(spki);
        ck_assert_ptr_null(signature_key_free(other));
        ck_assert_ptr_null(signature_key_free(NULL));
}

START_TEST(test_good)
{
        _cleanup_free_ char *joined = NULL;

        /* The engine's real signatures: 256 bytes, not UTF-8. */
        ck_assert_uint_eq(sig_len, 256);
        ck_assert(!utf8_valid(sig, sig_len, NULL));
        ck_assert_int_eq(signature_verify(pkcs1, queue, body, body_len, sig, sig_len), 0);
        ck_assert_int_eq(signature_verify(spki, queue, body, body_len, sig, sig_len), 0);
        /* murano's Agent._sign made the same bytes as openssl. */
        ck_assert_uint_eq(sig_engine_len, sig_len);
        ck_assert_mem_eq(sig_engine, sig, sig_len);
        ck_assert_int_eq(signature_verify(pkcs1, queue, body, body_len, sig_engine, sig_len), 0);

        /* What is signed is the plain concatenation. */
        ck_assert_int_ge(asprintf(&joined, "%s%s", queue, body), 0);
        ck_assert_int_eq(signature_verify(pkcs1, "", joined, strlen(joined), sig, sig_len), 0);
        ck_assert_int_eq(signature_verify(pkcs1, NULL, joined, strlen(joined), sig, sig_len), 0);
        ck_assert_uint_eq(ERR_peek_error(), 0);
}
END_TEST

START_TEST(test_bad)
{
        _cleanup_free_ char *copy = malloc(512), *longer = NULL;

        /* Signed over the body alone: the queue name is missing. */
        ck_assert_int_eq(
                signature_verify(pkcs1, queue, body, body_len, sig_noqueue, sig_noqueue_len),
                SIGNATURE_BAD);
        ck_assert_int_eq(
                signature_verify(pkcs1, NULL, body, body_len, sig_noqueue, sig_noqueue_len), 0);
        ck_assert_int_eq(signature_verify(pkcs1, NULL, body, body_len, sig, sig_len),
                         SIGNATURE_BAD);
        /* Another queue: the signature does not travel between VMs. */
        ck_assert_int_eq(signature_verify(pkcs1, "e0-h0", body, body_len, sig, sig_len),
                         SIGNATURE_BAD);
        /* Another key. */
        ck_assert_int_eq(signature_verify(other, queue, body, body_len, sig, sig_len),
                         SIGNATURE_BAD);

        /* One flipped bit anywhere in the signature. */
        for (size_t i = 0; i < sig_len; i += 51) {
                memcpy(copy, sig, sig_len);
                copy[i] ^= 0x01;
                ck_assert_int_eq(signature_verify(pkcs1, queue, body, body_len, copy, sig_len),
                                 SIGNATURE_BAD);
        }
        /* Or in the body. */
        memcpy(copy, body, body_len);
        copy[body_len / 2] ^= 0x20;
        ck_assert_int_eq(signature_verify(pkcs1, queue, copy, body_len, sig, sig_len),
                         SIGNATURE_BAD);
        /* A newline more, a byte less. */
        ck_assert_int_ge(asprintf(&longer, "%s\n", body), 0);
        ck_assert_int_eq(signature_verify(pkcs1, queue, longer, body_len + 1, sig, sig_len),
                         SIGNATURE_BAD);
        ck_assert_int_eq(signature_verify(pkcs1, queue, body, body_len - 1, sig, sig_len),
                         SIGNATURE_BAD);

        /* Signatures of the wrong length. */
        ck_assert_int_eq(signature_verify(pkcs1, queue, body, body_len, sig, sig_len - 1),
                         SIGNATURE_BAD);
        memcpy(copy, sig, sig_len);
        memcpy(copy + sig_len, sig, sig_len);
        ck_assert_int_eq(signature_verify(pkcs1, queue, body, body_len, copy, 2 * sig_len),
                         SIGNATURE_BAD);
        ck_assert_int_eq(signature_verify(pkcs1, queue, body, body_len, "x", 1), SIGNATURE_BAD);
        ck_assert_uint_eq(ERR_peek_error(), 0);
}
END_TEST

/* No signature: the header absent, void (the engine's unsigned plans), or
 * empty. */
START_TEST(test_missing)
{
        ck_assert_int_eq(signature_verify(pkcs1, queue, body, body_len, NULL, 0),
                         SIGNATURE_MISSING);
        ck_assert_int_eq(signature_verify(pkcs1, queue, body, body_len, "", 0), SIGNATURE_MISSING);
        ck_assert_int_eq(signature_verify(pkcs1, queue, body, body_len, NULL, 256),
                         SIGNATURE_MISSING);
        /* An empty body with no signature is missing too, not bad. */
        ck_assert_int_eq(signature_verify(pkcs1, queue, "", 0, NULL, 0), SIGNATURE_MISSING);
        ck_assert_int_eq(signature_verify(pkcs1, queue, NULL, 0, sig, sig_len), SIGNATURE_BAD);
}
END_TEST

/* --- the key's DER and the signature's encoding, byte by byte ----------- */

/* The good key's DER (PKCS#1): 30 82 01 0a, the modulus 02 82 01 01 00
 * and 256 bytes, the exponent 02 03 01 00 01. */
static uint8_t *good_der(size_t *ret_len)
{
        _cleanup_free_ char *pem = load("engine-pkcs1.pem", NULL);
        _cleanup_strbuf_ StrBuf b64 = STRBUF_INIT;
        char *der = NULL, *save = NULL;

        for (char *l = strtok_r(pem, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
                if (strncmp(l, "-----", 5) != 0)
                        strbuf_puts(&b64, l);
        ck_assert_int_eq(base64_decode_canonical(b64.data, b64.len, &der, ret_len), 0);
        ck_assert_uint_eq(*ret_len, 270);
        return (uint8_t *)der;
}

static char *pem_of(const char *label, const uint8_t *der, size_t len)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        char *s;

        strbuf_printf(&b, "-----BEGIN %s-----\n", label);
        ck_assert_int_eq(base64_append(&b, der, len), 0);
        strbuf_printf(&b, "\n-----END %s-----\n", label);
        ck_assert_int_eq(strbuf_steal(&b, &s), 0);
        return s;
}

static const char *const damaged =
        "engine_key cannot be decoded as a public key (damaged Base64 or key data)";
static const char *const impossible =
        "engine_key is not a valid RSA public key (its modulus or exponent is impossible)";

/* Variants of the good key's DER; the parser takes strict DER only. */
START_TEST(test_key_der)
{
        size_t len;
        _cleanup_free_ uint8_t *der = good_der(&len);
        uint8_t v[300];
        size_t n = len;
        const char *want = damaged;

        memcpy(v, der, len);
        switch (_i) {
        case 0: /* a byte after the key */
                v[n++] = 0;
                break;
        case 1: /* the modulus with a superfluous 00 */
                v[3] = 0x0b, v[7] = 0x02;
                memmove(v + 9, der + 8, len - 8);
                v[8] = 0;
                n++;
                break;
        case 2: /* the exponent's length in the long form */
                v[3] = 0x0b;
                memcpy(v + 265, (const uint8_t[]){0x02, 0x81, 0x03, 0x01, 0x00, 0x01}, 6);
                n = 270 + 1;
                break;
        case 3: /* the outer length one short */
                v[3] = 0x09;
                break;
        case 4: /* a negative modulus */
                memmove(v + 8, der + 9, len - 9);
                v[3] = 0x09, v[7] = 0x00;
                n--;
                break;
        case 5: /* an even exponent, 65538 */
                v[269] = 0x02;
                want = impossible;
                break;
        case 6: /* the exponent 1 */
                memcpy(v + 265, (const uint8_t[]){0x02, 0x01, 0x01}, 3);
                v[3] = 0x08;
                n = 268;
                want = impossible;
                break;
        default: /* the key itself */
                want = NULL;
                break;
        }
        _cleanup_free_ char *pem = pem_of("RSA PUBLIC KEY", v, n), *err = NULL;
        _cleanup_(signature_key_freep) SignatureKey *k = NULL;

        ck_assert_int_eq(signature_key_new(pem, &k, &err), want ? SIGNATURE_KEY_INVALID : 0);
        if (want)
                ck_assert_str_eq(err, want);
        ck_assert_uint_eq(ERR_peek_error(), 0);
}
END_TEST

/* The key wrapped as SubjectPublicKeyInfo, well and badly. */
START_TEST(test_key_spki)
{
        static const uint8_t rsa_alg[] = {0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86,
                                          0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00};
        size_t len, n = 0;
        _cleanup_free_ uint8_t *der = good_der(&len);
        uint8_t v[320];
        const char *want = NULL;
        size_t alg = sizeof(rsa_alg);

        v[n++] = 0x30, v[n++] = 0x82, v[n++] = 0, v[n++] = 0;
        memcpy(v + n, rsa_alg, alg);
        if (_i == 1) /* parameters absent: tolerated */
                v[n + 1] = 0x0b, alg -= 2;
        if (_i == 2) /* RSASSA-PSS, 1.2.840.113549.1.1.10: another algorithm */
                v[n + 12] = 0x0a, want = "engine_key is not an RSA key; the engine signs with RSA";
        n += alg;
        v[n++] = 0x03, v[n++] = 0x82, v[n++] = (uint8_t)((len + 1) >> 8),
        v[n++] = (uint8_t)(len + 1);
        v[n++] = _i == 3 ? 1 : 0; /* unused bits */
        if (_i == 3)
                want = damaged;
        memcpy(v + n, der, len);
        n += len;
        v[2] = (uint8_t)((n - 4) >> 8), v[3] = (uint8_t)(n - 4);

        _cleanup_free_ char *pem = pem_of("PUBLIC KEY", v, n), *err = NULL;
        _cleanup_(signature_key_freep) SignatureKey *k = NULL;

        ck_assert_int_eq(signature_key_new(pem, &k, &err), want ? SIGNATURE_KEY_INVALID : 0);
        if (want)
                ck_assert_str_eq(err, want);
        else
                ck_assert_uint_eq(signature_key_bits(k), 2048);
}
END_TEST

/* The engine's private key applied to em without padding: a "signature"
 * whose encoding is em, whatever em is. */
static void raw_sign(const uint8_t em[256], uint8_t out[256])
{
        _cleanup_free_ char *pem = load("engine.key", NULL);
        BIO *bio = BIO_new_mem_buf(pem, -1);
        EVP_PKEY *pkey = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
        EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(pkey, NULL);
        size_t out_len = 256;

        ck_assert_ptr_nonnull(ctx);
        ck_assert_int_eq(EVP_PKEY_sign_init(ctx), 1);
        ck_assert_int_eq(EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_NO_PADDING), 1);
        ck_assert_int_eq(EVP_PKEY_sign(ctx, out, &out_len, em, 256), 1);
        ck_assert_uint_eq(out_len, 256);
        EVP_PKEY_CTX_free(ctx);
        EVP_PKEY_free(pkey);
        BIO_free(bio);
}

/* Encodings near the right one verify only when they are exactly it (RFC
 * 8017, 8.2.2: encode and compare): no parser to fool with a shorter
 * padding, a DigestInfo without its NULL or bytes after the digest. */
START_TEST(test_encodings)
{
        static const uint8_t prefix[] = {0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01,
                                         0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20};
        uint8_t em[256], s[256], digest[32];
        unsigned dlen = 0;
        EVP_MD_CTX *md = EVP_MD_CTX_new();

        ck_assert_int_eq(EVP_DigestInit_ex(md, EVP_sha256(), NULL), 1);
        ck_assert_int_eq(EVP_DigestUpdate(md, queue, strlen(queue)), 1);
        ck_assert_int_eq(EVP_DigestUpdate(md, body, body_len), 1);
        ck_assert_int_eq(EVP_DigestFinal_ex(md, digest, &dlen), 1);
        EVP_MD_CTX_free(md);

        em[0] = 0, em[1] = 1;
        memset(em + 2, 0xff, 256 - 51 - 3);
        em[256 - 52] = 0;
        memcpy(em + 256 - 51, prefix, sizeof(prefix));
        memcpy(em + 256 - 32, digest, 32);
        switch (_i) {
        case 0: /* the right one: it verifies, and it is what openssl made */
                raw_sign(em, s);
                ck_assert_mem_eq(s, sig, 256);
                ck_assert_int_eq(signature_verify(pkcs1, queue, body, body_len, s, 256), 0);
                return;
        case 1: /* DigestInfo without the NULL parameters, padding one longer */
                memmove(em + 256 - 50, em + 256 - 51, 14);
                em[256 - 50 + 1] = 0x2f, em[256 - 50 + 3] = 0x0b;
                em[256 - 51] = 0, em[256 - 52] = 0xff;
                memmove(em + 256 - 50 + 14, prefix + 17, 2);
                memcpy(em + 256 - 32, digest, 32);
                break;
        case 2: /* the digest followed by garbage, the padding short */
                memmove(em + 12, em + 256 - 52, 52);
                memset(em + 64, 0x41, 256 - 64);
                break;
        case 3: /* block type 2 */
                em[1] = 2;
                break;
        default: /* one 0xff of the padding changed */
                em[100] = 0xfe;
                break;
        }
        raw_sign(em, s);
        ck_assert_int_eq(signature_verify(pkcs1, queue, body, body_len, s, 256), SIGNATURE_BAD);
        ck_assert_uint_eq(ERR_peek_error(), 0);
}
END_TEST

/* A signature representative not below the modulus is refused before any
 * arithmetic (RFC 8017, 5.2.2). */
START_TEST(test_out_of_range)
{
        size_t len;
        _cleanup_free_ uint8_t *der = good_der(&len);
        uint8_t s[256];

        memcpy(s, der + 9, 256); /* the modulus itself */
        ck_assert_int_eq(signature_verify(pkcs1, queue, body, body_len, s, 256), SIGNATURE_BAD);
        memset(s, 0xff, 256);
        ck_assert_int_eq(signature_verify(pkcs1, queue, body, body_len, s, 256), SIGNATURE_BAD);
        ck_assert_uint_eq(ERR_peek_error(), 0);
}
END_TEST

static Suite *signature_suite(void)
{
        Suite *s = suite_create("signature");
        TCase *keys = tcase_create("keys");
        TCase *sigs = tcase_create("signatures");

        tcase_add_loop_test(keys, test_key_files, 0, (int)ELEMENTSOF(key_file_cases));
        tcase_add_loop_test(keys, test_key_shapes, 0, 4);
        tcase_add_loop_test(keys, test_bad_keys, 0, (int)ELEMENTSOF(bad_key_cases));
        tcase_add_test(keys, test_config_key);
        tcase_add_loop_test(keys, test_key_der, 0, 8);
        tcase_add_loop_test(keys, test_key_spki, 0, 4);
        suite_add_tcase(s, keys);

        tcase_add_checked_fixture(sigs, sig_setup, sig_teardown);
        tcase_add_test(sigs, test_good);
        tcase_add_test(sigs, test_bad);
        tcase_add_test(sigs, test_missing);
        tcase_add_loop_test(sigs, test_encodings, 0, 5);
        tcase_add_test(sigs, test_out_of_range);
        suite_add_tcase(s, sigs);
        return s;
}

int main(void)
{
        return check_run(signature_suite());
}
