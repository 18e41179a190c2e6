/* The control socket's protocol: addresses, request parsing, reply lines
 * (see control.h; the client is control-client.c). */
#include "control/control.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "util/macro.h"

int control_dir_path(const char *storage, char **ret)
{
        if (asprintf(ret, "%s/%s", storage, CONTROL_DIR_NAME) < 0)
                return -ENOMEM;
        return 0;
}

int control_address(const char *dir, int dir_fd, struct sockaddr_un *ret)
{
        int n;

        *ret = (struct sockaddr_un){.sun_family = AF_UNIX};
        n = snprintf(ret->sun_path, sizeof(ret->sun_path), "%s/%s", dir, CONTROL_SOCKET_NAME);
        if (n >= 0 && (size_t)n < sizeof(ret->sun_path))
                return 0;
        if (dir_fd < 0)
                return -ENAMETOOLONG;
        /* A storage path too long for sun_path (108 bytes) is reached
         * through the directory's descriptor instead. */
        snprintf(ret->sun_path, sizeof(ret->sun_path), "/proc/self/fd/%d/%s", dir_fd,
                 CONTROL_SOCKET_NAME);
        return 0;
}

int control_request_parse(const char *line, size_t len, json_t **ret, const char **ret_command,
                          const char **ret_error)
{
        json_t *req, *cmd;

        req = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
        if (!req || !json_is_object(req)) {
                json_decref(req);
                *ret_error = "the request is not a JSON object";
                return -EINVAL;
        }
        cmd = json_object_get(req, "command");
        if (!json_is_string(cmd) || json_string_length(cmd) == 0) {
                json_decref(req);
                *ret_error = "the request has no \"command\" string";
                return -EINVAL;
        }
        *ret = req;
        *ret_command = json_string_value(cmd);
        return 0;
}

/* reply as one line: compact, in insertion order, with a newline. */
static int reply_text(json_t *reply, char **ret, size_t *ret_len)
{
        char *text = json_dumps(reply, JSON_COMPACT);
        size_t n;
        char *line;

        if (!text)
                return -ENOMEM;
        n = strlen(text);
        line = realloc(text, n + 2);
        if (!line) {
                free(text);
                return -ENOMEM;
        }
        line[n] = '\n';
        line[n + 1] = '\0';
        *ret = line;
        *ret_len = n + 1;
        return 0;
}

int control_reply_ok(const json_t *body, char **ret, size_t *ret_len)
{
        _cleanup_json_ json_t *reply = json_object();
        const char *key;
        json_t *value;

        if (!reply || json_object_set_new(reply, "ok", json_true()) < 0 ||
            json_object_set_new(reply, "protocol", json_integer(CONTROL_PROTOCOL)) < 0)
                return -ENOMEM;
        json_object_foreach ((json_t *)body, key, value) {
                if (json_object_set(reply, key, value) < 0)
                        return -ENOMEM;
        }
        return reply_text(reply, ret, ret_len);
}

int control_reply_error(const char *message, char **ret, size_t *ret_len)
{
        _cleanup_json_ json_t *reply =
                json_pack("{sbsiss}", "ok", 0, "protocol", CONTROL_PROTOCOL, "error", message);

        if (!reply)
                return -ENOMEM;
        return reply_text(reply, ret, ret_len);
}
