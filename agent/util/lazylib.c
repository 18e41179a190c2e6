/* Optional libraries loaded on first use: see lazylib.h. */
#include "util/lazylib.h"

#include <dlfcn.h>
#include <stdio.h>

static int load(LazyLib *l)
{
        const char *e;
        void *h;

        h = dlopen(l->library, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
                e = dlerror();
                snprintf(l->error, sizeof(l->error), "%s", e ? e : l->library);
                return -1;
        }
        for (size_t i = 0; i < l->n; i++) {
                l->slots[i] = dlsym(h, l->symbols[i]);
                if (!l->slots[i]) {
                        snprintf(l->error, sizeof(l->error), "%s: no symbol %s", l->library,
                                 l->symbols[i]);
                        dlclose(h);
                        return -1;
                }
        }
        return 0;
}

int lazylib_load_slow(LazyLib *l)
{
        int r = 0;

        pthread_mutex_lock(&l->lock);
        if (!l->tried) {
                l->tried = 1;
                if (load(l) == 0)
                        __atomic_store_n(&l->loaded, 1, __ATOMIC_RELEASE);
        }
        if (!__atomic_load_n(&l->loaded, __ATOMIC_RELAXED))
                r = -1;
        pthread_mutex_unlock(&l->lock);
        return r;
}
