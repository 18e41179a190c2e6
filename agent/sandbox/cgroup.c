/* Where run cgroups go (see cgroup.h). Making them is in cgroup-run.c,
 * emptying and removing them in cgroup-kill.c.
 *
 * Decisions, explained at more length in docs/sandbox.md:
 * - v2 is looked for at <sysfs> (a pure v2 system) and <sysfs>/unified (the
 *   v2 part of a hybrid system). Run cgroups are children of the agent's own
 *   cgroup, the one /proc/self/cgroup names, which is the part of the tree
 *   that is the agent's to manage (systemd: Delegate=yes).
 * - v2 allows controllers in a cgroup's subtree_control only when the cgroup
 *   itself holds no processes (the root excepted). The agent therefore moves
 *   itself into a leaf child "agent" first, as systemd's delegation rules
 *   ask. If its cgroup also holds processes that are not the agent's, they
 *   are not moved: v2 is then unavailable and the reason says so.
 * - v1 has no such rule: run cgroups are made directly under the agent's own
 *   cgroup of the memory and pids hierarchies.
 * - Only the controllers for limits that are set are required. With no
 *   limit at all a cgroup is still made, because killing a cgroup is the one
 *   sure way to kill a whole tree: then any writable hierarchy will do. */
#include "sandbox/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/cgroup-internal.h"
#include "util/fileio.h"
#include "util/strbuf.h"

#define CGROUP_FILE_MAX (16u << 20)

const CgroupController cgroup_controllers[CGROUP_N_CONTROLLERS] = {
        {CGROUP_CTL_MEMORY, "memory", "memory.limit_in_bytes", "memory.max", "memory.oom_control",
         "memory.events", "oom_kill"},
        {CGROUP_CTL_PIDS, "pids", "pids.max", "pids.max", "pids.events", "pids.events", "max"},
};

int cgroup_file_read(const char *dir, const char *name, char **ret)
{
        _cleanup_free_ char *path = NULL;

        if (asprintf(&path, "%s/%s", dir, name) < 0)
                return -ENOMEM;
        return file_read_all(path, CGROUP_FILE_MAX, ret, NULL);
}

int cgroup_file_write(const char *dir, const char *name, const char *text)
{
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -1;
        size_t len = strlen(text);

        if (asprintf(&path, "%s/%s", dir, name) < 0)
                return -ENOMEM;
        fd = open(path, O_WRONLY | O_CLOEXEC | O_CREAT | O_TRUNC | O_NOCTTY, 0644);
        if (fd < 0)
                return -errno;
        if (write(fd, text, len) != (ssize_t)len)
                return errno ? -errno : -EIO;
        return 0;
}

bool cgroup_list_has(const char *list, const char *word)
{
        size_t n = strlen(word);

        for (const char *p = list; (p = strstr(p, word)); p += n)
                if ((p == list || strchr(" \t\n", p[-1])) &&
                    (p[n] == '\0' || strchr(" \t\n", p[n])))
                        return true;
        return false;
}

int cgroup_procs_read(const char *dir, pid_t **ret, size_t *ret_n)
{
        _cleanup_free_ char *text = NULL;
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0, cap = 0;
        int r = cgroup_file_read(dir, "cgroup.procs", &text);

        if (r == -ENOENT) {
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        if (r < 0)
                return r;
        for (char *p = text, *end; *p; p = end) {
                long v = strtol(p, &end, 10);

                if (end == p)
                        break;
                if (n == cap) {
                        pid_t *np = realloc(pids, (cap = cap ? cap * 2 : 64) * sizeof(*np));

                        if (!np)
                                return -ENOMEM;
                        pids = np;
                }
                pids[n++] = (pid_t)v;
        }
        *ret = TAKE_PTR(pids);
        *ret_n = n;
        return 0;
}

/* Return CGROUP_UNAVAILABLE with a reason, or -ENOMEM. */
static int unavailable(char **reason, const char *fmt, ...) _printf_(2, 3);
static int unavailable(char **reason, const char *fmt, ...)
{
        int saved = errno, r;
        va_list ap;

        free(*reason);
        /* For the %m of the caller's format. */
        errno = saved;
        va_start(ap, fmt);
        r = vasprintf(reason, fmt, ap);
        va_end(ap);
        if (r < 0) {
                *reason = NULL;
                return -ENOMEM;
        }
        return CGROUP_UNAVAILABLE;
}

/* Whether the comma-separated list (n bytes, "cpu,cpuacct") names ctl. */
static bool controller_listed(const char *list, size_t n, const char *ctl)
{
        size_t len = strlen(ctl);

        for (const char *c = list, *end = list + n; c < end;) {
                size_t item = strcspn(c, ",");

                if (item > (size_t)(end - c))
                        item = (size_t)(end - c);
                if (item == len && strncmp(c, ctl, len) == 0)
                        return true;
                c += item + 1;
        }
        return false;
}

/* The path /proc/self/cgroup gives for a hierarchy: the v2 one when ctl is
 * NULL ("0::/path"), else the v1 one whose controller list names ctl
 * ("4:memory:/path", "3:cpu,cpuacct:/path"). Returns 0, -ENOENT when there
 * is no such line, or -ENOMEM. */
static int proc_path(const char *text, const char *ctl, char **ret)
{
        for (const char *line = text, *next; *line; line = next) {
                const char *end = strchrnul(line, '\n');
                const char *list = memchr(line, ':', (size_t)(end - line)), *path;
                bool match;

                next = *end ? end + 1 : end;
                path = list ? memchr(list + 1, ':', (size_t)(end - list - 1)) : NULL;
                if (!path)
                        continue;
                list++;
                if (ctl)
                        match = controller_listed(list, (size_t)(path - list), ctl);
                else
                        match = list == path && strncmp(line, "0:", 2) == 0;
                if (match) {
                        path++;
                        *ret = strndup(path, (size_t)(end - path));
                        return *ret ? 0 : -ENOMEM;
                }
        }
        return -ENOENT;
}

/* dir + path from /proc/self/cgroup, without a doubled slash for "/". */
static int join_path(const char *dir, const char *path, char **ret)
{
        while (*path == '/')
                path++;
        if (asprintf(ret, *path ? "%s/%s" : "%s", dir, path) < 0)
                return -ENOMEM;
        return 0;
}

static unsigned needed_controllers(const Cgroup *cg)
{
        return (cg->memory_max > 0 ? CGROUP_CTL_MEMORY : 0u) |
               (cg->pids_max > 0 ? CGROUP_CTL_PIDS : 0u);
}

/* v2 forbids controllers below a non-root cgroup with processes, so move the
 * agent into own/agent. Any process that is not the agent stays, and makes
 * v2 unusable: moving someone else's processes is not ours to do. */
static int v2_move_self_to_leaf(const char *own, pid_t self, char **reason)
{
        _cleanup_free_ pid_t *pids = NULL;
        _cleanup_free_ char *leaf = NULL;
        char text[32];
        bool listed = false;
        size_t n;
        int r;

        r = cgroup_procs_read(own, &pids, &n);
        if (r < 0)
                return unavailable(reason, "cannot read %s/cgroup.procs: %s", own, strerror(-r));
        for (size_t i = 0; i < n; i++) {
                if (pids[i] != self)
                        return unavailable(reason,
                                           "%s also holds process %ld, which is not the agent; "
                                           "run the agent in a cgroup of its own (a systemd "
                                           "service with Delegate=yes)",
                                           own, (long)pids[i]);
                listed = true;
        }
        if (!listed)
                return 0;
        if (asprintf(&leaf, "%s/agent", own) < 0)
                return -ENOMEM;
        if (mkdir(leaf, 0755) < 0 && errno != EEXIST)
                return unavailable(reason, "cannot create %s: %m", leaf);
        snprintf(text, sizeof(text), "%ld", (long)self);
        r = cgroup_file_write(leaf, "cgroup.procs", text);
        if (r < 0)
                return unavailable(reason, "cannot move the agent into %s: %s", leaf, strerror(-r));
        return 0;
}

static int probe_v2(Cgroup *cg, const CgroupOptions *o, const char *sysfs, const char *proc,
                    char **reason)
{
        unsigned need = needed_controllers(cg);
        _cleanup_free_ char *root = NULL, *path = NULL, *own = NULL, *avail = NULL;
        _cleanup_free_ char *enabled = NULL;
        _cleanup_strbuf_ StrBuf enable = STRBUF_INIT;
        int r;

        for (int i = 0; i < 2 && !root; i++) {
                _cleanup_free_ char *candidate = NULL;

                if (asprintf(&candidate, i == 0 ? "%s" : "%s/unified", sysfs) < 0)
                        return -ENOMEM;
                if (cgroup_file_read(candidate, "cgroup.controllers", &avail) == 0)
                        root = TAKE_PTR(candidate);
        }
        free(avail);
        avail = NULL;
        if (!root)
                return unavailable(reason, "no cgroup2 hierarchy at %s or %s/unified", sysfs,
                                   sysfs);
        r = proc_path(proc, NULL, &path);
        if (r == -ENOENT)
                return unavailable(reason, "%s has no cgroup2 line", o->proc_cgroup);
        if (r < 0 || (r = join_path(root, path, &own)) < 0)
                return r;
        if (access(own, W_OK) < 0)
                return unavailable(reason, "%s is not writable: %m", own);
        r = cgroup_file_read(own, "cgroup.controllers", &avail);
        if (r < 0)
                return unavailable(reason, "cannot read %s/cgroup.controllers: %s", own,
                                   strerror(-r));
        r = cgroup_file_read(own, "cgroup.subtree_control", &enabled);
        if (r < 0)
                return unavailable(reason, "cannot read %s/cgroup.subtree_control: %s", own,
                                   strerror(-r));
        for (size_t i = 0; i < CGROUP_N_CONTROLLERS; i++) {
                if (!(need & cgroup_controllers[i].ctl) ||
                    cgroup_list_has(enabled, cgroup_controllers[i].name))
                        continue;
                if (!cgroup_list_has(avail, cgroup_controllers[i].name))
                        return unavailable(reason, "the %s controller is not available in %s",
                                           cgroup_controllers[i].name, own);
                if (strbuf_printf(&enable, "%s+%s", enable.len ? " " : "",
                                  cgroup_controllers[i].name) < 0)
                        return -ENOMEM;
        }
        if (enable.len > 0) {
                _cleanup_free_ char *type = NULL;

                /* Only the root cgroup lacks cgroup.type; it alone may keep
                 * processes and still hand out controllers. */
                if (cgroup_file_read(own, "cgroup.type", &type) == 0 &&
                    (r = v2_move_self_to_leaf(own, o->self ? o->self : getpid(), reason)) != 0)
                        return r;
                r = cgroup_file_write(own, "cgroup.subtree_control", enable.data);
                if (r < 0)
                        return unavailable(reason, "cannot enable %s in %s: %s", enable.data, own,
                                           strerror(-r));
        }
        cg->places[0].dir = TAKE_PTR(own);
        cg->places[0].controllers = need;
        cg->n_places = 1;
        cg->version = CGROUP_VERSION_2;
        return 0;
}

/* The agent's own cgroup in the v1 hierarchy of ctl, if it is writable. */
static int v1_place(const char *sysfs, const char *proc, const char *ctl, char **ret, char **reason)
{
        _cleanup_free_ char *hierarchy = NULL, *path = NULL, *dir = NULL;
        struct stat st;
        int r;

        if (asprintf(&hierarchy, "%s/%s", sysfs, ctl) < 0)
                return -ENOMEM;
        r = proc_path(proc, ctl, &path);
        if (r == -ENOENT)
                return unavailable(reason, "no cgroup v1 %s hierarchy in /proc/self/cgroup", ctl);
        if (r < 0 || (r = join_path(hierarchy, path, &dir)) < 0)
                return r;
        if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
                return unavailable(reason, "%s is not a directory", dir);
        if (access(dir, W_OK) < 0)
                return unavailable(reason, "%s is not writable: %m", dir);
        *ret = TAKE_PTR(dir);
        return 0;
}

static int probe_v1(Cgroup *cg, const char *sysfs, const char *proc, char **reason)
{
        unsigned need = needed_controllers(cg);
        char *dir = NULL;
        int r;

        /* With no limit to set, the pids hierarchy (or else memory) only
         * keeps the run's processes together for the kill. */
        if (need == 0) {
                r = v1_place(sysfs, proc, "pids", &dir, reason);
                if (r == CGROUP_UNAVAILABLE)
                        r = v1_place(sysfs, proc, "memory", &dir, reason);
                if (r != 0)
                        return r;
                cg->places[cg->n_places++] = (CgroupPlace){dir, 0};
        }
        for (size_t i = 0; i < CGROUP_N_CONTROLLERS; i++) {
                if (!(need & cgroup_controllers[i].ctl))
                        continue;
                r = v1_place(sysfs, proc, cgroup_controllers[i].name, &dir, reason);
                if (r != 0)
                        return r;
                cg->places[cg->n_places++] = (CgroupPlace){dir, cgroup_controllers[i].ctl};
        }
        cg->version = CGROUP_VERSION_1;
        return 0;
}

static void places_clear(Cgroup *cg)
{
        for (size_t i = 0; i < cg->n_places; i++)
                free(cg->places[i].dir);
        cg->n_places = 0;
        cg->version = CGROUP_VERSION_NONE;
}

/* prefix, then why each version is unusable. Returns 0 or -ENOMEM; *ret
 * is NULL on failure. */
static int reasons_join(const char *prefix, const char *reason2, const char *reason1, char **ret)
{
        if (asprintf(ret, "%s%s%s%s%s%s", prefix, reason2 ? "cgroup v2: " : "",
                     reason2 ? reason2 : "", reason2 && reason1 ? "; " : "",
                     reason1 ? "cgroup v1: " : "", reason1 ? reason1 : "") < 0) {
                *ret = NULL;
                return -ENOMEM;
        }
        return 0;
}

/* v2 then v1, as the mode allows; *reason2 and *reason1 say why each
 * version that was tried is unusable. */
static int probe(Cgroup *cg, const CgroupOptions *o, const char *sysfs, const char *proc,
                 char **reason2, char **reason1)
{
        int r;

        if (o->mode == CONFIG_CGROUP_AUTO || o->mode == CONFIG_CGROUP_V2) {
                r = probe_v2(cg, o, sysfs, proc, reason2);
                if (r < 0)
                        return r;
                if (r > 0)
                        places_clear(cg);
        }
        if (cg->version == CGROUP_VERSION_NONE &&
            (o->mode == CONFIG_CGROUP_AUTO || o->mode == CONFIG_CGROUP_V1)) {
                r = probe_v1(cg, sysfs, proc, reason1);
                if (r < 0)
                        return r;
                if (r > 0)
                        places_clear(cg);
        }
        return 0;
}

int cgroup_setup(const CgroupOptions *o, Cgroup **ret, char **ret_reason)
{
        _cleanup_(cgroup_freep) Cgroup *cg = NULL;
        _cleanup_free_ char *proc = NULL, *reason2 = NULL, *reason1 = NULL, *reason = NULL;
        const char *sysfs = o->sysfs ? o->sysfs : "/sys/fs/cgroup";
        const char *proc_file = o->proc_cgroup ? o->proc_cgroup : "/proc/self/cgroup";
        CgroupOptions opts = *o;
        unsigned optional;
        int r;

        opts.proc_cgroup = proc_file;
        cg = calloc(1, sizeof(*cg));
        if (!cg)
                return -ENOMEM;
        cg->memory_max = o->memory_max;
        cg->pids_max = o->pids_max;
        cg->optional = (o->memory_optional ? CGROUP_CTL_MEMORY : 0u) |
                       (o->pids_optional ? CGROUP_CTL_PIDS : 0u);

        if (o->mode != CONFIG_CGROUP_OFF) {
                r = file_read_all(proc_file, CGROUP_FILE_MAX, &proc, NULL);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 &&
                    (r = unavailable(&reason, "cannot read %s: %s", proc_file, strerror(-r))) < 0)
                        return r;
        }
        if (proc && (r = probe(cg, &opts, sysfs, proc, &reason2, &reason1)) < 0)
                return r;
        optional = needed_controllers(cg) & cg->optional;
        /* Defaults are not worth losing the cgroup for: it is also what
         * kills a run's whole tree. Leave out as few as will do: memory,
         * else pids, else both. */
        for (unsigned i = 0; proc && cg->version == CGROUP_VERSION_NONE && i < 3; i++) {
                static const unsigned drops[] = {CGROUP_CTL_MEMORY, CGROUP_CTL_PIDS,
                                                 CGROUP_CTL_MEMORY | CGROUP_CTL_PIDS};
                _cleanup_free_ char *again2 = NULL, *again1 = NULL;
                uint64_t memory_max = cg->memory_max;
                unsigned pids_max = cg->pids_max, drop = drops[i];

                if ((drop & optional) != drop)
                        continue;
                if (drop & CGROUP_CTL_MEMORY)
                        cg->memory_max = 0;
                if (drop & CGROUP_CTL_PIDS)
                        cg->pids_max = 0;
                if ((r = probe(cg, &opts, sysfs, proc, &again2, &again1)) < 0)
                        return r;
                if (cg->version != CGROUP_VERSION_NONE) {
                        free(reason);
                        r = reasons_join(drop == (CGROUP_CTL_MEMORY | CGROUP_CTL_PIDS)
                                                 ? "memory_max and pids_max are not applied, as "
                                                   "no cgroup offers their controllers: "
                                         : drop == CGROUP_CTL_MEMORY
                                                 ? "memory_max is not applied, as no cgroup "
                                                   "offers its controller with the others: "
                                                 : "pids_max is not applied, as no cgroup offers "
                                                   "its controller with the others: ",
                                         reason2, reason1, &reason);
                        if (r < 0)
                                return r;
                        if (ret_reason)
                                *ret_reason = TAKE_PTR(reason);
                        *ret = TAKE_PTR(cg);
                        return 0;
                }
                /* What stands in the way of the limits that remain. */
                cg->memory_max = memory_max;
                cg->pids_max = pids_max;
                free(reason2);
                free(reason1);
                reason2 = TAKE_PTR(again2);
                reason1 = TAKE_PTR(again1);
        }

        if (o->mode != CONFIG_CGROUP_OFF && cg->version == CGROUP_VERSION_NONE) {
                if (reason2 || reason1) {
                        free(reason);
                        if ((r = reasons_join("", reason2, reason1, &reason)) < 0)
                                return r;
                }
                if (o->mode != CONFIG_CGROUP_AUTO) {
                        if (ret_reason)
                                *ret_reason = TAKE_PTR(reason);
                        return CGROUP_UNAVAILABLE;
                }
        }
        if (ret_reason)
                *ret_reason = TAKE_PTR(reason);
        *ret = TAKE_PTR(cg);
        return 0;
}

Cgroup *cgroup_free(Cgroup *cg)
{
        if (!cg)
                return NULL;
        places_clear(cg);
        free(cg);
        return NULL;
}

CgroupVersion cgroup_version(const Cgroup *cg)
{
        return cg->version;
}

void cgroup_limits(const Cgroup *cg, uint64_t *ret_memory_max, unsigned *ret_pids_max)
{
        *ret_memory_max = cg->memory_max;
        *ret_pids_max = cg->pids_max;
}

int cgroup_describe(const Cgroup *cg, char **ret)
{
        _cleanup_strbuf_ StrBuf b = STRBUF_INIT;
        int r;

        if (cg->version == CGROUP_VERSION_NONE)
                r = strbuf_puts(&b, "cgroup: none");
        else
                r = strbuf_printf(&b, "cgroup v%d in", cg->version == CGROUP_VERSION_2 ? 2 : 1);
        for (size_t i = 0; r >= 0 && i < cg->n_places; i++)
                r = strbuf_printf(&b, "%s %s", i ? "," : "", cg->places[i].dir);
        if (r >= 0 && cg->version != CGROUP_VERSION_NONE)
                r = strbuf_printf(&b, "; memory_max=%" PRIu64 " pids_max=%u", cg->memory_max,
                                  cg->pids_max);
        if (r < 0)
                return r;
        return strbuf_steal(&b, ret);
}
