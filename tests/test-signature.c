/* Tests for plan signatures, against keys and signatures made with the
 * openssl command line and with murano's own signing code
 * (tests/data/signature/make-fixtures.sh): the key in every shape it
 * reaches the agent in, keys that must be refused with a clear reason,
 * and signatures that must and must not verify. */
#include <check.h>
#include <openssl/err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "signature/signature.h"
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

static Suite *signature_suite(void)
{
        Suite *s = suite_create("signature");
        TCase *keys = tcase_create("keys");
        TCase *sigs = tcase_create("signatures");

        tcase_add_loop_test(keys, test_key_files, 0, (int)ELEMENTSOF(key_file_cases));
        tcase_add_loop_test(keys, test_key_shapes, 0, 4);
        tcase_add_loop_test(keys, test_bad_keys, 0, (int)ELEMENTSOF(bad_key_cases));
        tcase_add_test(keys, test_config_key);
        suite_add_tcase(s, keys);

        tcase_add_checked_fixture(sigs, sig_setup, sig_teardown);
        tcase_add_test(sigs, test_good);
        tcase_add_test(sigs, test_bad);
        tcase_add_test(sigs, test_missing);
        suite_add_tcase(s, sigs);
        return s;
}

int main(void)
{
        return check_run(signature_suite());
}
