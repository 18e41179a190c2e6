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
         * entry are durable before the call returns (and the ack). So is
         * the name of the result's empty slot, at no cost. */
        assert_trace("clock\n"
                     "mkdirat plans/<ts>\n"
                     "openat plans/<ts>\n"
                     "openat plans/<ts>/.result\n"
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
        /* The entry's directory is the one journal_put_plan() opened. */
        assert_trace("linkat plans/<ts>/plan.json plans/<ts>/running\n"
                     "fsync plans/<ts>\n"
                     "openat plans/.stamp.tmp\n"
                     "write plans/.stamp.tmp\n"
                     "renameat plans/.stamp.tmp plans/stamp\n",
                     ts);

        /* The result goes into the slot, whose name is durable: its
         * fsync is the one it needs. The rename gives the reference's
         * name; a power loss may undo it, and journal_open() takes a
         * whole slot for the result (test_slot_states). */
        ck_assert_int_eq(journal_put_result(j, ts, TEXT, strlen(TEXT), NULL), 0);
        assert_trace("openat plans/<ts>/.result\n"
                     "write plans/<ts>/.result\n"
                     "fsync plans/<ts>/.result\n"
                     "renameat plans/<ts>/.result plans/<ts>/result.json\n",
                     ts);
        ck_assert(!exists_ts("plans/<ts>/.result", ts));

        /* An entry without a slot (an earlier version's) takes the way
         * through a temporary file, as before. */
        put_simple(j, ts);
        ck_assert_int_eq(journal_begin(j, ts, NULL), 0);
        unlink_rel_ts("plans/<ts>/.result", ts);
        strbuf_reset(&fx.trace);
        ck_assert_int_eq(journal_put_result(j, ts, TEXT, strlen(TEXT), NULL), 0);
        assert_trace("openat plans/<ts>/.result\n"
                     "openat plans/<ts>/.result.json.tmp\n"
                     "write plans/<ts>/.result.json.tmp\n"
                     "fsync plans/<ts>/.result.json.tmp\n"
                     "renameat plans/<ts>/.result.json.tmp plans/<ts>/result.json\n"
                     "fsync plans/<ts>\n",
                     ts);
}
END_TEST

/* --- failures ----------------------------------------------------------- */

/* put_plan: each of its 10 file operations fails in turn (the 11th case
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
        if (_i == 10) {
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
        fx.fail_at = 6; /* the write */
        fx.fail_errno = ENOSPC;
        ck_assert_int_eq(journal_put_plan(j, "{}", 2, NULL, 0, "id", NULL, ts), -ENOSPC);
        dir = plans_dir();
        ck_assert_str_eq(dir, "done");
}
END_TEST

/* put_result: 4 file operations into the slot, 6 through a temporary
 * file for an entry without one (cases 5 to 11); the entry's directory is
 * the one put_plan and begin opened. On failure the entry
 * keeps running with no result.json, no temporary file and an empty slot
 * (an empty slot is no result, whatever its seal); a retry stores it. */
START_TEST(test_result_fails)
{
        JournalOptions o = JOURNAL_OPTIONS_DEFAULT;
        _cleanup_(journal_freep) Journal *j = NULL;
        _cleanup_free_ char *text = NULL;
        bool slot = _i < 5;
        int k = slot ? _i : _i - 5, n_ops = slot ? 4 : 6;
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
        if (!slot)
                unlink_rel_ts("plans/<ts>/.result", ts);
        fx.log = true;
        fx.calls = 0;
        fx.fail_at = k + 1;
        r = journal_put_result(j, ts, TEXT, strlen(TEXT), NULL);
        if (k == n_ops) {
                ck_assert_int_eq(r, 0);
                ck_assert(!exists_ts("plans/<ts>/.result", ts));
                return;
        }
        ck_assert_int_eq(r, -fx.failed_errno);
        assert_entries_ts(j, "<ts>:running", ts);
        ck_assert(!exists_ts("plans/<ts>/result.json", ts));
        ck_assert(!exists_ts("plans/<ts>/.result.json.tmp", ts));
        if (slot) {
                text = slurp_rel_ts("plans/<ts>/.result", ts);
                ck_assert_str_eq(text, "");
                free(text);
                text = NULL;
        }
        /* What a new start makes of it: the plan was interrupted. */
        fx.log = false;
        j = journal_free(j);
        j = open_with(&o);
        assert_entries_ts(j, "<ts>:interrupted", ts);
        fx.fail_at = 0;
        ck_assert_int_eq(journal_put_result(j, ts, TEXT, strlen(TEXT), NULL), 0);
        ck_assert_int_eq(journal_load_result(j, ts, &text, &len), 0);
        ck_assert_str_eq(text, TEXT);
        ck_assert(!exists_ts("plans/<ts>/.result", ts));
}
END_TEST

/* begin with a stamp: 5 file operations (the entry's directory is the one
 * put_plan opened). The stamp in memory and on disk
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
        if (_i >= 4) {
                /* Nothing failed: "6" has as many digits as "5", so it is
                 * written in place (4 calls). */
                assert_trace("linkat plans/<ts>/plan.json plans/<ts>/running\n"
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
        if (_i == 2 || _i == 3) {
                /* The write in place failed: the file is replaced. */
                assert_trace(_i == 2 ? "linkat plans/<ts>/plan.json plans/<ts>/running\n"
                                       "fsync plans/<ts>\n"
                                       "openat plans/stamp\n"
                                       "openat plans/.stamp.tmp\n"
                                       "write plans/.stamp.tmp\n"
                                       "renameat plans/.stamp.tmp plans/stamp\n"
                                     : "linkat plans/<ts>/plan.json plans/<ts>/running\n"
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
        if (_i == 0) {
                _cleanup_free_ char *rp = pathf("plans/%s/running", ts);
                struct stat st;

                assert_trace("linkat plans/<ts>/plan.json plans/<ts>/running\n"
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

/* The done record of a removal is the result journal_put_result() kept
 * in memory: result.json is not read back (here it is gone, and the
 * removal records the result all the same). */
START_TEST(test_record_kept)
{
        _cleanup_(journal_freep) Journal *j = open_test();
        _cleanup_free_ char *text = NULL;
        json_t *id = json_string("s1");
        char ts[JOURNAL_TS_MAX];

        put_simple(j, ts);
        ck_assert_int_eq(journal_begin(j, ts, NULL), 0);
        ck_assert_int_eq(journal_put_result(j, ts, TEXT, strlen(TEXT), NULL), 0);
        unlink_rel_ts("plans/<ts>/result.json", ts);
        ck_assert_int_eq(journal_remove(j, ts, true), 0);
        ck_assert_int_eq(journal_done_lookup(j, id, &text), 1);
        ck_assert_str_eq(text, TEXT);
        json_decref(id);
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
                     "unlinkat plans/<ts>/calls\n"
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
                        _cleanup_free_ char *sp = pathf("stored");

                        ck_assert_int_eq(
                                journal_put_result(crash_journal, ts[m], TEXT, strlen(TEXT), NULL),
                                0);
                        /* The entry whose result is stored, until its removal. */
                        f = fopen(sp, "w");
                        ck_assert_ptr_nonnull(f);
                        fputs(ts[m], f);
                        fclose(f);
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
        /* A result stored is found whole while its entry is there, in
         * the slot its rename left or not, and so is any result found. */
        {
                _cleanup_free_ JournalEntry *v = NULL;
                _cleanup_free_ char *stored = exists("stored") ? slurp_rel("stored") : NULL;
                size_t n = 0;

                ck_assert_int_eq(journal_list(j, &v, &n), 0);
                for (size_t i = 0; i < n; i++) {
                        _cleanup_free_ char *text = NULL;
                        size_t len;

                        if (stored && streq(stored, v[i].ts))
                                ck_assert_int_eq(v[i].state, JOURNAL_RESULT);
                        if (v[i].state != JOURNAL_RESULT)
                                continue;
                        ck_assert_int_eq(journal_load_result(j, v[i].ts, &text, &len), 0);
                        ck_assert_str_eq(text, TEXT);
                }
        }
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

/* --- the result slot: what a crash or a planted file leaves in it ------ */

/* Every state of .result a crash can leave (or a process without the key
 * can make), found by a new start: empty (no result: the plan was
 * interrupted), whole and sealed before its rename (the result, given its
 * name), a text that fails its seal (sealed for another entry, or not
 * sealed: a crash between the write and the seal, or planted: quarantined
 * as a forged result.json, and the plan answered), a slot beside
 * result.json (a leftover), and no regular file (a FIFO: no slot, the
 * result takes the temporary file, and nothing hangs). */
START_TEST(test_slot_states)
{
        _cleanup_(journal_freep) Journal *j = open_with(NULL);
        char ts[6][JOURNAL_TS_MAX];
        char rel[64];
        const JournalOpenReport *rep;

        for (int i = 0; i < 6; i++) {
                put_simple(j, ts[i]);
                ck_assert_int_eq(journal_begin(j, ts[i], NULL), 0);
        }
        j = journal_free(j);
        snprintf(rel, sizeof(rel), "plans/%s/.result", ts[1]);
        put_file(rel, TEXT);
        seal_rel(rel, "result.json", ts[1]);
        snprintf(rel, sizeof(rel), "plans/%s/.result", ts[2]);
        put_file(rel, TEXT);
        seal_rel(rel, "result.json", ts[1]);
        snprintf(rel, sizeof(rel), "plans/%s/.result", ts[3]);
        put_file(rel, TEXT);
        snprintf(rel, sizeof(rel), "plans/%s/result.json", ts[4]);
        put_file(rel, TEXT);
        seal_rel(rel, "result.json", ts[4]);
        snprintf(rel, sizeof(rel), "plans/%s/.result", ts[4]);
        put_file(rel, "{\"SourceID\": \"s1\", \"Body\": \"stale\"}");
        snprintf(rel, sizeof(rel), "plans/%s/.result", ts[5]);
        unlink_rel_ts("plans/<ts>/.result", ts[5]);
        {
                _cleanup_free_ char *p = pathf("%s", rel);
                ck_assert_int_eq(mkfifo(p, 0600), 0);
        }

        j = open_with(NULL);
        rep = journal_open_report(j);
        ck_assert_uint_eq(rep->n_interrupted, 2);
        ck_assert_uint_eq(rep->n_temp_removed, 1);
        {
                _cleanup_free_ char *want = NULL;
                ck_assert_int_ge(asprintf(&want,
                                          "%s:interrupted %s:result %s:result %s:result "
                                          "%s:result %s:interrupted",
                                          ts[0], ts[1], ts[2], ts[3], ts[4], ts[5]),
                                 0);
                assert_entries(j, want);
        }
        for (int i = 1; i < 5; i++) {
                _cleanup_(journal_result_freep) JournalResult *r = NULL;

                ck_assert(!exists_ts("plans/<ts>/.result", ts[i]));
                ck_assert(exists_ts("plans/<ts>/result.json", ts[i]));
                if (i == 2 || i == 3) {
                        ck_assert_int_eq(journal_get_result(j, ts[i], &r), JOURNAL_FORGED);
                        ck_assert_int_eq(journal_remove(j, ts[i], false), 0);
                        ck_assert(exists_ts("plans/quarantine/<ts>.result.json", ts[i]));
                        /* The plan stays, interrupted, and is answered. */
                        ck_assert(exists_ts("plans/<ts>/plan.json", ts[i]));
                        ck_assert_int_eq(journal_put_result(j, ts[i], TEXT, strlen(TEXT), NULL), 0);
                } else {
                        ck_assert_int_eq(journal_get_result(j, ts[i], &r), 0);
                        ck_assert_str_eq(r->text, TEXT);
                }
        }
        ck_assert_int_eq(journal_put_result(j, ts[0], TEXT, strlen(TEXT), NULL), 0);
        ck_assert(!exists_ts("plans/<ts>/.result", ts[0]));
        ck_assert_int_eq(journal_put_result(j, ts[5], TEXT, strlen(TEXT), NULL), 0);
        for (int i = 0; i < 6; i++) {
                _cleanup_free_ char *text = NULL;
                size_t len;

                ck_assert_int_eq(journal_load_result(j, ts[i], &text, &len), 0);
                ck_assert_str_eq(text, TEXT);
                ck_assert_int_eq(journal_remove(j, ts[i], i == 0), 0);
        }
        /* And a new start reads the same. */
        j = journal_free(j);
        j = open_with(NULL);
        {
                _cleanup_free_ char *dir = plans_dir();
                ck_assert_str_eq(dir, "done quarantine");
        }
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_test(tc, test_order);
        tcase_add_loop_test(tc, test_put_fails, 0, 11);
        tcase_add_test(tc, test_put_enospc);
        tcase_add_loop_test(tc, test_result_fails, 0, 12);
        tcase_add_loop_test(tc, test_begin_fails, 0, 6);
        tcase_add_loop_test(tc, test_crash, 0, CRASH_N_OPS * CRASH_STEPS);
        tcase_add_test(tc, test_record_kept);
        tcase_add_test(tc, test_settle);
        tcase_add_test(tc, test_slot_states);
        tcase_add_loop_test(tc, test_power_loss, 0, LOSS_STEPS);
}

int main(void)
{
        return journal_test_main("journal-faults", add_tests);
}
