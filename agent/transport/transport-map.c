/* Sorted id maps for the transport's bookkeeping: keys are appended in
 * increasing order (sequence numbers, delivery tags), so the array stays
 * sorted without ever sorting, and the oldest entries are at the front,
 * which is where a "multiple" confirm removes them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport/transport-internal.h"
#include "util/macro.h"

int transport_idmap_append(TransportIdMap *m, uint64_t key, uint64_t value, unsigned epoch)
{
        if (m->n > 0 && m->items[m->n - 1].key >= key)
                return -EINVAL;
        if (grow_array(&m->items, &m->cap, m->n, sizeof(*m->items), 8) < 0)
                return -ENOMEM;
        m->items[m->n++] = (TransportIdEntry){.key = key, .value = value, .epoch = epoch};
        return 0;
}

/* The index of the first entry with a key >= key. */
static size_t idmap_lower_bound(const TransportIdMap *m, uint64_t key)
{
        size_t lo = 0, hi = m->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (m->items[mid].key < key)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

int transport_idmap_remove(TransportIdMap *m, uint64_t key, TransportIdEntry *ret)
{
        size_t i = idmap_lower_bound(m, key);

        if (i == m->n || m->items[i].key != key)
                return -ENOENT;
        if (ret)
                *ret = m->items[i];
        memmove(m->items + i, m->items + i + 1, (m->n - i - 1) * sizeof(*m->items));
        m->n--;
        return 0;
}

int transport_idmap_remove_upto(TransportIdMap *m, uint64_t key, TransportIdEntry **ret,
                                size_t *ret_n)
{
        size_t n = idmap_lower_bound(m, key);
        TransportIdEntry *out = NULL;

        if (n < m->n && m->items[n].key == key)
                n++;
        if (n > 0) {
                out = malloc(n * sizeof(*out));
                if (!out)
                        return -ENOMEM;
                memcpy(out, m->items, n * sizeof(*out));
                memmove(m->items, m->items + n, (m->n - n) * sizeof(*m->items));
                m->n -= n;
        }
        *ret = out;
        *ret_n = n;
        return 0;
}

void transport_idmap_take(TransportIdMap *m, TransportIdMap *ret)
{
        *ret = *m;
        *m = (TransportIdMap){0};
}

void transport_idmap_done(TransportIdMap *m)
{
        free(m->items);
        *m = (TransportIdMap){0};
}
