/* The arithmetic, bitwise and sequence operators, with Python's results
 * and Python's error messages. Integers take the int64 fast path here;
 * whatever leaves int64 (an overflow, a big operand) goes to GMP in
 * value-int.c, so ints are unbounded as Python's are. */
#include "body/values/value-internal.h"

#include <errno.h>
#include <math.h>
#include <string.h>

static const char *const op_symbols[] = {
        [BV_OP_ADD] = "+",       [BV_OP_SUB] = "-", [BV_OP_MUL] = "*",  [BV_OP_TRUEDIV] = "/",
        [BV_OP_FLOORDIV] = "//", [BV_OP_MOD] = "%", [BV_OP_POW] = "**", [BV_OP_LSHIFT] = "<<",
        [BV_OP_RSHIFT] = ">>",   [BV_OP_AND] = "&", [BV_OP_OR] = "|",   [BV_OP_XOR] = "^",
};

BodyValue bv__not_implemented = {.kind = BV_NONE, .immortal = true, .refcnt = 1};

static void *unsupported(BodyVM *vm, BvBinOp op, BodyValue *a, BodyValue *b)
{
        return bv_raise(vm, BV_EXC_TYPE_ERROR,
                        "unsupported operand type(s) for %s%s: '%s' and '%s'",
                        (size_t)op < ELEMENTSOF(op_symbols) ? op_symbols[op] : "?",
                        op == BV_OP_POW ? " or pow()" : "", bv_type_name(a), bv_type_name(b));
}

static BodyValue *float_binop(BodyVM *vm, BvBinOp op, BodyValue *av, BodyValue *bv, double a,
                              double b);

/* int ** negative int is a float power, as in CPython (long_pow). */
static BodyValue *int_pow_negative(BodyVM *vm, BodyValue *av, BodyValue *bv)
{
        double a, b;

        if (bv__int_to_double(vm, av, &a) < 0 || bv__int_to_double(vm, bv, &b) < 0)
                return NULL;
        return float_binop(vm, BV_OP_POW, av, bv, a, b);
}

static BodyValue *int_pow(BodyVM *vm, BodyValue *av, BodyValue *bv)
{
        int64_t base = bv__int_of(av), exp = bv__int_of(bv), r = 1;

        if (exp < 0)
                return int_pow_negative(vm, av, bv);
        while (exp > 0) {
                if (exp & 1)
                        if (__builtin_mul_overflow(r, base, &r))
                                return bv__int_binop_big(vm, BV_OP_POW, av, bv);
                exp >>= 1;
                if (exp > 0 && __builtin_mul_overflow(base, base, &base))
                        return bv__int_binop_big(vm, BV_OP_POW, av, bv);
        }
        return bv_int_new(vm, r);
}

/* Both magnitudes at most 2**53: the quotient of the two exact doubles is
 * correctly rounded (CPython's fast path for int / int). */
static bool exact_double(int64_t x)
{
        return x >= -(INT64_C(1) << 53) && x <= (INT64_C(1) << 53);
}

static BodyValue *int_binop(BodyVM *vm, BvBinOp op, BodyValue *av, BodyValue *bv)
{
        int64_t a = bv__int_of(av), b = bv__int_of(bv), r = 0;
        bool both_bool = av->kind == BV_BOOL && bv->kind == BV_BOOL;

        if (bv__is_big(av) || bv__is_big(bv)) {
                if (op == BV_OP_POW && b < 0)
                        return int_pow_negative(vm, av, bv);
                return bv__int_binop_big(vm, op, av, bv);
        }
        switch (op) {
        case BV_OP_ADD:
                if (__builtin_add_overflow(a, b, &r))
                        return bv__int_binop_big(vm, op, av, bv);
                return bv_int_new(vm, r);
        case BV_OP_SUB:
                if (__builtin_sub_overflow(a, b, &r))
                        return bv__int_binop_big(vm, op, av, bv);
                return bv_int_new(vm, r);
        case BV_OP_MUL:
                if (__builtin_mul_overflow(a, b, &r))
                        return bv__int_binop_big(vm, op, av, bv);
                return bv_int_new(vm, r);
        case BV_OP_TRUEDIV:
                if (b == 0)
                        return bv_raise(vm, BV_EXC_ZERO_DIVISION_ERROR, "division by zero");
                if (!exact_double(a) || !exact_double(b))
                        return bv__int_binop_big(vm, op, av, bv);
                return bv_float_new(vm, (double)a / (double)b);
        case BV_OP_FLOORDIV:
        case BV_OP_MOD: {
                int64_t q, m;
                if (b == 0)
                        return bv_raise(vm, BV_EXC_ZERO_DIVISION_ERROR,
                                        op == BV_OP_MOD ? "integer modulo by zero"
                                                        : "integer division or modulo by zero");
                if (a == INT64_MIN && b == -1) {
                        if (op == BV_OP_MOD)
                                return bv_int_new(vm, 0);
                        return bv__int_binop_big(vm, op, av, bv);
                }
                q = a / b;
                m = a % b;
                if (m != 0 && ((m < 0) != (b < 0))) {
                        q--;
                        m += b;
                }
                return bv_int_new(vm, op == BV_OP_MOD ? m : q);
        }
        case BV_OP_POW:
                return int_pow(vm, av, bv);
        case BV_OP_LSHIFT:
                if (b < 0)
                        return bv_raise(vm, BV_EXC_VALUE_ERROR, "negative shift count");
                if (a == 0)
                        return bv_int_new(vm, 0);
                if (b >= 63)
                        return bv__int_binop_big(vm, op, av, bv);
                r = (int64_t)((uint64_t)a << b);
                if ((r >> b) != a)
                        return bv__int_binop_big(vm, op, av, bv);
                return bv_int_new(vm, r);
        case BV_OP_RSHIFT:
                if (b < 0)
                        return bv_raise(vm, BV_EXC_VALUE_ERROR, "negative shift count");
                return bv_int_new(vm, b >= 63 ? (a < 0 ? -1 : 0) : a >> b);
        case BV_OP_AND:
                return both_bool ? bv_bool(a & b) : bv_int_new(vm, a & b);
        case BV_OP_OR:
                return both_bool ? bv_bool(a | b) : bv_int_new(vm, a | b);
        case BV_OP_XOR:
                return both_bool ? bv_bool(a ^ b) : bv_int_new(vm, a ^ b);
        }
        return unsupported(vm, op, av, bv);
}

static BodyValue *float_binop(BodyVM *vm, BvBinOp op, BodyValue *av, BodyValue *bv, double a,
                              double b)
{
        double r;

        switch (op) {
        case BV_OP_ADD:
                return bv_float_new(vm, a + b);
        case BV_OP_SUB:
                return bv_float_new(vm, a - b);
        case BV_OP_MUL:
                return bv_float_new(vm, a * b);
        case BV_OP_TRUEDIV:
                if (b == 0)
                        return bv_raise(vm, BV_EXC_ZERO_DIVISION_ERROR, "float division by zero");
                return bv_float_new(vm, a / b);
        case BV_OP_FLOORDIV:
        case BV_OP_MOD: {
                double mod, div, floordiv;
                if (b == 0)
                        return bv_raise(vm, BV_EXC_ZERO_DIVISION_ERROR,
                                        op == BV_OP_MOD ? "float modulo"
                                                        : "float floor division by zero");
                /* CPython's float_divmod, step for step. */
                mod = fmod(a, b);
                div = (a - mod) / b;
                if (mod != 0) {
                        if ((b < 0) != (mod < 0)) {
                                mod += b;
                                div -= 1.0;
                        }
                } else {
                        mod = copysign(0.0, b);
                }
                if (div != 0) {
                        floordiv = floor(div);
                        if (div - floordiv > 0.5)
                                floordiv += 1.0;
                } else {
                        floordiv = copysign(0.0, a / b);
                }
                return bv_float_new(vm, op == BV_OP_MOD ? mod : floordiv);
        }
        case BV_OP_POW:
                if (a == 0 && b < 0)
                        return bv_raise(vm, BV_EXC_ZERO_DIVISION_ERROR,
                                        "0.0 cannot be raised to a negative power");
                if (a < 0 && b != floor(b) && isfinite(b))
                        return bv_raise(vm, BV_EXC_VALUE_ERROR,
                                        "negative number cannot be raised to a fractional power "
                                        "(complex numbers are not supported)");
                r = pow(a, b);
                if (isinf(r) && isfinite(a) && isfinite(b))
                        return bv_raise(vm, BV_EXC_OVERFLOW_ERROR,
                                        "(34, 'Numerical result out of range')");
                return bv_float_new(vm, r);
        default:
                return unsupported(vm, op, av, bv);
        }
}

/* s * n for str, list and tuple, with the size checked before anything
 * is allocated: 'x' * 10**12 fails at once. */
static BodyValue *repeat(BodyVM *vm, BodyValue *seq, int64_t n)
{
        size_t len = seq->kind == BV_STR ? seq->str.len : seq->list.len;
        uint64_t total;

        if (n < 0)
                n = 0;
        if (__builtin_mul_overflow((uint64_t)len, (uint64_t)n, &total))
                total = UINT64_MAX;
        if (seq->kind == BV_STR) {
                BodyValue *r;
                if (bv__check_string_size(vm, total) < 0)
                        return NULL;
                r = bv__str_alloc(vm, total);
                if (!r)
                        return NULL;
                for (int64_t i = 0; i < n && len > 0; i++)
                        memcpy(r->str.data + (size_t)i * len, seq->str.data, len);
                r->str.cplen = seq->str.cplen * (size_t)n;
                return r;
        }
        if (total > vm->limits.max_memory / sizeof(BodyValue *))
                return bv_raise(vm, BV_EXC_MEMORY_ERROR,
                                "Body exceeded its memory limit (%zu bytes)",
                                vm->limits.max_memory);
        {
                _cleanup_bv_ BodyValue *r = bv_list_new(vm, (size_t)total);
                if (!r)
                        return NULL;
                r->kind = seq->kind;
                for (uint64_t i = 0; i < total; i++) {
                        if ((i & 1023) == 0 && bv_step(vm) < 0)
                                return NULL;
                        r->list.items[i] = bv_ref(seq->list.items[i % len]);
                        r->list.len++;
                }
                return TAKE_PTR(r);
        }
}

static BodyValue *concat(BodyVM *vm, BodyValue *a, BodyValue *b)
{
        if (a->kind == BV_STR) {
                BodyValue *r;
                if (bv__check_string_size(vm, (uint64_t)a->str.len + b->str.len) < 0)
                        return NULL;
                r = bv__str_alloc(vm, a->str.len + b->str.len);
                if (!r)
                        return NULL;
                memcpy(r->str.data, a->str.data, a->str.len);
                memcpy(r->str.data + a->str.len, b->str.data, b->str.len);
                r->str.cplen = a->str.cplen + b->str.cplen;
                return r;
        }
        {
                _cleanup_bv_ BodyValue *r = bv_list_new(vm, a->list.len + b->list.len);
                if (!r)
                        return NULL;
                r->kind = a->kind;
                for (size_t i = 0; i < a->list.len; i++)
                        r->list.items[r->list.len++] = bv_ref(a->list.items[i]);
                for (size_t i = 0; i < b->list.len; i++)
                        r->list.items[r->list.len++] = bv_ref(b->list.items[i]);
                return TAKE_PTR(r);
        }
}

static BodyValue *set_op(BodyVM *vm, BvBinOp op, BodyValue *a, BodyValue *b)
{
        _cleanup_bv_ BodyValue *r = NULL;
        size_t pos = 0;
        BodyValue *k;

        if (op == BV_OP_OR || op == BV_OP_XOR || op == BV_OP_SUB)
                r = bv__dict_copy(vm, a);
        else
                r = bv_set_new(vm);
        if (!r)
                return NULL;
        switch (op) {
        case BV_OP_OR:
                while (bv_dict_next(b, &pos, &k, NULL))
                        if (bv_set_add(vm, r, k) < 0)
                                return NULL;
                break;
        case BV_OP_AND:
                while (bv_dict_next(a, &pos, &k, NULL)) {
                        int found = bv_dict_lookup(vm, b, k, NULL);
                        if (found < 0 || (found && bv_set_add(vm, r, k) < 0))
                                return NULL;
                }
                break;
        case BV_OP_SUB:
                while (bv_dict_next(b, &pos, &k, NULL))
                        if (bv_dict_delete(vm, r, k) < 0)
                                return NULL;
                break;
        default: /* XOR */
                while (bv_dict_next(b, &pos, &k, NULL)) {
                        int found = bv_dict_lookup(vm, a, k, NULL);
                        if (found < 0)
                                return NULL;
                        if (found ? bv_dict_delete(vm, r, k) < 0 : bv_set_add(vm, r, k) < 0)
                                return NULL;
                }
                break;
        }
        return TAKE_PTR(r);
}

static bool is_seq(const BodyValue *v)
{
        return v->kind == BV_STR || v->kind == BV_LIST || v->kind == BV_TUPLE;
}

/* ---- the binop slots of the core's kinds ---- */

BodyValue *bv__seq_binop(BodyVM *vm, BvBinOp op, BodyValue *a, BodyValue *b)
{
        if (op == BV_OP_ADD && is_seq(a)) {
                if (b->kind == a->kind)
                        return concat(vm, a, b);
                return bv_raise(vm, BV_EXC_TYPE_ERROR, "can only concatenate %s (not \"%s\") to %s",
                                bv_type_name(a), bv_type_name(b), bv_type_name(a));
        }
        if (op == BV_OP_MUL) {
                BodyValue *seq = is_seq(a) ? a : b, *count = seq == a ? b : a;
                if (!bv__is_intlike(count))
                        return bv_raise(vm, BV_EXC_TYPE_ERROR,
                                        "can't multiply sequence by non-int of type '%s'",
                                        bv_type_name(count));
                if (bv__is_big(count))
                        return bv__index_overflow(vm);
                return repeat(vm, seq, bv__int_of(count));
        }
        return BV_NOT_IMPLEMENTED;
}

BodyValue *bv__set_binop(BodyVM *vm, BvBinOp op, BodyValue *a, BodyValue *b)
{
        if (a->kind == BV_SET && b->kind == BV_SET &&
            (op == BV_OP_OR || op == BV_OP_AND || op == BV_OP_SUB || op == BV_OP_XOR))
                return set_op(vm, op, a, b);
        return BV_NOT_IMPLEMENTED;
}

BodyValue *bv__dict_binop(BodyVM *vm, BvBinOp op, BodyValue *a, BodyValue *b)
{
        if (op == BV_OP_OR && a->kind == BV_DICT && b->kind == BV_DICT) {
                _cleanup_bv_ BodyValue *r = bv__dict_copy(vm, a);
                if (!r || bv__dict_update(vm, r, b, NULL) < 0)
                        return NULL;
                return TAKE_PTR(r);
        }
        return BV_NOT_IMPLEMENTED;
}

BodyValue *bv_binop(BodyVM *vm, BvBinOp op, BodyValue *a, BodyValue *b)
{
        const BvType *ta = bv__type(a), *tb = bv__type(b);
        BodyValue *r;

        if (bv__is_intlike(a) && bv__is_intlike(b))
                return int_binop(vm, op, a, b);
        if (bv__is_number(a) && bv__is_number(b)) {
                double x, y;
                if (op >= BV_OP_LSHIFT)
                        return unsupported(vm, op, a, b);
                /* A huge int meets a float: CPython converts it first. */
                if (bv__int_to_double_any(vm, a, &x) < 0 || bv__int_to_double_any(vm, b, &y) < 0)
                        return NULL;
                return float_binop(vm, op, a, b, x, y);
        }
        if (ta->binop && (r = ta->binop(vm, op, a, b)) != BV_NOT_IMPLEMENTED)
                return r;
        if (tb != ta && tb->binop && (r = tb->binop(vm, op, a, b)) != BV_NOT_IMPLEMENTED)
                return r;
        return unsupported(vm, op, a, b);
}

BodyValue *bv_binop_inplace(BodyVM *vm, BvBinOp op, BodyValue *a, BodyValue *b)
{
        if (a->kind == BV_LIST && op == BV_OP_ADD) {
                /* l += iterable extends in place, unlike l + iterable. */
                BodyValue **items;
                size_t n;
                if (bv__collect(vm, b, &items, &n) < 0)
                        return NULL;
                if (bv__list_reserve(vm, a, a->list.len + n) < 0) {
                        bv__free_items(vm, items, n);
                        return NULL;
                }
                for (size_t i = 0; i < n; i++)
                        a->list.items[a->list.len++] = items[i];
                bv_mem_free(vm, items, n * sizeof(BodyValue *));
                return bv_ref(a);
        }
        if (a->kind == BV_LIST && op == BV_OP_MUL && bv__is_intlike(b)) {
                if (bv__is_big(b))
                        return bv__index_overflow(vm);
                _cleanup_bv_ BodyValue *r = repeat(vm, a, bv__int_of(b));
                if (!r)
                        return NULL;
                /* Swap the repeated items into a, keeping a's identity. */
                BodyValue **old = a->list.items;
                size_t old_len = a->list.len, old_cap = a->list.cap;
                a->list.items = r->list.items;
                a->list.len = r->list.len;
                a->list.cap = r->list.cap;
                r->list.items = old;
                r->list.len = old_len;
                r->list.cap = old_cap;
                return bv_ref(a);
        }
        if (a->kind == BV_DICT && b->kind == BV_DICT && op == BV_OP_OR) {
                if (bv__dict_update(vm, a, b, NULL) < 0)
                        return NULL;
                return bv_ref(a);
        }
        if (a->kind == BV_SET && b->kind == BV_SET &&
            (op == BV_OP_OR || op == BV_OP_AND || op == BV_OP_SUB || op == BV_OP_XOR)) {
                /* Compute the result, then move its table into a, so that
                 * every alias of a sees the change. */
                _cleanup_bv_ BodyValue *r = set_op(vm, op, a, b);
                BvDict tmp;
                if (!r)
                        return NULL;
                tmp = a->dict;
                a->dict = r->dict;
                r->dict = tmp;
                a->dict.version = tmp.version + 1;
                return bv_ref(a);
        }
        return bv_binop(vm, op, a, b);
}

BodyValue *bv_unop(BodyVM *vm, BvUnaryOp op, BodyValue *a)
{
        static const char *const names[] = {"-", "+", "~"};

        if (op == BV_OP_NOT)
                return bv_bool(!bv_truthy(a));
        if (bv__is_intlike(a)) {
                int64_t i = bv__int_of(a);
                if (bv__is_big(a) || (op == BV_OP_NEG && i == INT64_MIN))
                        return op == BV_OP_POS ? bv_ref(a) : bv__int_unop_big(vm, op, a);
                switch (op) {
                case BV_OP_NEG:
                        return bv_int_new(vm, -i);
                case BV_OP_POS:
                        return bv_int_new(vm, i);
                default:
                        return bv_int_new(vm, ~i);
                }
        }
        if (a->kind == BV_FLOAT && op != BV_OP_INVERT)
                return bv_float_new(vm, op == BV_OP_NEG ? -a->f : a->f);
        return bv_raise(vm, BV_EXC_TYPE_ERROR, "bad operand type for unary %s: '%s'", names[op],
                        bv_type_name(a));
}
