/* Tests for what keeps the journal from running a plan twice: the stamp
 * (the reference's replay protection: journal_begin() refuses a Stamp not
 * above the last, which plans/stamp keeps across restarts and recovers
 * when it is lost or damaged) and done records (a plan ID already answered
 * gets that answer again, within the configured count and age). Their
 * durability at each file operation is in test-journal-faults.c. */
#include "test-journal.h"
#include "test-journal-main.h"

/* --- stamps ------------------------------------------------------------- */

static void assert_stamp_file(const char *want)
{
        _cleanup_free_ char *pp = pathf("plans/stamp"), *text = NULL;

        if (!want) {
                ck_assert_int_ne(access(pp, F_OK), 0);
                return;
        }
        text = slurp(pp, NULL);
        ck_assert_str_eq(text, want);
}

static bool running(const char *ts)
{
        _cleanup_free_ char *rel = NULL;

        ck_assert_int_ge(asprintf(&rel, "plans/%s/running", ts), 0);
        return exists(rel);
}

START_TEST(test_stamp)
{
        _cleanup_(journal_freep) Journal *j = open_with(NULL);
        char a[JOURNAL_TS_MAX], b[JOURNAL_TS_MAX], c[JOURNAL_TS_MAX];
        json_t *v;

        ck_assert_int_eq(journal_last_stamp(j), 0);
        put_simple(j, a);
        put_simple(j, b);
        put_simple(j, c);

        /* 0 is never newer than the initial 0; nothing is written. */
        v = json_integer(0);
        ck_assert_int_eq(journal_begin(j, a, v), JOURNAL_STAMP_OLD);
        json_decref(v);
        ck_assert(!running(a));
        /* No stamp, or a negative one: nothing to check or save. */
        ck_assert_int_eq(journal_begin(j, a, NULL), 0);
        ck_assert(running(a));
        v = json_integer(-5);
        ck_assert_int_eq(journal_begin(j, b, v), 0);
        json_decref(v);
        assert_stamp_file(NULL);

        /* A stamp of the engine's size (about 1.8e13) is saved as text. */
        v = json_integer(17153280001234);
        ck_assert_int_eq(journal_begin(j, c, v), 0);
        assert_stamp_file("17153280001234");
        ck_assert_int_eq(journal_last_stamp(j), 17153280001234);
        ck_assert(running(c));
        /* The same again, or older: a duplicate. */
        put_simple(j, c);
        ck_assert_int_eq(journal_begin(j, c, v), JOURNAL_STAMP_OLD);
        json_decref(v);
        v = json_integer(17153280001233);
        ck_assert_int_eq(journal_begin(j, c, v), JOURNAL_STAMP_OLD);
        json_decref(v);
        ck_assert(!running(c));
        /* A whole number written as a float counts. */
        v = json_real(17153280001235.0);
        ck_assert_int_eq(journal_begin(j, c, v), 0);
        json_decref(v);
        assert_stamp_file("17153280001235");

        /* Stamps that are not integers. */
        put_simple(j, c);
        v = json_real(5.5);
        ck_assert_int_eq(journal_begin(j, c, v), JOURNAL_STAMP_INVALID);
        json_decref(v);
        v = json_real(1e300);
        ck_assert_int_eq(journal_begin(j, c, v), JOURNAL_STAMP_INVALID);
        json_decref(v);
        v = json_string("17153280009999");
        ck_assert_int_eq(journal_begin(j, c, v), JOURNAL_STAMP_INVALID);
        json_decref(v);
        ck_assert_int_eq(journal_begin(j, c, json_null()), JOURNAL_STAMP_INVALID);
        ck_assert_int_eq(journal_begin(j, c, json_true()), JOURNAL_STAMP_INVALID);
        ck_assert(!running(c));
        v = json_real(-2.5);
        ck_assert_int_eq(journal_begin(j, c, v), 0);
        json_decref(v);
        assert_stamp_file("17153280001235");

        j = journal_free(j);
        j = open_with(NULL);
        ck_assert_int_eq(journal_last_stamp(j), 17153280001235);
        ck_assert_int_eq(journal_open_report(j)->last_stamp, 17153280001235);
}
END_TEST

static const struct {
        const char *text;
        int64_t value;
        bool damaged;
} stamp_file_cases[] = {
        {"12345", 12345, false},
        {" 12_345\n", 12345, false},
        {"+7", 7, false},
        {"9223372036854775807", INT64_MAX, false},
        {"", 0, true},
        {"abc", 0, true},
        {"1.5", 0, true},
        {"True", 0, true},
        {"-3", 0, true},
        {"9223372036854775808", 0, true},
        {"1__2", 0, true},
        {"_1", 0, true},
        {"1_", 0, true},
        {"0000000000000000000000000000000000000000000000000000000000000000000001", 0, true},
};

START_TEST(test_stamp_file)
{
        _cleanup_(journal_freep) Journal *j = NULL;
        char ts[JOURNAL_TS_MAX];
        json_t *v;

        put_file("plans/stamp", stamp_file_cases[_i].text);
        j = open_with(NULL);
        ck_assert_int_eq(journal_last_stamp(j), stamp_file_cases[_i].value);
        ck_assert(journal_open_report(j)->stamp_damaged == stamp_file_cases[_i].damaged);
        if (stamp_file_cases[_i].value == INT64_MAX)
                return;
        /* The next stamp replaces whatever was there. */
        put_simple(j, ts);
        v = json_integer(stamp_file_cases[_i].value + 1);
        ck_assert_int_eq(journal_begin(j, ts, v), 0);
        json_decref(v);
        ck_assert_int_eq(journal_last_stamp(j), stamp_file_cases[_i].value + 1);
}
END_TEST

/* The stamp file is replaced without an fsync, so a power loss may leave
 * it absent, damaged or behind; the plans marked running hold the stamps
 * they took, durably, and the highest of them and the file's is the last
 * stamp. The file is put right at open. */
static const struct {
        const char *text; /* the stamp file; NULL: absent */
        int64_t value;
        bool damaged, recovered;
} recover_cases[] = {
        {NULL, 11, false, true},  {"", 11, true, true},     {"7", 11, false, true},
        {"11", 11, false, false}, {"20", 20, false, false},
};

/* A stamp file without its seal (planted: a number far ahead, to refuse
 * every plan): ignored, and the last stamp is what the plans marked
 * running hold. */
START_TEST(test_stamp_forged)
{
        _cleanup_(journal_freep) Journal *j = open_with(NULL);
        char ts[JOURNAL_TS_MAX];
        json_t *v;

        put_stamped(j, ts, 5);
        j = journal_free(j);
        put_file("plans/stamp", "99999999999999");
        j = open_with(NULL);
        ck_assert(journal_open_report(j)->stamp_forged);
        ck_assert_int_eq(journal_last_stamp(j), 5);
        /* The next stamped plan is taken. */
        put_simple(j, ts);
        v = json_integer(6);
        ck_assert_int_eq(journal_begin(j, ts, v), 0);
        json_decref(v);
        j = journal_free(j);
        j = open_with(NULL);
        ck_assert(!journal_open_report(j)->stamp_forged);
        ck_assert_int_eq(journal_last_stamp(j), 6);
}
END_TEST

START_TEST(test_stamp_recover)
{
        _cleanup_(journal_freep) Journal *j = open_with(NULL);
        _cleanup_free_ char *want = NULL, *sp = pathf("plans/stamp");
        char ts[JOURNAL_TS_MAX];
        const JournalOpenReport *rep;
        json_t *v;

        /* Running with a result, running, running with a float stamp;
         * neither a plan that is not running nor one whose body is not
         * JSON counts. */
        put_stamped(j, ts, 5);
        ck_assert_int_eq(journal_put_result(j, ts, "{}", 2, NULL), 0);
        put_stamped(j, ts, 9);
        ck_assert_int_eq(journal_put_plan(j, "{\"Stamp\": 11.0}", 15, NULL, 0, "i", NULL, ts), 0);
        v = json_real(11.0);
        ck_assert_int_eq(journal_begin(j, ts, v), 0);
        json_decref(v);
        ck_assert_int_eq(journal_put_plan(j, "{\"Stamp\": 99}", 13, NULL, 0, "i", NULL, ts), 0);
        ck_assert_int_eq(journal_put_plan(j, "{\"Stamp\": 98", 12, NULL, 0, "i", NULL, ts), 0);
        ck_assert_int_eq(journal_begin(j, ts, NULL), 0);
        j = journal_free(j);

        if (recover_cases[_i].text) {
                put_file("plans/stamp", recover_cases[_i].text);
                seal_rel("plans/stamp", "stamp", "stamp");
        } else
                ck_assert_int_eq(unlink(sp), 0);
        j = open_with(NULL);
        rep = journal_open_report(j);
        ck_assert_int_eq(journal_last_stamp(j), recover_cases[_i].value);
        ck_assert_int_eq(rep->last_stamp, recover_cases[_i].value);
        ck_assert(rep->stamp_damaged == recover_cases[_i].damaged);
        ck_assert(rep->stamp_recovered == recover_cases[_i].recovered);
        ck_assert_int_ge(asprintf(&want, "%lld", (long long)recover_cases[_i].value), 0);
        assert_stamp_file(want);

        /* The same stamp and older ones are refused; the next is taken. */
        put_simple(j, ts);
        for (int64_t s = recover_cases[_i].value - 2; s <= recover_cases[_i].value + 1; s++) {
                v = json_integer(s);
                ck_assert_int_eq(journal_begin(j, ts, v),
                                 s <= recover_cases[_i].value ? JOURNAL_STAMP_OLD : 0);
                json_decref(v);
        }
}
END_TEST

/* A stored stamp more than a day ahead of the clock (planted by a script,
 * or left by a broken clock) would refuse every plan the engine stamps from
 * then on: it is reported at open and the next stamped plan replaces it.
 * One just within the day still refuses older stamps. */
static const struct {
        int64_t ahead; /* of the clock, in the engine's units; INT64_MAX: that value */
        bool replaced;
} ahead_cases[] = {
        {JOURNAL_STAMP_AHEAD_MAX + 100000, true},
        {INT64_MAX, true},
        {JOURNAL_STAMP_AHEAD_MAX - 100000, false},
};

START_TEST(test_stamp_ahead)
{
        _cleanup_(journal_freep) Journal *j = NULL;
        char ts[JOURNAL_TS_MAX], text[32];
        int64_t now = (int64_t)time(NULL) * 10000, stored;
        json_t *v;

        stored = ahead_cases[_i].ahead == INT64_MAX ? INT64_MAX : now + ahead_cases[_i].ahead;
        snprintf(text, sizeof(text), "%lld", (long long)stored);
        put_file("plans/stamp", text);
        j = open_with(NULL);
        ck_assert(journal_open_report(j)->stamp_ahead == ahead_cases[_i].replaced);
        ck_assert_int_eq(journal_last_stamp(j), stored);

        put_simple(j, ts);
        v = json_integer(now);
        ck_assert_int_eq(journal_begin(j, ts, v), ahead_cases[_i].replaced ? 0 : JOURNAL_STAMP_OLD);
        ck_assert(running(ts) == ahead_cases[_i].replaced);
        if (ahead_cases[_i].replaced) {
                snprintf(text, sizeof(text), "%lld", (long long)now);
                assert_stamp_file(text);
                ck_assert_int_eq(journal_last_stamp(j), now);
                /* Replay protection holds again from there. */
                put_simple(j, ts);
                ck_assert_int_eq(journal_begin(j, ts, v), JOURNAL_STAMP_OLD);
        } else {
                assert_stamp_file(text);
        }
        json_decref(v);
}
END_TEST

/* journal_stamp_held(): a Stamp refused as old is a second copy of a plan
 * in the journal only while an entry that took it is still there. */
START_TEST(test_stamp_held)
{
        _cleanup_(journal_freep) Journal *j = open_with(NULL);
        char a[JOURNAL_TS_MAX], b[JOURNAL_TS_MAX];
        json_t *v = json_integer(100);

        put_stamped(j, a, 100);
        put_simple(j, b);
        ck_assert_int_eq(journal_begin(j, b, v), JOURNAL_STAMP_OLD);
        json_decref(v);
        ck_assert(journal_stamp_held(j, 100, b));
        ck_assert(journal_stamp_held(j, 100, NULL));
        ck_assert(!journal_stamp_held(j, 100, a));
        ck_assert(!journal_stamp_held(j, 99, b));
        ck_assert_int_eq(journal_put_result(j, a, "{}", 2, NULL), 0);
        ck_assert(journal_stamp_held(j, 100, b));
        ck_assert_int_eq(journal_remove(j, a, false), 0);
        ck_assert(!journal_stamp_held(j, 100, b));
        /* After a restart too, from the entry's plan.json. */
        put_stamped(j, a, 200);
        j = journal_free(j);
        j = open_with(NULL);
        ck_assert(journal_stamp_held(j, 200, b));
        ck_assert(!journal_stamp_held(j, 100, b));
}
END_TEST

/* --- done records ------------------------------------------------------- */

#define RESULT_ABC                                                                                 \
        "{\"FormatVersion\": \"2.0.0\", \"ID\": \"00112233445566778899aabbccddeeff\", "            \
        "\"SourceID\": \"abc\", \"Action\": \"Execution:Result\", \"ErrorCode\": 0, \"Body\": "    \
        "null, \"Time\": \"2024-05-10 12:34:56.123456\", \"ReplyTo\": null}"
#define HASH_ABC "6cc43f858fbb763301637b5af970e2a46b46f461f27e5a0f41e009c59b827b25"
#define HASH_1   "6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b"
/* SHA-256 of "delivery:{}" */
#define HASH_DELIVERY_EMPTY_OBJECT                                                                 \
        "dca23886131ae04d382ac19ac5dedd3dfff815ac83e9d5e2a72af6eccabf4d74"

/* One plan through to a confirmed result with source_id's result text. */
static void finish(Journal *j, const char *result_text, bool record)
{
        char ts[JOURNAL_TS_MAX];

        put_simple(j, ts);
        ck_assert_int_eq(journal_begin(j, ts, NULL), 0);
        ck_assert_int_eq(journal_put_result(j, ts, result_text, strlen(result_text), NULL), 0);
        ck_assert_int_eq(journal_remove(j, ts, record), 0);
}

static int lookup(Journal *j, json_t *id, char **ret)
{
        int r = journal_done_lookup(j, id, ret);

        json_decref(id);
        return r;
}

/* How many records done/records holds (superseded and expired ones too:
 * they go when the file rotates), and the names in done/. */
static unsigned n_records(const char *file)
{
        _cleanup_free_ char *p = pathf("plans/done/%s", file);
        _cleanup_free_ char *text = NULL;
        unsigned n = 0;
        size_t len;

        if (file_read_regular_at(AT_FDCWD, p, (size_t)1 << 20, &text, &len) < 0)
                return 0;
        /* Each record is a header line and a text line. */
        for (size_t i = 0; i < len; i++)
                n += text[i] == '\n';
        return n / 2;
}

static off_t file_size(const char *rel)
{
        _cleanup_free_ char *p = pathf("%s", rel);
        struct stat st;

        return stat(p, &st) < 0 ? -1 : st.st_size;
}

START_TEST(test_done)
{
        _cleanup_(journal_freep) Journal *j = open_with(NULL);
        _cleanup_free_ char *text = NULL, *dir = NULL, *first = NULL;
        char ts[JOURNAL_TS_MAX];
        char *none = NULL;

        /* A result waiting for its confirm already answers the ID. */
        put_simple(j, ts);
        ck_assert_int_eq(journal_put_result(j, ts, RESULT_ABC, strlen(RESULT_ABC), NULL), 0);
        ck_assert_int_eq(lookup(j, json_string("abc"), &text), 1);
        ck_assert_str_eq(text, RESULT_ABC);
        free(text), text = NULL;

        /* Confirmed: the entry goes, its result is appended to
         * done/records under the ID's name. */
        ck_assert_int_eq(journal_remove(j, ts, true), 0);
        dir = plans_dir();
        ck_assert_str_eq(dir, "done");
        free(dir), dir = dir_names("plans/done");
        ck_assert_str_eq(dir, "records");
        ck_assert_uint_eq(n_records("records"), 1);
        text = slurp_rel("plans/done/records");
        ck_assert(strncmp(text, HASH_ABC " ", 65) == 0);
        ck_assert(strstr(text, "\n" RESULT_ABC "\n"));
        free(text), text = NULL;
        /* The reference sees neither a plan nor a result. */
        first = reference_first("plan.json");
        ck_assert_ptr_null(first);
        first = reference_first("result.json");
        ck_assert_ptr_null(first);

        ck_assert_int_eq(lookup(j, json_string("abc"), &text), 1);
        ck_assert_str_eq(text, RESULT_ABC);
        free(text), text = NULL;
        ck_assert_int_eq(lookup(j, json_string("abd"), &none), 0);
        ck_assert_int_eq(lookup(j, json_string(""), &none), 0);
        ck_assert_int_eq(lookup(j, json_null(), &none), 0);
        ck_assert_int_eq(journal_done_lookup(j, NULL, &none), 0);
        ck_assert_ptr_null(none);

        /* A redelivery is answered from the record, which it replaces. */
        finish(j, "{\"SourceID\": \"abc\", \"n\": 2}", true);
        ck_assert_int_eq(lookup(j, json_string("abc"), &text), 1);
        ck_assert_str_eq(text, "{\"SourceID\": \"abc\", \"n\": 2}");
        free(text), text = NULL;

        /* Integer IDs are keys of their own: 1 is not "1". */
        finish(j, "{\"SourceID\": 1, \"Body\": 1}", true);
        ck_assert_int_eq(lookup(j, json_integer(1), &text), 1);
        ck_assert_str_eq(text, "{\"SourceID\": 1, \"Body\": 1}");
        free(text), text = NULL;
        ck_assert_int_eq(lookup(j, json_string("1"), &none), 0);

        /* Results that no ID can find are kept under their delivery's
         * digest (put_simple's body "{}"), each replacing the last; no ID
         * finds them, the same body does. */
        ck_assert_int_eq(journal_done_lookup_delivery(j, "{}", 2, &none), 0);
        finish(j, "{\"SourceID\": \"\"}", true);
        finish(j, "{\"SourceID\": null}", true);
        finish(j, "{\"SourceID\": 1.5}", true);
        text = slurp_rel("plans/done/records");
        ck_assert(strstr(text, "\n" HASH_DELIVERY_EMPTY_OBJECT " "));
        free(text), text = NULL;
        ck_assert_int_eq(journal_done_lookup_delivery(j, "{}", 2, &text), 1);
        ck_assert_str_eq(text, "{\"SourceID\": 1.5}");
        free(text), text = NULL;
        ck_assert_int_eq(journal_done_lookup_delivery(j, "{} ", 3, &none), 0);
        ck_assert_int_eq(lookup(j, json_string(""), &none), 0);
        finish(j, "not json", true);
        finish(j, "{\"SourceID\": \"dropped\"}", false);
        ck_assert_int_eq(lookup(j, json_string("dropped"), &none), 0);
        ck_assert_uint_eq(n_records("records"), 7);
        free(dir), dir = plans_dir();
        ck_assert_str_eq(dir, "done");

        /* A result with an ID is not found by its body. */
        put_simple(j, ts);
        ck_assert_int_eq(journal_put_result(j, ts, RESULT_ABC, strlen(RESULT_ABC), NULL), 0);
        ck_assert_int_eq(journal_done_lookup_delivery(j, "{}", 2, &text), 1);
        ck_assert_str_eq(text, "not json");
        free(text), text = NULL;
        ck_assert_int_eq(journal_remove(j, ts, false), 0);
        /* One without an ID waiting for its confirm is. */
        ck_assert_int_eq(journal_put_plan(j, "[]", 2, NULL, 0, "", NULL, ts), 0);
        ck_assert_int_eq(journal_done_lookup_delivery(j, "[]", 2, &none), 0);
        ck_assert_int_eq(journal_put_result(j, ts, "{\"SourceID\": \"\", \"n\": 2}", 24, NULL), 0);
        ck_assert_int_eq(journal_done_lookup_delivery(j, "[]", 2, &text), 1);
        ck_assert_str_eq(text, "{\"SourceID\": \"\", \"n\": 2}");
        free(text), text = NULL;
        ck_assert_int_eq(journal_remove(j, ts, false), 0);

        /* Records survive a restart. */
        j = journal_free(j);
        j = open_with(NULL);
        ck_assert_int_eq(lookup(j, json_string("abc"), &none), 1);
        free(none), none = NULL;

        /* A torn last record (a crash during the append) is cut off at
         * open, and the next record is found. */
        j = journal_free(j);
        {
                _cleanup_free_ char *p = pathf("plans/done/records");
                FILE *f = fopen(p, "a");

                ck_assert_ptr_nonnull(f);
                fputs(HASH_ABC " 1 100\n{\"Sour", f);
                fclose(f);
        }
        j = open_with(NULL);
        ck_assert_uint_eq(journal_open_report(j)->n_temp_removed, 1);
        ck_assert_uint_eq(n_records("records"), 7);
        finish(j, "{\"SourceID\": \"after\"}", true);
        ck_assert_int_eq(lookup(j, json_string("after"), &text), 1);
        free(text), text = NULL;
        j = journal_free(j);
        j = open_with(NULL);
        ck_assert_int_eq(lookup(j, json_string("after"), &text), 1);
        free(text), text = NULL;
        ck_assert_int_eq(lookup(j, json_string("abc"), &text), 1);
        ck_assert_str_eq(text, "{\"SourceID\": \"abc\", \"n\": 2}");
        free(text), text = NULL;
}
END_TEST

/* Records in the format before done/records (a directory and a
 * result.json each) are still found after an upgrade, and a newer record
 * of the same plan replaces them. */
START_TEST(test_done_old_format)
{
        _cleanup_(journal_freep) Journal *j = NULL;
        _cleanup_free_ char *text = NULL, *dir = NULL;
        char *none = NULL;

        put_file("plans/", "");
        put_file("plans/done/", "");
        put_file("plans/done/" HASH_ABC "/", "");
        put_file("plans/done/" HASH_1 "/", "");
        put_file("plans/done/" HASH_ABC "/result.json", RESULT_ABC);
        put_file("plans/done/" HASH_1 "/result.json", "{\"SourceID\": \"zzz\"}");
        j = open_with(NULL);
        ck_assert_int_eq(lookup(j, json_string("abc"), &text), 1);
        ck_assert_str_eq(text, RESULT_ABC);
        free(text), text = NULL;
        /* A record answers only the ID its result names. */
        ck_assert_int_eq(lookup(j, json_integer(1), &none), 0);
        ck_assert_ptr_null(none);

        finish(j, "{\"SourceID\": \"abc\", \"n\": 2}", true);
        dir = dir_names("plans/done");
        ck_assert_str_eq(dir, HASH_1 " records");
        ck_assert_int_eq(lookup(j, json_string("abc"), &text), 1);
        ck_assert_str_eq(text, "{\"SourceID\": \"abc\", \"n\": 2}");
}
END_TEST

static Journal *open_done(unsigned count, int64_t age)
{
        JournalOptions o = JOURNAL_OPTIONS_DEFAULT;

        o.ops = &test_ops;
        o.done_max_count = count;
        o.done_max_age = age;
        return open_with(&o);
}

static void finish_id(Journal *j, const char *id)
{
        _cleanup_free_ char *text = NULL;

        ck_assert_int_ge(asprintf(&text, "{\"SourceID\": \"%s\"}", id), 0);
        finish(j, text, true);
}

START_TEST(test_done_limits)
{
        _cleanup_(journal_freep) Journal *j = open_done(3, 3600);
        char *text = NULL;

        /* The newest 3 are kept, in the order they were recorded, even
         * within one second. */
        for (int i = 0; i < 5; i++) {
                char id[8];
                snprintf(id, sizeof(id), "p%d", i);
                finish_id(j, id);
        }
        ck_assert_int_eq(lookup(j, json_string("p0"), &text), 0);
        ck_assert_int_eq(lookup(j, json_string("p1"), &text), 0);
        for (int i = 2; i < 5; i++) {
                char id[8];
                snprintf(id, sizeof(id), "p%d", i);
                ck_assert_int_eq(lookup(j, json_string(id), &text), 1);
                free(text), text = NULL;
        }

        /* An hour later they are forgotten, at lookup ... */
        fx.offset = 3601;
        ck_assert_int_eq(lookup(j, json_string("p4"), &text), 0);

        /* ... and at open. */
        fx.offset = 0;
        finish_id(j, "q");
        j = journal_free(j);
        fx.offset = 3601;
        j = open_done(3, 3600);
        /* (Counted in the records files: all six of them.) */
        ck_assert_uint_eq(journal_open_report(j)->n_done_expired, 6);
        ck_assert_int_eq(lookup(j, json_string("q"), &text), 0);

        /* With a count of 0 nothing is recorded. */
        j = journal_free(j);
        j = open_done(0, 3600);
        finish_id(j, "r");
        ck_assert_int_eq(lookup(j, json_string("r"), &text), 0);
}
END_TEST

/* done/records rotates to records.old before it grows past
 * done_max_bytes, so the two hold at most twice that and one record,
 * however many plans finish; the newest records are still found. */
START_TEST(test_done_rotation)
{
        JournalOptions o = JOURNAL_OPTIONS_DEFAULT;
        _cleanup_(journal_freep) Journal *j = NULL;
        _cleanup_free_ char *text = NULL, *dir = NULL;
        char *none = NULL;
        off_t one;

        o.done_max_bytes = 1000;
        j = open_with(&o);
        finish_id(j, "p0");
        one = file_size("plans/done/records");
        ck_assert_int_gt(one, 0);
        for (int i = 1; i < 200; i++) {
                char id[8];

                snprintf(id, sizeof(id), "p%d", i);
                finish_id(j, id);
                ck_assert_int_le(file_size("plans/done/records"), 1000);
                ck_assert_int_le(file_size("plans/done/records") +
                                         file_size("plans/done/records.old"),
                                 2000 + one);
        }
        dir = dir_names("plans/done");
        ck_assert_str_eq(dir, "records records.old");
        ck_assert_int_eq(lookup(j, json_string("p199"), &text), 1);
        free(text), text = NULL;
        ck_assert_int_eq(lookup(j, json_string("p0"), &none), 0);
        /* From both files, after a restart too. */
        j = journal_free(j);
        j = open_with(&o);
        ck_assert_int_eq(lookup(j, json_string("p199"), &text), 1);
        free(text), text = NULL;
        ck_assert_int_eq(lookup(j, json_string("p195"), &text), 1);
        free(text), text = NULL;

        /* When every record of records.old has expired, it goes. */
        fx.offset = 0;
        j = journal_free(j);
        o.ops = &test_ops;
        o.done_max_count = 1;
        j = open_with(&o);
        ck_assert(!exists("plans/done/records.old"));
        ck_assert_int_eq(lookup(j, json_string("p199"), &text), 1);
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_test(tc, test_stamp);
        tcase_add_loop_test(tc, test_stamp_file, 0, (int)ELEMENTSOF(stamp_file_cases));
        tcase_add_test(tc, test_stamp_forged);
        tcase_add_loop_test(tc, test_stamp_recover, 0, (int)ELEMENTSOF(recover_cases));
        tcase_add_loop_test(tc, test_stamp_ahead, 0, (int)ELEMENTSOF(ahead_cases));
        tcase_add_test(tc, test_stamp_held);
        tcase_add_test(tc, test_done);
        tcase_add_test(tc, test_done_limits);
        tcase_add_test(tc, test_done_old_format);
        tcase_add_test(tc, test_done_rotation);
}

int main(void)
{
        return journal_test_main("journal-replay", add_tests);
}
