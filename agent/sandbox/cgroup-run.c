/* Making the cgroup of one run, and reading what its limits did (see
 * cgroup.h). */
#include "sandbox/cgroup.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/cgroup-internal.h"

/* Plan IDs are user input: keep a safe, bounded part of one for the name. */
static void sanitize_id(const char *id, char out[static 65])
{
        size_t n = 0;

        for (; id && id[n] && n < 64; n++) {
                char c = id[n];
                bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';

                out[n] = ok ? c : '_';
        }
        if (n == 0)
                out[n++] = '_';
        out[n] = '\0';
}

static int run_write_limits(const Cgroup *cg, const CgroupRun *run)
{
        for (size_t i = 0; i < run->n; i++)
                for (size_t j = 0; j < CGROUP_N_CONTROLLERS; j++) {
                        char text[32];
                        uint64_t v = cgroup_controllers[j].ctl == CGROUP_CTL_MEMORY ? cg->memory_max
                                                                                    : cg->pids_max;
                        int r;

                        if (!(run->controllers[i] & cgroup_controllers[j].ctl))
                                continue;
                        snprintf(text, sizeof(text), "%" PRIu64, v);
                        r = cgroup_file_write(run->dirs[i],
                                              run->version == CGROUP_VERSION_2
                                                      ? cgroup_controllers[j].v2_limit
                                                      : cgroup_controllers[j].v1_limit,
                                              text);
                        if (r < 0)
                                return r;
                }
        return 0;
}

static void run_rmdirs(CgroupRun *run)
{
        for (size_t i = run->n; i > 0; i--) {
                (void)rmdir(run->dirs[i - 1]);
                free(run->dirs[i - 1]);
                run->dirs[i - 1] = NULL;
        }
        run->n = 0;
}

int cgroup_run_new(Cgroup *cg, const char *id, CgroupRun **ret)
{
        _cleanup_(cgroup_run_freep) CgroupRun *run = NULL;
        char safe[65];
        int r;

        run = calloc(1, sizeof(*run));
        if (!run)
                return -ENOMEM;
        run->version = cg->version;
        sanitize_id(id, safe);
        /* A name may exist after an agent crashed, or belong to another
         * agent sharing a v1 cgroup: skip it, never reuse it. */
        for (unsigned attempt = 0; cg->n_places > 0 && run->n == 0; attempt++) {
                if (attempt == 1000)
                        return -EEXIST;
                cg->seq++;
                for (size_t i = 0; i < cg->n_places; i++) {
                        char *dir;

                        if (asprintf(&dir, "%s/muranoagent-%s-%lu", cg->places[i].dir, safe,
                                     cg->seq) < 0) {
                                run_rmdirs(run);
                                return -ENOMEM;
                        }
                        if (mkdir(dir, 0755) < 0) {
                                r = -errno;
                                free(dir);
                                run_rmdirs(run);
                                if (r == -EEXIST)
                                        break;
                                return r;
                        }
                        run->dirs[run->n] = dir;
                        run->controllers[run->n++] = cg->places[i].controllers;
                }
        }
        r = run_write_limits(cg, run);
        if (r < 0) {
                run_rmdirs(run);
                return r;
        }
        *ret = TAKE_PTR(run);
        return 0;
}

const char *const *cgroup_run_dirs(const CgroupRun *run, size_t *ret_n)
{
        if (ret_n)
                *ret_n = run->n;
        return (const char *const *)run->dirs;
}

/* The number after "key " in a flat keyed file ("oom_kill 3\n"), or 0. */
static uint64_t keyed_value(const char *text, const char *key)
{
        size_t n = strlen(key);

        for (const char *line = text; *line;) {
                const char *end = strchrnul(line, '\n');

                if (strncmp(line, key, n) == 0 && line[n] == ' ')
                        return strtoull(line + n + 1, NULL, 10);
                line = *end ? end + 1 : end;
        }
        return 0;
}

int cgroup_run_events(const CgroupRun *run, CgroupEvents *ret)
{
        if (run->events_kept) {
                *ret = run->events;
                return 0;
        }
        return cgroup_run_events_read(run, ret);
}

int cgroup_run_events_read(const CgroupRun *run, CgroupEvents *ret)
{
        CgroupEvents ev = {0, 0};

        for (size_t i = 0; i < run->n; i++)
                for (size_t j = 0; j < CGROUP_N_CONTROLLERS; j++) {
                        _cleanup_free_ char *text = NULL;
                        const char *file = run->version == CGROUP_VERSION_2
                                                   ? cgroup_controllers[j].v2_events
                                                   : cgroup_controllers[j].v1_events;
                        int r;

                        /* v2 keeps every controller in the one directory. */
                        if (run->version == CGROUP_VERSION_1 &&
                            !(run->controllers[i] & cgroup_controllers[j].ctl))
                                continue;
                        r = cgroup_file_read(run->dirs[i], file, &text);
                        if (r == -ENOENT)
                                continue;
                        if (r < 0)
                                return r;
                        if (cgroup_controllers[j].ctl == CGROUP_CTL_MEMORY)
                                ev.oom_kills = keyed_value(text, cgroup_controllers[j].event_key);
                        else
                                ev.pids_max = keyed_value(text, cgroup_controllers[j].event_key);
                }
        *ret = ev;
        return 0;
}

CgroupRun *cgroup_run_free(CgroupRun *run)
{
        if (!run)
                return NULL;
        for (size_t i = 0; i < run->n; i++)
                free(run->dirs[i]);
        free(run);
        return NULL;
}
