/* exec-fs: the os.path and file helpers the executors need, with the
 * semantics of the Python functions the reference calls (normpath, join,
 * dirname, makedirs, open(..., "w")). Errors are negative errno values;
 * the executors turn them into the texts Python would print. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/exec-internal.h"
#include "util/fileio.h"

int exec_path_normalize(const char *path, char **ret)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        _cleanup_free_ const char **parts = NULL;
        _cleanup_free_ size_t *lens = NULL;
        size_t n = 0, max;
        const char *p = path;
        int r;

        if (!path || path[0] != '/')
                return -EINVAL;
        max = strlen(path) / 2 + 1;
        parts = calloc(max, sizeof(char *));
        lens = calloc(max, sizeof(size_t));
        if (!parts || !lens)
                return -ENOMEM;
        while (*p) {
                size_t len;
                p += strspn(p, "/");
                len = strcspn(p, "/");
                if (len == 2 && p[0] == '.' && p[1] == '.') {
                        /* ".." above the root stays at the root. */
                        if (n > 0)
                                n--;
                } else if (len > 0 && !(len == 1 && p[0] == '.')) {
                        parts[n] = p;
                        lens[n++] = len;
                }
                p += len;
        }
        /* POSIX lets exactly two leading slashes mean something else, and
         * normpath keeps them; one or three and more become one. */
        r = strbuf_puts(&b, strspn(path, "/") == 2 ? "//" : "/");
        for (size_t i = 0; i < n && r >= 0; i++) {
                if (i > 0)
                        r = strbuf_putc(&b, '/');
                if (r >= 0)
                        r = strbuf_append(&b, parts[i], lens[i]);
        }
        if (r < 0)
                return r;
        return strbuf_steal(&b, ret);
}

char *exec_path_join(const char *a, const char *b)
{
        size_t la = strlen(a);
        char *s;

        if (b[0] == '/' || la == 0)
                return strdup(b);
        if (asprintf(&s, "%s%s%s", a, a[la - 1] == '/' ? "" : "/", b) < 0)
                return NULL;
        return s;
}

const char *exec_path_basename(const char *path)
{
        const char *slash = strrchr(path, '/');
        return slash ? slash + 1 : path;
}

char *exec_path_dirname(const char *path)
{
        size_t head = (size_t)(exec_path_basename(path) - path);
        size_t keep = head;

        /* Trailing slashes go, unless the head is nothing but slashes. */
        while (keep > 0 && path[keep - 1] == '/')
                keep--;
        if (keep == 0)
                keep = head;
        return strndup(path, keep);
}

int exec_shell_word(StrBuf *out, const char *s)
{
        static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                   "0123456789_@%+=:,./-";
        int r;

        if (s[0] && s[strspn(s, safe)] == '\0')
                return strbuf_puts(out, s);
        if ((r = strbuf_putc(out, '\'')) < 0)
                return r;
        for (; *s; s++) {
                r = *s == '\'' ? strbuf_puts(out, "'\"'\"'") : strbuf_putc(out, *s);
                if (r < 0)
                        return r;
        }
        return strbuf_putc(out, '\'');
}

bool exec_is_file(const char *path)
{
        struct stat st;
        return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool exec_is_dir(const char *path)
{
        struct stat st;
        return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool exec_exists(const char *path)
{
        struct stat st;
        return stat(path, &st) == 0;
}

int exec_write_file(const char *path, const char *data, size_t len)
{
        _cleanup_close_ int fd = -1;
        int r;

        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666);
        if (fd < 0)
                return -errno;
        r = file_write_all(fd, data, len);
        if (r < 0)
                return r;
        if (close(fd) < 0) {
                fd = -1;
                return -errno;
        }
        fd = -1;
        return 0;
}

int exec_mkdirs(const char *path)
{
        _cleanup_free_ char *p = strdup(path);

        if (!p)
                return -ENOMEM;
        /* The missing parents first, as makedirs does; only the last
         * mkdir may report that the directory exists. */
        for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
                if (s[1] == '\0' || s[-1] == '/')
                        continue;
                *s = '\0';
                if (mkdir(p, 0777) < 0 && errno != EEXIST)
                        return -errno;
                *s = '/';
        }
        if (mkdir(p, 0777) < 0)
                return -errno;
        return 0;
}
