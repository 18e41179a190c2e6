#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/bigmem.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

void *big_malloc(size_t n)
{
        uintptr_t start, to, huge_to;
        void *p;

        if (n < BIG_MALLOC_MIN)
                return malloc(n);
        if (posix_memalign(&p, BIG_MALLOC_HUGE, n) != 0)
                return NULL;
        /* p is on a huge page's boundary, so on a page's too. */
        start = (uintptr_t)p;
        to = (start + n) & ~((uintptr_t)sysconf(_SC_PAGESIZE) - 1);
        huge_to = (start + n) & ~(uintptr_t)(BIG_MALLOC_HUGE - 1);
        /* Best effort, both: without them the first writes fault the
         * pages, 4 KiB at a time. Only a block of its own mapping is
         * marked: one that malloc carved out of the heap (below the
         * program break) would leave the mark on the heap after free(),
         * and once malloc_trim() has dropped those pages, khugepaged
         * fills each 2 MiB there that a small block still uses with a
         * whole huge page, which an idle agent keeps. */
        if (huge_to > start && start >= (uintptr_t)sbrk(0))
                (void)madvise(p, huge_to - start, MADV_HUGEPAGE);
        (void)madvise(p, to - start, MADV_POPULATE_WRITE);
        return p;
}
