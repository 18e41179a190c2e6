/* Program-level logging: one entry per event, to stderr, a log file or the
 * systemd journal.
 *
 * Only program-level code (main, the runner, the daemon) logs; library
 * modules return errors as data. Text lines look like oslo.log's default so
 * that operators' greps keep working:
 *   2026-11-21 07:25:25.123 4242 INFO muranoagent [plan 5b1f...] message
 * JSON lines (LOG_FORMAT_JSON) are one object each, with the fields
 * docs/daemon.md "Logs" lists. When stderr is the journal (systemd's
 * $JOURNAL_STREAM names it) and the format is text, entries go to journald
 * over its native protocol (log-journal.c) with PLAN_ID and the other
 * fields as journal fields.
 *
 * Every entry about a plan names the plan (plan_id); only entries about the
 * agent itself (start, stop, the broker connection, the configuration, the
 * storage as a whole) pass NULL. Never pass a password, a key or a file
 * body to these functions. They may be called from any thread once
 * log_open*() has returned. */
#pragma once

#include <stdbool.h>

#include "util/macro.h"

typedef enum LogLevel {
        LOG_LEVEL_DEBUG,
        LOG_LEVEL_INFO,
        LOG_LEVEL_WARNING,
        LOG_LEVEL_ERROR,
} LogLevel;

typedef enum LogFormat {
        LOG_FORMAT_TEXT, /* oslo.log's line; the journal's fields when stderr is the journal */
        LOG_FORMAT_JSON, /* one JSON object per line, wherever the lines go */
} LogFormat;

typedef struct LogOptions {
        const char *path; /* append to this file (created 0640); NULL: stderr */
        bool debug;       /* LOG_LEVEL_DEBUG entries are written */
        LogFormat format;
        /* journald's native socket; NULL: /run/systemd/journal/socket.
         * Only tests name another. */
        const char *journal_socket;
} LogOptions;

/* Start logging as o says. Returns 0 or -errno (the file could not be
 * opened: the previous target stays in use, with the new level and format). */
int log_open_with(const LogOptions *o);
/* log_open_with() in text format. */
int log_open(const char *path, bool debug);
void log_close(void);
bool log_debug_enabled(void);
/* Whether entries go to journald's socket (as opposed to lines). */
bool log_to_journal(void);

/* plan_id is NULL (or "") for entries that are not about a plan (see above).
 * file, line and func say where the entry comes from (the journal's
 * CODE_FILE, CODE_LINE and CODE_FUNC). */
void log_write_at(const char *file, int line, const char *func, LogLevel level, const char *plan_id,
                  const char *fmt, ...) _printf_(6, 7);

#define log_write(level, plan, ...)                                                                \
        log_write_at(__FILE__, __LINE__, __func__, level, plan, __VA_ARGS__)
#define log_debug(plan, ...)   log_write(LOG_LEVEL_DEBUG, plan, __VA_ARGS__)
#define log_info(plan, ...)    log_write(LOG_LEVEL_INFO, plan, __VA_ARGS__)
#define log_warning(plan, ...) log_write(LOG_LEVEL_WARNING, plan, __VA_ARGS__)
#define log_error(plan, ...)   log_write(LOG_LEVEL_ERROR, plan, __VA_ARGS__)
