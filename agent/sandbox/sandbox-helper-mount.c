/* The mount steps of muranoagent-sandbox, run inside the mount namespace the
 * helper has just unshared: read-only views of system paths, writable plan
 * directories, a private /tmp and a /proc for a new pid namespace. Nothing
 * here is visible outside the namespace, and every step that fails ends the
 * helper with a status line. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-helper.h"
#include "sandbox-protocol.h"

/* The kernel ignores the source and type of a remount, a bind and a
 * propagation change; they are given as "none" rather than NULL so that
 * memory checkers do not flag them. */

/* The two directories --private-tmp replaces with empty tmpfs mounts. */
static const char *const tmp_dirs[] = {"/tmp", "/var/tmp"};

/* One line of /proc/self/mountinfo, reduced to what a remount needs. */
typedef struct MountEntry {
        char *point;         /* owned; the mount point, unescaped */
        unsigned long flags; /* MS_NOSUID, MS_NODEV, MS_NOEXEC as set on the mount */
} MountEntry;

typedef struct MountTable {
        MountEntry *entries; /* owned; in mount order, so the topmost mount of a point is last */
        size_t n;
} MountTable;

static void mount_table_free(MountTable *t)
{
        for (size_t i = 0; i < t->n; i++)
                free(t->entries[i].point);
        free(t->entries);
        t->entries = NULL;
        t->n = 0;
}

/* The kernel writes space, tab, newline and backslash in mountinfo paths as
 * octal escapes ("\040"). Decode them in place. */
static void unescape_octal(char *s)
{
        char *w = s;

        for (const char *r = s; *r; w++) {
                if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
                    r[3] >= '0' && r[3] <= '7') {
                        *w = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
                        r += 4;
                } else {
                        *w = *r++;
                }
        }
        *w = '\0';
}

/* A bind remount sets the per-mount flags to exactly what it is given, so it
 * must repeat nosuid, nodev and noexec or it would quietly lift them. The
 * atime flags are left out on purpose: the kernel keeps them when a remount
 * names none. */
static unsigned long options_to_flags(char *opts)
{
        unsigned long flags = 0;
        char *save = NULL;

        for (char *o = strtok_r(opts, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
                if (strcmp(o, "nosuid") == 0)
                        flags |= MS_NOSUID;
                else if (strcmp(o, "nodev") == 0)
                        flags |= MS_NODEV;
                else if (strcmp(o, "noexec") == 0)
                        flags |= MS_NOEXEC;
        }
        return flags;
}

/* Read the mount table as this process sees it now. A line looks like
 * "36 35 98:0 /root /mount/point rw,nosuid master:1 - ext4 /dev/sda1 rw":
 * the fifth field is the mount point and the sixth the per-mount options. */
static void mount_table_read(MountTable *ret)
{
        MountTable t = {NULL, 0};
        size_t cap = 0, len = 0;
        char *line = NULL;
        FILE *f = fopen("/proc/self/mountinfo", "re");

        if (!f)
                helper_die(errno, "open /proc/self/mountinfo");
        while (getline(&line, &len, f) > 0) {
                char *save = NULL, *field[6];
                size_t i;

                field[0] = strtok_r(line, " ", &save);
                for (i = 1; i < 6 && field[i - 1]; i++)
                        field[i] = strtok_r(NULL, " ", &save);
                if (!field[5])
                        helper_die(0, "/proc/self/mountinfo: unexpected line");
                if (t.n == cap) {
                        cap = cap ? cap * 2 : 64;
                        t.entries = realloc(t.entries, cap * sizeof(*t.entries));
                        if (!t.entries)
                                helper_die(ENOMEM, "read /proc/self/mountinfo");
                }
                unescape_octal(field[4]);
                t.entries[t.n].point = strdup(field[4]);
                if (!t.entries[t.n].point)
                        helper_die(ENOMEM, "read /proc/self/mountinfo");
                t.entries[t.n].flags = options_to_flags(field[5]);
                t.n++;
        }
        free(line);
        fclose(f);
        *ret = t;
}

/* Whether path is dir itself or lies below it; both are canonical. */
static bool path_is_under(const char *path, const char *dir)
{
        size_t n = strlen(dir);

        if (strcmp(dir, "/") == 0)
                return true;
        return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* The topmost mount at point, or NULL when point is not a mount point. */
static const MountEntry *mount_table_top(const MountTable *t, const char *point)
{
        for (size_t i = t->n; i > 0; i--)
                if (strcmp(t->entries[i - 1].point, point) == 0)
                        return &t->entries[i - 1];
        return NULL;
}

static void resolve(const char *what, const char *path, char real[static PATH_MAX])
{
        if (!realpath(path, real))
                helper_die(errno, "%s %s", what, path);
}

/* Make path and every mount below it read-only. A path that is not a mount
 * point is first bound onto itself, because read-only is a property of a
 * mount, not of a directory. Mounts below path are remounted one by one: the
 * kernel applies MS_RDONLY to a single mount, so a recursive bind alone would
 * leave, say, a separate /home writable under a read-only /. */
static void make_read_only(const char *path)
{
        char real[PATH_MAX];
        MountTable t;

        resolve("read-only", path, real);
        mount_table_read(&t);
        if (!mount_table_top(&t, real)) {
                if (mount(real, real, "none", MS_BIND | MS_REC, NULL) < 0)
                        helper_die(errno, "read-only %s: bind", real);
                mount_table_free(&t);
                mount_table_read(&t);
        }
        for (size_t i = 0; i < t.n; i++) {
                const MountEntry *e = &t.entries[i];

                /* A remount reaches the topmost mount of a point; use that
                 * mount's own flags, once. */
                if (!path_is_under(e->point, real) || mount_table_top(&t, e->point) != e)
                        continue;
                if (mount("none", e->point, "none", MS_REMOUNT | MS_BIND | MS_RDONLY | e->flags,
                          NULL) < 0)
                        helper_die(errno, "read-only %s: remount %s", real, e->point);
        }
        mount_table_free(&t);
}

/* Bind path onto itself and make that new mount writable. The bind copies
 * the read-only flag of the mount it was taken from, hence the remount. Only
 * the top mount becomes writable; mounts below path keep their flags. */
static void make_writable(const char *path, bool private_tmp)
{
        char real[PATH_MAX];
        const MountEntry *top;
        MountTable t;

        resolve("writable", path, real);
        /* The tmpfs of --private-tmp is mounted after this bind and would
         * hide it: refuse rather than hand the script a directory that is
         * silently not the one it was given. */
        for (size_t i = 0; private_tmp && i < sizeof(tmp_dirs) / sizeof(tmp_dirs[0]); i++)
                if (path_is_under(real, tmp_dirs[i]))
                        helper_die(0, "writable %s: would be hidden by --private-tmp", real);
        if (mount(real, real, "none", MS_BIND | MS_REC, NULL) < 0)
                helper_die(errno, "writable %s: bind", real);
        mount_table_read(&t);
        top = mount_table_top(&t, real);
        if (!top)
                helper_die(0, "writable %s: bind mount not found in /proc/self/mountinfo", real);
        if (mount("none", real, "none", MS_REMOUNT | MS_BIND | top->flags, NULL) < 0)
                helper_die(errno, "writable %s: remount", real);
        mount_table_free(&t);
}

/* The flags of every view that hides something: nothing on it can be
 * executed, set-user-ID or opened as a device. */
#define MASK_FLAGS (MS_NOSUID | MS_NODEV | MS_NOEXEC)

/* Remount the mount at path read-only, with the per-mount flags keep (a
 * bind remount sets them all anew). */
static void seal(const char *what, const char *path, unsigned long keep)
{
        if (mount("none", path, "none", MS_REMOUNT | MS_BIND | MS_RDONLY | keep, NULL) < 0)
                helper_die(errno, "%s %s: remount read-only", what, path);
}

/* Bind dir_fd's entry name (a path below the directory that dir_fd
 * holds, which may be hidden by now) onto target, through /proc's link to
 * the descriptor. */
static void bind_from_fd(const char *what, int dir_fd, const char *name, const char *target)
{
        char source[64 + PATH_MAX];

        snprintf(source, sizeof(source), "/proc/self/fd/%d%s%s", dir_fd, *name ? "/" : "", name);
        if (mount(source, target, "none", MS_BIND | MS_REC, NULL) < 0)
                helper_die(errno, "%s %s: bind", what, target);
}

/* mkdir -p of path, each new directory with mode (search only for
 * others: they must pass, not list). */
static void make_dirs(const char *what, const char *path, mode_t mode)
{
        char buf[PATH_MAX];

        snprintf(buf, sizeof(buf), "%s", path);
        for (char *p = buf + 1;; p++) {
                if (*p != '/' && *p != '\0')
                        continue;
                char c = *p;

                *p = '\0';
                if (mkdir(buf, mode) < 0 && errno != EEXIST)
                        helper_die(errno, "%s: mkdir %s", what, buf);
                *p = c;
                if (c == '\0')
                        return;
        }
}

/* Hide the directory real behind an empty read-only tmpfs. Each writable
 * path below it (the plan's own directory below the agent's storage) is
 * bound back in, at the same place: the binds made by make_writable() are
 * opened before the tmpfs covers them. */
static void mask_dir(const HelperMounts *m, const char *real)
{
        int *fds = calloc(m->n_writable + 1, sizeof(*fds));
        char(*kept)[PATH_MAX] = calloc(m->n_writable + 1, sizeof(*kept));
        size_t n = 0;

        if (!fds || !kept)
                helper_die(ENOMEM, "mask %s", real);
        for (size_t i = 0; i < m->n_writable; i++) {
                if (!realpath(m->writable[i], kept[n]) || !path_is_under(kept[n], real))
                        continue;
                /* The script's own directory: nothing to hide. */
                if (strcmp(kept[n], real) == 0)
                        goto done;
                fds[n] = open(kept[n], O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (fds[n] < 0)
                        helper_die(errno, "mask %s: open %s", real, kept[n]);
                n++;
        }
        if (mount("tmpfs", real, "tmpfs", MASK_FLAGS, "mode=0711") < 0)
                helper_die(errno, "mask %s: mount tmpfs", real);
        for (size_t i = 0; i < n; i++) {
                make_dirs("mask", kept[i], 0711);
                bind_from_fd("mask", fds[i], "", kept[i]);
        }
        seal("mask", real, MASK_FLAGS);
done:
        for (size_t i = 0; i < n; i++)
                close(fds[i]);
        free(fds);
        free(kept);
}

/* Hide path: a directory behind an empty tmpfs, anything else (a file, a
 * socket) behind /dev/null on a nodev mount, which cannot be opened or
 * connected to at all. A path that does not exist is skipped. */
static void mask_path(const HelperMounts *m, const char *path)
{
        char real[PATH_MAX];
        struct stat st;

        if (!realpath(path, real)) {
                if (errno == ENOENT)
                        return;
                helper_die(errno, "mask %s", path);
        }
        if (stat(real, &st) < 0)
                helper_die(errno, "mask %s", real);
        if (S_ISDIR(st.st_mode)) {
                mask_dir(m, real);
                return;
        }
        if (mount("/dev/null", real, "none", MS_BIND, NULL) < 0)
                helper_die(errno, "mask %s: bind /dev/null", real);
        seal("mask", real, MASK_FLAGS);
}

/* The device nodes a script gets with --protect-kernel: no disk, no
 * memory, no kernel interface, only what programs expect to find. */
static const char *const safe_devices[] = {"null", "zero", "full", "random", "urandom", "tty"};
static const char *const dev_links[][2] = {
        {"fd", "/proc/self/fd"},       {"stdin", "/proc/self/fd/0"}, {"stdout", "/proc/self/fd/1"},
        {"stderr", "/proc/self/fd/2"}, {"ptmx", "pts/ptmx"},
};

/* A new /dev: a tmpfs with the safe devices bound in from the old one,
 * its pts, a private shm and the usual links; then read-only. Opening a
 * disk raw would bypass every hidden path and every read-only mount. */
static void private_dev(void)
{
        char path[PATH_MAX], link[PATH_MAX];
        int old = open("/dev", O_PATH | O_DIRECTORY | O_CLOEXEC);
        ssize_t n;

        if (old < 0)
                helper_die(errno, "protect-kernel: open /dev");
        if (mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755") < 0)
                helper_die(errno, "protect-kernel: mount tmpfs on /dev");
        for (size_t i = 0; i < sizeof(safe_devices) / sizeof(safe_devices[0]); i++) {
                struct stat st;
                int fd;

                if (fstatat(old, safe_devices[i], &st, 0) < 0)
                        continue;
                snprintf(path, sizeof(path), "/dev/%s", safe_devices[i]);
                fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
                if (fd < 0)
                        helper_die(errno, "protect-kernel: create %s", path);
                close(fd);
                bind_from_fd("protect-kernel", old, safe_devices[i], path);
        }
        if (mkdir("/dev/pts", 0755) < 0 || mkdir("/dev/shm", 01777) < 0)
                helper_die(errno, "protect-kernel: mkdir in /dev");
        if (faccessat(old, "pts/ptmx", F_OK, 0) == 0)
                bind_from_fd("protect-kernel", old, "pts", "/dev/pts");
        if (mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") < 0)
                helper_die(errno, "protect-kernel: mount tmpfs on /dev/shm");
        for (size_t i = 0; i < sizeof(dev_links) / sizeof(dev_links[0]); i++) {
                snprintf(path, sizeof(path), "/dev/%s", dev_links[i][0]);
                if (symlink(dev_links[i][1], path) < 0)
                        helper_die(errno, "protect-kernel: symlink %s", path);
        }
        /* syslog(3) writes to /dev/log, a link into /run under systemd. */
        n = readlinkat(old, "log", link, sizeof(link) - 1);
        if (n > 0) {
                link[n] = '\0';
                if (symlink(link, "/dev/log") < 0)
                        helper_die(errno, "protect-kernel: symlink /dev/log");
        }
        close(old);
        seal("protect-kernel", "/dev", MS_NOSUID | MS_NOEXEC);
}

/* The kernel's knobs in /proc stay readable, never writable: a root that
 * could write kernel.core_pattern or kernel.modprobe would have the kernel
 * run a program of its choice outside every namespace. */
static const char *const proc_read_only[] = {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq",
                                             "/proc/bus", "/proc/fs"};

static void protect_proc(void)
{
        for (size_t i = 0; i < sizeof(proc_read_only) / sizeof(proc_read_only[0]); i++)
                if (access(proc_read_only[i], F_OK) == 0)
                        make_read_only(proc_read_only[i]);
}

/* /sys read-only (its uevent_helper would be the same kind of door as
 * core_pattern) and no cgroupfs under it: a process that reached its
 * cgroup's parents could leave the run's cgroup and outlive the plan. */
static void protect_sys(void)
{
        struct stat st;

        if (access("/sys", F_OK) == 0)
                make_read_only("/sys");
        if (stat("/sys/fs/cgroup", &st) == 0 && S_ISDIR(st.st_mode)) {
                if (mount("tmpfs", "/sys/fs/cgroup", "tmpfs", MASK_FLAGS, "mode=0755") < 0)
                        helper_die(errno, "protect-kernel: hide /sys/fs/cgroup");
                seal("protect-kernel", "/sys/fs/cgroup", MASK_FLAGS);
        }
}

/* The order matters. Propagation is cut first, so that nothing below leaks
 * back into the agent's namespace. Read-only views come before writable
 * ones, so that a plan directory under a read-only / is re-opened for
 * writing rather than closed again. Masks and the kernel's protections
 * next, then the tmpfs mounts, so that the recursive read-only pass does
 * not reach them, and /proc last because it is mounted over whatever /
 * looks like by then (with its kernel knobs made read-only after it). */
void helper_mounts_apply(const HelperMounts *m)
{
        /* Slave rather than private: mounts the host makes later (a new disk)
         * still show up inside, while ours never go out. */
        if (mount("none", "/", "none", MS_REC | MS_SLAVE, NULL) < 0)
                helper_die(errno, "make / a slave mount");
        for (size_t i = 0; i < m->n_read_only; i++)
                make_read_only(m->read_only[i]);
        for (size_t i = 0; i < m->n_writable; i++)
                make_writable(m->writable[i], m->private_tmp);
        /* After the writable binds, which the masks keep; before the new
         * /dev, whose /dev/null they bind. */
        for (size_t i = 0; i < m->n_masks; i++)
                mask_path(m, m->masks[i]);
        if (m->protect_kernel) {
                protect_sys();
                private_dev();
        }
        for (size_t i = 0; m->private_tmp && i < sizeof(tmp_dirs) / sizeof(tmp_dirs[0]); i++)
                if (mount("tmpfs", tmp_dirs[i], "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") < 0)
                        helper_die(errno, "private tmp: mount tmpfs on %s", tmp_dirs[i]);
        if (m->fresh_proc &&
            mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
                helper_die(errno, "mount /proc");
        if (m->protect_kernel)
                protect_proc();
}
