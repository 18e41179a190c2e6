/* The journal's file operations: the system-call table that tests replace,
 * atomic and durable writes, and tree removal. Whole-file reads (through
 * util/fileio.h's file_read_regular_at) go straight to the system; the
 * calls that change the disk, the clock, and the ones that look at the
 * disk without reading a file (existence, status, listings) pass through
 * JournalOps, which is what the fault-injection tests and the tests that
 * count the disk work of a call need. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "journal/journal-internal.h"
#include "util/macro.h"

static int sys_openat(int dirfd, const char *path, int flags, mode_t mode)
{
        return openat(dirfd, path, flags, mode);
}

/* posix_fallocate() writes zeros where the file system has no
 * fallocate(), so the reserve is real on any of them. It takes no mode:
 * the journal only ever asks for mode 0. */
static int sys_fallocate(int fd, int mode, off_t offset, off_t len)
{
        int r = posix_fallocate(fd, offset, len);

        if (r != 0) {
                errno = r;
                return -1;
        }
        return 0;
}

const JournalOps journal_sys_ops = {
        .mkdirat = mkdirat,
        .openat = sys_openat,
        .write = write,
        .fsync = fsync,
        .renameat = renameat,
        .unlinkat = unlinkat,
        .clock_gettime = clock_gettime,
        .linkat = linkat,
        .faccessat = faccessat,
        .fstatat = fstatat,
        .fdopendir = fdopendir,
        .fallocate = sys_fallocate,
        .ftruncate = ftruncate,
        .pwrite = pwrite,
        .fdatasync = fdatasync,
        .fsetxattr = fsetxattr,
        .sync_file_range = sync_file_range,
        .syncfs = syncfs,
};

bool journal_ts_valid(const char *name)
{
        size_t n = strspn(name, "0123456789");

        return n > 0 && n < JOURNAL_TS_MAX && name[n] == '\0';
}

int journal_open_dir(Journal *j, int dirfd, const char *path)
{
        int fd = j->ops.openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW, 0);

        return fd < 0 ? -errno : fd;
}

int journal_entry_dir(Journal *j, const char *ts)
{
        int fd;

        if (j->entry_fd >= 0 && streq(j->entry_ts, ts))
                return j->entry_fd;
        fd = journal_open_dir(j, j->plans_fd, ts);
        if (fd < 0)
                return fd;
        journal_entry_dir_drop(j, NULL);
        j->entry_fd = fd;
        snprintf(j->entry_ts, sizeof(j->entry_ts), "%s", ts);
        return fd;
}

void journal_entry_dir_drop(Journal *j, const char *ts)
{
        if (j->entry_fd < 0 || (ts && !streq(j->entry_ts, ts)))
                return;
        close(j->entry_fd);
        j->entry_fd = -1;
        j->entry_ts[0] = '\0';
}

int journal_list_open(Journal *j, int dirfd, DIR **ret)
{
        int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d;

        if (fd < 0)
                return -errno;
        d = j->ops.fdopendir(fd);
        if (!d) {
                close(fd);
                return -ENOMEM;
        }
        *ret = d;
        return 0;
}

int journal_sync(Journal *j, int fd)
{
        return j->ops.fsync(fd) < 0 ? -errno : 0;
}

int journal_now(Journal *j, struct timespec *ret)
{
        return j->ops.clock_gettime(CLOCK_REALTIME, ret) < 0 ? -errno : 0;
}

int journal_write_fd(Journal *j, int fd, const void *data, size_t len)
{
        const char *p = data;

        if (j->sealing)
                journal_file_seal_update(j->sealing, data, len);
        while (len > 0) {
                ssize_t n = j->ops.write(fd, p, len);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        return -EIO;
                p += n;
                len -= (size_t)n;
        }
        return 0;
}

int journal_pwrite_all(const JournalOps *ops, int fd, const void *data, size_t len, off_t off)
{
        const char *p = data;

        for (size_t done = 0; done < len;) {
                ssize_t k = ops->pwrite(fd, p + done, len - done, off + (off_t)done);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return k < 0 ? -errno : -EIO;
                done += (size_t)k;
        }
        return 0;
}

typedef struct Bytes {
        const void *data;
        size_t len;
} Bytes;

static int fill_bytes(Journal *j, int fd, void *userdata)
{
        const Bytes *b = userdata;

        return journal_write_fd(j, fd, b->data, b->len);
}

/* fill into fd, sealed as kind and seal (NULL: not sealed). */
static int fill_sealed(Journal *j, int fd, JournalFill fill, void *userdata, const char *kind,
                       const char *seal)
{
        JournalFileSealer s;
        int r;

        if (!seal || !j->sealed)
                return fill(j, fd, userdata);
        r = journal_file_seal_begin(j, &s, kind, seal);
        if (r < 0)
                return r;
        j->sealing = &s;
        r = fill(j, fd, userdata);
        j->sealing = NULL;
        if (r < 0) {
                journal_file_seal_abort(&s);
                return r;
        }
        return journal_file_seal_end(j, &s, fd);
}

/* dirfd/tmp with what fill writes, fsync'd when sync is set. On failure
 * tmp is removed. */
static int write_tmp(Journal *j, int dirfd, const char *tmp, JournalFill fill, void *userdata,
                     bool sync, const char *kind, const char *seal)
{
        int fd, r;

        fd = j->ops.openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return -errno;
        r = fill_sealed(j, fd, fill, userdata, kind, seal);
        if (r == 0 && sync)
                r = journal_sync(j, fd);
        /* close() after a successful fsync cannot lose data that fsync
         * did not already report, so its result is not consulted. Without
         * an fsync there is no promise for close() to break either. */
        close(fd);
        if (r < 0)
                (void)j->ops.unlinkat(dirfd, tmp, 0);
        return r;
}

int journal_write_replace(Journal *j, int dirfd, const char *tmp, const char *name,
                          const void *data, size_t len, const char *seal)
{
        Bytes b = {data, len};
        int r = write_tmp(j, dirfd, tmp, fill_bytes, &b, false, name, seal);

        if (r < 0)
                return r;
        if (j->ops.renameat(dirfd, tmp, dirfd, name) < 0) {
                r = -errno;
                (void)j->ops.unlinkat(dirfd, tmp, 0);
        }
        return r;
}

int journal_write_atomic_with(Journal *j, int dirfd, const char *tmp, const char *name,
                              JournalFill fill, void *userdata, bool undo, const char *seal)
{
        int r;

        r = write_tmp(j, dirfd, tmp, fill, userdata, true, name, seal);
        if (r < 0)
                return r;
        if (j->ops.renameat(dirfd, tmp, dirfd, name) < 0) {
                r = -errno;
                goto fail_tmp;
        }
        r = journal_sync(j, dirfd);
        if (r < 0 && undo)
                (void)j->ops.unlinkat(dirfd, name, 0);
        return r;

fail_tmp:
        (void)j->ops.unlinkat(dirfd, tmp, 0);
        return r;
}

int journal_write_atomic(Journal *j, int dirfd, const char *tmp, const char *name, const void *data,
                         size_t len, bool undo, const char *seal)
{
        Bytes b = {data, len};

        return journal_write_atomic_with(j, dirfd, tmp, name, fill_bytes, &b, undo, seal);
}

int journal_write_slot(Journal *j, int dirfd, const char *slot, const char *name, const void *data,
                       size_t len, const char *seal)
{
        Bytes b = {data, len};
        struct stat st;
        int fd, r;

        /* O_NONBLOCK: a FIFO planted under the slot's name must not hang
         * the call; it is no slot. */
        fd = j->ops.openat(dirfd, slot, O_WRONLY | O_TRUNC | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW,
                           0);
        if (fd < 0)
                return errno == ENOENT || errno == ELOOP || errno == EISDIR || errno == ENXIO
                               ? 1
                               : -errno;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                close(fd);
                return 1;
        }
        r = fill_sealed(j, fd, fill_bytes, &b, name, seal);
        if (r == 0)
                r = journal_sync(j, fd);
        if (r == 0 && j->ops.renameat(dirfd, slot, dirfd, name) < 0)
                r = -errno;
        /* Failed: no result. An empty slot is none, whatever its seal. */
        if (r < 0 && j->ops.ftruncate(fd, 0) < 0)
                (void)j->ops.unlinkat(dirfd, slot, 0);
        close(fd);
        return r;
}

bool journal_exists_at(Journal *j, int dirfd, const char *path)
{
        return j->ops.faccessat(dirfd, path, F_OK, 0) == 0;
}

/* Entries are a few levels deep at most (a plan's dir holds files); this
 * bound only stops a hostile tree from exhausting descriptors. */
#define RM_MAX_DEPTH 16

static int rm_rf(Journal *j, int parent_fd, const char *name, unsigned depth)
{
        int fd, r = 0;
        DIR *d;

        if (j->ops.unlinkat(parent_fd, name, 0) == 0 || errno == ENOENT)
                return 0;
        if (errno != EISDIR && errno != EPERM)
                return -errno;
        if (depth >= RM_MAX_DEPTH)
                return -ELOOP;
        fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        d = j->ops.fdopendir(fd);
        if (!d) {
                r = -errno;
                close(fd);
                return r;
        }
        for (struct dirent *de; (errno = 0, de = readdir(d));) {
                int q;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                q = rm_rf(j, dirfd(d), de->d_name, depth + 1);
                if (q < 0 && r == 0)
                        r = q;
        }
        if (errno != 0 && r == 0)
                r = -errno;
        closedir(d);
        if (r < 0)
                return r;
        if (j->ops.unlinkat(parent_fd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}

int journal_rm_rf_at(Journal *j, int dirfd, const char *name)
{
        return rm_rf(j, dirfd, name, 0);
}
