/* The journal on a slow disk: while a call on libuv's thread pool waits
 * for an fsync that takes seconds, the event loop goes on as the daemon's
 * does. A repeating loop timer stands for the watchdog's and the
 * transport's heartbeat timers, and on each tick does what the daemon's
 * loop asks of the journal on each pass: the next thing to do
 * (journal_next_except()) and the result to publish (journal_load_result()).
 * The timer must keep firing on time. */
#include <uv.h>

#include "test-journal-main.h"
#include "test-journal.h"

/* How long each fsync takes while the disk is slow, and how late a tick of
 * the 20 ms timer may be: far below one fsync, far above a busy machine's
 * scheduling delays. */
#define SLOW_FSYNC_MS 1500
#define TICK_MS       20
#define LATE_MS       (SLOW_FSYNC_MS / 2)

static bool slow_disk;

static int slow_fsync(int fd)
{
        if (__atomic_load_n(&slow_disk, __ATOMIC_ACQUIRE))
                usleep(SLOW_FSYNC_MS * 1000);
        return fsync(fd);
}

static const JournalOps slow_ops = {.fsync = slow_fsync};

typedef struct Run {
        Journal *j;
        uv_timer_t tick;
        uv_work_t work;
        char result_ts[JOURNAL_TS_MAX]; /* the result the loop keeps publishing */
        uint64_t last_ms;               /* when the loop last came back from a tick */
        uint64_t worst_ms;              /* the longest the loop was away */
        unsigned ticks;                 /* while the work was out */
        uint64_t work_start_ms, work_ms;
        int rc_put, rc_remove;
} Run;

static uint64_t now_ms(void)
{
        return uv_hrtime() / 1000000;
}

/* The loop was busy since the end of the last tick: was that too long? */
static void loop_back(Run *run)
{
        uint64_t now = now_ms();

        if (now - run->last_ms > run->worst_ms)
                run->worst_ms = now - run->last_ms;
        run->last_ms = now;
}

static void on_tick(uv_timer_t *t)
{
        Run *run = t->data;
        _cleanup_(journal_result_freep) JournalResult *res = NULL;
        JournalEntry e;

        loop_back(run);
        run->ticks++;
        /* What daemon_pump() and publish_result() ask on every pass. */
        ck_assert_int_eq(journal_next_except(run->j, NULL, &e), 1);
        if (e.state == JOURNAL_RESULT)
                ck_assert_int_eq(journal_get_result(run->j, e.ts, &res), 0);
        /* Time spent in the tick counts as the loop's too. */
        loop_back(run);
}

/* On the pool: a delivery stored (3 fsyncs) and a confirmed result removed
 * with its done record (1 or 2), each waiting seconds for the disk. */
static void work_slow(uv_work_t *req)
{
        Run *run = req->data;
        char ts[JOURNAL_TS_MAX];

        run->rc_put = journal_put_plan(run->j, "{}", 2, NULL, 0, "slow-id", NULL, ts);
        run->rc_remove = journal_remove(run->j, run->result_ts, true);
}

static void after_slow(uv_work_t *req, int status)
{
        Run *run = req->data;

        loop_back(run);
        run->work_ms = now_ms() - run->work_start_ms;
        uv_timer_stop(&run->tick);
        uv_close((uv_handle_t *)&run->tick, NULL);
}

START_TEST(test_loop_keeps_time)
{
        JournalOptions o = JOURNAL_OPTIONS_DEFAULT;
        static const char result[] = "{\"SourceID\": \"r1\", \"Body\": null}";
        char pending[JOURNAL_TS_MAX];
        uv_loop_t loop;
        Run run = {0};

        o.ops = &slow_ops;
        run.j = open_with(&o);
        /* A result waiting to be published, and a plan waiting to run. */
        ck_assert_int_eq(journal_put_plan(run.j, "{}", 2, NULL, 0, "r1", NULL, run.result_ts), 0);
        ck_assert_int_eq(journal_begin(run.j, run.result_ts, NULL), 0);
        ck_assert_int_eq(journal_put_result(run.j, run.result_ts, result, strlen(result), NULL), 0);
        ck_assert_int_eq(journal_put_plan(run.j, "{}", 2, NULL, 0, "p1", NULL, pending), 0);

        __atomic_store_n(&slow_disk, true, __ATOMIC_RELEASE);
        ck_assert_int_eq(uv_loop_init(&loop), 0);
        ck_assert_int_eq(uv_timer_init(&loop, &run.tick), 0);
        run.tick.data = &run;
        run.work.data = &run;
        run.last_ms = run.work_start_ms = now_ms();
        ck_assert_int_eq(uv_timer_start(&run.tick, on_tick, TICK_MS, TICK_MS), 0);
        ck_assert_int_eq(uv_queue_work(&loop, &run.work, work_slow, after_slow), 0);
        ck_assert_int_eq(uv_run(&loop, UV_RUN_DEFAULT), 0);
        ck_assert_int_eq(uv_loop_close(&loop), 0);
        __atomic_store_n(&slow_disk, false, __ATOMIC_RELEASE);

        ck_assert_int_eq(run.rc_put, 0);
        ck_assert_int_eq(run.rc_remove, 0);
        /* The disk was slow: the work waited for 4 fsyncs at least. */
        ck_assert_uint_ge(run.work_ms, 4 * SLOW_FSYNC_MS);
        /* And the loop was not: no tick came late, and they kept coming. */
        ck_assert_msg(run.worst_ms < LATE_MS, "the loop was away for %llu ms",
                      (unsigned long long)run.worst_ms);
        ck_assert_uint_ge(run.ticks, run.work_ms / TICK_MS / 4);
        journal_free(run.j);
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_test(tc, test_loop_keeps_time);
}

int main(void)
{
        return journal_test_main("journal-slow", add_tests);
}
