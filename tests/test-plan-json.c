/* Tests for the JSON parse that keeps long runs of string text away from
 * jansson (agent/plan/plan-json.c, plan-json-runs.c): whatever the text,
 * it must give what the plain jansson parse gives, the same document with
 * its key order, or the same error with the same place.
 *
 * The threshold is lowered through plan_parse_json_runs() so that short
 * strings take the path; SIZE_MAX there is the plain parse. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan-internal.h"
#include "plan/plan.h"
#include "util/strbuf.h"
#include "test-lib.h"

#define PLAIN SIZE_MAX

typedef struct Outcome {
        int r;
        size_t runs;
        char *doc; /* compact dump, keys in document order */
        PlanError err;
} Outcome;

static void outcome_clear(Outcome *o)
{
        free(o->doc);
        plan_error_clear(&o->err);
}

static Outcome parse(const char *text, size_t len, const PlanLimits *lim, size_t min_run)
{
        Outcome o = {.err = PLAN_ERROR_INIT};
        json_t *doc = NULL;

        o.r = plan_parse_json_runs(text, len, lim, min_run, &doc, &o.runs, &o.err);
        if (doc) {
                o.doc = json_dumps(doc, JSON_PRESERVE_ORDER | JSON_ENCODE_ANY | JSON_COMPACT);
                json_decref(doc);
        }
        return o;
}

static int append_piece(void *userdata, const char *piece, size_t len)
{
        return strbuf_append(userdata, piece, len);
}

/* The Files' bodies of a document that plan_parse_json_kept() left in t,
 * put back as plain strings through plan_text_pieces(). */
static void materialize(json_t *doc, const PlanText *t)
{
        const char *id;
        json_t *file;

        json_object_foreach (json_object_get(doc, "Files"), id, file) {
                _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
                json_t *body = json_object_get(file, "Body");

                if (!json_is_string(body))
                        continue;
                ck_assert_int_eq(plan_text_pieces(t, body, append_piece, &b), 0);
                ck_assert_int_eq(json_object_set_new(file, "Body",
                                                     json_stringn(b.data ? b.data : "", b.len)),
                                 0);
        }
}

/* The parse that keeps the Files' bodies in the text (runs: 1 when it
 * did), with those bodies put back. */
static Outcome parse_kept(const char *text, size_t len, const PlanLimits *lim, size_t min_run)
{
        Outcome o = {.err = PLAN_ERROR_INIT};
        _cleanup_(plan_text_freep) PlanText *t = NULL;
        _cleanup_free_ char *copy = malloc(len + 1);
        json_t *doc = NULL;

        ck_assert_ptr_nonnull(copy);
        memcpy(copy, text, len);
        copy[len] = '\0';
        o.r = plan_parse_json_kept_runs(&copy, len, lim, min_run, &doc, &t, &o.err);
        /* The text goes with t, and only then. */
        ck_assert((t != NULL) == (copy == NULL));
        o.runs = t != NULL;
        if (doc) {
                materialize(doc, t);
                o.doc = json_dumps(doc, JSON_PRESERVE_ORDER | JSON_ENCODE_ANY | JSON_COMPACT);
                json_decref(doc);
        }
        return o;
}

static bool same_text(const char *a, const char *b)
{
        return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* How many parses kept some Files' body in the text, for the tests that
 * must see it done. */
static size_t kept_count;

/* Parse text both ways and count the differences (Check records every
 * assertion, so the loops count and assert once). *ret_runs gets how many
 * runs the fast parse kept away from jansson. */
static int differ(const char *text, size_t len, const PlanLimits *lim, size_t min_run,
                  size_t *ret_runs)
{
        Outcome plain = parse(text, len, lim, PLAIN);
        Outcome fast[2] = {parse(text, len, lim, min_run), parse_kept(text, len, lim, min_run)};
        int bad = 0;

        bad += plain.runs != 0;
        for (int k = 0; k < 2; k++) {
                Outcome *f = &fast[k];
                int was = bad;

                bad += plain.r != f->r;
                bad += !same_text(plain.doc, f->doc);
                bad += plain.err.code != f->err.code ||
                       !same_text(plain.err.message, f->err.message);
                bad += plain.err.line != f->err.line || plain.err.column != f->err.column;
                if (bad > was)
                        fprintf(stderr,
                                "differ (min_run %zu%s) on %.*s\n  plain %d %s %s\n  fast  %d %s "
                                "%s\n",
                                min_run, k ? ", kept" : "", (int)(len < 400 ? len : 400), text,
                                plain.r, plain.doc ? plain.doc : "-",
                                plain.err.message ? plain.err.message : "-", f->r,
                                f->doc ? f->doc : "-", f->err.message ? f->err.message : "-");
        }
        if (ret_runs)
                *ret_runs = fast[0].runs;
        kept_count += fast[1].runs;
        outcome_clear(&plain);
        outcome_clear(&fast[0]);
        outcome_clear(&fast[1]);
        return bad;
}

/* Hand-made texts, with the runs the fast parse must use (threshold 8). */
static const struct {
        const char *text;
        size_t runs;
} cases[] = {
        {"{\"a\": \"XXXXXXXX\"}", 1},
        {"{\"a\": \"XXXXXXX\"}", 0}, /* one under the threshold */
        {"{\"a\":\"XXXXXXXXX\"}", 1},
        {"{\"XXXXXXXX\": 1}", 0}, /* keys stay with jansson */
        {"{\"XXXXXXXX\" \t\r\n: \"YYYYYYYY\"}", 1},
        {"{\"a\": [\"XXXXXXXX\", \"YYYYYYYY\\n\"]}", 2},
        {"{\"a\": \"XXXXXXXX\\u00e9YYYYYYYY\"}", 2},
        {"{\"a\": \"\\u00e9XXXXXXXX\"}", 1},
        {"{\"a\": \"\\u00e9XXXXXXX\"}", 0},
        {"{\"a\": \"\\ud83d\\ude00XXXXXXXX\\\\\\\"YYYYYYYY\\/\"}", 2},
        {"{\"a\": \"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80!\"}", 1},
        {"{\"a\": {\"b\": {\"c\": [[\"XXXXXXXX\"]]}}, \"d\": \"YYYYYYYY\"}", 2},
        {"{\"a\": \"XXXXXXXX\", \"a\": 1}", 0},                     /* duplicate key */
        {"{\"XXXXXXXX\": \"YYYYYYYY\", \"XXXXXXXX\": 1}", 0},       /* duplicate long key */
        {"{\"a\": \"XXXXXXXX\", \"b\": \"\\u0000\"}", 0},           /* escaped NUL */
        {"{\"a\": \"XXXXXXXX\", \"b\": \"\\\\u0000\"}", 0},         /* its six bytes */
        {"{\"a\": \"XXXXXXXX\\n\", \"b\": \"\\t\\u0000\"}", 0},     /* after other escapes */
        {"{\"a\": \"XXX\tXXXXXXXX\"}", 0},                          /* raw control character */
        {"{\"a\": \"XXXXXXXX\\x\"}", 0},                            /* bad escape */
        {"{\"a\": \"XXXXXXXX\\u12\"}", 0},                          /* short \u escape */
        {"{\"a\": \"XXXXXXXX\\ud800\"}", 0},                        /* lone surrogate */
        {"{\"a\": \"XXXXXXXX\"} x", 0},                             /* trailing garbage */
        {"{\"a\": \"XXXXXXXX\"", 0},                                /* truncated */
        {"{\"a\": \"XXXXXXXX", 0},                                  /* in the string */
        {"{\"a\": \"XXXXXXXX\": 1}", 0},                            /* a value used as key */
        {"{\"a\": \"XXXXXXXX\" \"b\": 1}", 0},                      /* missing comma */
        {"{\"a\": \"XXXXXXXX\", \"b\": 123456789012345678901}", 0}, /* integer overflow */
        {"{\"a\": \"XXXXXXXX\", \"b\": 1e999}", 0},                 /* real overflow */
        {"{\"a\": \"XXXXXXXX\", \"b\": [1.5, -0, 2e3, true, null]}", 1},
        /* Files' bodies, which the kept parse leaves in the text. */
        {"{\"Files\": {\"f\": {\"Body\": \"XXXXXXXX\\n\"}}}", 1},
        {"{\"Files\": {\"f\": {\"Body\": \"\\u00e9XXXXXXXX\\\"YYYYYYYY\\n\"}}}", 2},
        {"{\"Files\": {\"f\": {\"Body\": \"XXXXXXXX\", \"Body\": \"YYYYYYYY\"}}}", 0},
        {"{\"Files\": {\"f\": {\"Body\": [\"XXXXXXXX\"]}, \"Body\": \"YYYYYYYY\"}}", 2},
        {"{\"Files\": {\"f\": {\"Body\": \"XXXXXXXX\"}}, \"g\": {\"Body\": \"YYYYYYYY\"}}", 2},
        {"{\"Files\": {\"f\": {\"Body\": \"XXXXXXXX\\u0000\"}}}", 0},
        {"\"XXXXXXXX\"", 0}, /* not an object */
        {"[\"XXXXXXXX\"]", 0},
        {"{\"a\": \"XXXXXXXX\", \"b\": [[[[[[[[1]]]]]]]]}", 0}, /* too deep (limit 8) */
};

START_TEST(test_cases)
{
        const char *text = cases[_i].text;
        PlanLimits lim = PLAN_LIMITS_DEFAULT;
        size_t runs = 0;

        lim.max_depth = 8;
        ck_assert_int_eq(differ(text, strlen(text), &lim, 8, &runs), 0);
        ck_assert_uint_eq(runs, cases[_i].runs);
}
END_TEST

/* The control-character test, word by word and byte by byte: every
 * position of every length up to 200, with bytes on both sides of 0x20
 * and those whose high bit is set (UTF-8 continuation and lead bytes). */
START_TEST(test_plain)
{
        static const unsigned char bytes[] = {0x00, 0x01, 0x09, 0x0a, 0x1f, 0x20, 0x21,
                                              0x7f, 0x80, 0x9f, 0xa0, 0xc3, 0xff};
        char buf[200];
        int bad = 0;

        for (size_t len = 0; len <= sizeof(buf); len++) {
                memset(buf, 'A', sizeof(buf));
                bad += !plan_runs_plain(buf, len);
                for (size_t at = 0; at < len; at++)
                        for (size_t b = 0; b < ELEMENTSOF(bytes); b++) {
                                buf[at] = (char)bytes[b];
                                bad += plan_runs_plain(buf, len) != (bytes[b] >= 0x20);
                                /* A byte past the end changes nothing. */
                                if (len < sizeof(buf)) {
                                        buf[len] = '\0';
                                        bad += plan_runs_plain(buf, len) != (bytes[b] >= 0x20);
                                        buf[len] = 'A';
                                }
                                buf[at] = 'A';
                        }
        }
        ck_assert_int_eq(bad, 0);
}
END_TEST

static uint64_t rng_state = 0x2545f4914f6cdd1du;

static uint64_t rng(void)
{
        return test_rng(&rng_state);
}

static size_t pick(size_t n)
{
        return (size_t)(rng() % n);
}

static void put(StrBuf *b, const char *s)
{
        ck_assert_int_eq(strbuf_puts(b, s), 0);
}

static void space(StrBuf *b)
{
        static const char *const ws[] = {"", "", " ", "\n", " \t", "\r\n  "};

        put(b, ws[pick(ELEMENTSOF(ws))]);
}

/* A string literal of pieces: runs of text around the threshold, escapes
 * and multibyte characters, next to each other in any order. */
static void string(StrBuf *b, size_t threshold)
{
        static const char *const escapes[] = {"\\n",     "\\\"",    "\\\\",           "\\/",
                                              "\\u00e9", "\\u20AC", "\\ud83d\\ude00", "\\t"};
        static const char *const chars[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
                                            "u0000"};
        static const char plain[] =
                "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/= :{}[],";
        size_t pieces = pick(4);

        put(b, "\"");
        for (size_t p = 0; p < pieces; p++) {
                size_t kind = pick(4), n;

                if (kind == 0) {
                        put(b, escapes[pick(ELEMENTSOF(escapes))]);
                        continue;
                }
                /* Lengths just under, at and over the threshold, or any. */
                n = kind == 3 ? pick(3 * threshold) : threshold - 1 + pick(3);
                for (size_t i = 0; i < n; i++)
                        if (pick(16) == 0)
                                put(b, chars[pick(ELEMENTSOF(chars))]);
                        else
                                ck_assert_int_eq(strbuf_putc(b, plain[pick(sizeof(plain) - 1)]), 0);
        }
        put(b, "\"");
}

static void value(StrBuf *b, size_t threshold, int depth)
{
        static const char *const scalars[] = {
                "1",    "-0",    "1.5",  "2e3", "-12.5E-3",
                "true", "false", "null", "0",   "9223372036854775807"};
        size_t kind = depth > 4 ? 1 + pick(2) : pick(5);
        size_t n;

        space(b);
        switch (kind) {
        case 0:
        case 3:
                put(b, "{");
                n = pick(4);
                for (size_t i = 0; i < n; i++) {
                        char key[32];

                        if (i)
                                put(b, ",");
                        space(b);
                        if (pick(4) == 0)
                                string(b, threshold); /* a long key, now and then */
                        else {
                                snprintf(key, sizeof(key), "\"k%zu\"", i);
                                put(b, key);
                        }
                        space(b);
                        put(b, ":");
                        value(b, threshold, depth + 1);
                }
                space(b);
                put(b, "}");
                break;
        case 1:
                string(b, threshold);
                break;
        case 2:
                put(b, scalars[pick(ELEMENTSOF(scalars))]);
                break;
        default:
                put(b, "[");
                n = pick(4);
                for (size_t i = 0; i < n; i++) {
                        if (i)
                                put(b, ",");
                        value(b, threshold, depth + 1);
                }
                space(b);
                put(b, "]");
        }
        space(b);
}

/* A plan: mostly an object at the top, now and then anything. */
static char *generate(size_t threshold, size_t *ret_len)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        char *text;

        if (pick(8) == 0)
                value(&b, threshold, 0);
        else {
                put(&b, "{\"Body\": ");
                value(&b, threshold, 1);
                put(&b, ", \"Files\": {\"f\": ");
                value(&b, threshold, 2);
                /* A file's Body, which the kept parse leaves in the text:
                 * a string, or now and then anything. */
                put(&b, ", \"g\": {\"BodyType\": \"Base64\", \"Body\": ");
                if (pick(4) == 0)
                        value(&b, threshold, 3);
                else
                        string(&b, threshold);
                put(&b, "}}}");
        }
        *ret_len = b.len;
        ck_assert_int_eq(strbuf_steal(&b, &text), 0);
        return text;
}

/* A broken copy of a text: truncated, a byte changed, a bad escape after a
 * string, trailing garbage, a key repeated, a control character or an
 * escaped NUL in a run. */
static char *mutate(const char *text, size_t len, size_t *ret_len)
{
        static const char *const junk[] = {"\\x", "\\u12", "\"", "\\", "\t",    "\\u0000",   ",",
                                           "}",   "]",     ":",  "x",  "1e999", "\"k0\": 1,"};
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        size_t at = pick(len + 1);
        char *out;

        switch (pick(4)) {
        case 0: /* truncated */
                ck_assert_int_eq(strbuf_append(&b, text, at), 0);
                break;
        case 1: /* trailing garbage */
                ck_assert_int_eq(strbuf_append(&b, text, len), 0);
                put(&b, junk[pick(ELEMENTSOF(junk))]);
                break;
        case 2: /* something inserted */
                ck_assert_int_eq(strbuf_append(&b, text, at), 0);
                put(&b, junk[pick(ELEMENTSOF(junk))]);
                ck_assert_int_eq(strbuf_append(&b, text + at, len - at), 0);
                break;
        default: /* a repeated key at the top: "k0" is the generator's first key */
                if (len > 1 && text[0] == '{') {
                        put(&b, "{\"k0\": 1, \"k0\": 2, ");
                        ck_assert_int_eq(strbuf_append(&b, text + 1, len - 1), 0);
                } else
                        ck_assert_int_eq(strbuf_append(&b, text, at), 0);
        }
        *ret_len = b.len;
        ck_assert_int_eq(strbuf_steal(&b, &out), 0);
        return out;
}

START_TEST(test_generated)
{
        static const size_t thresholds[] = {1, 2, 5, 8, 16, 64};
        size_t used = 0, taken = 0, total = 0;
        int bad = 0;

        kept_count = 0;
        for (int round = 0; round < 2500; round++) {
                size_t threshold = thresholds[pick(ELEMENTSOF(thresholds))], len, runs = 0;
                _cleanup_free_ char *text = generate(threshold, &len);

                bad += differ(text, len, NULL, threshold, &runs);
                taken += runs > 0;
                used += runs;
                total++;
                for (int m = 0; m < 4; m++) {
                        _cleanup_free_ char *broken = NULL;
                        size_t blen;

                        broken = mutate(text, len, &blen);
                        bad += differ(broken, blen, NULL, threshold, NULL);
                        total++;
                }
        }
        ck_assert_int_eq(bad, 0);
        /* The runs path must have been taken a fair number of times, and
         * Files' bodies kept in the text too. */
        ck_assert_msg(taken > 600 && used > 1200, "taken %zu times, %zu runs", taken, used);
        ck_assert_msg(kept_count > 300, "kept %zu times", kept_count);
        ck_assert_uint_eq(total, 12500);
}
END_TEST

/* Every prefix of a text with runs next to escapes: errors in strings, at
 * their ends and between them come out as the plain parse has them. */
START_TEST(test_every_prefix)
{
        static const char text[] =
                "{\"Body\": \"XXXXXXXX\\nYYYYYYYY\", \"a\": [\"\\u00e9ZZZZZZZZ\","
                " 12, \"WWWWWWWW\\\"\"], \"LLLLLLLL\": \"caf\xc3\xa9 VVVVVVVV\"}";
        size_t runs = 0;
        int bad = 0;

        for (size_t n = 0; n < sizeof(text) - 1; n++)
                bad += differ(text, n, NULL, 8, NULL);
        ck_assert_int_eq(bad, 0);
        ck_assert_int_eq(differ(text, sizeof(text) - 1, NULL, 8, &runs), 0);
        ck_assert_uint_eq(runs, 5);
}
END_TEST

/* The real threshold, with plans shaped as the engine's: a Base64 file with
 * a trailing newline escape, just under, at and above 64 KiB. */
START_TEST(test_default_threshold)
{
        static const size_t sizes[] = {PLAN_JSON_LONG_RUN - 1, PLAN_JSON_LONG_RUN, 3 * 1024 * 1024};
        static const size_t expect[] = {0, 1, 1};

        for (size_t s = 0; s < ELEMENTSOF(sizes); s++) {
                _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
                _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
                _cleanup_json_ json_t *doc = NULL;
                const char *body;
                size_t runs = 99, bad = 0;

                put(&b, "{\"Files\": {\"f\": {\"BodyType\": \"Base64\", \"Body\": \"");
                for (size_t i = 0; i < sizes[s]; i++)
                        ck_assert_int_eq(strbuf_putc(&b, "ABCD+/09"[i % 8]), 0);
                put(&b, "\\n\"}}, \"ID\": \"x\"}");

                ck_assert_int_eq(differ(b.data, b.len, NULL, PLAN_JSON_LONG_RUN, &runs), 0);
                ck_assert_uint_eq(runs, expect[s]);

                /* The public entry point takes the same path. */
                ck_assert_int_eq(plan_parse_json(b.data, b.len, NULL, &doc, &err), 0);
                body = json_string_value(json_object_get(
                        json_object_get(json_object_get(doc, "Files"), "f"), "Body"));
                ck_assert_ptr_nonnull(body);
                ck_assert_uint_eq(strlen(body), sizes[s] + 1);
                for (size_t i = 0; i < sizes[s]; i++)
                        bad += body[i] != "ABCD+/09"[i % 8];
                ck_assert_uint_eq(bad, 0);
                ck_assert_int_eq(body[sizes[s]], '\n');
        }
}
END_TEST

static Suite *plan_json_suite(void)
{
        Suite *s = suite_create("plan-json");
        TCase *tc = tcase_create("runs");

        /* Generous: these also run under valgrind. */
        tcase_set_timeout(tc, 600);
        tcase_add_loop_test(tc, test_cases, 0, (int)ELEMENTSOF(cases));
        tcase_add_test(tc, test_plain);
        tcase_add_test(tc, test_generated);
        tcase_add_test(tc, test_every_prefix);
        tcase_add_test(tc, test_default_threshold);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return check_run(plan_json_suite());
}
