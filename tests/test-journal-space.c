/* Tests for the journal on a full disk: plans/reserve, and answers that
 * take pieces of it. The file operations that take room (mkdirat, write,
 * fallocate) and the one that gives it back (ftruncate of the reserve) go
 * through a small model of a file system's free blocks (unlinkat gives
 * them back too): when the model says "full", they fail with ENOSPC as the
 * kernel would, before doing anything; otherwise they do the real call on
 * the test's directory. */
#include <fcntl.h>
#include <sys/stat.h>

#include "test-journal.h"
#include "test-journal-main.h"

#define BLOCK  4096
#define ANSWER "{\"SourceID\": \"big\", \"ErrorCode\": 104}"

/* Free bytes of the model; at start far more than anything needs. */
static int64_t space_free;

static int64_t blocks(int64_t n)
{
        return (n + BLOCK - 1) / BLOCK * BLOCK;
}

static bool take(int64_t n)
{
        if (blocks(n) > space_free) {
                errno = ENOSPC;
                return false;
        }
        space_free -= blocks(n);
        return true;
}

static int s_mkdirat(int dirfd, const char *path, mode_t mode)
{
        if (!take(BLOCK))
                return -1;
        return mkdirat(dirfd, path, mode);
}

/* The journal writes files from their start on, or appends: the file
 * grows by n bytes, and takes the blocks it grows into. */
static ssize_t s_write(int fd, const void *buf, size_t n)
{
        struct stat st;

        ck_assert_int_eq(fstat(fd, &st), 0);
        if (!take(blocks(st.st_size + (off_t)n) - blocks(st.st_size)))
                return -1;
        return write(fd, buf, n);
}

static int s_unlinkat(int dirfd, const char *path, int flags)
{
        struct stat st;

        if (fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            (flags & AT_REMOVEDIR ? S_ISDIR(st.st_mode)
                                  : S_ISREG(st.st_mode) && st.st_nlink == 1)) {
                int r = unlinkat(dirfd, path, flags);

                if (r == 0)
                        space_free += flags & AT_REMOVEDIR ? BLOCK : blocks(st.st_size);
                return r;
        }
        return unlinkat(dirfd, path, flags);
}

static int s_fallocate(int fd, int mode, off_t offset, off_t len)
{
        struct stat st;

        ck_assert_int_eq(fstat(fd, &st), 0);
        if (offset + len > st.st_size && !take(blocks(offset + len) - blocks(st.st_size)))
                return -1;
        return fallocate(fd, mode, offset, len);
}

static int s_ftruncate(int fd, off_t len)
{
        struct stat st;

        ck_assert_int_eq(fstat(fd, &st), 0);
        if (len < st.st_size)
                space_free += blocks(st.st_size) - blocks(len);
        return ftruncate(fd, len);
}

static const JournalOps space_ops = {
        .mkdirat = s_mkdirat,
        .write = s_write,
        .unlinkat = s_unlinkat,
        .fallocate = s_fallocate,
        .ftruncate = s_ftruncate,
};

static Journal *open_space(uint64_t reserve)
{
        JournalOptions o = JOURNAL_OPTIONS_DEFAULT;

        o.ops = &space_ops;
        o.reserve_size = reserve;
        return open_with(&o);
}

static off_t reserve_len(void)
{
        _cleanup_free_ char *p = pathf("plans/reserve");
        struct stat st;

        if (stat(p, &st) < 0)
                return -1;
        return st.st_size;
}

/* The reserve is made at open, whole, with its blocks allocated. */
START_TEST(test_reserve_made)
{
        _cleanup_(journal_freep) Journal *j = NULL;
        _cleanup_free_ char *p = NULL;
        JournalSpace sp;
        struct stat st;

        space_free = INT64_MAX / 2;
        j = open_space(JOURNAL_RESERVE_SIZE);
        p = pathf("plans/reserve");
        ck_assert_int_eq(stat(p, &st), 0);
        ck_assert_int_eq(st.st_size, (off_t)JOURNAL_RESERVE_SIZE);
        ck_assert_int_ge((int64_t)st.st_blocks * 512, (int64_t)JOURNAL_RESERVE_SIZE);
        ck_assert_int_eq(st.st_mode & 0777, 0600);
        ck_assert_int_eq(journal_space(j, &sp), 0);
        ck_assert(sp.reserve_whole);
        ck_assert_uint_eq(sp.reserve_used, 0);

        /* A journal without one leaves no file. */
        j = journal_free(j);
        ck_assert_int_eq(unlink(p), 0);
        j = open_space(0);
        ck_assert_int_eq(reserve_len(), -1);
}
END_TEST

/* A disk that is full at open: the journal opens all the same, with the
 * reserve short, and fills it when room comes. */
START_TEST(test_full_at_open)
{
        _cleanup_(journal_freep) Journal *j = NULL;
        JournalSpace sp;

        space_free = 64 << 10; /* the directories, and a little */
        j = open_space(JOURNAL_RESERVE_SIZE);
        ck_assert_int_eq(journal_space(j, &sp), 0);
        ck_assert(!sp.reserve_whole);
        space_free = INT64_MAX / 2;
        ck_assert_int_eq(journal_space(j, &sp), 0);
        ck_assert(sp.reserve_whole);
        ck_assert_int_eq(reserve_len(), (off_t)JOURNAL_RESERVE_SIZE);
}
END_TEST

/* The disk fills up: plans are refused, answers take the reserve a piece
 * at a time, until it is gone; when room comes back the reserve is taken
 * back first, then plans are stored again. */
START_TEST(test_full_disk)
{
        _cleanup_(journal_freep) Journal *j = NULL;
        char ts[JOURNAL_TS_MAX], first[JOURNAL_TS_MAX] = "", run_ts[JOURNAL_TS_MAX];
        _cleanup_free_ char *text = NULL;
        JournalSpace sp;
        unsigned n = 0;
        size_t len;
        int r;

        space_free = INT64_MAX / 2;
        j = open_space(JOURNAL_RESERVE_SIZE);
        /* A plan stored and begun before the disk filled. */
        ck_assert_int_eq(journal_put_plan(j, "{}", 2, NULL, 0, "run", NULL, run_ts), 0);
        ck_assert_int_eq(journal_begin(j, run_ts, NULL), 0);

        space_free = 0;
        ck_assert_int_eq(journal_put_plan(j, "{}", 2, NULL, 0, "p", NULL, ts), -ENOSPC);
        ck_assert_int_eq(reserve_len(), (off_t)JOURNAL_RESERVE_SIZE); /* plans never take it */
        assert_entries_ts(j, "<ts>:running", run_ts);

        /* The plan that ran still gets its result stored. */
        ck_assert_int_eq(journal_put_result(j, run_ts, ANSWER, strlen(ANSWER), NULL), 0);
        ck_assert_int_lt(reserve_len(), (off_t)JOURNAL_RESERVE_SIZE);
        /* What that piece left is for answers, not for plans. */
        ck_assert_int_gt(space_free, 2 * BLOCK);
        ck_assert_int_eq(journal_put_plan(j, "{}", 2, NULL, 0, "p", NULL, ts), -ENOSPC);

        /* Answers until the reserve is gone: at least one per piece. */
        while ((r = journal_put_answer(j, ANSWER, strlen(ANSWER), ts)) == 0) {
                if (!first[0])
                        memcpy(first, ts, sizeof(first));
                n++;
                ck_assert_uint_lt(n, 1000);
        }
        ck_assert_int_eq(r, -ENOSPC);
        ck_assert_uint_ge(n, JOURNAL_RESERVE_SIZE / (32 << 10));
        ck_assert_int_eq(reserve_len(), 0);
        ck_assert_int_eq(journal_space(j, &sp), 0);
        ck_assert(!sp.reserve_whole);
        ck_assert_uint_ge(sp.reserve_used, JOURNAL_RESERVE_SIZE / (32 << 10));
        /* The refused answer left nothing behind. */
        {
                _cleanup_free_ JournalEntry *v = NULL;
                size_t nv;

                ck_assert_int_eq(journal_list(j, &v, &nv), 0);
                ck_assert_uint_eq(nv, n + 1);
                for (size_t i = 0; i < nv; i++)
                        ck_assert_int_eq(v[i].state, JOURNAL_RESULT);
        }
        /* An answer is an entry with its result only, sent as any other. */
        ck_assert_int_eq(journal_load_result(j, first, &text, &len), 0);
        ck_assert_str_eq(text, ANSWER);
        ck_assert(!exists_ts("plans/<ts>/plan.json", first));
        free(text), text = NULL;
        /* Its removal records it even now, with no block free: the
         * entry's own room is used for the record once the reserve is
         * spent. */
        space_free = 0;
        ck_assert_int_eq(journal_remove(j, first, true), 0);
        {
                json_t *id = json_string("big");

                ck_assert_int_eq(journal_done_lookup(j, id, &text), 1);
                ck_assert_str_eq(text, ANSWER);
                json_decref(id);
        }

        /* Room again: the reserve is taken back before a plan is stored. */
        space_free = 300 << 10;
        ck_assert_int_eq(journal_put_plan(j, "{}", 2, NULL, 0, "p", NULL, ts), 0);
        ck_assert_int_eq(reserve_len(), (off_t)JOURNAL_RESERVE_SIZE);
        ck_assert_int_eq(journal_space(j, &sp), 0);
        ck_assert(sp.reserve_whole);

        /* Not room for both: the reserve wins, the plan is refused. */
        space_free = 0;
        ck_assert_int_eq(journal_put_answer(j, ANSWER, strlen(ANSWER), ts), 0);
        ck_assert_int_lt(reserve_len(), (off_t)JOURNAL_RESERVE_SIZE);
        space_free = (32 << 10) + BLOCK;
        ck_assert_int_eq(journal_put_plan(j, "{}", 2, NULL, 0, "q", NULL, ts), -ENOSPC);
        ck_assert_int_eq(reserve_len(), (off_t)JOURNAL_RESERVE_SIZE);
}
END_TEST

/* A full disk with the reserve spent, when the stamp must be made durable
 * at a removal: plan.json holds the stamp's only durable copy, so the
 * entry stays whole and the removal fails, to be tried again with room;
 * only a done record may use the entry's own room. */
START_TEST(test_full_disk_keeps_stamp)
{
        _cleanup_(journal_freep) Journal *j = NULL;
        char ts[JOURNAL_TS_MAX];

        space_free = INT64_MAX / 2;
        j = open_space(0);
        put_stamped(j, ts, 777);
        ck_assert_int_eq(journal_put_result(j, ts, ANSWER, strlen(ANSWER), NULL), 0);

        space_free = 0;
        ck_assert_int_eq(journal_remove(j, ts, true), -ENOSPC);
        ck_assert(exists_ts("plans/<ts>/plan.json", ts));
        ck_assert(exists_ts("plans/<ts>/result.json", ts));

        space_free = INT64_MAX / 2;
        ck_assert_int_eq(journal_remove(j, ts, true), 0);
        ck_assert(!exists_ts("plans/<ts>", ts));
}
END_TEST

/* A disk that is not full but refuses with another error: the reserve is
 * not touched and the error comes back. */
static ssize_t eio_write(int fd, const void *buf, size_t n)
{
        errno = EIO;
        return -1;
}

START_TEST(test_other_errors)
{
        JournalOps ops = space_ops;
        JournalOptions o = JOURNAL_OPTIONS_DEFAULT;
        _cleanup_(journal_freep) Journal *j = NULL;
        char ts[JOURNAL_TS_MAX];

        space_free = INT64_MAX / 2;
        ops.write = eio_write;
        o.ops = &ops;
        j = open_with(&o);
        ck_assert_int_eq(journal_put_answer(j, ANSWER, strlen(ANSWER), ts), -EIO);
        ck_assert_int_eq(reserve_len(), (off_t)JOURNAL_RESERVE_SIZE);
        assert_entries(j, "");
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_test(tc, test_reserve_made);
        tcase_add_test(tc, test_full_at_open);
        tcase_add_test(tc, test_full_disk);
        tcase_add_test(tc, test_full_disk_keeps_stamp);
        tcase_add_test(tc, test_other_errors);
}

int main(void)
{
        return journal_test_main("journal-space", add_tests);
}
