/* The sandbox's two lookups that touch the system (see sandbox.h): where the
 * helper program is, and a user's home directory. Kept apart from the pure
 * builder in sandbox.c. */
#include "sandbox/sandbox.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/sandbox-config.h"
#include "util/program.h"

int sandbox_helper_path(char **ret)
{
        return program_find("MURANOAGENT_SANDBOX", "sandbox", "muranoagent-sandbox",
                            SANDBOX_HELPER_LIBEXEC_PATH, ret);
}

int sandbox_user_home(const char *user, char **ret)
{
        struct passwd pw, *found = NULL;
        char *end, *home;
        unsigned long uid;
        long size = sysconf(_SC_GETPW_R_SIZE_MAX);
        _cleanup_free_ char *buf = NULL;
        int r;

        if (size <= 0)
                size = 16384;
        buf = malloc((size_t)size);
        if (!buf)
                return -ENOMEM;
        errno = 0;
        uid = strtoul(user, &end, 10);
        if (user[0] >= '0' && user[0] <= '9' && errno == 0 && *end == '\0')
                r = getpwuid_r((uid_t)uid, &pw, buf, (size_t)size, &found);
        else
                r = getpwnam_r(user, &pw, buf, (size_t)size, &found);
        if (r != 0)
                return -r;
        if (!found)
                return -ENOENT;
        home = strdup(pw.pw_dir);
        if (!home)
                return -ENOMEM;
        *ret = home;
        return 0;
}
