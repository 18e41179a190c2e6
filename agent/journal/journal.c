/* The journal object: opening (with the repairs a crash calls for), the
 * listing the daemon's loop works from, and removal. See journal.h for
 * the layout and docs/journal.md for the daemon's side. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal/journal-internal.h"
#include "util/fileio.h"

/* Room for any plan the agent accepts with the default max_plan_size of
 * 64 MiB (86 MiB of Base64), and more. */
#define DEFAULT_MAX_PLAN_FILE ((size_t)256 << 20)

/* mkdir -p, mode 0700 for what is made, as the files module does for its
 * own part of the storage directory. */
static int mkdir_parents(Journal *j, const char *path)
{
        _cleanup_free_ char *p = strdup(path);

        if (!p)
                return -ENOMEM;
        for (char *s = p + 1;; s++) {
                if (*s != '/' && *s != '\0')
                        continue;
                char c = *s;
                *s = '\0';
                if (j->ops.mkdirat(AT_FDCWD, p, 0700) < 0 && errno != EEXIST)
                        return -errno;
                *s = c;
                if (c == '\0')
                        return 0;
        }
}

static int open_plans(Journal *j, const char *storage)
{
        _cleanup_close_ int storage_fd = -1;
        int r;

        r = mkdir_parents(j, storage);
        if (r < 0)
                return r;
        storage_fd = open(storage, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (storage_fd < 0)
                return -errno;
        if (j->ops.mkdirat(storage_fd, "plans", 0700) == 0) {
                /* A new plans/ must itself survive a power loss. */
                r = journal_sync(j, storage_fd);
                if (r < 0)
                        return r;
        } else if (errno != EEXIST) {
                return -errno;
        }
        /* plans/ may be a symlink made by an administrator, which the
         * reference follows too. */
        j->plans_fd = openat(storage_fd, "plans", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (j->plans_fd < 0)
                return -errno;
        if (flock(j->plans_fd, LOCK_EX | LOCK_NB) < 0)
                return errno == EWOULDBLOCK ? -EBUSY : -errno;
        /* The reference chmods an existing plans/ to 0700 and ignores a
         * failure. */
        (void)fchmod(j->plans_fd, 0700);
        return 0;
}

/* Repair one entry after a crash: remove temporary files, and the entry
 * when it holds neither a plan nor a result (a message that was never
 * acked, so the broker still has it). */
static void recover_entry(Journal *j, const char *ts)
{
        static const char *const tmps[] = {JOURNAL_PLAN_TMP, JOURNAL_RESULT_TMP};
        _cleanup_close_ int fd = journal_open_dir(j, j->plans_fd, ts);
        bool plan, result;

        if (fd < 0)
                return;
        for (size_t i = 0; i < ELEMENTSOF(tmps); i++)
                if (j->ops.unlinkat(fd, tmps[i], 0) == 0)
                        j->report.n_temp_removed++;
        plan = journal_exists_at(fd, JOURNAL_PLAN_FILE);
        result = journal_exists_at(fd, JOURNAL_RESULT_FILE);
        if (!plan && !result) {
                if (journal_rm_rf_at(j, j->plans_fd, ts) == 0)
                        j->report.n_empty_removed++;
                return;
        }
        if (plan && !result && journal_exists_at(fd, JOURNAL_RUNNING_FILE))
                j->report.n_interrupted++;
}

static int recover(Journal *j)
{
        int r;
        DIR *d;

        r = journal_list_open(j->plans_fd, &d);
        if (r < 0)
                return r;
        for (struct dirent *de; (errno = 0, de = readdir(d));) {
                if (streq(de->d_name, JOURNAL_STAMP_TMP)) {
                        if (j->ops.unlinkat(j->plans_fd, de->d_name, 0) == 0)
                                j->report.n_temp_removed++;
                        continue;
                }
                if (!journal_ts_valid(de->d_name))
                        continue;
                uint64_t v = strtoull(de->d_name, NULL, 10);
                if (v > j->last_ts)
                        j->last_ts = v;
                recover_entry(j, de->d_name);
        }
        if (errno != 0)
                r = -errno;
        closedir(d);
        return r;
}

int journal_open(const char *storage, const JournalOptions *opt, Journal **ret)
{
        _cleanup_(journal_freep) Journal *j = NULL;
        JournalOptions o = opt ? *opt : JOURNAL_OPTIONS_DEFAULT;
        int r;

        if (!storage || !*storage)
                return -EINVAL;
        j = calloc(1, sizeof(*j));
        if (!j)
                return -ENOMEM;
        j->plans_fd = j->done_fd = -1;
        pthread_mutex_init(&j->lock, NULL);
        j->ops = o.ops ? *o.ops : journal_sys_ops;
        j->max_plan_file = o.max_plan_file ? o.max_plan_file : DEFAULT_MAX_PLAN_FILE;
        j->done_max_count = o.done_max_count;
        /* Ages are compared in nanoseconds: beyond 292 years is forever. */
        j->done_max_age =
                o.done_max_age > INT64_MAX / 1000000000 ? INT64_MAX / 1000000000 : o.done_max_age;

        r = open_plans(j, storage);
        if (r < 0)
                return r;
        r = journal_stamp_load(j);
        if (r < 0)
                return r;
        j->report.last_stamp = j->last_stamp;
        r = recover(j);
        if (r < 0)
                return r;
        r = journal_done_open(j);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(j);
        return 0;
}

Journal *journal_free(Journal *j)
{
        if (!j)
                return NULL;
        /* Closing the descriptor releases the flock. */
        if (j->done_fd >= 0)
                close(j->done_fd);
        if (j->plans_fd >= 0)
                close(j->plans_fd);
        free(j->begun);
        free(j->done);
        pthread_mutex_destroy(&j->lock);
        free(j);
        return NULL;
}

const JournalOpenReport *journal_open_report(const Journal *j)
{
        return &j->report;
}

static int entry_cmp(const void *a, const void *b)
{
        return strcmp(((const JournalEntry *)a)->ts, ((const JournalEntry *)b)->ts);
}

static bool entry_has(Journal *j, const char *ts, const char *file)
{
        char path[JOURNAL_TS_MAX + 16];

        snprintf(path, sizeof(path), "%.20s/%s", ts, file);
        return journal_exists_at(j->plans_fd, path);
}

int journal_list_locked(Journal *j, JournalEntry **ret, size_t *ret_n)
{
        _cleanup_free_ JournalEntry *v = NULL;
        size_t n = 0, cap = 0;
        DIR *d;
        int r;

        r = journal_list_open(j->plans_fd, &d);
        if (r < 0)
                return r;
        for (struct dirent *de; (errno = 0, de = readdir(d));) {
                JournalState state;

                if (!journal_ts_valid(de->d_name))
                        continue;
                if (entry_has(j, de->d_name, JOURNAL_RESULT_FILE))
                        state = JOURNAL_RESULT;
                else if (!entry_has(j, de->d_name, JOURNAL_PLAN_FILE))
                        continue;
                else if (!entry_has(j, de->d_name, JOURNAL_RUNNING_FILE))
                        state = JOURNAL_PENDING;
                else if (journal_begun_has(j, de->d_name))
                        state = JOURNAL_RUNNING;
                else
                        state = JOURNAL_INTERRUPTED;
                if (n == cap) {
                        size_t ncap = cap ? cap * 2 : 8;
                        JournalEntry *p = realloc(v, ncap * sizeof(*p));
                        if (!p) {
                                r = -ENOMEM;
                                break;
                        }
                        v = p;
                        cap = ncap;
                }
                strcpy(v[n].ts, de->d_name);
                v[n].state = state;
                n++;
        }
        if (r == 0 && errno != 0)
                r = -errno;
        closedir(d);
        if (r < 0)
                return r;
        if (n > 1)
                qsort(v, n, sizeof(*v), entry_cmp);
        *ret = TAKE_PTR(v);
        *ret_n = n;
        return 0;
}

int journal_list(Journal *j, JournalEntry **ret, size_t *ret_n)
{
        int r;

        pthread_mutex_lock(&j->lock);
        r = journal_list_locked(j, ret, ret_n);
        pthread_mutex_unlock(&j->lock);
        return r;
}

int journal_next(Journal *j, JournalEntry *ret)
{
        _cleanup_free_ JournalEntry *v = NULL;
        const JournalEntry *pick = NULL;
        size_t n = 0;
        int r;

        r = journal_list(j, &v, &n);
        if (r < 0)
                return r;
        /* The reference's main loop: unsent results first, then plans. */
        for (size_t i = 0; i < n && !pick; i++)
                if (v[i].state == JOURNAL_RESULT)
                        pick = &v[i];
        for (size_t i = 0; i < n && !pick; i++)
                if (v[i].state == JOURNAL_PENDING || v[i].state == JOURNAL_INTERRUPTED)
                        pick = &v[i];
        if (!pick)
                return 0;
        *ret = *pick;
        return 1;
}

/* Record the entry's result under its SourceID when it has one worth
 * recording. Returns 1 when the entry moved to done/, 0 when it was left
 * for plain removal, or -errno. */
static int remove_record(Journal *j, const char *ts)
{
        char path[JOURNAL_TS_MAX + sizeof(JOURNAL_RESULT_FILE)];
        _cleanup_free_ char *text = NULL;
        _cleanup_json_ json_t *id = NULL;
        size_t len;
        int r;

        if (j->done_max_count == 0 || j->done_max_age <= 0)
                return 0;
        snprintf(path, sizeof(path), "%s/%s", ts, JOURNAL_RESULT_FILE);
        r = file_read_regular_at(j->plans_fd, path, JOURNAL_MAX_RESULT_FILE, &text, &len);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        id = journal_result_source_id(text, len);
        if (!id || !journal_done_id_ok(id))
                return 0;
        r = journal_done_record(j, ts, id);
        return r < 0 ? r : 1;
}

int journal_remove(Journal *j, const char *ts, bool record)
{
        struct stat st;
        int r = 0;

        if (!journal_ts_valid(ts))
                return -EINVAL;
        pthread_mutex_lock(&j->lock);
        if (fstatat(j->plans_fd, ts, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                r = -errno;
                goto out;
        }
        if (record)
                r = remove_record(j, ts);
        if (r == 0)
                r = journal_rm_rf_at(j, j->plans_fd, ts);
        if (r >= 0) {
                journal_begun_forget(j, ts);
                r = 0;
        }
out:
        pthread_mutex_unlock(&j->lock);
        return r;
}
