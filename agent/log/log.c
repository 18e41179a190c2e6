/* Program-level logging (see log.h): where entries go, the level, and one
 * entry's way out. The formats are log-format.c; journald is log-journal.c. */
#include "log/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log/log-internal.h"

static int log_fd = STDERR_FILENO;
static bool log_debug_on;
static LogFormat log_format = LOG_FORMAT_TEXT;
static LogJournal log_journal = {.fd = -1};

int log_open_with(const LogOptions *o)
{
        log_debug_on = o->debug;
        log_format = o->format;
        if (o->path) {
                int fd = open(o->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0640);
                if (fd < 0)
                        return -errno;
                log_close();
                log_fd = fd;
                return 0;
        }
        log_close();
        /* JSON lines are asked for by name, so they go to stderr as lines
         * even when that is the journal; text becomes journal fields. Without
         * the socket, lines go to stderr, which is the journal too. */
        if (o->format == LOG_FORMAT_TEXT && log_journal_is_stderr())
                (void)log_journal_open(&log_journal, o->journal_socket);
        return 0;
}

int log_open(const char *path, bool debug)
{
        return log_open_with(&(LogOptions){.path = path, .debug = debug});
}

void log_close(void)
{
        if (log_fd != STDERR_FILENO)
                close(log_fd);
        log_fd = STDERR_FILENO;
        log_journal_close(&log_journal);
}

bool log_debug_enabled(void)
{
        return log_debug_on;
}

bool log_to_journal(void)
{
        return log_journal.fd >= 0;
}

void log_write_at(const char *file, int line, const char *func, LogLevel level, const char *plan_id,
                  const char *fmt, ...)
{
        _cleanup_strbuf_ StrBuf msg = STRBUF_INIT, out = STRBUF_INIT;
        LogEntry e = {.level = level,
                      .plan_id = plan_id && *plan_id ? plan_id : NULL,
                      .file = file,
                      .line = line,
                      .func = func};
        va_list ap;
        int saved = errno, r;

        if (level == LOG_LEVEL_DEBUG && !log_debug_on)
                return;
        clock_gettime(CLOCK_REALTIME, &e.time);
        va_start(ap, fmt);
        errno = saved; /* so that %m in fmt reports the caller's errno */
        r = strbuf_vprintf(&msg, fmt, ap);
        va_end(ap);
        if (r < 0)
                goto out;
        e.message = msg.data ? msg.data : "";
        if (log_journal.fd >= 0 && log_journal_send(&log_journal, &e) == 0)
                goto out;
        r = log_format == LOG_FORMAT_JSON ? log_format_json(&e, &out) : log_format_text(&e, &out);
        /* One write() per line keeps lines whole when several processes
         * share the file. A failed log write has nowhere to be reported. */
        if (r == 0 && write(log_fd, out.data, out.len) < 0)
                errno = saved;
out:
        errno = saved;
}
