/* Finding the agent's companion programs (see program.h). */
#include "util/program.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

/* The directory of the agent's own executable, into dir (PATH_MAX bytes).
 * /proc/self/exe first; when /proc is not there (a script may have
 * unmounted it in the agent's mount namespace), the path the program was
 * executed by, which the kernel keeps in the auxiliary vector (AT_EXECFN),
 * resolved against the working directory. Returns false when neither
 * says. */
static bool program_own_dir(char *dir)
{
        const char *execfn;
        char *slash;
        ssize_t n;

        n = readlink("/proc/self/exe", dir, PATH_MAX - 1);
        if (n > 0) {
                dir[n] = '\0';
        } else {
                execfn = (const char *)getauxval(AT_EXECFN);
                if (!execfn || !realpath(execfn, dir))
                        return false;
        }
        slash = strrchr(dir, '/');
        if (!slash)
                return false;
        *slash = '\0';
        return true;
}

int program_find(const char *env_name, const char *build_subdir, const char *name,
                 const char *installed_path, char **ret)
{
        const char *env = getenv(env_name);
        char exe[PATH_MAX], *path;

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
        for (int i = program_own_dir(exe) ? 0 : 2; i < 3; i++) {
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
