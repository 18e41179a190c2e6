/* GMP, loaded on first use: see gmp-lazy.h. */
#include "util/gmp-lazy.h"

#include "util/macro.h"

#define GMP_LAZY_NAME(m, sym) #sym,
static const char *const symbols[] = {GMP_LAZY_FUNCTIONS(GMP_LAZY_NAME)};
#undef GMP_LAZY_NAME

_Static_assert(sizeof(gmp_lazy.f) == sizeof(gmp_lazy.slots), "one slot per function");
_Static_assert(ELEMENTSOF(symbols) == ELEMENTSOF(gmp_lazy.slots), "one name per slot");

union gmp_lazy_table gmp_lazy;
LazyLib gmp_lazy_lib = LAZYLIB_INIT("libgmp.so.10", symbols, gmp_lazy.slots, ELEMENTSOF(symbols));
