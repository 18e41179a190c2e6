/* Tests for the small utilities: strbuf, fileio and hexid. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fileio.h"
#include "util/hexid.h"
#include "util/strbuf.h"

START_TEST(test_strbuf)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        char *s = NULL;

        ck_assert_int_eq(strbuf_steal(&b, &s), 0); /* empty buffer gives "" */
        ck_assert_str_eq(s, "");
        free(s);
        ck_assert_int_eq(strbuf_puts(&b, "abc"), 0);
        ck_assert_int_eq(strbuf_printf(&b, "-%d-%s", 42, "x"), 0);
        ck_assert_int_eq(strbuf_putc(&b, '!'), 0);
        ck_assert_str_eq(b.data, "abc-42-x!");
        ck_assert_uint_eq(b.len, 9);
        strbuf_reset(&b);
        ck_assert_str_eq(b.data, "");
        for (int i = 0; i < 10000; i++)
                ck_assert_int_eq(strbuf_putc(&b, 'y'), 0);
        ck_assert_uint_eq(b.len, 10000);
        ck_assert_int_eq(strbuf_steal(&b, &s), 0);
        ck_assert_uint_eq(strlen(s), 10000);
        free(s);
}
END_TEST

START_TEST(test_strbuf_limit)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;

        b.limit = 5;
        ck_assert_int_eq(strbuf_puts(&b, "12345"), 0);
        ck_assert_int_eq(strbuf_putc(&b, '6'), -E2BIG);
        ck_assert_int_eq(strbuf_printf(&b, "%s", "7"), -E2BIG);
        ck_assert_str_eq(b.data, "12345");
}
END_TEST

START_TEST(test_file_read_all)
{
        char path[] = "/tmp/test-util-XXXXXX";
        int fd = mkstemp(path);
        char *text = NULL;
        size_t len = 0;

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, "hello\0world", 11), 11);
        close(fd);
        ck_assert_int_eq(file_read_all(path, 11, &text, &len), 0);
        ck_assert_uint_eq(len, 11);
        ck_assert(memcmp(text, "hello\0world", 12) == 0); /* NUL-terminated too */
        free(text);
        ck_assert_int_eq(file_read_all(path, 10, &text, &len), -EFBIG);
        unlink(path);
        ck_assert_int_eq(file_read_all(path, 10, &text, &len), -ENOENT);
        ck_assert_int_eq(file_read_all("/", 10, &text, &len), -EISDIR);
}
END_TEST

START_TEST(test_file_read_empty)
{
        char *text = NULL;
        size_t len = 1;

        ck_assert_int_eq(file_read_all("/dev/null", 10, &text, &len), 0);
        ck_assert_uint_eq(len, 0);
        ck_assert_str_eq(text, "");
        free(text);
}
END_TEST

START_TEST(test_hexid)
{
        char a[33], b[33];

        ck_assert_int_eq(hexid_new(a), 0);
        ck_assert_int_eq(hexid_new(b), 0);
        ck_assert_uint_eq(strlen(a), 32);
        ck_assert_uint_eq(strspn(a, "0123456789abcdef"), 32);
        ck_assert_int_eq(a[12], '4');               /* version 4 */
        ck_assert_ptr_nonnull(strchr("89ab", a[16])); /* RFC 4122 variant */
        ck_assert_str_ne(a, b);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("util");
        TCase *tc = tcase_create("core");
        SRunner *sr;
        int failed;

        tcase_add_test(tc, test_strbuf);
        tcase_add_test(tc, test_strbuf_limit);
        tcase_add_test(tc, test_file_read_all);
        tcase_add_test(tc, test_file_read_empty);
        tcase_add_test(tc, test_hexid);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
