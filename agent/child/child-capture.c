/* The bounded keeper of one output stream: head, tail ring and a count. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "child/child-capture.h"

/* The first allocation of a buffer; later ones double, up to the maximum. */
#define CHILD_CAPTURE_MIN_ALLOC 4096

void child_capture_init(ChildCapture *cap, size_t limit)
{
        *cap = (ChildCapture){
                .head_max = limit / 2,
                .tail_max = limit - limit / 2,
        };
}

void child_capture_clear(ChildCapture *cap)
{
        free(cap->head);
        free(cap->tail);
        child_capture_init(cap, cap->head_max + cap->tail_max);
}

/* Make *buf hold at least need bytes (need <= max), growing geometrically so
 * that many small reads cost few reallocations. */
static int child_capture_reserve(char **buf, size_t *alloc, size_t need, size_t max)
{
        size_t n;
        char *p;

        if (need <= *alloc)
                return 0;
        n = *alloc > max / 2 ? max : *alloc * 2;
        if (n < CHILD_CAPTURE_MIN_ALLOC)
                n = CHILD_CAPTURE_MIN_ALLOC;
        if (n < need)
                n = need;
        if (n > max)
                n = max; /* still >= need, which never exceeds max */
        p = realloc(*buf, n);
        if (!p)
                return -ENOMEM;
        *buf = p;
        *alloc = n;
        return 0;
}

static int child_capture_fail(ChildCapture *cap)
{
        /* What the tail holds would no longer be the stream's end, so it
         * goes: the finished text is then the head and a count of the rest. */
        free(cap->tail);
        cap->tail = NULL;
        cap->tail_len = cap->tail_alloc = cap->tail_start = 0;
        cap->failed = true;
        return -ENOMEM;
}

/* Put n bytes (n < tail_max) into the full ring over its oldest bytes. */
static void child_capture_ring_put(ChildCapture *cap, const char *p, size_t n)
{
        size_t first = cap->tail_max - cap->tail_start;

        if (first > n)
                first = n;
        memcpy(cap->tail + cap->tail_start, p, first);
        memcpy(cap->tail, p + first, n - first);
        cap->tail_start = (cap->tail_start + n) % cap->tail_max;
}

int child_capture_append(ChildCapture *cap, const void *data, size_t n)
{
        const char *p = data;
        size_t k;

        cap->total += n;
        if (cap->failed)
                return 0;

        k = cap->head_max - cap->head_len;
        if (k > n)
                k = n;
        if (k > 0) {
                if (child_capture_reserve(&cap->head, &cap->head_alloc, cap->head_len + k,
                                          cap->head_max) < 0)
                        return child_capture_fail(cap);
                memcpy(cap->head + cap->head_len, p, k);
                cap->head_len += k;
                p += k;
                n -= k;
        }
        if (n == 0 || cap->tail_max == 0)
                return 0;

        if (n >= cap->tail_max) {
                /* This read alone fills the tail: keep its last bytes. */
                if (child_capture_reserve(&cap->tail, &cap->tail_alloc, cap->tail_max,
                                          cap->tail_max) < 0)
                        return child_capture_fail(cap);
                memcpy(cap->tail, p + n - cap->tail_max, cap->tail_max);
                cap->tail_len = cap->tail_max;
                cap->tail_start = 0;
                return 0;
        }

        if (cap->tail_len < cap->tail_max) {
                /* Not full yet, so not wrapped either: append in line. */
                k = cap->tail_max - cap->tail_len;
                if (k > n)
                        k = n;
                if (child_capture_reserve(&cap->tail, &cap->tail_alloc, cap->tail_len + k,
                                          cap->tail_max) < 0)
                        return child_capture_fail(cap);
                memcpy(cap->tail + cap->tail_len, p, k);
                cap->tail_len += k;
                p += k;
                n -= k;
        }
        if (n > 0)
                child_capture_ring_put(cap, p, n);
        return 0;
}

int child_capture_finish(ChildCapture *cap, ChildOutput *ret)
{
        uint64_t omitted = cap->total - cap->head_len - cap->tail_len;
        char marker[80] = "";
        size_t mlen = 0, len;
        char *text;

        if (omitted > 0)
                mlen = (size_t)snprintf(marker, sizeof(marker),
                                        "\n[... %" PRIu64 " bytes omitted by muranoagent ...]\n",
                                        omitted);
        len = cap->head_len + mlen + cap->tail_len;
        text = realloc(cap->head, len + 1);
        if (!text)
                return -ENOMEM;
        cap->head = NULL;

        memcpy(text + cap->head_len, marker, mlen);
        if (cap->tail_len > 0) {
                /* The ring's oldest byte is at tail_start (0 until it wrapped). */
                size_t older = cap->tail_len - cap->tail_start;
                char *q = text + cap->head_len + mlen;

                memcpy(q, cap->tail + cap->tail_start, older);
                memcpy(q + older, cap->tail, cap->tail_start);
        }
        text[len] = '\0';

        *ret = (ChildOutput){
                .data = text,
                .len = len,
                .total = cap->total,
                .truncated = omitted > 0,
        };
        child_capture_clear(cap);
        return 0;
}
