/* files: one plan's Files on disk, laid out as the reference agent lays them
 * out (spec 4.2 and 4.5, muranoagent/files_manager.py), so that scripts that
 * read their files through the symlinks (Murano's putFile.sh does
 * `readlink`) see what they saw under the Python agent:
 *
 *   <storage>/files/<plan ID>/            the cache dir, mode 0700
 *     <fileId>                            an inline file, written once per plan
 *     <fileId>/                           a download: git clone, svn checkout
 *                                         or <fileId>/<last piece of the URL>
 *     <script>/                           one working folder per script
 *       <Name>                            symlink -> <cache>/<fileId>; Name may
 *                                         hold sub-directories
 *
 * A Files object belongs to one plan. files_prepare_script() materialises
 * what one script needs, at the script's first call, as the reference's
 * ScriptRunner._prepare_files() does; files_free() removes the whole cache
 * dir, as the reference does after every plan.
 *
 * Every path below the cache dir is made relative to a directory descriptor
 * with O_NOFOLLOW, so no Name, file ID or script name can reach outside,
 * even through a symlink that an earlier file or script left there.
 *
 * Bodies are written byte for byte: Text as its UTF-8 bytes, Base64 decoded
 * as Python's base64.b64decode decodes (non-alphabet characters skipped).
 * Binary content works, where the reference failed on non-UTF-8 bytes.
 * Downloads (FormatVersion 2.1.0 and later) are commands run through the
 * plan's ProcRunner, so they get the scripts' sandbox and time limits: git
 * clone, svn checkout, and our own muranoagent-fetch for HTTP(S).
 * docs/files.md has the details and every deliberate difference.
 *
 * Errors in a plan's files come back as data: FILES_FAILED with err->code
 * (1 as the reference's exceptions, 2 for the Name checks that validation
 * normally makes first) and err->message, worded as the reference words it
 * where it has words of its own. Negative errno is for the agent's own
 * failures (out of memory, a ProcRunner that failed). */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "files/files-fetch.h"
#include "plan/plan.h"
#include "proc/proc.h"
#include "util/macro.h"

/* files_prepare_script(): the plan's files cannot be put in place; the
 * PlanError says why. */
#define FILES_FAILED 1

typedef struct FilesOptions {
        uint64_t max_download_size; /* bytes of one HTTP download; 0 = no limit */
        unsigned connect_timeout;   /* seconds to connect for HTTP; 0 = libcurl's (300) */
        /* muranoagent-fetch, which makes HTTP(S) downloads (files-fetch.h).
         * NULL: files_fetch_program_path(), looked up when the object is
         * made; a plan with an HTTP(S) download fails when it is missing. */
        const char *fetch_program;
        /* Scripts that run as another user than the agent (the sandbox's
         * run-as user) must reach their files: with set_owner, the cache dir
         * and everything this module makes in it (script folders, the
         * folders of a Name, inline files, download folders) are given to
         * owner_uid:owner_gid, and <storage> and <storage>/files are made
         * searchable (not readable) by others. Symlinks keep the agent's
         * ownership, which grants nothing. */
        bool set_owner;
        uid_t owner_uid;
        gid_t owner_gid;
        /* The plan's text, when the plan came from plan_parse_json_kept()
         * and its Files' bodies may still be in it (borrowed: it must
         * outlive the Files object); NULL: every body is in the plan. */
        const PlanText *plan_text;
} FilesOptions;

#define FILES_OPTIONS_DEFAULT                                                                      \
        ((FilesOptions){.max_download_size = FILES_DEFAULT_MAX_DOWNLOAD,                           \
                        .connect_timeout = FILES_DEFAULT_CONNECT_TIMEOUT,                          \
                        .fetch_program = NULL})

typedef struct Files Files;

/* Why s is not one safe file name, or NULL: empty, holding a NUL or a '/',
 * '.' or '..', or longer than NAME_MAX (255) bytes. It decides what may be a
 * directory entry here: a file ID or script name in the cache dir, a plan ID
 * naming the cache dir (files_new() and the runner's job ID). */
const char *files_component_problem(const char *s, size_t len);

/* Make the cache dir <storage>/files/<plan_id> for a plan: missing parents
 * are created with mode 0700 (0711 with opt->set_owner), an existing cache
 * dir of that name is removed first (as the reference does: a re-run of a
 * plan starts clean), and the cache dir is created with mode 0700 (and
 * given to the owner with opt->set_owner). A relative storage is taken from the
 * current directory, so the symlinks always hold absolute paths. A plan_id
 * that is NULL or is not one safe file name ("", ".", "..", one with a '/',
 * longer than 255 bytes) is replaced by a fresh random hex name, so that an
 * ID can never point the removal elsewhere.
 *
 * plan is borrowed: a validated plan document that must outlive the object.
 * runner is copied; it may be NULL for a plan without downloads (one is then
 * an -EINVAL from files_prepare_script()). opt NULL means
 * FILES_OPTIONS_DEFAULT; its strings are copied.
 *
 * Returns 0 and *ret, or a negative errno (storage not writable, ...). */
int files_new(const char *storage, const char *plan_id, const json_t *plan,
              const ProcRunner *runner, const FilesOptions *opt, Files **ret);

/* Put in place the files of script (a key of the plan's Scripts): each item
 * of its Files (a file ID, or a dictionary whose first key is one), then for
 * an Application its EntryPoint. Each inline file is written once per plan
 * and each download made once per plan; each item gets its symlink in the
 * script's folder unless something already exists at that path (lexists, as
 * the reference). The script's folder always exists afterwards.
 *
 * *ret_path (owned) is what the reference's _prepare_files() returns: the
 * entry point's symlink <cache>/<script>/<Name> for an Application, the
 * folder <cache>/<script> for Chef and Puppet.
 *
 * Returns 0, FILES_FAILED with *err filled (a file that failed to download
 * is removed again, so a later call starts over), -ENOENT when script is
 * not in the plan, -EINVAL for a download without a ProcRunner, or another
 * negative errno (-ENOMEM, or what the ProcRunner returned). */
int files_prepare_script(Files *f, const char *script, char **ret_path, PlanError *err);

/* The absolute path of the cache dir. */
const char *files_cache_dir(const Files *f);

/* Remove the cache dir and everything in it (symlinks are removed, never
 * followed), then free the object. Removal is best effort, as the
 * reference's rmtree(ignore_errors=True). Accepts NULL; returns NULL. */
Files *files_free(Files *f);
DEFINE_CLEANUP(Files, files_free)

/* The path of muranoagent-fetch: $MURANOAGENT_FETCH when set (used or
 * failed, never a fall-back), else the first executable of
 * <dir of /proc/self/exe>/files/muranoagent-fetch (the build tree),
 * <dir of /proc/self/exe>/muranoagent-fetch and
 * <libexecdir>/muranoagent/muranoagent-fetch. Returns 0 and *ret (owned),
 * -ENOENT when there is none, or another negative errno. */
int files_fetch_program_path(char **ret);
