/* Tests for the journal's durability: the exact order of writes, fsyncs
 * and renames; a failure injected at each file operation (nothing is lost,
 * nothing half-written is left, a retry works); and a crash at each file
 * operation, in a child that exits right there, after which a fresh
 * journal must find every plan either whole or absent, and never a plan
 * whose stamp was taken but that would run again. */
#include "test-journal.h"

#define FROZEN_TS "17153280000000"
#define TEXT      "{\"SourceID\": \"s1\", \"Body\": null}"

static char *expand(const char *fmt, const char *ts)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        char *s;

        for (const char *p = fmt; *p; p++) {
                if (strncmp(p, "<ts>", 4) == 0) {
                        strbuf_puts(&b, ts);
                        p += 3;
                } else {
                        strbuf_putc(&b, *p);
                }
        }
        ck_assert_int_eq(strbuf_steal(&b, &s), 0);
        return s;
}

static bool exists_ts(const char *fmt, const char *ts)
{
        _cleanup_free_ char *rel = expand(fmt, ts);

        return exists(rel);
}

static void assert_entries_ts(Journal *j, const char *fmt, const char *ts)
{
        _cleanup_free_ char *want = expand(fmt, ts);

        assert_entries(j, want);
}

static char *slurp_rel(const char *rel)
{
        _cleanup_free_ char *p = pathf("%s", rel);

        return slurp(p, NULL);
}

static void assert_trace(const char *fmt, const char *ts)
{
        _cleanup_free_ char *want = expand(fmt, ts);

        ck_assert_str_eq(fx.trace.data ? fx.trace.data : "", want);
        strbuf_reset(&fx.trace);
}

/* --- order -------------------------------------------------------------- */

START_TEST(test_order)
{
        _cleanup_(journal_freep) Journal *j = open_test();
        char ts[JOURNAL_TS_MAX];
        json_t *stamp = json_integer(42);

        fx.log = true;
        put_simple(j, ts);
        /* The plan is whole before it has its name; the name and the new
         * entry are durable before the call returns (and the ack). */
        assert_trace("clock\n"
                     "mkdirat plans/<ts>\n"
                     "openat plans/<ts>\n"
                     "openat plans/<ts>/.plan.json.tmp\n"
                     "write plans/<ts>/.plan.json.tmp\n"
                     "fsync plans/<ts>/.plan.json.tmp\n"
                     "renameat plans/<ts>/.plan.json.tmp plans/<ts>/plan.json\n"
                     "fsync plans/<ts>\n"
                     "fsync plans\n",
                     ts);

        /* `running` is durable before the stamp is taken. */
        ck_assert_int_eq(journal_begin(j, ts, stamp), 0);
        json_decref(stamp);
        assert_trace("openat plans/<ts>\n"
                     "openat plans/<ts>/running\n"
                     "fsync plans/<ts>/running\n"
                     "fsync plans/<ts>\n"
                     "openat plans/.stamp.tmp\n"
                     "write plans/.stamp.tmp\n"
                     "fsync plans/.stamp.tmp\n"
                     "renameat plans/.stamp.tmp plans/stamp\n"
                     "fsync plans\n",
                     ts);

        ck_assert_int_eq(journal_put_result(j, ts, TEXT, strlen(TEXT)), 0);
        assert_trace("openat plans/<ts>\n"
                     "openat plans/<ts>/.result.json.tmp\n"
                     "write plans/<ts>/.result.json.tmp\n"
                     "fsync plans/<ts>/.result.json.tmp\n"
                     "renameat plans/<ts>/.result.json.tmp plans/<ts>/result.json\n"
                     "fsync plans/<ts>\n",
                     ts);
}
END_TEST

/* --- failures ----------------------------------------------------------- */

/* put_plan: each of its 9 file operations fails in turn (the 10th case
 * fails nothing). The message must not be acked, and nothing is left. */
START_TEST(test_put_fails)
{
        _cleanup_(journal_freep) Journal *j = open_test();
        _cleanup_free_ char *dir = NULL;
        char ts[JOURNAL_TS_MAX] = "";
        int r;

        fx.log = true;
        fx.calls = 0;
        fx.fail_at = _i + 1;
        r = journal_put_plan(j, "{}", 2, NULL, 0, "id", NULL, ts);
        if (_i == 9) {
                ck_assert_int_eq(r, 0);
                return;
        }
        ck_assert_int_eq(r, -fx.failed_errno);
        ck_assert_str_eq(ts, "");
        assert_entries(j, "");
        dir = plans_dir();
        ck_assert_str_eq(dir, "done");

        /* A new journal finds nothing to repair, and the retry works. */
        fx.fail_at = 0;
        j = journal_free(j);
        j = open_test();
        ck_assert_uint_eq(journal_open_report(j)->n_temp_removed, 0);
        ck_assert_uint_eq(journal_open_report(j)->n_empty_removed, 0);
        put_simple(j, ts);
        assert_entries_ts(j, "<ts>:pending", ts);
}
END_TEST

/* A full disk, by name. */
START_TEST(test_put_enospc)
{
        _cleanup_(journal_freep) Journal *j = open_test();
        _cleanup_free_ char *dir = NULL;
        char ts[JOURNAL_TS_MAX];

        fx.calls = 0;
        fx.fail_at = 5; /* the write */
        fx.fail_errno = ENOSPC;
        ck_assert_int_eq(journal_put_plan(j, "{}", 2, NULL, 0, "id", NULL, ts), -ENOSPC);
        dir = plans_dir();
        ck_assert_str_eq(dir, "done");
}
END_TEST

/* put_result: 6 file operations. On failure the entry keeps running with
 * no result.json and no temporary file; a retry stores it. */
START_TEST(test_result_fails)
{
        _cleanup_(journal_freep) Journal *j = open_test();
        _cleanup_free_ char *text = NULL;
        char ts[JOURNAL_TS_MAX];
        size_t len;
        int r;

        put_simple(j, ts);
        ck_assert_int_eq(journal_begin(j, ts, NULL), 0);
        fx.log = true;
        fx.calls = 0;
        fx.fail_at = _i + 1;
        r = journal_put_result(j, ts, TEXT, strlen(TEXT));
        if (_i == 6) {
                ck_assert_int_eq(r, 0);
                return;
        }
        ck_assert_int_eq(r, -fx.failed_errno);
        assert_entries_ts(j, "<ts>:running", ts);
        ck_assert(!exists_ts("plans/<ts>/result.json", ts));
        ck_assert(!exists_ts("plans/<ts>/.result.json.tmp", ts));
        fx.fail_at = 0;
        ck_assert_int_eq(journal_put_result(j, ts, TEXT, strlen(TEXT)), 0);
        ck_assert_int_eq(journal_load_result(j, ts, &text, &len), 0);
        ck_assert_str_eq(text, TEXT);
}
END_TEST

/* begin with a stamp: 9 file operations. The stamp in memory stays old;
 * on disk it is old unless only the last fsync failed; a new stamp on
 * disk always comes with a durable `running`. */
START_TEST(test_begin_fails)
{
        _cleanup_(journal_freep) Journal *j = open_test();
        _cleanup_free_ char *text = NULL;
        char ts[JOURNAL_TS_MAX];
        json_t *v;
        int r;

        put_simple(j, ts);
        v = json_integer(5);
        ck_assert_int_eq(journal_begin(j, ts, v), 0);
        json_decref(v);
        put_simple(j, ts);

        fx.log = true;
        fx.calls = 0;
        fx.fail_at = _i + 1;
        v = json_integer(6);
        r = journal_begin(j, ts, v);
        if (_i == 9) {
                ck_assert_int_eq(r, 0);
                json_decref(v);
                return;
        }
        ck_assert_int_eq(r, -fx.failed_errno);
        ck_assert_int_eq(journal_last_stamp(j), 5);
        ck_assert(!exists("plans/.stamp.tmp"));
        text = slurp_rel("plans/stamp");
        ck_assert_str_eq(text, _i == 8 ? "6" : "5");
        if (_i == 8)
                ck_assert(exists_ts("plans/<ts>/running", ts));

        /* The daemon retries. */
        fx.fail_at = 0;
        ck_assert_int_eq(journal_begin(j, ts, v), 0);
        json_decref(v);
        ck_assert_int_eq(journal_last_stamp(j), 6);
}
END_TEST

/* --- crashes ------------------------------------------------------------ */

enum { CRASH_PUT, CRASH_BEGIN, CRASH_RESULT, CRASH_REMOVE, CRASH_N_OPS };
#define CRASH_STEPS 12

/* In a child: prepare, then do the operation with an exit before file
 * operation number k (or none: exit status 3 when it finished). */
static json_t *crash_stamp; /* reachable at the crash, like crash_journal */

static void crash_child(int op, int k)
{
        char ts[JOURNAL_TS_MAX];

        crash_stamp = json_integer(77);
        fx.frozen = true;
        fx.frozen_at = (struct timespec){1715328000, 0};
        crash_journal = open_test();
        if (op != CRASH_PUT)
                put_simple(crash_journal, ts);
        if (op == CRASH_RESULT || op == CRASH_REMOVE)
                ck_assert_int_eq(journal_begin(crash_journal, ts, NULL), 0);
        if (op == CRASH_REMOVE)
                ck_assert_int_eq(journal_put_result(crash_journal, ts, TEXT, strlen(TEXT)), 0);
        fx.calls = 0;
        fx.crash_at = k;
        switch (op) {
        case CRASH_PUT:
                put_simple(crash_journal, ts);
                break;
        case CRASH_BEGIN:
                ck_assert_int_eq(journal_begin(crash_journal, ts, crash_stamp), 0);
                break;
        case CRASH_RESULT:
                ck_assert_int_eq(journal_put_result(crash_journal, ts, TEXT, strlen(TEXT)), 0);
                break;
        default:
                ck_assert_int_eq(journal_remove(crash_journal, ts, true), 0);
                break;
        }
        _exit(3);
}

START_TEST(test_crash)
{
        int op = _i / CRASH_STEPS, k = _i % CRASH_STEPS + 1, status;
        _cleanup_(journal_freep) Journal *j = NULL;
        _cleanup_free_ JournalEntry *v = NULL;
        _cleanup_free_ char *text = NULL, *stamp = NULL;
        bool finished;
        size_t n = 0;
        pid_t pid;

        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0)
                crash_child(op, k);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status));
        ck_assert(WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 3);
        finished = WEXITSTATUS(status) == 3;

        /* The child's clock, which dated its done records. */
        fx.frozen = true;
        fx.frozen_at = (struct timespec){1715328000, 0};
        j = open_test();
        ck_assert_int_eq(journal_list(j, &v, &n), 0);
        ck_assert_uint_le(n, 1);
        if (n == 1)
                ck_assert_str_eq(v[0].ts, FROZEN_TS);
        if (exists("plans/stamp"))
                stamp = slurp_rel("plans/stamp");

        switch (op) {
        case CRASH_PUT:
                /* Whole or absent; no leftovers after the repairs. */
                ck_assert(n == 1 || !finished);
                if (n == 1) {
                        ck_assert_int_eq(v[0].state, JOURNAL_PENDING);
                        text = slurp_rel("plans/" FROZEN_TS "/plan.json");
                        ck_assert_str_eq(text, "{\"Data\": \"e30=\", \"Signature\": \"\", "
                                               "\"ID\": \"id\", \"ReplyTo\": null}");
                } else {
                        _cleanup_free_ char *dir = plans_dir();
                        ck_assert_str_eq(dir, "done");
                }
                break;
        case CRASH_BEGIN:
                /* Never PENDING with its stamp taken: it would be dropped
                 * as "old" instead of getting its "interrupted" answer. */
                ck_assert_uint_eq(n, 1);
                if (stamp) {
                        ck_assert_str_eq(stamp, "77");
                        ck_assert_int_eq(v[0].state, JOURNAL_INTERRUPTED);
                }
                ck_assert(!finished || stamp);
                ck_assert(v[0].state == JOURNAL_PENDING || v[0].state == JOURNAL_INTERRUPTED);
                break;
        case CRASH_RESULT:
                ck_assert_uint_eq(n, 1);
                ck_assert(!finished || v[0].state == JOURNAL_RESULT);
                if (v[0].state == JOURNAL_RESULT) {
                        ck_assert_int_eq(journal_load_result(j, FROZEN_TS, &text, NULL), 0);
                        ck_assert_str_eq(text, TEXT);
                } else {
                        ck_assert_int_eq(v[0].state, JOURNAL_INTERRUPTED);
                }
                break;
        default: {
                /* The result is found, in the entry or in its record. */
                json_t *id = json_string("s1");
                ck_assert_int_eq(journal_done_lookup(j, id, &text), 1);
                json_decref(id);
                ck_assert_str_eq(text, TEXT);
                ck_assert(!finished || n == 0);
                if (n == 1)
                        ck_assert_int_eq(v[0].state, JOURNAL_RESULT);
                break;
        }
        }
}
END_TEST

static Suite *journal_faults_suite(void)
{
        Suite *s = suite_create("journal-faults");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_order);
        tcase_add_loop_test(tc, test_put_fails, 0, 10);
        tcase_add_test(tc, test_put_enospc);
        tcase_add_loop_test(tc, test_result_fails, 0, 7);
        tcase_add_loop_test(tc, test_begin_fails, 0, 10);
        tcase_add_loop_test(tc, test_crash, 0, CRASH_N_OPS * CRASH_STEPS);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(journal_faults_suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
