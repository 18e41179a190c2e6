/* Program-level logging: one line per event, to stderr or a log file.
 *
 * Only program-level code (main, the runner, the transport) logs; library
 * modules return errors as data. Lines look like oslo.log's default so that
 * operators' greps keep working:
 *   2026-11-21 07:25:25.123 4242 INFO muranoagent [plan 5b1f...] message
 * Never pass a password, a key or a file body to these functions. */
#pragma once

#include <stdbool.h>

#include "util/macro.h"

typedef enum LogLevel {
        LOG_LEVEL_DEBUG,
        LOG_LEVEL_INFO,
        LOG_LEVEL_WARNING,
        LOG_LEVEL_ERROR,
} LogLevel;

/* Send lines to `path` (appended, created 0640) or to stderr when NULL.
 * `debug` enables LOG_LEVEL_DEBUG. Returns 0 or -errno (the previous target
 * stays in use on failure). */
int log_open(const char *path, bool debug);
void log_close(void);
bool log_debug_enabled(void);

/* plan_id may be NULL for lines that are not about a plan. */
void log_write(LogLevel level, const char *plan_id, const char *fmt, ...) _printf_(3, 4);

#define log_debug(plan, ...)   log_write(LOG_LEVEL_DEBUG, plan, __VA_ARGS__)
#define log_info(plan, ...)    log_write(LOG_LEVEL_INFO, plan, __VA_ARGS__)
#define log_warning(plan, ...) log_write(LOG_LEVEL_WARNING, plan, __VA_ARGS__)
#define log_error(plan, ...)   log_write(LOG_LEVEL_ERROR, plan, __VA_ARGS__)
