/* Tests for the small utilities: strbuf, fileio, base64 and hexid. */
#include <check.h>
#include <malloc.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/base64.h"
#include "util/bigmem.h"
#include "util/fileio.h"
#include "util/hexid.h"
#include "util/macro.h"
#include "util/strbuf.h"
#include "test-lib.h"

START_TEST(test_strbuf)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        char *s = NULL;

        ck_assert_int_eq(strbuf_steal(&b, &s), 0); /* empty buffer gives "" */
        ck_assert_str_eq(s, "");
        free(s);
        ck_assert_int_eq(strbuf_puts(&b, "abc"), 0);
        ck_assert_int_eq(strbuf_printf(&b, "-%d-%s", 42, "x"), 0);
        ck_assert_int_eq(strbuf_putc(&b, '!'), 0);
        ck_assert_str_eq(b.data, "abc-42-x!");
        ck_assert_uint_eq(b.len, 9);
        strbuf_reset(&b);
        ck_assert_str_eq(b.data, "");
        for (int i = 0; i < 10000; i++)
                ck_assert_int_eq(strbuf_putc(&b, 'y'), 0);
        ck_assert_uint_eq(b.len, 10000);
        ck_assert_int_eq(strbuf_steal(&b, &s), 0);
        ck_assert_uint_eq(strlen(s), 10000);
        free(s);
}
END_TEST

START_TEST(test_strbuf_limit)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;

        b.limit = 5;
        ck_assert_int_eq(strbuf_puts(&b, "12345"), 0);
        ck_assert_int_eq(strbuf_putc(&b, '6'), -E2BIG);
        ck_assert_int_eq(strbuf_printf(&b, "%s", "7"), -E2BIG);
        ck_assert_str_eq(b.data, "12345");
}
END_TEST

START_TEST(test_file_read_all)
{
        char path[] = "/tmp/test-util-XXXXXX";
        int fd = mkstemp(path);
        char *text = NULL;
        size_t len = 0;

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, "hello\0world", 11), 11);
        close(fd);
        ck_assert_int_eq(file_read_all(path, 11, &text, &len), 0);
        ck_assert_uint_eq(len, 11);
        ck_assert(memcmp(text, "hello\0world", 12) == 0); /* NUL-terminated too */
        free(text);
        ck_assert_int_eq(file_read_all(path, 10, &text, &len), -EFBIG);
        unlink(path);
        ck_assert_int_eq(file_read_all(path, 10, &text, &len), -ENOENT);
        ck_assert_int_eq(file_read_all("/", 10, &text, &len), -EISDIR);
}
END_TEST

START_TEST(test_file_read_empty)
{
        char *text = NULL;
        size_t len = 1;

        ck_assert_int_eq(file_read_all("/dev/null", 10, &text, &len), 0);
        ck_assert_uint_eq(len, 0);
        ck_assert_str_eq(text, "");
        free(text);
}
END_TEST

/* base64_decode against CPython 3.11's base64.b64decode (table made with
 * python3 -c 'base64.b64decode(s.encode())'). */
static const struct {
        const char *in;
        const char *hex; /* decoded bytes, or NULL for an error */
        const char *error;
} b64_cases[] = {
        {"dGV4dA==\n", "74657874", NULL},
        {"dGV4dA==", "74657874", NULL},
        {"dGV4dA", NULL, "Incorrect padding"},
        {"dGV4dA=", NULL, "Incorrect padding"},
        {"dGV4d", NULL,
         "Invalid base64-encoded string: number of data characters (5) cannot be 1 more than a "
         "multiple of 4"},
        {"YQ==YWJj", "61", NULL},
        {"YWJj\nZGVm\n", "616263646566", NULL},
        {"Y W J j", "616263", NULL},
        {"YQ=", NULL, "Incorrect padding"},
        {"Y", NULL,
         "Invalid base64-encoded string: number of data characters (1) cannot be 1 more than a "
         "multiple of 4"},
        {"=YQ==", "61", NULL},
        {"Y=Q==", "61", NULL},
        {"YW=Jj", "616263", NULL},
        {"YWJ=j", "6162", NULL},
        {"", "", NULL},
        {"\n", "", NULL},
        {"YWJjZA===", "61626364", NULL},
        {"Y\xc3\xa9WJj", "616263", NULL},
        {"QUJD!@#REVG", "414243444546", NULL},
        {"YWI=Yw==", "6162", NULL},
        {"====", "", NULL},
        {"AB==", "00", NULL},
        {"ABC=", "0010", NULL},
        {"ABCDEFGHI", NULL,
         "Invalid base64-encoded string: number of data characters (9) cannot be 1 more than a "
         "multiple of 4"},
        {"YQ=\n=", "61", NULL},
        {"Y-_Q==", "61", NULL},
};

START_TEST(test_b64_table)
{
        char *out = NULL, *why = NULL, hex[64] = "";
        size_t len = 0;
        int r;

        r = base64_decode(b64_cases[_i].in, strlen(b64_cases[_i].in), &out, &len, &why);
        if (b64_cases[_i].hex) {
                ck_assert_int_eq(r, 0);
                for (size_t i = 0; i < len; i++)
                        sprintf(hex + 2 * i, "%02x", (unsigned char)out[i]);
                ck_assert_str_eq(hex, b64_cases[_i].hex);
                free(out);
        } else {
                ck_assert_int_eq(r, 1);
                ck_assert_str_eq(why, b64_cases[_i].error);
                free(why);
        }
}
END_TEST

START_TEST(test_base64_vectors)
{
        /* RFC 4648, section 10. */
        static const char *in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
        static const char *out[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};

        for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
                StrBuf b = STRBUF_INIT;
                ck_assert_int_eq(base64_append(&b, in[i], strlen(in[i])), 0);
                ck_assert_str_eq(b.data ? b.data : "", out[i]);
                strbuf_free(&b);
        }
}
END_TEST

/* base64_decode_canonical takes exactly b64encode's text: the journal
 * refuses anything else in plan.json. Bits left over by the padding are not
 * checked. CPython's strict mode would take "YWJj=" (padding after a whole
 * group); this does not. */
static const struct {
        const char *in;
        const char *hex; /* decoded bytes, or NULL for -EINVAL */
} b64_canonical_cases[] = {
        {"", ""},
        {"YWJj", "616263"},
        {"YWI=", "6162"},
        {"YQ==", "61"},
        {"YR==", "61"},
        {"AP8A/w==", "00ff00ff"},
        {"YWJjZA==", "61626364"},
        {"YWJjZGU=", "6162636465"},
        {"YWJjZGVm", "616263646566"},
        {"YQ", NULL},
        {"YQ=", NULL},
        {"YWJj=", NULL},
        {"YWJj====", NULL},
        {"Y===", NULL},
        {"====", NULL},
        {"YQ=a", NULL},
        {"Y=Q=", NULL},
        {"YQ==YWJj", NULL},
        {"YWJj\n", NULL},
        {"YW Jj", NULL},
        {"Y-_Q", NULL},
        {"dGV4dA==\n", NULL},
};

START_TEST(test_b64_canonical)
{
        const char *in = b64_canonical_cases[_i].in;
        char *out = NULL, hex[64] = "";
        size_t len = 0;
        int r;

        r = base64_decode_canonical(in, strlen(in), &out, &len);
        if (b64_canonical_cases[_i].hex) {
                ck_assert_int_eq(r, 0);
                ck_assert_int_eq(out[len], '\0');
                for (size_t i = 0; i < len; i++)
                        sprintf(hex + 2 * i, "%02x", (unsigned char)out[i]);
                ck_assert_str_eq(hex, b64_canonical_cases[_i].hex);
                free(out);
        } else {
                ck_assert_int_eq(r, -EINVAL);
                ck_assert_ptr_null(out);
        }
}
END_TEST

/* Both decoders give data[0..n) back from its k-character encoding. */
static void decodes_back(const char *text, size_t k, const unsigned char *data, size_t n)
{
        char *out = NULL, *why = NULL;
        size_t len = 0;

        ck_assert_int_eq(base64_decode_canonical(text, k, &out, &len), 0);
        ck_assert_uint_eq(len, n);
        ck_assert(memcmp(out, data, n) == 0);
        free(out);
        ck_assert_int_eq(base64_decode(text, k, &out, &len, &why), 0);
        ck_assert_uint_eq(len, n);
        ck_assert(memcmp(out, data, n) == 0);
        free(out);
}

START_TEST(test_b64_round_trip)
{
        unsigned char data[256];
        char text[344];
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;

        for (size_t i = 0; i < sizeof(data); i++)
                data[i] = (unsigned char)(255 - i);
        /* Every length from 0 to 256 bytes, through the raw encoder and
         * the StrBuf one, and back through both decoders. */
        for (size_t n = 0; n <= sizeof(data); n++) {
                size_t k = base64_encode(text, data, n);

                ck_assert_uint_eq(k, base64_encoded_len(n));
                strbuf_reset(&b);
                ck_assert_int_eq(base64_append(&b, data, n), 0);
                ck_assert_uint_eq(b.len, k);
                ck_assert(k == 0 || memcmp(b.data, text, k) == 0);
                decodes_back(text, k, data, n);
        }
        /* A chunk and a half of base64_append's loop, for the seam. */
        {
                static unsigned char big[1152];
                char *out = NULL;
                size_t len = 0;

                for (size_t i = 0; i < sizeof(big); i++)
                        big[i] = (unsigned char)(i * 7);
                strbuf_reset(&b);
                ck_assert_int_eq(base64_append(&b, big, sizeof(big)), 0);
                ck_assert_uint_eq(b.len, 1536);
                ck_assert_int_eq(base64_decode_canonical(b.data, b.len, &out, &len), 0);
                ck_assert_uint_eq(len, sizeof(big));
                ck_assert(memcmp(out, big, len) == 0);
                free(out);
        }
}
END_TEST

START_TEST(test_b64_append_limit)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;

        b.limit = 7;
        ck_assert_int_eq(base64_append(&b, "foob", 4), -E2BIG);
        b.limit = 8;
        ck_assert_int_eq(base64_append(&b, "foob", 4), 0);
        ck_assert_str_eq(b.data, "Zm9vYg==");
}
END_TEST

/* ---- Base64 against naive references ------------------------------------
 *
 * The decoders' fast paths (a table, four characters at a time) are checked
 * against plain character-by-character versions of the rules written here,
 * over every byte value in every position and over random texts. */

static const char b64_alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int ref_value(unsigned char c)
{
        const char *p = c ? strchr(b64_alphabet, c) : NULL;

        return p ? (int)(p - b64_alphabet) : -1;
}

/* binascii.a2b_base64(text, strict_mode=False), step by step. Returns 0
 * with the bytes in out, or 1 with the error text in why. */
static int ref_decode(const unsigned char *t, size_t len, unsigned char *out, size_t *ret_len,
                      char *why, size_t why_size)
{
        size_t n = 0;
        int quad_pos = 0, pads = 0, left = 0;

        for (size_t i = 0; i < len; i++) {
                int v;

                if (t[i] == '=') {
                        if (quad_pos >= 2 && quad_pos + ++pads >= 4)
                                break;
                        continue;
                }
                v = ref_value(t[i]);
                if (v < 0)
                        continue;
                pads = 0;
                if (quad_pos == 0) {
                        left = v;
                } else if (quad_pos == 1) {
                        out[n++] = (unsigned char)(left << 2 | v >> 4);
                        left = v & 0x0f;
                } else if (quad_pos == 2) {
                        out[n++] = (unsigned char)(left << 4 | v >> 2);
                        left = v & 0x03;
                } else {
                        out[n++] = (unsigned char)(left << 6 | v);
                }
                quad_pos = (quad_pos + 1) % 4;
        }
        *ret_len = n;
        if (quad_pos == 0 || (pads > 0 && quad_pos >= 2 && quad_pos + pads >= 4))
                return 0;
        if (quad_pos == 1)
                snprintf(why, why_size,
                         "Invalid base64-encoded string: number of data characters (%zu) cannot "
                         "be 1 more than a multiple of 4",
                         n / 3 * 4 + 1);
        else
                snprintf(why, why_size, "Incorrect padding");
        return 1;
}

/* What b64encode writes and nothing else: groups of four alphabet
 * characters, the last of which may be "xx==" or "xxx=". Returns 0 or
 * -EINVAL. */
static int ref_decode_canonical(const unsigned char *t, size_t len, unsigned char *out,
                                size_t *ret_len)
{
        size_t n = 0;

        if (len % 4 != 0)
                return -EINVAL;
        for (size_t i = 0; i < len; i += 4) {
                int v[4];
                bool last = i + 4 == len;

                for (int k = 0; k < 4; k++)
                        v[k] = ref_value(t[i + k]);
                if (v[0] < 0 || v[1] < 0)
                        return -EINVAL;
                if (v[2] < 0 && !(last && t[i + 2] == '=' && t[i + 3] == '='))
                        return -EINVAL;
                if (v[3] < 0 && !(last && t[i + 3] == '='))
                        return -EINVAL;
                out[n++] = (unsigned char)(v[0] << 2 | v[1] >> 4);
                if (v[2] >= 0)
                        out[n++] = (unsigned char)(v[1] << 4 | v[2] >> 2);
                if (v[3] >= 0)
                        out[n++] = (unsigned char)(v[2] << 6 | v[3]);
        }
        *ret_len = n;
        return 0;
}

static size_t ref_encode(char *out, const unsigned char *p, size_t len)
{
        size_t n = 0;

        for (size_t i = 0; i < len; i += 3) {
                unsigned b0 = p[i], b1 = i + 1 < len ? p[i + 1] : 0;
                unsigned b2 = i + 2 < len ? p[i + 2] : 0;

                out[n++] = b64_alphabet[b0 >> 2];
                out[n++] = b64_alphabet[(b0 & 3) << 4 | b1 >> 4];
                out[n++] = i + 1 < len ? b64_alphabet[(b1 & 15) << 2 | b2 >> 6] : '=';
                out[n++] = i + 2 < len ? b64_alphabet[b2 & 63] : '=';
        }
        return n;
}

/* Both decoders on t[0..len) against the references. */
/* One decoding's outcome against the reference's: the same bytes, or the
 * same reason (why is freed). */
static void check_outcome(int r, int want_r, const void *got, size_t got_len, const void *want,
                          size_t want_len, char *why, const char *want_why)
{
        ck_assert_int_eq(r, want_r);
        if (r == 0) {
                ck_assert_uint_eq(got_len, want_len);
                ck_assert(memcmp(got, want, want_len) == 0);
        } else {
                ck_assert_str_eq(why, want_why);
                free(why);
        }
}

static void check_both(const unsigned char *t, size_t len)
{
        _cleanup_free_ unsigned char *want = malloc(len + 1), *buf = NULL;
        char *out = NULL, *why = NULL, want_why[160] = "";
        size_t out_len = 0, want_len = 0, step, n = 0;
        Base64Decoder d = BASE64_DECODER_INIT;
        int r, want_r;

        ck_assert_ptr_nonnull(want);
        want_r = ref_decode(t, len, want, &want_len, want_why, sizeof(want_why));
        r = base64_decode((const char *)t, len, &out, &out_len, &why);
        check_outcome(r, want_r, out, out_len, want, want_len, why, want_why);
        if (r == 0) {
                ck_assert_int_eq(out[out_len], '\0');
                free(out);
        }

        /* The same text piece by piece, cut every 1 to 5 bytes (by its
         * length, so that the many texts of the callers try all five). */
        buf = malloc(base64_decoded_max(len) + 8 * 3);
        ck_assert_ptr_nonnull(buf);
        step = 1 + len % 5;
        for (size_t i = 0; i < len; i += step) {
                size_t k = len - i < step ? len - i : step;
                size_t got = base64_decoder_feed(&d, (const char *)t + i, k, buf + n);

                ck_assert_uint_le(got, base64_decoded_max(k));
                n += got;
        }
        r = base64_decoder_finish(&d, &why);
        check_outcome(r, want_r, buf, n, want, want_len, why, want_why);

        out = NULL;
        want_r = ref_decode_canonical(t, len, want, &want_len);
        r = base64_decode_canonical((const char *)t, len, &out, &out_len);
        ck_assert_int_eq(r, want_r);
        if (r == 0) {
                ck_assert_uint_eq(out_len, want_len);
                ck_assert(memcmp(out, want, want_len) == 0);
                ck_assert_int_eq(out[out_len], '\0');
                free(out);
        } else {
                ck_assert_ptr_null(out);
        }
}

/* Every byte value in every position of texts that are otherwise valid:
 * whole groups, the padded endings, and a group in the middle of others. */
START_TEST(test_b64_every_byte)
{
        static const char *const texts[] = {"QUJD",     "QUI=",     "QQ==",         "QUJDREVG",
                                            "QUJDRA==", "QUJDREU=", "QUJDREVGR0hJ", "QUJDREVGR0g="};
        const char *base = texts[_i];
        size_t len = strlen(base);
        unsigned char t[16];

        for (size_t pos = 0; pos < len; pos++)
                for (unsigned c = 0; c < 256; c++) {
                        memcpy(t, base, len);
                        t[pos] = (unsigned char)c;
                        check_both(t, len);
                }
}
END_TEST

/* The exact outcomes of a few of those, so that the references cannot be
 * wrong together with the code. */
START_TEST(test_b64_every_byte_counts)
{
        unsigned char t[4];
        unsigned ok_lenient = 0, ok_canonical = 0;

        for (unsigned c = 0; c < 256; c++) {
                char *out = NULL, *why = NULL;
                size_t len = 0;

                memcpy(t, "QUJD", 4);
                t[1] = (unsigned char)c;
                if (base64_decode((const char *)t, 4, &out, &len, &why) == 0) {
                        ok_lenient++;
                        ck_assert_uint_eq(len, 3);
                        free(out);
                } else {
                        /* Anything else is skipped, leaving three data
                         * characters. */
                        ck_assert_str_eq(why, "Incorrect padding");
                        free(why);
                }
                out = NULL;
                if (base64_decode_canonical((const char *)t, 4, &out, &len) == 0) {
                        ok_canonical++;
                        free(out);
                }
        }
        ck_assert_uint_eq(ok_lenient, 64);
        ck_assert_uint_eq(ok_canonical, 64);
}
END_TEST

/* Padding: where '=' may stand, and what it ends. */
START_TEST(test_b64_padding)
{
        static const struct {
                const char *in;
                int lenient;   /* 0 or 1 (an error) */
                int canonical; /* 0 or -EINVAL */
                size_t n;      /* bytes decoded, when lenient is 0 */
        } cases[] = {
                {"QQ==", 0, 0, 1},           {"QUI=", 0, 0, 2},
                {"QUJD", 0, 0, 3},           {"Q===", 1, -EINVAL, 0},
                {"QQ=", 1, -EINVAL, 0},      {"QQ=A", 1, -EINVAL, 0},
                {"QQ==QUJD", 0, -EINVAL, 1}, {"QUI=QUJD", 0, -EINVAL, 2},
                {"QUJD====", 0, -EINVAL, 3}, {"=QUJD", 0, -EINVAL, 3},
                {"QU=JD", 0, -EINVAL, 3},    {"QUJ=D", 0, -EINVAL, 2},
                {"QQ=\n=", 0, -EINVAL, 1},   {"QUJDQQ==", 0, 0, 4},
                {"QUJDQUI=", 0, 0, 5},       {"QUJD=", 0, -EINVAL, 3},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *out = NULL, *why = NULL;
                size_t len = 0;
                int r;

                r = base64_decode(cases[i].in, strlen(cases[i].in), &out, &len, &why);
                ck_assert_msg(r == cases[i].lenient, "%s: %d", cases[i].in, r);
                if (r == 0) {
                        ck_assert_uint_eq(len, cases[i].n);
                        free(out);
                } else {
                        free(why);
                }
                out = NULL;
                r = base64_decode_canonical(cases[i].in, strlen(cases[i].in), &out, &len);
                ck_assert_msg(r == cases[i].canonical, "%s (canonical): %d", cases[i].in, r);
                if (r == 0) {
                        ck_assert_uint_eq(len, cases[i].n);
                        free(out);
                }
                check_both((const unsigned char *)cases[i].in, strlen(cases[i].in));
        }
}
END_TEST

/* Random data of random lengths up to a megabyte through the encoder and
 * both decoders, against the reference encoder; then random texts made of
 * alphabet characters, '=', white space and other bytes through both
 * decoders against the references. */
START_TEST(test_b64_random)
{
        enum { MAX = 1 << 20 };
        _cleanup_free_ unsigned char *data = malloc(MAX);
        _cleanup_free_ char *text = malloc(MAX / 3 * 4 + 8), *want = malloc(MAX / 3 * 4 + 8);
        unsigned seed = 12345;

        ck_assert(data && text && want);
        for (int round = 0; round < 40; round++) {
                size_t n = round < 30 ? (size_t)(rand_r(&seed) % 5000) : MAX - (size_t)round;
                size_t k;

                for (size_t i = 0; i < n; i++)
                        data[i] = (unsigned char)rand_r(&seed);
                k = base64_encode(text, data, n);
                ck_assert_uint_eq(k, ref_encode(want, data, n));
                ck_assert(memcmp(text, want, k) == 0);
                decodes_back(text, k, data, n);
        }
        for (int round = 0; round < 20000; round++) {
                static const char extra[] = "====\n \r\t-_.*";
                size_t n = (size_t)(rand_r(&seed) % 40);
                unsigned char t[40];

                for (size_t i = 0; i < n; i++) {
                        unsigned pick = (unsigned)rand_r(&seed) % 100;

                        if (pick < 80)
                                t[i] = (unsigned char)b64_alphabet[rand_r(&seed) % 64];
                        else if (pick < 95)
                                t[i] = (unsigned char)extra[rand_r(&seed) % (sizeof(extra) - 1)];
                        else
                                t[i] = (unsigned char)rand_r(&seed);
                }
                check_both(t, n);
        }
}
END_TEST

/* Long texts: every byte value in every position of texts of 72, 70 and
 * 71 bytes' Base64 (with and without padding), and random texts up to 420
 * characters with a stray byte here and there, decode as the reference
 * says; every length of data up to 300 bytes encodes as it says. */
START_TEST(test_b64_long_every_byte)
{
        static const size_t sizes[] = {72, 70, 71};
        unsigned char data[72], t[96];
        unsigned seed = 777;

        for (size_t i = 0; i < sizeof(data); i++)
                data[i] = (unsigned char)rand_r(&seed);
        for (size_t s = 0; s < ELEMENTSOF(sizes); s++) {
                size_t len = ref_encode((char *)t, data, sizes[s]);

                for (size_t pos = 0; pos < len; pos++)
                        for (unsigned c = 0; c < 256; c++) {
                                unsigned char keep = t[pos];

                                t[pos] = (unsigned char)c;
                                check_both(t, len);
                                t[pos] = keep;
                        }
        }
}
END_TEST

START_TEST(test_b64_long_random)
{
        unsigned char data[300], t[420];
        char text[420], want[420];
        unsigned seed = 4242;

        for (size_t n = 0; n <= sizeof(data); n++) {
                for (size_t i = 0; i < n; i++)
                        data[i] = (unsigned char)rand_r(&seed);
                ck_assert_uint_eq(base64_encode(text, data, n), ref_encode(want, data, n));
                ck_assert(memcmp(text, want, base64_encoded_len(n)) == 0);
        }
        for (int round = 0; round < 5000; round++) {
                size_t n = (size_t)(rand_r(&seed) % sizeof(t));

                for (size_t i = 0; i < n; i++)
                        t[i] = rand_r(&seed) % 200 ? (unsigned char)b64_alphabet[rand_r(&seed) % 64]
                                                   : (unsigned char)rand_r(&seed);
                check_both(t, n);
        }
}
END_TEST

/* Both readers around the sizes where their buffers grow: the first
 * buffer (a page for file_read_all, the file's size for the other) and
 * the cap, one byte each side. */
START_TEST(test_file_read_sizes)
{
        static const size_t sizes[] = {0, 1, 4094, 4095, 4096, 4097, 8191, 8192, 100000};
        char dir[] = "/tmp/test-util-XXXXXX";
        _cleanup_free_ char *data = malloc(100000);
        int dfd;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(dfd, 0);
        for (size_t i = 0; i < 100000; i++)
                data[i] = (char)('a' + i % 26);
        for (size_t k = 0; k < ELEMENTSOF(sizes); k++) {
                size_t n = sizes[k];
                char path[64];
                int fd = openat(dfd, "f", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

                ck_assert_int_ge(fd, 0);
                ck_assert_int_eq(write(fd, data, n), (ssize_t)n);
                close(fd);
                snprintf(path, sizeof(path), "%s/f", dir);
                for (int which = 0; which < 2; which++) {
                        char *text = NULL;
                        size_t len = 1;
                        int r;

                        r = which ? file_read_regular_at(dfd, "f", n, &text, &len)
                                  : file_read_all(path, n, &text, &len);
                        ck_assert_int_eq(r, 0);
                        ck_assert_uint_eq(len, n);
                        ck_assert(memcmp(text, data, n) == 0);
                        ck_assert_int_eq(text[n], '\0');
                        free(text);
                        r = which ? file_read_regular_at(dfd, "f", n + 1, &text, NULL)
                                  : file_read_all(path, n + 1, &text, NULL);
                        ck_assert_int_eq(r, 0);
                        ck_assert_uint_eq(strlen(text), n);
                        free(text);
                        if (n == 0)
                                continue;
                        text = NULL;
                        r = which ? file_read_regular_at(dfd, "f", n - 1, &text, &len)
                                  : file_read_all(path, n - 1, &text, &len);
                        ck_assert_int_eq(r, -EFBIG);
                        ck_assert_ptr_null(text);
                }
        }
        ck_assert_int_eq(unlinkat(dfd, "f", 0), 0);
        close(dfd);
        ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(test_file_read_regular_at)
{
        char *text = NULL;
        size_t len = 0;

        /* An absolute path ignores dirfd, as openat() does. */
        ck_assert_int_eq(file_read_regular_at(-1, "/proc/self/exe", 1, &text, &len), -EFBIG);
        ck_assert_int_eq(file_read_regular_at(AT_FDCWD, "/nonexistent/x", 10, &text, &len),
                         -ENOENT);
        /* What file_read_all reads, or fails on differently, is refused. */
        ck_assert_int_eq(file_read_regular_at(AT_FDCWD, "/", 10, &text, &len), -EINVAL);
        ck_assert_int_eq(file_read_regular_at(AT_FDCWD, "/dev/null", 10, &text, &len), -EINVAL);
        ck_assert_ptr_null(text);
}
END_TEST

START_TEST(test_file_pread_full)
{
        char path[] = "/tmp/test-util-pread-XXXXXX", buf[16];
        int fd = mkstemp(path);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(unlink(path), 0);
        ck_assert_int_eq(write(fd, "0123456789", 10), 10);
        ck_assert_int_eq(file_pread_full(fd, buf, 4, 3), 4);
        ck_assert_int_eq(memcmp(buf, "3456", 4), 0);
        /* Short only at the end of the file; the position is not moved. */
        ck_assert_int_eq(file_pread_full(fd, buf, sizeof(buf), 7), 3);
        ck_assert_int_eq(memcmp(buf, "789", 3), 0);
        ck_assert_int_eq(file_pread_full(fd, buf, 4, 10), 0);
        ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), 10);
        close(fd);
        ck_assert_int_eq(file_pread_full(fd, buf, 4, 0), -EBADF);
}
END_TEST

START_TEST(test_file_write_all)
{
        char path[] = "/tmp/test-util-write-XXXXXX";
        size_t len = 3 << 20, got = 0;
        char *data = malloc(len), *back = NULL;
        int fd = mkstemp(path);

        ck_assert_ptr_nonnull(data);
        ck_assert_int_ge(fd, 0);
        for (size_t i = 0; i < len; i++)
                data[i] = (char)(i * 7 + i / 251);
        ck_assert_int_eq(file_write_all(fd, data, len), 0);
        ck_assert_int_eq(file_write_all(fd, data, 0), 0);
        ck_assert_int_eq(file_read_all(path, len, &back, &got), 0);
        ck_assert_uint_eq(got, len);
        ck_assert_int_eq(memcmp(back, data, len), 0);
        ck_assert_int_eq(unlink(path), 0);
        close(fd);
        ck_assert_int_eq(file_write_all(fd, data, 1), -EBADF);
        free(back);
        free(data);
}
END_TEST

START_TEST(test_hexid)
{
        char a[33], b[33];

        ck_assert_int_eq(hexid_new(a), 0);
        ck_assert_int_eq(hexid_new(b), 0);
        ck_assert_uint_eq(strlen(a), 32);
        ck_assert_uint_eq(strspn(a, "0123456789abcdef"), 32);
        ck_assert_int_eq(a[12], '4');                 /* version 4 */
        ck_assert_ptr_nonnull(strchr("89ab", a[16])); /* RFC 4122 variant */
        ck_assert_str_ne(a, b);
        ck_assert(hex_is_lower(a, 32));
}
END_TEST

/* Only '0'-'9' and 'a'-'f' pass, over exactly the n bytes given. */
START_TEST(test_hex_is_lower)
{
        char enc[9];

        hex_encode("\x01\xab\xff\x90", 4, enc);
        ck_assert(hex_is_lower(enc, 8));
        ck_assert(hex_is_lower("", 0));
        ck_assert(hex_is_lower("0f/", 2)); /* the byte after n is not read */
        ck_assert(!hex_is_lower("0F", 2));
        ck_assert(!hex_is_lower("0g", 2));
        ck_assert(!hex_is_lower("0/", 2)); /* '0' - 1 */
        ck_assert(!hex_is_lower("0:", 2)); /* '9' + 1 */
        ck_assert(!hex_is_lower("0`", 2)); /* 'a' - 1 */
        ck_assert(!hex_is_lower("a\0", 2));
}
END_TEST

/* A big block starts on a huge page's boundary and its whole pages are
 * present before anything is written to it (MADV_POPULATE_WRITE); a small
 * one is plain malloc. */
START_TEST(test_big_malloc)
{
        size_t page = (size_t)sysconf(_SC_PAGESIZE), n = BIG_MALLOC_MIN * 4, pages, present = 0;
        _cleanup_free_ char *small = big_malloc(100);
        _cleanup_free_ char *big = big_malloc(n);
        _cleanup_free_ unsigned char *vec = NULL;
        char *from;

        ck_assert_ptr_nonnull(small);
        ck_assert_ptr_nonnull(big);
        ck_assert_uint_eq((uintptr_t)big % BIG_MALLOC_HUGE, 0);
        from = (char *)(((uintptr_t)big + page - 1) & ~(uintptr_t)(page - 1));
        pages = (size_t)(big + n - from) / page;
        vec = malloc(pages);
        ck_assert_ptr_nonnull(vec);
        ck_assert_int_eq(mincore(from, pages * page, vec), 0);
        for (size_t i = 0; i < pages; i++)
                present += vec[i] & 1;
        ck_assert_uint_eq(present, pages);
        memset(big, 'x', n);
        ck_assert_int_eq(big[n - 1], 'x');
}
END_TEST

/* Whether the mapping that holds p is marked MADV_HUGEPAGE ("hg" in its
 * VmFlags, /proc/self/smaps). */
static bool marked_huge(const void *p)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/self/smaps", "r");
        char line[512];
        bool in = false;

        ck_assert_ptr_nonnull(f);
        while (fgets(line, sizeof(line), f)) {
                unsigned long from, to;

                /* A mapping's first line; its fields' lines start with
                 * a name and a colon, which is not "<hex>-<hex>". */
                if (sscanf(line, "%lx-%lx ", &from, &to) == 2)
                        in = (uintptr_t)p >= from && (uintptr_t)p < to;
                else if (in && strncmp(line, "VmFlags:", 8) == 0)
                        return strstr(line, " hg") != NULL;
        }
        return false;
}

/* A big block that malloc carves out of the heap (a free stretch there
 * large enough, left by many small blocks freed under a live one) is not
 * marked MADV_HUGEPAGE: the heap's pages are used again for small blocks
 * after the block is freed and malloc_trim() has dropped them, and a
 * page fault there would then take a whole 2 MiB page, which an idle
 * agent keeps. A block of its own mapping goes with free(). */
START_TEST(test_big_malloc_heap)
{
        enum { N = 100000 };
        _cleanup_free_ void **small = calloc(N, sizeof(*small));
        _cleanup_free_ char *live = NULL, *big = NULL;

        ck_assert_ptr_nonnull(small);
        /* As main.c sets it. */
        (void)mallopt(M_MMAP_THRESHOLD, 128 * 1024);
        for (size_t i = 0; i < N; i++)
                ck_assert_ptr_nonnull(small[i] = malloc(64));
        live = malloc(64);
        for (size_t i = 0; i < N; i++)
                free(small[i]);
        big = big_malloc(3 * BIG_MALLOC_HUGE / 2);
        ck_assert_ptr_nonnull(big);
        /* The case this test is about: glibc's malloc puts the block in
         * the heap. ASan's and valgrind's malloc keep no heap below the
         * program break: there is no such case to check. */
        if ((uintptr_t)big >= (uintptr_t)sbrk(0))
                return;
        ck_assert(!marked_huge(big));
        memset(big, 'x', 3 * BIG_MALLOC_HUGE / 2);
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_test(tc, test_strbuf);
        tcase_add_test(tc, test_strbuf_limit);
        tcase_add_test(tc, test_file_read_all);
        tcase_add_test(tc, test_file_read_empty);
        tcase_add_test(tc, test_file_read_sizes);
        tcase_add_test(tc, test_file_read_regular_at);
        tcase_add_test(tc, test_file_pread_full);
        tcase_add_test(tc, test_file_write_all);
        tcase_add_loop_test(tc, test_b64_table, 0, ELEMENTSOF(b64_cases));
        tcase_add_test(tc, test_base64_vectors);
        tcase_add_loop_test(tc, test_b64_canonical, 0, ELEMENTSOF(b64_canonical_cases));
        tcase_add_test(tc, test_b64_round_trip);
        tcase_add_test(tc, test_b64_append_limit);
        tcase_add_loop_test(tc, test_b64_every_byte, 0, 8);
        tcase_add_test(tc, test_b64_every_byte_counts);
        tcase_add_test(tc, test_b64_padding);
        tcase_add_test(tc, test_b64_random);
        tcase_add_test(tc, test_b64_long_every_byte);
        tcase_add_test(tc, test_b64_long_random);
        tcase_add_test(tc, test_hexid);
        tcase_add_test(tc, test_hex_is_lower);
        tcase_add_test(tc, test_big_malloc);
        tcase_add_test(tc, test_big_malloc_heap);
}

int main(void)
{
        /* test_b64_random decodes ten 1 MiB texts piece by piece: under ASan
         * on a loaded machine that takes longer than Check's default 4 s. */
        return check_main_one("util", "core", NULL, NULL, 60, add_tests);
}
