/* The engine's rules for the files a template names, and reading them from
 * the package's Resources directory (see send-plan-internal.h).
 *
 * Facts from murano/engine/system/agent.py (_is_url, _get_name, _get_body),
 * resource_manager.py (text is read with open(path, 'rU')) and
 * common/helpers/path.py (secure_join). */
#include "send/send-plan.h"
#include "send/send-plan-internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/base64.h"
#include "util/fileio.h"
#include "util/macro.h"
#include "util/utf8.h"

int send_plan_fail(char **ret_error, const char *fmt, ...)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        va_list ap;
        int r;

        if (!ret_error)
                return SEND_PLAN_INVALID;
        va_start(ap, fmt);
        r = strbuf_vprintf(&b, fmt, ap);
        va_end(ap);
        if (r < 0)
                return r;
        free(*ret_error);
        *ret_error = NULL;
        r = strbuf_steal(&b, ret_error);
        return r < 0 ? r : SEND_PLAN_INVALID;
}

static bool is_scheme_char(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '+' || c == '-' || c == '.';
}

int send_plan_is_url(const char *s, bool *ret, char **ret_error)
{
        _cleanup_free_ char *url = NULL;
        const char *p, *netloc;
        size_t i, n, colon, end;
        bool open_bracket = false, close_bracket = false;

        /* urlsplit first strips leading C0 controls and spaces, then drops
         * every tab, CR and LF. */
        while ((unsigned char)*s <= 0x20 && *s)
                s++;
        url = malloc(strlen(s) + 1);
        if (!url)
                return -ENOMEM;
        for (p = s, n = 0; *p; p++)
                if (*p != '\t' && *p != '\r' && *p != '\n')
                        url[n++] = *p;
        url[n] = '\0';

        /* A scheme: at least one character before the first ':', starting
         * with an ASCII letter, all of them scheme characters. */
        *ret = false;
        p = strchr(url, ':');
        if (!p || p == url)
                return 0;
        colon = (size_t)(p - url);
        if (!((url[0] >= 'a' && url[0] <= 'z') || (url[0] >= 'A' && url[0] <= 'Z')))
                return 0;
        for (i = 0; i < colon; i++)
                if (!is_scheme_char(url[i]))
                        return 0;

        /* Then "//" and a network location up to the first '/', '?' or '#'. */
        netloc = url + colon + 1;
        if (strncmp(netloc, "//", 2) != 0)
                return 0;
        netloc += 2;
        end = strcspn(netloc, "/?#");
        for (i = 0; i < end; i++) {
                open_bracket |= netloc[i] == '[';
                close_bracket |= netloc[i] == ']';
        }
        if (open_bracket != close_bracket)
                return send_plan_fail(ret_error, "Invalid IPv6 URL: %s", s);
        *ret = end > 0;
        return 0;
}

bool send_plan_is_base64(const char *s)
{
        size_t n = strlen(s);

        return n >= 1 && s[0] == '<' && s[n - 1] == '>';
}

int send_plan_item_name(const char *key, char **ret, char **ret_error)
{
        size_t n = strlen(key);
        bool url;
        char *name;
        int r;

        r = send_plan_is_url(key, &url, ret_error);
        if (r != 0)
                return r;
        if (url)
                name = strdup(strrchr(key, '/') + 1);
        else if (send_plan_is_base64(key))
                /* Python's name[1:-1]: "<" alone gives "". */
                name = n >= 2 ? strndup(key + 1, n - 2) : strdup("");
        else
                name = strdup(key);
        if (!name)
                return -ENOMEM;
        *ret = name;
        return 0;
}

/* posixpath.normpath for a relative or absolute path. */
static int normpath(const char *path, char **ret)
{
        _cleanup_free_ char *copy = strdup(path);
        _cleanup_free_ const char **parts = NULL;
        _cleanup_strbuf_ StrBuf out = STRBUF_INIT;
        size_t n = 0, slashes = 0;
        char *save = NULL, *tok;
        int r = 0;

        if (!copy)
                return -ENOMEM;
        parts = calloc(strlen(path) / 2 + 2, sizeof(*parts));
        if (!parts)
                return -ENOMEM;
        while (path[slashes] == '/')
                slashes++;
        for (tok = strtok_r(copy, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
                if (streq(tok, "."))
                        continue;
                if (streq(tok, "..") && !(slashes == 0 && n == 0) &&
                    !(n > 0 && streq(parts[n - 1], ".."))) {
                        if (n > 0)
                                n--;
                        continue;
                }
                parts[n++] = tok;
        }
        /* Exactly two leading slashes are kept, as POSIX allows them a
         * meaning of their own; one or more than two become one. */
        if (slashes > 0)
                r = strbuf_puts(&out, slashes == 2 ? "//" : "/");
        for (size_t i = 0; r >= 0 && i < n; i++) {
                if (i > 0)
                        r = strbuf_putc(&out, '/');
                if (r >= 0)
                        r = strbuf_puts(&out, parts[i]);
        }
        if (r >= 0 && out.len == 0)
                r = strbuf_putc(&out, '.');
        if (r < 0)
                return r;
        return strbuf_steal(&out, ret);
}

int send_plan_resource_path(const char *resources, const char *file, char **ret, char **ret_error)
{
        _cleanup_strbuf_ StrBuf joined = STRBUF_INIT;
        _cleanup_strbuf_ StrBuf full = STRBUF_INIT;
        _cleanup_free_ char *norm = NULL;
        int r;

        /* os.path.join('scripts', file): an absolute file replaces the
         * folder, and secure_join then refuses it below. */
        r = file[0] == '/' ? strbuf_puts(&joined, file)
                           : strbuf_printf(&joined, "scripts/%s", file);
        if (r < 0)
                return r;
        r = normpath(joined.data, &norm);
        if (r < 0)
                return r;
        if (norm[0] == '/' || streq(norm, ".") || streq(norm, "..") || strncmp(norm, "../", 3) == 0)
                return send_plan_fail(ret_error,
                                      "path %s is not allowed: it leaves the resources directory",
                                      joined.data);
        r = strbuf_printf(&full, "%s/%s", resources, norm);
        if (r < 0)
                return r;
        return strbuf_steal(&full, ret);
}

static int read_resource(const char *path, const char *shown, size_t max, char **ret,
                         size_t *ret_len, char **ret_error)
{
        int r = file_read_all(path, max, ret, ret_len);

        if (r == -ENOMEM)
                return r;
        if (r == -EFBIG)
                return send_plan_fail(ret_error, "cannot embed %s: larger than %zu bytes", shown,
                                      max);
        if (r < 0)
                return send_plan_fail(ret_error, "cannot read %s: %s", shown, strerror(-r));
        return 0;
}

/* The text, which is UTF-8, as a new JSON string. */
static int text_json(const StrBuf *text, json_t **ret)
{
        json_t *s = json_stringn_nocheck(text->data ? text->data : "", text->len);

        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

int send_plan_read_text(const char *path, const char *shown, size_t max, json_t **ret,
                        char **ret_error)
{
        _cleanup_strbuf_ StrBuf text = STRBUF_INIT;
        _cleanup_free_ char *data = NULL;
        size_t len, bad;
        int r;

        r = read_resource(path, shown, max, &data, &len, ret_error);
        if (r != 0)
                return r;
        if (!utf8_valid(data, len, &bad)) {
                size_t line = 1;
                for (size_t i = 0; i < bad; i++)
                        line += data[i] == '\n';
                return send_plan_fail(ret_error,
                                      "cannot embed %s as text: invalid UTF-8 at byte %zu "
                                      "(line %zu); write it as <%s> to embed it as Base64",
                                      shown, bad, line, shown);
        }
        for (size_t i = 0; i < len; i++) {
                if (data[i] == '\r') {
                        r = strbuf_putc(&text, '\n');
                        if (i + 1 < len && data[i + 1] == '\n')
                                i++;
                } else
                        r = strbuf_putc(&text, data[i]);
                if (r < 0)
                        return r;
        }
        return text_json(&text, ret);
}

int send_plan_read_base64(const char *path, const char *shown, size_t max, const char *suffix,
                          json_t **ret, char **ret_error)
{
        _cleanup_strbuf_ StrBuf text = STRBUF_INIT;
        _cleanup_free_ char *data = NULL;
        size_t len;
        int r;

        r = read_resource(path, shown, max, &data, &len, ret_error);
        if (r != 0)
                return r;
        r = base64_append(&text, data, len);
        if (r >= 0)
                r = strbuf_puts(&text, suffix);
        if (r < 0)
                return r;
        return text_json(&text, ret);
}
