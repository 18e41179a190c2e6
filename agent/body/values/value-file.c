/* open() and file objects: UTF-8 text files with Python's universal
 * newlines on reading, confined below BodyLimits.open_root when that is
 * set. Real templates write /tmp/pod.json and read files back, so by
 * default open() works anywhere, as in the reference agent. */
#include "body/values/value-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static BvExc exc_for_errno(int e)
{
        switch (e) {
        case ENOENT:
                return BV_EXC_FILE_NOT_FOUND_ERROR;
        case EACCES:
        case EPERM:
                return BV_EXC_PERMISSION_ERROR;
        case EISDIR:
                return BV_EXC_IS_A_DIRECTORY_ERROR;
        case ENOTDIR:
                return BV_EXC_NOT_A_DIRECTORY_ERROR;
        case EEXIST:
                return BV_EXC_FILE_EXISTS_ERROR;
        default:
                return BV_EXC_OS_ERROR;
        }
}

/* OSError(errno, strerror, filename): "[Errno 2] No such file or directory: 'x'". */
static void *raise_errno(BodyVM *vm, int e, const char *filename)
{
        _cleanup_bv_ BodyValue *code = bv_int_new(vm, e);
        _cleanup_bv_ BodyValue *msg = code ? bv_str_new_cstr(vm, strerror(e)) : NULL;
        _cleanup_bv_ BodyValue *name = NULL;
        BodyValue *exc;

        if (!msg)
                return NULL;
        if (filename) {
                name = bv_str_new_checked(vm, filename, strlen(filename));
                if (!name)
                        return NULL;
        }
        exc = bv__exc_new(vm, bv_exc_class(exc_for_errno(e)), bv_tuple_pair(vm, code, msg));
        if (!exc)
                return NULL;
        exc->exc.filename = TAKE_PTR(name);
        bv__set_pending(vm, exc);
        return NULL;
}

static bool under_root(const char *path, const char *root)
{
        size_t n = strlen(root);

        if (n == 1 && root[0] == '/')
                return true;
        return strncmp(path, root, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* Resolve path the way the kernel will (.. and symlinks) and check that it
 * stays below open_root. The parent directory must exist; the file itself
 * may not yet. Writes the resolved path to *ret (malloc'd). */
static int confine(BodyVM *vm, const char *path, const char *shown, char **ret)
{
        _cleanup_free_ char *root = realpath(vm->limits.open_root, NULL);
        _cleanup_free_ char *dircopy = strdup(path), *basecopy = strdup(path);
        _cleanup_free_ char *dir = NULL, *resolved = NULL;
        const char *base;

        if (!dircopy || !basecopy) {
                bv_raise_fatal(vm, -ENOMEM);
                return -1;
        }
        if (!root) {
                bv_raise(vm, BV_EXC_PERMISSION_ERROR,
                         "open() is confined to %s, which does not exist", vm->limits.open_root);
                return -1;
        }
        dir = realpath(dirname(dircopy), NULL);
        if (!dir) {
                raise_errno(vm, errno, shown);
                return -1;
        }
        base = basename(basecopy);
        if (streq(base, ".") || streq(base, "..") || streq(base, "/")) {
                resolved = realpath(path, NULL);
                if (!resolved) {
                        raise_errno(vm, errno, shown);
                        return -1;
                }
        } else {
                struct stat st;
                if (asprintf(&resolved, "%s/%s", streq(dir, "/") ? "" : dir, base) < 0) {
                        resolved = NULL;
                        bv_raise_fatal(vm, -ENOMEM);
                        return -1;
                }
                if (lstat(resolved, &st) == 0 && S_ISLNK(st.st_mode)) {
                        char *target = realpath(resolved, NULL);
                        if (!target) {
                                raise_errno(vm, errno, shown);
                                return -1;
                        }
                        free(resolved);
                        resolved = target;
                }
        }
        if (!under_root(resolved, root)) {
                bv_raise(vm, BV_EXC_PERMISSION_ERROR, "open() outside %s is not allowed",
                         vm->limits.open_root);
                return -1;
        }
        *ret = TAKE_PTR(resolved);
        return 0;
}

static bool encoding_ok(BodyValue *enc)
{
        static const char *const names[] = {"utf-8", "utf8", "utf_8", "u8"};

        if (!enc || enc->kind == BV_NONE)
                return true;
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (enc->kind == BV_STR && strcasecmp(enc->str.data, names[i]) == 0)
                        return true;
        return false;
}

/* What a file opened for reading only holds, as BodyHost.draw takes it:
 * 'C' and the content, or 'E' and the errno. The content is capped at the
 * string limit (a longer file raises MemoryError when read anyway). */
static int read_for_draw(BodyVM *vm, const char *path, int flags, StrBuf *b)
{
        _cleanup_close_ int fd = open(path, flags, 0666);
        struct stat st;
        char buf[65536];
        ssize_t k;

        b->limit = vm->limits.max_string + 2;
        if (fd < 0)
                return strbuf_printf(b, "E%d", errno);
        if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
                return strbuf_printf(b, "E%d", EISDIR);
        if (strbuf_putc(b, 'C') < 0)
                return -ENOMEM;
        while ((k = read(fd, buf, sizeof(buf))) != 0) {
                int r;
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        strbuf_reset(b);
                        return strbuf_printf(b, "E%d", errno);
                }
                r = strbuf_append(b, buf, (size_t)k);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* open(path, 'r') with a host that records what the Body draws: the file
 * is read whole, handed to the host (which may replace it with what the
 * Body read before a crash), and read from memory. Returns the stream, or
 * NULL with an exception pending; *ret_mem is the memory it reads. */
static FILE *open_drawn(BodyVM *vm, const char *path, int flags, const char *shown, char **ret_mem,
                        size_t *ret_mem_size)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        char *value = NULL, *mem;
        size_t len;
        FILE *fp;
        int r = read_for_draw(vm, path, flags, &b);

        if (r == -E2BIG)
                return bv_raise(vm, BV_EXC_MEMORY_ERROR,
                                "%s is larger than the Body string limit (%zu bytes)", shown,
                                vm->limits.max_string);
        len = b.len;
        if (r < 0 || strbuf_steal(&b, &value) < 0)
                return bv_raise_fatal(vm, r < 0 ? r : -ENOMEM);
        if (bv__draw(vm, "file", shown, &value, &len) < 0) {
                free(value);
                return NULL;
        }
        if (len == 0 || (value[0] != 'C' && value[0] != 'E')) {
                free(value);
                return bv_raise_fatal(vm, -EBADMSG);
        }
        if (value[0] == 'E') {
                int e = atoi(value + 1);
                free(value);
                return raise_errno(vm, e > 0 ? e : EIO, shown);
        }
        /* The content counts against the Body's memory while the file is
         * open, as the strings read from it would. */
        mem = bv_mem_alloc(vm, len);
        if (!mem) {
                free(value);
                return NULL;
        }
        memcpy(mem, value, len);
        free(value);
        fp = fmemopen(mem + 1, len - 1, "r");
        if (!fp) {
                int e = errno;
                bv_mem_free(vm, mem, len);
                return raise_errno(vm, e, shown);
        }
        *ret_mem = mem;
        *ret_mem_size = len;
        return fp;
}

BodyValue *bv__builtin_open(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                            BodyValue *kwargs)
{
        static const char *const names[] = {"file",     "mode",   "buffering",
                                            "encoding", "errors", "newline"};
        BodyValue *a[ELEMENTSOF(names)];
        _cleanup_free_ char *full = NULL, *resolved = NULL;
        const char *path, *mode = "r", *cwd = NULL;
        int flags, fd, plus = 0, kind = 0;
        char fmode[4], *mem = NULL;
        size_t mem_size = 0;
        FILE *fp;
        BodyValue *f;

        if (bv__parse_args(vm, "open", args, n, kwargs, names, ELEMENTSOF(names), 1, 6, a) < 0)
                return NULL;
        if (a[0]->kind != BV_STR)
                return bv_raise(vm, BV_EXC_TYPE_ERROR,
                                "expected str, bytes or os.PathLike object, not %s",
                                bv_type_name(a[0]));
        if (a[1] && a[1]->kind != BV_STR)
                return bv_raise(vm, BV_EXC_TYPE_ERROR, "open() argument 'mode' must be str, not %s",
                                bv_type_name(a[1]));
        if (a[1])
                mode = a[1]->str.data;
        for (const char *m = mode; *m; m++) {
                if (strchr("rwax", *m) && !kind)
                        kind = *m;
                else if (*m == '+' && !plus)
                        plus = 1;
                else if (*m == 'b')
                        return bv_raise(vm, BV_EXC_VALUE_ERROR,
                                        "binary mode '%s' is not supported by muranoagent's Body "
                                        "interpreter: files are UTF-8 text",
                                        mode);
                else if (*m != 't')
                        return bv_raise(vm, BV_EXC_VALUE_ERROR, "invalid mode: '%s'", mode);
        }
        if (!kind)
                return bv_raise(vm, BV_EXC_VALUE_ERROR,
                                "Must have exactly one of create/read/write/append mode and at "
                                "most one plus");
        if (!encoding_ok(a[3]))
                return bv_raise(vm, BV_EXC_VALUE_ERROR,
                                "muranoagent's Body interpreter only reads and writes UTF-8 files");
        path = a[0]->str.data;
        if (strlen(path) != a[0]->str.len)
                return bv_raise(vm, BV_EXC_VALUE_ERROR, "embedded null byte");
        if (path[0] != '/' && vm->host && vm->host->cwd)
                cwd = vm->host->cwd(vm->host->userdata);
        if (cwd) {
                if (asprintf(&full, "%s/%s", cwd, path) < 0) {
                        full = NULL;
                        return bv_raise_fatal(vm, -ENOMEM);
                }
                path = full;
        }
        if (vm->limits.open_root) {
                if (confine(vm, path, a[0]->str.data, &resolved) < 0)
                        return NULL;
                path = resolved;
        }
        if (vm->open_files >= BV_MAX_OPEN_FILES)
                return bv_raise(vm, BV_EXC_OS_ERROR,
                                "too many open files: a Body may hold at most %d open at once",
                                BV_MAX_OPEN_FILES);
        flags = O_CLOEXEC | (plus ? O_RDWR : kind == 'r' ? O_RDONLY : O_WRONLY);
        if (kind == 'w')
                flags |= O_CREAT | O_TRUNC;
        else if (kind == 'a')
                flags |= O_CREAT | O_APPEND;
        else if (kind == 'x')
                flags |= O_CREAT | O_EXCL;
        if (vm->limits.open_root)
                flags |= O_NOFOLLOW;
        if (kind == 'r' && !plus && vm->host && vm->host->draw) {
                fp = open_drawn(vm, path, flags, a[0]->str.data, &mem, &mem_size);
                if (!fp)
                        return NULL;
                goto made;
        }
        fd = open(path, flags, 0666);
        if (fd < 0)
                return raise_errno(vm, errno, a[0]->str.data);
        {
                struct stat st;
                if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
                        close(fd);
                        return raise_errno(vm, EISDIR, a[0]->str.data);
                }
        }
        snprintf(fmode, sizeof(fmode), "%c%s", kind == 'x' ? 'w' : kind, plus ? "+" : "");
        fp = fdopen(fd, fmode);
        if (!fp) {
                int e = errno;
                close(fd);
                return raise_errno(vm, e, a[0]->str.data);
        }
made : {
        size_t ln = a[0]->str.len + 1, lm = strlen(mode) + 1;
        f = bv__alloc(vm, BV_FILE, ln + lm);
        if (!f) {
                fclose(fp);
                if (mem)
                        bv_mem_free(vm, mem, mem_size);
                return NULL;
        }
        f->file.name = memcpy(f + 1, a[0]->str.data, ln);
        f->file.mode = memcpy(f->file.name + ln, mode, lm);
}
        f->file.fp = fp;
        f->file.readable = kind == 'r' || plus;
        f->file.writable = kind != 'r' || plus;
        f->file.universal = !(a[5] && a[5]->kind == BV_STR);
        f->file.mem = mem;
        f->file.mem_size = mem_size;
        vm->open_files++;
        return f;
}

static int file_close(BodyVM *vm, BodyValue *f)
{
        int r;

        if (!f->file.fp)
                return 0;
        r = fclose(f->file.fp);
        f->file.fp = NULL;
        if (f->file.mem)
                bv_mem_free(vm, f->file.mem, f->file.mem_size);
        f->file.mem = NULL;
        vm->open_files--;
        if (r != 0) {
                raise_errno(vm, errno, f->file.name);
                return -1;
        }
        return 0;
}

static int check_open(BodyVM *vm, BodyValue *f, bool write)
{
        if (!f->file.fp) {
                bv_raise(vm, BV_EXC_VALUE_ERROR, "I/O operation on closed file.");
                return -1;
        }
        if (write ? !f->file.writable : !f->file.readable) {
                bv_raise(vm, BV_EXC_OS_ERROR, write ? "not writable" : "not readable");
                return -1;
        }
        return 0;
}

/* Read up to max code points (SIZE_MAX: all), stopping after a newline
 * when line is set. "\r\n" and "\r" read as "\n" (universal newlines). */
static BodyValue *read_text(BodyVM *vm, BodyValue *f, size_t max, bool line)
{
        _cleanup_strbuf_ StrBuf b = bv__buf(vm);
        FILE *fp = f->file.fp;
        size_t cps = 0;
        int c;

        while (cps < max && (c = getc(fp)) != EOF) {
                int r;
                if (c == '\r' && f->file.universal) {
                        int d = getc(fp);
                        if (d != '\n' && d != EOF)
                                ungetc(d, fp);
                        c = '\n';
                }
                r = strbuf_putc(&b, (char)c);
                if (r < 0) {
                        bv__buf_error(vm, r);
                        return NULL;
                }
                if (((unsigned)c & 0xc0) != 0x80) {
                        /* Count a code point at its first byte; take the
                         * continuation bytes of the last one too. */
                        cps++;
                        while (cps == max && (c = getc(fp)) != EOF) {
                                if (((unsigned)c & 0xc0) != 0x80) {
                                        ungetc(c, fp);
                                        break;
                                }
                                if ((r = strbuf_putc(&b, (char)c)) < 0) {
                                        bv__buf_error(vm, r);
                                        return NULL;
                                }
                        }
                }
                if (line && c == '\n')
                        break;
        }
        if (ferror(fp))
                return raise_errno(vm, errno ? errno : EIO, f->file.name);
        return bv_str_new_checked(vm, b.data ? b.data : "", b.len);
}

int bv__file_next(BodyVM *vm, BodyValue *file, BodyValue **ret)
{
        BodyValue *s;

        if (check_open(vm, file, false) < 0)
                return -1;
        s = read_text(vm, file, SIZE_MAX, true);
        if (!s)
                return -1;
        if (s->str.len == 0) {
                bv_unref(s);
                return 0;
        }
        *ret = s;
        return 1;
}

static BodyValue *m_read(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n, BodyValue *kwargs)
{
        int64_t size = -1;

        if (bv__check_args(vm, "read", n, kwargs, 0, 1) < 0 || check_open(vm, self, false) < 0)
                return NULL;
        if (n == 1 && args[0]->kind != BV_NONE && bv__as_index(vm, args[0], NULL, &size) < 0)
                return NULL;
        return read_text(vm, self, size < 0 ? SIZE_MAX : (size_t)size, false);
}

static BodyValue *m_readline(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                             BodyValue *kwargs)
{
        int64_t size = -1;

        if (bv__check_args(vm, "readline", n, kwargs, 0, 1) < 0 || check_open(vm, self, false) < 0)
                return NULL;
        if (n == 1 && args[0]->kind != BV_NONE && bv__as_index(vm, args[0], NULL, &size) < 0)
                return NULL;
        return read_text(vm, self, size < 0 ? SIZE_MAX : (size_t)size, true);
}

static BodyValue *m_readlines(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                              BodyValue *kwargs)
{
        _cleanup_bv_ BodyValue *list = NULL;

        if (bv__check_args(vm, "readlines", n, kwargs, 0, 1) < 0 || check_open(vm, self, false) < 0)
                return NULL;
        list = bv_list_new(vm, 0);
        if (!list)
                return NULL;
        for (;;) {
                BodyValue *line;
                int r = bv__file_next(vm, self, &line);
                if (r < 0)
                        return NULL;
                if (r == 0)
                        return TAKE_PTR(list);
                if (bv_list_append_take(vm, list, line) < 0 || bv_step(vm) < 0)
                        return NULL;
        }
}

static int write_str(BodyVM *vm, BodyValue *self, BodyValue *s)
{
        if (s->kind != BV_STR) {
                bv_raise(vm, BV_EXC_TYPE_ERROR, "write() argument must be str, not %s",
                         bv_type_name(s));
                return -1;
        }
        if (fwrite(s->str.data, 1, s->str.len, self->file.fp) != s->str.len) {
                raise_errno(vm, errno ? errno : EIO, self->file.name);
                return -1;
        }
        return 0;
}

static BodyValue *m_write(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                          BodyValue *kwargs)
{
        if (bv__check_args(vm, "write", n, kwargs, 1, 1) < 0 || check_open(vm, self, true) < 0 ||
            write_str(vm, self, args[0]) < 0)
                return NULL;
        return bv_int_new(vm, (int64_t)args[0]->str.cplen);
}

static BodyValue *m_writelines(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                               BodyValue *kwargs)
{
        _cleanup_bv_ BodyValue *it = NULL;

        if (bv__check_args(vm, "writelines", n, kwargs, 1, 1) < 0 || check_open(vm, self, true) < 0)
                return NULL;
        it = bv_iter(vm, args[0]);
        if (!it)
                return NULL;
        for (;;) {
                _cleanup_bv_ BodyValue *s = NULL;
                int r = bv_next(vm, it, &s);
                if (r < 0)
                        return NULL;
                if (r == 0)
                        return bv_none();
                if (bv_step(vm) < 0 || write_str(vm, self, s) < 0)
                        return NULL;
        }
}

static BodyValue *m_flush(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                          BodyValue *kwargs)
{
        if (bv__check_args(vm, "flush", n, kwargs, 0, 0) < 0)
                return NULL;
        if (!self->file.fp)
                return bv_raise(vm, BV_EXC_VALUE_ERROR, "I/O operation on closed file.");
        if (fflush(self->file.fp) != 0)
                return raise_errno(vm, errno, self->file.name);
        return bv_none();
}

static BodyValue *m_close(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                          BodyValue *kwargs)
{
        if (bv__check_args(vm, "close", n, kwargs, 0, 0) < 0 || file_close(vm, self) < 0)
                return NULL;
        return bv_none();
}

static BodyValue *m_enter(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                          BodyValue *kwargs)
{
        if (bv__check_args(vm, "__enter__", n, kwargs, 0, 0) < 0)
                return NULL;
        if (!self->file.fp)
                return bv_raise(vm, BV_EXC_VALUE_ERROR, "I/O operation on closed file.");
        return bv_ref(self);
}

/* __exit__(type, value, traceback): close, and never swallow the exception. */
static BodyValue *m_exit(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n, BodyValue *kwargs)
{
        if (bv__no_kwargs(vm, "__exit__", kwargs) < 0 || file_close(vm, self) < 0)
                return NULL;
        return bv_none();
}

static BodyValue *m_fileno(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                           BodyValue *kwargs)
{
        if (bv__check_args(vm, "fileno", n, kwargs, 0, 0) < 0)
                return NULL;
        if (!self->file.fp)
                return bv_raise(vm, BV_EXC_VALUE_ERROR, "I/O operation on closed file.");
        return bv_int_new(vm, fileno(self->file.fp));
}

const BvBuiltinDef bv__file_methods[] = {
        {"read", m_read},
        {"readline", m_readline},
        {"readlines", m_readlines},
        {"write", m_write},
        {"writelines", m_writelines},
        {"flush", m_flush},
        {"close", m_close},
        {"fileno", m_fileno},
        {"__enter__", m_enter},
        {"__exit__", m_exit},
        {NULL, NULL},
};
