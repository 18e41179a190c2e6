/* NULL-terminated arrays of owned strings (see strv.h). */
#include "util/strv.h"

#include <stdlib.h>
#include <string.h>

void strv_free(char **v)
{
        for (size_t i = 0; v && v[i]; i++)
                free(v[i]);
        free(v);
}

void strv_freep(char ***v)
{
        strv_free(*v);
}

char **strv_copy(const char *const *v)
{
        size_t n = 0;
        char **c;

        while (v[n])
                n++;
        c = calloc(n + 1, sizeof(char *));
        if (!c)
                return NULL;
        for (size_t i = 0; i < n; i++)
                if (!(c[i] = strdup(v[i]))) {
                        strv_free(c);
                        return NULL;
                }
        return c;
}
