/* control: the local control socket's protocol (floor 1), shared by the
 * daemon that serves it (agent/daemon/daemon-control.c) and the commands
 * that ask it (agent/cmd-status.c). docs/operations.md describes it for
 * people.
 *
 * Where: <storage>/control/muranoagent.sock, in a directory of mode 0700
 * that the agent owns, so the same configuration file that finds the
 * journal finds the socket, and only root (the agent's user) can reach it.
 * The daemon also checks the peer's credentials (SO_PEERCRED).
 *
 * What: one request per connection. The client writes one line, a JSON
 * object {"command": NAME, ...} and a newline; the daemon answers with one
 * line, a JSON object {"ok": true, ...} or {"ok": false, "error": TEXT},
 * and closes the connection. A request is at most CONTROL_REQUEST_MAX
 * bytes; a reply at most CONTROL_REPLY_MAX. */
#pragma once

#include <jansson.h>
#include <stddef.h>
#include <sys/un.h>

/* The protocol's version, in every reply as "protocol". */
#define CONTROL_PROTOCOL 1

#define CONTROL_REQUEST_MAX 4096
#define CONTROL_REPLY_MAX   (1024 * 1024)

#define CONTROL_DIR_NAME    "control"
#define CONTROL_SOCKET_NAME "muranoagent.sock"

/* How long the client waits for the whole reply by default. */
#define CONTROL_TIMEOUT_MS 5000

/* "<storage>/control" into *ret (malloc'ed). Returns 0 or -ENOMEM. */
int control_dir_path(const char *storage, char **ret);

/* The address of the socket in directory dir, for bind() or connect().
 * When "<dir>/muranoagent.sock" is longer than sun_path holds, dir must be
 * opened (O_PATH) and its descriptor passed as dir_fd: the address is then
 * "/proc/self/fd/N/muranoagent.sock". dir_fd -1 means none. Returns 0,
 * or -ENAMETOOLONG when the path is too long and dir_fd is -1. */
int control_address(const char *dir, int dir_fd, struct sockaddr_un *ret);

/* Parse one request line (without its newline). On success *ret is the
 * request object (a new reference) and *ret_command its "command" string
 * (borrowed from *ret). Returns 0, or -EINVAL with *ret_error a sentence
 * for the reply (static text). */
int control_request_parse(const char *line, size_t len, json_t **ret, const char **ret_command,
                          const char **ret_error);

/* The reply line (with its newline, NUL-terminated, malloc'ed) for body, a
 * JSON object of the command's fields (borrowed; may be NULL), with "ok":
 * true and "protocol" first. Returns 0 or -ENOMEM. */
int control_reply_ok(const json_t *body, char **ret, size_t *ret_len);

/* The reply line for a refused or failed request. Returns 0 or -ENOMEM. */
int control_reply_error(const char *message, char **ret, size_t *ret_len);

/* The client's side, blocking: connect to the socket in storage's control
 * directory, send request (a JSON object, borrowed), and read the reply
 * within timeout_ms. Returns 0 with *ret the reply object (new reference;
 * "ok" may be false: the daemon refused), or a negative errno with
 * *ret_error a sentence for people (malloc'ed, may stay NULL on -ENOMEM):
 * -ENOENT or -ECONNREFUSED when no agent listens, -EACCES when the caller
 * may not use the socket, -ETIMEDOUT, -EPROTO for a reply that is not one. */
int control_call(const char *storage, const json_t *request, int timeout_ms, json_t **ret,
                 char **ret_error);
