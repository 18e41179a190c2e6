/* GMP, loaded on first use: see gmp-lazy.h. */
#include "util/gmp-lazy.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

struct gmp_lazy_table gmp_lazy;
int gmp_lazy_loaded;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *library = "libgmp.so.10";
static int status;
static char error[256];

static void load(void)
{
        struct gmp_lazy_table t;
        const char *e;
        void *h;

        h = dlopen(library, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
                e = dlerror();
                snprintf(error, sizeof(error), "%s", e ? e : library);
                status = -1;
                return;
        }
#define GMP_LAZY_RESOLVE(m, sym)                                                                   \
        t.m = (__typeof__(t.m))dlsym(h, #sym);                                                     \
        if (!t.m) {                                                                                \
                snprintf(error, sizeof(error), "%s: no symbol %s", library, #sym);                 \
                dlclose(h);                                                                        \
                status = -1;                                                                       \
                return;                                                                            \
        }
        GMP_LAZY_FUNCTIONS(GMP_LAZY_RESOLVE)
#undef GMP_LAZY_RESOLVE
        gmp_lazy = t;
        status = 0;
        __atomic_store_n(&gmp_lazy_loaded, 1, __ATOMIC_RELEASE);
}

int gmp_lazy_load_once(void)
{
        pthread_once(&once, load);
        return status;
}

const char *gmp_lazy_error(void)
{
        return error;
}

void gmp_lazy_set_library(const char *name)
{
        library = name;
}
