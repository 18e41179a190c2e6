/* util/filepages: which mappings of an smaps text may be given back
 * (fixture texts, the tricky ones included), and giving them back in this
 * very process: its code still runs, its file pages leave its RSS, and
 * what it wrote (copy-on-write pages of a read-only mapping, a writable
 * mapping) stays. */
#include <check.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "test-lib.h"
#include "util/filepages.h"
#include "util/macro.h"
#include "util/strbuf.h"

/* The fields of an smaps entry after its first line, with Rss, Anonymous
 * and Swap as given. */
#define FIELDS(rss, anon, swap)                                                                    \
        "Size:                 " rss " kB\n"                                                       \
        "KernelPageSize:        4 kB\n"                                                            \
        "MMUPageSize:           4 kB\n"                                                            \
        "Rss:                  " rss " kB\n"                                                       \
        "Pss:                  " rss " kB\n"                                                       \
        "Pss_Dirty:             0 kB\n"                                                            \
        "Shared_Clean:          0 kB\n"                                                            \
        "Shared_Dirty:          0 kB\n"                                                            \
        "Private_Clean:        " rss " kB\n"                                                       \
        "Private_Dirty:         0 kB\n"                                                            \
        "Referenced:           " rss " kB\n"                                                       \
        "Anonymous:            " anon " kB\n"                                                      \
        "KSM:                   0 kB\n"                                                            \
        "LazyFree:              0 kB\n"                                                            \
        "AnonHugePages:         0 kB\n"                                                            \
        "ShmemPmdMapped:        0 kB\n"                                                            \
        "FilePmdMapped:         0 kB\n"                                                            \
        "Shared_Hugetlb:        0 kB\n"                                                            \
        "Private_Hugetlb:       0 kB\n"                                                            \
        "Swap:                 " swap " kB\n"                                                      \
        "SwapPss:               0 kB\n"                                                            \
        "Locked:                0 kB\n"                                                            \
        "THPeligible:           0\n"                                                               \
        "VmFlags: rd ex mr mw me sd \n"

static const struct {
        const char *name, *text;
        const char *given; /* "from-to/rss;" for each mapping given, in order */
} parse_cases[] = {
        {"text and rodata of a library",
         "7f0a00000000-7f0a00028000 r--p 00000000 08:01 1234 "
         "/usr/lib/x86_64-linux-gnu/libc.so.6\n" FIELDS(
                 "160", "0", "0") "7f0a00028000-7f0a0019d000 r-xp 00028000 08:01 1234 "
                                  "/usr/lib/x86_64-linux-gnu/libc.so.6\n" FIELDS("1104", "0", "0"),
         "7f0a00000000-7f0a00028000/160;7f0a00028000-7f0a0019d000/1104;"},
        /* A RELRO page relocated by the dynamic loader: read-only now, but
         * copy-on-write: its pages are not the file's. */
        {"RELRO with anonymous pages",
         "7f0a001f1000-7f0a001f5000 r--p 001f0000 08:01 1234 /usr/lib/libc.so.6\n" FIELDS(
                 "16", "16", "0"),
         ""},
        {"some anonymous",
         "55d0a0000000-55d0a0004000 r--p 00000000 08:01 7 /a\n" FIELDS("16", "4", "0"), ""},
        /* A copy-on-write page swapped out is no longer "Anonymous". */
        {"swapped", "55d0a0000000-55d0a0004000 r--p 00000000 08:01 7 /a\n" FIELDS("12", "0", "4"),
         ""},
        {"writable", "55d0a0000000-55d0a0004000 rw-p 00000000 08:01 7 /a\n" FIELDS("16", "0", "0"),
         ""},
        {"shared", "55d0a0000000-55d0a0004000 r--s 00000000 08:01 7 /a\n" FIELDS("16", "0", "0"),
         ""},
        {"nothing resident",
         "55d0a0000000-55d0a0004000 r-xp 00000000 08:01 7 /a\n" FIELDS("0", "0", "0"), ""},
        {"deleted file",
         "7f0a00000000-7f0a00002000 r-xp 00000000 08:01 99 /tmp/x.so (deleted)\n" FIELDS("8", "0",
                                                                                         "0"),
         "7f0a00000000-7f0a00002000/8;"},
        {"a name with blanks",
         "7f0a00000000-7f0a00002000 r-xp 00000000 08:01 99 /opt/my lib/lib  x.so\n" FIELDS("8", "0",
                                                                                           "0"),
         "7f0a00000000-7f0a00002000/8;"},
        {"vdso and vvar, inode 0",
         "7ffd1c3f0000-7ffd1c3f4000 r--p 00000000 00:00 0                          [vvar]\n" FIELDS(
                 "0", "0",
                 "0") "7ffd1c3f4000-7ffd1c3f6000 r-xp 00000000 00:00 0 [vdso]\n" FIELDS("8", "0",
                                                                                        "0"),
         ""},
        {"vsyscall, the highest address",
         "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n" FIELDS("4", "0",
                                                                                       "0"),
         ""},
        {"an anonymous mapping with a name",
         "7f0a00000000-7f0a00002000 r--p 00000000 00:00 0 [anon:glibc]\n" FIELDS("8", "0", "0"),
         ""},
        {"heap and stack",
         "55d0a1000000-55d0a1021000 rw-p 00000000 00:00 0 [heap]\n" FIELDS(
                 "132", "132",
                 "0") "7ffd1c300000-7ffd1c321000 rw-p 00000000 00:00 0 [stack]\n" FIELDS("16", "16",
                                                                                         "0"),
         ""},
        {"an inode but no path",
         "7f0a00000000-7f0a00002000 r--p 00000000 08:01 5\n" FIELDS("8", "0", "0"), ""},
        {"a memfd",
         "7f0a00000000-7f0a00002000 r--p 00000000 00:01 1025 /memfd:x (deleted)\n" FIELDS("8", "0",
                                                                                          "0"),
         "7f0a00000000-7f0a00002000/8;"},
        {"Anonymous line missing",
         "7f0a00000000-7f0a00002000 r--p 00000000 08:01 5 /a\nRss: 8 kB\nSwap: 0 kB\n", ""},
        {"Swap line missing",
         "7f0a00000000-7f0a00002000 r--p 00000000 08:01 5 /a\nRss: 8 kB\nAnonymous: 0 kB\n", ""},
        {"no newline at the end",
         "7f0a00000000-7f0a00002000 r--p 00000000 08:01 5 /a\nRss: 8 kB\nAnonymous: 0 kB\nSwap: 0 "
         "kB",
         "7f0a00000000-7f0a00002000/8;"},
        {"Anonymous too big to read",
         "7f0a00000000-7f0a00002000 r--p 00000000 08:01 5 /a\nRss: 8 kB\nAnonymous: "
         "99999999999999999999999 kB\nSwap: 0 kB\n",
         ""},
        {"Anonymous not in kB",
         "7f0a00000000-7f0a00002000 r--p 00000000 08:01 5 /a\nRss: 8 kB\nAnonymous: 0 "
         "MB\nSwap: 0 kB\n",
         ""},
        {"an address too big",
         "17f0a000000000000-17f0a000000002000 r--p 00000000 08:01 5 /a\n" FIELDS("8", "0", "0"),
         ""},
        {"an end below the start",
         "7f0a00002000-7f0a00000000 r--p 00000000 08:01 5 /a\n" FIELDS("8", "0", "0"), ""},
        {"junk after the inode",
         "7f0a00000000-7f0a00002000 r--p 00000000 08:01 5x /a\n" FIELDS("8", "0", "0"), ""},
        /* A field that belongs to the mapping before is not read for the
         * next: each mapping starts with nothing known. */
        {"fields do not carry over",
         "7f0a00000000-7f0a00002000 r--p 00000000 08:01 5 /a\n" FIELDS(
                 "8", "0", "0") "7f0a00002000-7f0a00004000 r--p 00000000 08:01 5 /a\nRss: 8 kB\n",
         "7f0a00000000-7f0a00002000/8;"},
        {"empty", "", ""},
};

static void collect(uintptr_t from, uintptr_t to, uint64_t rss_kib, void *userdata)
{
        ck_assert_int_eq(strbuf_printf(userdata, "%lx-%lx/%llu;", (unsigned long)from,
                                       (unsigned long)to, (unsigned long long)rss_kib),
                         0);
}

START_TEST(test_parse)
{
        _cleanup_strbuf_ StrBuf got = STRBUF_INIT;
        const char *text = parse_cases[_i].text;
        size_t n, given = 0;

        ck_assert_int_eq(strbuf_puts(&got, ""), 0);
        n = filepages_parse(text, strlen(text), collect, &got);
        ck_assert_msg(streq(got.data, parse_cases[_i].given), "%s: %s", parse_cases[_i].name,
                      got.data);
        for (const char *q = got.data; *q; q++)
                given += *q == ';';
        ck_assert_uint_eq(n, given);
}
END_TEST

/* RssFile of /proc/self/status: the process's resident file pages. */
static uint64_t rss_file_kib(void)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/self/status", "r");
        char line[256];
        unsigned long v;

        ck_assert_ptr_nonnull(f);
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "RssFile: %lu kB", &v) == 1)
                        return v;
        ck_abort_msg("no RssFile in /proc/self/status");
        return 0;
}

enum { PAGES = 64 };

static unsigned sum_pages(const unsigned char *m, size_t page)
{
        unsigned sum = 0;

        for (size_t i = 0; i < PAGES; i++)
                sum += m[i * page];
        return sum;
}

/* Called through a pointer, so that it is code of the program that runs
 * after the program's pages were given back. */
static int __attribute__((noinline)) twice(int x)
{
        return 2 * x;
}

static int (*volatile twice_p)(int) = twice;

START_TEST(test_release)
{
        size_t page = (size_t)sysconf(_SC_PAGESIZE), len = PAGES * page;
        _cleanup_free_ unsigned char *data = malloc(len);
        unsigned char *ro, *cow, *rw, *shared;
        uint64_t file_before, rss, anon, kib = len / 1024;
        FilePagesStats st;
        char buf[32];
        int fd;

        ck_assert_ptr_nonnull(data);
        for (size_t i = 0; i < len; i++)
                data[i] = (unsigned char)(i / page + 1);
        fd = test_file_of(data, len); /* mapped "(deleted)", as it may be */

        ro = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
        cow = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
        rw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
        shared = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
        ck_assert(ro != MAP_FAILED && cow != MAP_FAILED && rw != MAP_FAILED &&
                  shared != MAP_FAILED);
        ck_assert_int_eq(close(fd), 0);
        /* Every page mapped; the copy-on-write one written to, then made
         * read-only, as the dynamic loader does with RELRO. */
        ck_assert_uint_eq(sum_pages(ro, page) + sum_pages(rw, page) + sum_pages(shared, page),
                          3u * PAGES * (PAGES + 1) / 2);
        cow[0] = 0xee;
        ck_assert_uint_eq(sum_pages(cow, page), 0xee + PAGES * (PAGES + 1) / 2 - 1);
        ck_assert_int_eq(mprotect(cow, len, PROT_READ), 0);
        ck_assert_uint_eq(smaps_rss_kib(ro), kib);
        smaps_kib(cow, &rss, &anon);
        ck_assert_uint_eq(rss, kib);
        ck_assert_uint_eq(anon, page / 1024);
        file_before = rss_file_kib();

        ck_assert_int_eq(filepages_release(&st), 0);
        ck_assert_uint_ge(st.mappings, 1);
        ck_assert_uint_ge(st.kib, kib);

        /* The read-only mapping is no longer resident, nor much of the
         * program and its libraries; the rest is as it was. */
        ck_assert_uint_eq(smaps_rss_kib(ro), 0);
        ck_assert_uint_le(rss_file_kib() + kib, file_before);
        smaps_kib(cow, &rss, &anon);
        ck_assert_uint_eq(rss, kib);
        ck_assert_uint_eq(anon, page / 1024);
        ck_assert_uint_eq(smaps_rss_kib(rw), kib);
        ck_assert_uint_eq(smaps_rss_kib(shared), kib);

        /* What was written stays, what was given back reads the same, and
         * the code given back runs. */
        ck_assert_uint_eq(cow[0], 0xee);
        ck_assert_int_eq(memcmp(ro, data, len), 0);
        ck_assert_uint_eq(smaps_rss_kib(ro), kib);
        ck_assert_int_eq(memcmp(cow + 1, data + 1, len - 1), 0);
        ck_assert_int_eq(twice_p(21), 42);
        ck_assert_int_eq(snprintf(buf, sizeof(buf), "%d %s %.1f", 7, "x", 2.5), 7);
        ck_assert_str_eq(buf, "7 x 2.5");
        ck_assert_int_eq(munmap(ro, len) | munmap(cow, len) | munmap(rw, len) | munmap(shared, len),
                         0);
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_loop_test(tc, test_parse, 0, ELEMENTSOF(parse_cases));
        tcase_add_test(tc, test_release);
}

int main(void)
{
        return check_main_one("filepages", "core", NULL, NULL, 30, add_tests);
}
