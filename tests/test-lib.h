/* What the Check programs share: check_run(), which every main() ends in
 * (run a suite, turn its failures into the exit status); the one-tcase
 * suite with a fixture and a time limit that most of them build; rm_rf() for
 * their temporary directories; a pseudo-random generator; what smaps says
 * of one mapping, and files to map. */
#pragma once

#include <check.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* A decimal literal of 4301 digits, one past CPython 3.11's limit on
 * int/str conversion (sys.int_info.default_max_str_digits). */
#define DIGITS_100                                                                                 \
        "1111111111111111111111111111111111111111111111111111111111111111111111111111111111111111" \
        "111"                                                                                      \
        "111111111"
#define DIGITS_1000                                                                                \
        DIGITS_100 DIGITS_100 DIGITS_100 DIGITS_100 DIGITS_100 DIGITS_100 DIGITS_100 DIGITS_100    \
                DIGITS_100 DIGITS_100
#define DIGITS_4301                                                                                \
        DIGITS_1000 DIGITS_1000 DIGITS_1000 DIGITS_1000 DIGITS_100 DIGITS_100 DIGITS_100 "1"

static inline int check_run(Suite *s)
{
        SRunner *sr = srunner_create(s);
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* Suite name with one tcase, tc_name, whose tests each get fixture_setup() and
 * fixture_teardown() around them (checked fixtures: run in the test's process;
 * either may be NULL) and timeout seconds; add_tests adds them. */
static inline int check_main_one(const char *name, const char *tc_name, void (*fixture_setup)(void),
                                 void (*fixture_teardown)(void), double timeout,
                                 void (*add_tests)(TCase *tc))
{
        Suite *s = suite_create(name);
        TCase *tc = tcase_create(tc_name);

        if (fixture_setup || fixture_teardown)
                tcase_add_checked_fixture(tc, fixture_setup, fixture_teardown);
        tcase_set_timeout(tc, timeout);
        add_tests(tc);
        suite_add_tcase(s, tc);
        return check_run(s);
}

static inline int rm_rf_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st, (void)flag, (void)ftw;
        return remove(path);
}

/* The CRC-32 (IEEE 802.3, zlib's crc32()) of p, continuing from crc (0 to
 * start): the frame of call log records before seals, which anyone can
 * compute (test-journal-calls.c, test-runner.c plant them). */
static inline unsigned test_crc32(unsigned crc, const char *p, size_t len)
{
        crc = ~crc;
        while (len--) {
                crc ^= (unsigned char)*p++;
                for (int k = 0; k < 8; k++)
                        crc = crc & 1 ? 0xedb88320u ^ (crc >> 1) : crc >> 1;
        }
        return ~crc;
}

/* rm -rf path, not following symbolic links: 0, or -1 with errno set where
 * an entry could not be removed (a missing path is such a failure). */
static inline int rm_rf(const char *path)
{
        return nftw(path, rm_rf_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* xorshift64*, from a fixed seed in *state, so that a failure can be
 * replayed. */
static inline uint64_t test_rng(uint64_t *state)
{
        *state ^= *state >> 12;
        *state ^= *state << 25;
        *state ^= *state >> 27;
        return *state * 0x2545f4914f6cdd1du;
}

/* The Rss and Anonymous KiB of this process's mapping that starts at p,
 * read from /proc/self/smaps (apart from util/filepages, whose work it
 * checks). */
static inline void smaps_kib(const void *p, uint64_t *ret_rss, uint64_t *ret_anon)
{
        FILE *f = fopen("/proc/self/smaps", "r");
        char line[512];
        bool in = false, found = false;

        ck_assert_ptr_nonnull(f);
        while (fgets(line, sizeof(line), f)) {
                unsigned long from, to, v;

                if (sscanf(line, "%lx-%lx ", &from, &to) == 2) {
                        in = (uintptr_t)p == from;
                        found |= in;
                } else if (in && sscanf(line, "Rss: %lu kB", &v) == 1)
                        *ret_rss = v;
                else if (in && sscanf(line, "Anonymous: %lu kB", &v) == 1)
                        *ret_anon = v;
        }
        fclose(f);
        ck_assert_msg(found, "no mapping starts at %p", p);
}

static inline uint64_t smaps_rss_kib(const void *p)
{
        uint64_t rss = UINT64_MAX, anon = UINT64_MAX;

        smaps_kib(p, &rss, &anon);
        return rss;
}

/* A descriptor of a new, already unlinked file under /tmp holding the len
 * bytes of data. */
static inline int test_file_of(const void *data, size_t len)
{
        char path[] = "/tmp/test-mapped.XXXXXX";
        int fd = mkstemp(path);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(unlink(path), 0);
        ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
        return fd;
}
