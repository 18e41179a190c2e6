/* GMP, loaded on first use.
 *
 * Python's ints beyond 64 bits are computed by GMP, but nearly no plan ever
 * has one, and a linked libgmp costs every idle agent about 0.12 MiB of
 * resident memory (docs/footprint.md). So the agent does not link it
 * (util/lazylib.h): this header replaces GMP's mpz_* names (macros for
 * libgmp's __gmpz_* symbols) with calls through a table that
 * gmp_lazy_load() fills once from "libgmp.so.10". gmp.h is only needed at
 * build time.
 *
 * The rule: every code path that may make the first integer beyond 64 bits
 * calls gmp_lazy_load() before any mpz_* function, and fails with a clear
 * error when it returns -1 (the Body raises MemoryError, the plan parser
 * rejects the plan), never crashes. Code that holds a big value needs no
 * check: the value could only be made after a successful load. The few
 * field reads (mpz_size, mpz_getlimbn, mpz_limbs_read, mpz_roinit_n, and
 * gmp.h's own mpz_sgn, mpz_odd_p) are inline and need no library.
 *
 * GMP's memory rule is unchanged: an mpz_t made with mpz_init*() is
 * malloc'd by GMP and must be mpz_clear()ed on every path. */
#pragma once

#include <gmp.h>
#include <stddef.h>

#include "util/lazylib.h"

/* X(member, libgmp symbol): every GMP function the agent calls. */
#define GMP_LAZY_FUNCTIONS(X)                                                                      \
        X(abs, __gmpz_abs)                                                                         \
        X(add, __gmpz_add)                                                                         \
        X(add_ui, __gmpz_add_ui)                                                                   \
        X(and_, __gmpz_and)                                                                        \
        X(clear, __gmpz_clear)                                                                     \
        X(clears, __gmpz_clears)                                                                   \
        X(cmp, __gmpz_cmp)                                                                         \
        X(cmp_d, __gmpz_cmp_d)                                                                     \
        X(cmp_ui, __gmpz_cmp_ui)                                                                   \
        X(cmpabs_ui, __gmpz_cmpabs_ui)                                                             \
        X(com, __gmpz_com)                                                                         \
        X(fdiv_q, __gmpz_fdiv_q)                                                                   \
        X(fdiv_q_2exp, __gmpz_fdiv_q_2exp)                                                         \
        X(fdiv_qr, __gmpz_fdiv_qr)                                                                 \
        X(fdiv_r, __gmpz_fdiv_r)                                                                   \
        X(get_str, __gmpz_get_str)                                                                 \
        X(init, __gmpz_init)                                                                       \
        X(init_set_d, __gmpz_init_set_d)                                                           \
        X(init_set_str, __gmpz_init_set_str)                                                       \
        X(inits, __gmpz_inits)                                                                     \
        X(invert, __gmpz_invert)                                                                   \
        X(ior, __gmpz_ior)                                                                         \
        X(mul, __gmpz_mul)                                                                         \
        X(mul_2exp, __gmpz_mul_2exp)                                                               \
        X(mul_ui, __gmpz_mul_ui)                                                                   \
        X(neg, __gmpz_neg)                                                                         \
        X(pow_ui, __gmpz_pow_ui)                                                                   \
        X(powm, __gmpz_powm)                                                                       \
        X(set, __gmpz_set)                                                                         \
        X(set_str, __gmpz_set_str)                                                                 \
        X(set_ui, __gmpz_set_ui)                                                                   \
        X(sizeinbase, __gmpz_sizeinbase)                                                           \
        X(sub, __gmpz_sub)                                                                         \
        X(tdiv_qr, __gmpz_tdiv_qr)                                                                 \
        X(ui_pow_ui, __gmpz_ui_pow_ui)                                                             \
        X(xor_, __gmpz_xor)                                                                        \
        X(get_memory_functions, __gmp_get_memory_functions)

/* gmp_lazy_lib, gmp_lazy, gmp_lazy_load(), gmp_lazy_error(): see
 * util/lazylib.h. */
LAZYLIB_DECLARE(gmp, GMP_LAZY_FUNCTIONS)

#undef mpz_abs
#define mpz_abs (*gmp_lazy.f.abs)
#undef mpz_add
#define mpz_add (*gmp_lazy.f.add)
#undef mpz_add_ui
#define mpz_add_ui (*gmp_lazy.f.add_ui)
#undef mpz_and
#define mpz_and (*gmp_lazy.f.and_)
#undef mpz_clear
#define mpz_clear (*gmp_lazy.f.clear)
#undef mpz_clears
#define mpz_clears (*gmp_lazy.f.clears)
#undef mpz_cmp
#define mpz_cmp (*gmp_lazy.f.cmp)
#undef mpz_cmp_d
#define mpz_cmp_d (*gmp_lazy.f.cmp_d)
#undef mpz_cmp_ui
#define mpz_cmp_ui (*gmp_lazy.f.cmp_ui)
#undef mpz_cmpabs_ui
#define mpz_cmpabs_ui (*gmp_lazy.f.cmpabs_ui)
#undef mpz_com
#define mpz_com (*gmp_lazy.f.com)
#undef mpz_fdiv_q
#define mpz_fdiv_q (*gmp_lazy.f.fdiv_q)
#undef mpz_fdiv_q_2exp
#define mpz_fdiv_q_2exp (*gmp_lazy.f.fdiv_q_2exp)
#undef mpz_fdiv_qr
#define mpz_fdiv_qr (*gmp_lazy.f.fdiv_qr)
#undef mpz_fdiv_r
#define mpz_fdiv_r (*gmp_lazy.f.fdiv_r)
#undef mpz_get_str
#define mpz_get_str (*gmp_lazy.f.get_str)
#undef mpz_init
#define mpz_init (*gmp_lazy.f.init)
#undef mpz_init_set_d
#define mpz_init_set_d (*gmp_lazy.f.init_set_d)
#undef mpz_init_set_str
#define mpz_init_set_str (*gmp_lazy.f.init_set_str)
#undef mpz_inits
#define mpz_inits (*gmp_lazy.f.inits)
#undef mpz_invert
#define mpz_invert (*gmp_lazy.f.invert)
#undef mpz_ior
#define mpz_ior (*gmp_lazy.f.ior)
#undef mpz_mul
#define mpz_mul (*gmp_lazy.f.mul)
#undef mpz_mul_2exp
#define mpz_mul_2exp (*gmp_lazy.f.mul_2exp)
#undef mpz_mul_ui
#define mpz_mul_ui (*gmp_lazy.f.mul_ui)
#undef mpz_neg
#define mpz_neg (*gmp_lazy.f.neg)
#undef mpz_pow_ui
#define mpz_pow_ui (*gmp_lazy.f.pow_ui)
#undef mpz_powm
#define mpz_powm (*gmp_lazy.f.powm)
#undef mpz_set
#define mpz_set (*gmp_lazy.f.set)
#undef mpz_set_str
#define mpz_set_str (*gmp_lazy.f.set_str)
#undef mpz_set_ui
#define mpz_set_ui (*gmp_lazy.f.set_ui)
#undef mpz_sizeinbase
#define mpz_sizeinbase (*gmp_lazy.f.sizeinbase)
#undef mpz_sub
#define mpz_sub (*gmp_lazy.f.sub)
#undef mpz_tdiv_qr
#define mpz_tdiv_qr (*gmp_lazy.f.tdiv_qr)
#undef mpz_ui_pow_ui
#define mpz_ui_pow_ui (*gmp_lazy.f.ui_pow_ui)
#undef mpz_xor
#define mpz_xor (*gmp_lazy.f.xor_)
#undef mp_get_memory_functions
#define mp_get_memory_functions (*gmp_lazy.f.get_memory_functions)

/* GMP's field reads, without the library. */
static inline size_t gmp_lazy_size(mpz_srcptr z)
{
        return (size_t)(z->_mp_size < 0 ? -z->_mp_size : z->_mp_size);
}

static inline mp_limb_t gmp_lazy_getlimbn(mpz_srcptr z, mp_size_t n)
{
        return n >= 0 && (size_t)n < gmp_lazy_size(z) ? z->_mp_d[n] : 0;
}

static inline mp_srcptr gmp_lazy_limbs_read(mpz_srcptr z)
{
        return z->_mp_d;
}

/* A read-only mpz over xs limbs (negative: a negative number), which owns
 * nothing: as GMP's mpz_roinit_n, high zero limbs dropped. */
static inline mpz_srcptr gmp_lazy_roinit_n(mpz_ptr x, mp_srcptr xp, mp_size_t xs)
{
        mp_size_t xn = xs < 0 ? -xs : xs;

        while (xn > 0 && xp[xn - 1] == 0)
                xn--;
        x->_mp_alloc = 0;
        x->_mp_size = xs < 0 ? -xn : xn;
        x->_mp_d = (mp_limb_t *)xp;
        return x;
}

#undef mpz_size
#define mpz_size gmp_lazy_size
#undef mpz_getlimbn
#define mpz_getlimbn gmp_lazy_getlimbn
#undef mpz_limbs_read
#define mpz_limbs_read gmp_lazy_limbs_read
#undef mpz_roinit_n
#define mpz_roinit_n gmp_lazy_roinit_n
