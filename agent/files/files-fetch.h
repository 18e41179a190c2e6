/* The command line of muranoagent-fetch (files-fetch.c), shared by the
 * program and by the files module that runs it. Kept apart from files.h so
 * that the program needs no other header of the agent's.
 *
 *   muranoagent-fetch [--max-size BYTES] [--connect-timeout SECONDS] URL DEST
 *
 * Downloads URL (http or https only, redirects followed, TLS verified) into
 * the new file DEST. HTTP status 400 and above is a failure, and so is a
 * body above --max-size (default FILES_DEFAULT_MAX_DOWNLOAD, 0 = no limit).
 * On failure DEST is removed and one line goes to stderr: the reason,
 * without the URL. Exit status 0 on success, 1 when the download failed,
 * 2 for a bad command line. */
#pragma once

#include <stdint.h>

#define FILES_DEFAULT_MAX_DOWNLOAD    (UINT64_C(1) << 30)
#define FILES_DEFAULT_CONNECT_TIMEOUT 30
