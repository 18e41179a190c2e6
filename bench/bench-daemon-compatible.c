/* The compatible floor's plans (see bench-daemon-consumer.h): the contained
 * floor doing also what any agent has to do to run one of the reference's
 * plans, as cheaply as this file could do it:
 *
 *   1. the plan is parsed, and its script (the one entry of its Scripts)
 *      is found with its EntryPoint and Files. The parse is the agent's
 *      plan_parse_json_kept() (agent/plan/plan.h), which leaves a file's
 *      long Base64 text in the message's text (docs/plans.md, "JSON"), and
 *      each file is decoded from there piece by piece into a small buffer,
 *      as the agent does: jansson alone takes 33 ms over a 2 MiB plan's
 *      2.8 MB of Base64, and a floor slower than the agent would flatter
 *      it. The one copy more than the agent's is the message's body into a
 *      block with a NUL after it, which the parse needs and rabbitmq-c's
 *      envelope has no room for (about 0.3 ms for a 2 MiB plan);
 *   2. the files the script needs are laid out as the reference lays them
 *      out (muranoagent/files_manager.py; agent/files/files.h):
 *
 *        files/<plan ID>/          mode 0700, in the current directory
 *          <fileId>                each file, decoded (Text or Base64)
 *          <script>/               the script's folder
 *            <Name>                symlink -> the absolute path of <fileId>
 *
 *      and the entry point made readable and executable by its owner
 *      (chmod through the symlink, as the reference's Application
 *      executor);
 *   3. the script runs from its folder with the agent's command for an
 *      Application script, contained as the contained floor contains it
 *      (contained_run(), bench-daemon-contained.c);
 *   4. files/<plan ID> is removed, as the reference removes it after each
 *      plan;
 *   5. the result document has every field of the agent's and the
 *      reference's: FormatVersion, a fresh ID, SourceID, Action,
 *      ErrorCode, Body and Time.
 *
 * It runs the plan's one script where the agent interprets the plan's Body
 * (the bench's Bodies only call that script and return its stdout), it
 * checks nothing of the plan beyond what it needs, and it keeps no copy of
 * the plan in the reference's storage directory (the agent's journal keeps
 * one there, docs/journal.md). So the agent less this floor is the
 * journal, the Body, the plan's checks and the agent's threads.
 *
 *     bench-daemon-compatible PORT QUEUE RESULTS_QUEUE */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench-daemon-consumer.h"
#include "plan/plan.h"
#include "result/result.h"
#include "util/base64.h"
#include "util/bigmem.h"
#include "util/fileio.h"
#include "util/hexid.h"
#include "util/macro.h"

#define FILES_DIR "files"
/* The files of one script: its entry point and its Files. */
#define MAX_FILES 16
/* Base64 text decoded at a time: 48 KiB of text, 36 KiB of bytes. */
#define CHUNK (48 * 1024)

const char consumer_name[] = "bench-daemon-compatible";

typedef struct PlanFile {
        const char *id, *name; /* the file's ID and the Name its link has */
} PlanFile;

static bool plain_name(const char *s)
{
        return s && *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

/* Where a file's pieces go: written as they are, or decoded first. */
typedef struct Sink {
        int fd;
        bool base64;
        Base64Decoder d;
        unsigned char buf[CHUNK / 4 * 3 + 3]; /* base64_decoded_max(CHUNK) */
} Sink;

static int sink_piece(void *userdata, const char *piece, size_t len)
{
        Sink *k = userdata;
        int rc = 0;

        if (!k->base64)
                return file_write_all(k->fd, piece, len);
        for (size_t at = 0; rc == 0 && at < len; at += CHUNK) {
                size_t n = len - at < CHUNK ? len - at : CHUNK;

                rc = file_write_all(k->fd, k->buf,
                                    base64_decoder_feed(&k->d, piece + at, n, k->buf));
        }
        return rc;
}

/* Writes the file id of the plan's Files in dirfd, decoded, its value
 * read from text (plan_text_pieces()). */
static int write_file(int dirfd, const json_t *files, const PlanText *text, const char *id,
                      const char **ret_name)
{
        const json_t *f = json_object_get(files, id);
        const char *name = json_string_value(json_object_get(f, "Name"));
        const char *type = json_string_value(json_object_get(f, "BodyType"));
        const json_t *body = json_object_get(f, "Body");
        _cleanup_free_ char *why = NULL;
        static Sink k; /* its buffer is 36 KiB, and there is one plan at a time */
        int rc;

        *ret_name = name;
        if (!plain_name(name) || !json_is_string(body) || !type ||
            (strcmp(type, "Base64") != 0 && strcmp(type, "Text") != 0))
                return -EINVAL;
        k = (Sink){.base64 = strcmp(type, "Base64") == 0, .d = BASE64_DECODER_INIT};
        k.fd = openat(dirfd, id, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (k.fd < 0)
                return -errno;
        rc = plan_text_pieces(text, body, sink_piece, &k);
        if (rc == 0 && k.base64 && base64_decoder_finish(&k.d, &why) != 0)
                rc = -EINVAL;
        if (close(k.fd) < 0 && rc == 0)
                rc = -errno;
        return rc;
}

/* The plan's one script, its files in place, its folder in ret_dir. */
static int lay_out(const json_t *plan, const PlanText *text, const char *cache, PlanFile *pf,
                   size_t *ret_n, const char **ret_script, char *ret_dir, size_t dir_size)
{
        const json_t *scripts = json_object_get(plan, "Scripts");
        const json_t *files = json_object_get(plan, "Files");
        const char *script = json_object_iter_key(json_object_iter((json_t *)scripts));
        const json_t *s = json_object_get(scripts, script ? script : "");
        const json_t *more = json_object_get(s, "Files"), *v;
        char target[PATH_MAX];
        int cache_fd, script_fd = -1, rc = 0;
        size_t n = 0, i;

        pf[n++].id = json_string_value(json_object_get(s, "EntryPoint"));
        json_array_foreach (more, i, v) {
                const char *id = json_string_value(v);
                bool seen = false;

                /* Each file once, as the reference writes and links it. */
                for (size_t k = 0; k < n && id; k++)
                        seen = seen || (pf[k].id && strcmp(pf[k].id, id) == 0);
                if (!seen && n < MAX_FILES)
                        pf[n++].id = id;
        }
        *ret_n = 0;
        if (!plain_name(script) || json_array_size(more) + 1 > MAX_FILES)
                return -EINVAL;
        for (i = 0; i < n; i++)
                if (!plain_name(pf[i].id))
                        return -EINVAL;
        if (mkdir(cache, 0700) < 0)
                return -errno;
        cache_fd = open(cache, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (cache_fd < 0)
                return -errno;
        for (i = 0; rc == 0 && i < n; i++) {
                rc = write_file(cache_fd, files, text, pf[i].id, &pf[i].name);
                *ret_n = i + 1; /* made or not: remove_layout() tries */
        }
        if (rc == 0 && mkdirat(cache_fd, script, 0777) < 0)
                rc = -errno;
        if (rc == 0 &&
            (script_fd = openat(cache_fd, script, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
                rc = -errno;
        for (i = 0; rc == 0 && i < n; i++) {
                int w = snprintf(target, sizeof(target), "%s/%s", cache, pf[i].id);

                if (w < 0 || (size_t)w >= sizeof(target))
                        rc = -ENAMETOOLONG;
                else if (symlinkat(target, script_fd, pf[i].name) < 0)
                        rc = -errno;
        }
        if (rc == 0 && fchmodat(script_fd, pf[0].name, S_IXUSR | S_IRUSR, 0) < 0)
                rc = -errno;
        if (script_fd >= 0)
                close(script_fd);
        close(cache_fd);
        *ret_script = script;
        if (rc == 0) {
                int w = snprintf(ret_dir, dir_size, "%s/%s", cache, script);

                if (w < 0 || (size_t)w >= dir_size)
                        rc = -ENAMETOOLONG;
        }
        return rc;
}

/* Removes what lay_out() made: the links, the script's folder, the files,
 * files/<plan ID>. Without a file tree walk: this floor knows what it made. */
static void remove_layout(const char *cache, const char *script, const PlanFile *pf, size_t n)
{
        int cache_fd = open(cache, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int script_fd = cache_fd < 0 || !script
                                ? -1
                                : openat(cache_fd, script, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        for (size_t i = 0; script_fd >= 0 && i < n; i++)
                if (plain_name(pf[i].name))
                        unlinkat(script_fd, pf[i].name, 0);
        if (script_fd >= 0) {
                close(script_fd);
                unlinkat(cache_fd, script, AT_REMOVEDIR);
        }
        for (size_t i = 0; cache_fd >= 0 && i < n; i++)
                unlinkat(cache_fd, pf[i].id, 0);
        if (cache_fd >= 0)
                close(cache_fd);
        rmdir(cache);
}

int consumer_plan_run(const char *id, const void *plan, size_t len, char *out, size_t size)
{
        _cleanup_plan_error_ PlanError err = PLAN_ERROR_INIT;
        _cleanup_(plan_text_freep) PlanText *text = NULL;
        _cleanup_json_ json_t *doc = NULL;
        _cleanup_free_ char *copy = big_malloc(len + 1);
        static char cwd[PATH_MAX];
        char cache[PATH_MAX], dir[PATH_MAX];
        const char *script = NULL, *plan_id;
        PlanFile pf[MAX_FILES] = {{0}};
        size_t n = 0;
        int rc, w;

        /* The first plan makes files/ in the current directory. */
        if (!*cwd && !getcwd(cwd, sizeof(cwd))) {
                fprintf(stderr, "%s: cannot tell the current directory: %m\n", consumer_name);
                return CONSUMER_SCRIPT_FATAL;
        }
        if (mkdir(FILES_DIR, 0700) < 0 && errno != EEXIST) {
                fprintf(stderr, "%s: cannot make %s: %m\n", consumer_name, FILES_DIR);
                return CONSUMER_SCRIPT_FATAL;
        }
        if (!copy)
                return CONSUMER_SCRIPT_FATAL;
        memcpy(copy, plan, len);
        copy[len] = '\0';
        /* The parse takes copy when it keeps a body in it. */
        if (plan_parse_json_kept(&copy, len, NULL, &doc, &text, &err) != 0) {
                fprintf(stderr, "%s: %s: not a plan: %s\n", consumer_name, id,
                        err.message ? err.message : "out of memory");
                return -1;
        }
        plan_id = json_string_value(json_object_get(doc, "ID"));
        w = snprintf(cache, sizeof(cache), "%s/%s/%s", cwd, FILES_DIR, plan_id ? plan_id : "");
        if (!plain_name(plan_id) || w < 0 || (size_t)w >= sizeof(cache)) {
                fprintf(stderr, "%s: %s: its ID cannot name a directory\n", consumer_name, id);
                return -1;
        }
        rc = lay_out(doc, text, cache, pf, &n, &script, dir, sizeof(dir));
        if (rc == 0)
                rc = contained_run(id, dir, pf[0].name, out, size);
        else
                fprintf(stderr, "%s: %s: cannot lay out its files: %s\n", consumer_name, id,
                        strerror(-rc));
        remove_layout(cache, script, pf, n);
        return rc == CONSUMER_SCRIPT_FATAL ? rc : rc < 0 ? -1 : 0;
}

/* The result: the script's output as the Body, or an error's Body with
 * the reason as its Message. An output that JSON cannot carry (not UTF-8)
 * is an error with a fixed Message, so that the floor always answers. */
int consumer_result(const char *id, int code, const char *output, char *buf, size_t size)
{
        _cleanup_json_ json_t *doc = NULL;
        json_t *body = NULL;
        char rid[33], when[32];
        struct timespec now;
        size_t n;

        if (hexid_new(rid) < 0)
                return -1;
        clock_gettime(CLOCK_REALTIME, &now);
        result_format_time(&now, when);
        if (code == 0 && !(body = json_string(output))) {
                code = 1;
                output = "the script's output is not UTF-8";
        }
        if (code != 0)
                body = json_pack("{s:s, s:n}", "Message", output, "AdditionalInfo");
        doc = json_pack("{s:s, s:s, s:s, s:s, s:i, s:o, s:s}", "FormatVersion", "2.0.0", "ID", rid,
                        "SourceID", id, "Action", "Execution:Result", "ErrorCode", code, "Body",
                        body, "Time", when);
        n = doc ? json_dumpb(doc, buf, size, 0) : 0;
        return n == 0 || n >= size ? -1 : (int)n;
}
