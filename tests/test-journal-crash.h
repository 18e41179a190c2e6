/* A model of a file system under power loss, for the journal's tests:
 * what the disk may hold after the power goes at any moment, computed from
 * the file operations the journal makes through JournalOps.
 *
 * The model is the worst case POSIX allows, which is close to ext4
 * without a journal (the bench machine's root file system):
 *
 *  - A file's data and size are what its last fsync() or fdatasync() left.
 *    Every write since may or may not have reached the disk, each 4 KiB
 *    block of each write independently (a write is torn at block bounds,
 *    and a later write may land where an earlier one did not: a hole of
 *    zeros); every truncation since, each on its own; and the size is the
 *    old one or the new one. POSIX promises nothing of unflushed data, and
 *    ext4 without a journal writes dirty pages back in any order.
 *  - A directory's names are what its last fsync() left. Every name change
 *    since (a creation, a link, an unlink, each half of a rename) may or
 *    may not be there, each independently: without a journal, nothing
 *    orders the directory's blocks, nor the two halves of a rename.
 *    Except (a weakening, for the reason below) in a directory of one
 *    block, whose changes land in order: the disk has its names as they
 *    were at some moment since its last fsync.
 *  - An inode that was never fsync'd but is named durably holds what was
 *    written to it as above, starting from empty: it may be empty, or hold
 *    its latest content, or any mix. Its extended attributes (the seals)
 *    belong to the inode: the ones of its last fsync() (fdatasync() does
 *    not promise them), or the latest.
 *  - A syncfs() made to fail (cm.syncfs_lose, a write-back error) loses
 *    every file write since the last flush, as Linux does to pages whose
 *    write-back failed: they are marked clean, and no later flush writes
 *    them. Such a file's next flush makes durable only what was written
 *    to it since (cm.inodes[].lost), over what the disk kept.
 *  - fsync() of a file does not make its name durable; fsync() of a
 *    directory does not make the inodes it names durable (ext4 without a
 *    journal writes only the directory's own blocks). syncfs() makes every
 *    change before it durable.
 *  - The write-ahead log's file, journal.log, written through
 *    JournalLogOps (cm_log_ops), is harder still, as its own design
 *    assumes (docs/journal.md, "The power-loss model"): its writes are
 *    torn per 512-byte sector, and a sector that did not get its new bytes
 *    may now and then (seeds from 2 on) hold zeros, its new bytes up to a
 *    random one, or garbage.
 *
 * How: the real file tree is the volatile state (the page cache), and the
 * model records, for every inode the journal touches, the durable facts
 * (a file's content and seal at its last flush, a directory's names at its
 * last fsync) and the changes since. An inode is known by its inode
 * number, which the model pins with an O_PATH descriptor so that no later
 * file gets the same number. At a crash point (after every operation the
 * model records), cm_image() builds the disk state in a fresh directory:
 * the durable facts plus a random subset of the changes since, each drawn
 * by a coin of a seeded generator (seed 0: none of them, the durable state
 * alone; seed 1: all of them, the volatile state; others: random, each
 * seed with its own bias). The
 * test then opens a journal on it and checks its promises.
 *
 * What the model leaves out, and why:
 *  - A directory of one block (one that never held more than
 *    CM_BLOCK_NAMES names since the model began) changes in order. With
 *    each change on its own, a power loss could leave neither name of a
 *    rename, and journal_put_result()'s rename of its fsync'd slot to
 *    result.json (not fsync'd: docs/journal.md, "Durability") would lose a
 *    stored result; or keep plan.json and lose `running` of an entry that
 *    journal_remove() was removing, and the answered plan would run again.
 *    No file system does that to a directory of one block: a journalling
 *    one commits its changes in order, ext2 and ext4 without a journal
 *    write the directory's one block whole (the names as they were when it
 *    was written back), and XFS keeps so few names in the inode. An
 *    entry's directory always is one (at most six short names); plans/
 *    and done/ are too in these scenarios, and a larger directory gets the
 *    independent changes.
 *  - A directory that a power loss leaves under two names (both halves of
 *    a rename of a directory) is built under the first one only: a
 *    directory has one name. The journal renames no directory.
 *  - journal.key, which journal_open() makes with the system calls and not
 *    through JournalOps, and whatever exists when the model starts, are
 *    taken as durable (the scenarios start from an opened journal).
 *  - A syncfs() that a power loss interrupts: it is the crash point
 *    before it, since any of the changes it would have written may land
 *    then anyway.
 *
 * One model at a time per process (a global); the tests drive it from one
 * thread. */
#pragma once

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "journal/journal-log.h"
#include "journal/journal.h"
#include "util/fileio.h"
#include "util/macro.h"

#define CM_BLOCK     4096
#define CM_SECTOR    512
#define CM_XATTR     "user.muranoagent.seal"
#define CM_XATTR_MAX 64
/* A directory that never held more names than this is one block: with
 * names of at most 255 bytes, an ext4 entry takes at most 264 bytes. */
#define CM_BLOCK_NAMES 15

typedef struct CmWrite {
        off_t off;
        size_t len; /* bytes written at off */
        char *data; /* NULL: a truncation to off */
} CmWrite;

typedef struct CmName {
        char name[NAME_MAX + 1];
        int ino; /* index in cm.inodes; -1: the name is removed */
} CmName;

typedef struct CmInode {
        dev_t dev;
        ino_t ino;
        int pin; /* O_PATH, so that the number is not given again */
        bool dir;
        /* Written through JournalLogOps: torn per sector, not per block. */
        bool sector;
        /* A file: its data, size and seal at the last flush, and the
         * writes and truncations since. */
        char *data;
        size_t len;
        unsigned char xattr[CM_XATTR_MAX];
        ssize_t xattr_len; /* -1: none */
        CmWrite *w;
        size_t n_w;
        /* Its writes before w were lost by a failed syncfs(): a flush
         * makes durable data plus w, not the file as it stands. */
        bool lost;
        /* A directory: its names at its last fsync. */
        CmName *names;
        size_t n_names;
        size_t max_names; /* the most it held at once since the model began */
        /* While an image is built: where this inode went ("" not yet). */
        char built[PATH_MAX];
} CmInode;

/* A name change in directory dir since its last fsync. */
typedef struct CmChange {
        int dir;
        CmName n;
} CmChange;

static struct {
        bool on; /* record (the scenario's journal); off while checking */
        CmInode *inodes;
        size_t n_inodes;
        CmChange *changes;
        size_t n_changes;
        int root;             /* the storage directory's inode */
        unsigned n_ops;       /* operations recorded */
        char last_op[64];     /* the last one, for messages */
        uint32_t rng, seed;   /* the coins of the image being built */
        bool strict;          /* no weakening: every directory's changes on their own */
        unsigned n_syncfs;    /* syncfs() calls recorded */
        unsigned syncfs_lose; /* the next this many syncfs() fail (EIO), losing writes */
        /* And the pages that failed are dropped from the page cache then
         * (memory pressure): the files read what the disk kept. */
        bool syncfs_evict;
        /* Called after every recorded operation: the crash point. */
        void (*point)(void);
} cm;

static inline int cm_find(const struct stat *st)
{
        for (size_t i = 0; i < cm.n_inodes; i++)
                if (cm.inodes[i].ino == st->st_ino && cm.inodes[i].dev == st->st_dev)
                        return (int)i;
        return -1;
}

static inline char *cm_read_fd(int fd, size_t *ret_len)
{
        char link[64];
        char *data = NULL;

        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        ck_assert_int_eq(file_read_all(link, 1 << 26, &data, ret_len), 0);
        return data;
}

static inline ssize_t cm_xattr_fd(int fd, unsigned char buf[CM_XATTR_MAX])
{
        char link[64];
        ssize_t n;

        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = getxattr(link, CM_XATTR, buf, CM_XATTR_MAX);
        return n < 0 ? -1 : n;
}

/* Take the inode of st (opened as fd, or at dirfd/path) into the model;
 * with durable, its present state is its durable one (an inode found at
 * the start), else it is new: empty and nameless on the disk. */
static inline int cm_add(int dirfd, const char *path, bool durable)
{
        CmInode *in;
        struct stat st;
        int pin = openat(dirfd, path, O_PATH | O_NOFOLLOW | O_CLOEXEC), k;

        ck_assert_int_ge(pin, 0);
        ck_assert_int_eq(fstat(pin, &st), 0);
        k = cm_find(&st);
        if (k >= 0) {
                close(pin);
                return k;
        }
        in = reallocarray(cm.inodes, cm.n_inodes + 1, sizeof(*in));
        ck_assert_ptr_nonnull(in);
        cm.inodes = in;
        in = &cm.inodes[cm.n_inodes];
        memset(in, 0, sizeof(*in));
        in->dev = st.st_dev;
        in->ino = st.st_ino;
        in->pin = pin;
        in->dir = S_ISDIR(st.st_mode);
        in->xattr_len = -1;
        if (durable && !in->dir) {
                in->data = cm_read_fd(pin, &in->len);
                in->xattr_len = cm_xattr_fd(pin, in->xattr);
        }
        return (int)cm.n_inodes++;
}

static inline int cm_of_fd(int fd)
{
        struct stat st;
        int k;

        ck_assert_int_eq(fstat(fd, &st), 0);
        k = cm_find(&st);
        ck_assert_msg(k >= 0, "an inode the model never saw (fd %d)", fd);
        return k;
}

/* The directory holding dirfd/path and the last component's name. */
static inline int cm_parent(int dirfd, const char *path, char name[NAME_MAX + 1])
{
        const char *slash = strrchr(path, '/');
        char dir[PATH_MAX];
        struct stat st;
        int fd, k;

        if (!slash) {
                snprintf(name, NAME_MAX + 1, "%s", path);
                return cm_of_fd(dirfd);
        }
        snprintf(name, NAME_MAX + 1, "%s", slash + 1);
        snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
        fd = openat(dirfd, dir[0] ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(fstat(fd, &st), 0);
        close(fd);
        k = cm_find(&st);
        ck_assert_msg(k >= 0, "a directory the model never saw: %s", dir);
        return k;
}

/* Directory k's names as they are now become its durable ones (at its
 * fsync, or at the start). */
static inline void cm_list(int k)
{
        int fd = openat(cm.inodes[k].pin, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CmName *v = NULL;
        size_t n = 0;
        struct dirent *de;
        DIR *d;

        /* An O_PATH descriptor cannot be listed: reopen it. */
        if (fd < 0) {
                char link[64];
                snprintf(link, sizeof(link), "/proc/self/fd/%d", cm.inodes[k].pin);
                fd = open(link, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        }
        ck_assert_int_ge(fd, 0);
        d = fdopendir(fd);
        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d))) {
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                v = reallocarray(v, n + 1, sizeof(*v));
                ck_assert_ptr_nonnull(v);
                snprintf(v[n].name, sizeof(v[n].name), "%s", de->d_name);
                v[n].ino = cm_add(dirfd(d), de->d_name, false);
                n++;
        }
        closedir(d);
        /* After cm_add(), which may move cm.inodes. */
        free(cm.inodes[k].names);
        cm.inodes[k].names = v;
        cm.inodes[k].n_names = n;
}

/* Everything under directory k as it is now, durable (the start). */
static inline void cm_take_durable(int k)
{
        cm_list(k);
        cm.inodes[k].max_names = cm.inodes[k].n_names;
        for (size_t i = 0; i < cm.inodes[k].n_names; i++) {
                int c = cm.inodes[k].names[i].ino;
                CmInode *in = &cm.inodes[c];

                if (in->dir) {
                        cm_take_durable(c);
                } else if (!in->data) {
                        in->data = cm_read_fd(in->pin, &in->len);
                        in->xattr_len = cm_xattr_fd(in->pin, in->xattr);
                }
        }
}

/* How many names directory k holds now. */
static inline size_t cm_count(int k)
{
        DIR *d = fdopendir(openat(cm.inodes[k].pin, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        size_t n = 0;

        ck_assert_ptr_nonnull(d);
        while (readdir(d))
                n++;
        closedir(d);
        return n - 2;
}

static inline void cm_change(int dir, const char *name, int ino)
{
        CmChange *v = reallocarray(cm.changes, cm.n_changes + 1, sizeof(*v));
        size_t n = cm_count(dir);

        ck_assert_ptr_nonnull(v);
        cm.changes = v;
        v[cm.n_changes].dir = dir;
        snprintf(v[cm.n_changes].n.name, sizeof(v[cm.n_changes].n.name), "%s", name);
        v[cm.n_changes].n.ino = ino;
        cm.n_changes++;
        if (n > cm.inodes[dir].max_names)
                cm.inodes[dir].max_names = n;
}

static inline void cm_write(int k, off_t off, const void *data, size_t len)
{
        CmInode *in = &cm.inodes[k];
        CmWrite *w = reallocarray(in->w, in->n_w + 1, sizeof(*w));

        ck_assert_ptr_nonnull(w);
        in->w = w;
        w[in->n_w] = (CmWrite){.off = off, .len = len, .data = data ? malloc(len ? len : 1) : NULL};
        if (data)
                memcpy(w[in->n_w].data, data, len);
        in->n_w++;
}

static inline void cm_drop_writes(CmInode *in)
{
        for (size_t i = 0; i < in->n_w; i++)
                free(in->w[i].data);
        free(in->w);
        in->w = NULL;
        in->n_w = 0;
}

/* File in's data as a flush leaves it on the disk (fd open on it): the
 * file as it stands, or after a loss what the disk kept with the writes
 * since. */
static inline void cm_flush_data(CmInode *in, int fd)
{
        struct stat st;
        size_t cap = in->len;
        char *buf;

        if (!in->lost) {
                free(in->data);
                in->data = cm_read_fd(fd, &in->len);
                return;
        }
        ck_assert_int_eq(fstat(fd, &st), 0);
        if ((size_t)st.st_size > cap)
                cap = (size_t)st.st_size;
        for (size_t i = 0; i < in->n_w; i++)
                if ((size_t)in->w[i].off + in->w[i].len > cap)
                        cap = (size_t)in->w[i].off + in->w[i].len;
        /* Zeros where the file grew and the disk got nothing. */
        buf = calloc(1, cap + 1);
        ck_assert_ptr_nonnull(buf);
        memcpy(buf, in->data ? in->data : "", in->len);
        for (size_t i = 0; i < in->n_w; i++) {
                const CmWrite *w = &in->w[i];

                if (w->data)
                        memcpy(buf + w->off, w->data, w->len);
                else if ((size_t)w->off < cap)
                        memset(buf + w->off, 0, cap - (size_t)w->off);
        }
        free(in->data);
        in->data = buf;
        in->len = (size_t)st.st_size;
        in->lost = false;
}

/* A flush of fd: fsync (with_xattr) or fdatasync. */
static inline void cm_flush(int fd, bool with_xattr)
{
        int k = cm_of_fd(fd);
        CmInode *in = &cm.inodes[k];

        if (in->dir) {
                size_t o = 0;

                cm_list(k);
                for (size_t i = 0; i < cm.n_changes; i++)
                        if (cm.changes[i].dir != k)
                                cm.changes[o++] = cm.changes[i];
                cm.n_changes = o;
                return;
        }
        cm_flush_data(in, fd);
        if (with_xattr)
                in->xattr_len = cm_xattr_fd(fd, in->xattr);
        cm_drop_writes(in);
}

/* The model records; then comes the crash point. */
static inline void cm_done(const char *op)
{
        cm.n_ops++;
        snprintf(cm.last_op, sizeof(cm.last_op), "%s", op);
        if (cm.point)
                cm.point();
}

static inline int cm_mkdirat(int dirfd, const char *path, mode_t mode)
{
        char name[NAME_MAX + 1];
        int r = mkdirat(dirfd, path, mode);

        if (r == 0 && cm.on) {
                cm_change(cm_parent(dirfd, path, name), name, cm_add(dirfd, path, false));
                cm_done("mkdirat");
        }
        return r;
}

static inline int cm_openat(int dirfd, const char *path, int flags, mode_t mode)
{
        char name[NAME_MAX + 1];
        struct stat st;
        bool existed = fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
        int fd = openat(dirfd, path, flags, mode), k;

        if (fd < 0 || !cm.on || (existed && !(flags & O_TRUNC)) || (!existed && !(flags & O_CREAT)))
                return fd;
        if (!existed) {
                k = cm_add(dirfd, path, false);
                cm_change(cm_parent(dirfd, path, name), name, k);
        } else {
                k = cm_of_fd(fd);
        }
        if ((flags & O_TRUNC) && existed)
                cm_write(k, 0, NULL, 0);
        cm_done(existed ? "openat (truncate)" : "openat (create)");
        return fd;
}

static inline ssize_t cm_pwrite(int fd, const void *buf, size_t n, off_t off)
{
        ssize_t r = pwrite(fd, buf, n, off);

        if (r > 0 && cm.on) {
                cm_write(cm_of_fd(fd), off, buf, (size_t)r);
                cm_done("pwrite");
        }
        return r;
}

static inline ssize_t cm_write_op(int fd, const void *buf, size_t n)
{
        struct stat st;
        off_t off = lseek(fd, 0, SEEK_CUR);
        ssize_t r;

        if (fcntl(fd, F_GETFL) & O_APPEND) {
                ck_assert_int_eq(fstat(fd, &st), 0);
                off = st.st_size;
        }
        r = write(fd, buf, n);
        if (r > 0 && cm.on) {
                cm_write(cm_of_fd(fd), off, buf, (size_t)r);
                cm_done("write");
        }
        return r;
}

static inline int cm_fsync(int fd)
{
        if (cm.on) {
                cm_flush(fd, true);
                cm_done("fsync");
        }
        return 0;
}

static inline int cm_fdatasync(int fd)
{
        if (cm.on) {
                cm_flush(fd, false);
                cm_done("fdatasync");
        }
        return 0;
}

static inline int cm_renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath)
{
        char oname[NAME_MAX + 1], nname[NAME_MAX + 1];
        int od = -1, k = -1;
        int r;

        if (cm.on) {
                od = cm_parent(olddirfd, oldpath, oname);
                k = cm_add(olddirfd, oldpath, false);
        }
        r = renameat(olddirfd, oldpath, newdirfd, newpath);
        if (r == 0 && cm.on) {
                int nd = cm_parent(newdirfd, newpath, nname);

                /* The new name first, as ext2 and ext4 make it: in a
                 * directory of one block a power loss leaves the old
                 * name, both or the new. */
                cm_change(nd, nname, k);
                cm_change(od, oname, -1);
                cm_done("renameat");
        }
        return r;
}

static inline int cm_linkat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
                            int flags)
{
        char name[NAME_MAX + 1];
        int r = linkat(olddirfd, oldpath, newdirfd, newpath, flags);

        if (r == 0 && cm.on) {
                cm_change(cm_parent(newdirfd, newpath, name), name,
                          cm_add(newdirfd, newpath, false));
                cm_done("linkat");
        }
        return r;
}

static inline int cm_unlinkat(int dirfd, const char *path, int flags)
{
        char name[NAME_MAX + 1];
        int d = -1, r;

        if (cm.on && faccessat(dirfd, path, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
                /* Pin it before it goes, so that its number stays its. */
                (void)cm_add(dirfd, path, false);
                d = cm_parent(dirfd, path, name);
        }
        r = unlinkat(dirfd, path, flags);
        if (r == 0 && d >= 0) {
                cm_change(d, name, -1);
                cm_done("unlinkat");
        }
        return r;
}

static inline int cm_ftruncate(int fd, off_t len)
{
        int r = ftruncate(fd, len);

        if (r == 0 && cm.on) {
                cm_write(cm_of_fd(fd), len, NULL, 0);
                cm_done("ftruncate");
        }
        return r;
}

static inline int cm_fallocate(int fd, int mode, off_t off, off_t len)
{
        struct stat st;
        int r;

        ck_assert_int_eq(fstat(fd, &st), 0);
        r = posix_fallocate(fd, off, len);
        if (r != 0) {
                errno = r;
                return -1;
        }
        (void)mode;
        /* Zeros as far as the new size: a truncation that grows it. */
        if (cm.on && off + len > st.st_size) {
                cm_write(cm_of_fd(fd), off + len, NULL, 0);
                cm_done("fallocate");
        }
        return 0;
}

static inline int cm_fsetxattr(int fd, const char *name, const void *value, size_t size, int flags)
{
        int r = fsetxattr(fd, name, value, size, flags);

        /* Nothing to record: a seal that was not fsync'd since is the
         * durable one or the latest, drawn when an image is built. */
        if (r == 0 && cm.on)
                cm_done("fsetxattr");
        return r;
}

static inline int cm_sync_file_range(int fd, off_t off, off_t n, unsigned int flags)
{
        /* A hint: it promises nothing, and the model keeps nothing. */
        (void)fd, (void)off, (void)n, (void)flags;
        return 0;
}

/* File in's pages dropped after their write-back failed: it reads what
 * the disk kept (its data at the last flush, zeros where it grew since),
 * its size as it stands. Not a change the model records: the page cache's. */
static inline void cm_evict(CmInode *in)
{
        char link[64];
        struct stat st;
        char *buf;
        int fd;

        snprintf(link, sizeof(link), "/proc/self/fd/%d", in->pin);
        fd = open(link, O_WRONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(fstat(fd, &st), 0);
        buf = calloc(1, (size_t)st.st_size + 1);
        ck_assert_ptr_nonnull(buf);
        memcpy(buf, in->data ? in->data : "",
               in->len < (size_t)st.st_size ? in->len : (size_t)st.st_size);
        ck_assert_int_eq(pwrite(fd, buf, (size_t)st.st_size, 0), st.st_size);
        free(buf);
        close(fd);
}

/* Every change recorded so far becomes durable: each file's data and seal
 * as they are now, each directory's names. */
static inline int cm_syncfs(int fd)
{
        (void)fd;
        if (!cm.on)
                return 0;
        if (cm.syncfs_lose > 0) {
                cm.syncfs_lose--;
                for (size_t k = 0; k < cm.n_inodes; k++) {
                        CmInode *in = &cm.inodes[k];

                        if (!in->dir && in->n_w > 0) {
                                cm_drop_writes(in);
                                in->lost = true;
                                if (cm.syncfs_evict)
                                        cm_evict(in);
                        }
                }
                cm.n_syncfs++;
                cm_done("syncfs (EIO)");
                errno = EIO;
                return -1;
        }
        /* By index: cm_list() may add inodes. */
        for (size_t k = 0; k < cm.n_inodes; k++) {
                CmInode *in = &cm.inodes[k];
                struct stat st;

                /* An inode no name holds any more is never built. */
                ck_assert_int_eq(fstat(in->pin, &st), 0);
                if (st.st_nlink == 0)
                        continue;
                if (in->dir) {
                        cm_list((int)k);
                        continue;
                }
                cm_flush_data(in, in->pin);
                in->xattr_len = cm_xattr_fd(in->pin, in->xattr);
                cm_drop_writes(in);
        }
        cm.n_changes = 0;
        cm.n_syncfs++;
        cm_done("syncfs");
        return 0;
}

/* The write-ahead log's writes: recorded like any other, and torn per
 * sector (the log's own power-loss model, docs/journal.md). */
static inline ssize_t cm_log_pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
        ssize_t r = pwritev(fd, iov, n, off);

        if (r > 0 && cm.on) {
                char *buf = malloc((size_t)r);
                size_t at = 0;
                int k = cm_of_fd(fd);

                ck_assert_ptr_nonnull(buf);
                for (int i = 0; i < n && at < (size_t)r; i++) {
                        size_t c =
                                iov[i].iov_len < (size_t)r - at ? iov[i].iov_len : (size_t)r - at;

                        if (c > 0) /* a record without payload: NULL */
                                memcpy(buf + at, iov[i].iov_base, c);
                        at += c;
                }
                cm.inodes[k].sector = true;
                cm_write(k, off, buf, (size_t)r);
                free(buf);
                cm_done("pwritev (log)");
        }
        return r;
}

static const JournalLogOps cm_log_ops _unused_ = {
        .pwritev = cm_log_pwritev,
        .fdatasync = cm_fdatasync,
        .fsync = cm_fsync,
        .openat = cm_openat,
        .renameat = cm_renameat,
        .unlinkat = cm_unlinkat,
};

static const JournalOps cm_ops _unused_ = {
        .mkdirat = cm_mkdirat,
        .openat = cm_openat,
        .write = cm_write_op,
        .fsync = cm_fsync,
        .renameat = cm_renameat,
        .unlinkat = cm_unlinkat,
        .linkat = cm_linkat,
        .fallocate = cm_fallocate,
        .ftruncate = cm_ftruncate,
        .pwrite = cm_pwrite,
        .fdatasync = cm_fdatasync,
        .fsetxattr = cm_fsetxattr,
        .sync_file_range = cm_sync_file_range,
        .syncfs = cm_syncfs,
};

/* Start modelling the tree at dir: all of it is durable now. */
static inline void cm_start(const char *dir)
{
        const char *strict = getenv("JOURNAL_CRASH_STRICT");

        memset(&cm, 0, sizeof(cm));
        cm.strict = strict && streq(strict, "1");
        cm.root = cm_add(AT_FDCWD, dir, true);
        cm_take_durable(cm.root);
        cm.on = true;
}

static inline void cm_stop(void)
{
        for (size_t i = 0; i < cm.n_inodes; i++) {
                close(cm.inodes[i].pin);
                free(cm.inodes[i].data);
                free(cm.inodes[i].names);
                cm_drop_writes(&cm.inodes[i]);
        }
        free(cm.inodes);
        free(cm.changes);
        memset(&cm, 0, sizeof(cm));
}

/* A coin of the image being built: seed 0 never, seed 1 always. */
static inline bool cm_coin(void)
{
        /* Each seed from 2 on has a bias: one that lands most changes
         * reaches the long runs of them (a directory of one block) that a
         * fair coin seldom does, one that lands few the durable state with
         * a change or two. In eighths. */
        static const unsigned bias[] = {4, 7, 1, 6, 2, 5, 3};

        if (cm.seed <= 1)
                return cm.seed == 1;
        cm.rng ^= cm.rng << 13;
        cm.rng ^= cm.rng >> 17;
        cm.rng ^= cm.rng << 5;
        return cm.rng % 8 < bias[(cm.seed - 2) % ELEMENTSOF(bias)];
}

/* A sector of the log that did not get its new bytes, at buf (len
 * bytes, new its new ones): rarely (seeds from 2 on) neither old nor new
 * either: zeros, the new bytes up to a random one and the old after, or
 * garbage. */
static inline void cm_damage(char *buf, const char *new, size_t len)
{
        size_t cut;

        if (cm.seed <= 1 || !cm_coin() || !cm_coin())
                return;
        cm.rng ^= cm.rng << 13;
        cm.rng ^= cm.rng >> 17;
        cm.rng ^= cm.rng << 5;
        cut = (cm.rng >> 2) % len;
        switch (cm.rng % 3) {
        case 0:
                memset(buf, 0, len);
                break;
        case 1:
                memcpy(buf, new, cut);
                break;
        default:
                for (size_t i = 0; i < len; i++)
                        buf[i] = (char)(cm.rng >> (i % 24));
                buf[cut] ^= 0x5a;
                break;
        }
}

/* What the disk holds of file inode k: its durable data, with a coin for
 * each block (each sector of the log) of each write since and each
 * truncation, and the old size or the new. */
static inline char *cm_file_image(int k, size_t *ret_len)
{
        CmInode *in = &cm.inodes[k];
        struct stat st;
        size_t len = in->len, cap = in->len + 1;
        char *buf = calloc(1, cap);

        ck_assert_ptr_nonnull(buf);
        memcpy(buf, in->data ? in->data : "", len);
        /* buf[len..cap) stays zeros: what a file grows into. */
        for (size_t i = 0; i < in->n_w; i++) {
                const CmWrite *w = &in->w[i];
                size_t end = (size_t)w->off + w->len;

                if (end + 1 > cap) {
                        buf = realloc(buf, end + 1);
                        ck_assert_ptr_nonnull(buf);
                        memset(buf + cap, 0, end + 1 - cap);
                        cap = end + 1;
                }
                if (!w->data) {
                        if (!cm_coin())
                                continue;
                        if (end < len)
                                memset(buf + end, 0, len - end);
                        len = end;
                        continue;
                }
                for (size_t at = (size_t)w->off; at < end;) {
                        size_t unit = in->sector ? CM_SECTOR : CM_BLOCK;
                        size_t stop = (at / unit + 1) * unit;

                        if (stop > end)
                                stop = end;
                        bool there = cm_coin();

                        if (there)
                                memcpy(buf + at, w->data + (at - (size_t)w->off), stop - at);
                        else if (in->sector)
                                cm_damage(buf + at, w->data + (at - (size_t)w->off), stop - at);
                        if (there && stop > len)
                                len = stop;
                        at = stop;
                }
        }
        /* The size: the one of the last flush, or the latest. */
        ck_assert_int_eq(fstat(in->pin, &st), 0);
        len = in->n_w > 0 && cm_coin() ? (size_t)st.st_size : in->len;
        if (len + 1 > cap) {
                buf = realloc(buf, len + 1);
                ck_assert_ptr_nonnull(buf);
                memset(buf + cap, 0, len + 1 - cap);
        }
        *ret_len = len;
        return buf;
}

static inline void cm_build_dir(int k, const char *path);

static inline void cm_build_name(int k, const char *dir, const char *name)
{
        CmInode *in = &cm.inodes[k];
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        if (in->dir) {
                /* A directory has one name: the first built. */
                if (in->built[0])
                        return;
                snprintf(in->built, sizeof(in->built), "%s", path);
                ck_assert_int_eq(mkdir(path, 0700), 0);
                cm_build_dir(k, path);
        } else if (in->built[0]) {
                ck_assert_int_eq(link(in->built, path), 0);
        } else {
                unsigned char x[CM_XATTR_MAX];
                ssize_t xl;
                size_t len;
                _cleanup_free_ char *data = cm_file_image(k, &len);
                int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

                ck_assert_int_ge(fd, 0);
                ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
                /* The seal: the one of its last fsync, or the latest. */
                xl = in->xattr_len;
                memcpy(x, in->xattr, sizeof(x));
                if (cm_coin())
                        xl = cm_xattr_fd(in->pin, x);
                if (xl >= 0)
                        ck_assert_int_eq(fsetxattr(fd, CM_XATTR, x, (size_t)xl, 0), 0);
                close(fd);
                snprintf(in->built, sizeof(in->built), "%s", path);
        }
}

static inline void cm_build_dir(int k, const char *path)
{
        CmInode *in = &cm.inodes[k];
        CmName *v = malloc((in->n_names + cm.n_changes + 1) * sizeof(*v));
        size_t n = in->n_names;

        ck_assert_ptr_nonnull(v);
        if (n > 0)
                memcpy(v, in->names, n * sizeof(*v));
        /* Each change since the last fsync, or not, on its own; in a
         * directory of one block, the changes in order up to one that
         * did not land (the header says why). */
        bool one_block = !cm.strict && in->max_names <= CM_BLOCK_NAMES, landing = true;

        for (size_t i = 0; i < cm.n_changes; i++) {
                const CmChange *c = &cm.changes[i];
                size_t at = 0;

                if (c->dir != k)
                        continue;
                landing = (landing || !one_block) && cm_coin();
                if (!landing)
                        continue;
                while (at < n && !streq(v[at].name, c->n.name))
                        at++;
                if (at == n)
                        n++;
                v[at] = c->n;
        }
        for (size_t i = 0; i < n; i++)
                if (v[i].ino >= 0)
                        cm_build_name(v[i].ino, path, v[i].name);
        free(v);
}

/* Build what the disk holds after a power loss now, with seed, in dir
 * (made; it must not exist). */
static inline void cm_image(uint32_t seed, const char *dir)
{
        bool on = cm.on;

        cm.on = false;
        cm.seed = seed;
        cm.rng = seed * 0x9e3779b9u + 1;
        for (size_t i = 0; i < cm.n_inodes; i++)
                cm.inodes[i].built[0] = '\0';
        snprintf(cm.inodes[cm.root].built, PATH_MAX, "%s", dir);
        ck_assert_int_eq(mkdir(dir, 0700), 0);
        cm_build_dir(cm.root, dir);
        cm.on = on;
}
