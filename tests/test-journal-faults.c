/* Tests for the journal's durability: the exact order of writes, fsyncs
 * and renames; a failure injected at each file operation (nothing is lost,
 * nothing half-written is left, a retry works); and a crash at each file
 * operation, in a child that exits right there, after which a fresh
 * journal must find every plan either whole or absent, and never a plan
 * whose stamp was taken but that would run again. And the index the
 * journal keeps in memory: no call of the daemon's loop lists or looks at
 * the disk, and after random calls with random failures it says what a
 * fresh open of the disk says. */
#include "test-journal.h"

/* For test_index_random, which marks the index stale as a failed
 * allocation would. */
#include "journal/journal-internal.h"

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
        if (_i == 6) {
                ck_assert_int_eq(r, 0);
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
                             "openat plans/.stamp.tmp\n"
                             "write plans/.stamp.tmp\n"
                             "renameat plans/.stamp.tmp plans/stamp\n",
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
        ck_assert_int_eq(journal_put_result(j, a, TEXT, strlen(TEXT)), 0);
        ck_assert_int_eq(journal_put_result(j, b, TEXT, strlen(TEXT)), 0);

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
        ck_assert_uint_eq(fx.n_fsync, n);
        ck_assert(strstr(fx.trace.data, "stamp") == NULL);
        strbuf_reset(&fx.trace);

        /* A failure keeps the entry, whole; the retry pays the fsyncs. */
        put_stamped(j, a, 52);
        fx.calls = 0;
        fx.fail_at = 3;
        ck_assert_int_eq(journal_remove(j, a, false), -EIO);
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
#define LOSS_STEPS 97

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
                                journal_put_result(crash_journal, ts[m], TEXT, strlen(TEXT)), 0);
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
                        ck_assert_int_eq(journal_put_result(j, ts, res, strlen(res)), 0);
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

        /* One plan's whole way, as the daemon goes: 6 fsyncs on the
         * engine's round trip (store 3, begin 1, result 2; 8 before the
         * stamp left it), and 2 for the stamp at the removal that follows
         * the broker's confirm, because the stamp advanced. */
        put_stamped(j, ts, 12345);
        ck_assert_int_eq(journal_put_result(j, ts, "{\"SourceID\": \"new\"}", 20), 0);
        ck_assert_uint_eq(fx.n_fsync, 3 + 1 + 2);
        ck_assert_int_eq(journal_remove(j, ts, true), 0);
        ck_assert_uint_eq(fx.n_fsync, 3 + 1 + 2 + 2);
        put_simple(j, ts);
        ck_assert_int_eq(journal_begin(j, ts, NULL), 0);
        ck_assert_int_eq(journal_put_result(j, ts, "{\"SourceID\": \"new2\"}", 21), 0);
        ck_assert_int_eq(journal_remove(j, ts, false), 0);
        ck_assert_uint_eq(fx.n_fsync, 8 + 3 + 1 + 2);
        ck_assert_uint_eq(fx.n_listings, 0);
        ck_assert_uint_eq(fx.n_access, 0);
        ck_assert_uint_eq(fx.n_stat, 0);
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

static char *list_text(Journal *j, bool restarted)
{
        static const char *const states[] = {"pending", "running", "interrupted", "result"};
        _cleanup_free_ JournalEntry *v = NULL;
        StrBuf b = STRBUF_INIT;
        size_t n = 0;
        char *s;

        ck_assert_int_eq(journal_list(j, &v, &n), 0);
        for (size_t i = 0; i < n; i++) {
                JournalState st = v[i].state;
                /* What this process runs, a new one finds interrupted. */
                if (restarted && st == JOURNAL_RUNNING)
                        st = JOURNAL_INTERRUPTED;
                strbuf_printf(&b, "%s%s:%s", i ? " " : "", v[i].ts, states[st]);
        }
        ck_assert_int_eq(strbuf_steal(&b, &s), 0);
        return s;
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
 * too slow for hundreds of calls): directories, files and their
 * modification times, which date the done records. */
static const char *copy_dst;

static int copy_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        _cleanup_free_ char *to = NULL, *data = NULL;
        struct timespec times[2] = {st->st_atim, st->st_mtim};
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
        ck_assert_int_eq(utimensat(AT_FDCWD, to, times, 0), 0);
        return 0;
}

static void copy_storage(const char *dst)
{
        nftw(dst, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
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
                        (void)journal_put_result(j, ts, text, strlen(text));
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
        nftw(copy, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
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
        tcase_add_loop_test(tc, test_begin_fails, 0, 7);
        tcase_add_loop_test(tc, test_crash, 0, CRASH_N_OPS * CRASH_STEPS);
        tcase_add_test(tc, test_settle);
        tcase_add_loop_test(tc, test_power_loss, 0, LOSS_STEPS);
        tcase_add_test(tc, test_no_scans);
        tcase_add_loop_test(tc, test_index_random, 0, 6);
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
