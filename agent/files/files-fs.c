/* The file system side of the files module: names that are safe below the
 * cache dir, placing a symlink at a Name without ever following a symlink
 * on the way, removing trees, and error texts worded as Python's OSError.
 *
 * Everything is done relative to directory descriptors, one component at a
 * time, with O_NOFOLLOW: scripts of the plan can write into their folders
 * and into downloaded trees, so a directory met on the way may have become
 * a symlink to anywhere. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files/files-internal.h"
#include "util/pyrepr.h"

int files_fail(PlanError *err, int code, const char *fmt, ...)
{
        char *msg;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&msg, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        plan_error_clear(err);
        err->code = code;
        err->message = msg;
        return FILES_FAILED;
}

int files_fail_os(PlanError *err, int e, const char *path)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        char buf[256];
        char *msg;

        /* The GNU strerror_r, since this runs on the plan thread. */
        if (strbuf_printf(&b, "[Errno %d] %s: ", e, strerror_r(e, buf, sizeof(buf))) < 0 ||
            pyrepr_string(&b, path, strlen(path)) < 0 || strbuf_steal(&b, &msg) < 0)
                return -ENOMEM;
        plan_error_clear(err);
        err->code = PLAN_CODE_EXCEPTION;
        err->message = msg;
        return FILES_FAILED;
}

const char *files_component_problem(const char *s, size_t len)
{
        if (len == 0)
                return "empty";
        if (memchr(s, '\0', len))
                return "contains a NUL character";
        if (memchr(s, '/', len))
                return "contains a '/'";
        if ((len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
                return "is '.' or '..'";
        if (len > NAME_MAX)
                return "longer than 255 bytes";
        return NULL;
}

const char *files_name_problem(const char *name, size_t len)
{
        const char *last;

        if (len == 0)
                return "empty";
        if (memchr(name, '\0', len))
                return "contains a NUL character";
        if (name[0] == '/')
                return "absolute path";
        for (const char *p = name; p;) {
                const char *slash = strchr(p, '/');
                size_t n = slash ? (size_t)(slash - p) : strlen(p);
                if (n == 2 && p[0] == '.' && p[1] == '.')
                        return "contains a '..' component";
                p = slash ? slash + 1 : NULL;
        }
        last = strrchr(name, '/');
        last = last ? last + 1 : name;
        if (streq(last, "") || streq(last, "."))
                return "does not end in a file name";
        return NULL;
}

int files_place_link(int dfd, const char *base, const char *name, const char *target,
                     const char *file_id, PlanError *err)
{
        _cleanup_strbuf_ StrBuf path = STRBUF_INIT;
        _cleanup_free_ char *copy = NULL;
        _cleanup_close_ int cur = -1;
        const char *problem, *last;
        struct stat st;
        char *p, *slash;

        problem = files_name_problem(name, strlen(name));
        if (problem)
                return files_fail(err, PLAN_CODE_FORMAT, "Invalid Name in file %s: %s", file_id,
                                  problem);
        copy = strdup(name);
        if (!copy || strbuf_puts(&path, base) < 0)
                return -ENOMEM;

        for (p = copy; (slash = strchr(p, '/')); p = slash + 1) {
                const char *comp = p;
                int at = cur >= 0 ? cur : dfd, fd;

                *slash = 0;
                if (streq(comp, "") || streq(comp, "."))
                        continue;
                if (strbuf_putc(&path, '/') < 0 || strbuf_puts(&path, comp) < 0)
                        return -ENOMEM;
                if (mkdirat(at, comp, 0777) < 0 && errno != EEXIST)
                        return files_fail_os(err, errno, path.data);
                fd = openat(at, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0) {
                        int e = errno;

                        if (fstatat(at, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
                                return files_fail(
                                        err, PLAN_CODE_EXCEPTION,
                                        "Invalid Name in file %s: %s goes through the symbolic "
                                        "link %.*s, which is refused",
                                        file_id, name, (int)(slash - copy), name);
                        /* Python's makedirs() meets an existing file here. */
                        return files_fail_os(err, e == ENOTDIR ? EEXIST : e, path.data);
                }
                if (cur >= 0)
                        close(cur);
                cur = fd;
        }

        last = p;
        if (strbuf_putc(&path, '/') < 0 || strbuf_puts(&path, last) < 0)
                return -ENOMEM;
        /* The reference's `if not os.path.lexists(script_path)`: whatever
         * is there already, a file of an earlier item or one that a script
         * made, stays; symlinkat() never replaces a name (EEXIST). */
        if (symlinkat(target, cur >= 0 ? cur : dfd, last) < 0 && errno != EEXIST)
                return files_fail_os(err, errno, path.data);
        return 0;
}

/* Trees are removed with at most RM_MAX_DEPTH directories open at once: a
 * directory found deeper is first moved up to the top of the tree being
 * removed (a rename within the tree, so within one file system) and removed
 * in a later pass. That bounds descriptors and stack for trees of any
 * depth, which a script can make. */
#define RM_MAX_DEPTH 32

/* A process that a script left behind could keep filling the tree; removal
 * gives up after this many passes rather than run forever. */
#define RM_MAX_PASSES 100000

typedef struct RmState {
        int top;          /* the directory being emptied */
        unsigned counter; /* for names of moved directories */
        bool progress;    /* something was removed or moved in this pass */
        int error;        /* the first -errno */
} RmState;

static void rm_note(RmState *s, int e)
{
        if (s->error == 0)
                s->error = -e;
}

/* Open a directory entry for removal; a directory without search or read
 * permission (a script may leave one) is given it first. */
static int rm_open_dir(int dfd, const char *name)
{
        int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

        if (fd < 0 && errno == EACCES && fchmodat(dfd, name, 0700, 0) == 0)
                fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        return fd;
}

/* Move the directory name below dfd to the top under a new name. */
static void rm_move_up(RmState *s, int dfd, const char *name)
{
        for (unsigned tries = 0; tries < 1000; tries++) {
                char moved[32];

                snprintf(moved, sizeof(moved), ".rm-%u", s->counter++);
                if (renameat2(dfd, name, s->top, moved, RENAME_NOREPLACE) == 0) {
                        s->progress = true;
                        return;
                }
                if (errno != EEXIST)
                        break;
        }
        rm_note(s, errno);
}

/* The size of the buffer for a directory's entries, as opendir()'s. */
#define RM_DIRENT_BUF 32768

/* One entry of dfd: what is not a directory is unlinked, a directory is
 * emptied and removed (or, too deep, moved up). */
static void rm_entry(RmState *s, int dfd, const char *name, unsigned char type, unsigned depth);

/* fresh: dfd was just opened, and reads from the start already. */
static void rm_children(RmState *s, int dfd, unsigned depth, bool fresh)
{
        _cleanup_free_ char *buf = malloc(RM_DIRENT_BUF);
        ssize_t n;

        if (!buf) {
                rm_note(s, ENOMEM);
                return;
        }
        /* The entries are read straight from dfd (no DIR, which would need
         * a duplicate of it, its fstat() and its flags), from the start:
         * an earlier pass over the top directory left it at the end. */
        if (!fresh && lseek(dfd, 0, SEEK_SET) < 0) {
                rm_note(s, errno);
                return;
        }
        while ((n = getdents64(dfd, buf, RM_DIRENT_BUF)) > 0)
                for (ssize_t off = 0; off < n;) {
                        const struct dirent64 *de = (const struct dirent64 *)(buf + off);

                        off += de->d_reclen;
                        if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                                rm_entry(s, dfd, de->d_name, de->d_type, depth);
                }
        if (n < 0)
                rm_note(s, errno);
}

static void rm_entry(RmState *s, int dfd, const char *name, unsigned char type, unsigned depth)
{
        bool is_dir = type == DT_DIR;
        struct stat st;
        int sub;

        if (type == DT_UNKNOWN && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
                is_dir = S_ISDIR(st.st_mode);
        if (!is_dir) {
                if (unlinkat(dfd, name, 0) == 0)
                        s->progress = true;
                else if (errno != ENOENT)
                        rm_note(s, errno);
                return;
        }
        if (depth >= RM_MAX_DEPTH) {
                rm_move_up(s, dfd, name);
                return;
        }
        sub = rm_open_dir(dfd, name);
        if (sub < 0) {
                if (errno != ENOENT)
                        rm_note(s, errno);
                return;
        }
        rm_children(s, sub, depth + 1, true);
        close(sub);
        if (unlinkat(dfd, name, AT_REMOVEDIR) == 0)
                s->progress = true;
        else if (errno != ENOENT && errno != ENOTEMPTY)
                rm_note(s, errno);
}

int files_rm_tree_at(int dfd, const char *name)
{
        RmState s = {.top = -1};
        struct stat st;

        /* O_DIRECTORY | O_NOFOLLOW opens a directory and nothing else: a
         * symlink (ELOOP) or any other file (ENOTDIR) is unlinked. */
        s.top = rm_open_dir(dfd, name);
        if (s.top < 0 && (errno == ENOTDIR || errno == ELOOP))
                return unlinkat(dfd, name, 0) < 0 && errno != ENOENT ? -errno : 0;
        if (s.top < 0)
                return errno == ENOENT ? 0 : -errno;
        /* Each pass empties the tree down to RM_MAX_DEPTH and moves what
         * lies deeper to the top; a pass that changes nothing ends it. */
        for (unsigned pass = 0; pass < RM_MAX_PASSES; pass++) {
                s.progress = false;
                rm_children(&s, s.top, 1, pass == 0);
                if (unlinkat(dfd, name, AT_REMOVEDIR) == 0) {
                        close(s.top);
                        return 0;
                }
                if (!s.progress || errno != ENOTEMPTY)
                        break;
        }
        close(s.top);
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                if (unlinkat(dfd, name, AT_REMOVEDIR) < 0)
                        return s.error < 0 ? s.error : -errno;
        } else if (errno != ENOENT)
                return -errno;
        return 0;
}
