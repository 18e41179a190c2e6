/* Finding the agent's companion programs (the sandbox helper, the download
 * program): an environment variable that names one explicitly, else the
 * build tree, the agent's own directory and the installed libexec path. */
#pragma once

/* The path of a companion program: $env_name when set and not empty (and
 * then nothing else: it is used or fails, never falls back), else the
 * first executable of <dir>/<build_subdir>/<name> (the build tree),
 * <dir>/<name> and installed_path, where <dir> is the directory of
 * /proc/self/exe, or without /proc that of the path the agent was executed
 * by (AT_EXECFN). Returns 0
 * with a new string in *ret, -ENOENT when none is there, -ENOMEM, or the
 * errno of access() for an explicit setting. */
int program_find(const char *env_name, const char *build_subdir, const char *name,
                 const char *installed_path, char **ret);
