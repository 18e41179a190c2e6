/* Shared by log.c (the target, the level, the dispatch), log-format.c (text
 * and JSON lines) and log-journal.c (journald's native protocol). */
#pragma once

#include <sys/un.h>
#include <time.h>

#include "log/log.h"
#include "util/strbuf.h"

#define LOG_PROGRAM "muranoagent"

/* One entry, as log_write_at() collected it. */
typedef struct LogEntry {
        struct timespec time; /* CLOCK_REALTIME */
        LogLevel level;
        const char *plan_id; /* NULL: the entry is not about a plan */
        const char *message;
        const char *file;
        int line;
        const char *func;
} LogEntry;

extern const char *const log_level_names[]; /* "DEBUG", "INFO", "WARNING", "ERROR" */

/* Append e to out as one line, newline included: oslo.log's text, or a
 * JSON object. Return 0 or -ENOMEM. */
int log_format_text(const LogEntry *e, StrBuf *out);
int log_format_json(const LogEntry *e, StrBuf *out);

/* journald's native socket, once log_journal_open() found stderr to be the
 * journal. */
typedef struct LogJournal {
        int fd; /* -1: not in use */
        struct sockaddr_un addr;
        socklen_t addr_len;
} LogJournal;

/* Whether $JOURNAL_STREAM names the file that stderr is (systemd sets it
 * for a service whose stderr is connected to the journal). */
bool log_journal_is_stderr(void);
/* A datagram socket for sending to socket_path (NULL: journald's). Returns
 * 0 or -errno. */
int log_journal_open(LogJournal *j, const char *socket_path);
void log_journal_close(LogJournal *j);
/* Send e as one journal entry. Returns 0 or -errno (journald is not
 * there, or the entry is too big for one datagram). */
int log_journal_send(const LogJournal *j, const LogEntry *e);
