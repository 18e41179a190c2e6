/* Tests for the call log (journal-calls.h): its record format byte for
 * byte (the journal key's HMAC, chained), records read back after a
 * reopen, a torn last record cut off at every length, a changed record in
 * the middle refused, and a log planted, reordered or moved by a process
 * without the key never taken for what it says. */
#include "test-journal.h"
#include "test-journal-main.h"

#include "journal/journal-calls.h"

#define TS "17153280001234"

static JournalCallsKey *key;

/* The key of entry TS (another: name) in the test's journal. */
static JournalCallsKey *key_of(const char *name)
{
        Journal *j = open_with(NULL);
        JournalCallsKey *k = NULL;

        ck_assert_int_eq(journal_calls_key(j, name, &k), 0);
        ck_assert(journal_calls_key_sealed(k));
        journal_free(j);
        return k;
}

static void key_setup(void)
{
        key = key_of(TS);
}

static void key_teardown(void)
{
        journal_calls_key_free(key);
        key = NULL;
}

static char *entry_dir(void)
{
        char *dir = pathf("plans");
        mkdir(dir, 0700);
        free(dir);
        dir = pathf("plans/" TS);
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

        ck_assert_int_eq(journal_calls_open(dir, key, &c, &err), 0);
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

/* The HMAC-SHA256 of a record, in hex, as docs/journal.md gives it:
 * computed here from journal.key with OpenSSL's HMAC(). */
static void want_mac(const unsigned char prev[32], const char *head, const char *payload,
                     char hex[65], unsigned char mac[32])
{
        _cleanup_free_ char *kp = pathf("journal.key"), *k = NULL;
        unsigned mac_len = 0;
        size_t klen;
        StrBuf msg = STRBUF_INIT;

        ck_assert_int_eq(file_read_all(kp, 64, &k, &klen), 0);
        strbuf_append(&msg, "muranoagent-seal-1\0calls\0" TS,
                      sizeof("muranoagent-seal-1\0calls\0" TS));
        strbuf_append(&msg, (const char *)prev, 32);
        strbuf_append(&msg, head, strlen(head));
        strbuf_append(&msg, "\n", 1);
        strbuf_append(&msg, payload, strlen(payload));
        ck_assert_ptr_nonnull(HMAC(EVP_sha256(), k, (int)klen, (unsigned char *)msg.data, msg.len,
                                   mac, &mac_len));
        ck_assert_uint_eq(mac_len, 32);
        strbuf_free(&msg);
        for (int i = 0; i < 32; i++)
                snprintf(hex + 2 * i, 3, "%02x", mac[i]);
}

START_TEST(test_format)
{
        _cleanup_free_ char *dir = entry_dir(), *path = pathf("plans/" TS "/calls");
        _cleanup_free_ char *text = NULL;
        JournalCalls *c = open_ok(dir);
        unsigned char zero[32] = {0}, mac0[32], mac1[32];
        char want[512], hex0[65], hex1[65];

        ck_assert_int_eq(journal_calls_count(c), 0);
        append_json(c, JOURNAL_CALL_START, "{\"call\":0}", true);
        append_json(c, JOURNAL_CALL_END, "{\"call\":0,\"result\":1}", true);
        journal_calls_free(c);
        text = slurp(path, NULL);
        /* The first record's mac chains on zeros, the second's on the
         * first's. */
        want_mac(zero, "S 0 10", "{\"call\":0}", hex0, mac0);
        want_mac(mac0, "E 1 21", "{\"call\":0,\"result\":1}", hex1, mac1);
        snprintf(want, sizeof(want),
                 "S 0 10 %s\n{\"call\":0}\nE 1 21 %s\n{\"call\":0,\"result\":1}\n", hex0, hex1);
        ck_assert_str_eq(text, want);
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
        _cleanup_free_ char *dir = entry_dir(), *path = pathf("plans/" TS "/calls");
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
        {"payload of the last", "\"result\"", 'X', false}, {"mac of the last", "E 2 ", 'F', false},
        {"payload in the middle", "uuid4", 'U', true},     {"kind in the middle", "V 1", 'V', true},
        {"kind of the first", "S 0", 'E', true},           {"mac in the middle", "V 1 ", 'M', true},
        {"newline in the middle", "\nV 1", 'x', true},
};

START_TEST(test_damaged)
{
        _cleanup_free_ char *dir = entry_dir(), *path = pathf("plans/" TS "/calls");
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
        else if (flip_cases[_i].to == 'M') /* still a hex digit */
                at[strcspn(at, "\n") - 1] = at[strcspn(at, "\n") - 1] == '0' ? '1' : '0';
        else
                at[0] = flip_cases[_i].to;
        f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(text, 1, len, f), len);
        fclose(f);
        free(text);
        r = journal_calls_open(dir, key, &c, &err);
        if (flip_cases[_i].damaged) {
                ck_assert_msg(r == JOURNAL_CALLS_DAMAGED, "%s: %d", flip_cases[_i].name, r);
                ck_assert_ptr_null(c);
                ck_assert_ptr_nonnull(strstr(err, "the call log is "));
                ck_assert_ptr_nonnull(strstr(err, " at record "));
                /* Whole records whose mac alone fails are forged. */
                if (flip_cases[_i].to == 'U' || flip_cases[_i].to == 'M')
                        ck_assert_ptr_nonnull(strstr(err, "is forged at record 1"));
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

/* The bytes of the log of entry dir after write_three() with key k. */
static char *three_with(JournalCallsKey *k, const char *name, size_t *len)
{
        _cleanup_free_ char *dir = pathf("plans/%s", name), *path = pathf("plans/%s/calls", name);
        JournalCallsKey *keep = key;
        char *text;

        mkdir(dir, 0700);
        key = k;
        write_three(dir);
        key = keep;
        text = read_log(path, len);
        ck_assert_int_eq(unlink(path), 0);
        return text;
}

/* A log that a process without the key writes, as it would be read: */
enum { PLANT_UNKEYED, PLANT_CRC, PLANT_MOVED, PLANT_REORDERED, PLANT_OTHER_KEY };
static const struct {
        const char *name;
        int how;
        const char *says; /* refused, naming it; NULL: every record cut */
} plant_cases[] = {
        /* framed as a journal without seals frames it (plain SHA-256) */
        {"unkeyed", PLANT_UNKEYED, "is forged at record 0"},
        /* in the format before seals, with a valid CRC-32 */
        {"crc", PLANT_CRC, NULL},
        /* another entry's log, sealed with the right key */
        {"moved", PLANT_MOVED, "is forged at record 0"},
        /* this entry's records in another order */
        {"reordered", PLANT_REORDERED, "is forged at record 1"},
        /* sealed with another journal's key */
        {"other key", PLANT_OTHER_KEY, "is forged at record 0"},
};

START_TEST(test_planted)
{
        _cleanup_free_ char *dir = entry_dir(), *path = pathf("plans/" TS "/calls");
        JournalCallsKey *k = NULL;
        JournalCalls *c = NULL;
        char *text = NULL, *err = NULL;
        size_t len = 0;
        int r;

        switch (plant_cases[_i].how) {
        case PLANT_UNKEYED:
                ck_assert_int_eq(journal_calls_key(NULL, TS, &k), 0);
                text = three_with(k, TS, &len);
                break;
        case PLANT_CRC: {
                static const char *const recs[][2] = {
                        {"S 0 22", "{\"call\":0,\"name\":\"a\"}"},
                        {"E 1 35", "{\"call\":0,\"result\":{\"exitCode\":0}}"},
                };
                StrBuf b = STRBUF_INIT;
                for (size_t i = 0; i < ELEMENTSOF(recs); i++)
                        strbuf_printf(&b, "%s %08x\n%s\n", recs[i][0],
                                      test_crc32(test_crc32(0, recs[i][0], strlen(recs[i][0])),
                                                 recs[i][1], strlen(recs[i][1])),
                                      recs[i][1]);
                text = b.data;
                len = b.len;
                break;
        }
        case PLANT_MOVED:
                k = key_of("17153280009999");
                text = three_with(k, "17153280009999", &len);
                break;
        case PLANT_REORDERED: {
                char *v, *e, *swapped;
                text = three_with(key, TS, &len);
                v = strstr(text, "V 1 ");
                e = strstr(text, "E 2 ");
                swapped = malloc(len + 1);
                memcpy(swapped, text, (size_t)(v - text));
                memcpy(swapped + (v - text), e, len - (size_t)(e - text));
                memcpy(swapped + (v - text) + (len - (size_t)(e - text)), v, (size_t)(e - v));
                swapped[len] = '\0';
                free(text);
                text = swapped;
                break;
        }
        case PLANT_OTHER_KEY: {
                _cleanup_free_ char *kp = pathf("journal.key");
                JournalCallsKey *mine = key;
                ck_assert_int_eq(unlink(kp), 0);
                k = key_of(TS);
                text = three_with(k, TS, &len);
                /* The agent's key is another one now. */
                journal_calls_key_free(k);
                k = NULL;
                ck_assert_int_eq(unlink(kp), 0);
                key = NULL;
                key_setup();
                journal_calls_key_free(mine);
                break;
        }
        }
        /* Opening a journal for another key removed the entry: it has
         * no plan.json. */
        free(entry_dir());
        FILE *f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(text, 1, len, f), len);
        fclose(f);
        r = journal_calls_open(dir, key, &c, &err);
        if (plant_cases[_i].says) {
                ck_assert_msg(r == JOURNAL_CALLS_DAMAGED, "%s: %d", plant_cases[_i].name, r);
                ck_assert_msg(strstr(err, plant_cases[_i].says), "%s: %s", plant_cases[_i].name,
                              err);
        } else {
                /* Nothing of it is taken: the calls run again. */
                ck_assert_int_eq(r, 0);
                ck_assert_int_eq(journal_calls_count(c), 0);
                ck_assert_uint_eq(journal_calls_cut(c), len);
        }
        journal_calls_free(c);
        journal_calls_key_free(k);
        free(err);
        free(text);
}
END_TEST

/* An openat() that takes every open of an entry's `calls` to `calls.moved`
 * beside it. */
static int moved_openat(int dirfd, const char *path, int flags, mode_t mode)
{
        size_t n = strlen(path);
        char moved[PATH_MAX];

        if (n >= 6 && streq(path + n - 6, "/calls")) {
                snprintf(moved, sizeof(moved), "%s.moved", path);
                return openat(dirfd, moved, flags, mode);
        }
        return openat(dirfd, path, flags, mode);
}

/* The records are read from the file the log goes on writing, through the
 * one descriptor it opens (no second open by name to read it first). */
START_TEST(test_one_file)
{
        _cleanup_free_ char *dir = entry_dir(), *path = pathf("plans/" TS "/calls");
        _cleanup_free_ char *moved = pathf("plans/" TS "/calls.moved"), *text = NULL, *after = NULL;
        JournalOptions o = JOURNAL_OPTIONS_DEFAULT;
        JournalOps ops = {.openat = moved_openat};
        JournalCallsKey *k = NULL;
        JournalCalls *c;
        size_t len, len_after;
        Journal *j;

        /* Opening the journal removes the entry (no plan.json). */
        o.ops = &ops;
        j = open_with(&o);
        ck_assert_int_eq(journal_calls_key(j, TS, &k), 0);
        journal_free(j);
        free(entry_dir());
        write_three(dir);
        ck_assert_int_eq(rename(path, moved), 0);
        c = open_ok(dir);
        append_json(c, JOURNAL_CALL_START, "{\"call\":9}", true);
        journal_calls_free(c);
        text = read_log(path, &len);
        ck_assert_int_eq(journal_calls_open(dir, k, &c, &(char *){NULL}), 0);
        ck_assert_int_eq(journal_calls_count(c), 3);
        assert_record(c, 2, 'E', "{\"call\":0,\"result\":{\"exitCode\":0}}");
        append_json(c, JOURNAL_CALL_REBOOT, "{\"call\":0}", true);
        journal_calls_free(c);
        journal_calls_key_free(k);
        /* `calls` is as it was, and the moved file has the fourth record. */
        after = read_log(path, &len_after);
        ck_assert_uint_eq(len_after, len);
        ck_assert(memcmp(after, text, len) == 0);
        ck_assert_int_eq(rename(moved, path), 0);
        c = open_ok(dir);
        ck_assert_int_eq(journal_calls_count(c), 4);
        assert_record(c, 3, 'R', "{\"call\":0}");
        journal_calls_free(c);
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_checked_fixture(tc, key_setup, key_teardown);
        tcase_add_test(tc, test_format);
        tcase_add_test(tc, test_reopen);
        tcase_add_test(tc, test_torn);
        tcase_add_loop_test(tc, test_damaged, 0, (int)ELEMENTSOF(flip_cases));
        tcase_add_test(tc, test_large);
        tcase_add_loop_test(tc, test_planted, 0, (int)ELEMENTSOF(plant_cases));
        tcase_add_test(tc, test_one_file);
}

int main(void)
{
        return journal_test_main("journal-calls", add_tests);
}
