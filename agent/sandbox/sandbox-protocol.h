/* What muranoagent-sandbox (sandbox-helper.c) promises the agent, shared by the
 * helper and by the code that reads its outcome: its exit codes and the
 * status line it writes when it cannot set the sandbox up. Exit codes follow
 * env(1) and chroot(1), as minijail's do. docs/sandbox.md documents them. */
#pragma once

/* The helper could not apply a step it was asked for (or its command line
 * was wrong). A status line says which step and why. */
#define SANDBOX_EXIT_SETUP 125

/* PROGRAM was found but could not be executed (EACCES, ENOEXEC, ...). */
#define SANDBOX_EXIT_CANNOT_EXEC 126

/* PROGRAM was not found (ENOENT). */
#define SANDBOX_EXIT_NOT_FOUND 127

/* Every status line starts with this and ends with '\n':
 * "muranoagent-sandbox: <step>: <reason>\n". A script may itself exit with
 * 125, 126 or 127, so only a status line proves that the sandbox failed. */
#define SANDBOX_STATUS_PREFIX "muranoagent-sandbox: "

/* The OOM score adjustment every script starts with when the sandbox asks
 * for one (--oom-score-adj, and the in-process path): the highest there is,
 * so that the kernel's OOM killer picks a script, or what it started, before
 * the agent, which the service runs at -900 (OOMScoreAdjust=), and before
 * any service of the machine. Raising a score needs no privilege, and
 * children inherit it. */
#define SANDBOX_OOM_SCORE_ADJ 1000

/* The longest status line the helper writes, newline included. */
#define SANDBOX_STATUS_MAX 512
