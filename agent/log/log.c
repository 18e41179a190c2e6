/* Program-level logging (see log.h). */
#include "log/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/strbuf.h"

static int log_fd = STDERR_FILENO;
static bool log_debug_on;

int log_open(const char *path, bool debug)
{
        log_debug_on = debug;
        if (path) {
                int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0640);
                if (fd < 0)
                        return -errno;
                log_close();
                log_fd = fd;
        }
        return 0;
}

void log_close(void)
{
        if (log_fd != STDERR_FILENO)
                close(log_fd);
        log_fd = STDERR_FILENO;
}

bool log_debug_enabled(void)
{
        return log_debug_on;
}

void log_write(LogLevel level, const char *plan_id, const char *fmt, ...)
{
        static const char *const names[] = {"DEBUG", "INFO", "WARNING", "ERROR"};
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        struct timespec now;
        struct tm tm;
        char stamp[32];
        va_list ap;
        int saved = errno;

        if (level == LOG_LEVEL_DEBUG && !log_debug_on)
                return;
        clock_gettime(CLOCK_REALTIME, &now);
        localtime_r(&now.tv_sec, &tm);
        strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm);
        strbuf_printf(&b, "%s.%03ld %d %s muranoagent ", stamp, now.tv_nsec / 1000000,
                      (int)getpid(), names[level]);
        if (plan_id)
                strbuf_printf(&b, "[plan %s] ", plan_id);
        va_start(ap, fmt);
        errno = saved; /* so that %m in fmt reports the caller's errno */
        strbuf_vprintf(&b, fmt, ap);
        va_end(ap);
        if (strbuf_putc(&b, '\n') < 0)
                return;
        /* One write() per line keeps lines whole when several processes
         * share the file. A failed log write has nowhere to be reported. */
        if (write(log_fd, b.data, b.len) < 0)
                errno = saved;
        errno = saved;
}
