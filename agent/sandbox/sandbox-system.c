/* The sandbox's two lookups that touch the system (see sandbox.h): where the
 * helper program is, and a user's home directory. Kept apart from the pure
 * builder in sandbox.c. */
#include "sandbox/sandbox.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/sandbox-config.h"
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
