/* The in-process sandbox path (see sandbox-direct.h). */
#include "sandbox/sandbox-direct.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/sandbox-steps.h"
#include "util/strv.h"

struct SandboxDirect {
        SandboxRlimit rlimits[4];
        size_t n_rlimits;
        SandboxIdentity id;
        bool no_new_privs;
        char **cgroups; /* owned, NULL-terminated: to join first, or NULL */
        size_t n_cgroups;
        uint64_t drop_caps;
        bool oom_score_adj;
        int proc_fd;   /* in the child; -1 = by path */
        pid_t parent;  /* the agent: the child dies with it */
        char *chdir;   /* owned, NULL = stay */
        char *program; /* owned: the command's argv[0], for the "exec" line */
        int status_fd; /* in the child; -1 = none */
        bool lookup_failed;
        SandboxStepError lookup_error; /* the lookup's line, reported by the child */
};

/* Both name root, by name or number: the identity is kept, as
 * sandbox_build() leaves --user and --group out then. */
static bool identity_is_root(const struct ConfigSandbox *cfg)
{
        return (streq(cfg->user, "root") || streq(cfg->user, "0")) &&
               (streq(cfg->group, "root") || streq(cfg->group, "0"));
}

int sandbox_direct_new(const struct ConfigSandbox *cfg, const SandboxRun *run, SandboxDirect **ret)
{
        const struct {
                int resource;
                const char *name;
                uint64_t value;
        } limits[] = {
                {RLIMIT_CPU, "cpu", cfg->rlimit_cpu},
                {RLIMIT_AS, "as", cfg->rlimit_as},
                {RLIMIT_NOFILE, "nofile", cfg->rlimit_nofile},
                {RLIMIT_NPROC, "nproc", cfg->rlimit_nproc},
        };
        _cleanup_(sandbox_direct_freep) SandboxDirect *d = NULL;

        if (!run->command || !run->command[0])
                return -EINVAL;
        d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        /* The same order and the same names as the helper's options. */
        for (size_t i = 0; i < ELEMENTSOF(limits); i++)
                if (limits[i].value > 0)
                        d->rlimits[d->n_rlimits++] = (SandboxRlimit){
                                limits[i].resource, limits[i].name, (rlim_t)limits[i].value};
        if (!identity_is_root(cfg) &&
            sandbox_identity_resolve(cfg->user, cfg->group, &d->id, &d->lookup_error) < 0)
                d->lookup_failed = true;
        d->no_new_privs = cfg->no_new_privs;
        if (!run->cgroups_at_spawn && run->n_cgroups > 0) {
                d->cgroups = calloc(run->n_cgroups + 1, sizeof(*d->cgroups));
                if (!d->cgroups)
                        return -ENOMEM;
                for (; d->n_cgroups < run->n_cgroups; d->n_cgroups++)
                        if (!(d->cgroups[d->n_cgroups] = strdup(run->cgroups[d->n_cgroups])))
                                return -ENOMEM;
        }
        d->drop_caps = cfg->drop_capabilities;
        d->oom_score_adj = run->oom_score_adj;
        d->proc_fd = run->proc_fd > STDERR_FILENO ? run->proc_fd : -1;
        d->parent = getpid();
        d->status_fd = run->status_fd;
        d->program = strdup(run->command[0]);
        if (!d->program)
                return -ENOMEM;
        if (run->workdir && !(d->chdir = strdup(run->workdir)))
                return -ENOMEM;
        *ret = TAKE_PTR(d);
        return 0;
}

SandboxDirect *sandbox_direct_free(SandboxDirect *d)
{
        if (!d)
                return NULL;
        strv_free(d->cgroups);
        sandbox_identity_clear(&d->id);
        free(d->chdir);
        free(d->program);
        free(d);
        return NULL;
}

/* In the child: the helper's steps after its cgroups and namespaces, in its
 * order (sandbox-helper.c main()). */
static void direct_steps(const SandboxDirect *d)
{
        SandboxStepError e;

        if (d->lookup_failed)
                sandbox_steps_fail(d->status_fd, SANDBOX_EXIT_SETUP, &d->lookup_error);
        if (sandbox_steps_join_cgroups((const char *const *)d->cgroups, d->n_cgroups, &e) < 0 ||
            (d->oom_score_adj &&
             sandbox_steps_oom_score_adj(d->proc_fd, SANDBOX_OOM_SCORE_ADJ, &e) < 0) ||
            sandbox_steps_rlimits(d->rlimits, d->n_rlimits, &e) < 0 ||
            sandbox_steps_caps_bound(d->drop_caps, &e) < 0 ||
            sandbox_steps_identity(&d->id, &e) < 0 ||
            sandbox_steps_caps_drop(d->drop_caps, &e) < 0 ||
            (d->no_new_privs && sandbox_steps_no_new_privs(&e) < 0) ||
            sandbox_steps_die_with_parent(d->parent, -1, &e) < 0 ||
            (d->chdir && sandbox_steps_chdir(d->chdir, &e) < 0))
                sandbox_steps_fail(d->status_fd, SANDBOX_EXIT_SETUP, &e);
        if (!d->oom_score_adj && d->proc_fd >= 0)
                (void)close(d->proc_fd);
        /* End of file on the status pipe means "the command runs". */
        if (d->status_fd >= 0 && fcntl(d->status_fd, F_SETFD, FD_CLOEXEC) < 0) {
                e = (SandboxStepError){.what = "status fd", .err = errno};
                sandbox_steps_fail(d->status_fd, SANDBOX_EXIT_SETUP, &e);
        }
}

/* In the child: the steps, then the caller executes the command. */
void sandbox_direct_pre_exec(void *data)
{
        direct_steps(data);
}

void sandbox_direct_exec_failed(void *data, int err)
{
        const SandboxDirect *d = data;
        SandboxStepError e;

        sandbox_steps_exec_error(d->program, err, &e);
        sandbox_steps_fail(d->status_fd, sandbox_steps_exec_status(err), &e);
}
