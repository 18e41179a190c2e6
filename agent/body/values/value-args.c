/* Argument binding for builtin functions and methods: Python's TypeErrors
 * for missing, surplus, repeated and unknown arguments. */
#include "body/values/value-internal.h"

#include <string.h>

static const char *plural(size_t n)
{
        return n == 1 ? "" : "s";
}

int bv__no_kwargs(BodyVM *vm, const char *fname, BodyValue *kwargs)
{
        if (kwargs && kwargs->dict.len > 0) {
                bv_raise(vm, BV_EXC_TYPE_ERROR, "%s() takes no keyword arguments", fname);
                return -1;
        }
        return 0;
}

int bv__check_args(BodyVM *vm, const char *fname, size_t n, BodyValue *kwargs, size_t min,
                   size_t max)
{
        if (bv__no_kwargs(vm, fname, kwargs) < 0)
                return -1;
        if (n >= min && n <= max)
                return 0;
        if (min == max && min == 0)
                bv_raise(vm, BV_EXC_TYPE_ERROR, "%s() takes no arguments (%zu given)", fname, n);
        else if (min == 1 && max == 1)
                bv_raise(vm, BV_EXC_TYPE_ERROR, "%s() takes exactly one argument (%zu given)",
                         fname, n);
        else if (min == max)
                bv_raise(vm, BV_EXC_TYPE_ERROR, "%s() takes exactly %zu arguments (%zu given)",
                         fname, min, n);
        else if (n < min)
                bv_raise(vm, BV_EXC_TYPE_ERROR, "%s expected at least %zu argument%s, got %zu",
                         fname, min, plural(min), n);
        else
                bv_raise(vm, BV_EXC_TYPE_ERROR, "%s expected at most %zu argument%s, got %zu",
                         fname, max, plural(max), n);
        return -1;
}

int bv__parse_args(BodyVM *vm, const char *fname, BodyValue **args, size_t n, BodyValue *kwargs,
                   const char *const *names, size_t n_names, size_t n_required,
                   size_t max_positional, BodyValue **out)
{
        size_t pos = 0;
        BodyValue *k, *v;

        if (n > max_positional) {
                bv_raise(vm, BV_EXC_TYPE_ERROR, "%s() takes at most %zu argument%s (%zu given)",
                         fname, max_positional, plural(max_positional), n);
                return -1;
        }
        for (size_t i = 0; i < n_names; i++)
                out[i] = i < n ? args[i] : NULL;
        while (kwargs && bv_dict_next(kwargs, &pos, &k, &v)) {
                size_t i;
                for (i = 0; i < n_names; i++)
                        if (k->kind == BV_STR && streq(k->str.data, names[i]))
                                break;
                if (i == n_names) {
                        bv_raise(vm, BV_EXC_TYPE_ERROR,
                                 "'%s' is an invalid keyword argument for %s()",
                                 k->kind == BV_STR ? k->str.data : "?", fname);
                        return -1;
                }
                if (out[i]) {
                        bv_raise(vm, BV_EXC_TYPE_ERROR,
                                 "argument for %s() given by name ('%s') and position (%zu)", fname,
                                 names[i], i + 1);
                        return -1;
                }
                out[i] = v;
        }
        for (size_t i = 0; i < n_required; i++)
                if (!out[i]) {
                        bv_raise(vm, BV_EXC_TYPE_ERROR,
                                 "%s() missing required argument '%s' (pos %zu)", fname, names[i],
                                 i + 1);
                        return -1;
                }
        return 0;
}
