/* The journal under the power-loss model of test-journal-crash.h: short
 * scenarios of journal calls as the daemon makes them, and after every
 * file operation (and every call's return) a power loss, in several images
 * drawn by seed, each opened with journal_open() and held to the promises
 * of docs/journal.md ("Durability", "States", "Stamps", "Seals", "The call
 * log") by one function, check_image().
 *
 * Every scenario runs twice, without the write-ahead log and with it
 * (JournalOptions.wal: journal.log's writes through the model's
 * JournalLogOps, torn per sector, and its checkpoints' syncfs()), and the
 * log adds its own: a lap of a small ring that checkpoints by itself, a
 * mirror write that fails after its record (UNDO, appended or lost), a
 * power loss during the replay, and one while journal.log is made. With
 * the log, check_image() holds the journal to more, each with its reason
 * next to it. The images go to /dev/shm when it keeps seals.
 *
 * JOURNAL_CRASH_SEEDS sets the images per crash point (default 6: the
 * durable state alone, the volatile state, and 4 random ones); tests/run.sh
 * sets fewer under valgrind. A failure names the scenario, the crash
 * point, the operation before it and the seed, and leaves the image.
 *
 * Known failures, under JOURNAL_CRASH_STRICT=1 only (the model without its
 * one weakening, which test-journal-crash.h explains: no file system is
 * that weak for a directory of one block): a stored result is lost when a
 * power loss keeps the removal of the name .result and not the name
 * result.json of journal_put_result()'s rename (calls+result, full, burst,
 * repair; with the log, repair only: the others' RESULT records bring it
 * back); and a plan that journal_remove() was removing comes back
 * PENDING, and would run again, when the unlink of `running` lands and
 * that of plan.json does not (crowded burst, with the log too: its REMOVE
 * is not flushed). Either would cost an fsync that the
 * journal's flush budget (docs/journal.md, "Durability") does without. */
#include "test-journal-main.h"

#include "journal/journal-calls.h"
#include "journal/journal-log.h"
#include "test-journal-crash.h"

#define MAX_PLANS 24
#define N_SEEDS   6
#define RESERVE   ((uint64_t)16 << 10)
/* journal.log with the log on: the smallest, a ring of 16 sectors, half
 * of which (two trivial plans) makes the journal checkpoint by itself. */
#define LOG_SIZE JOURNAL_LOG_SIZE_MIN

/* What the journal promised of one plan, by the calls that returned. */
typedef struct Plan {
        char ts[JOURNAL_TS_MAX];
        char id[16];
        char body[1280];
        char result[128];
        int64_t stamp;      /* -1: none */
        bool acked;         /* journal_put_plan() (or put_answer()) returned */
        bool answer;        /* an answer without a plan */
        bool begun;         /* journal_begin() returned 0 */
        bool result_tried;  /* journal_put_result() was called */
        bool result_done;   /* ... and returned 0 */
        bool result_undone; /* ... and the last one failed (its record undone) */
        bool removing;      /* journal_remove() was called */
        bool removed;       /* ... with a record, and returned 0 */
        bool remove_done;   /* ... with a record or not, and returned 0 */
        bool gone;          /* ... and a flushed record of the log covers it */
        bool undo_lost;     /* a call failed, and its UNDO could not be appended */
        size_t n_synced;    /* call log records flushed */
        json_t *calls;      /* the records appended: [[kind, data], ...] */
} Plan;

static struct {
        const char *name;
        Plan p[MAX_PLANS];
        Plan *storing;                /* in journal_put_plan() or put_answer(): no ts yet */
        Plan *loose;                  /* a failed store whose UNDO was lost: no ts */
        int64_t stamp_min, stamp_max; /* begun; tried */
        unsigned seeds, points, images;
        char img[80];
        bool wal;                /* the write-ahead log on */
        const char *fail_rename; /* renameat() to this name fails (EIO) */
        bool fail_undo;          /* ... and then the log's next write (its UNDO) */
        bool undo_armed;         /* the log's next write fails (EIO) */
        JournalCallsKey *key;    /* of journal.log */
        Journal *j;              /* the scenario's, which it may open again */
} sc;

/* The model's operations, and a mirror write that fails on demand (the
 * UNDO of a record that is durable already). */
static int crash_renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath)
{
        if (sc.fail_rename && streq(newpath, sc.fail_rename)) {
                sc.undo_armed = sc.fail_undo;
                errno = EIO;
                return -1;
        }
        return cm_renameat(olddirfd, oldpath, newdirfd, newpath);
}

static ssize_t crash_pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
        if (sc.undo_armed) {
                sc.undo_armed = false;
                errno = EIO;
                return -1;
        }
        return cm_log_pwritev(fd, iov, n, off);
}

/* The journal under the model. */
static JournalOps crash_ops;
static JournalLogOps crash_log_ops;

/* A checked image's journal: the system calls, but for the flushes, which
 * would flush the machine's disk at every open and which no image needs. */
static int no_sync(int fd)
{
        (void)fd;
        return 0;
}

static const JournalOps check_ops = {.fsync = no_sync, .fdatasync = no_sync, .syncfs = no_sync};
static const JournalLogOps check_log_ops = {.fsync = no_sync, .fdatasync = no_sync};

/* The options of the scenario's mode; modelled: through the model. */
static JournalOptions options(bool modelled)
{
        JournalOptions o = JOURNAL_OPTIONS_DEFAULT;

        crash_ops = cm_ops;
        crash_ops.renameat = crash_renameat;
        crash_log_ops = cm_log_ops;
        crash_log_ops.pwritev = crash_pwritev;
        o.ops = modelled ? &crash_ops : &check_ops;
        o.reserve_size = RESERVE; /* small: it is copied into every image */
        o.wal = sc.wal;
        o.wal_ops = modelled ? &crash_log_ops : &check_log_ops;
        return o;
}

_printf_(1, 2) static void violation(const char *fmt, ...)
{
        char msg[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        ck_abort_msg("scenario %s, crash point %u (after op %u, %s), seed %u: %s (the image is "
                     "left in %s)",
                     sc.name, sc.points, cm.n_ops, cm.last_op, cm.seed, msg, sc.img);
}

static Plan *plan_of(const char *ts)
{
        for (size_t i = 0; i < MAX_PLANS; i++)
                if (sc.p[i].ts[0] && streq(sc.p[i].ts, ts))
                        return &sc.p[i];
        return NULL;
}

/* The call log of a plan that has one, as the runner resumes it. */
static void check_calls(Journal *k, const char *ts, const Plan *p)
{
        _cleanup_free_ char *dir = NULL, *error = NULL;
        JournalCallsKey *key = NULL;
        JournalCalls *c = NULL;
        int r;

        ck_assert_int_ge(asprintf(&dir, "%s/plans/%s", sc.img, ts), 0);
        if (!journal_calls_exist(dir))
                return; /* its name is not fsync'd: a plan without a log */
        ck_assert_int_eq(journal_calls_key(k, ts, &key), 0);
        r = journal_calls_open(dir, key, &c, &error);
        if (r == JOURNAL_CALLS_DAMAGED) {
                /* Refused, for a hole a power loss left among records not
                 * flushed with a whole one after it: docs/journal.md allows
                 * it ("The call log") when the damage is after the last
                 * flush; the plan is then answered with ErrorCode 103. */
                const char *at = error ? strstr(error, "at record ") : NULL;
                size_t rec = 0;

                if (!at || sscanf(at, "at record %zu", &rec) != 1 || rec < p->n_synced)
                        violation("the call log of %s is refused before its last flush: %s", ts,
                                  error ? error : "");
                journal_calls_key_free(key);
                return;
        }
        if (r != 0)
                violation("the call log of %s cannot be opened (%d)", ts, r);
        if (journal_calls_count(c) < p->n_synced)
                violation("the call log of %s lost flushed records: %zu of %zu", ts,
                          journal_calls_count(c), p->n_synced);
        for (size_t i = 0; i < journal_calls_count(c); i++) {
                const JournalCallRecord *rec = journal_calls_get(c, i);
                json_t *want = json_array_get(p->calls, i);

                if (!want || rec->kind != json_string_value(json_array_get(want, 0))[0] ||
                    !json_equal(rec->data, json_array_get(want, 1)))
                        violation("the call log of %s has a record %zu it was not given", ts, i);
        }
        journal_calls_free(c);
        journal_calls_key_free(key);
}

/* One listed entry against what was promised of it. */
static void check_entry(Journal *k, const JournalEntry *e)
{
        Plan *p = plan_of(e->ts);
        _cleanup_(journal_plan_freep) JournalPlan *jp = NULL;
        _cleanup_free_ char *error = NULL, *text = NULL;
        size_t len = 0;
        int r;

        if (!p && !sc.storing && !sc.loose)
                violation("entry %s, which no call made", e->ts);
        if (!p)
                p = sc.storing ? sc.storing : sc.loose;
        r = journal_load_plan(k, e->ts, &jp, &error);
        if (r == 0 && (jp->body_len != strlen(p->body) || memcmp(jp->body, p->body, jp->body_len)))
                violation("entry %s: a plan.json taken as whole that is not the one stored", e->ts);
        if (r != 0 && p->acked && !p->removing && !p->answer)
                violation("entry %s: the stored plan is lost (%d: %s)", e->ts, r,
                          error ? error : "");
        /* With the log, more: no file of the mirror is written before its
         * record is durable, and the open rewrites one that is torn from
         * the record, so an entry being stored holds its whole plan.json
         * too (without it, a torn one is refused as corrupt). */
        if (r != 0 && sc.wal && !p->removing && !p->answer)
                violation("entry %s: with the log, a plan.json that is not whole (%d: %s)", e->ts,
                          r, error ? error : "");
        if (p->gone)
                violation("entry %s: removed, and back after a flushed record covered its REMOVE",
                          e->ts);
        if (e->state == JOURNAL_PENDING && p->begun)
                violation("entry %s: begun, and PENDING again", e->ts);
        if (e->state == JOURNAL_RESULT) {
                r = journal_load_result(k, e->ts, &text, &len);
                if (r == 0 && (!p->result_tried || !streq(text, p->result)))
                        violation(
                                "entry %s: a result.json taken as whole that is not the one stored",
                                e->ts);
                if (r != 0 && (p->result_done || sc.wal) && !p->removing)
                        violation("entry %s: the stored result is lost (%d)", e->ts, r);
                /* Its RESULT record was undone when the call failed: a
                 * power loss after that never brings it back (the log's
                 * UNDO; without the log a failed call's slot may). */
                if (r == 0 && p->result_undone && !p->result_done)
                        violation("entry %s: the result of a call that failed is there", e->ts);
        } else if (p->result_done && !p->removing) {
                violation("entry %s: a stored result is lost (state %d)", e->ts, e->state);
        }
        /* A half-removed entry publishes its result again, or is gone:
         * never an interrupted plan (docs/journal.md, "Durability"). */
        if (p->removing && p->result_done && e->state != JOURNAL_RESULT)
                violation("entry %s: half removed, and in state %d", e->ts, e->state);
        if (p->begun && !p->result_done && e->state != JOURNAL_RESULT)
                check_calls(k, e->ts, p);
}

/* The promises, on the journal a power loss left in sc.img. */
static void check_image(void)
{
        JournalOptions o = options(false);
        _cleanup_(journal_freep) Journal *k = NULL;
        _cleanup_free_ JournalEntry *v = NULL;
        _cleanup_free_ char *before = NULL, *after = NULL;
        size_t n = 0;
        int r = journal_open(sc.img, &o, &k);

        if (r != 0)
                violation("journal_open: %s", strerror(-r));
        ck_assert_int_eq(journal_list(k, &v, &n), 0);
        for (size_t i = 0; i < n; i++)
                check_entry(k, &v[i]);
        for (size_t i = 0; i < MAX_PLANS; i++) {
                const Plan *p = &sc.p[i];
                bool listed = false;

                for (size_t e = 0; e < n; e++)
                        listed |= p->ts[0] && streq(v[e].ts, p->ts);
                if (p->acked && !p->removing && !listed)
                        violation("entry %s is lost", p->ts);
                if (p->removed && !listed) {
                        /* Removed with a record: the record answers. */
                        json_t *id = json_string(p->id);
                        _cleanup_free_ char *text = NULL;

                        r = journal_done_lookup(k, id, &text);
                        json_decref(id);
                        if (r != 1 || !streq(text, p->result))
                                violation("entry %s is gone without its done record (%d)", p->ts,
                                          r);
                }
        }
        if (journal_last_stamp(k) < sc.stamp_min)
                violation("the last stamp is %lld, below %lld accepted",
                          (long long)journal_last_stamp(k), (long long)sc.stamp_min);
        if (journal_last_stamp(k) > sc.stamp_max)
                violation("the last stamp is %lld, which no plan brought",
                          (long long)journal_last_stamp(k));
        /* The index is what a fresh open lists (and the repair holds). */
        before = list_text(k, true);
        k = journal_free(k);
        ck_assert_int_eq(journal_open(sc.img, &o, &k), 0);
        after = list_text(k, false);
        if (!streq(before, after))
                violation("index %s, a fresh open %s", before, after);
}

/* A power loss now, in every seed's image. */
static void crash_point(void)
{
        if (!cm.on || cm.point != crash_point)
                return; /* a call that makes the state the model starts from */
        cm.point = NULL;
        sc.points++;
        for (uint32_t seed = 0; seed < sc.seeds; seed++) {
                cm_image(seed, sc.img);
                check_image();
                rm_rf(sc.img);
                sc.images++;
        }
        cm.point = crash_point;
}

/* --- the daemon's calls, with what each promises once it returns --- */

/* A plan of pad bytes more than the least (records of 1 to 3 sectors). */
static Plan *new_plan(int64_t stamp, int pad)
{
        for (size_t i = 0; i < MAX_PLANS; i++) {
                Plan *p = &sc.p[i];
                char st[32] = "";

                if (p->id[0])
                        continue;
                snprintf(p->id, sizeof(p->id), "id%zu", i);
                if (stamp >= 0)
                        snprintf(st, sizeof(st), ", \"Stamp\": %lld", (long long)stamp);
                snprintf(p->body, sizeof(p->body), "{\"ID\": \"id%zu\"%s, \"Pad\": \"%*s\"}", i, st,
                         pad, "");
                snprintf(p->result, sizeof(p->result), "{\"SourceID\": \"id%zu\", \"Result\": %zu}",
                         i, i);
                p->stamp = stamp;
                p->calls = json_array();
                return p;
        }
        ck_abort_msg("too many plans");
        return NULL;
}

/* A call flushed the log: a REMOVE before it is durable (docs/journal.md,
 * "Records, and the order of writes"). Without the log a removal becomes
 * durable with the next fsync of plans/, which not every call makes. */
static void flushed(void)
{
        for (size_t i = 0; i < MAX_PLANS && sc.wal; i++) {
                sc.p[i].gone |= sc.p[i].remove_done;
                /* The checkpoint that a lost UNDO makes the next call take
                 * puts the failed call's record before the log's start
                 * (docs/journal.md, "When the mirror cannot be written"):
                 * until then a power loss may replay it, which then takes
                 * effect after all. */
                sc.p[i].result_undone |= sc.p[i].undo_lost && !sc.p[i].result_done;
                sc.p[i].undo_lost = false;
        }
        if (sc.wal)
                sc.loose = NULL;
}

/* journal_put_plan(): 0, or the error it must return. */
static Plan *store_as(Journal *j, int64_t stamp, int pad, int want)
{
        Plan *p = new_plan(stamp, pad);

        sc.storing = p;
        ck_assert_int_eq(journal_put_plan(j, p->body, strlen(p->body), NULL, 0, p->id, NULL, p->ts),
                         want);
        sc.storing = NULL;
        /* One that failed is never acked: no entry of it may be found
         * after the call (its record undone), or after the next
         * checkpoint when its UNDO was lost (flushed()). */
        p->acked = want == 0;
        if (!p->acked && sc.fail_undo)
                sc.loose = p;
        if (p->acked)
                flushed();
        crash_point();
        return p;
}

static Plan *store(Journal *j, int64_t stamp)
{
        return store_as(j, stamp, 0, 0);
}

static void begin(Journal *j, Plan *p)
{
        json_t *stamp = p->stamp >= 0 ? json_integer(p->stamp) : NULL;

        if (p->stamp > sc.stamp_max)
                sc.stamp_max = p->stamp;
        ck_assert_int_eq(journal_begin(j, p->ts, stamp), 0);
        json_decref(stamp);
        p->begun = true;
        if (p->stamp > sc.stamp_min)
                sc.stamp_min = p->stamp;
        flushed();
        crash_point();
}

/* n script calls, as the runner logs them: a start (flushed), an end and
 * a drawn value (not flushed). */
static void calls(Journal *j, Plan *p, int n)
{
        _cleanup_free_ char *dir = NULL, *error = NULL;
        JournalCallsKey *key = NULL;
        JournalCalls *c = NULL;

        ck_assert_int_ge(asprintf(&dir, "%s/plans/%s", storage, p->ts), 0);
        ck_assert_int_eq(journal_calls_key(j, p->ts, &key), 0);
        ck_assert_int_eq(journal_calls_open(dir, key, &c, &error), 0);
        for (int i = 0; i < n; i++) {
                static const char kinds[] = "SEV";

                for (int r = 0; r < 3; r++) {
                        json_t *data = json_pack("{si si}", "call", i, "r", r);
                        char kind[2] = {kinds[r], '\0'};

                        json_array_append_new(p->calls,
                                              json_pack("[s o]", kind, json_incref(data)));
                        ck_assert_int_eq(journal_calls_append(c, kinds[r], data, r == 0), 0);
                        json_decref(data);
                        if (r == 0)
                                p->n_synced = json_array_size(p->calls);
                        crash_point();
                }
        }
        journal_calls_free(c);
        journal_calls_key_free(key);
}

/* journal_put_result(): 0, or the error it must return. */
static void result_as(Journal *j, Plan *p, int want)
{
        p->result_tried = true;
        p->result_undone = false;
        ck_assert_int_eq(journal_put_result(j, p->ts, p->result, strlen(p->result), NULL), want);
        p->result_done = want == 0;
        p->undo_lost = want != 0 && sc.fail_undo;
        p->result_undone = want != 0 && !p->undo_lost;
        if (want == 0)
                flushed();
        crash_point();
}

static void result(Journal *j, Plan *p)
{
        result_as(j, p, 0);
}

static void remove_entry(Journal *j, Plan *p, bool record)
{
        p->removing = true;
        ck_assert_int_eq(journal_remove(j, p->ts, record), 0);
        p->removed = record;
        p->remove_done = true;
        crash_point();
}

static Plan *answer(Journal *j)
{
        Plan *p = new_plan(-1, 0);

        p->answer = p->result_tried = true;
        p->body[0] = '\0';
        sc.storing = p;
        ck_assert_int_eq(journal_put_answer(j, p->result, strlen(p->result), p->ts), 0);
        sc.storing = NULL;
        p->acked = p->result_done = true;
        crash_point();
        return p;
}

/* journal_checkpoint(): with the log, a syncfs() and a superblock. */
static void checkpoint(Journal *j)
{
        ck_assert_int_eq(journal_checkpoint(j), 0);
        flushed();
        crash_point();
}

/* --- scenarios --- */

static void sc_store(Journal *j)
{
        store(j, -1);
}

static void sc_begin(Journal *j)
{
        begin(j, store(j, 100));
}

static void sc_calls(Journal *j)
{
        Plan *p = store(j, 100);

        begin(j, p);
        calls(j, p, 2);
        result(j, p);
}

static void sc_full(Journal *j)
{
        Plan *p = store(j, 100);

        begin(j, p);
        calls(j, p, 1);
        result(j, p);
        remove_entry(j, p, true);
}

/* A burst: the second plan begun before the first is removed, one
 * without a Stamp, dropped without a record, and a checkpoint amid them
 * (with the log: its syncfs() and superblock; without, nothing). */
static void sc_burst(Journal *j)
{
        Plan *a = store(j, 100), *b = store(j, 101), *c = store(j, -1);

        begin(j, a);
        result(j, a);
        checkpoint(j);
        begin(j, b);
        remove_entry(j, a, true);
        begin(j, c);
        result(j, b);
        result(j, c);
        remove_entry(j, b, true);
        remove_entry(j, c, false);
}

static void sc_answer(Journal *j)
{
        remove_entry(j, answer(j), true);
}

/* Plans one after another, of records of 1 to 3 sectors, through the
 * ring of LOG_SIZE and past its end: it checkpoints by itself when half
 * full, and a record that does not fit before its end goes to its start. */
static void sc_lap(Journal *j)
{
        /* The fourth PLAN, of 2 sectors, finds 1 left before the end. */
        static const int pads[] = {0, 400, 800, 400};
        unsigned syncfs = cm.n_syncfs;

        for (size_t i = 0; i < ELEMENTSOF(pads); i++) {
                Plan *p = store_as(j, 200 + (int64_t)i, pads[i], 0);

                begin(j, p);
                result(j, p);
                remove_entry(j, p, true);
        }
        ck_assert_uint_ge(cm.n_syncfs - syncfs, 2);
}

/* A mirror write that fails after its record is durable: the call fails,
 * and appends an UNDO; the record never takes effect after it returned.
 * And the same when the UNDO cannot be appended: the log is fenced, and
 * the next call checkpoints first. */
static void sc_undo(Journal *j)
{
        Plan *a = store(j, 100);

        sc.fail_rename = "plan.json";
        store_as(j, 101, 0, -EIO);
        sc.fail_undo = true;
        store_as(j, 102, 0, -EIO);
        sc.fail_undo = false;
        sc.fail_rename = "result.json";
        begin(j, a);
        result_as(j, a, -EIO);
        sc.fail_undo = true;
        result_as(j, a, -EIO);
        sc.fail_undo = false;
        sc.fail_rename = NULL;
        result(j, a);
        remove_entry(j, a, true);
}

/* A write-back error: a checkpoint's syncfs() fails, and every write to
 * the mirror since the last is lost (pages marked clean, never written
 * again); the next syncfs() succeeds. The checkpoint after it must not
 * drop a record whose mirror the disk lacks: plans, results, calls, done
 * records and the stamp file (docs/journal.md, "The checkpoint"). */
static void sc_writeback(Journal *j)
{
        Plan *a = store(j, 100), *b = store(j, 101), *c = store(j, -1);

        begin(j, a);
        calls(j, a, 1);
        result(j, a);
        remove_entry(j, a, true);
        begin(j, b);
        result(j, b);
        remove_entry(j, b, true);
        begin(j, c);
        calls(j, c, 1);
        cm.syncfs_lose = 1;
        ck_assert_int_eq(journal_checkpoint(j), -EIO);
        crash_point();
        checkpoint(j);
        result(j, c);
        checkpoint(j);
}

/* The same, and the pages that failed are dropped from the page cache
 * before the next checkpoint (memory pressure), so that the files read
 * what the disk kept: the checkpoint must write the mirror from what the
 * records and the journal's memory say, not from the files. */
static void sc_writeback_evicted(Journal *j)
{
        cm.syncfs_evict = true;
        sc_writeback(j);
        cm.syncfs_evict = false;
}

/* The same, and the agent stops then (its last checkpoint fails too) and
 * starts again: the new process's syncfs() does not report the error the
 * last one's did, and its open finds the mirror's pages as that process
 * wrote them. */
static void sc_writeback_restart(Journal *j)
{
        JournalOptions o = options(true);
        Plan *a = store(j, 100), *b = store(j, -1);

        begin(j, a);
        calls(j, a, 1);
        result(j, a);
        remove_entry(j, a, true);
        cm.syncfs_lose = 2;
        ck_assert_int_eq(journal_checkpoint(j), -EIO);
        crash_point();
        journal_free(j);
        ck_assert_uint_eq(cm.syncfs_lose, 0);
        crash_point();
        ck_assert_int_eq(journal_open(storage, &o, &sc.j), 0);
        crash_point();
        begin(sc.j, b);
        checkpoint(sc.j);
}

/* A plan stored and begun on a log just opened. */
static void sc_after_open(Journal *j)
{
        begin(j, store(j, 300));
}

/* The replay had the records of mirror_behind() to do. */
static void sc_after_replay(Journal *j)
{
        ck_assert_uint_eq(journal_open_report(j)->n_wal_records, 8);
        sc_after_open(j);
}

/* After the repairs of journal_open(). */
static void sc_repaired(Journal *j)
{
        ck_assert(journal_open_report(j)->stamp_recovered);
        crash_point();
}

/* --- the states a scenario starts from, made before the model starts --- */

/* plans/ crowded past one block: its changes land each on its own. */
static void crowd(void)
{
        JournalOptions o = options(false);
        Journal *j = NULL;

        ck_assert_int_eq(journal_open(storage, &o, &j), 0);
        for (unsigned i = 0; i < CM_BLOCK_NAMES; i++)
                store(j, -1);
        journal_free(j);
}

/* What an earlier power loss left for journal_open() to repair: a result
 * under its slot's name, the stamp file behind, a temporary file, an
 * empty entry. */
static void repairs(void)
{
        JournalOptions o = options(false);
        Journal *j = NULL;
        Plan *a, *b;

        ck_assert_int_eq(journal_open(storage, &o, &j), 0);
        a = store(j, 100);
        b = store(j, 101);
        begin(j, a);
        begin(j, b);
        result(j, a);
        journal_free(j);
        {
                _cleanup_free_ char *from = pathf("plans/%s/result.json", a->ts);
                _cleanup_free_ char *to = pathf("plans/%s/.result", a->ts);
                ck_assert_int_eq(rename(from, to), 0);
        }
        put_file("plans/stamp", "5");
        seal_rel("plans/stamp", "stamp", "stamp");
        {
                _cleanup_free_ char *tmp = expand("plans/<ts>/.plan.json.tmp", b->ts);
                put_file(tmp, "{\"ID\": ");
        }
        put_file("plans/7/", "");
}

/* The log ahead of the mirror, as a power loss leaves it (the model's
 * durable state): records of plans stored, begun, answered and removed,
 * of which plans/ holds none, for journal_open() to replay. */
static void mirror_behind(void)
{
        JournalOptions o = options(true);
        _cleanup_free_ char *img = NULL;
        Journal *j = NULL;
        Plan *a, *b, *c;

        cm_start(storage);
        ck_assert_int_eq(journal_open(storage, &o, &j), 0);
        a = store(j, 100);
        b = store(j, 101);
        c = store(j, -1);
        begin(j, a);
        result(j, a);
        result(j, c);
        remove_entry(j, c, true);
        begin(j, b); /* its flush covers the REMOVE before it */
        ck_assert_int_ge(asprintf(&img, "%s-behind", storage), 0);
        cm_image(0, img);
        cm_stop();
        journal_free(j);
        rm_rf(storage);
        ck_assert_int_eq(rename(img, storage), 0);
}

/* Plans of an agent that ran without the log. */
static void log_off(void)
{
        JournalOptions o = options(false);
        Journal *j = NULL;
        Plan *a;

        o.wal = false;
        ck_assert_int_eq(journal_open(storage, &o, &j), 0);
        a = store(j, 100);
        store(j, -1);
        begin(j, a);
        journal_free(j);
}

enum { MODE_OFF = 1, MODE_WAL = 2, MODE_BOTH = 3 };

typedef struct Scenario {
        const char *name;
        void (*run)(Journal *j);
        void (*before)(void); /* NULL: an empty journal */
        unsigned modes;       /* without the log, with it, or both */
        bool made;            /* journal.log is made under the model, after before() */
} Scenario;

static const Scenario scenarios[] = {
        {"store", sc_store, NULL, MODE_BOTH},
        {"store+begin", sc_begin, NULL, MODE_BOTH},
        {"calls+result", sc_calls, NULL, MODE_BOTH},
        {"full", sc_full, NULL, MODE_BOTH},
        {"burst", sc_burst, NULL, MODE_BOTH},
        {"answer", sc_answer, NULL, MODE_BOTH},
        {"crowded burst", sc_burst, crowd, MODE_BOTH},
        /* A second power loss during the repairs of journal_open(). */
        {"repair", sc_repaired, repairs, MODE_BOTH},
        /* The log's own: without it they are what the above cover (and
         * a failed call's result slot is taken at the next open). */
        {"lap", sc_lap, NULL, MODE_WAL},
        {"undo", sc_undo, NULL, MODE_WAL},
        {"write-back error", sc_writeback, NULL, MODE_WAL},
        {"write-back error, restart", sc_writeback_restart, NULL, MODE_WAL},
        {"write-back error, evicted", sc_writeback_evicted, NULL, MODE_WAL},
        /* A second power loss during the replay of journal_open(). */
        {"replay", sc_after_replay, mirror_behind, MODE_WAL},
        /* The log turned on over a journal: a power loss while its file
         * is made. */
        {"log made", sc_after_open, log_off, MODE_WAL, true},
};

/* The scenarios in each mode they run in. */
static struct {
        const Scenario *s;
        bool wal;
} runs[2 * ELEMENTSOF(scenarios)];

/* Where the images go: on a tmpfs that keeps the seals, which builds them
 * some 10 times faster than a busy disk; else beside the storage. */
static void image_dir(void)
{
        _cleanup_free_ char *probe = NULL;
        int fd;

        snprintf(sc.img, sizeof(sc.img), "/dev/shm/%s-image", strrchr(storage, '/') + 1);
        ck_assert_int_ge(asprintf(&probe, "%s-probe", sc.img), 0);
        fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0 || fsetxattr(fd, CM_XATTR, "", 0, 0) < 0)
                snprintf(sc.img, sizeof(sc.img), "%s-image", storage);
        if (fd >= 0) {
                close(fd);
                unlink(probe);
        }
}

/* journal.log of LOG_SIZE, made as journal_open() makes it (which would
 * make one of JOURNAL_LOG_SIZE: every image holds a copy), under the
 * journal's key; the journal keeps the size it finds. */
static void make_log(bool modelled)
{
        JournalLogOptions lo = {.size = LOG_SIZE, .ops = modelled ? &cm_log_ops : NULL};
        JournalLog *log = NULL;
        _cleanup_close_ int dfd = open(storage, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        ck_assert_int_eq(journal_log_open(dfd, sc.key, &lo, NULL, NULL, &log), 0);
        journal_log_free(log);
}

static void scenario_start(const char *name, bool wal, bool made)
{
        const char *env = getenv("JOURNAL_CRASH_SEEDS");
        JournalOptions o;
        Journal *j = NULL;

        /* What a failed scenario left (CK_FORK=no). */
        cm_stop();
        memset(&sc, 0, sizeof(sc));
        sc.name = name;
        sc.seeds = env && atoi(env) > 0 ? (unsigned)atoi(env) : N_SEEDS;
        image_dir();
        /* The first open makes journal.key with the system calls; the
         * model starts from the opened journal, all of it durable. */
        o = options(false);
        o.wal = false;
        ck_assert_int_eq(journal_open(storage, &o, &j), 0);
        ck_assert_int_eq(journal_log_key(j, &sc.key), 0);
        if (wal && !made)
                make_log(false);
        journal_free(j);
        sc.wal = wal;
}

static void scenario_end(void)
{
        fprintf(stderr, "%s%s: %u crash points, %u images\n", sc.name, sc.wal ? " (log)" : "",
                sc.points, sc.images);
        for (size_t i = 0; i < MAX_PLANS; i++)
                json_decref(sc.p[i].calls);
        journal_calls_key_free(sc.key);
        cm_stop();
}

START_TEST(test_scenario)
{
        const Scenario *s = runs[_i].s;
        JournalOptions o;
        Journal *j = NULL;

        scenario_start(s->name, runs[_i].wal, s->made);
        if (s->before)
                s->before();
        cm_start(storage);
        cm.point = crash_point;
        if (s->made)
                make_log(true);
        o = options(true);
        ck_assert_int_eq(journal_open(storage, &o, &j), 0);
        sc.j = j;
        s->run(j);
        /* With the log, a checkpoint. */
        journal_free(sc.j);
        scenario_end();
}
END_TEST

static void add_tests(TCase *tc)
{
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(scenarios); i++)
                for (unsigned m = MODE_OFF; m <= MODE_WAL; m <<= 1)
                        if (scenarios[i].modes & m)
                                runs[n++] = (typeof(runs[0])){&scenarios[i], m == MODE_WAL};
        tcase_add_loop_test(tc, test_scenario, 0, (int)n);
}

int main(void)
{
        return journal_test_main("journal-crash", add_tests);
}
