/* The sandbox's lookups that touch the system (see sandbox.h): where the
 * helper program is, a user's home directory, and whether the scripts' user
 * may read a file. Kept apart from the pure builder in sandbox.c. */
#include "sandbox/sandbox.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/sandbox-config.h"
#include "sandbox/sandbox-steps.h"
#include "util/program.h"
#include "util/userdb.h"

int sandbox_helper_path(char **ret)
{
        return program_find("MURANOAGENT_SANDBOX", "sandbox", "muranoagent-sandbox",
                            SANDBOX_HELPER_LIBEXEC_PATH, ret);
}

int sandbox_user_home(const char *user, char **ret)
{
        UserdbUser u;
        int r = userdb_user(user, &u);

        if (r < 0)
                return r;
        *ret = u.home;
        u.home = NULL;
        userdb_user_clear(&u);
        return 0;
}

int sandbox_user_may_read(const struct ConfigSandbox *cfg, const char *path)
{
        SandboxIdentity id;
        SandboxStepError e;
        struct stat st;
        bool in_group;
        int r;

        if (!cfg->enabled || ((streq(cfg->user, "root") || streq(cfg->user, "0")) &&
                              (streq(cfg->group, "root") || streq(cfg->group, "0"))))
                return 0;
        if (stat(path, &st) < 0)
                return -errno;
        if (sandbox_identity_resolve(cfg->user, cfg->group, &id, &e) < 0)
                return -ENOENT;
        if (id.uid == 0) {
                sandbox_identity_clear(&id);
                return 1;
        }
        in_group = id.gid == st.st_gid;
        for (int i = 0; i < id.n_groups; i++)
                in_group = in_group || id.groups[i] == st.st_gid;
        if (id.uid == st.st_uid)
                r = (st.st_mode & S_IRUSR) != 0;
        else if (in_group)
                r = (st.st_mode & S_IRGRP) != 0;
        else
                r = (st.st_mode & S_IROTH) != 0;
        sandbox_identity_clear(&id);
        return r;
}
