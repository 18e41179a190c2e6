/* Optional libraries loaded on first use.
 *
 * A library that nearly no plan needs costs every idle agent its resident
 * pages when it is linked: the loader maps it, reads its symbol tables and
 * relocates it at start (docs/footprint.md). Such a library is not linked
 * but opened with dlopen() the first time it is needed, as systemd does
 * for its optional libraries: its header is only needed at build time, and
 * a module replaces the library's names with calls through a table that
 * lazylib_load() fills once (util/gmp-lazy.h, util/yaml-lazy.h).
 *
 * The rule: every code path that needs the library calls lazylib_load()
 * (through its module's wrapper) before any of its functions, and fails
 * with a clear error, lazylib_error(), when it returns -1; never crashes.
 * The library is never unloaded. Thread-safe. */
#pragma once

#include <pthread.h>
#include <stddef.h>

typedef struct LazyLib {
        const char *library;        /* the file name given to dlopen() */
        const char *const *symbols; /* the n symbols to resolve */
        void **slots;               /* where their addresses go, in that order */
        size_t n;
        pthread_mutex_t lock;
        int tried;  /* under lock */
        int loaded; /* read and written with __atomic builtins */
        char error[256];
} LazyLib;

#define LAZYLIB_INIT(file, syms, table, count)                                                     \
        {                                                                                          \
                .library = (file), .symbols = (syms), .slots = (table), .n = (count),              \
                .lock = PTHREAD_MUTEX_INITIALIZER,                                                 \
        }

int lazylib_load_slow(LazyLib *l);

/* Load the library and resolve every symbol, once per process: 0, or -1
 * when it cannot be loaded (also on every later call); lazylib_error()
 * says why. Once loaded, one atomic read. */
static inline int lazylib_load(LazyLib *l)
{
        if (__builtin_expect(__atomic_load_n(&l->loaded, __ATOMIC_ACQUIRE), 1))
                return 0;
        return lazylib_load_slow(l);
}

/* Why the load failed ("" before the first load, or after a success). */
static inline const char *lazylib_error(const LazyLib *l)
{
        return l->error;
}
