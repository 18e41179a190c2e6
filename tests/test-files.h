/* Helpers shared by test-files.c and test-files-download.c: a fresh storage
 * directory per test, paths, file contents and small plans. */
#pragma once

#include <check.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files/files-internal.h"
#include "util/fileio.h"
#include "util/macro.h"

static char *storage; /* a fresh directory per test */

static inline void setup(void)
{
        char tmpl[] = "/tmp/test-files-XXXXXX";

        ck_assert_ptr_nonnull(mkdtemp(tmpl));
        storage = strdup(tmpl);
}

static inline void teardown(void)
{
        ck_assert_int_eq(files_rm_tree_at(AT_FDCWD, storage), 0);
        free(storage);
        storage = NULL;
}

static inline char *pathf(const char *fmt, ...) _printf_(1, 2);
static inline char *pathf(const char *fmt, ...)
{
        va_list ap;
        char *s;

        va_start(ap, fmt);
        ck_assert_int_ge(vasprintf(&s, fmt, ap), 0);
        va_end(ap);
        return s;
}

/* The whole content of a file (following symlinks), NUL-terminated. */
static inline char *slurp(const char *path, size_t *ret_len)
{
        char *data = NULL;
        size_t len = 0;

        ck_assert_int_eq(file_read_all(path, 1 << 20, &data, &len), 0);
        if (ret_len)
                *ret_len = len;
        return data;
}

static inline void assert_link(const char *path, const char *want_target)
{
        char buf[PATH_MAX];
        struct stat st;
        ssize_t n;

        ck_assert_int_eq(lstat(path, &st), 0);
        ck_assert(S_ISLNK(st.st_mode));
        n = readlink(path, buf, sizeof(buf) - 1);
        ck_assert_int_gt(n, 0);
        buf[n] = 0;
        ck_assert_str_eq(buf, want_target);
}

static inline mode_t mode_of(const char *path)
{
        struct stat st;

        ck_assert_int_eq(lstat(path, &st), 0);
        return st.st_mode;
}

static inline bool exists(const char *path)
{
        struct stat st;
        return lstat(path, &st) == 0;
}

static inline json_t *load_plan(const char *text)
{
        json_error_t e;
        json_t *plan = json_loads(text, 0, &e);

        ck_assert_msg(plan != NULL, "bad test plan: %s", e.text);
        return plan;
}

/* A plan of one Application script "s" whose entry point is file "ep"
 * (a one-line script) and whose Files are files_json; files_json and
 * more_files are JSON text. */
static inline char *one_script_text(const char *files_json, const char *more_files)
{
        return pathf("{\"FormatVersion\": \"2.1.0\", \"ID\": \"p1\", \"Body\": \"return\","
                     " \"Scripts\": {\"s\": {\"Type\": \"Application\", \"EntryPoint\": \"ep\","
                     " \"Files\": %s, \"Options\": {}}},"
                     " \"Files\": {\"ep\": {\"Name\": \"run.sh\", \"BodyType\": \"Text\","
                     " \"Body\": \"true\"}%s%s}}",
                     files_json, *more_files ? ", " : "", more_files);
}

static inline json_t *one_script_plan(const char *files_json, const char *more_files)
{
        _cleanup_free_ char *text = one_script_text(files_json, more_files);

        return load_plan(text);
}
