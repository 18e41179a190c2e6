/* Done records: the results of recently finished plans, kept so that a
 * plan the broker delivers again (engine observation 9: a node that dies
 * right after an ack redelivers the message) is answered with its result
 * instead of being executed twice.
 *
 * When a confirmed entry is removed, its result.json is appended to
 * done/records (journal-done-log.c) under a name: the SHA-256 of the plan
 * ID's JSON text (so "1" and 1 differ, as they do for the engine), or of
 * "delivery:" and the body for a result without such an ID. Records of the
 * format before, done/<name>/result.json with the file's mtime as their
 * time, are still read. The reference lists plans/ and looks for
 * <name>/plan.json and <name>/result.json, so it never sees done/. The
 * records are kept in memory in time order (nanoseconds, so that records
 * made within one second keep their order); records older than
 * done_max_age or beyond the done_max_count newest are forgotten. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal/journal-internal.h"
#include "util/fileio.h"
#include "util/hexid.h"
#include "util/pyjson.h"
#include "util/sha256.h"

bool journal_done_id_ok(const json_t *plan_id)
{
        return (json_is_string(plan_id) && json_string_length(plan_id) > 0) ||
               json_is_integer(plan_id);
}

/* The record name of a key: the SHA-256 of prefix || data, in hex. */
static int digest_name(const char *prefix, const void *data, size_t len, char name[65])
{
        return sha256_hex(prefix, strlen(prefix), data, len, name);
}

static int id_name(const json_t *plan_id, char name[65])
{
        _cleanup_free_ char *text = NULL;
        int r;

        r = pyjson_dumps(plan_id, &text);
        if (r < 0)
                return r;
        return digest_name("", text, strlen(text), name);
}

/* A delivery's record name hashes "delivery:" and the body: no JSON text
 * starts with a 'd', so it never equals the name of an ID. */
static int delivery_name(const void *body, size_t len, char name[65])
{
        return digest_name("delivery:", body, len, name);
}

static bool name_ok(const char *name)
{
        return strlen(name) == 64 && hex_is_lower(name, 64);
}

json_t *journal_result_source_id(const char *text, size_t len)
{
        _cleanup_json_ json_t *doc = json_loadb(text, len, 0, NULL);
        json_t *id = json_object_get(doc, "SourceID");

        return id ? json_incref(id) : NULL;
}

#define NSEC 1000000000LL

static int64_t ts_nsec(const struct timespec *t)
{
        return (int64_t)t->tv_sec * NSEC + t->tv_nsec;
}

static int64_t now_nsec(Journal *j)
{
        struct timespec now;

        return journal_now(j, &now) < 0 ? 0 : ts_nsec(&now);
}

static int64_t result_mtime(Journal *j, const char *name)
{
        char path[64 + 1 + sizeof(JOURNAL_RESULT_FILE)];
        struct stat st;

        snprintf(path, sizeof(path), "%s/%s", name, JOURNAL_RESULT_FILE);
        if (j->ops.fstatat(j->done_fd, path, &st, 0) < 0)
                return -1;
        return ts_nsec(&st.st_mtim);
}

static ssize_t done_find(const Journal *j, const char *name)
{
        for (size_t i = 0; i < j->n_done; i++)
                if (streq(j->done[i].name, name))
                        return (ssize_t)i;
        return -1;
}

static void done_drop(Journal *j, size_t i)
{
        memmove(j->done + i, j->done + i + 1, (j->n_done - i - 1) * sizeof(j->done[0]));
        j->n_done--;
}

/* Forget record i; a record in the old format goes from the disk too. */
static void done_forget(Journal *j, size_t i)
{
        if (j->done[i].where == JOURNAL_DONE_DIR_RECORD)
                (void)journal_rm_rf_at(j, j->done_fd, j->done[i].name);
        done_drop(j, i);
}

/* Once no record in memory is in records.old, it goes from the disk. */
static void done_old_check(Journal *j)
{
        for (size_t i = 0; i < j->n_done; i++)
                if (j->done[i].where == JOURNAL_DONE_OLD)
                        return;
        journal_done_log_drop_old(j);
}

/* Insert keeping the array in time order (ties by name). */
int journal_done_add(Journal *j, const JournalDone *rec)
{
        ssize_t k = done_find(j, rec->name);
        JournalDone *p;
        size_t i;

        if (k >= 0)
                done_forget(j, (size_t)k);
        p = realloc(j->done, (j->n_done + 1) * sizeof(*p));
        if (!p)
                return -ENOMEM;
        j->done = p;
        for (i = j->n_done; i > 0; i--) {
                const JournalDone *d = &j->done[i - 1];
                if (d->time < rec->time || (d->time == rec->time && strcmp(d->name, rec->name) < 0))
                        break;
        }
        memmove(j->done + i + 1, j->done + i, (j->n_done - i) * sizeof(*p));
        j->done[i] = *rec;
        j->n_done++;
        return 0;
}

void journal_done_rotated(Journal *j)
{
        size_t n = 0;

        for (size_t i = 0; i < j->n_done; i++) {
                if (j->done[i].where == JOURNAL_DONE_OLD)
                        continue;
                if (j->done[i].where == JOURNAL_DONE_LOG)
                        j->done[i].where = JOURNAL_DONE_OLD;
                j->done[n++] = j->done[i];
        }
        j->n_done = n;
}

/* Remove records beyond the count or age limit, oldest first. Returns how
 * many went. The space of those in the records files comes back when the
 * files rotate, or when nothing in records.old is kept any more. */
static unsigned done_prune(Journal *j)
{
        int64_t now = now_nsec(j);
        unsigned n = 0;

        /* A clock that fails, or went back, expires nothing by age. */
        while (j->n_done > 0 && (j->n_done > j->done_max_count ||
                                 (now > 0 && now - j->done[0].time > j->done_max_age * NSEC))) {
                done_forget(j, 0);
                n++;
        }
        if (n > 0)
                done_old_check(j);
        return n;
}

int journal_done_open(Journal *j)
{
        DIR *d;
        int r = 0;

        if (j->ops.mkdirat(j->plans_fd, JOURNAL_DONE_DIR, 0700) == 0) {
                r = journal_sync(j, j->plans_fd);
                if (r < 0)
                        return r;
        } else if (errno != EEXIST) {
                return -errno;
        }
        j->done_fd = journal_open_dir(j, j->plans_fd, JOURNAL_DONE_DIR);
        if (j->done_fd < 0)
                return j->done_fd;

        r = journal_list_open(j, j->done_fd, &d);
        if (r < 0)
                return r;
        for (struct dirent *de; (errno = 0, de = readdir(d));) {
                int64_t t;

                if (de->d_name[0] == '.' && !streq(de->d_name, ".") && !streq(de->d_name, "..")) {
                        (void)journal_rm_rf_at(j, j->done_fd, de->d_name);
                        j->report.n_temp_removed++;
                        continue;
                }
                if (!name_ok(de->d_name))
                        continue;
                t = result_mtime(j, de->d_name);
                if (t < 0) {
                        /* A record whose move never finished. */
                        (void)journal_rm_rf_at(j, j->done_fd, de->d_name);
                        j->report.n_temp_removed++;
                        continue;
                }
                JournalDone rec = {.time = t, .where = JOURNAL_DONE_DIR_RECORD};

                memcpy(rec.name, de->d_name, sizeof(rec.name));
                journal_seal_file(j, j->done_fd, rec.name, JOURNAL_RESULT_FILE,
                                  JOURNAL_MAX_RESULT_FILE);
                r = journal_done_add(j, &rec);
                if (r < 0)
                        break;
        }
        if (r == 0 && errno != 0)
                r = -errno;
        closedir(d);
        if (r < 0)
                return r;
        /* Records of the files are newer than any in the old format. */
        r = journal_done_log_open(j);
        if (r < 0)
                return r;
        j->report.n_done_expired += done_prune(j);
        return 0;
}

/* A result without an ID to keep it under (a body that is not a plan, sent
 * without message_id) is kept under a digest of its delivery's body, so
 * that the same message delivered again gets the same answer. A plan.json
 * that cannot be read leaves the name empty: no record. */
static int entry_delivery_name(Journal *j, JournalIndexEntry *e)
{
        _cleanup_(journal_plan_freep) JournalPlan *p = NULL;
        _cleanup_free_ char *error = NULL;
        int r;

        r = journal_plan_read(j, e->ts, &p, &error);
        if (r == JOURNAL_CORRUPT || r == JOURNAL_FORGED || r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        return delivery_name(p->body, p->body_len, e->id_name);
}

int journal_done_entry_id(Journal *j, JournalIndexEntry *e)
{
        char path[JOURNAL_TS_MAX + sizeof(JOURNAL_RESULT_FILE)];
        _cleanup_free_ char *text = NULL;
        _cleanup_json_ json_t *id = NULL;
        size_t len;
        int r;

        if (e->id_known)
                return 0;
        if (e->kept) {
                /* As the caller that stored it gave it: nothing to read. */
                id = json_incref(e->kept->source_id);
        } else {
                snprintf(path, sizeof(path), "%s/%s", e->ts, JOURNAL_RESULT_FILE);
                r = journal_seal_read_at(j, j->plans_fd, path, JOURNAL_RESULT_FILE, e->ts,
                                         JOURNAL_MAX_RESULT_FILE, &text, &len);
                if (r < 0)
                        return r;
                /* A forged result answers nothing. */
                id = r == 0 ? journal_result_source_id(text, len) : NULL;
        }
        r = 0;
        e->id_name[0] = '\0';
        if (id && journal_done_id_ok(id))
                r = id_name(id, e->id_name);
        else if (e->plan)
                r = entry_delivery_name(j, e);
        if (r < 0)
                return r;
        e->id_known = true;
        return 0;
}

int64_t journal_done_now(Journal *j)
{
        return now_nsec(j);
}

bool journal_done_has(const Journal *j, const char name[65], int64_t time)
{
        for (size_t i = 0; i < j->n_done; i++)
                if (streq(j->done[i].name, name) && j->done[i].time >= time)
                        return true;
        return false;
}

int journal_done_mend(Journal *j, const char name[65], int64_t time, const char *text, size_t len)
{
        ssize_t i = done_find(j, name);

        /* Dropped since (age, count), or a later record of the plan
         * stands for it: nothing to keep. */
        if (i < 0 || j->done[i].time > time)
                return 0;
        if (j->done[i].time < time || j->done[i].len != len)
                return journal_done_record_at(j, name, text, len, time, false);
        return journal_done_log_mend(j, &j->done[i], text);
}

int journal_done_record_at(Journal *j, const char name[65], const char *text, size_t len,
                           int64_t time, bool sync)
{
        JournalDone rec = {.time = time, .len = len};
        int r;

        memcpy(rec.name, name, sizeof(rec.name));
        r = journal_done_log_append(j, &rec, text, sync);
        if (r < 0)
                return r;
        /* A plan answered twice (a redelivery answered from its record)
         * replaces its record. */
        r = journal_done_add(j, &rec);
        if (r < 0)
                return r;
        (void)done_prune(j);
        done_old_check(j);
        return 0;
}

/* Whether a result's text answers plan_id (NULL: the result has no
 * SourceID worth keeping, for a record kept under its delivery's digest):
 * 1 and *ret takes text, 0 when not. */
static int text_matches(char **text, size_t len, const json_t *plan_id, char **ret)
{
        _cleanup_json_ json_t *id = journal_result_source_id(*text, len);

        if (plan_id ? !id || !json_equal(id, plan_id) : id && journal_done_id_ok(id))
                return 0;
        *ret = TAKE_PTR(*text);
        return 1;
}

/* text_matches() of what a read that returned r gave: a missing file, or
 * one whose seal is wrong, matches nothing; another error is returned. */
static int read_matches(int r, char **text, size_t len, const json_t *plan_id, char **ret)
{
        if (r == -ENOENT || r == JOURNAL_FORGED)
                return 0;
        if (r < 0)
                return r;
        return text_matches(text, len, plan_id, ret);
}

/* result.json at dirfd/<dir>/result.json, as text_matches(); -errno. */
static int result_matches(Journal *j, int dirfd, const char *dir, const json_t *plan_id, char **ret)
{
        char path[65 + sizeof(JOURNAL_RESULT_FILE)];
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r;

        snprintf(path, sizeof(path), "%s/%s", dir, JOURNAL_RESULT_FILE);
        r = journal_seal_read_at(j, dirfd, path, JOURNAL_RESULT_FILE, dir, JOURNAL_MAX_RESULT_FILE,
                                 &text, &len);
        return read_matches(r, &text, len, plan_id, ret);
}

/* The result of entry ts (from memory when it is kept), as
 * text_matches(); -errno. */
static int entry_matches(Journal *j, const char *ts, const json_t *plan_id, char **ret)
{
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r;

        r = journal_load_result(j, ts, &text, &len);
        return read_matches(r, &text, len, plan_id, ret);
}

/* Done record rec, as text_matches(); -errno. */
static int record_matches(Journal *j, const JournalDone *rec, const json_t *plan_id, char **ret)
{
        _cleanup_free_ char *text = NULL;
        int r;

        if (rec->where == JOURNAL_DONE_DIR_RECORD)
                return result_matches(j, j->done_fd, rec->name, plan_id, ret);
        r = journal_done_log_read(j, rec, &text);
        return read_matches(r, &text, rec->len, plan_id, ret);
}

/* The result kept under record name name; plan_id as result_matches(). */
static int lookup_locked(Journal *j, const char name[65], const json_t *plan_id, char **ret)
{
        ssize_t i;
        int r;

        (void)done_prune(j);
        i = done_find(j, name);
        if (i >= 0) {
                r = record_matches(j, &j->done[i], plan_id, ret);
                if (r != 0)
                        return r;
        }

        /* A result not yet confirmed answers the plan just as well. Each
         * entry's result.json is read once for its SourceID (the name
         * remembers it), and again only when the name matches. */
        r = journal_index_fresh(j);
        if (r < 0)
                return r;
        for (size_t k = 0; k < j->n_index; k++) {
                JournalIndexEntry *e = &j->index[k];

                if (!e->result)
                        continue;
                r = journal_done_entry_id(j, e);
                if (r == -ENOENT)
                        continue;
                if (r < 0)
                        return r;
                if (!streq(e->id_name, name))
                        continue;
                r = entry_matches(j, e->ts, plan_id, ret);
                if (r != 0)
                        return r;
        }
        return 0;
}

int journal_done_lookup(Journal *j, const json_t *plan_id, char **ret_result_text)
{
        char name[65];
        int r;

        if (!journal_done_id_ok(plan_id))
                return 0;
        r = id_name(plan_id, name);
        if (r < 0)
                return r;
        pthread_mutex_lock(&j->io);
        r = lookup_locked(j, name, plan_id, ret_result_text);
        pthread_mutex_unlock(&j->io);
        return r;
}

int journal_done_lookup_delivery(Journal *j, const void *body, size_t len, char **ret_result_text)
{
        char name[65];
        int r;

        r = delivery_name(body, len, name);
        if (r < 0)
                return r;
        pthread_mutex_lock(&j->io);
        r = lookup_locked(j, name, NULL, ret_result_text);
        pthread_mutex_unlock(&j->io);
        return r;
}

static int done_time_cmp(const void *a, const void *b)
{
        int64_t x = (*(const JournalDone *const *)a)->time,
                y = (*(const JournalDone *const *)b)->time;

        return (x > y) - (x < y);
}

int journal_done_newest(Journal *j, size_t max, journal_done_fn fn, void *userdata)
{
        _cleanup_free_ const JournalDone **v = NULL;
        size_t n = 0;
        int r = 0;

        pthread_mutex_lock(&j->io);
        if (j->n_done > 0 && !(v = calloc(j->n_done, sizeof(*v))))
                r = -ENOMEM;
        for (size_t i = 0; r == 0 && i < j->n_done; i++)
                if (j->done[i].where != JOURNAL_DONE_DIR_RECORD)
                        v[n++] = &j->done[i];
        if (n > 0)
                qsort(v, n, sizeof(*v), done_time_cmp);
        for (size_t i = n > max ? n - max : 0; r == 0 && i < n; i++) {
                _cleanup_free_ char *text = NULL;

                r = journal_done_log_read(j, v[i], &text);
                if (r == 0)
                        fn(userdata, v[i]->time, text, v[i]->len);
                else if (r == -ENOENT)
                        r = 0; /* rotated away meanwhile */
        }
        pthread_mutex_unlock(&j->io);
        return r;
}
