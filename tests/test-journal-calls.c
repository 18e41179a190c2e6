/* Tests for the call log (journal-calls.h): its record format byte for
 * byte, records read back after a reopen, a torn last record cut off at
 * every length, and a damaged record in the middle refused. */
#include "test-journal.h"
#include "test-journal-main.h"

#include "journal/journal-calls.h"

static char *entry_dir(void)
{
        char *dir = pathf("plans");
        mkdir(dir, 0700);
        free(dir);
        dir = pathf("plans/17153280001234");
        mkdir(dir, 0700);
        return dir;
}

/* The file's bytes (slurp() of test-journal.h trips gcc's dangling-pointer
 * analysis here). */
static char *read_log(const char *path, size_t *len)
{
        char *data = NULL;
        int r = file_read_all(path, 1 << 24, &data, len);

        ck_assert_int_eq(r, 0);
        return data;
}

static JournalCalls *open_ok(const char *dir)
{
        JournalCalls *c = NULL;
        char *err = NULL;

        ck_assert_int_eq(journal_calls_open(dir, &c, &err), 0);
        ck_assert_ptr_null(err);
        return c;
}

static void append_json(JournalCalls *c, char kind, const char *text, bool sync)
{
        json_t *v = json_loads(text, 0, NULL);

        ck_assert_ptr_nonnull(v);
        ck_assert_int_eq(journal_calls_append(c, kind, v, sync), 0);
        json_decref(v);
}

static void assert_record(const JournalCalls *c, size_t i, char kind, const char *text)
{
        const JournalCallRecord *r = journal_calls_get(c, i);
        _cleanup_free_ char *got = NULL;

        ck_assert_ptr_nonnull(r);
        ck_assert_int_eq(r->kind, kind);
        got = json_dumps(r->data, JSON_COMPACT);
        ck_assert_str_eq(got, text);
}

/* Three records, as the runner writes them for one call and a value. */
static void write_three(const char *dir)
{
        JournalCalls *c = open_ok(dir);

        append_json(c, JOURNAL_CALL_START, "{\"call\":0,\"name\":\"a\"}", true);
        append_json(c, JOURNAL_CALL_VALUE, "{\"kind\":\"uuid4\",\"value\":\"00ff\"}", false);
        append_json(c, JOURNAL_CALL_END, "{\"call\":0,\"result\":{\"exitCode\":0}}", true);
        journal_calls_free(c);
}

START_TEST(test_format)
{
        _cleanup_free_ char *dir = entry_dir(), *path = pathf("plans/17153280001234/calls");
        _cleanup_free_ char *text = NULL;
        JournalCalls *c = open_ok(dir);
        char want[128];

        ck_assert_int_eq(journal_calls_count(c), 0);
        append_json(c, JOURNAL_CALL_START, "{\"call\":0}", true);
        journal_calls_free(c);
        text = slurp(path, NULL);
        /* The checksum covers the header's first three fields and the
         * payload: zlib's crc32() of "S 0 10" then "{\"call\":0}". */
        snprintf(want, sizeof(want), "S 0 10 %08x\n{\"call\":0}\n",
                 journal_crc32(journal_crc32(0, "S 0 10", 6), "{\"call\":0}", 10));
        ck_assert_str_eq(text, want);
        /* The CRC-32 check value of the standard. */
        ck_assert_uint_eq(journal_crc32(0, "123456789", 9), 0xcbf43926u);
}
END_TEST

START_TEST(test_reopen)
{
        _cleanup_free_ char *dir = entry_dir();
        JournalCalls *c;

        ck_assert(!journal_calls_exist(dir));
        write_three(dir);
        ck_assert(journal_calls_exist(dir));
        c = open_ok(dir);
        ck_assert_int_eq(journal_calls_count(c), 3);
        ck_assert_uint_eq(journal_calls_cut(c), 0);
        assert_record(c, 0, 'S', "{\"call\":0,\"name\":\"a\"}");
        assert_record(c, 1, 'V', "{\"kind\":\"uuid4\",\"value\":\"00ff\"}");
        assert_record(c, 2, 'E', "{\"call\":0,\"result\":{\"exitCode\":0}}");
        /* Appending after a reopen goes on with the next seq. */
        append_json(c, JOURNAL_CALL_REBOOT, "{\"call\":0}", true);
        journal_calls_free(c);
        c = open_ok(dir);
        ck_assert_int_eq(journal_calls_count(c), 4);
        assert_record(c, 3, 'R', "{\"call\":0}");
        journal_calls_free(c);
}
END_TEST

/* A crash in the middle of an append leaves any prefix of the last
 * record: each is cut off, and the records before it stay. */
START_TEST(test_torn)
{
        _cleanup_free_ char *dir = entry_dir(), *path = pathf("plans/17153280001234/calls");
        size_t len, last;

        write_three(dir);
        char *full = read_log(path, &len);
        /* The last record starts after the second newline pair. */
        last = (size_t)(strstr(full, "E 2 ") - full);
        for (size_t cut = last; cut < len; cut++) {
                _cleanup_free_ char *after = NULL;
                size_t after_len;
                JournalCalls *c;
                FILE *f = fopen(path, "w");

                ck_assert_ptr_nonnull(f);
                ck_assert_uint_eq(fwrite(full, 1, cut, f), cut);
                fclose(f);
                c = open_ok(dir);
                ck_assert_int_eq(journal_calls_count(c), 2);
                ck_assert_uint_eq(journal_calls_cut(c), cut - last);
                journal_calls_free(c);
                after = read_log(path, &after_len);
                ck_assert_uint_eq(after_len, last);
        }
        free(full);
}
END_TEST

/* A damaged last record (bytes changed, zeros where a page did not reach
 * the disk) cannot be told from a torn one, and is cut; a damaged record
 * with whole records after it is refused. */
static const struct {
        const char *name;
        const char *find; /* the byte to change is the first of this */
        char to;
        bool damaged; /* refused (else cut) */
} flip_cases[] = {
        {"payload of the last", "\"result\"", 'X', false},
        {"checksum of the last", "E 2 ", 'F', false},
        {"payload in the middle", "uuid4", 'U', true},
        {"seq in the middle", "V 1", 'V', true},
        {"kind of the first", "S 0", 'E', true},
        {"newline in the middle", "\nV 1", 'x', true},
};

START_TEST(test_damaged)
{
        _cleanup_free_ char *dir = entry_dir(), *path = pathf("plans/17153280001234/calls");
        JournalCalls *c = NULL;
        char *err = NULL, *text, *at;
        size_t len;
        FILE *f;
        int r;

        write_three(dir);
        text = read_log(path, &len);
        at = strstr(text, flip_cases[_i].find);
        ck_assert_ptr_nonnull(at);
        if (flip_cases[_i].to == 'E' || flip_cases[_i].to == 'V')
                at[0] = at[0] == 'S' ? 'E' : 'S';
        else if (flip_cases[_i].to == 'F')
                at[strcspn(at, "\n") - 1] ^= 1;
        else
                at[0] = flip_cases[_i].to;
        f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(text, 1, len, f), len);
        fclose(f);
        free(text);
        r = journal_calls_open(dir, &c, &err);
        if (flip_cases[_i].damaged) {
                ck_assert_msg(r == JOURNAL_CALLS_DAMAGED, "%s: %d", flip_cases[_i].name, r);
                ck_assert_ptr_null(c);
                ck_assert_ptr_nonnull(strstr(err, "the call log is damaged at record"));
                free(err);
                return;
        }
        ck_assert_msg(r == 0, "%s: %d", flip_cases[_i].name, r);
        ck_assert_int_eq(journal_calls_count(c), 2);
        ck_assert_uint_gt(journal_calls_cut(c), 0);
        journal_calls_free(c);
}
END_TEST

/* Records far larger than a header (a file the Body read) frame as well. */
START_TEST(test_large)
{
        _cleanup_free_ char *dir = entry_dir();
        JournalCalls *c = open_ok(dir);
        size_t n = 1 << 20;
        char *big = malloc(n + 1);
        json_t *v;

        memset(big, 'a', n);
        big[n] = '\0';
        v = json_pack("{s:s,s:s}", "kind", "file", "content", big);
        ck_assert_int_eq(journal_calls_append(c, JOURNAL_CALL_VALUE, v, true), 0);
        journal_calls_free(c);
        c = open_ok(dir);
        ck_assert_int_eq(journal_calls_count(c), 1);
        ck_assert(json_equal(journal_calls_get(c, 0)->data, v));
        journal_calls_free(c);
        json_decref(v);
        free(big);
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_test(tc, test_format);
        tcase_add_test(tc, test_reopen);
        tcase_add_test(tc, test_torn);
        tcase_add_loop_test(tc, test_damaged, 0, (int)ELEMENTSOF(flip_cases));
        tcase_add_test(tc, test_large);
}

int main(void)
{
        return journal_test_main("journal-calls", add_tests);
}
