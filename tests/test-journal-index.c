/* Tests for the index the journal keeps in memory: no call of the
 * daemon's loop lists or looks at the disk, and after random calls with
 * random failures the index says what a fresh open of the disk says. */
#include <sys/xattr.h>

#include "test-journal.h"
#include "test-journal-main.h"

/* For test_index_random, which marks the index stale as a failed
 * allocation would. */
#include "journal/journal-internal.h"

/* --- the index: no disk work to list, and always what the disk holds ---- */

/* A plan's whole way with the daemon's calls, and what they cost: no call
 * lists a directory or looks at an entry, whatever the queue holds, and a
 * plan costs 6 fsyncs up to its result, and 8 in all with a Stamp (6
 * without). */
START_TEST(test_no_scans)
{
        _cleanup_(journal_freep) Journal *j = NULL;
        _cleanup_free_ JournalEntry *v = NULL;
        _cleanup_free_ char *text = NULL;
        char ts[JOURNAL_TS_MAX], first[JOURNAL_TS_MAX];
        json_t *id = json_string("p0");
        JournalEntry e;
        size_t n = 0;

        fx.no_fsync = true;
        j = open_test();
        /* A queue of 300: results waiting for their confirm, and plans. */
        for (int i = 0; i < 300; i++) {
                put_simple(j, ts);
                if (i == 0)
                        memcpy(first, ts, sizeof(first));
                if (i % 3 == 0) {
                        char res[64];
                        snprintf(res, sizeof(res), "{\"SourceID\": \"q%d\"}", i);
                        ck_assert_int_eq(journal_put_result(j, ts, res, strlen(res), NULL), 0);
                }
        }
        /* The scan at open is the one that looks, and only there. */
        j = journal_free(j);
        j = open_test();
        ck_assert_uint_ge(fx.n_listings, 2);
        ck_assert_uint_ge(fx.n_access, 900);

        fx.n_listings = fx.n_access = fx.n_stat = fx.n_fsync = 0;
        for (int i = 0; i < 50; i++) {
                ck_assert_int_eq(journal_next(j, &e), 1);
                ck_assert_str_eq(e.ts, first);
                ck_assert_int_eq(e.state, JOURNAL_RESULT);
        }
        ck_assert_int_eq(journal_list(j, &v, &n), 0);
        ck_assert_uint_eq(n, 300);
        /* The first lookup reads each waiting result once for its
         * SourceID; then no file at all unless one matches. */
        ck_assert_int_eq(journal_done_lookup(j, id, &text), 0);
        ck_assert_int_eq(journal_done_lookup(j, id, &text), 0);
        json_decref(id);
        id = json_string("q150");
        ck_assert_int_eq(journal_done_lookup(j, id, &text), 1);
        json_decref(id);
        ck_assert_str_eq(text, "{\"SourceID\": \"q150\"}");

        /* One plan's whole way, as the daemon goes: 5 fsyncs on the
         * engine's round trip (store 3, begin 1, result 1 into the slot
         * the store made; 8 before the stamp left it, 6 before the slot),
         * and at the removal that follows the broker's confirm 2 for the
         * stamp, because the stamp advanced, and 1 for the done record. */
        put_stamped(j, ts, 12345);
        ck_assert_int_eq(journal_put_result(j, ts, "{\"SourceID\": \"new\"}", 20, NULL), 0);
        ck_assert_uint_eq(fx.n_fsync, 3 + 1 + 1);
        ck_assert_int_eq(journal_remove(j, ts, true), 0);
        ck_assert_uint_eq(fx.n_fsync, 3 + 1 + 1 + 2 + 1);
        put_simple(j, ts);
        ck_assert_int_eq(journal_begin(j, ts, NULL), 0);
        ck_assert_int_eq(journal_put_result(j, ts, "{\"SourceID\": \"new2\"}", 21, NULL), 0);
        ck_assert_int_eq(journal_remove(j, ts, false), 0);
        ck_assert_uint_eq(fx.n_fsync, 8 + 3 + 1 + 1);
        /* From then on the stamp file, its name durable and the digits as
         * many, is written in place: the removal that settles a new stamp
         * costs one fsync (the done record one more), and no rename
         * replaces a block. */
        put_stamped(j, ts, 12346);
        ck_assert_int_eq(journal_put_result(j, ts, "{\"SourceID\": \"new3\"}", 21, NULL), 0);
        ck_assert_int_eq(journal_remove(j, ts, true), 0);
        ck_assert_uint_eq(fx.n_fsync, 13 + 3 + 1 + 1 + 1 + 1);
        ck_assert_uint_eq(fx.n_listings, 0);
        ck_assert_uint_eq(fx.n_access, 0);
        ck_assert_uint_eq(fx.n_stat, 0);
}
END_TEST

/* What the daemon's two lanes ask: the result in flight (published, not
 * yet confirmed) is looked past, to the next unsent result first, else the
 * first plan; the entry being run is never picked. */
START_TEST(test_next_except)
{
        _cleanup_(journal_freep) Journal *j = NULL;
        char a[JOURNAL_TS_MAX], b[JOURNAL_TS_MAX], c[JOURNAL_TS_MAX];
        JournalEntry e;

        j = open_test();
        put_simple(j, a);
        put_simple(j, b);
        put_simple(j, c);
        ck_assert_int_eq(journal_put_result(j, a, "{}", 2, NULL), 0);
        ck_assert_int_eq(journal_next_except(j, NULL, &e), 1);
        ck_assert_str_eq(e.ts, a);
        ck_assert_int_eq(e.state, JOURNAL_RESULT);
        /* a in flight: the first plan, b. */
        ck_assert_int_eq(journal_next_except(j, a, &e), 1);
        ck_assert_str_eq(e.ts, b);
        ck_assert_int_eq(e.state, JOURNAL_PENDING);
        /* b runs: c is next, but only the plan lane could take it. */
        ck_assert_int_eq(journal_begin(j, b, NULL), 0);
        ck_assert_int_eq(journal_next_except(j, a, &e), 1);
        ck_assert_str_eq(e.ts, c);
        /* b's result, unsent, goes before plan c; a's is still skipped. */
        ck_assert_int_eq(journal_put_result(j, b, "{}", 2, NULL), 0);
        ck_assert_int_eq(journal_next_except(j, a, &e), 1);
        ck_assert_str_eq(e.ts, b);
        ck_assert_int_eq(e.state, JOURNAL_RESULT);
        ck_assert_int_eq(journal_next(j, &e), 1);
        ck_assert_str_eq(e.ts, a);
        /* Nothing but the skipped entry: nothing to do. */
        ck_assert_int_eq(journal_remove(j, b, false), 0);
        ck_assert_int_eq(journal_remove(j, c, false), 0);
        ck_assert_int_eq(journal_next_except(j, a, &e), 0);
        ck_assert_int_eq(journal_next_except(j, "999", &e), 1);
        ck_assert_str_eq(e.ts, a);
}
END_TEST

/* A small PRNG, so that a failing seed can be run again. */
static uint32_t rnd_state;

static uint32_t rnd(uint32_t n)
{
        rnd_state ^= rnd_state << 13;
        rnd_state ^= rnd_state >> 17;
        rnd_state ^= rnd_state << 5;
        return rnd_state % n;
}

static json_t *random_id(void)
{
        static const char *const ids[] = {"a", "b", "c", "1", "2", ""};
        uint32_t k = rnd(ELEMENTSOF(ids) + 2);

        return k < ELEMENTSOF(ids) ? json_string(ids[k]) : json_integer(k);
}

/* The reference's main loop's pick, from the storage directory itself:
 * the lowest name with result.json, else the lowest with plan.json that
 * this process is not running. */
static int reference_next(Journal *j, JournalEntry *ret)
{
        _cleanup_free_ char *res = reference_first("result.json");
        _cleanup_free_ JournalEntry *v = NULL;
        size_t n = 0;

        if (res) {
                snprintf(ret->ts, sizeof(ret->ts), "%s", res);
                ret->state = JOURNAL_RESULT;
                return 1;
        }
        ck_assert_int_eq(journal_list(j, &v, &n), 0);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *plan = pathf("plans/%s/plan.json", v[i].ts);
                _cleanup_free_ char *run = pathf("plans/%s/running", v[i].ts);
                if (access(plan, F_OK) != 0 || v[i].state == JOURNAL_RUNNING)
                        continue;
                *ret = v[i];
                ret->state = access(run, F_OK) == 0 ? JOURNAL_INTERRUPTED : JOURNAL_PENDING;
                return 1;
        }
        return 0;
}

/* cp -a of the storage directory, in the process (a shell per call is
 * too slow for hundreds of calls): directories, files, their seals and
 * their modification times, which date the done records. */
static const char *copy_dst;

static int copy_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        _cleanup_free_ char *to = NULL, *data = NULL;
        struct timespec times[2] = {st->st_atim, st->st_mtim};
        unsigned char seal[64];
        ssize_t seal_len;
        size_t len;
        FILE *f;

        ck_assert_int_ge(asprintf(&to, "%s%s", copy_dst, path + strlen(storage)), 0);
        if (flag == FTW_D) {
                ck_assert(mkdir(to, 0700) == 0 || errno == EEXIST);
                return 0;
        }
        ck_assert_int_eq(flag, FTW_F);
        ck_assert_int_eq(file_read_all(path, 1 << 24, &data, &len), 0);
        f = fopen(to, "w");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(data, 1, len, f), len);
        ck_assert_int_eq(fclose(f), 0);
        seal_len = getxattr(path, "user.muranoagent.seal", seal, sizeof(seal));
        if (seal_len > 0)
                ck_assert_int_eq(setxattr(to, "user.muranoagent.seal", seal, (size_t)seal_len, 0),
                                 0);
        ck_assert_int_eq(utimensat(AT_FDCWD, to, times, 0), 0);
        return 0;
}

static void copy_storage(const char *dst)
{
        rm_rf(dst);
        copy_dst = dst;
        ck_assert_int_eq(nftw(storage, copy_entry, 16, FTW_PHYS), 0);
}

/* j's view against that of a journal opened afresh on what the disk
 * holds. j holds the flock, so the fresh one opens a copy. Lookups of every ID must agree too. */
static void assert_agrees(Journal *j, const char *copy, int op)
{
        _cleanup_(journal_freep) Journal *k = NULL;
        _cleanup_free_ char *mine = NULL, *theirs = NULL;
        JournalEntry ej, ek;
        int rj, rk;

        copy_storage(copy);
        ck_assert_int_eq(journal_open(copy, NULL, &k), 0);
        mine = list_text(j, true);
        theirs = list_text(k, false);
        if (!streq(mine, theirs))
                ck_abort_msg("after op %d: index %s, disk %s", op, mine, theirs);
        /* A stamp saved whose last fsync failed is kept on disk but not
         * in memory (test_begin_fails). */
        ck_assert_int_ge(journal_last_stamp(k), journal_last_stamp(j));
        /* next() picks from the index as the reference picks from the
         * disk (a RUNNING plan is not picked; a fresh open would answer
         * it as interrupted). */
        rj = journal_next(j, &ej);
        rk = reference_next(j, &ek);
        ck_assert_int_eq(rj, rk);
        if (rj == 1) {
                ck_assert_str_eq(ej.ts, ek.ts);
                ck_assert_int_eq(ej.state, ek.state);
        }
        for (int i = 0; i < 8; i++) {
                json_t *id = i < 6 ? json_string((const char *[]){"a", "b", "c", "1", "2", ""}[i])
                                   : json_integer(i);
                _cleanup_free_ char *tj = NULL, *tk = NULL;

                rj = journal_done_lookup(j, id, &tj);
                rk = journal_done_lookup(k, id, &tk);
                json_decref(id);
                ck_assert_int_eq(rj, rk);
                if (rj == 1)
                        ck_assert_str_eq(tj, tk);
        }
}

/* Random calls, one in four with one of its file operations failing, and
 * after each the index must say what a fresh open of the disk says. */
START_TEST(test_index_random)
{
        _cleanup_(journal_freep) Journal *j = NULL;
        char copy[64];

        /* On tmpfs where there is one: a disk makes the copies slow. */
        strcpy(copy, access("/dev/shm", W_OK) == 0 ? "/dev/shm/test-journal-copy-XXXXXX"
                                                   : "/tmp/test-journal-copy-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(copy));
        rnd_state = 0x9e3779b9u * (uint32_t)(_i + 1);
        fx.no_fsync = true;
        j = open_test();
        for (int op = 0; op < 150; op++) {
                _cleanup_free_ JournalEntry *v = NULL;
                _cleanup_free_ char *text = NULL;
                char ts[JOURNAL_TS_MAX] = "0";
                json_t *id = NULL;
                size_t n = 0;

                ck_assert_int_eq(journal_list(j, &v, &n), 0);
                if (n > 0)
                        memcpy(ts, v[rnd((uint32_t)n)].ts, JOURNAL_TS_MAX);
                fx.calls = 0;
                fx.fail_at = rnd(4) == 0 ? (int)rnd(8) + 1 : 0;
                switch (rnd(n > 0 ? 6 : 1)) {
                case 0:
                        (void)journal_put_plan(j, "{}", 2, NULL, 0, "m", NULL, ts);
                        break;
                case 1: {
                        uint32_t k = rnd(3);
                        id = k == 0 ? NULL : json_integer(journal_last_stamp(j) + (k == 1 ? 0 : 1));
                        (void)journal_begin(j, ts, id);
                        break;
                }
                case 2:
                        id = random_id();
                        if (json_is_string(id))
                                ck_assert_int_ge(asprintf(&text,
                                                          "{\"SourceID\": \"%s\", \"op\": %d}",
                                                          json_string_value(id), op),
                                                 0);
                        else
                                ck_assert_int_ge(asprintf(&text, "{\"SourceID\": %lld, \"op\": %d}",
                                                          (long long)json_integer_value(id), op),
                                                 0);
                        (void)journal_put_result(j, ts, text, strlen(text), NULL);
                        break;
                case 3:
                case 4:
                        (void)journal_remove(j, ts, rnd(3) != 0);
                        break;
                default:
                        id = random_id();
                        (void)journal_done_lookup(j, id, &text);
                        break;
                }
                json_decref(id);
                fx.fail_at = 0;
                if (rnd(8) == 0) {
                        /* The rebuild after a failed allocation gives the
                         * same index, RUNNING entries included. */
                        _cleanup_free_ char *before = list_text(j, false), *after = NULL;

                        j->index_stale = true;
                        after = list_text(j, false);
                        ck_assert_str_eq(after, before);
                        ck_assert(!j->index_stale);
                }
                assert_agrees(j, copy, op);
        }
        /* And the real thing: the same directory, opened afresh. */
        {
                _cleanup_free_ char *before = list_text(j, true), *after = NULL;

                j = journal_free(j);
                j = open_test();
                after = list_text(j, false);
                ck_assert_str_eq(before, after);
        }
        rm_rf(copy);
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_test(tc, test_no_scans);
        tcase_add_test(tc, test_next_except);
        tcase_add_loop_test(tc, test_index_random, 0, 6);
}

int main(void)
{
        return journal_test_main("journal-index", add_tests);
}
