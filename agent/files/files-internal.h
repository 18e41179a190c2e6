/* Helpers shared by the files of the files module, and tested on their own
 * by tests/test-files.c; not for other modules. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "files/files.h"
#include "plan/plan.h"
#include "util/strbuf.h"

/* --- files.c --- */

struct Files {
        char *files_dir; /* absolute: <storage>/files */
        char *name;      /* the cache dir's name in files_dir */
        char *cache;     /* absolute: files_dir/name */
        int files_fd;
        int cache_fd;
        const json_t *plan;        /* borrowed */
        const json_t *files;       /* borrowed: the plan's Files, or NULL */
        const PlanText *plan_text; /* borrowed: FilesOptions.plan_text */
        ProcRunner runner;
        bool have_runner;
        uint64_t max_download_size;
        unsigned connect_timeout;
        char *fetch_program;
        json_t *done;   /* the file IDs already materialised, as keys */
        bool set_owner; /* give what we make to owner_uid:owner_gid (FilesOptions) */
        uid_t owner_uid;
        gid_t owner_gid;
};

/* With f->set_owner, give the file or directory open in fd to the owner;
 * 0 without. Returns 0 or -errno. */
int files_own_fd(const Files *f, int fd);

/* The same for the directory name below dfd, never following a symlink.
 * Returns 0 or -errno. */
int files_own_dir_at(const Files *f, int dfd, const char *name);

/* --- files-download.c --- */

/* The reference's _download_url_file(): make <cache>/<file_id>/ and fill it
 * by git clone, svn checkout or muranoagent-fetch, once per plan. Returns 0,
 * FILES_FAILED with err filled (the directory is removed again), -EINVAL
 * without a ProcRunner, or another negative errno. */
int files_download(Files *f, const char *file_id, const json_t *file_def, PlanError *err);

/* --- files-url.c --- */

typedef enum FilesUrlKind {
        FILES_URL_HTTP,
        FILES_URL_GIT,
        FILES_URL_SVN,
} FilesUrlKind;

/* The reference's choice (files_manager.py): git for the prefixes git://,
 * git+http://, git+https:/ or the suffix .git; then svn when
 * re.search("https?://(.*)/svn/(.*)") or re.search("svn://(.*)") matches;
 * HTTP otherwise. */
FilesUrlKind files_url_kind(const char *url);

/* The reference's _url(): urllib.parse.urlsplit(url) has a scheme or a
 * netloc. Returns 0 when it has, FILES_URL_NO_LOCATION when it has neither,
 * FILES_URL_BAD_IPV6 when urlsplit would raise "Invalid IPv6 URL" (an
 * unbalanced bracket in the netloc), or -ENOMEM. */
#define FILES_URL_NO_LOCATION 1
#define FILES_URL_BAD_IPV6    2
int files_url_check(const char *url);

/* The URL for messages: a password in the netloc ("user:pass@host") is
 * replaced by "***". Returns a new string or NULL (out of memory). */
char *files_url_mask(const char *url);

/* The password in url's netloc, as a pointer into url and its length; false
 * when there is none (or it is empty). */
bool files_url_password(const char *url, const char **ret, size_t *ret_len);

/* Append text to out with every occurrence of url's password replaced by
 * "***", and with bytes that are not UTF-8 replaced by '?', so that the
 * result can go into a JSON result. Returns 0 or -ENOMEM. */
int files_text_scrub(StrBuf *out, const char *text, size_t len, const char *url);

/* The reference's HTTP target name, url.split('/')[-1]: a pointer into url
 * after its last '/'. */
const char *files_url_last_piece(const char *url);

/* --- files-fs.c --- */

/* Why a file Name is unsafe below the script folder, or NULL. The reasons
 * and their wording are plan validation's (agent/plan/plan-validate.c). */
const char *files_name_problem(const char *name, size_t len);

/* Remove name below dfd: a file, a symlink (never followed) or a whole
 * directory tree, however deep, with a bounded number of descriptors.
 * Best effort: returns 0 when name is gone (or was never there), else the
 * first -errno met. */
int files_rm_tree_at(int dfd, const char *name);

/* Fill err (code 1) with the text of Python's OSError for errno e and path:
 * "[Errno 2] No such file or directory: '/path'". Returns FILES_FAILED or
 * -ENOMEM. */
int files_fail_os(PlanError *err, int e, const char *path);

/* Fill err with code and the formatted message. Returns FILES_FAILED or
 * -ENOMEM. */
int files_fail(PlanError *err, int code, const char *fmt, ...) _printf_(3, 4);

/* Create (if missing) and open the directory chain of name's directory part
 * below dfd, never following a symlink, then make name's last component a
 * symlink to target unless something already exists there. base is the
 * path of dfd, for messages; file_id names the file in them. Returns 0,
 * FILES_FAILED with *err, or -ENOMEM. */
int files_place_link(int dfd, const char *base, const char *name, const char *target,
                     const char *file_id, PlanError *err);

/* --- files-sha256.c --- */

#define FILES_SHA256_HEX 64

/* Lowercase hex SHA-256 of data into hex (65 bytes with the NUL). Returns 0
 * or -EIO when OpenSSL fails. */
int files_sha256_hex(const void *data, size_t len, char hex[static FILES_SHA256_HEX + 1]);

/* The same for the regular file name below dfd (not followed if a
 * symlink). Returns 0 or -errno. */
int files_sha256_file_at(int dfd, const char *name, char hex[static FILES_SHA256_HEX + 1]);

/* A file entry's Sha256 value (our extension), lowercased into want; want
 * is "" when the entry has none. Returns 0, FILES_FAILED with err filled
 * when the value is not 64 hex digits, or -ENOMEM. */
int files_sha256_wanted(const json_t *file_def, const char *file_id,
                        char want[static FILES_SHA256_HEX + 1], PlanError *err);

/* FILES_FAILED with "Checksum mismatch for file ID: expected X, got Y" unless
 * want equals got; 0 when it does. */
int files_sha256_verify(const char *file_id, const char *want, const char *got, PlanError *err);
