/* Where muranoagent-fetch is: the program that makes HTTP(S) downloads
 * (files-fetch.c). It is a program of its own so that the agent does not
 * load libcurl and the 27 shared objects it brings (4 MiB of the agent's
 * resident memory; README.md, "Dependencies"); only the download's
 * child, inside the sandbox, does. Found as the sandbox helper is
 * (util/program.h). */
#include "files/files-config.h"
#include "files/files.h"
#include "util/program.h"

int files_fetch_program_path(char **ret)
{
        return program_find("MURANOAGENT_FETCH", "files", "muranoagent-fetch",
                            FILES_FETCH_LIBEXEC_PATH, ret);
}
