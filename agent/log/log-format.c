/* The two kinds of log line: oslo.log's text and a JSON object (log.h).
 *
 * jansson: every json_*() value made here is a new reference, held by the
 * object it is set into (json_object_set_new), and the object is freed by
 * its cleanup attribute. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log/log-internal.h"
#include "util/utf8.h"

const char *const log_level_names[] = {"DEBUG", "INFO", "WARNING", "ERROR"};

int log_format_text(const LogEntry *e, StrBuf *out)
{
        struct tm tm;
        char stamp[32];
        int r;

        localtime_r(&e->time.tv_sec, &tm);
        strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm);
        r = strbuf_printf(out, "%s.%03ld %d %s " LOG_PROGRAM " ", stamp, e->time.tv_nsec / 1000000,
                          (int)getpid(), log_level_names[e->level]);
        if (r == 0 && e->plan_id)
                r = strbuf_printf(out, "[plan %s] ", e->plan_id);
        if (r == 0)
                r = strbuf_puts(out, e->message);
        if (r == 0)
                r = strbuf_putc(out, '\n');
        return r;
}

/* s as a JSON string. JSON holds Unicode text only, and a message may quote
 * bytes from a plan or a script that are not UTF-8: each byte that does not
 * begin a valid sequence becomes U+FFFD, as Python's errors="replace" does. */
static json_t *text_value(const char *s)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        size_t len = strlen(s);
        uint32_t cp;

        if (utf8_valid(s, len, NULL))
                return json_stringn(s, len);
        for (size_t i = 0; i < len;) {
                int n = utf8_decode(s + i, len - i, &cp);
                int r = n > 0 ? strbuf_append(&b, s + i, (size_t)n)
                              : strbuf_puts(&b, "\xef\xbf\xbd");
                if (r < 0)
                        return NULL;
                i += n > 0 ? (size_t)n : 1;
        }
        return json_stringn(b.data ? b.data : "", b.len);
}

static int dump_append(const char *buffer, size_t size, void *data)
{
        return strbuf_append(data, buffer, size) < 0 ? -1 : 0;
}

int log_format_json(const LogEntry *e, StrBuf *out)
{
        _cleanup_json_ json_t *o = json_object();
        struct tm tm;
        char stamp[40];
        int r;

        if (!o)
                return -ENOMEM;
        gmtime_r(&e->time.tv_sec, &tm);
        strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(stamp + strlen(stamp), sizeof(stamp) - strlen(stamp), ".%03ldZ",
                 e->time.tv_nsec / 1000000);
        r = json_object_set_new(o, "time", json_string(stamp));
        r |= json_object_set_new(o, "level", json_string(log_level_names[e->level]));
        r |= json_object_set_new(o, "pid", json_integer(getpid()));
        r |= json_object_set_new(o, "program", json_string(LOG_PROGRAM));
        if (e->plan_id)
                r |= json_object_set_new(o, "plan_id", text_value(e->plan_id));
        r |= json_object_set_new(o, "message", text_value(e->message));
        if (r != 0 || json_dump_callback(o, dump_append, out, JSON_COMPACT) < 0)
                return -ENOMEM;
        return strbuf_putc(out, '\n');
}
