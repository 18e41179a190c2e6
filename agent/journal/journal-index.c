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

void journal_index_drop(Journal *j, const char *ts)
{
        bool found;
        size_t i = index_pos(j, ts, &found);

        if (!found)
                return;
        memmove(j->index + i, j->index + i + 1, (j->n_index - i - 1) * sizeof(*j->index));
        j->n_index--;
}

static bool entry_has(Journal *j, const char *ts, const char *file)
{
        char path[JOURNAL_TS_MAX + 16];

        snprintf(path, sizeof(path), "%.20s/%s", ts, file);
        return journal_exists_at(j, j->plans_fd, path);
}

void journal_index_probe(Journal *j, const char *ts)
{
        JournalIndexEntry *e;
        struct stat st;
        bool known;

        /* Only directories are entries (a file with an entry's name is
         * left alone, as the reference leaves it). */
        if (j->ops.fstatat(j->plans_fd, ts, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode)) {
                journal_index_drop(j, ts);
                return;
        }
        known = journal_index_get(j, ts) != NULL;
        e = journal_index_add(j, ts);
        if (!e)
                return;
        e->plan = entry_has(j, ts, JOURNAL_PLAN_FILE);
        e->running = entry_has(j, ts, JOURNAL_RUNNING_FILE);
        /* A running entry met for the first time may hold any Stamp. */
        if (!known && e->running)
                e->stamp = JOURNAL_STAMP_UNKNOWN;
        e->result = entry_has(j, ts, JOURNAL_RESULT_FILE);
        e->id_known = false;
}

int journal_index_fresh(Journal *j)
{
        JournalIndexEntry *old = j->index;
        size_t n_old = j->n_index, cap_old = j->cap_index;
        DIR *d;
        int r;

        if (!j->index_stale)
                return 0;
        r = journal_list_open(j, j->plans_fd, &d);
        if (r < 0)
                return r;
        /* Start empty; what journal_begin() marked, and the stamps the
         * entries took, are carried over. */
        j->index = NULL;
        j->n_index = j->cap_index = 0;
        j->index_stale = false;
        for (struct dirent *de; (errno = 0, de = readdir(d));)
                if (journal_ts_valid(de->d_name))
                        journal_index_probe(j, de->d_name);
        r = errno != 0 ? -errno : 0;
        closedir(d);
        for (size_t i = 0; i < n_old; i++) {
                JournalIndexEntry *e = journal_index_get(j, old[i].ts);

                if (!e)
                        continue;
                e->begun = old[i].begun;
                if (e->running && old[i].running)
                        e->stamp = old[i].stamp;
        }
        if (r < 0 || j->index_stale) {
                /* Keep the old one, marked stale: the next call tries again. */
                free(j->index);
                j->index = old;
                j->n_index = n_old;
                j->cap_index = cap_old;
                j->index_stale = true;
                return r < 0 ? r : -ENOMEM;
        }
        free(old);
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
