/* Tests for progress/: the exact JSON of each event kind, text made valid
 * UTF-8, the description --follow prints, and the bounds on output chunks
 * (size, drop count, a character split across reads). */
#include <check.h>
#include <string.h>

#include "progress/progress.h"
#include "util/macro.h"
#include "test-lib.h"

/* 2026-11-28T08:15:02.120Z */
#define T0 1795853702120LL

static const struct {
        ProgressEvent e;
        const char *json;
        const char *line;
} cases[] = {
        {{.kind = PROGRESS_ACCEPTED, .plan = "p1", .seq = 1, .time_ms = T0},
         "{\"progress\":1,\"plan\":\"p1\",\"seq\":1,\"event\":\"accepted\","
         "\"time\":\"2026-11-28T08:15:02.120Z\"}",
         "08:15:02.120 #1 plan p1 accepted\n"},
        {{.kind = PROGRESS_SCRIPT_STARTED,
          .plan = "p1",
          .seq = 2,
          .time_ms = T0 + 5,
          .script = "script deploy",
          .pid = 1234},
         "{\"progress\":1,\"plan\":\"p1\",\"seq\":2,\"event\":\"script_started\","
         "\"time\":\"2026-11-28T08:15:02.125Z\",\"script\":\"script deploy\",\"pid\":1234}",
         "08:15:02.125 #2 script deploy started (pid 1234)\n"},
        {{.kind = PROGRESS_OUTPUT,
          .plan = "p1",
          .seq = 3,
          .time_ms = T0 + 1000,
          .script = "script deploy",
          .stream = 1,
          .text = "a\nb\n",
          .text_len = 4},
         "{\"progress\":1,\"plan\":\"p1\",\"seq\":3,\"event\":\"output\","
         "\"time\":\"2026-11-28T08:15:03.120Z\",\"script\":\"script deploy\","
         "\"stream\":\"stdout\",\"text\":\"a\\nb\\n\",\"dropped\":0}",
         "08:15:03.120 #3 script deploy | a\n08:15:03.120 #3 script deploy | b\n"},
        {{.kind = PROGRESS_OUTPUT,
          .plan = "p1",
          .seq = 4,
          .time_ms = T0,
          .script = "script deploy",
          .stream = 2,
          .text = "bad \xff\xc3",
          .text_len = 6,
          .dropped = 77},
         "{\"progress\":1,\"plan\":\"p1\",\"seq\":4,\"event\":\"output\","
         "\"time\":\"2026-11-28T08:15:02.120Z\",\"script\":\"script deploy\","
         "\"stream\":\"stderr\",\"text\":\"bad \xef\xbf\xbd\xef\xbf\xbd\",\"dropped\":77}",
         "08:15:02.120 #4 script deploy [77 bytes of output left out]\n"
         "08:15:02.120 #4 script deploy ! bad \xef\xbf\xbd\xef\xbf\xbd\n"},
        {{.kind = PROGRESS_SCRIPT_FINISHED,
          .plan = "p1",
          .seq = 5,
          .time_ms = T0,
          .script = "script deploy",
          .exit_code = 3,
          .duration_ms = 3300},
         "{\"progress\":1,\"plan\":\"p1\",\"seq\":5,\"event\":\"script_finished\","
         "\"time\":\"2026-11-28T08:15:02.120Z\",\"script\":\"script deploy\",\"exit_code\":3,"
         "\"duration_ms\":3300,\"failure\":null}",
         "08:15:02.120 #5 script deploy finished: exit code 3 in 3.3 s\n"},
        {{.kind = PROGRESS_SCRIPT_FINISHED,
          .plan = "p1",
          .seq = 6,
          .time_ms = T0,
          .script = "script x",
          .exit_code = -15,
          .duration_ms = 10,
          .failure = "script x timed out after 1 seconds"},
         "{\"progress\":1,\"plan\":\"p1\",\"seq\":6,\"event\":\"script_finished\","
         "\"time\":\"2026-11-28T08:15:02.120Z\",\"script\":\"script x\",\"exit_code\":-15,"
         "\"duration_ms\":10,\"failure\":\"script x timed out after 1 seconds\"}",
         "08:15:02.120 #6 script x finished: exit code -15 in 0.0 s; script x timed out after 1 "
         "seconds\n"},
        {{.kind = PROGRESS_PLAN_FINISHED,
          .plan = "p\"1",
          .seq = 7,
          .time_ms = T0,
          .error_code = 101,
          .duration_ms = 61000},
         "{\"progress\":1,\"plan\":\"p\\\"1\",\"seq\":7,\"event\":\"plan_finished\","
         "\"time\":\"2026-11-28T08:15:02.120Z\",\"error_code\":101,\"duration_ms\":61000}",
         "08:15:02.120 #7 plan p\"1 finished: ErrorCode 101 in 61.0 s\n"},
};

START_TEST(test_encode_describe)
{
        _cleanup_free_ char *text = NULL, *line = NULL;
        _cleanup_json_ json_t *doc = NULL;
        size_t len = 0;

        ck_assert_int_eq(progress_encode(&cases[_i].e, &text, &len), 0);
        ck_assert_str_eq(text, cases[_i].json);
        ck_assert_uint_eq(len, strlen(text));
        doc = json_loads(text, 0, NULL);
        ck_assert_ptr_nonnull(doc);
        ck_assert(progress_is_event(doc, NULL));
        ck_assert(progress_is_event(doc, cases[_i].e.plan));
        ck_assert(!progress_is_event(doc, "another plan"));
        ck_assert_int_eq(progress_describe(doc, &line), 0);
        ck_assert_str_eq(line, cases[_i].line);
}
END_TEST

START_TEST(test_encode_bad_kind)
{
        ProgressEvent e = {.kind = (ProgressKind)99, .plan = "p"};
        char *text = NULL;
        size_t len;

        ck_assert_int_eq(progress_encode(&e, &text, &len), -EINVAL);
        ck_assert_ptr_null(text);
}
END_TEST

START_TEST(test_is_event)
{
        static const char *const not_events[] = {
                "{\"FormatVersion\":\"2.0.0\",\"SourceID\":\"p\",\"ErrorCode\":0}",
                "{\"progress\":2,\"plan\":\"p\",\"seq\":1,\"event\":\"accepted\"}",
                "{\"progress\":1,\"plan\":1,\"seq\":1,\"event\":\"accepted\"}",
                "{\"progress\":1,\"plan\":\"p\",\"event\":\"accepted\"}",
                "[1]",
        };

        for (size_t i = 0; i < ELEMENTSOF(not_events); i++) {
                _cleanup_json_ json_t *doc = json_loads(not_events[i], 0, NULL);
                ck_assert_msg(!progress_is_event(doc, NULL), "%s", not_events[i]);
        }
        ck_assert(!progress_is_event(NULL, NULL));
}
END_TEST

START_TEST(test_output_bounds)
{
        static ProgressOutput po;
        static char big[3 * PROGRESS_CHUNK_MAX], out[PROGRESS_CHUNK_MAX];
        size_t len = 0;
        uint64_t dropped = 0;

        memset(&po, 0, sizeof(po));
        ck_assert(!progress_output_take(&po, false, out, &len, &dropped));
        memset(big, 'x', sizeof(big));
        progress_output_add(&po, "hello\n", 6);
        progress_output_add(&po, big, sizeof(big));
        ck_assert(progress_output_take(&po, false, out, &len, &dropped));
        ck_assert_uint_eq(len, PROGRESS_CHUNK_MAX);
        ck_assert_uint_eq(dropped, 6 + sizeof(big) - PROGRESS_CHUNK_MAX);
        ck_assert(memcmp(out, "hello\nxxx", 9) == 0);
        /* Emptied: nothing more until new bytes. */
        ck_assert(!progress_output_take(&po, false, out, &len, &dropped));
        progress_output_add(&po, "y", 1);
        ck_assert(progress_output_take(&po, false, out, &len, &dropped));
        ck_assert_uint_eq(len, 1);
        ck_assert_uint_eq(dropped, 0);
}
END_TEST

START_TEST(test_output_split_character)
{
        static ProgressOutput po;
        char out[PROGRESS_CHUNK_MAX];
        size_t len = 0;
        uint64_t dropped = 0;

        memset(&po, 0, sizeof(po));
        /* "é" is c3 a9, "€" e2 82 ac: each arrives cut in two. */
        progress_output_add(&po, "a\xc3", 2);
        ck_assert(progress_output_take(&po, false, out, &len, &dropped));
        ck_assert_uint_eq(len, 1);
        ck_assert(memcmp(out, "a", 1) == 0);
        progress_output_add(&po, "\xa9 \xe2\x82", 4);
        ck_assert(progress_output_take(&po, false, out, &len, &dropped));
        ck_assert_uint_eq(len, 3);
        ck_assert(memcmp(out, "\xc3\xa9 ", 3) == 0);
        /* Only the cut character waits: nothing to send yet. */
        ck_assert(!progress_output_take(&po, false, out, &len, &dropped));
        progress_output_add(&po, "\xac", 1);
        ck_assert(progress_output_take(&po, false, out, &len, &dropped));
        ck_assert_uint_eq(len, 3);
        /* At the end of the stream a cut character goes as it is. */
        progress_output_add(&po, "\xe2", 1);
        ck_assert(progress_output_take(&po, true, out, &len, &dropped));
        ck_assert_uint_eq(len, 1);
}
END_TEST

START_TEST(test_batch)
{
        ProgressBatch b = {0};
        ProgressEvent e = {.kind = PROGRESS_ACCEPTED, .plan = "p", .time_ms = T0};
        static char big[PROGRESS_CHUNK_MAX];
        const char *text = NULL;
        size_t len = 0;

        progress_batch_take(&b, &text, &len);
        ck_assert_ptr_null(text);
        e.seq = 1;
        ck_assert_int_eq(progress_batch_add(&b, &e), 0);
        e.seq = 2;
        e.kind = PROGRESS_PLAN_FINISHED;
        ck_assert_int_eq(progress_batch_add(&b, &e), 0);
        ck_assert(!progress_batch_full(&b));
        progress_batch_take(&b, &text, &len);
        ck_assert_str_eq(text, "[{\"progress\":1,\"plan\":\"p\",\"seq\":1,\"event\":\"accepted\","
                               "\"time\":\"2026-11-28T08:15:02.120Z\"},{\"progress\":1,\"plan\":"
                               "\"p\",\"seq\":2,\"event\":\"plan_finished\",\"time\":\"2026-11-"
                               "28T08:15:02.120Z\",\"error_code\":0,\"duration_ms\":0}]");
        ck_assert_uint_eq(len, strlen(text));
        /* Emptied by the take. */
        progress_batch_take(&b, &text, &len);
        ck_assert_ptr_null(text);
        /* Full by count... */
        for (unsigned i = 0; i < PROGRESS_BATCH_EVENTS; i++) {
                ck_assert(!progress_batch_full(&b));
                ck_assert_int_eq(progress_batch_add(&b, &e), 0);
        }
        ck_assert(progress_batch_full(&b));
        progress_batch_take(&b, &text, &len);
        /* ... and by size: four full output chunks. */
        memset(big, 'x', sizeof(big));
        e = (ProgressEvent){
                .kind = PROGRESS_OUTPUT, .plan = "p", .text = big, .text_len = sizeof(big)};
        for (int i = 0; i < 3; i++) {
                ck_assert_int_eq(progress_batch_add(&b, &e), 0);
                ck_assert(!progress_batch_full(&b));
        }
        ck_assert_int_eq(progress_batch_add(&b, &e), 0);
        ck_assert(progress_batch_full(&b));
        progress_batch_clear(&b);
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_test(tc, test_batch);
        tcase_add_loop_test(tc, test_encode_describe, 0, ELEMENTSOF(cases));
        tcase_add_test(tc, test_encode_bad_kind);
        tcase_add_test(tc, test_is_event);
        tcase_add_test(tc, test_output_bounds);
        tcase_add_test(tc, test_output_split_character);
}

int main(void)
{
        return check_main_one("progress", "core", NULL, NULL, 10, add_tests);
}
