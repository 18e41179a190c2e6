/* Optional libraries loaded on first use.
 *
 * A library that nearly no plan needs costs every idle agent its resident
 * pages when it is linked: the loader maps it, reads its symbol tables and
 * relocates it at start (docs/footprint.md). Such a library is not linked
 * but opened with dlopen() the first time it is needed, as systemd does
 * for its optional libraries: its header is only needed at build time, and
 * a module replaces the library's names with calls through a table that
 * lazylib_load() fills once (util/gmp-lazy.h, util/yaml-lazy.h; the two
 * macros at the end make the table).
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

#define LAZYLIB_MEMBER_(m, sym) __typeof__(sym) *m;
#define LAZYLIB_ONE_(m, sym)    +1
#define LAZYLIB_NAME_(m, sym)   #sym,

/* In a module's header, before its macros replace the library's names:
 * for the functions FUNCTIONS(X) lists as X(member, symbol), declare
 * PREFIX_lazy_lib (tests may set its .library, the file name to dlopen(),
 * before the first load), the table PREFIX_lazy (PREFIX_lazy.f.member is
 * the function), PREFIX_lazy_load() (lazylib_load()) and
 * PREFIX_lazy_error() (lazylib_error()). */
#define LAZYLIB_DECLARE(prefix, FUNCTIONS)                                                         \
        extern LazyLib prefix##_lazy_lib;                                                          \
        union prefix##_lazy_table {                                                                \
                struct {                                                                           \
                        FUNCTIONS(LAZYLIB_MEMBER_)                                                 \
                } f;                                                                               \
                void *slots[0 FUNCTIONS(LAZYLIB_ONE_)];                                            \
        };                                                                                         \
        extern union prefix##_lazy_table prefix##_lazy;                                            \
        static inline int prefix##_lazy_load(void)                                                 \
        {                                                                                          \
                return lazylib_load(&prefix##_lazy_lib);                                           \
        }                                                                                          \
        static inline const char *prefix##_lazy_error(void)                                        \
        {                                                                                          \
                return lazylib_error(&prefix##_lazy_lib);                                          \
        }

/* In the module's .c: define them, the library's file name FILE. */
#define LAZYLIB_DEFINE(prefix, FUNCTIONS, file)                                                    \
        static const char *const prefix##_lazy_symbols[] = {FUNCTIONS(LAZYLIB_NAME_)};             \
        _Static_assert(sizeof(prefix##_lazy.f) == sizeof(prefix##_lazy.slots),                     \
                       "one slot per function");                                                   \
        _Static_assert(sizeof(prefix##_lazy_symbols) == sizeof(prefix##_lazy.slots),               \
                       "one name per slot");                                                       \
        union prefix##_lazy_table prefix##_lazy;                                                   \
        LazyLib prefix##_lazy_lib = LAZYLIB_INIT(file, prefix##_lazy_symbols, prefix##_lazy.slots, \
                                                 sizeof(prefix##_lazy_symbols) / sizeof(void *))
