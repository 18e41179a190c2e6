/* The Files object: the cache dir of one plan, and what each script needs
 * in it. The statement order follows the reference's FilesManager and
 * ScriptRunner._prepare_files() (murano-agent 9ae3969), so that a plan the
 * reference fails on fails here with the same text where that text is the
 * reference's own (a KeyError, an OSError), and so that the directories
 * appear in the same order.
 *
 * Where the reference raises a Python exception on an odd value, the message
 * is str(exception) as CPython 3.11 words it; plan validation has turned
 * most such plans away before this module sees them. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files/files-internal.h"
#include "util/base64.h"
#include "util/fileio.h"
#include "util/hexid.h"
#include "util/pyrepr.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/pyjson.h"

/* os.path.join(a, b) for a relative b: no doubled slash after a. */
static char *path_join(const char *a, const char *b)
{
        size_t n = strlen(a);
        char *s;

        if (asprintf(&s, "%s%s%s", a, n > 0 && a[n - 1] == '/' ? "" : "/", b) < 0)
                return NULL;
        return s;
}

/* mkdir -p, with mode for each directory it makes. The path itself is
 * tried first: its parents are there for every plan but the first, and
 * walking them would cost a failed mkdir() each. */
static int mkdir_parents(const char *path, mode_t mode)
{
        _cleanup_free_ char *p = NULL;

        if (mkdir(path, mode) == 0 || errno == EEXIST)
                return 0;
        if (errno != ENOENT)
                return -errno;
        p = strdup(path);
        if (!p)
                return -ENOMEM;
        for (char *s = p + 1;; s++) {
                if (*s != '/' && *s != 0)
                        continue;
                char c = *s;
                *s = 0;
                if (mkdir(p, mode) < 0 && errno != EEXIST)
                        return -errno;
                *s = c;
                if (c == 0)
                        return 0;
        }
}

/* os.path.abspath(storage): relative to the current directory, with "."
 * components, doubled slashes and a trailing slash dropped and ".." taken
 * lexically, so that the symlink targets are plain absolute paths. */
static int absolute_storage(const char *storage, char **ret)
{
        _cleanup_free_ char *cwd = NULL, *joined = NULL, *out = NULL;
        size_t n = 0;

        if (storage[0] == '/')
                joined = strdup(storage);
        else {
                cwd = getcwd(NULL, 0);
                if (!cwd)
                        return -errno;
                joined = path_join(cwd, storage);
        }
        if (!joined)
                return -ENOMEM;
        out = malloc(strlen(joined) + 2);
        if (!out)
                return -ENOMEM;
        for (char *p = joined; *p;) {
                size_t len = strcspn(p, "/");

                if (len == 2 && p[0] == '.' && p[1] == '.') {
                        while (n > 0 && out[n - 1] != '/')
                                n--;
                        if (n > 0)
                                n--;
                } else if (len > 0 && !(len == 1 && p[0] == '.')) {
                        out[n++] = '/';
                        memcpy(out + n, p, len);
                        n += len;
                }
                p += len;
                if (*p == '/')
                        p++;
        }
        if (n == 0)
                out[n++] = '/';
        out[n] = 0;
        *ret = TAKE_PTR(out);
        return 0;
}

int files_own_fd(const Files *f, int fd)
{
        if (!f->set_owner)
                return 0;
        return fchown(fd, f->owner_uid, f->owner_gid) < 0 ? -errno : 0;
}

int files_own_dir_at(const Files *f, int dfd, const char *name)
{
        _cleanup_close_ int fd = -1;

        if (!f->set_owner)
                return 0;
        /* Through a descriptor of the directory itself, so that nothing a
         * script put at that name in the meantime (a symlink, a hard link
         * to someone else's file) is what changes hands. */
        fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        return files_own_fd(f, fd);
}

/* Let the run-as user pass through a directory of ours on the way to its
 * cache dir: search permission for group and others, never read, so the
 * names in it (other plans' IDs) cannot be listed. A directory that is not
 * the agent's own is the administrator's business and stays as it is (if
 * it blocks the way, the script fails to start with "Permission denied"). */
static int make_searchable(int fd)
{
        struct stat st;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (st.st_uid != geteuid() || (st.st_mode & 0011) == 0011)
                return 0;
        return fchmod(fd, (st.st_mode & 07777) | 0011) < 0 ? -errno : 0;
}

/* The way down to <storage>/files for the run-as user (see
 * FilesOptions.set_owner). */
static int open_the_way(const Files *f)
{
        _cleanup_free_ char *storage = strdup(f->files_dir);
        _cleanup_close_ int fd = -1;
        char *slash;
        int r;

        if (!storage)
                return -ENOMEM;
        if ((r = make_searchable(f->files_fd)) < 0)
                return r;
        slash = strrchr(storage, '/');
        if (!slash || slash == storage)
                return 0;
        *slash = 0;
        fd = open(storage, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        return make_searchable(fd);
}

int files_new(const char *storage, const char *plan_id, const json_t *plan,
              const ProcRunner *runner, const FilesOptions *opt, Files **ret)
{
        FilesOptions o = opt ? *opt : FILES_OPTIONS_DEFAULT;
        _cleanup_free_ char *root = NULL;
        _cleanup_(files_freep) Files *f = NULL;
        char hex[33];
        int r;

        if (!storage || !*storage || !json_is_object(plan))
                return -EINVAL;
        f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        f->files_fd = f->cache_fd = -1;
        f->plan = plan;
        f->plan_text = o.plan_text;
        f->files = json_object_get(plan, "Files");
        if (!json_is_object(f->files))
                f->files = NULL;
        if (runner) {
                f->runner = *runner;
                f->have_runner = true;
        }
        f->max_download_size = o.max_download_size;
        f->connect_timeout = o.connect_timeout;
        f->set_owner = o.set_owner;
        f->owner_uid = o.owner_uid;
        f->owner_gid = o.owner_gid;
        f->done = json_object();
        if (!f->done)
                return -ENOMEM;
        /* Without muranoagent-fetch, HTTP downloads fail with a message;
         * the other files still work. */
        if (o.fetch_program) {
                f->fetch_program = strdup(o.fetch_program);
                if (!f->fetch_program)
                        return -ENOMEM;
        } else if (files_fetch_program_path(&f->fetch_program) == -ENOMEM)
                return -ENOMEM;

        /* A plan ID becomes a directory name, and that directory is removed
         * first: an ID such as ".." must not name anything else. */
        if (plan_id && !files_component_problem(plan_id, strlen(plan_id)))
                f->name = strdup(plan_id);
        else if ((r = hexid_new(hex)) < 0)
                return r;
        else
                f->name = strdup(hex);
        if (!f->name)
                return -ENOMEM;

        if ((r = absolute_storage(storage, &root)) < 0)
                return r;
        f->files_dir = path_join(root, "files");
        if (!f->files_dir)
                return -ENOMEM;
        f->cache = path_join(f->files_dir, f->name);
        if (!f->cache)
                return -ENOMEM;
        /* <storage>/files is there for every plan but the first. */
        f->files_fd = open(f->files_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (f->files_fd < 0 && errno == ENOENT) {
                if ((r = mkdir_parents(f->files_dir, f->set_owner ? 0711 : 0700)) < 0)
                        return r;
                f->files_fd = open(f->files_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        }
        if (f->files_fd < 0)
                return -errno;
        if (f->set_owner && (r = open_the_way(f)) < 0)
                return r;

        /* The reference: if os.path.exists(cache): rmtree; then
         * os.makedirs(cache, 0o700). A name that is there fails the
         * mkdirat(), which is then made again after the removal. */
        if (mkdirat(f->files_fd, f->name, 0700) < 0) {
                if (errno != EEXIST)
                        return -errno;
                (void)files_rm_tree_at(f->files_fd, f->name);
                if (mkdirat(f->files_fd, f->name, 0700) < 0)
                        return -errno;
        }
        f->cache_fd = openat(f->files_fd, f->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (f->cache_fd < 0)
                return -errno;
        if ((r = files_own_fd(f, f->cache_fd)) < 0)
                return r;

        *ret = TAKE_PTR(f);
        return 0;
}

Files *files_free(Files *f)
{
        if (!f)
                return NULL;
        if (f->cache_fd >= 0)
                close(f->cache_fd);
        if (f->files_fd >= 0) {
                if (f->cache_fd >= 0)
                        (void)files_rm_tree_at(f->files_fd, f->name);
                close(f->files_fd);
        }
        json_decref(f->done);
        free(f->fetch_program);
        free(f->cache);
        free(f->name);
        free(f->files_dir);
        free(f);
        return NULL;
}

const char *files_cache_dir(const Files *f)
{
        return f->cache;
}

/* Fill err with prefix, repr(s) and, when problem is not NULL, ": " and
 * problem. */
static int fail_repr(PlanError *err, int code, const char *prefix, const char *s,
                     const char *problem)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        char *msg;

        if (strbuf_puts(&b, prefix) < 0 || pyrepr_string(&b, s, strlen(s)) < 0 ||
            (problem && strbuf_printf(&b, ": %s", problem) < 0) || strbuf_steal(&b, &msg) < 0)
                return -ENOMEM;
        plan_error_clear(err);
        err->code = code;
        err->message = msg;
        return FILES_FAILED;
}

/* str(KeyError(v)) is repr(v). */
static int fail_key_error(PlanError *err, const json_t *v)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        char *msg;
        int r;

        if ((r = pyrepr_repr(v, &b)) < 0 || (r = strbuf_steal(&b, &msg)) < 0)
                return r == -ENOMEM ? r : files_fail(err, PLAN_CODE_EXCEPTION, "KeyError");
        plan_error_clear(err);
        err->code = PLAN_CODE_EXCEPTION;
        err->message = msg;
        return FILES_FAILED;
}

static int append_piece(void *userdata, const char *piece, size_t len)
{
        return strbuf_append(userdata, piece, len);
}

/* A body's value in one piece: borrowed from the plan, or when the plan's
 * text keeps it in pieces (plan_parse_json_kept()), put together in
 * *ret_owned. Returns 0 or -ENOMEM. */
static int body_value(const Files *f, const json_t *body, const char **ret_data, size_t *ret_len,
                      char **ret_owned)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        const char *value = json_string_value(body);
        size_t len = json_string_length(body);
        int r;

        if (!f->plan_text || !memchr(value, '\0', len)) {
                *ret_data = value;
                *ret_len = len;
                return 0;
        }
        r = plan_text_pieces(f->plan_text, body, append_piece, &b);
        if (r < 0)
                return r;
        len = b.len;
        if ((r = strbuf_steal(&b, ret_owned)) < 0)
                return r;
        *ret_data = *ret_owned;
        *ret_len = len;
        return 0;
}

/* The bytes an inline file holds, as the reference's _fetch_file() writes
 * them. *ret_data is owned when *ret_owned is set, else borrowed from the
 * plan. With ret_base64, a Base64 body is not decoded here: *ret_base64 is
 * then its string, for write_base64(), and *ret_data is NULL. */
static int inline_content(const Files *f, const json_t *file_def, const char **ret_data,
                          size_t *ret_len, char **ret_owned, const json_t **ret_base64,
                          PlanError *err)
{
        const json_t *type = json_object_get(file_def, "BodyType");
        const json_t *body = json_object_get(file_def, "Body");
        bool text = !type || (pyjson_is_string(type) && streq(json_string_value(type), "Text"));
        bool base64 = pyjson_is_string(type) && streq(json_string_value(type), "Base64");

        *ret_owned = NULL;
        if (ret_base64)
                *ret_base64 = NULL;
        if (!text && !base64) {
                /* Neither branch of the reference runs: the file stays empty.
                 * Validation refuses such a BodyType before. */
                *ret_data = "";
                *ret_len = 0;
                return 0;
        }
        if (!body)
                return files_fail(err, PLAN_CODE_EXCEPTION, "'Body'");
        if (!pyjson_is_string(body))
                return text ? files_fail(err, PLAN_CODE_EXCEPTION,
                                         "write() argument must be str, not %s",
                                         pyrepr_type_name(body))
                            : files_fail(err, PLAN_CODE_EXCEPTION,
                                         "argument should be a bytes-like object or ASCII "
                                         "string, not '%s'",
                                         pyrepr_type_name(body));
        if (text)
                /* Text mode on Linux writes the str's UTF-8 bytes unchanged:
                 * no newline is added or translated. */
                return body_value(f, body, ret_data, ret_len, ret_owned);

        if (ret_base64) {
                *ret_base64 = body;
                *ret_data = NULL;
                *ret_len = 0;
                return 0;
        }

        _cleanup_free_ char *kept = NULL;
        char *data = NULL, *why = NULL;
        const char *value;
        size_t len = 0;
        int r = body_value(f, body, &value, &len, &kept);
        if (r < 0)
                return r;
        r = base64_decode(value, len, &data, &len, &why);
        if (r < 0)
                return r;
        if (r > 0) {
                r = files_fail(err, PLAN_CODE_EXCEPTION, "%s", why);
                free(why);
                return r;
        }
        *ret_data = *ret_owned = data;
        *ret_len = len;
        return 0;
}

/* Base64 is decoded into the file piece by piece, each piece written
 * while it is in the cache, instead of into a fresh mapping of the whole
 * file's size first: this many characters of text at a time (the buffer,
 * 3/4 of it, stays below the mmap threshold main.c sets). */
#define BASE64_PIECE (64 * 1024)

typedef struct Base64Out {
        int fd;
        char *buf;
        Base64Decoder *d;
} Base64Out;

/* One piece of the body's text, decoded and written BASE64_PIECE
 * characters at a time. */
static int write_base64_piece(void *userdata, const char *text, size_t len)
{
        Base64Out *o = userdata;

        for (size_t i = 0; i < len && !o->d->done;) {
                size_t k = len - i < BASE64_PIECE ? len - i : BASE64_PIECE;
                size_t n = base64_decoder_feed(o->d, text + i, k, o->buf);
                int r = file_write_all(o->fd, o->buf, n);

                if (r < 0)
                        return r;
                i += k;
        }
        return 0;
}

/* The bytes b64decode(body) gives, written to fd through buf (room for
 * the decoding of BASE64_PIECE characters, or of the whole body), straight
 * from the plan's text where it keeps the body. Returns 0 or -errno of
 * write(); base64_decoder_finish(d) then says whether the body was valid. */
static int write_base64(const Files *f, int fd, const json_t *body, char *buf, Base64Decoder *d)
{
        Base64Out o = {.fd = fd, .buf = buf, .d = d};

        return plan_text_pieces(f->plan_text, body, write_base64_piece, &o);
}

/* The reference's _fetch_file(): <cache>/<file_id>, once per plan. */
static int put_inline(Files *f, const char *file_id, const json_t *file_def, PlanError *err)
{
        _cleanup_free_ char *owned = NULL, *path = NULL, *why = NULL, *buf = NULL;
        _cleanup_close_ int fd = -1;
        char want[FILES_SHA256_HEX + 1], got[FILES_SHA256_HEX + 1];
        const json_t *base64 = NULL;
        const char *data = NULL;
        struct stat st;
        size_t len = 0;
        int r;

        if (json_object_get(f->done, file_id))
                return 0;
        if ((r = files_sha256_wanted(file_def, file_id, want, err)) != 0)
                return r;
        /* A checksum is checked before the file is written, so only a
         * body without one is decoded while it is written. */
        if ((r = inline_content(f, file_def, &data, &len, &owned, want[0] ? NULL : &base64, err)) !=
            0)
                return r;
        if (want[0]) {
                if ((r = files_sha256_hex(data, len, got)) < 0)
                        return r;
                if ((r = files_sha256_verify(file_id, want, got, err)) != 0)
                        return r;
        }

        path = path_join(f->cache, file_id);
        if (!path)
                return -ENOMEM;
        /* Files are written lazily, so an earlier script may have put
         * something under this name: a FIFO must not hang the plan
         * (O_NONBLOCK), and a hard link to a file elsewhere must not be
         * truncated, so the check comes before ftruncate(). A file that
         * O_EXCL made is new: regular, empty and ours, nothing to check. */
        fd = openat(f->cache_fd, file_id,
                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY,
                    0666);
        if (fd < 0 && errno == EEXIST) {
                fd = openat(f->cache_fd, file_id,
                            O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
                if (fd < 0)
                        return files_fail_os(err, errno, path);
                if (fstat(fd, &st) < 0)
                        return files_fail_os(err, errno, path);
                if (!S_ISREG(st.st_mode) || st.st_nlink != 1)
                        return files_fail_os(err, EEXIST, path);
                /* A new file would be empty already; truncating it would
                 * still cost the file system a truncate of its inode. */
                if (st.st_size > 0 && ftruncate(fd, 0) < 0)
                        return files_fail_os(err, errno, path);
        }
        if (fd < 0)
                return files_fail_os(err, errno, path);
        if ((r = files_own_fd(f, fd)) < 0)
                return files_fail_os(err, -r, path);
        if (base64) {
                /* A body the plan's text keeps is longer than its string. */
                size_t text_len = f->plan_text ? BASE64_PIECE : json_string_length(base64);
                Base64Decoder d = BASE64_DECODER_INIT;

                buf = malloc(base64_decoded_max(text_len < BASE64_PIECE ? text_len : BASE64_PIECE));
                if (!buf)
                        return -ENOMEM;
                if ((r = write_base64(f, fd, base64, buf, &d)) < 0)
                        return files_fail_os(err, -r, path);
                r = base64_decoder_finish(&d, &why);
                if (r < 0)
                        return r;
                if (r > 0) {
                        /* The reference opens the file before it decodes,
                         * so an invalid body leaves it empty. */
                        if (ftruncate(fd, 0) < 0)
                                return files_fail_os(err, errno, path);
                        return files_fail(err, PLAN_CODE_EXCEPTION, "%s", why);
                }
        } else if ((r = file_write_all(fd, data, len)) < 0)
                return files_fail_os(err, -r, path);
        r = close(fd);
        fd = -1;
        if (r < 0)
                return files_fail_os(err, errno, path);
        return json_object_set_new(f->done, file_id, json_true()) < 0 ? -ENOMEM : 0;
}

/* A script's working folder, <cache>/<script>, open in *script_fd. */
typedef struct ScriptDir {
        const char *script;
        char *path;
        int fd;
} ScriptDir;

static int script_dir_open(Files *f, ScriptDir *d, PlanError *err)
{
        struct stat st;
        int r;

        if (d->fd >= 0)
                return 0;
        if (mkdirat(f->cache_fd, d->script, 0777) < 0 && errno != EEXIST)
                return files_fail_os(err, errno, d->path);
        d->fd = openat(f->cache_fd, d->script, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (d->fd >= 0) {
                /* The script's working directory: its own, to write in. */
                if ((r = files_own_fd(f, d->fd)) < 0)
                        return files_fail_os(err, -r, d->path);
                return 0;
        }
        /* A file of the same name (a file ID equal to the script name), or
         * a symlink: os.mkdir() says "File exists" for both. */
        if (errno == ENOTDIR || errno == ELOOP ||
            (fstatat(f->cache_fd, d->script, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
             !S_ISDIR(st.st_mode)))
                return files_fail_os(err, EEXIST, d->path);
        return files_fail_os(err, errno, d->path);
}

/* With an owner, the folders of a Name ("lib/" of "lib/common.sh") that
 * files_place_link() made or found are the owner's too, like the script's
 * folder. They are walked again from the script's folder, one component at
 * a time and never through a symlink (files_place_link() refused those). */
static int own_name_dirs(Files *f, ScriptDir *d, const char *name, PlanError *err)
{
        _cleanup_free_ char *copy = NULL;
        _cleanup_close_ int cur = -1;
        char *p, *slash;

        if (!f->set_owner || !strchr(name, '/'))
                return 0;
        copy = strdup(name);
        if (!copy)
                return -ENOMEM;
        /* The increment puts each '/' back, so that on an error copy ends
         * at the component that failed. */
        for (p = copy; (slash = strchr(p, '/')); *slash = '/', p = slash + 1) {
                int fd, r;

                *slash = 0;
                if (streq(p, "") || streq(p, "."))
                        continue;
                fd = openat(cur >= 0 ? cur : d->fd, p,
                            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                r = fd < 0 ? -errno : files_own_fd(f, fd);
                if (cur >= 0)
                        close(cur);
                cur = fd;
                if (r < 0) {
                        _cleanup_free_ char *path = NULL;

                        if (asprintf(&path, "%s/%s", d->path, copy) < 0)
                                return -ENOMEM;
                        return files_fail_os(err, -r, path);
                }
        }
        return 0;
}

/* The reference's put_file() for one file ID. *ret_path (if not NULL) gets
 * <cache>/<script>/<Name>. */
static int put_file(Files *f, ScriptDir *d, const char *file_id, char **ret_path, PlanError *err)
{
        _cleanup_free_ char *target = NULL;
        const json_t *file_def = f->files ? json_object_get(f->files, file_id) : NULL;
        const json_t *name, *type;
        const char *problem;
        int r;

        if (!file_def)
                return fail_repr(err, PLAN_CODE_EXCEPTION, "", file_id, NULL);
        if (!json_is_object(file_def))
                return files_fail(err, PLAN_CODE_EXCEPTION, "'%s' object has no attribute 'get'",
                                  pyrepr_type_name(file_def));
        name = json_object_get(file_def, "Name");
        if (!name)
                return files_fail(err, PLAN_CODE_EXCEPTION, "'Name'");
        if (!pyjson_is_string(name))
                return files_fail(err, PLAN_CODE_FORMAT, "Invalid Name in file %s: not a string",
                                  file_id);
        /* Validation does not look at file IDs; each becomes a name in the
         * cache dir. */
        problem = files_component_problem(file_id, strlen(file_id));
        if (problem)
                return fail_repr(err, PLAN_CODE_EXCEPTION, "Invalid file ID ", file_id, problem);

        type = json_object_get(file_def, "Type");
        if (pyjson_is_string(type) && streq(json_string_value(type), "Downloadable"))
                r = files_download(f, file_id, file_def, err);
        else
                r = put_inline(f, file_id, file_def, err);
        if (r != 0)
                return r;

        target = path_join(f->cache, file_id);
        if (!target)
                return -ENOMEM;
        if ((r = script_dir_open(f, d, err)) != 0)
                return r;
        r = files_place_link(d->fd, d->path, json_string_value(name), target, file_id, err);
        if (r != 0)
                return r;
        if ((r = own_name_dirs(f, d, json_string_value(name), err)) != 0)
                return r;
        if (ret_path) {
                *ret_path = path_join(d->path, json_string_value(name));
                if (!*ret_path)
                        return -ENOMEM;
        }
        return 0;
}

/* One item of a script's Files, or its EntryPoint: a file ID, or (our
 * reading; the reference fails on it) a dictionary whose first key is one. */
static int put_item(Files *f, ScriptDir *d, const json_t *item, char **ret_path, PlanError *err)
{
        if (pyjson_is_string(item))
                return put_file(f, d, json_string_value(item), ret_path, err);
        if (json_is_object(item)) {
                void *it = json_object_iter((json_t *)item);
                if (!it)
                        return files_fail(err, PLAN_CODE_EXCEPTION, "list index out of range");
                return put_file(f, d, json_object_iter_key(it), ret_path, err);
        }
        if (json_is_array(item))
                return files_fail(err, PLAN_CODE_EXCEPTION, "unhashable type: 'list'");
        return fail_key_error(err, item);
}

/* `for file_id in script_info.get('Files', [])`, over whatever Python would
 * iterate: list items, dict keys, or the characters of a string. */
static int put_items(Files *f, ScriptDir *d, const json_t *items, PlanError *err)
{
        const char *key;
        json_t *v;
        size_t i;
        int r;

        if (!items)
                return 0;
        if (json_is_array(items)) {
                json_array_foreach ((json_t *)items, i, v)
                        if ((r = put_item(f, d, v, NULL, err)) != 0)
                                return r;
                return 0;
        }
        if (json_is_object(items)) {
                json_object_foreach ((json_t *)items, key, v)
                        if ((r = put_file(f, d, key, NULL, err)) != 0)
                                return r;
                return 0;
        }
        if (pyjson_is_string(items)) {
                const char *s = json_string_value(items);
                size_t len = json_string_length(items);

                for (i = 0; i < len;) {
                        char ch[5] = {0};
                        uint32_t cp;
                        int n = utf8_decode(s + i, len - i, &cp);

                        if (n < 0)
                                return -EILSEQ;
                        memcpy(ch, s + i, (size_t)n);
                        if ((r = put_file(f, d, ch, NULL, err)) != 0)
                                return r;
                        i += (size_t)n;
                }
                return 0;
        }
        return files_fail(err, PLAN_CODE_EXCEPTION, "'%s' object is not iterable",
                          pyrepr_type_name(items));
}

int files_prepare_script(Files *f, const char *script, char **ret_path, PlanError *err)
{
        ScriptDir d = {.script = script, .fd = -1};
        const json_t *info, *type;
        char *path = NULL;
        const char *problem;
        int r;

        info = json_object_get(json_object_get(f->plan, "Scripts"), script);
        if (!json_is_object(info))
                return -ENOENT;
        problem = files_component_problem(script, strlen(script));
        if (problem)
                return fail_repr(err, PLAN_CODE_EXCEPTION, "Invalid script name ", script, problem);
        d.path = path_join(f->cache, script);
        if (!d.path)
                return -ENOMEM;

        r = put_items(f, &d, json_object_get(info, "Files"), err);
        if (r == 0) {
                type = json_object_get(info, "Type");
                const json_t *ep = json_object_get(info, "EntryPoint");
                if (!pyjson_is_string(type) || !streq(json_string_value(type), "Application"))
                        r = script_dir_open(f, &d, err);
                else if (!ep)
                        r = files_fail(err, PLAN_CODE_EXCEPTION, "'EntryPoint'");
                else
                        r = put_item(f, &d, ep, &path, err);
                if (r == 0 && !path)
                        path = TAKE_PTR(d.path);
        }
        if (d.fd >= 0)
                close(d.fd);
        free(d.path);
        if (r != 0) {
                free(path);
                return r;
        }
        *ret_path = path;
        return 0;
}
