/* Where muranoagent-fetch is: the program that makes HTTP(S) downloads
 * (files-fetch.c). It is a program of its own so that the agent does not
 * load libcurl and the 27 shared objects it brings (4 MiB of the agent's
 * resident memory; docs/benchmarks.md, "Idle RSS"); only the download's
 * child, inside the sandbox, does. Found as sandbox_helper_path() finds the
 * sandbox helper. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files/files-config.h"
#include "files/files.h"

int files_fetch_program_path(char **ret)
{
        const char *env = getenv("MURANOAGENT_FETCH");
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

        /* The build tree keeps it in files/ below the agent's directory; an
         * installed agent finds it in libexecdir, or beside itself. */
        n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (n > 0) {
                exe[n] = '\0';
                slash = strrchr(exe, '/');
                if (slash)
                        *slash = '\0';
        }
        for (int i = n > 0 ? 0 : 2; i < 3; i++) {
                int r = i == 0   ? asprintf(&path, "%s/files/muranoagent-fetch", exe)
                        : i == 1 ? asprintf(&path, "%s/muranoagent-fetch", exe)
                                 : asprintf(&path, "%s", FILES_FETCH_LIBEXEC_PATH);

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
