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
        void *p = malloc(n);

        if (p && n >= BIG_MALLOC_MIN) {
                uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
                uintptr_t from = ((uintptr_t)p + page - 1) & ~(page - 1);
                uintptr_t to = ((uintptr_t)p + n) & ~(page - 1);

                /* Best effort: without it the first writes fault them. */
                if (to > from)
                        (void)madvise((void *)from, to - from, MADV_POPULATE_WRITE);
        }
        return p;
}
