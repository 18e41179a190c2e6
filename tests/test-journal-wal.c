/* Tests for the journal with its write-ahead log (JournalOptions.wal):
 * off in JOURNAL_OPTIONS_DEFAULT (the daemon's [agent] journal_log turns
 * it on by default); with it, a stored, begun and answered
 * plan costs one fdatasync() of journal.log each and no fsync(); the files
 * of plans/ are byte for byte those of a journal without it; and after a
 * crash whose power loss took or tore those files (written without a
 * flush), the next open makes them say what the log says: plans, `running`
 * marks, results and removals, but never the plan of a call that failed. */
#include "test-journal.h"
#include "test-journal-main.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "journal/journal-internal.h" /* the record kinds */
#include "journal/journal-log.h"

static unsigned n_fdatasync, n_syncfs, n_calls_fdatasync;
static bool fail_plan_rename, fail_calls_write;

static int c_fdatasync(int fd)
{
        n_fdatasync++;
        return fdatasync(fd);
}

static const JournalLogOps count_log_ops = {.fdatasync = c_fdatasync};

static int c_syncfs(int fd)
{
        n_syncfs++;
        return syncfs(fd);
}

static int c_fsync(int fd)
{
        fx.n_fsync++;
        return fsync(fd);
}

static int c_renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath)
{
        if (fail_plan_rename && streq(newpath, "plan.json")) {
                errno = EIO;
                return -1;
        }
        return renameat(olddirfd, oldpath, newdirfd, newpath);
}

/* The call log's flushes (the journal flushes nothing else so). */
static int c_calls_fdatasync(int fd)
{
        n_calls_fdatasync++;
        return fdatasync(fd);
}

static ssize_t c_pwrite(int fd, const void *buf, size_t n, off_t off)
{
        if (fail_calls_write) {
                errno = ENOSPC;
                return -1;
        }
        return pwrite(fd, buf, n, off);
}

static const JournalOps count_ops = {
        .fsync = c_fsync,
        .syncfs = c_syncfs,
        .renameat = c_renameat,
        .fdatasync = c_calls_fdatasync,
        .pwrite = c_pwrite,
};

static Journal *open_wal(void)
{
        JournalOptions o = JOURNAL_OPTIONS_DEFAULT;

        o.ops = &count_ops;
        o.wal = true;
        o.wal_ops = &count_log_ops;
        return open_with(&o);
}

/* The records journal.log holds after its checkpoint. */
static int count_one(void *userdata, const JournalLogRecord *rec)
{
        (void)rec;
        ++*(unsigned *)userdata;
        return 0;
}

static unsigned log_records(void)
{
        _cleanup_free_ char *path = pathf("%s", JOURNAL_LOG_FILE), *aside = pathf("log.aside");
        JournalCallsKey *k = NULL;
        Journal *j;
        JournalLog *log = NULL;
        int dfd = open(storage, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        unsigned n = 0;

        /* The key, from a journal without the log that finds none to
         * replay. */
        ck_assert_int_eq(rename(path, aside), 0);
        j = open_with(NULL);
        ck_assert_int_eq(rename(aside, path), 0);
        ck_assert_int_eq(journal_log_key(j, &k), 0);
        ck_assert_int_eq(journal_log_open(dfd, k, NULL, count_one, &n, &log), 0);
        journal_log_free(log);
        journal_calls_key_free(k);
        journal_free(j);
        close(dfd);
        return n;
}

START_TEST(test_off_by_default)
{
        Journal *j = open_with(NULL);
        char ts[JOURNAL_TS_MAX];

        put_stamped(j, ts, 5);
        ck_assert_int_eq(journal_put_result(j, ts, "{}", 2, NULL), 0);
        journal_free(j);
        ck_assert(!exists(JOURNAL_LOG_FILE));
}
END_TEST

static const char result[] = "{\"SourceID\": \"id\", \"ErrorCode\": 0}";

START_TEST(test_flushes)
{
        Journal *j = open_wal();
        char ts[JOURNAL_TS_MAX], ts2[JOURNAL_TS_MAX];
        _cleanup_free_ char *plan = NULL, *plan2 = NULL, *res = NULL, *res2 = NULL;

        /* The open: one checkpoint (a syncfs(), and the superblock). */
        ck_assert(journal_open_report(j)->n_wal_records == 0);
        ck_assert_uint_eq(n_syncfs, 1);
        n_fdatasync = n_syncfs = 0;
        fx.n_fsync = 0;

        put_stamped(j, ts, 5);
        ck_assert_int_eq(journal_put_result(j, ts, result, strlen(result), NULL), 0);
        ck_assert_uint_eq(n_fdatasync, 3);
        ck_assert_uint_eq(fx.n_fsync, 0);
        ck_assert_uint_eq(n_syncfs, 0);
        assert_entries_ts(j, "<ts>:result", ts);
        ck_assert_int_eq(journal_checkpoint(j), 0);
        ck_assert_uint_eq(n_syncfs, 1);
        ck_assert_uint_eq(n_fdatasync, 4);
        plan = slurp_rel_ts("plans/<ts>/plan.json", ts);
        res = slurp_rel_ts("plans/<ts>/result.json", ts);
        ck_assert(exists_ts("plans/<ts>/running", ts));
        ck_assert(!exists_ts("plans/<ts>/.result", ts));
        journal_free(j);

        /* The same files as a journal without the log writes. */
        j = open_with(NULL);
        put_stamped(j, ts2, 6);
        ck_assert_int_eq(journal_put_result(j, ts2, result, strlen(result), NULL), 0);
        plan2 = slurp_rel_ts("plans/<ts>/plan.json", ts2);
        res2 = slurp_rel_ts("plans/<ts>/result.json", ts2);
        ck_assert_str_eq(plan,
                         "{\"Data\": \"eyJTdGFtcCI6IDV9\", \"Signature\": \"\", \"ID\": \"id\", "
                         "\"ReplyTo\": null}");
        ck_assert_str_eq(plan2, "{\"Data\": \"eyJTdGFtcCI6IDZ9\", \"Signature\": \"\", \"ID\": "
                                "\"id\", \"ReplyTo\": null}");
        ck_assert_str_eq(res, res2);
        journal_free(j);

        /* The removal: its REMOVE, flushed, carries the done record and
         * the stamp, which are written without a flush. */
        j = open_wal();
        n_fdatasync = n_syncfs = 0;
        fx.n_fsync = 0;
        ck_assert_int_eq(journal_remove(j, ts, true), 0);
        ck_assert_uint_eq(n_fdatasync, 1);
        ck_assert_uint_eq(fx.n_fsync, 0);
        ck_assert_uint_eq(n_syncfs, 0);
        journal_free(j);
}
END_TEST

/* A script call as the runner logs it: its start (flushed) and its end
 * (not), on entry ts's call log. */
static int log_call(Journal *j, const char *ts, int i)
{
        _cleanup_free_ char *dir = pathf("plans/%s", ts), *error = NULL;
        JournalCallsKey *key = NULL;
        JournalCalls *c = NULL;
        json_t *start = json_pack("{si ss}", "call", i, "name", "c");
        json_t *end = json_pack("{si s{si}}", "call", i, "result", "exitCode", 0);
        int r = journal_calls_key(j, ts, &key);

        if (r == 0)
                r = journal_calls_open(dir, key, &c, &error);
        if (r == 0)
                r = journal_calls_append(c, JOURNAL_CALL_START, start, true);
        if (r == 0)
                r = journal_calls_append(c, JOURNAL_CALL_END, end, false);
        journal_calls_free(c);
        journal_calls_key_free(key);
        json_decref(start);
        json_decref(end);
        return r;
}

/* The records entry ts's call log reads as, at the plan's next start. */
static size_t calls_records(Journal *j, const char *ts)
{
        _cleanup_free_ char *dir = pathf("plans/%s", ts), *error = NULL;
        JournalCallsKey *key = NULL;
        JournalCalls *c = NULL;
        size_t n;

        ck_assert_int_eq(journal_calls_key(j, ts, &key), 0);
        ck_assert_int_eq(journal_calls_open(dir, key, &c, &error), 0);
        n = journal_calls_count(c);
        journal_calls_free(c);
        journal_calls_key_free(key);
        return n;
}

/* A trivial plan with one script call: the call log's records go
 * through journal.log too (its start's flushed, its end's not), and
 * `calls` is written without a flush. */
START_TEST(test_call_flushes)
{
        Journal *j = open_wal();
        char ts[JOURNAL_TS_MAX];
        _cleanup_free_ char *calls = NULL, *again = NULL;

        n_fdatasync = n_syncfs = n_calls_fdatasync = 0;
        fx.n_fsync = 0;
        put_stamped(j, ts, 5);
        ck_assert_int_eq(log_call(j, ts, 0), 0);
        ck_assert_int_eq(journal_put_result(j, ts, result, strlen(result), NULL), 0);
        ck_assert_uint_eq(n_fdatasync, 4); /* PLAN, BEGIN, CALL (start), RESULT */
        ck_assert_uint_eq(n_calls_fdatasync, 0);
        ck_assert_uint_eq(fx.n_fsync, 0);
        ck_assert_uint_eq(n_syncfs, 0);
        ck_assert_uint_eq(calls_records(j, ts), 2);

        /* A drawn value too large for a record (a file the Body read) is
         * written into `calls` and flushed there: durable by itself. */
        {
                _cleanup_free_ char *dir = pathf("plans/%s", ts), *error = NULL;
                size_t big = (size_t)3 << 20;
                _cleanup_free_ char *text = malloc(big + 1);
                JournalCallsKey *key = NULL;
                JournalCalls *c = NULL;
                json_t *v;

                memset(text, 'v', big);
                text[big] = '\0';
                v = json_pack("{ss ss}", "kind", "file", "value", text);
                ck_assert_int_eq(journal_calls_key(j, ts, &key), 0);
                ck_assert_int_eq(journal_calls_open(dir, key, &c, &error), 0);
                n_fdatasync = n_calls_fdatasync = 0;
                ck_assert_int_eq(journal_calls_append(c, JOURNAL_CALL_VALUE, v, false), 0);
                ck_assert_uint_eq(n_fdatasync, 0);
                ck_assert_uint_eq(n_calls_fdatasync, 1);
                journal_calls_free(c);
                journal_calls_key_free(key);
                json_decref(v);
        }
        ck_assert_uint_eq(calls_records(j, ts), 3);

        /* A failed write of `calls` after its record: undone, and the
         * record never replayed. */
        fail_calls_write = true;
        ck_assert_int_eq(log_call(j, ts, 1), -ENOSPC);
        fail_calls_write = false;
        calls = slurp_rel_ts("plans/<ts>/calls", ts);
        journal_free(j);
        j = open_wal();
        again = slurp_rel_ts("plans/<ts>/calls", ts);
        ck_assert_str_eq(again, calls);
        ck_assert_uint_eq(calls_records(j, ts), 3);
        journal_free(j);
}
END_TEST

/* The plan thread's call log against the journal's own calls and its
 * checkpoints, at the same time: neither waits for the other forever,
 * and every record is in `calls` after the checkpoints. */
static Journal *shared_journal;

static void *calls_thread(void *userdata)
{
        for (int i = 0; i < 100; i++)
                if (log_call(shared_journal, userdata, i) < 0)
                        return (void *)1;
        return NULL;
}

START_TEST(test_call_concurrent)
{
        Journal *j = open_wal();
        char ts[JOURNAL_TS_MAX], other[JOURNAL_TS_MAX];
        pthread_t t;
        void *ret = NULL;

        put_stamped(j, ts, 5);
        shared_journal = j;
        ck_assert_int_eq(pthread_create(&t, NULL, calls_thread, ts), 0);
        for (int i = 0; i < 100; i++) {
                put_simple(j, other);
                ck_assert_int_eq(journal_remove(j, other, false), 0);
                ck_assert_int_eq(journal_checkpoint(j), 0);
        }
        ck_assert_int_eq(pthread_join(t, &ret), 0);
        ck_assert_ptr_null(ret);
        ck_assert_uint_eq(calls_records(j, ts), 200);
        journal_free(j);
}
END_TEST

/* The entries' names, which the crashing child hands out: in memory it
 * shares with the test. */
static char (*names)[JOURNAL_TS_MAX];
#define ts_a names[0]
#define ts_b names[1]
#define ts_c names[2]

static void names_map(void)
{
        names = mmap(NULL, 3 * JOURNAL_TS_MAX, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                     -1, 0);
        ck_assert(names != MAP_FAILED);
}

/* In a child that ends without journal_free() (a crash: no checkpoint,
 * the page cache keeps what was written): plan A stored, begun with
 * Stamp 7 and answered; plan B stored; plan C stored and begun. */
static void crash_after(void (*fn)(Journal *j), const JournalOps *ops)
{
        pid_t pid;
        int status;

        names_map();
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                JournalOptions o = JOURNAL_OPTIONS_DEFAULT;
                Journal *j = NULL;

                o.wal = true;
                o.ops = ops;
                if (journal_open(storage, &o, &j) < 0)
                        _exit(2);
                crash_journal = j;
                fn(j);
                _exit(0);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void three_plans(Journal *j)
{
        json_t *seven = json_integer(7);

        if (journal_put_plan(j, "{\"Stamp\": 7}", 12, NULL, 0, "a", NULL, ts_a) < 0 ||
            journal_begin(j, ts_a, seven) != 0 ||
            journal_put_result(j, ts_a, result, strlen(result), NULL) < 0 ||
            journal_put_plan(j, "{\"B\": 1}", 8, "sig", 3, "b", "reply", ts_b) < 0 ||
            journal_put_plan(j, "{\"C\": 1}", 8, NULL, 0, "c", NULL, ts_c) < 0 ||
            journal_begin(j, ts_c, NULL) != 0)
                _exit(1);
        json_decref(seven);
}

/* What a power loss may leave of files written without a flush. */
/* LOSS_ALL: every write to plans/ since the last checkpoint lost, as
 * nothing flushed them (plans/ put back as the open before left it). */
enum { LOSS_NONE, LOSS_ENTRIES, LOSS_TORN, LOSS_ZEROS, LOSS_RUNNING, LOSS_ALL, N_LOSSES };

static void tear(const char *fmt, const char *ts, bool zeros)
{
        _cleanup_free_ char *p = expand(fmt, ts), *full = pathf("%s", p);
        struct stat st;

        if (stat(full, &st) < 0)
                return;
        if (zeros) {
                char *z = calloc(1, (size_t)st.st_size + 1);
                int fd = open(full, O_WRONLY | O_CLOEXEC);

                ck_assert_int_eq(pwrite(fd, z, (size_t)st.st_size, 0), st.st_size);
                close(fd);
                free(z);
        } else {
                ck_assert_int_eq(truncate(full, st.st_size / 2), 0);
        }
}

START_TEST(test_recovery)
{
        _cleanup_free_ char *dir = NULL;
        JournalPlan *p = NULL;
        JournalResult *r = NULL;
        Journal *j;

        if (_i == LOSS_ALL) {
                char *cmd = NULL;

                journal_free(open_wal());
                ck_assert_int_ge(
                        asprintf(&cmd, "cp -a %s/plans %s/plans.durable", storage, storage), 0);
                ck_assert_int_eq(system(cmd), 0);
                free(cmd);
        }
        crash_after(three_plans, NULL);
        ck_assert_uint_eq(log_records(), 6);
        switch (_i) {
        case LOSS_ALL: {
                _cleanup_free_ char *from = pathf("plans.durable");

                dir = pathf("plans");
                ck_assert_int_eq(rm_rf(dir), 0);
                ck_assert_int_eq(rename(from, dir), 0);
                break;
        }
        case LOSS_ENTRIES:
                for (const char *ts = ts_a; ts; ts = ts == ts_a ? ts_b : ts == ts_b ? ts_c : NULL) {
                        dir = pathf("plans/%s", ts);
                        ck_assert_int_eq(rm_rf(dir), 0);
                        free(dir);
                        dir = NULL;
                }
                break;
        case LOSS_TORN:
        case LOSS_ZEROS:
                tear("plans/<ts>/plan.json", ts_a, _i == LOSS_ZEROS);
                tear("plans/<ts>/result.json", ts_a, _i == LOSS_ZEROS);
                tear("plans/<ts>/plan.json", ts_b, _i == LOSS_ZEROS);
                tear("plans/<ts>/plan.json", ts_c, _i == LOSS_ZEROS);
                break;
        case LOSS_RUNNING:
                unlink_rel_ts("plans/<ts>/running", ts_a);
                unlink_rel_ts("plans/<ts>/running", ts_c);
                unlink_rel_ts("plans/<ts>/result.json", ts_a);
                break;
        }

        j = open_wal();
        ck_assert_uint_eq(journal_open_report(j)->n_wal_records, 6);
        ck_assert(!journal_open_report(j)->wal_reset);
        ck_assert_int_eq(journal_last_stamp(j), 7);
        {
                char *want = NULL;

                ck_assert_int_ge(
                        asprintf(&want, "%s:result %s:pending %s:interrupted", ts_a, ts_b, ts_c),
                        0);
                assert_entries(j, want);
                free(want);
        }
        journal_free(j);

        /* Read from the files, their seals checked. */
        j = open_with(NULL);
        ck_assert_int_eq(journal_load_plan(j, ts_b, &p, NULL), 0);
        ck_assert_str_eq(p->body, "{\"B\": 1}");
        ck_assert_mem_eq(p->signature, "sig", 3);
        ck_assert_str_eq(json_string_value(p->reply_to), "reply");
        ck_assert_int_eq(journal_get_result(j, ts_a, &r), 0);
        ck_assert_str_eq(r->text, result);
        ck_assert(exists_ts("plans/<ts>/running", ts_a));
        journal_plan_free(p);
        journal_result_free(r);
        journal_free(j);
        /* The open checkpointed: nothing left to read. */
        ck_assert_uint_eq(log_records(), 0);
}
END_TEST

static void stamped_and_removed(Journal *j)
{
        json_t *nine = json_integer(9);

        if (journal_put_plan(j, "{\"Stamp\": 9}", 12, NULL, 0, "a", NULL, ts_a) < 0 ||
            journal_begin(j, ts_a, nine) != 0 ||
            journal_put_result(j, ts_a, result, strlen(result), NULL) < 0 ||
            journal_remove(j, ts_a, true) < 0)
                _exit(1);
        json_decref(nine);
}

/* A removal that the disk lost, the log has: done again. With _i, the
 * power loss took the done record's append and the stamp file's too
 * (neither flushed): the REMOVE holds both. */
START_TEST(test_removed)
{
        _cleanup_free_ char *dir = NULL, *text = NULL, *records = pathf("plans/done/records"),
                            *stamp = pathf("plans/stamp");
        json_t *id = json_string("id"); /* the result's SourceID */
        struct stat st;
        off_t durable;
        Journal *j;

        journal_free(open_wal());
        ck_assert_int_eq(stat(records, &st), 0);
        durable = st.st_size;
        crash_after(stamped_and_removed, NULL);
        ck_assert_int_eq(stat(records, &st), 0);
        ck_assert_int_gt(st.st_size, durable);
        if (_i) {
                ck_assert_int_eq(truncate(records, durable), 0);
                ck_assert_int_eq(unlink(stamp), 0);
        }
        dir = pathf("plans/%s", ts_a);
        ck_assert_int_eq(mkdir(dir, 0700), 0);
        free(dir);
        dir = expand("plans/<ts>/result.json", ts_a);
        put_file(dir, result);

        j = open_wal();
        ck_assert(!exists_ts("plans/<ts>", ts_a));
        assert_entries(j, "");
        ck_assert_int_eq(journal_last_stamp(j), 9);
        ck_assert_int_eq(journal_done_lookup(j, id, &text), 1);
        ck_assert_str_eq(text, result);
        journal_free(j);
        /* Made durable, and read so without the log. */
        j = open_with(NULL);
        ck_assert_int_eq(journal_last_stamp(j), 9);
        free(text);
        text = NULL;
        ck_assert_int_eq(journal_done_lookup(j, id, &text), 1);
        journal_free(j);
        json_decref(id);
}
END_TEST

static void stamped_and_begun(Journal *j)
{
        json_t *nine = json_integer(9);

        if (journal_put_plan(j, "{\"Stamp\": 9}", 12, NULL, 0, "a", NULL, ts_a) < 0 ||
            journal_begin(j, ts_a, nine) != 0)
                _exit(1);
        json_decref(nine);
}

/* The agent killed (not a power loss: the page cache keeps its writes)
 * after a plan took its Stamp, with no checkpoint since: the stamp file
 * says so already, sealed, for a reader that does not know journal.log
 * (the reference after a downgrade, or a version before the log), whether
 * the plan is still there or removed (docs/journal.md, "What it costs and
 * what it changes"). */
START_TEST(test_stamp_file_at_begin)
{
        _cleanup_free_ char *log = pathf("%s", JOURNAL_LOG_FILE), *stamp = pathf("plans/stamp");
        _cleanup_free_ char *text = NULL;
        Journal *j;

        journal_free(open_wal());
        crash_after(_i ? stamped_and_removed : stamped_and_begun, NULL);
        text = slurp(stamp, NULL);
        ck_assert_str_eq(text, "9");
        ck_assert_int_eq(unlink(log), 0);
        j = open_with(NULL);
        ck_assert(!journal_open_report(j)->stamp_forged);
        ck_assert(!journal_open_report(j)->stamp_recovered);
        ck_assert_int_eq(journal_last_stamp(j), 9);
        journal_free(j);
}
END_TEST

static void answered(Journal *j)
{
        if (journal_put_answer(j, result, strlen(result), ts_a) < 0)
                _exit(1);
}

/* An answer without a plan: one fdatasync() of journal.log, and an entry
 * that a power loss took is made again from its ANSWER. */
START_TEST(test_answer)
{
        _cleanup_free_ char *dir = NULL, *text = NULL;
        char ts[JOURNAL_TS_MAX], *want = NULL;
        Journal *j = open_wal();

        n_fdatasync = n_syncfs = 0;
        fx.n_fsync = 0;
        ck_assert_int_eq(journal_put_answer(j, result, strlen(result), ts), 0);
        ck_assert_uint_eq(n_fdatasync, 1);
        ck_assert_uint_eq(fx.n_fsync, 0);
        assert_entries_ts(j, "<ts>:result", ts);
        ck_assert_int_eq(journal_remove(j, ts, false), 0);
        journal_free(j);

        crash_after(answered, NULL);
        dir = pathf("plans/%s", ts_a);
        ck_assert_int_eq(rm_rf(dir), 0);
        j = open_wal();
        ck_assert_int_ge(asprintf(&want, "%s:result", ts_a), 0);
        assert_entries(j, want);
        free(want);
        journal_free(j);
        text = slurp_rel_ts("plans/<ts>/result.json", ts_a);
        ck_assert_str_eq(text, result);
}
END_TEST

static ssize_t full_pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
        errno = ENOSPC;
        return -1;
}

/* No journal.log, and a disk too full to make it: the journal works
 * without it, and says why. One that is there but cannot be opened (here
 * a directory) fails the open: what it holds may be all that is left of
 * an acked plan. */
START_TEST(test_log_unmade)
{
        static const JournalLogOps full_ops = {.pwritev = full_pwritev};
        JournalOptions o = JOURNAL_OPTIONS_DEFAULT;
        _cleanup_free_ char *log = pathf("%s", JOURNAL_LOG_FILE);
        char ts[JOURNAL_TS_MAX];
        Journal *j = NULL;

        o.ops = &count_ops;
        o.wal = true;
        o.wal_ops = &full_ops;
        j = open_with(&o);
        ck_assert_int_eq(journal_open_report(j)->wal_errno, ENOSPC);
        ck_assert(!exists(JOURNAL_LOG_FILE));
        ck_assert(!exists("." JOURNAL_LOG_FILE ".tmp"));
        fx.n_fsync = 0;
        put_simple(j, ts);
        ck_assert_uint_eq(fx.n_fsync, 3); /* as without the log */
        ck_assert_int_eq(journal_checkpoint(j), 0);
        journal_free(j);

        ck_assert_int_eq(mkdir(log, 0700), 0);
        o.wal_ops = NULL;
        ck_assert_int_lt(journal_open(storage, &o, &j), 0);
        ck_assert_int_eq(rmdir(log), 0);
}
END_TEST

static void failed_plan(Journal *j)
{
        char ts[JOURNAL_TS_MAX];

        fail_plan_rename = true;
        if (journal_put_plan(j, "{\"failed\": 1}", 13, NULL, 0, "f", NULL, ts) != -EIO)
                _exit(1);
        fail_plan_rename = false;
        if (journal_put_plan(j, "{}", 2, NULL, 0, "b", NULL, ts_b) < 0)
                _exit(1);
}

/* The plan of a call that failed after its record was durable is never
 * made again: its UNDO follows it. */
START_TEST(test_undo)
{
        Journal *j;
        char *want = NULL;

        crash_after(failed_plan, &count_ops);
        ck_assert_uint_eq(log_records(), 3); /* PLAN, UNDO, PLAN */
        j = open_wal();
        ck_assert_int_ge(asprintf(&want, "%s:pending", ts_b), 0);
        assert_entries(j, want);
        free(want);
        journal_free(j);
}
END_TEST

/* Plans of over a quarter of the log's ring: the log checkpoints by
 * itself when it is half full; one over a quarter takes the flushed way. */
START_TEST(test_half_full)
{
        size_t len = (size_t)1 << 20;
        _cleanup_free_ char *body = malloc(len);
        char ts[JOURNAL_TS_MAX];
        Journal *j = open_wal();

        memset(body, 'x', len);
        n_syncfs = fx.n_fsync = 0;
        for (int i = 0; i < 4; i++)
                ck_assert_int_eq(journal_put_plan(j, body, len, NULL, 0, "id", NULL, ts), 0);
        /* 1.4 MB records: the fourth found the ring half full. */
        ck_assert_uint_eq(n_syncfs, 1);
        ck_assert_uint_eq(fx.n_fsync, 0);
        body = realloc(body, 2 * len);
        memset(body, 'y', 2 * len);
        ck_assert_int_eq(journal_put_plan(j, body, 2 * len, NULL, 0, "id", NULL, ts), 0);
        ck_assert_uint_eq(fx.n_fsync, 3);
        journal_free(j);
}
END_TEST

static void two_calls(Journal *j)
{
        if (journal_put_plan(j, "{}", 2, NULL, 0, "a", NULL, ts_a) < 0 ||
            journal_begin(j, ts_a, NULL) != 0 || log_call(j, ts_a, 0) < 0 ||
            log_call(j, ts_a, 1) < 0)
                _exit(1);
}

/* What a power loss may leave of `calls`, written without a flush: the
 * open gives it the bytes of every record the log holds, and keeps what
 * a longer file holds after them (records not flushed whose CALL the
 * power loss took: the call log checks itself). */
enum { CALLS_GONE, CALLS_HALF, CALLS_ZEROS, CALLS_LONGER, N_CALLS_LOSSES };

START_TEST(test_call_recovery)
{
        _cleanup_free_ char *calls = NULL, *after = NULL, *path = NULL;
        Journal *j;

        crash_after(two_calls, NULL);
        ck_assert_uint_eq(log_records(), 6);
        calls = slurp_rel_ts("plans/<ts>/calls", ts_a);
        path = expand("plans/<ts>/calls", ts_a);
        switch (_i) {
        case CALLS_GONE:
                unlink_rel_ts("plans/<ts>/calls", ts_a);
                break;
        case CALLS_HALF:
        case CALLS_ZEROS:
                tear("plans/<ts>/calls", ts_a, _i == CALLS_ZEROS);
                break;
        case CALLS_LONGER: {
                _cleanup_free_ char *full = pathf("%s", path);
                FILE *f = fopen(full, "a");

                ck_assert_ptr_nonnull(f);
                fputs("V 4 2 ", f);
                fclose(f);
                break;
        }
        }
        j = open_wal();
        after = slurp_rel_ts("plans/<ts>/calls", ts_a);
        if (_i == CALLS_LONGER) {
                ck_assert_uint_eq(strlen(after), strlen(calls) + 6);
                ck_assert(strncmp(after, calls, strlen(calls)) == 0);
        } else {
                ck_assert_str_eq(after, calls);
        }
        /* The torn tail is cut at the plan's start, as always. */
        ck_assert_uint_eq(calls_records(j, ts_a), 4);
        journal_free(j);
}
END_TEST

/* Records written into journal.log as the journal's key seals them, after
 * a checkpoint of a journal that was closed: what its next open replays. */
typedef struct Planted {
        JournalCallsKey *key;
        JournalLog *log;
        int dfd;
} Planted;

static void plant_begin(Planted *p)
{
        Journal *j = open_wal();

        p->dfd = open(storage, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(p->dfd, 0);
        ck_assert_int_eq(journal_log_key(j, &p->key), 0);
        journal_free(j);
        ck_assert_int_eq(journal_log_open(p->dfd, p->key, NULL, NULL, NULL, &p->log), 0);
        ck_assert_int_eq(journal_log_checkpoint(p->log), 0);
}

static void plant(Planted *p, unsigned kind, const char *ts, const void *data, size_t len)
{
        ck_assert_int_eq(journal_log_append(p->log, kind, ts, data, len, false), 0);
}

static void plant_end(Planted *p)
{
        ck_assert_int_eq(journal_log_sync(p->log), 0);
        journal_log_free(p->log);
        journal_calls_key_free(p->key);
        close(p->dfd);
}

/* A ring full of records of small entries, each with its own name, and
 * entry X's PLAN first and its RESULT last: the open finds X's records
 * across all the others, and replays them in time linear in the records
 * (entry_of() looks a name up in a sorted index; the open time is printed
 * for docs/journal.md). */
START_TEST(test_many_entries)
{
        enum { N = 16000, BASE = 20000000 };
        Planted p;
        Journal *j;
        unsigned char call[9] = {0};
        char x[JOURNAL_TS_MAX], name[JOURNAL_TS_MAX], *want = NULL;
        struct timespec t0, t1;

        snprintf(x, sizeof(x), "%d", BASE + N);
        plant_begin(&p);
        plant(&p, JOURNAL_WAL_PLAN, x, "{}", 2);
        for (int i = 0; i < N; i++) {
                snprintf(name, sizeof(name), "%d", BASE + i);
                plant(&p, JOURNAL_WAL_CALL, name, call, sizeof(call));
        }
        plant(&p, JOURNAL_WAL_RESULT, x, result, strlen(result));
        plant_end(&p);

        clock_gettime(CLOCK_MONOTONIC, &t0);
        j = open_wal();
        clock_gettime(CLOCK_MONOTONIC, &t1);
        fprintf(stderr, "# open of a log of %d entries: %.1f ms\n", N + 1,
                (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
        ck_assert_uint_eq(journal_open_report(j)->n_wal_records, N + 2);
        ck_assert_int_ge(asprintf(&want, "%s:result", x), 0);
        assert_entries(j, want);
        free(want);
        journal_free(j);
}
END_TEST

/* A CALL whose offset and length do not fit in an off_t (sealed: a writer
 * with the key, or a bug) is not replayed: the open goes on, and the
 * entry's other records are. */
START_TEST(test_call_offset_out_of_range)
{
        static const uint64_t offs[] = {UINT64_MAX - 3, (uint64_t)INT64_MAX, (uint64_t)1 << 63};
        unsigned char call[9];
        Planted p;
        Journal *j;
        char *want = NULL;

        plant_begin(&p);
        plant(&p, JOURNAL_WAL_PLAN, "20000000", "{}", 2);
        for (size_t i = 0; i < ELEMENTSOF(offs); i++) {
                journal_le64_put(call, offs[i]);
                call[8] = 'S';
                plant(&p, JOURNAL_WAL_CALL, "20000000", call, sizeof(call));
        }
        plant_end(&p);
        j = open_wal();
        ck_assert_uint_eq(journal_open_report(j)->n_wal_records, 4);
        ck_assert_int_ge(asprintf(&want, "%s:pending", "20000000"), 0);
        assert_entries(j, want);
        free(want);
        journal_free(j);
}
END_TEST

/* A REMOVE whose done record's name is not 64 hex digits (sealed: a
 * writer with the key, or a bug) has its done record left out at replay:
 * done/records never holds a name its own reader would not parse (a
 * newline would start a record of the writer's choosing). One with a
 * sound name beside it is appended. */
START_TEST(test_remove_name_not_hex)
{
        unsigned char p[WAL_REMOVE_DONE + sizeof(result) - 1];
        char good[65], bad[65];
        _cleanup_free_ char *records = NULL;
        Planted pl;
        Journal *j;

        memset(good, 'a', 64);
        memset(bad, 'a', 64);
        good[64] = bad[64] = '\0';
        bad[10] = 'G';
        bad[40] = '\n';
        plant_begin(&pl);
        for (int i = 0; i < 2; i++) {
                journal_le64_put(p, 0);
                journal_le64_put(p + 8, 1000);
                memcpy(p + 16, i ? bad : good, 64);
                memcpy(p + WAL_REMOVE_DONE, result, sizeof(result) - 1);
                plant(&pl, JOURNAL_WAL_REMOVE, i ? "20000001" : "20000000", p, sizeof(p));
        }
        plant_end(&pl);
        j = open_wal();
        ck_assert_uint_eq(journal_open_report(j)->n_wal_records, 2);
        journal_free(j);
        records = slurp_rel("plans/done/records");
        ck_assert_ptr_nonnull(strstr(records, good));
        bad[40] = '\0';
        ck_assert_ptr_null(strstr(records, bad));
}
END_TEST

static void one_plan(Journal *j)
{
        if (journal_put_plan(j, "{}", 2, NULL, 0, "a", NULL, ts_a) < 0)
                _exit(1);
}

/* A journal opened without the log (journal_log = false) after a crash
 * with it replays journal.log all the same and leaves it empty: else the
 * PLAN record would outlive the plan, done and removed without the log,
 * and make it again (run twice) at the next open with the log. */
START_TEST(test_off_after_crash)
{
        Journal *j;
        char *want = NULL;

        crash_after(one_plan, NULL);
        j = open_with(NULL);
        ck_assert_uint_eq(journal_open_report(j)->n_wal_records, 1);
        ck_assert_int_ge(asprintf(&want, "%s:pending", ts_a), 0);
        assert_entries(j, want);
        free(want);
        ck_assert_int_eq(journal_remove(j, ts_a, false), 0);
        journal_free(j);
        ck_assert_uint_eq(log_records(), 0);
        j = open_wal();
        assert_entries(j, "");
        journal_free(j);
        /* Without a journal.log, none is made. */
        unlink_rel_ts(JOURNAL_LOG_FILE, "");
        journal_free(open_with(NULL));
        ck_assert(!exists(JOURNAL_LOG_FILE));
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_test(tc, test_off_by_default);
        tcase_add_test(tc, test_flushes);
        tcase_add_loop_test(tc, test_recovery, 0, N_LOSSES);
        tcase_add_loop_test(tc, test_removed, 0, 2);
        tcase_add_loop_test(tc, test_stamp_file_at_begin, 0, 2);
        tcase_add_test(tc, test_answer);
        tcase_add_test(tc, test_log_unmade);
        tcase_add_test(tc, test_undo);
        tcase_add_test(tc, test_half_full);
        tcase_add_test(tc, test_call_flushes);
        tcase_add_loop_test(tc, test_call_recovery, 0, N_CALLS_LOSSES);
        tcase_add_test(tc, test_call_concurrent);
        tcase_add_test(tc, test_many_entries);
        tcase_add_test(tc, test_call_offset_out_of_range);
        tcase_add_test(tc, test_remove_name_not_hex);
        tcase_add_test(tc, test_off_after_crash);
}

int main(void)
{
        return journal_test_main("journal-wal", add_tests);
}
