/* Python's unbounded int, on GMP.
 *
 * A BV_INT holds its value in `i` when it fits in int64, which is the fast
 * path every operator tries first, and otherwise in `z`: GMP limbs stored
 * after the value in the value's own accounted allocation, so the VM's
 * memory budget sees them and freeing the value frees them. A big value is
 * never inside int64: bv__int_from_mpz() normalises every result, so two
 * equal numbers always have the same representation.
 *
 * GMP's memory rule: an mpz_t made with mpz_init() is malloc'd by GMP and
 * must be mpz_clear()ed on every path; values are only ever read through
 * read-only views (mpz_roinit_n), which own nothing. GMP aborts when malloc
 * fails, so every operation that can grow a number checks the size of its
 * result against the memory budget, and charges steps for its cost, before
 * GMP runs: 10 ** (10 ** 8) stops at once with ResourceLimitError instead
 * of computing for seconds.
 *
 * Conversions to and from decimal text keep CPython 3.11's limit of 4300
 * digits (sys.int_info.default_max_str_digits), with CPython's messages. */
#include "body/values/value-internal.h"
#include "util/digit.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STR_DIGITS_MSG "Exceeds the limit (4300 digits) for integer string conversion"

/* GMP is loaded when the first integer beyond 64 bits is made
 * (util/gmp-lazy.h): 0, or -1 with MemoryError when it cannot be. */
static inline int need_gmp(BodyVM *vm)
{
        if (gmp_lazy_load() == 0)
                return 0;
        bv_raise(vm, BV_EXC_MEMORY_ERROR,
                 "integers beyond 64 bits need GMP, which cannot be loaded: %s", gmp_lazy_error());
        return -1;
}

mpz_srcptr bv__int_view(const BodyValue *v, BvIntView *t)
{
        int64_t i;
        uint64_t m;
        mp_size_t n = 0;

        if (v->kind == BV_INT && v->big)
                return mpz_roinit_n(t->z, v->z.limbs, v->z.size);
        i = v->kind == BV_BOOL ? (int64_t)v->b : v->i;
        m = i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i;
        while (m) {
                t->buf[n++] = (mp_limb_t)(m & GMP_NUMB_MASK);
                m = GMP_NUMB_BITS >= 64 ? 0 : m >> (GMP_NUMB_BITS % 64);
        }
        return mpz_roinit_n(t->z, t->buf, i < 0 ? -n : n);
}

bool bv__mpz_get_int64(mpz_srcptr z, int64_t *ret)
{
        uint64_t m = 0;
        size_t n = mpz_size(z);

        if (mpz_sizeinbase(z, 2) > 64)
                return false;
        for (size_t k = n; k-- > 0;)
                m = (GMP_NUMB_BITS >= 64 ? 0 : m << (GMP_NUMB_BITS % 64)) |
                    (uint64_t)mpz_getlimbn(z, (mp_size_t)k);
        if (mpz_sgn(z) >= 0) {
                if (m > (uint64_t)INT64_MAX)
                        return false;
                *ret = (int64_t)m;
        } else {
                if (m > (uint64_t)INT64_MAX + 1)
                        return false;
                *ret = m == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)m;
        }
        return true;
}

BodyValue *bv__int_from_mpz(BodyVM *vm, mpz_srcptr z)
{
        int64_t i;
        size_t n;
        BodyValue *v;

        if (bv__mpz_get_int64(z, &i))
                return bv_int_new(vm, i);
        n = mpz_size(z);
        v = bv__alloc(vm, BV_INT, n * sizeof(mp_limb_t));
        if (!v)
                return NULL;
        v->big = true;
        v->z.limbs = (mp_limb_t *)(v + 1);
        memcpy(v->z.limbs, mpz_limbs_read(z), n * sizeof(mp_limb_t));
        v->z.size = mpz_sgn(z) < 0 ? -(mp_size_t)n : (mp_size_t)n;
        return v;
}

int bv__steps_charge(BodyVM *vm, uint64_t n)
{
        if (n > vm->limits.max_steps || vm->steps > vm->limits.max_steps - n) {
                vm->steps = vm->limits.max_steps;
                return bv_step(vm); /* past the limit: ResourceLimitError */
        }
        vm->steps += n;
        return bv_step(vm);
}

int bv__int_budget(BodyVM *vm, uint64_t bits, bool superlinear)
{
        uint64_t bytes = bits / 8 + 2 * sizeof(mp_limb_t), limbs = bits / GMP_NUMB_BITS + 1, cost;

        if (bytes > vm->limits.max_memory || vm->mem_live > vm->limits.max_memory - bytes) {
                bv_raise(vm, BV_EXC_MEMORY_ERROR, "Body exceeded its memory limit (%zu bytes)",
                         vm->limits.max_memory);
                return -1;
        }
        /* Small numbers cost a step, like any operation; large ones what
         * GMP will spend on them: about n log n limb operations for a
         * product, a quotient or a power of n limbs. */
        if (limbs <= 16)
                return 0;
        cost = limbs / 64;
        if (superlinear)
                cost = limbs * (uint64_t)(64 - __builtin_clzll(limbs)) / 4;
        return bv__steps_charge(vm, cost);
}

/* The correctly rounded value of a / b (b != 0), as CPython's true
 * division of ints and its int-to-float conversion: round half to even,
 * subnormals included. 0, or -1 when the result is too large for a double. */
int bv__mpz_ratio_double(mpz_srcptr a, mpz_srcptr b, double *ret)
{
        mpz_t q, r;
        int64_t shift, top, lowest, drop;
        uint64_t m, low, half;
        bool sticky, neg = (mpz_sgn(a) < 0) != (mpz_sgn(b) < 0);
        double d;

        if (mpz_sgn(a) == 0) {
                *ret = neg ? -0.0 : 0.0;
                return 0;
        }
        /* q = |a| / |b| * 2**-shift, with 55 or 56 bits before rounding. */
        shift = (int64_t)mpz_sizeinbase(a, 2) - (int64_t)mpz_sizeinbase(b, 2) - 55;
        if (shift > 1100) /* certainly beyond DBL_MAX */
                return -1;
        if (shift < -1200) { /* below 2**-1079: rounds to zero, without a huge shift */
                *ret = neg ? -0.0 : 0.0;
                return 0;
        }
        mpz_inits(q, r, NULL);
        if (shift >= 0) {
                mpz_abs(r, b);
                mpz_mul_2exp(r, r, (mp_bitcnt_t)shift);
                mpz_abs(q, a);
                mpz_tdiv_qr(q, r, q, r);
        } else {
                mpz_abs(q, a);
                mpz_mul_2exp(q, q, (mp_bitcnt_t)-shift);
                mpz_abs(r, b);
                mpz_tdiv_qr(q, r, q, r);
        }
        sticky = mpz_sgn(r) != 0;
        m = 0;
        for (size_t k = mpz_size(q); k-- > 0;)
                m = (GMP_NUMB_BITS >= 64 ? 0 : m << (GMP_NUMB_BITS % 64)) |
                    (uint64_t)mpz_getlimbn(q, (mp_size_t)k);
        mpz_clears(q, r, NULL);
        /* The value is m * 2**shift (m < 2**57); keep 53 bits, fewer for a
         * subnormal, whose lowest bit is 2**-1074. */
        top = 63 - __builtin_clzll(m) + shift;
        lowest = top - 52 < -1074 ? -1074 : top - 52;
        drop = lowest - shift;
        if (drop <= 0) {
                d = ldexp((double)m, (int)shift);
        } else {
                if (drop >= 64) {
                        low = m;
                        m = 0;
                        half = drop == 64 ? (uint64_t)1 << 63 : 0;
                        if (drop > 64) {
                                sticky = sticky || low != 0;
                                low = 0;
                        }
                } else {
                        low = m & (((uint64_t)1 << drop) - 1);
                        half = (uint64_t)1 << (drop - 1);
                        m >>= drop;
                }
                if (half && (low > half || (low == half && (sticky || (m & 1)))))
                        m++;
                d = ldexp((double)m, (int)lowest);
        }
        if (isinf(d))
                return -1;
        *ret = neg ? -d : d;
        return 0;
}

int bv__int_to_double(BodyVM *vm, const BodyValue *v, double *ret)
{
        BvIntView t, one;
        BodyValue onev = {.kind = BV_INT, .i = 1};

        if (!(v->kind == BV_INT && v->big)) {
                *ret = (double)bv__int_of(v);
                return 0;
        }
        if (bv__mpz_ratio_double(bv__int_view(v, &t), bv__int_view(&onev, &one), ret) < 0) {
                bv_raise(vm, BV_EXC_OVERFLOW_ERROR, "int too large to convert to float");
                return -1;
        }
        return 0;
}

BodyValue *bv__int_from_double(BodyVM *vm, double d)
{
        mpz_t z;
        BodyValue *r;

        if (isnan(d))
                return bv_raise(vm, BV_EXC_VALUE_ERROR, "cannot convert float NaN to integer");
        if (isinf(d))
                return bv_raise(vm, BV_EXC_OVERFLOW_ERROR,
                                "cannot convert float infinity to integer");
        if (d > -0x1p63 && d < 0x1p63)
                return bv_int_new(vm, (int64_t)d);
        if (need_gmp(vm) < 0)
                return NULL;
        mpz_init_set_d(z, d);
        r = bv__int_from_mpz(vm, z);
        mpz_clear(z);
        return r;
}

int bv__int_cmp_double(const BodyValue *v, double f)
{
        BvIntView t;

        if (isnan(f))
                return 2;
        if (isinf(f))
                return f > 0 ? -1 : 1;
        int c = mpz_cmp_d(bv__int_view(v, &t), f);
        return c < 0 ? -1 : c > 0;
}

int bv__int_cmp(const BodyValue *a, const BodyValue *b)
{
        BvIntView ta, tb;

        /* Two ints within 64 bits need no GMP, which may not be loaded yet:
         * range() compares its bounds this way before any big int exists. */
        if (!bv__is_big(a) && !bv__is_big(b)) {
                int64_t x = bv__int_of(a), y = bv__int_of(b);
                return x < y ? -1 : x > y;
        }
        int c = mpz_cmp(bv__int_view(a, &ta), bv__int_view(b, &tb));
        return c < 0 ? -1 : c > 0;
}

int bv__int_digits(BodyVM *vm, const BodyValue *v, unsigned base, bool upper, StrBuf *out,
                   bool *ret_neg)
{
        BvIntView t;
        mpz_srcptr z;
        size_t est, len;
        void (*gmp_free)(void *, size_t);
        char *text;
        int r;

        if (need_gmp(vm) < 0)
                return -1;
        z = bv__int_view(v, &t);
        est = mpz_sizeinbase(z, (int)base);
        *ret_neg = mpz_sgn(z) < 0;
        /* mpz_sizeinbase() may say one digit too many: the exact count is
         * checked once the digits are there. */
        if (base == 10 && est > BV_INT_MAX_STR_DIGITS + 1)
                goto too_many;
        if (bv__check_string_size(vm, est) < 0 || bv__int_budget(vm, est * 4, base == 10) < 0)
                return -1;
        text = mpz_get_str(NULL, upper ? -(int)base : (int)base, z);
        len = strlen(text);
        mp_get_memory_functions(NULL, NULL, &gmp_free);
        r = base == 10 && len - *ret_neg > BV_INT_MAX_STR_DIGITS
                    ? 1
                    : strbuf_append(out, text + *ret_neg, len - *ret_neg);
        gmp_free(text, len + 1);
        if (r < 0)
                return bv__buf_error(vm, r);
        if (r == 0)
                return 0;
too_many:
        bv_raise(vm, BV_EXC_VALUE_ERROR,
                 MAX_STR_DIGITS_MSG "; use sys.set_int_max_str_digits() to increase the limit");
        return -1;
}

int bv__int_str(BodyVM *vm, const BodyValue *v, StrBuf *out)
{
        _cleanup_strbuf_ StrBuf digits = bv__buf(vm);
        bool neg;
        int r;

        if (!bv__is_big(v))
                return (r = strbuf_printf(out, "%" PRId64, bv__int_of(v))) < 0
                               ? bv__buf_error(vm, r)
                               : 0;
        if (bv__int_digits(vm, v, 10, false, &digits, &neg) < 0)
                return -1;
        if ((neg && (r = strbuf_putc(out, '-')) < 0) ||
            (r = strbuf_append(out, digits.data, digits.len)) < 0)
                return bv__buf_error(vm, r);
        return 0;
}

int bv_int_parse(BodyVM *vm, const char *s, size_t len, int base, BodyValue **ret)
{
        int64_t i;
        const char *p = s, *end = s + len;
        bool neg = false;
        char *clean;
        size_t n = 0;
        mpz_t z;

        switch (bv__parse_int(s, len, base, &i)) {
        case 0:
                *ret = bv_int_new(vm, i);
                return *ret ? 0 : -1;
        case -1:
                return 1;
        default:
                break;
        }
        /* The text is valid and does not fit in int64: strip the sign,
         * the prefix and the underscores, and let GMP read the digits. */
        while (p < end && (*p == ' ' || (*p >= '\t' && *p <= '\r')))
                p++;
        while (end > p && (end[-1] == ' ' || (end[-1] >= '\t' && end[-1] <= '\r')))
                end--;
        if (*p == '+' || *p == '-')
                neg = *p++ == '-';
        if (end - p >= 2 && p[0] == '0') {
                char x = (char)(p[1] | 0x20);
                int pb = x == 'x' ? 16 : x == 'o' ? 8 : x == 'b' ? 2 : 0;
                /* As bv__parse_int(): a prefix only where the base allows it
                 * (int('0b1', 36) is base-36 digits). */
                if (pb && (base == 0 || base == pb)) {
                        base = pb;
                        p += 2;
                }
        }
        if (base == 0) {
                base = 10;
        }
        clean = malloc((size_t)(end - p) + 1);
        if (!clean) {
                bv_raise_fatal(vm, -ENOMEM);
                return -1;
        }
        for (; p < end; p++)
                if (*p != '_' && digit_value(*p) < base)
                        clean[n++] = *p;
        clean[n] = '\0';
        /* CPython counts the digits for bases that are not powers of two. */
        if ((base & (base - 1)) != 0 && n > BV_INT_MAX_STR_DIGITS) {
                free(clean);
                bv_raise(vm, BV_EXC_VALUE_ERROR,
                         MAX_STR_DIGITS_MSG ": value has %zu digits; use "
                                            "sys.set_int_max_str_digits() to increase the limit",
                         n);
                return -1;
        }
        if (bv__int_budget(vm, (uint64_t)n * 6, (base & (base - 1)) != 0) < 0 || need_gmp(vm) < 0) {
                free(clean);
                return -1;
        }
        mpz_init_set_str(z, clean, base);
        free(clean);
        if (neg)
                mpz_neg(z, z);
        *ret = bv__int_from_mpz(vm, z);
        mpz_clear(z);
        return *ret ? 0 : -1;
}

uint64_t bv__int_hash_words(const BodyValue *v, const void **ret_data, size_t *ret_len)
{
        /* Only big values come here: hash the limbs and the sign. */
        *ret_data = v->z.limbs;
        *ret_len = (size_t)(v->z.size < 0 ? -v->z.size : v->z.size) * sizeof(mp_limb_t);
        return v->z.size < 0;
}

static BodyValue *mpz_result(BodyVM *vm, mpz_t r)
{
        BodyValue *v = bv__int_from_mpz(vm, r);
        mpz_clear(r);
        return v;
}

BodyValue *bv__int_binop_big(BodyVM *vm, BvBinOp op, BodyValue *av, BodyValue *bv)
{
        BvIntView ta, tb;
        mpz_srcptr a, b;
        uint64_t na, nb, nmax;
        int64_t sb;
        mpz_t r;

        if (need_gmp(vm) < 0)
                return NULL;
        a = bv__int_view(av, &ta);
        b = bv__int_view(bv, &tb);
        na = mpz_sizeinbase(a, 2);
        nb = mpz_sizeinbase(b, 2);
        nmax = na > nb ? na : nb;

        switch (op) {
        case BV_OP_ADD:
        case BV_OP_SUB:
        case BV_OP_AND:
        case BV_OP_OR:
        case BV_OP_XOR:
                if (bv__int_budget(vm, nmax + 1, false) < 0)
                        return NULL;
                mpz_init(r);
                if (op == BV_OP_ADD)
                        mpz_add(r, a, b);
                else if (op == BV_OP_SUB)
                        mpz_sub(r, a, b);
                else if (op == BV_OP_AND)
                        mpz_and(r, a, b);
                else if (op == BV_OP_OR)
                        mpz_ior(r, a, b);
                else
                        mpz_xor(r, a, b);
                return mpz_result(vm, r);
        case BV_OP_MUL:
                if (bv__int_budget(vm, na + nb, true) < 0)
                        return NULL;
                mpz_init(r);
                mpz_mul(r, a, b);
                return mpz_result(vm, r);
        case BV_OP_TRUEDIV: {
                double d;
                if (mpz_sgn(b) == 0)
                        return bv_raise(vm, BV_EXC_ZERO_DIVISION_ERROR, "division by zero");
                if (bv__int_budget(vm, nmax + 64, true) < 0)
                        return NULL;
                if (bv__mpz_ratio_double(a, b, &d) < 0)
                        return bv_raise(vm, BV_EXC_OVERFLOW_ERROR,
                                        "integer division result too large for a float");
                return bv_float_new(vm, d);
        }
        case BV_OP_FLOORDIV:
        case BV_OP_MOD:
                if (mpz_sgn(b) == 0)
                        return bv_raise(vm, BV_EXC_ZERO_DIVISION_ERROR,
                                        op == BV_OP_MOD ? "integer modulo by zero"
                                                        : "integer division or modulo by zero");
                if (bv__int_budget(vm, nmax, true) < 0)
                        return NULL;
                mpz_init(r);
                if (op == BV_OP_FLOORDIV)
                        mpz_fdiv_q(r, a, b);
                else
                        mpz_fdiv_r(r, a, b);
                return mpz_result(vm, r);
        case BV_OP_POW:
                /* Negative exponents are float powers (value-binop.c). */
                if (mpz_cmpabs_ui(a, 1) <= 0) {
                        /* 0, 1 and -1 to any power: no size to fear. */
                        if (mpz_sgn(a) == 0)
                                return bv_int_new(vm, mpz_sgn(b) == 0);
                        if (mpz_sgn(a) > 0 || mpz_even_p(b))
                                return bv_int_new(vm, 1);
                        return bv_int_new(vm, -1);
                }
                if (!bv__mpz_get_int64(b, &sb) || (uint64_t)sb > UINT64_MAX / na ||
                    (unsigned long)sb != (uint64_t)sb) {
                        bv_raise(vm, BV_EXC_MEMORY_ERROR,
                                 "Body exceeded its memory limit (%zu bytes)",
                                 vm->limits.max_memory);
                        return NULL;
                }
                if (bv__int_budget(vm, na * (uint64_t)sb, true) < 0)
                        return NULL;
                mpz_init(r);
                mpz_pow_ui(r, a, (unsigned long)sb);
                return mpz_result(vm, r);
        case BV_OP_LSHIFT:
        case BV_OP_RSHIFT:
                if (mpz_sgn(b) < 0)
                        return bv_raise(vm, BV_EXC_VALUE_ERROR, "negative shift count");
                if (mpz_sgn(a) == 0)
                        return bv_int_new(vm, 0);
                if (!bv__mpz_get_int64(b, &sb) || (mp_bitcnt_t)sb != (uint64_t)sb)
                        sb = INT64_MAX;
                if (op == BV_OP_RSHIFT) {
                        if ((uint64_t)sb >= na)
                                return bv_int_new(vm, mpz_sgn(a) < 0 ? -1 : 0);
                        mpz_init(r);
                        mpz_fdiv_q_2exp(r, a, (mp_bitcnt_t)sb);
                        return mpz_result(vm, r);
                }
                if ((uint64_t)sb > UINT64_MAX / 2 - na) {
                        bv_raise(vm, BV_EXC_MEMORY_ERROR,
                                 "Body exceeded its memory limit (%zu bytes)",
                                 vm->limits.max_memory);
                        return NULL;
                }
                if (bv__int_budget(vm, na + (uint64_t)sb, false) < 0)
                        return NULL;
                mpz_init(r);
                mpz_mul_2exp(r, a, (mp_bitcnt_t)sb);
                return mpz_result(vm, r);
        }
        return bv_raise(vm, BV_EXC_SYSTEM_ERROR, "unknown integer operator");
}

BodyValue *bv__int_unop_big(BodyVM *vm, BvUnaryOp op, BodyValue *v)
{
        BvIntView t;
        mpz_srcptr a = bv__int_view(v, &t);
        mpz_t r;

        if (need_gmp(vm) < 0 || bv__int_budget(vm, mpz_sizeinbase(a, 2) + 1, false) < 0)
                return NULL;
        mpz_init(r);
        if (op == BV_OP_NEG)
                mpz_neg(r, a);
        else if (op == BV_OP_INVERT)
                mpz_com(r, a);
        else
                mpz_abs(r, a);
        return mpz_result(vm, r);
}

BodyValue *bv__int_powmod(BodyVM *vm, BodyValue *bv_, BodyValue *ev, BodyValue *mv)
{
        BvIntView tb, te, tm;
        mpz_srcptr b = bv__int_view(bv_, &tb), e = bv__int_view(ev, &te), m = bv__int_view(mv, &tm);
        mpz_t r, base, am;

        if (mpz_sgn(m) == 0)
                return bv_raise(vm, BV_EXC_VALUE_ERROR, "pow() 3rd argument cannot be 0");
        if (need_gmp(vm) < 0 || bv__int_budget(vm, 2 * mpz_sizeinbase(m, 2) + 64, true) < 0 ||
            bv__steps_charge(vm, mpz_sizeinbase(e, 2)) < 0)
                return NULL;
        mpz_inits(r, base, am, NULL);
        mpz_abs(am, m);
        mpz_set(base, b);
        if (mpz_sgn(e) < 0 && mpz_cmp_ui(am, 1) != 0 && !mpz_invert(base, base, am)) {
                mpz_clears(r, base, am, NULL);
                return bv_raise(vm, BV_EXC_VALUE_ERROR,
                                "base is not invertible for the given modulus");
        }
        if (mpz_cmp_ui(am, 1) == 0) {
                mpz_set_ui(r, 0);
        } else {
                mpz_t ae;
                mpz_init(ae);
                mpz_abs(ae, e);
                mpz_powm(r, base, ae, am);
                mpz_clear(ae);
        }
        /* The result takes the sign of the modulus, as with %. */
        if (mpz_sgn(m) < 0 && mpz_sgn(r) != 0)
                mpz_add(r, r, m);
        mpz_clears(base, am, NULL);
        return mpz_result(vm, r);
}

BodyValue *bv__int_round(BodyVM *vm, BodyValue *x, int64_t nd)
{
        BvIntView t;
        mpz_srcptr a = bv__int_view(x, &t);
        mpz_t p, q, r;
        int c;

        if (nd >= 0)
                return x->kind == BV_INT ? bv_ref(x) : bv_int_new(vm, x->b);
        /* Within int64, without GMP: 10**18 is the largest power that fits. */
        if (!bv__is_big(x) && nd >= -18) {
                int64_t i = bv__int_of(x), pw = 1, quo, rem, res;
                for (int64_t k = 0; k < -nd; k++)
                        pw *= 10;
                quo = i / pw;
                rem = i % pw;
                if (rem < 0) {
                        quo--;
                        rem += pw;
                }
                if (rem > pw - rem || (rem == pw - rem && (quo & 1)))
                        quo++;
                if (!__builtin_mul_overflow(quo, pw, &res))
                        return bv_int_new(vm, res);
        } else if (!bv__is_big(x) && (nd < -19 || (bv__int_of(x) >= -5000000000000000000 &&
                                                   bv__int_of(x) <= 5000000000000000000))) {
                return bv_int_new(vm, 0); /* at most half of 10**19: to even, 0 */
        }
        if (need_gmp(vm) < 0)
                return NULL;
        /* 10**-nd beyond the number's own digits rounds it to 0. */
        if ((uint64_t)0 - (uint64_t)nd > mpz_sizeinbase(a, 10) + 1)
                return bv_int_new(vm, 0);
        if (bv__int_budget(vm, mpz_sizeinbase(a, 2) + 8, true) < 0)
                return NULL;
        mpz_inits(p, q, r, NULL);
        mpz_ui_pow_ui(p, 10, (unsigned long)-nd);
        mpz_fdiv_qr(q, r, a, p);
        /* Half to even: compare 2r with p. */
        mpz_mul_2exp(r, r, 1);
        c = mpz_cmp(r, p);
        if (c > 0 || (c == 0 && mpz_odd_p(q)))
                mpz_add_ui(q, q, 1);
        mpz_mul(q, q, p);
        mpz_clears(p, r, NULL);
        return mpz_result(vm, q);
}
