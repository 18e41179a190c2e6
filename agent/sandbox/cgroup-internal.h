/* Shared by cgroup.c (where run cgroups go), cgroup-run.c (making them) and
 * cgroup-kill.c (emptying and removing them). Not for other modules. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox/cgroup.h"

/* Controllers whose limits a directory carries. */
enum {
        CGROUP_CTL_MEMORY = 1 << 0,
        CGROUP_CTL_PIDS = 1 << 1,
};

/* At most one directory per controller: v1 has a hierarchy for each. */
#define CGROUP_MAX_DIRS 2

/* What the code needs to know of a controller, in either version. */
typedef struct CgroupController {
        unsigned ctl;          /* CGROUP_CTL_* */
        const char *name;      /* the controller, and its v1 hierarchy's directory */
        const char *v1_limit;  /* the limit file in v1 */
        const char *v2_limit;  /* the limit file in v2 */
        const char *v1_events; /* the file with the counter in v1 */
        const char *v2_events; /* the file with the counter in v2 */
        const char *event_key; /* the counter's key in that file */
} CgroupController;

#define CGROUP_N_CONTROLLERS 2
extern const CgroupController cgroup_controllers[CGROUP_N_CONTROLLERS];

/* A directory where run cgroups are made. */
typedef struct CgroupPlace {
        char *dir;            /* owned */
        unsigned controllers; /* CGROUP_CTL_* whose limits runs below get */
} CgroupPlace;

struct Cgroup {
        CgroupVersion version;
        CgroupPlace places[CGROUP_MAX_DIRS];
        size_t n_places;
        uint64_t memory_max;
        unsigned pids_max;
        unsigned optional; /* CGROUP_CTL_* of limits that may be left out */
        unsigned long seq; /* the n of the last run's name */
};

struct CgroupRun {
        CgroupVersion version;
        char *dirs[CGROUP_MAX_DIRS + 1]; /* owned, NULL-terminated */
        unsigned controllers[CGROUP_MAX_DIRS];
        size_t n;
        /* The counts as they were when the cgroup had emptied, kept for
         * cgroup_run_events() once the directories are gone. */
        CgroupEvents events;
        bool events_kept;
};

/* Read the run's counters from its directories (see cgroup_run_events()). */
int cgroup_run_events_read(const CgroupRun *run, CgroupEvents *ret);

/* Read dir/name whole (cgroup files are small; cgroup.procs has a cap).
 * Returns 0 or a negative errno. */
int cgroup_file_read(const char *dir, const char *name, char **ret);

/* Write text to dir/name in one write(2), as cgroupfs wants. The file is
 * created when missing, which only ever happens in a test's fake tree: the
 * kernel creates the real ones with the directory. Returns 0 or -errno. */
int cgroup_file_write(const char *dir, const char *name, const char *text);

/* The pids of dir/cgroup.procs. A directory that is gone has none. Returns
 * 0 or a negative errno. */
int cgroup_procs_read(const char *dir, pid_t **ret, size_t *ret_n);

/* Whether the whitespace-separated list holds word. */
bool cgroup_list_has(const char *list, const char *word);
