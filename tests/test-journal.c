/* Tests for the journal: plan.json byte for byte as the reference writes
 * it, the reference's own files, corrupt files, entry names, restart
 * states, the daemon's order of calls, and what the reference would see of
 * our directory. Stamps and done records are in test-journal-replay.c;
 * failures and crashes at each file operation in test-journal-faults.c;
 * the index in test-journal-index.c. */
#include "test-journal.h"
#include "test-journal-main.h"
#include "util/base64.h"
#include "util/strbuf.h"

/* --- plan.json ---------------------------------------------------------- */

static const char *const layout_cases[] = {"case-1", "case-2", "case-3"};

static char *data_file(const char *name, const char *ext, size_t *ret_len)
{
        _cleanup_free_ char *p = NULL;

        ck_assert_int_ge(asprintf(&p, "%s/journal/%s.%s", TEST_DATA_DIR, name, ext), 0);
        return slurp(p, ret_len);
}

START_TEST(test_layout)
{
        _cleanup_(journal_freep) Journal *j = open_with(NULL);
        _cleanup_(journal_plan_freep) JournalPlan *p = NULL;
        _cleanup_free_ char *body = NULL, *sig = NULL, *meta = NULL, *want = NULL;
        _cleanup_free_ char *got = NULL, *dir = NULL, *first = NULL, *pp = NULL;
        char ts[JOURNAL_TS_MAX], *reply;
        size_t body_len, sig_len, len;
        struct stat st;

        body = data_file(layout_cases[_i], "body", &body_len);
        sig = data_file(layout_cases[_i], "sig", &sig_len);
        meta = data_file(layout_cases[_i], "meta", NULL);
        want = data_file(layout_cases[_i], "json", NULL);
        /* meta: the message_id line, then the reply_to line if any. */
        reply = strchr(meta, '\n');
        *reply++ = '\0';
        if (*reply)
                reply[strlen(reply) - 1] = '\0';
        else
                reply = NULL;

        ck_assert_int_eq(journal_put_plan(j, body, body_len, sig, sig_len, meta, reply, ts), 0);
        ck_assert_uint_eq(strlen(ts), 14);
        ck_assert_uint_eq(strspn(ts, "0123456789"), 14);

        pp = pathf("plans/%s/plan.json", ts);
        got = slurp(pp, &len);
        ck_assert_str_eq(got, want);
        ck_assert_uint_eq(len, strlen(want));
        free(pp), pp = pathf("plans");
        ck_assert_int_eq(stat(pp, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0700);
        free(pp), pp = pathf("plans/%s", ts);
        ck_assert_int_eq(stat(pp, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0700);
        free(pp), pp = pathf("plans/%s/.plan.json.tmp", ts);
        ck_assert_int_ne(access(pp, F_OK), 0);
        dir = plans_dir();
        free(pp), pp = NULL;
        ck_assert_int_ge(asprintf(&pp, "%s done", ts), 0);
        ck_assert_str_eq(dir, pp);

        /* The reference would pick it up as its next plan. */
        first = reference_first("plan.json");
        ck_assert_str_eq(first, ts);
        free(first), first = reference_first("result.json");
        ck_assert_ptr_null(first);

        ck_assert_int_eq(journal_load_plan(j, ts, &p, NULL), 0);
        ck_assert_uint_eq(p->body_len, body_len);
        ck_assert_mem_eq(p->body, body, body_len);
        ck_assert_int_eq(p->body[body_len], '\0');
        if (sig_len == 0) {
                ck_assert_ptr_null(p->signature);
                ck_assert_uint_eq(p->signature_len, 0);
        } else {
                ck_assert_uint_eq(p->signature_len, sig_len);
                ck_assert_mem_eq(p->signature, sig, sig_len);
        }
        ck_assert_str_eq(json_string_value(p->id), meta);
        if (reply)
                ck_assert_str_eq(json_string_value(p->reply_to), reply);
        else
                ck_assert(json_is_null(p->reply_to));
}
END_TEST

/* Bodies larger than the buffer plan.json is written through (64 KiB of
 * text, 49,149 bytes of body after the 10 of '{"Data": "'), cut at every
 * kind of boundary: the text is one b64encode() of the whole body. */
static const size_t large_cases[] = {49149, 49150, 49151, 49152, 65536, 196609, 1u << 20};

START_TEST(test_large)
{
        _cleanup_(journal_freep) Journal *j = open_test();
        _cleanup_(journal_plan_freep) JournalPlan *p = NULL;
        _cleanup_free_ unsigned char *body = malloc(large_cases[_i]);
        _cleanup_strbuf_ StrBuf want = STRBUF_INIT;
        _cleanup_free_ char *got = NULL, *pp = NULL;
        const unsigned char sig[5] = {0xff, 0, 1, 2, 3};
        size_t n = large_cases[_i], len;
        char ts[JOURNAL_TS_MAX];
        uint32_t x = 2463534242u;

        ck_assert_ptr_nonnull(body);
        for (size_t i = 0; i < n; i++) {
                x ^= x << 13, x ^= x >> 17, x ^= x << 5;
                body[i] = (unsigned char)x;
        }
        ck_assert_int_eq(journal_put_plan(j, body, n, sig, sizeof(sig), "m\xffid", "rq", ts), 0);
        ck_assert_int_ge(strbuf_puts(&want, "{\"Data\": \""), 0);
        ck_assert_int_ge(base64_append(&want, body, n), 0);
        ck_assert_int_ge(strbuf_puts(&want, "\", \"Signature\": \"/wABAgM=\", \"ID\": "
                                            "\"m\\ufffdid\", \"ReplyTo\": \"rq\"}"),
                         0);
        pp = pathf("plans/%s/plan.json", ts);
        got = slurp(pp, &len);
        ck_assert_uint_eq(len, want.len);
        ck_assert_mem_eq(got, want.data, len);

        /* From memory, then from plan.json. */
        for (int from_disk = 0; from_disk < 2; from_disk++) {
                p = journal_plan_free(p);
                ck_assert_int_eq(journal_load_plan(j, ts, &p, NULL), 0);
                ck_assert_uint_eq(p->body_len, n);
                ck_assert_mem_eq(p->body, body, n);
                ck_assert_uint_eq(p->signature_len, sizeof(sig));
                ck_assert_mem_eq(p->signature, sig, sizeof(sig));
        }
}
END_TEST

/* A plan of the largest body an agent takes, with the largest signature,
 * message_id and reply_to the broker can deliver, is read back from
 * plan.json within journal_plan_file_max() of that body size. */
START_TEST(test_plan_file_max)
{
        enum { BODY_MAX = 3001, SIG = 1 << 20 };
        JournalOptions o = JOURNAL_OPTIONS_DEFAULT;
        _cleanup_(journal_freep) Journal *j = NULL;
        _cleanup_(journal_plan_freep) JournalPlan *p = NULL;
        _cleanup_free_ char *body = malloc(BODY_MAX), *sig = malloc(SIG);
        char id[256], ts[JOURNAL_TS_MAX];

        ck_assert(body && sig);
        memset(body, '\xff', BODY_MAX);
        memset(sig, '\xff', SIG);
        memset(id, '\xff', sizeof(id) - 1);
        id[sizeof(id) - 1] = '\0';
        o.ops = &test_ops;
        o.max_plan_file = journal_plan_file_max(BODY_MAX);
        ck_assert_uint_ge(journal_plan_file_max((size_t)1 << 30), ((size_t)1 << 30) / 3 * 4);
        j = open_with(&o);
        ck_assert_int_eq(journal_put_plan(j, body, BODY_MAX, sig, SIG, id, id, ts), 0);
        /* Read back from the file: a new journal holds nothing in memory. */
        j = journal_free(j);
        j = open_with(&o);
        ck_assert_int_eq(journal_load_plan(j, ts, &p, NULL), 0);
        ck_assert_uint_eq(p->body_len, BODY_MAX);
        ck_assert_uint_eq(p->signature_len, SIG);
}
END_TEST

/* The plan just stored is read back from memory, exactly as plan.json
 * would give it, once; stored_here tells it from a plan found at open. */
START_TEST(test_held_plan)
{
        _cleanup_(journal_freep) Journal *j = open_with(NULL);
        _cleanup_(journal_plan_freep) JournalPlan *mem = NULL, *disk = NULL;
        _cleanup_free_ char *two = NULL, *body = NULL;
        const char *kept;
        char pa[64], pb[64], c[JOURNAL_TS_MAX];
        static const char other[] = "{\"Data\": \"ZWxzZQ==\", \"Signature\": \"\", \"ID\": \"x\", "
                                    "\"ReplyTo\": null}";
        char a[JOURNAL_TS_MAX], b[JOURNAL_TS_MAX];

        ck_assert_int_eq(journal_put_plan(j, "body\377", 5, "\x80\x00", 2, "a\377b", "\xc3q", a),
                         0);
        /* Stored from a buffer the journal may take: it does not, since a
         * plan is kept already. */
        two = strdup("two");
        ck_assert_int_eq(journal_put_plan_owned(j, &two, 3, NULL, 0, "id2", NULL, b), 0);
        ck_assert_str_eq(two, "two");
        /* Both files changed behind the journal's back ("else"). */
        snprintf(pa, sizeof(pa), "plans/%s/plan.json", a);
        snprintf(pb, sizeof(pb), "plans/%s/plan.json", b);
        put_file(pa, other);
        put_file(pb, other);

        /* a was kept: what was stored, not what the file holds now. */
        ck_assert_int_eq(journal_load_plan(j, a, &mem, NULL), 0);
        ck_assert_uint_eq(mem->body_len, 5);
        ck_assert_mem_eq(mem->body, "body\377", 6);
        ck_assert_uint_eq(mem->signature_len, 2);
        ck_assert_mem_eq(mem->signature, "\x80\x00", 2);
        ck_assert_str_eq(json_string_value(mem->id), "a\xef\xbf\xbd"
                                                     "b");
        ck_assert_str_eq(json_string_value(mem->reply_to), "\xef\xbf\xbdq");
        ck_assert(mem->stored_here);
        /* Handed over once: then the file is read, and so is b's, stored
         * while a was kept; changed behind the journal's back, both are
         * refused for their seal. */
        ck_assert_int_eq(journal_load_plan(j, a, &disk, NULL), JOURNAL_FORGED);
        ck_assert_int_eq(journal_load_plan(j, b, &disk, NULL), JOURNAL_FORGED);
        ck_assert_ptr_null(disk);

        /* None is kept now: the buffer is taken and handed back. */
        body = strdup("three");
        kept = body;
        ck_assert_int_eq(journal_put_plan_owned(j, &body, 5, NULL, 0, "id3", NULL, c), 0);
        ck_assert_ptr_null(body);
        mem = journal_plan_free(mem);
        ck_assert_int_eq(journal_load_plan(j, c, &mem, NULL), 0);
        ck_assert_ptr_eq(mem->body, kept);
        ck_assert_str_eq(mem->body, "three");
}
END_TEST

/* What is kept equals what the file gives after a restart, byte for byte,
 * and a plan found at open is not stored_here. */
START_TEST(test_held_plan_as_read)
{
        _cleanup_(journal_freep) Journal *j = open_with(NULL);
        _cleanup_(journal_plan_freep) JournalPlan *mem = NULL, *disk = NULL;
        const unsigned char sig[3] = {0xff, 0, 7};
        char ts[JOURNAL_TS_MAX];

        ck_assert_int_eq(journal_put_plan(j, "{\"a\": 1}", 8, sig, sizeof(sig),
                                          "\xf0\x9f\x98\x80 \xed\xa0\x80", "\xe2\x82", ts),
                         0);
        ck_assert_int_eq(journal_load_plan(j, ts, &mem, NULL), 0);
        j = journal_free(j);
        j = open_with(NULL);
        ck_assert_int_eq(journal_load_plan(j, ts, &disk, NULL), 0);
        ck_assert_uint_eq(mem->body_len, disk->body_len);
        ck_assert_mem_eq(mem->body, disk->body, disk->body_len + 1);
        ck_assert_uint_eq(mem->signature_len, disk->signature_len);
        ck_assert_mem_eq(mem->signature, disk->signature, disk->signature_len);
        ck_assert(json_equal(mem->id, disk->id));
        ck_assert(json_equal(mem->reply_to, disk->reply_to));
        ck_assert(mem->stored_here);
        ck_assert(!disk->stored_here);
}
END_TEST

/* A result is kept with the SourceID and ReplyTo its caller gave, and
 * given back from memory; after a restart they are read from the file. */
START_TEST(test_kept_result)
{
        _cleanup_(journal_freep) Journal *j = open_with(NULL);
        _cleanup_(journal_result_freep) JournalResult *r = NULL;
        _cleanup_json_ json_t *sid = json_string("given"), *rt = json_string("rq");
        static const char text[] = "{\"SourceID\": \"in-text\", \"ReplyTo\": \"x\"}";
        _cleanup_free_ char *rp = NULL, *saved = NULL, *back = NULL;
        JournalResultIds ids = {sid, rt};
        char ts[JOURNAL_TS_MAX], ts2[JOURNAL_TS_MAX], rel[64];
        size_t len;

        ck_assert_int_eq(journal_put_plan(j, "{}", 2, NULL, 0, "id", NULL, ts), 0);
        ck_assert_int_eq(journal_put_result(j, ts, text, strlen(text), &ids), 0);
        /* Gone from the disk behind the journal's back: still answered. */
        snprintf(rel, sizeof(rel), "plans/%s/result.json", ts);
        rp = pathf("%s", rel);
        saved = pathf("%s.saved", rel);
        ck_assert_int_eq(rename(rp, saved), 0);
        ck_assert_int_eq(journal_get_result(j, ts, &r), 0);
        ck_assert_str_eq(r->text, text);
        ck_assert_uint_eq(r->len, strlen(text));
        ck_assert_str_eq(json_string_value(r->source_id), "given");
        ck_assert_str_eq(json_string_value(r->reply_to), "rq");
        r = journal_result_free(r);
        ck_assert_int_eq(journal_load_result(j, ts, &back, &len), 0);
        ck_assert_str_eq(back, text);

        /* Without ids: read from the text, once, in memory. No ReplyTo. */
        ck_assert_int_eq(journal_put_plan(j, "{}", 2, NULL, 0, "id2", NULL, ts2), 0);
        ck_assert_int_eq(journal_put_result(j, ts2, "{\"SourceID\": 7}", 15, NULL), 0);
        ck_assert_int_eq(journal_get_result(j, ts2, &r), 0);
        ck_assert_int_eq(json_integer_value(r->source_id), 7);
        ck_assert_ptr_null(r->reply_to);
        r = journal_result_free(r);
        /* Text that is no document is not kept: it reads as corrupt. */
        ck_assert_int_eq(journal_put_result(j, ts2, "[1]", 3, NULL), 0);
        ck_assert_int_eq(journal_get_result(j, ts2, &r), JOURNAL_CORRUPT);
        r = journal_result_free(r);

        /* After a restart: from result.json (the very file, with its seal). */
        ck_assert_int_eq(rename(saved, rp), 0);
        j = journal_free(j);
        j = open_with(NULL);
        ck_assert_int_eq(journal_get_result(j, ts, &r), 0);
        ck_assert_str_eq(r->text, text);
        ck_assert_str_eq(json_string_value(r->source_id), "in-text");
        ck_assert_str_eq(json_string_value(r->reply_to), "x");
        r = journal_result_free(r);
        /* One that is no document: corrupt, with its text. */
        ck_assert_int_eq(journal_get_result(j, ts2, &r), JOURNAL_CORRUPT);
        ck_assert_str_eq(r->text, "[1]");
        ck_assert_ptr_null(r->source_id);
}
END_TEST

/* Results beyond JOURNAL_KEPT_RESULTS are read from their file. */
START_TEST(test_kept_results_bound)
{
        _cleanup_(journal_freep) Journal *j = open_with(NULL);
        _cleanup_(journal_result_freep) JournalResult *r = NULL;
        size_t n = JOURNAL_KEPT_RESULTS / 2 + 1;
        _cleanup_free_ char *big = malloc(n + 1);
        char ts[2][JOURNAL_TS_MAX], rel[64];

        ck_assert_ptr_nonnull(big);
        memset(big, ' ', n);
        big[0] = '{', big[n - 1] = '}', big[n] = '\0';
        for (int i = 0; i < 2; i++) {
                ck_assert_int_eq(journal_put_plan(j, "{}", 2, NULL, 0, "id", NULL, ts[i]), 0);
                ck_assert_int_eq(journal_put_result(j, ts[i], big, n, NULL), 0);
        }
        /* The second did not fit: its file is read (changed behind the
         * journal's back, it is refused for its seal). */
        snprintf(rel, sizeof(rel), "plans/%s/result.json", ts[1]);
        put_file(rel, "{}");
        ck_assert_int_eq(journal_get_result(j, ts[1], &r), JOURNAL_FORGED);
        r = journal_result_free(r);
        /* Once the first is gone, there is room again. */
        ck_assert_int_eq(journal_remove(j, ts[0], false), 0);
        ck_assert_int_eq(journal_put_result(j, ts[1], big, n, NULL), 0);
        put_file(rel, "{}");
        ck_assert_int_eq(journal_get_result(j, ts[1], &r), 0);
        ck_assert_uint_eq(r->len, n);
}
END_TEST

/* A write that fails in the middle of a large plan.json leaves nothing. */
START_TEST(test_large_write_fails)
{
        _cleanup_(journal_freep) Journal *j = open_test();
        _cleanup_free_ char *body = calloc(1, 200000), *dir = NULL;
        char ts[JOURNAL_TS_MAX] = "";

        ck_assert_ptr_nonnull(body);
        fx.calls = 0;
        fx.fail_at = 7; /* clock, mkdirat, two openat, then the third write */
        ck_assert_int_eq(journal_put_plan(j, body, 200000, NULL, 0, "id", NULL, ts), -ENOSPC);
        ck_assert_str_eq(ts, "");
        dir = plans_dir();
        ck_assert_str_eq(dir, "done");
}
END_TEST

/* The exact bytes of the reference's unit test plan.json load, with its
 * integer ID. */
START_TEST(test_reference_files)
{
        _cleanup_free_ char *text = data_file("reference-plan", "json", NULL), *res = NULL;
        _cleanup_(journal_plan_freep) JournalPlan *p = NULL;
        _cleanup_(journal_freep) Journal *j = NULL;
        JournalEntry e;
        size_t len;

        put_file("plans/", "");
        put_file("plans/17153280001234/plan.json", text);
        put_file("plans/17153280001240/result.json", "{\"SourceID\": \"r\"}");
        put_file("plans/stamp", "17153280000000");
        j = open_with(NULL);
        ck_assert_int_eq(journal_open_report(j)->last_stamp, 17153280000000);
        assert_entries(j, "17153280001234:pending 17153280001240:result");

        ck_assert_int_eq(journal_load_plan(j, "17153280001234", &p, NULL), 0);
        ck_assert_uint_eq(p->body_len, 6);
        ck_assert_str_eq(p->body, "myplan");
        ck_assert_ptr_null(p->signature);
        ck_assert(json_is_integer(p->id));
        ck_assert_int_eq(json_integer_value(p->id), 1);
        ck_assert_str_eq(json_string_value(p->reply_to), "test");

        /* Its main loop's order: the result first. */
        ck_assert_int_eq(journal_next(j, &e), 1);
        ck_assert_str_eq(e.ts, "17153280001240");
        ck_assert_int_eq(e.state, JOURNAL_RESULT);
        ck_assert_int_eq(journal_load_result(j, e.ts, &res, &len), 0);
        ck_assert_str_eq(res, "{\"SourceID\": \"r\"}");
}
END_TEST

static const struct {
        const char *text;
        int r;
        const char *error; /* the message; '*' stands for any text */
} load_cases[] = {
        {"", JOURNAL_CORRUPT, "plan.json is empty"},
        {"{\"Data\": \"eA", JOURNAL_CORRUPT, "plan.json is not JSON: *"},
        {"[1]", JOURNAL_CORRUPT, "plan.json is not a JSON object"},
        {"{\"Signature\": \"\", \"ID\": 1}", JOURNAL_CORRUPT, "plan.json has no \"Data\" string"},
        {"{\"Data\": 5}", JOURNAL_CORRUPT, "plan.json has no \"Data\" string"},
        {"{\"Data\": \"eA=\"}", JOURNAL_CORRUPT, "the \"Data\" of plan.json is not Base64"},
        {"{\"Data\": \"e A=\"}", JOURNAL_CORRUPT, "the \"Data\" of plan.json is not Base64"},
        {"{\"Data\": \"e===\"}", JOURNAL_CORRUPT, "the \"Data\" of plan.json is not Base64"},
        {"{\"Data\": \"eA==eA==\"}", JOURNAL_CORRUPT, "the \"Data\" of plan.json is not Base64"},
        {"{\"Data\": \"eA==\", \"Signature\": 7}", JOURNAL_CORRUPT,
         "the \"Signature\" of plan.json is not a string"},
        {"{\"Data\": \"eA==\", \"Signature\": \"%%%%\"}", JOURNAL_CORRUPT,
         "the \"Signature\" of plan.json is not Base64"},
        /* Our own shape, cut short: the whole-document parser says where. */
        {"{\"Data\": \"eA==\", \"Signature\": \"\", \"ID\": \"a\"", JOURNAL_CORRUPT,
         "plan.json is not JSON: * (line 1, column 43)"},
        /* Accepted: missing keys take the values of a bare message. */
        {"{\"Data\": \"eA==\"}", 0, "x"},
        {"{\"Data\": \"eHl6\", \"Signature\": null, \"ID\": \"a\", \"ReplyTo\": null}", 0, "xyz"},
        /* Keys given twice: the last wins, as in Python. */
        {"{\"Data\": \"eA==\", \"Signature\": \"\", \"ID\": \"a\", \"ReplyTo\": null, \"Data\": "
         "\"eHl6\"}",
         0, "xyz"},
        /* JSON escapes inside the Base64 ("\/" is '/'). */
        {"{\"Data\": \"e\\/==\", \"Signature\": \"\", \"ID\": \"a\", \"ReplyTo\": null}", 0, "{"},
};

/* A corrupt plan.json is reported as data and can be removed: it never
 * wedges the journal, as the empty files of murano-agent 7 to 10 did. */
START_TEST(test_load)
{
        _cleanup_(journal_plan_freep) JournalPlan *p = NULL;
        _cleanup_(journal_freep) Journal *j = NULL;
        _cleanup_free_ char *err = NULL;
        const char *want = load_cases[_i].error;
        JournalEntry e;

        put_file("plans/", "");
        put_file("plans/100/plan.json", load_cases[_i].text);
        j = open_with(NULL);
        assert_entries(j, "100:pending");
        ck_assert_int_eq(journal_load_plan(j, "100", &p, &err), load_cases[_i].r);
        if (load_cases[_i].r == 0) {
                ck_assert_ptr_null(err);
                ck_assert_str_eq(p->body, want);
                ck_assert_ptr_null(p->signature);
                ck_assert(json_is_string(p->id));
                ck_assert(json_is_null(p->reply_to));
                return;
        }
        ck_assert_ptr_null(p);
        ck_assert_ptr_nonnull(err);
        if (strchr(want, '*')) {
                size_t head = (size_t)(strchr(want, '*') - want), tail = strlen(want) - head - 1;
                ck_assert_int_eq(strncmp(err, want, head), 0);
                ck_assert_uint_ge(strlen(err), head + tail);
                ck_assert_str_eq(err + strlen(err) - tail, want + head + 1);
        } else {
                ck_assert_str_eq(err, want);
        }
        ck_assert_int_eq(journal_remove(j, "100", false), 0);
        ck_assert_int_eq(journal_next(j, &e), 0);
        ck_assert(!exists("plans/100"));
}
END_TEST

START_TEST(test_bad_names)
{
        _cleanup_(journal_freep) Journal *j = open_with(NULL);
        JournalPlan *p = NULL;
        char *text = NULL;
        size_t len;

        ck_assert_int_eq(journal_remove(j, "../x", false), -EINVAL);
        ck_assert_int_eq(journal_remove(j, "", false), -EINVAL);
        ck_assert_int_eq(journal_remove(j, "123456789012345678901", false), -EINVAL);
        ck_assert_int_eq(journal_load_plan(j, "1/../2", &p, NULL), -EINVAL);
        ck_assert_int_eq(journal_begin(j, "done", NULL), -EINVAL);
        ck_assert_int_eq(journal_put_result(j, "stamp", "x", 1, NULL), -EINVAL);
        ck_assert_int_eq(journal_remove(j, "1", false), -ENOENT);
        ck_assert_int_eq(journal_load_plan(j, "1", &p, NULL), -ENOENT);
        ck_assert_int_eq(journal_load_result(j, "1", &text, &len), -ENOENT);
        ck_assert_int_eq(journal_begin(j, "1", NULL), -ENOENT);
        ck_assert_int_eq(journal_put_result(j, "1", "x", 1, NULL), -ENOENT);
        ck_assert_ptr_null(p);
        ck_assert_ptr_null(text);
}
END_TEST

/* AMQP properties that are not UTF-8 are stored with U+FFFD. */
START_TEST(test_not_utf8)
{
        _cleanup_(journal_freep) Journal *j = open_with(NULL);
        _cleanup_free_ char *text = NULL, *pp = NULL;
        char ts[JOURNAL_TS_MAX];

        /* "\377" is the byte 0xff. */
        ck_assert_int_eq(journal_put_plan(j, "b", 1, "\x80", 1, "a\377b", "\xc3", ts), 0);
        pp = pathf("plans/%s/plan.json", ts);
        text = slurp(pp, NULL);
        ck_assert_str_eq(text, "{\"Data\": \"Yg==\", \"Signature\": \"gA==\", \"ID\": "
                               "\"a\\ufffdb\", \"ReplyTo\": \"\\ufffd\"}");
}
END_TEST

/* --- names -------------------------------------------------------------- */

static void assert_increasing(char (*v)[JOURNAL_TS_MAX], size_t n)
{
        for (size_t i = 1; i < n; i++) {
                ck_assert_uint_eq(strlen(v[i]), strlen(v[i - 1]));
                ck_assert_int_lt(strcmp(v[i - 1], v[i]), 0);
        }
}

/* 1000 puts in a loop get 1000 names, in order, with a real clock and a
 * clock that stands still; a clock that goes back changes nothing. */
START_TEST(test_unique_names)
{
        static char v[2001][JOURNAL_TS_MAX];
        _cleanup_(journal_freep) Journal *j = NULL;
        _cleanup_free_ JournalEntry *list = NULL;
        size_t n = 0;

        fx.no_fsync = true;
        j = open_test();
        for (size_t i = 0; i < 1000; i++)
                put_simple(j, v[i]);
        fx.frozen = true;
        fx.frozen_at = (struct timespec){1715328000, 0};
        for (size_t i = 1000; i < 2000; i++)
                put_simple(j, v[i]);
        assert_increasing(v, 2000);
        ck_assert_int_eq(journal_list(j, &list, &n), 0);
        ck_assert_uint_eq(n, 2000);
        for (size_t i = 0; i < n; i++)
                ck_assert_str_eq(list[i].ts, v[i]);

        /* After a restart, names continue above the highest in use. */
        j = journal_free(j);
        j = open_test();
        put_simple(j, v[2000]);
        assert_increasing(v, 2001);
}
END_TEST

/* A name already taken (a directory made by someone else) is skipped. */
START_TEST(test_name_taken)
{
        _cleanup_(journal_freep) Journal *j = NULL;
        char ts[JOURNAL_TS_MAX];

        fx.frozen = true;
        fx.frozen_at = (struct timespec){1715328000, 12345678};
        j = open_test();
        put_file("plans/17153280000123/x", "");
        put_simple(j, ts);
        ck_assert_str_eq(ts, "17153280000124");
        put_simple(j, ts);
        ck_assert_str_eq(ts, "17153280000125");
}
END_TEST

/* --- restart ------------------------------------------------------------ */

static const struct {
        const char *files; /* made under plans/; a trailing '/' makes a directory */
        const char *entries;
        const char *dir; /* plans/ afterwards */
        unsigned n_temp, n_empty, n_interrupted;
} restart_cases[] = {
        {"100/plan.json", "100:pending", "100 done", 0, 0, 0},
        {"100/plan.json 100/running", "100:interrupted", "100 done", 0, 0, 1},
        {"100/plan.json 100/running 100/result.json", "100:result", "100 done", 0, 0, 0},
        {"100/result.json", "100:result", "100 done", 0, 0, 0},
        {"100/", "", "done", 0, 1, 0},
        {"100/running", "", "done", 0, 1, 0},
        {"100/.plan.json.tmp", "", "done", 1, 1, 0},
        {"100/plan.json 100/running 100/.result.json.tmp", "100:interrupted", "100 done", 1, 0, 1},
        {".stamp.tmp stamp", "", "done stamp", 1, 0, 0},
        {"done/ done/.x done/0123/", "", "done", 1, 0, 0},
        /* Not ours: left alone, as the reference would leave them. */
        {"abc/plan.json 123456789012345678901/plan.json x", "", "123456789012345678901 abc done x",
         0, 0, 0},
};

START_TEST(test_restart)
{
        _cleanup_free_ char *files = strdup(restart_cases[_i].files), *dir = NULL;
        _cleanup_(journal_freep) Journal *j = NULL;
        const JournalOpenReport *rep;
        char *save = NULL;

        put_file("plans/", "");
        for (char *f = strtok_r(files, " ", &save); f; f = strtok_r(NULL, " ", &save)) {
                _cleanup_free_ char *rel = NULL;
                ck_assert_int_ge(asprintf(&rel, "plans/%s", f), 0);
                put_file(rel, strstr(f, "plan.json") ? "{\"Data\": \"\"}" : "0");
        }
        j = open_with(NULL);
        assert_entries(j, restart_cases[_i].entries);
        dir = plans_dir();
        ck_assert_str_eq(dir, restart_cases[_i].dir);
        rep = journal_open_report(j);
        ck_assert_uint_eq(rep->n_temp_removed, restart_cases[_i].n_temp);
        ck_assert_uint_eq(rep->n_empty_removed, restart_cases[_i].n_empty);
        ck_assert_uint_eq(rep->n_interrupted, restart_cases[_i].n_interrupted);
        ck_assert(!rep->stamp_damaged);
}
END_TEST

/* The daemon's loop over a journal left by a crash, in the order that
 * docs/journal.md gives. */
START_TEST(test_flow)
{
        _cleanup_(journal_freep) Journal *j = NULL;
        _cleanup_free_ char *text = NULL;
        JournalEntry e;
        size_t len;

        put_file("plans/", "");
        put_file("plans/300/plan.json", "{\"Data\": \"\"}");
        put_file("plans/200/plan.json", "{\"Data\": \"\"}");
        put_file("plans/200/running", "");
        put_file("plans/250/result.json", "R250");
        put_file("plans/260/result.json", "R260");
        put_file("plans/100/plan.json", "{\"Data\": \"\"}");
        put_file("plans/99/plan.json", "{\"Data\": \"\"}");
        j = open_with(NULL);
        /* String order, as the reference sorts: "99" after "300". */
        assert_entries(j, "100:pending 200:interrupted 250:result 260:result 300:pending "
                          "99:pending");

        /* Unsent results first, lowest name first. */
        ck_assert_int_eq(journal_next(j, &e), 1);
        ck_assert_str_eq(e.ts, "250");
        ck_assert_int_eq(journal_load_result(j, "250", &text, &len), 0);
        ck_assert_str_eq(text, "R250");
        ck_assert_uint_eq(len, 4);
        ck_assert_int_eq(journal_remove(j, "250", true), 0);
        ck_assert_int_eq(journal_next(j, &e), 1);
        ck_assert_str_eq(e.ts, "260");
        ck_assert_int_eq(journal_remove(j, "260", true), 0);

        /* Then plans: 100 starts running and is skipped while it runs. */
        ck_assert_int_eq(journal_next(j, &e), 1);
        ck_assert_str_eq(e.ts, "100");
        ck_assert_int_eq(e.state, JOURNAL_PENDING);
        ck_assert_int_eq(journal_begin(j, "100", NULL), 0);
        assert_entries(j, "100:running 200:interrupted 300:pending 99:pending");
        ck_assert_int_eq(journal_next(j, &e), 1);
        ck_assert_str_eq(e.ts, "200");
        ck_assert_int_eq(e.state, JOURNAL_INTERRUPTED);

        /* The interrupted plan's error result goes the confirmed way. */
        ck_assert_int_eq(journal_put_result(j, "200", "R200", 4, NULL), 0);
        ck_assert_int_eq(journal_next(j, &e), 1);
        ck_assert_str_eq(e.ts, "200");
        ck_assert_int_eq(e.state, JOURNAL_RESULT);
        ck_assert_int_eq(journal_remove(j, "200", true), 0);
        ck_assert_int_eq(journal_next(j, &e), 1);
        ck_assert_str_eq(e.ts, "300");

        /* A restart finds 100 interrupted: it never runs twice. */
        j = journal_free(j);
        j = open_with(NULL);
        assert_entries(j, "100:interrupted 300:pending 99:pending");
        ck_assert_uint_eq(journal_open_report(j)->n_interrupted, 1);
}
END_TEST

START_TEST(test_lock_and_modes)
{
        _cleanup_(journal_freep) Journal *j = NULL;
        _cleanup_free_ char *pp = pathf("plans"), *deep = NULL, *none = pathf("none");
        Journal *k = (Journal *)1;
        pid_t holder = 0;
        struct stat st;

        ck_assert_int_eq(mkdir(pp, 0755), 0);
        j = open_with(NULL);
        ck_assert_int_eq(stat(pp, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0700);
        ck_assert_int_eq(journal_open(storage, NULL, &k), -EBUSY);
        ck_assert_ptr_eq(k, (Journal *)1);
        /* /proc/locks names this process as the holder, and nobody once the
         * journal is closed. */
        ck_assert_int_eq(journal_lock_holder(storage, &holder), 0);
        ck_assert_int_eq(holder, getpid());
        j = journal_free(j);
        ck_assert_ptr_null(j);
        ck_assert_int_eq(journal_lock_holder(storage, &holder), -ENOENT);
        ck_assert_int_eq(journal_lock_holder(none, &holder), -ENOENT);
        j = open_with(NULL);
        ck_assert_ptr_null(journal_free(NULL));

        /* Missing parents are made. */
        deep = pathf("a/b/c");
        ck_assert_int_eq(journal_open(deep, NULL, &k), 0);
        journal_free(k);
        ck_assert(exists("a/b/c/plans/done"));
        ck_assert_int_eq(journal_open("", NULL, &k), -EINVAL);
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_loop_test(tc, test_layout, 0, (int)ELEMENTSOF(layout_cases));
        tcase_add_loop_test(tc, test_large, 0, (int)ELEMENTSOF(large_cases));
        tcase_add_test(tc, test_large_write_fails);
        tcase_add_test(tc, test_plan_file_max);
        tcase_add_test(tc, test_held_plan);
        tcase_add_test(tc, test_held_plan_as_read);
        tcase_add_test(tc, test_kept_result);
        tcase_add_test(tc, test_kept_results_bound);
        tcase_add_test(tc, test_reference_files);
        tcase_add_loop_test(tc, test_load, 0, (int)ELEMENTSOF(load_cases));
        tcase_add_test(tc, test_bad_names);
        tcase_add_test(tc, test_not_utf8);
        tcase_add_test(tc, test_unique_names);
        tcase_add_test(tc, test_name_taken);
        tcase_add_loop_test(tc, test_restart, 0, (int)ELEMENTSOF(restart_cases));
        tcase_add_test(tc, test_flow);
        tcase_add_test(tc, test_lock_and_modes);
}

int main(void)
{
        return journal_test_main("journal", add_tests);
}
