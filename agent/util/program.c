/* Finding the agent's companion programs (see program.h). */
#include "util/program.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int program_find(const char *env_name, const char *build_subdir, const char *name,
                 const char *installed_path, char **ret)
{
        const char *env = getenv(env_name);
        char exe[PATH_MAX], *slash, *path;
        ssize_t n;

        /* An explicit setting is used or fails; it never falls back. */
        if (env && *env) {
                if (access(env, X_OK) < 0)
                        return -errno;
                path = strdup(env);
                if (!path)
                        return -ENOMEM;
                *ret = path;
                return 0;
        }

        /* The build tree keeps the program in a subdirectory below the
         * agent's directory; an installed agent finds it in libexecdir, or
         * beside itself. */
        n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (n > 0) {
                exe[n] = '\0';
                slash = strrchr(exe, '/');
                if (slash)
                        *slash = '\0';
        }
        for (int i = n > 0 ? 0 : 2; i < 3; i++) {
                int r = i == 0   ? asprintf(&path, "%s/%s/%s", exe, build_subdir, name)
                        : i == 1 ? asprintf(&path, "%s/%s", exe, name)
                                 : asprintf(&path, "%s", installed_path);

                if (r < 0)
                        return -ENOMEM;
                if (access(path, X_OK) == 0) {
                        *ret = path;
                        return 0;
                }
                free(path);
        }
        return -ENOENT;
}
