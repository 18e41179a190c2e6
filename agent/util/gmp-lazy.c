/* GMP, loaded on first use: see gmp-lazy.h. */
#include "util/gmp-lazy.h"

LAZYLIB_DEFINE(gmp, GMP_LAZY_FUNCTIONS, "libgmp.so.10");
