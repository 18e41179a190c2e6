/* Small language helpers shared by every module: cleanup attributes, pointer
 * stealing and array sizes. Nothing here has side effects. */
#pragma once

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

/* ASAN_BUILD: 1 when the code is built with AddressSanitizer (gcc says so
 * with __SANITIZE_ADDRESS__, clang with __has_feature), else 0. */
#if defined(__SANITIZE_ADDRESS__)
#define ASAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN_BUILD 1
#endif
#endif
#ifndef ASAN_BUILD
#define ASAN_BUILD 0
#endif

#define _cleanup_(f)         __attribute__((cleanup(f)))
#define _unused_             __attribute__((unused))
#define _printf_(a, b)       __attribute__((format(printf, a, b)))
#define _noreturn_           __attribute__((noreturn))
#define _warn_unused_result_ __attribute__((warn_unused_result))

/* Hand the pointer in *p to the caller and leave NULL behind, so that a
 * cleanup attribute on the local does not free what was given away. */
static inline void *steal_ptr(void *pp)
{
        void **p = pp;
        void *v = *p;
        *p = NULL;
        return v;
}
#define TAKE_PTR(p) steal_ptr(&(p))

/* Room for one more element in a growable array: when n has reached *cap,
 * the array at *pp (of elements of size bytes) is reallocated to twice
 * *cap, or to first elements when empty. Returns 0 or -ENOMEM (the array
 * is then unchanged). */
static inline int grow_array(void *pp, size_t *cap, size_t n, size_t size, size_t first)
{
        void **p = pp;
        size_t c;
        void *q;

        if (n < *cap)
                return 0;
        c = *cap ? 2 * *cap : first;
        q = reallocarray(*p, c, size);
        if (!q)
                return -ENOMEM;
        *p = q;
        *cap = c;
        return 0;
}

static inline void freep(void *p)
{
        free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(freep)

static inline void fclosep(FILE **f)
{
        if (*f)
                fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(fclosep)

static inline void closep(int *fd)
{
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
        }
}
#define _cleanup_close_ _cleanup_(closep)

/* DEFINE_CLEANUP(Type, type_free) gives type_freep() for _cleanup_(). */
#define DEFINE_CLEANUP(type, func)                                                                 \
        static inline void func##p(type **p)                                                       \
        {                                                                                          \
                if (*p)                                                                            \
                        func(*p);                                                                  \
        }

/* jansson: a json_t owned by a local is released at scope exit (jansson's
 * own json_decrefp, so include <jansson.h> where this is used). Never put a
 * borrowed reference (json_object_get and friends) into such a local. */
#define _cleanup_json_ _cleanup_(json_decrefp)

#define streq(a, b) (strcmp((a), (b)) == 0)
