/* The entries in memory. journal_open() lists plans/ once and looks at
 * each entry's files; after that the journal's flock() means that only
 * this Journal changes plans/, so every call records what it did here and
 * journal_list(), journal_next() and journal_done_lookup() answer without
 * listing the directory or looking at any entry (a 500-plan queue cost
 * ~890 faccessat() calls and 5 listings per plan when they did).
 *
 * The rule that keeps the index true: a call that succeeds sets what it
 * knows it made; a call that fails half-way, when the disk may hold
 * anything between before and after, reads that one entry again
 * (journal_index_probe). When memory runs out the index is marked stale
 * and the next call that reads it rebuilds it from a listing. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "journal/journal-internal.h"

/* Where ts is, or would go, in the sorted index. */
static size_t index_pos(const Journal *j, const char *ts, bool *ret_found)
{
        size_t lo = 0, hi = j->n_index;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(j->index[mid].ts, ts);

                if (c == 0) {
                        *ret_found = true;
                        return mid;
                }
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *ret_found = false;
        return lo;
}

JournalIndexEntry *journal_index_get(Journal *j, const char *ts)
{
        bool found;
        size_t i = index_pos(j, ts, &found);

        return found ? &j->index[i] : NULL;
}

JournalIndexEntry *journal_index_add(Journal *j, const char *ts)
{
        bool found;
        size_t i = index_pos(j, ts, &found);

        if (found)
                return &j->index[i];
        if (j->n_index == j->cap_index) {
                size_t cap = j->cap_index ? j->cap_index * 2 : 16;
                JournalIndexEntry *p = realloc(j->index, cap * sizeof(*p));

                if (!p) {
                        j->index_stale = true;
                        return NULL;
                }
                j->index = p;
                j->cap_index = cap;
        }
        memmove(j->index + i + 1, j->index + i, (j->n_index - i) * sizeof(*j->index));
        j->n_index++;
        j->index[i] = (JournalIndexEntry){.stamp = JOURNAL_STAMP_NONE};
        snprintf(j->index[i].ts, sizeof(j->index[i].ts), "%.20s", ts);
        return &j->index[i];
}

void journal_index_keep(Journal *j, JournalIndexEntry *e, JournalResult *r)
{
        if (e->kept) {
                j->kept_bytes -= e->kept->len;
                e->kept = journal_result_free(e->kept);
        }
        if (r && r->len <= JOURNAL_KEPT_RESULTS - j->kept_bytes) {
                j->kept_bytes += r->len;
                e->kept = r;
        } else {
                journal_result_free(r);
        }
}

void journal_index_drop(Journal *j, const char *ts)
{
        bool found;
        size_t i = index_pos(j, ts, &found);

        if (!found)
                return;
        journal_index_keep(j, &j->index[i], NULL);
        if (j->held && streq(j->held_ts, ts))
                j->held = journal_plan_free(j->held);
        memmove(j->index + i, j->index + i + 1, (j->n_index - i - 1) * sizeof(*j->index));
        j->n_index--;
}

static bool entry_has(Journal *j, const char *ts, const char *file)
{
        char path[JOURNAL_TS_MAX + 16];

        snprintf(path, sizeof(path), "%.20s/%s", ts, file);
        return journal_exists_at(j, j->plans_fd, path);
}

/* What the disk holds of entry ts, looked at without the lock: false when
 * it is no entry (only directories are: a file with an entry's name is
 * left alone, as the reference leaves it). */
static bool entry_look(Journal *j, const char *ts, JournalIndexEntry *ret)
{
        struct stat st;

        if (j->ops.fstatat(j->plans_fd, ts, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
                return false;
        *ret = (JournalIndexEntry){.plan = entry_has(j, ts, JOURNAL_PLAN_FILE),
                                   .running = entry_has(j, ts, JOURNAL_RUNNING_FILE),
                                   .result = entry_has(j, ts, JOURNAL_RESULT_FILE),
                                   .slot = entry_has(j, ts, JOURNAL_RESULT_SLOT)};
        return true;
}

void journal_index_probe(Journal *j, const char *ts)
{
        JournalIndexEntry look, *e;
        bool there = entry_look(j, ts, &look), known;

        pthread_mutex_lock(&j->lock);
        if (!there) {
                journal_index_drop(j, ts);
                goto out;
        }
        known = journal_index_get(j, ts) != NULL;
        e = journal_index_add(j, ts);
        if (!e)
                goto out;
        e->plan = look.plan;
        e->running = look.running;
        /* A running entry met for the first time may hold any Stamp. */
        if (!known && e->running)
                e->stamp = JOURNAL_STAMP_UNKNOWN;
        e->result = look.result;
        e->slot = look.slot;
        e->id_known = false;
        journal_index_keep(j, e, NULL);
out:
        pthread_mutex_unlock(&j->lock);
}

static int index_cmp(const void *a, const void *b)
{
        return strcmp(((const JournalIndexEntry *)a)->ts, ((const JournalIndexEntry *)b)->ts);
}

/* The entries a listing of plans/ finds, sorted, looked at without the
 * lock. Returns 0 or -errno. */
static int index_list(Journal *j, JournalIndexEntry **ret, size_t *ret_n)
{
        _cleanup_free_ JournalIndexEntry *v = NULL;
        size_t n = 0, cap = 0;
        DIR *d;
        int r;

        r = journal_list_open(j, j->plans_fd, &d);
        if (r < 0)
                return r;
        for (struct dirent *de; (errno = 0, de = readdir(d));) {
                JournalIndexEntry e;

                if (!journal_ts_valid(de->d_name) || !entry_look(j, de->d_name, &e))
                        continue;
                if (n == cap) {
                        JournalIndexEntry *p = realloc(v, (cap ? cap * 2 : 16) * sizeof(*p));

                        if (!p) {
                                errno = ENOMEM;
                                break;
                        }
                        v = p;
                        cap = cap ? cap * 2 : 16;
                }
                e.stamp = e.running ? JOURNAL_STAMP_UNKNOWN : JOURNAL_STAMP_NONE;
                snprintf(e.ts, sizeof(e.ts), "%.20s", de->d_name);
                v[n++] = e;
        }
        r = errno != 0 ? -errno : 0;
        closedir(d);
        if (r < 0)
                return r;
        if (n > 1)
                qsort(v, n, sizeof(*v), index_cmp);
        *ret = TAKE_PTR(v);
        *ret_n = n;
        return 0;
}

int journal_index_fresh(Journal *j)
{
        JournalIndexEntry *v = NULL;
        size_t n = 0;
        int r;

        pthread_mutex_lock(&j->lock);
        r = j->index_stale;
        pthread_mutex_unlock(&j->lock);
        if (!r)
                return 0;
        r = index_list(j, &v, &n);
        if (r < 0)
                return r; /* still stale: the next call tries again */
        /* What journal_begin() marked, and the stamps the entries took,
         * are carried over. */
        pthread_mutex_lock(&j->lock);
        for (size_t i = 0; i < n; i++) {
                const JournalIndexEntry *old = journal_index_get(j, v[i].ts);

                if (!old)
                        continue;
                v[i].begun = old->begun;
                v[i].ours = old->ours;
                if (v[i].running && old->running)
                        v[i].stamp = old->stamp;
        }
        /* What was kept in memory goes: the files say what is there. */
        for (size_t i = 0; i < j->n_index; i++)
                journal_index_keep(j, &j->index[i], NULL);
        free(j->index);
        j->index = v;
        j->n_index = j->cap_index = n;
        j->index_stale = false;
        pthread_mutex_unlock(&j->lock);
        return 0;
}

bool journal_index_state(const JournalIndexEntry *e, JournalState *ret)
{
        if (e->result)
                *ret = JOURNAL_RESULT;
        else if (!e->plan)
                return false;
        else if (!e->running)
                *ret = JOURNAL_PENDING;
        else if (e->begun)
                *ret = JOURNAL_RUNNING;
        else
                *ret = JOURNAL_INTERRUPTED;
        return true;
}
