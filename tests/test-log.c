/* Tests for log/: oslo.log's text lines, JSON lines (fields, their order,
 * a message with quotes, newlines and bytes that are not UTF-8), the debug
 * level, and journald's native protocol to a datagram socket bound here,
 * with $JOURNAL_STREAM pointed at this process's stderr as systemd sets it,
 * and the fall back to lines when journald is not there. */
#include <check.h>
#include <fcntl.h>
#include <jansson.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "log/log.h"
#include "test-lib.h"
#include "util/fileio.h"
#include "util/macro.h"

static char tmpdir[32];
static char path[64], sock[64];

/* Text with a quote, a backslash, a newline, a tab and two bytes that are
 * not UTF-8, and the same as JSON decodes it (U+FFFD for each bad byte). */
#define NASTY      "say \"hi\" \\ now\nsecond line\t\xff\xfe end \xc3\xa9"
#define NASTY_JSON "say \"hi\" \\ now\nsecond line\t\xef\xbf\xbd\xef\xbf\xbd end \xc3\xa9"

static void setup(void)
{
        /* Again for each test: with CK_FORK=no (valgrind) they share it. */
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-log.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(tmpdir));
        snprintf(path, sizeof(path), "%s/log", tmpdir);
        snprintf(sock, sizeof(sock), "%s/journal", tmpdir);
        unsetenv("JOURNAL_STREAM");
}

static void teardown(void)
{
        log_close();
        rm_rf(tmpdir);
}

static char *read_log(void)
{
        char *text = NULL;

        ck_assert_int_eq(file_read_all(path, 1 << 20, &text, NULL), 0);
        return text;
}

static bool matches(const char *pattern, const char *s)
{
        regex_t re;
        bool ok;

        ck_assert_int_eq(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
        ok = regexec(&re, s, 0, NULL, 0) == 0;
        regfree(&re);
        return ok;
}

START_TEST(test_text_line)
{
        _cleanup_free_ char *text = NULL;
        char want[256];

        ck_assert_int_eq(log_open(path, false), 0);
        log_info("5b1f", "plan %s", "started");
        log_debug("5b1f", "not shown without debug");
        log_warning(NULL, "no plan");
        text = read_log();
        snprintf(want, sizeof(want),
                 "^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3} %d INFO "
                 "muranoagent \\[plan 5b1f\\] plan started\n"
                 "[0-9: .-]{23} %d WARNING muranoagent no plan\n$",
                 (int)getpid(), (int)getpid());
        ck_assert_msg(matches(want, text), "got: %s", text);
}
END_TEST

/* The keys of object o, in order, joined by commas. */
static void keys_of(const json_t *o, char *buf, size_t size)
{
        const char *key;
        json_t *value;

        buf[0] = '\0';
        json_object_foreach ((json_t *)o, key, value) {
                size_t n = strlen(buf);
                snprintf(buf + n, size - n, "%s%s", n ? "," : "", key);
        }
}

START_TEST(test_json_lines)
{
        _cleanup_free_ char *text = NULL;
        char *lines[4] = {NULL}, *save = NULL, keys[128];
        size_t n = 0;
        time_t now = time(NULL);
        json_t *o[3];

        ck_assert_int_eq(log_open_with(&(LogOptions){
                                 .path = path, .debug = true, .format = LOG_FORMAT_JSON}),
                         0);
        log_error("id-\"1\"\xff", "%s", NASTY);
        log_debug(NULL, "debug %d", 7);
        log_info("p", "%s", "");
        text = read_log();
        /* One line per entry, whatever the message holds. */
        for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                ck_assert_uint_lt(n, 4);
                lines[n++] = l;
        }
        ck_assert_uint_eq(n, 3);
        for (size_t i = 0; i < 3; i++) {
                json_error_t err;
                o[i] = json_loads(lines[i], JSON_REJECT_DUPLICATES, &err);
                ck_assert_msg(json_is_object(o[i]), "line %zu: %s: %s", i, err.text, lines[i]);
        }

        keys_of(o[0], keys, sizeof(keys));
        ck_assert_str_eq(keys, "time,level,pid,program,plan_id,message");
        ck_assert_msg(matches("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$",
                              json_string_value(json_object_get(o[0], "time"))),
                      "time %s", json_string_value(json_object_get(o[0], "time")));
        ck_assert_str_eq(json_string_value(json_object_get(o[0], "level")), "ERROR");
        ck_assert_int_eq(json_integer_value(json_object_get(o[0], "pid")), getpid());
        ck_assert_str_eq(json_string_value(json_object_get(o[0], "program")), "muranoagent");
        ck_assert_str_eq(json_string_value(json_object_get(o[0], "plan_id")),
                         "id-\"1\"\xef\xbf\xbd");
        ck_assert_str_eq(json_string_value(json_object_get(o[0], "message")), NASTY_JSON);

        /* UTC: the time is this machine's clock, read as UTC. */
        {
                struct tm tm = {0};
                const char *t = json_string_value(json_object_get(o[0], "time"));
                ck_assert_ptr_nonnull(strptime(t, "%Y-%m-%dT%H:%M:%S", &tm));
                ck_assert_int_le(llabs((long long)(timegm(&tm) - now)), 5);
        }

        keys_of(o[1], keys, sizeof(keys));
        ck_assert_str_eq(keys, "time,level,pid,program,message");
        ck_assert_str_eq(json_string_value(json_object_get(o[1], "level")), "DEBUG");
        ck_assert_str_eq(json_string_value(json_object_get(o[1], "message")), "debug 7");
        ck_assert_str_eq(json_string_value(json_object_get(o[2], "message")), "");
        for (size_t i = 0; i < 3; i++)
                json_decref(o[i]);
}
END_TEST

/* ---- journald ------------------------------------------------------------ */

/* Point $JOURNAL_STREAM at what fd is, as systemd does for stderr. */
static void set_journal_stream(int fd)
{
        struct stat st;
        char v[64];

        ck_assert_int_eq(fstat(fd, &st), 0);
        snprintf(v, sizeof(v), "%llu:%llu", (unsigned long long)st.st_dev,
                 (unsigned long long)st.st_ino);
        ck_assert_int_eq(setenv("JOURNAL_STREAM", v, 1), 0);
}

static int bind_journal(void)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        struct timeval tv = {.tv_sec = 5};
        int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

        ck_assert_int_ge(fd, 0);
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
        ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
        return fd;
}

/* Send stderr to the file at path, so that the test can read what the log
 * writes there. */
static void stderr_to_file(void)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(dup2(fd, STDERR_FILENO), STDERR_FILENO);
        close(fd);
}

/* The value of field name in datagram d[0..len), as journald parses it:
 * "NAME=value\n", or "NAME\n" + 64-bit little-endian length + value + "\n".
 * Returns a new string, or NULL when the field is not there. */
static char *field(const char *d, size_t len, const char *name)
{
        size_t nlen = strlen(name), i = 0;

        while (i < len) {
                const char *eq = memchr(d + i, '=', len - i), *nl = memchr(d + i, '\n', len - i);
                ck_assert_ptr_nonnull(nl);
                if (eq && eq < nl) {
                        bool hit = (size_t)(eq - (d + i)) == nlen && !memcmp(d + i, name, nlen);
                        if (hit)
                                return strndup(eq + 1, (size_t)(nl - eq - 1));
                        i = (size_t)(nl - d) + 1;
                        continue;
                }
                uint64_t n = 0;
                const unsigned char *p = (const unsigned char *)nl + 1;
                ck_assert_uint_le((size_t)(nl - d) + 9, len);
                for (int k = 7; k >= 0; k--)
                        n = n << 8 | p[k];
                ck_assert_uint_le((size_t)(nl - d) + 9 + n + 1, len);
                ck_assert_int_eq(p[8 + n], '\n');
                if ((size_t)(nl - (d + i)) == nlen && !memcmp(d + i, name, nlen))
                        return strndup((const char *)p + 8, n);
                i = (size_t)(nl - d) + 9 + n + 1;
        }
        return NULL;
}

#define ck_field(d, n, name, want)                                                                 \
        do {                                                                                       \
                _cleanup_free_ char *got_ = field(d, n, name);                                     \
                ck_assert_msg(got_, "no %s field", name);                                          \
                ck_assert_str_eq(got_, want);                                                      \
        } while (0)

START_TEST(test_journal_fields)
{
        int fd = bind_journal();
        char d[4096], line[16];
        ssize_t n;
        int here;

        stderr_to_file();
        set_journal_stream(STDERR_FILENO);
        ck_assert_int_eq(log_open_with(&(LogOptions){.journal_socket = sock}), 0);
        ck_assert(log_to_journal());

        here = __LINE__ + 1;
        log_warning("plan-7", "%s", NASTY);
        n = recv(fd, d, sizeof(d), 0);
        ck_assert_int_gt(n, 0);
        ck_field(d, (size_t)n, "MESSAGE", NASTY);
        ck_field(d, (size_t)n, "PRIORITY", "4");
        ck_field(d, (size_t)n, "SYSLOG_IDENTIFIER", "muranoagent");
        ck_field(d, (size_t)n, "PLAN_ID", "plan-7");
        ck_field(d, (size_t)n, "CODE_FILE", "tests/test-log.c");
        snprintf(line, sizeof(line), "%d", here);
        ck_field(d, (size_t)n, "CODE_LINE", line);
        ck_field(d, (size_t)n, "CODE_FUNC", "test_journal_fields_fn");

        log_info(NULL, "started");
        n = recv(fd, d, sizeof(d), 0);
        ck_assert_int_gt(n, 0);
        ck_field(d, (size_t)n, "MESSAGE", "started");
        ck_field(d, (size_t)n, "PRIORITY", "6");
        ck_assert_ptr_null(field(d, (size_t)n, "PLAN_ID"));

        /* Nothing went to stderr. */
        log_close();
        {
                _cleanup_free_ char *text = read_log();
                ck_assert_str_eq(text, "");
        }
        close(fd);
}
END_TEST

/* An entry larger than a datagram may be comes in a sealed memfd, its
 * descriptor in a datagram of its own, as journald's protocol has it. */
START_TEST(test_journal_large_entry)
{
        int fd = bind_journal(), rcvd = -1, seals;
        size_t big = 1 << 20, got_len;
        _cleanup_free_ char *msg = NULL, *d = NULL, *got = NULL;
        union {
                struct cmsghdr h;
                char space[CMSG_SPACE(sizeof(int))];
        } control;
        char byte;
        struct iovec iov = {&byte, 1};
        struct msghdr mh = {.msg_iov = &iov,
                            .msg_iovlen = 1,
                            .msg_control = control.space,
                            .msg_controllen = sizeof(control.space)};
        struct cmsghdr *c;
        struct stat st;
        FILE *f;
        unsigned long long wmem = 0;

        /* Larger than the kernel lets a datagram be on this host. */
        f = fopen("/proc/sys/net/core/wmem_default", "r");
        if (f) {
                if (fscanf(f, "%llu", &wmem) != 1)
                        wmem = 0;
                fclose(f);
        }
        if (wmem + (64 << 10) > big)
                big = (size_t)wmem + (64 << 10);
        msg = malloc(big + 1);
        ck_assert_ptr_nonnull(msg);
        for (size_t i = 0; i < big; i++)
                msg[i] = (char)('a' + i % 26);
        msg[big] = '\0';

        stderr_to_file();
        set_journal_stream(STDERR_FILENO);
        ck_assert_int_eq(log_open_with(&(LogOptions){.journal_socket = sock}), 0);
        ck_assert(log_to_journal());
        log_error("plan-8", "%s", msg);

        ck_assert_int_ge(recvmsg(fd, &mh, MSG_CMSG_CLOEXEC), 0);
        c = CMSG_FIRSTHDR(&mh);
        ck_assert_msg(c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS,
                      "no descriptor came with the datagram");
        memcpy(&rcvd, CMSG_DATA(c), sizeof(int));
        ck_assert_int_ge(rcvd, 0);
        seals = fcntl(rcvd, F_GET_SEALS);
        ck_assert_int_ge(seals, 0);
        ck_assert_int_eq(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE),
                         F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE);
        ck_assert_int_eq(fstat(rcvd, &st), 0);
        d = malloc((size_t)st.st_size);
        ck_assert_ptr_nonnull(d);
        ck_assert_int_eq(pread(rcvd, d, (size_t)st.st_size, 0), st.st_size);
        got = field(d, (size_t)st.st_size, "MESSAGE");
        ck_assert_ptr_nonnull(got);
        got_len = strlen(got);
        ck_assert_uint_eq(got_len, big);
        ck_assert(memcmp(got, msg, big) == 0);
        ck_field(d, (size_t)st.st_size, "PLAN_ID", "plan-8");
        ck_field(d, (size_t)st.st_size, "PRIORITY", "3");
        close(rcvd);

        /* Nothing went to stderr. */
        log_close();
        {
                _cleanup_free_ char *text = read_log();
                ck_assert_str_eq(text, "");
        }
        close(fd);
}
END_TEST

START_TEST(test_journal_missing_falls_back)
{
        _cleanup_free_ char *text = NULL;

        /* Nothing is bound at sock: each entry becomes a line on stderr. */
        stderr_to_file();
        set_journal_stream(STDERR_FILENO);
        ck_assert_int_eq(log_open_with(&(LogOptions){.journal_socket = sock}), 0);
        log_error("p9", "no journald");
        text = read_log();
        ck_assert_msg(matches(" ERROR muranoagent \\[plan p9\\] no journald\n$", text), "got %s",
                      text);
}
END_TEST

START_TEST(test_journal_only_for_its_stream)
{
        int fd = bind_journal();

        /* stderr is another file than the one $JOURNAL_STREAM names (as
         * after "muranoagent ... 2>file" in a shell systemd started). */
        set_journal_stream(fd);
        ck_assert_int_eq(log_open_with(&(LogOptions){.journal_socket = sock}), 0);
        ck_assert(!log_to_journal());
        /* Malformed values are no stream. */
        ck_assert_int_eq(setenv("JOURNAL_STREAM", "12:x", 1), 0);
        ck_assert_int_eq(log_open_with(&(LogOptions){.journal_socket = sock}), 0);
        ck_assert(!log_to_journal());
        /* JSON lines are asked for by name: they stay lines. */
        stderr_to_file();
        set_journal_stream(STDERR_FILENO);
        ck_assert_int_eq(
                log_open_with(&(LogOptions){.journal_socket = sock, .format = LOG_FORMAT_JSON}), 0);
        ck_assert(!log_to_journal());
        ck_assert_int_eq(log_open_with(&(LogOptions){.journal_socket = sock}), 0);
        ck_assert(log_to_journal());
        close(fd);
}
END_TEST

static void add_tests(TCase *tc)
{
        tcase_add_test(tc, test_text_line);
        tcase_add_test(tc, test_json_lines);
        tcase_add_test(tc, test_journal_fields);
        tcase_add_test(tc, test_journal_large_entry);
        tcase_add_test(tc, test_journal_missing_falls_back);
        tcase_add_test(tc, test_journal_only_for_its_stream);
}

int main(void)
{
        return check_main_one("log", "core", setup, teardown, 10, add_tests);
}
