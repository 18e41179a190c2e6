/* Tests for the journal's durability: the exact order of writes, fsyncs
 * and renames; a failure injected at each file operation (nothing is lost,
 * nothing half-written is left, a retry works); and a crash at each file
 * operation, in a child that exits right there, after which a fresh
 * journal must find every plan either whole or absent, and never a plan
 * whose stamp was taken but that would run again. The index the journal
 * keeps in memory is tested in test-journal-index.c. */
#include "test-journal.h"
#include "test-journal-main.h"

#define FROZEN_TS "17153280000000"
#define TEXT      "{\"SourceID\": \"s1\", \"Body\": null}"

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

        /* `running` is durable before the stamp is taken. It is a second
         * name of the durable plan.json, so the directory's fsync is
         * all it needs. The stamp file is replaced without an fsync:
         * plan.json and `running` keep the stamp (test_power_loss). */
        ck_assert_int_eq(journal_begin(j, ts, stamp), 0);
        json_decref(stamp);
        assert_trace("openat plans/<ts>\n"
                     "linkat plans/<ts>/plan.json plans/<ts>/running\n"
                     "fsync plans/<ts>\n"
                     "openat plans/.stamp.tmp\n"
                     "write plans/.stamp.tmp\n"
                     "renameat plans/.stamp.tmp plans/stamp\n",
                     ts);

        ck_assert_int_eq(journal_put_result(j, ts, TEXT, strlen(TEXT), NULL), 0);
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
        JournalOptions o = JOURNAL_OPTIONS_DEFAULT;
        _cleanup_(journal_freep) Journal *j = NULL;
        _cleanup_free_ char *text = NULL;
        char ts[JOURNAL_TS_MAX];
        size_t len;
        int r;

        /* Without a reserve: with one, a write that fails with ENOSPC is
         * tried again (test-journal-space.c). */
        o.ops = &test_ops;
        o.reserve_size = 0;
        j = open_with(&o);
        put_simple(j, ts);
        ck_assert_int_eq(journal_begin(j, ts, NULL), 0);
        fx.log = true;
        fx.calls = 0;
        fx.fail_at = _i + 1;
        r = journal_put_result(j, ts, TEXT, strlen(TEXT), NULL);
        if (_i == 6) {
                ck_assert_int_eq(r, 0);
                return;
        }
        ck_assert_int_eq(r, -fx.failed_errno);
        assert_entries_ts(j, "<ts>:running", ts);
        ck_assert(!exists_ts("plans/<ts>/result.json", ts));
        ck_assert(!exists_ts("plans/<ts>/.result.json.tmp", ts));
        fx.fail_at = 0;
        ck_assert_int_eq(journal_put_result(j, ts, TEXT, strlen(TEXT), NULL), 0);
        ck_assert_int_eq(journal_load_result(j, ts, &text, &len), 0);
        ck_assert_str_eq(text, TEXT);
}
END_TEST

/* begin with a stamp: 6 file operations. The stamp in memory and on disk
 * stays old; a new stamp on disk always comes with a durable `running`.
 * When the link cannot be made, `running` is an empty file instead,
 * fsync'd itself. */
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
        if (_i >= 5) {
                /* Nothing failed: "6" has as many digits as "5", so it is
                 * written in place (5 calls). */
                assert_trace("openat plans/<ts>\n"
                             "linkat plans/<ts>/plan.json plans/<ts>/running\n"
                             "fsync plans/<ts>\n"
                             "openat plans/stamp\n"
                             "write plans/stamp\n",
                             ts);
                ck_assert_int_eq(r, 0);
                text = slurp_rel("plans/stamp");
                ck_assert_str_eq(text, "6");
                json_decref(v);
                return;
        }
        if (_i == 3 || _i == 4) {
                /* The write in place failed: the file is replaced. */
                assert_trace(_i == 3 ? "openat plans/<ts>\n"
                                       "linkat plans/<ts>/plan.json plans/<ts>/running\n"
                                       "fsync plans/<ts>\n"
                                       "openat plans/stamp\n"
                                       "openat plans/.stamp.tmp\n"
                                       "write plans/.stamp.tmp\n"
                                       "renameat plans/.stamp.tmp plans/stamp\n"
                                     : "openat plans/<ts>\n"
                                       "linkat plans/<ts>/plan.json plans/<ts>/running\n"
                                       "fsync plans/<ts>\n"
                                       "openat plans/stamp\n"
                                       "write plans/stamp\n"
                                       "openat plans/.stamp.tmp\n"
                                       "write plans/.stamp.tmp\n"
                                       "renameat plans/.stamp.tmp plans/stamp\n",
                             ts);
                ck_assert_int_eq(r, 0);
                ck_assert_int_eq(journal_last_stamp(j), 6);
                text = slurp_rel("plans/stamp");
                ck_assert_str_eq(text, "6");
                ck_assert(!exists("plans/.stamp.tmp"));
                json_decref(v);
                return;
        }
        if (_i == 1) {
                _cleanup_free_ char *rp = pathf("plans/%s/running", ts);
                struct stat st;

                assert_trace("openat plans/<ts>\n"
                             "linkat plans/<ts>/plan.json plans/<ts>/running\n"
                             "openat plans/<ts>/running\n"
                             "fsync plans/<ts>/running\n"
                             "fsync plans/<ts>\n"
                             "openat plans/stamp\n"
                             "write plans/stamp\n",
                             ts);
                ck_assert_int_eq(r, 0);
                ck_assert_int_eq(stat(rp, &st), 0);
                ck_assert_int_eq(st.st_size, 0);
                ck_assert_int_eq(journal_last_stamp(j), 6);
                json_decref(v);
                return;
        }
        ck_assert_int_eq(r, -fx.failed_errno);
        ck_assert_int_eq(journal_last_stamp(j), 5);
        ck_assert(!exists("plans/.stamp.tmp"));
        text = slurp_rel("plans/stamp");
        ck_assert_str_eq(text, "5");
        ck_assert(exists_ts("plans/<ts>/running", ts) == (_i >= 2));

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
                ck_assert_int_eq(journal_put_result(crash_journal, ts, TEXT, strlen(TEXT), NULL),
                                 0);
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
                ck_assert_int_eq(journal_put_result(crash_journal, ts, TEXT, strlen(TEXT), NULL),
                                 0);
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

/* --- the stamp: durable before the plan that holds it goes ------------- */

/* journal_remove() makes the stamp file durable before plan.json goes,
 * once for each advance of the stamp, and never for a stamp-less plan. */
START_TEST(test_settle)
{
        _cleanup_(journal_freep) Journal *j = open_test();
        _cleanup_free_ char *text = NULL;
        char a[JOURNAL_TS_MAX], b[JOURNAL_TS_MAX], c[JOURNAL_TS_MAX];
        unsigned n;

        put_stamped(j, a, 50);
        put_stamped(j, b, 51);
        put_simple(j, c);
        ck_assert_int_eq(journal_begin(j, c, NULL), 0);
        ck_assert_int_eq(journal_put_result(j, a, TEXT, strlen(TEXT), NULL), 0);
        ck_assert_int_eq(journal_put_result(j, b, TEXT, strlen(TEXT), NULL), 0);

        /* The file is whole and named for good before plan.json goes; the
         * value is the last one, which covers b too. */
        fx.log = true;
        ck_assert_int_eq(journal_remove(j, a, false), 0);
        assert_trace("openat plans/.stamp.tmp\n"
                     "write plans/.stamp.tmp\n"
                     "fsync plans/.stamp.tmp\n"
                     "renameat plans/.stamp.tmp plans/stamp\n"
                     "fsync plans\n"
                     "unlinkat plans/<ts>/plan.json\n"
                     "unlinkat plans/<ts>/running\n"
                     "unlinkat plans/<ts>/result.json\n"
                     "unlinkat plans/<ts>\n",
                     a);
        text = slurp_rel("plans/stamp");
        ck_assert_str_eq(text, "51");
        n = fx.n_fsync;
        ck_assert_int_eq(journal_remove(j, b, true), 0);
        ck_assert_int_eq(journal_remove(j, c, false), 0);
        /* b's done record only. */
        ck_assert_uint_eq(fx.n_fsync, n + 1);
        ck_assert(strstr(fx.trace.data, "stamp") == NULL);
        strbuf_reset(&fx.trace);

        /* A failure keeps the entry, whole; the retry pays the fsyncs. The
         * disk fails from the stamp's fsync on: in place, then the
         * replacement that should mend it. */
        put_stamped(j, a, 52);
        fx.calls = 0;
        fx.fail_at = 3;
        fx.fail_through = 100;
        ck_assert_int_eq(journal_remove(j, a, false), -EIO);
        fx.fail_through = 0;
        ck_assert(exists_ts("plans/<ts>/plan.json", a) && exists_ts("plans/<ts>/running", a));
        assert_entries_ts(j, "<ts>:running", a);
        fx.fail_at = 0;
        n = fx.n_fsync;
        ck_assert_int_eq(journal_remove(j, a, false), 0);
        ck_assert_uint_eq(fx.n_fsync, n + 2);

        /* What a killed agent wrote may be in the page cache only: after
         * a restart, the first removal of a plan holding a stamp above 0
         * makes it durable, whatever the file shows. */
        put_stamped(j, a, 53);
        j = journal_free(j);
        j = open_test();
        ck_assert(!journal_open_report(j)->stamp_recovered);
        ck_assert_int_eq(journal_last_stamp(j), 53);
        n = fx.n_fsync;
        ck_assert_int_eq(journal_remove(j, a, false), 0);
        ck_assert_uint_eq(fx.n_fsync, n + 2);
}
END_TEST

/* A power loss at each file operation of three stamped plans, two of them
 * begun before either is removed (power_loss() in test-journal.h): a new
 * journal refuses every stamp that journal_begin() accepted. This fails
 * if the stamp file is not made durable before a plan's plan.json goes,
 * or if the stamps of plans with a result are not recovered. */
#define LOSS_STEPS 92

static void loss_child(int k)
{
        static const int64_t stamps[] = {10, 11, 12};
        char ts[3][JOURNAL_TS_MAX];

        fx.no_fsync = true;
        fx.power_loss = true;
        crash_journal = open_test();
        fx.calls = 0;
        fx.crash_at = k;
        for (int i = 0; i < 3; i++) {
                _cleanup_free_ char *acc = pathf("accepted");
                FILE *f;

                put_stamped(crash_journal, ts[i], stamps[i]);
                /* Outside plans/, and not through the ops: what the
                 * daemon knows to have run. */
                f = fopen(acc, "w");
                ck_assert_ptr_nonnull(f);
                fprintf(f, "%d", (int)stamps[i]);
                fclose(f);
                if (i == 1)
                        continue;
                for (int m = i == 2 ? 1 : 0; m <= i; m++) {
                        ck_assert_int_eq(
                                journal_put_result(crash_journal, ts[m], TEXT, strlen(TEXT), NULL),
                                0);
                        ck_assert_int_eq(journal_remove(crash_journal, ts[m], m != 1), 0);
                }
        }
        _exit(3);
}

START_TEST(test_power_loss)
{
        _cleanup_(journal_freep) Journal *j = NULL;
        _cleanup_free_ char *acc = NULL;
        char ts[JOURNAL_TS_MAX];
        int status, accepted = 0;
        pid_t pid;

        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0)
                loss_child(_i + 1);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status));
        /* Enough steps to reach the end. */
        ck_assert(WEXITSTATUS(status) == 0 || (WEXITSTATUS(status) == 3 && _i == LOSS_STEPS - 1));
        if (exists("accepted")) {
                acc = slurp_rel("accepted");
                accepted = atoi(acc);
        }
        j = open_test();
        ck_assert_int_ge(journal_last_stamp(j), accepted);
        ck_assert_int_le(journal_last_stamp(j), 12);
        if (WEXITSTATUS(status) == 3)
                ck_assert_int_eq(journal_last_stamp(j), 12);
        if (accepted > 0) {
                json_t *v = json_integer(accepted);

                put_simple(j, ts);
                ck_assert_int_eq(journal_begin(j, ts, v), JOURNAL_STAMP_OLD);
                json_decref(v);
        }
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_test(tc, test_order);
        tcase_add_loop_test(tc, test_put_fails, 0, 10);
        tcase_add_test(tc, test_put_enospc);
        tcase_add_loop_test(tc, test_result_fails, 0, 7);
        tcase_add_loop_test(tc, test_begin_fails, 0, 7);
        tcase_add_loop_test(tc, test_crash, 0, CRASH_N_OPS * CRASH_STEPS);
        tcase_add_test(tc, test_settle);
        tcase_add_loop_test(tc, test_power_loss, 0, LOSS_STEPS);
}

int main(void)
{
        return journal_test_main("journal-faults", add_tests);
}
