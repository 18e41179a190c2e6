/* What the benches share: a monotonic clock in milliseconds, and the
 * comparison qsort() needs to take medians of doubles. */
#pragma once

#include <time.h>

static inline double bench_now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return (x > y) - (x < y);
}
