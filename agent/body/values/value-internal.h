/* Shared internals of the value core (values/) and what it offers the
 * library built on it (library/, agent/body/types.c). The evaluator uses
 * value.h only. */
#pragma once

#include "body/values/value.h"
#include "body/values/value-type.h"

/* The immortal singletons and the type objects, indexed where it helps. */
extern BodyValue bv__none_value, bv__true_value, bv__false_value;

extern BvClass bv_class_object, bv_class_nonetype, bv_class_bool, bv_class_int, bv_class_float,
        bv_class_str, bv_class_list, bv_class_tuple, bv_class_dict, bv_class_bunch, bv_class_set,
        bv_class_range, bv_class_slice, bv_class_dict_keys, bv_class_dict_values,
        bv_class_dict_items, bv_class_builtin, bv_class_function, bv_class_module, bv_class_script,
        bv_class_function_runner, bv_class_file, bv_class_uuid, bv_class_type, bv_class_map,
        bv_class_filter, bv_class_zip, bv_class_enumerate, bv_class_reversed,
        bv_class_list_iterator, bv_class_tuple_iterator, bv_class_list_reverseiterator,
        bv_class_str_iterator, bv_class_str_ascii_iterator, bv_class_dict_keyiterator,
        bv_class_dict_valueiterator, bv_class_dict_itemiterator, bv_class_set_iterator,
        bv_class_range_iterator, bv_class_longrange_iterator;

extern BvClass bv__exc_json_decode;

/* ---- allocation (value.c) ---- */

/* A new value of kind with `extra` bytes after the struct (for string data),
 * refcount 1, linked into the VM's live list. */
BodyValue *bv__alloc(BodyVM *vm, BvKind kind, size_t extra);
BodyValue *bv__method_new(BodyVM *vm, const BvBuiltinDef *def, BodyValue *self);
/* name.attr: the FunctionRunner of the reference, which calls the same
 * script with "function" set to attr. */
BodyValue *bv__script_function(BodyVM *vm, BodyValue *script, const char *function);
/* Grow a list's item array to hold at least `need` items. */
int bv__list_reserve(BodyVM *vm, BodyValue *list, size_t need);
/* A string of len bytes to be filled by the caller (data[len] is set to 0);
 * the caller must then set str.cplen (or call bv__str_finish). */
BodyValue *bv__str_alloc(BodyVM *vm, size_t len);
void bv__str_finish(BodyValue *s);
/* Check a length against max_string before allocating: 0 or -1 with
 * MemoryError pending. */
int bv__check_string_size(BodyVM *vm, uint64_t len);
/* Hand a drawn value to the host (BodyHost.draw), which records it or
 * replaces it with a recorded one; see body.h. Returns 0, or -1 with the
 * evaluation aborted (vm->fatal). */
int bv__draw(BodyVM *vm, const char *kind, const char *what, char **value, size_t *len);
/* Map a StrBuf error (-ENOMEM, -E2BIG) to an exception; returns -1. */
int bv__buf_error(BodyVM *vm, int r);
/* Run a StrBuf call; on error, return bv__buf_error()'s -1 from the caller
 * (which has its BodyVM in `vm`). */
#define BV_PUT(expr)                                                                               \
        do {                                                                                       \
                int _r = (expr);                                                                   \
                if (_r < 0)                                                                        \
                        return bv__buf_error(vm, _r);                                              \
        } while (0)
/* A StrBuf whose limit is the VM's max_string. */
static inline StrBuf bv__buf(BodyVM *vm)
{
        StrBuf b = STRBUF_INIT;
        b.limit = vm->limits.max_string;
        return b;
}
/* The exception instance for class c with the given args tuple (stolen). */
BodyValue *bv__exc_new(BodyVM *vm, const BvClass *c, BodyValue *args);
void bv__set_pending(BodyVM *vm, BodyValue *exc);

/* ---- argument parsing (builtins.c) ---- */

/* Bind positional args and kwargs to parameters names[0..n_names).
 * The first `max_positional` may be given positionally; the first
 * `n_required` must be given. out[i] is borrowed or NULL. Python-style
 * TypeErrors otherwise. */
int bv__parse_args(BodyVM *vm, const char *fname, BodyValue **args, size_t n, BodyValue *kwargs,
                   const char *const *names, size_t n_names, size_t n_required,
                   size_t max_positional, BodyValue **out);
/* For functions without keyword arguments: n in [min, max]. */
int bv__check_args(BodyVM *vm, const char *fname, size_t n, BodyValue *kwargs, size_t min,
                   size_t max);
int bv__no_kwargs(BodyVM *vm, const char *fname, BodyValue *kwargs);

/* ---- numbers (value-ops.c) ---- */

static inline bool bv__is_intlike(const BodyValue *v)
{
        return v->kind == BV_INT || v->kind == BV_BOOL;
}
static inline bool bv__is_number(const BodyValue *v)
{
        return v->kind == BV_INT || v->kind == BV_BOOL || v->kind == BV_FLOAT;
}
static inline bool bv__is_big(const BodyValue *v)
{
        return v->kind == BV_INT && v->big;
}
/* The int64 value of an int or bool. An int beyond int64 saturates to
 * INT64_MIN or INT64_MAX, which is what a count, a slice bound or a width
 * wants; code that needs the exact value checks bv__is_big() first. */
static inline int64_t bv__int_of(const BodyValue *v)
{
        if (v->kind == BV_BOOL)
                return (int64_t)v->b;
        if (v->big)
                return v->z.size < 0 ? INT64_MIN : INT64_MAX;
        return v->i;
}
/* The double of a number for code that has already handled big ints
 * (bv__int_to_double() raises OverflowError for those). */
static inline double bv__double_of(const BodyValue *v)
{
        return v->kind == BV_FLOAT ? v->f : (double)bv__int_of(v);
}
/* An index: int or bool, else TypeError "<what> indices must be integers
 * or slices, not str" style (what == NULL: "'str' object cannot be
 * interpreted as an integer"). */
int bv__as_index(BodyVM *vm, BodyValue *v, const char *what, int64_t *ret);
void *bv__overflow(BodyVM *vm);
/* OverflowError "cannot fit 'int' into an index-sized integer": a count
 * or size beyond int64. */
void *bv__index_overflow(BodyVM *vm);
/* int(d) for a finite double, OverflowError beyond int64. */
int bv__double_to_int(BodyVM *vm, double d, int64_t *ret);
/* Python's float floor-division and modulo. */
double bv__fmod_py(double a, double b);
/* Compare with Python's exact int/float semantics: -1, 0, 1, or 2 when
 * unordered (NaN). */
int bv__num_cmp(const BodyValue *a, const BodyValue *b);
/* Parse an int literal as int() does (whitespace, sign, underscores,
 * base prefixes). 0, -1 for invalid (no exception), -2 for overflow. */
int bv__parse_int(const char *s, size_t len, int base, int64_t *ret);

/* ---- integers beyond int64 (value-int.c) ---- */

/* CPython 3.11's sys.int_info.default_max_str_digits. */
#define BV_INT_MAX_STR_DIGITS 4300

/* A read-only GMP view of an int or bool: valid while v and t live. */
typedef struct BvIntView {
        mpz_t z;
        mp_limb_t buf[2];
} BvIntView;
mpz_srcptr bv__int_view(const BodyValue *v, BvIntView *t);
bool bv__mpz_get_int64(mpz_srcptr z, int64_t *ret);
/* The value of z, small when it fits in int64. */
BodyValue *bv__int_from_mpz(BodyVM *vm, mpz_srcptr z);
/* Charge n steps at once: 0, or -1 with ResourceLimitError pending. */
int bv__steps_charge(BodyVM *vm, uint64_t n);
/* Check that a result of `bits` bits fits the memory budget and charge the
 * steps GMP will spend on it (superlinear: a product, quotient or power). */
int bv__int_budget(BodyVM *vm, uint64_t bits, bool superlinear);
/* a / b correctly rounded (CPython's int true division); -1 on overflow. */
int bv__mpz_ratio_double(mpz_srcptr a, mpz_srcptr b, double *ret);
/* float(v) for an int or bool: OverflowError "int too large to convert
 * to float". */
int bv__int_to_double(BodyVM *vm, const BodyValue *v, double *ret);
/* int(d), truncating, unbounded: ValueError for NaN, OverflowError for
 * infinities. */
BodyValue *bv__int_from_double(BodyVM *vm, double d);
/* Exact comparisons: -1, 0, 1 (2 when f is NaN). */
int bv__int_cmp_double(const BodyValue *v, double f);
int bv__int_cmp(const BodyValue *a, const BodyValue *b);
/* The digits of |v| in base (2, 8, 10, 16) appended to out; *ret_neg is
 * the sign. Decimal beyond 4300 digits is CPython's ValueError. */
int bv__int_digits(BodyVM *vm, const BodyValue *v, unsigned base, bool upper, StrBuf *out,
                   bool *ret_neg);
/* str(v) of an int or bool appended to out. */
int bv__int_str(BodyVM *vm, const BodyValue *v, StrBuf *out);
/* The bytes a big int hashes (its limbs); returns its sign bit. */
uint64_t bv__int_hash_words(const BodyValue *v, const void **ret_data, size_t *ret_len);
/* The arithmetic of ints outside the int64 fast path, and of -x, ~x,
 * abs(x) (op BV_OP_POS) and pow(b, e, m). POW takes e >= 0 only. */
BodyValue *bv__int_binop_big(BodyVM *vm, BvBinOp op, BodyValue *a, BodyValue *b);
BodyValue *bv__int_unop_big(BodyVM *vm, BvUnaryOp op, BodyValue *v);
BodyValue *bv__int_powmod(BodyVM *vm, BodyValue *b, BodyValue *e, BodyValue *m);
/* round(x, nd) for an int or bool x: half to even at 10**-nd. */
BodyValue *bv__int_round(BodyVM *vm, BodyValue *x, int64_t nd);
/* float(v) of any number (int, bool, float). */
static inline int bv__int_to_double_any(BodyVM *vm, const BodyValue *v, double *ret)
{
        if (v->kind == BV_FLOAT) {
                *ret = v->f;
                return 0;
        }
        return bv__int_to_double(vm, v, ret);
}

/* ---- strings (methods-str.c, value-item.c) ---- */

static inline bool bv__str_is_ascii(const BodyValue *s)
{
        return s->str.len == s->str.cplen;
}
/* Byte offset of code point index i (0 <= i <= cplen). */
size_t bv__str_offset(const BodyValue *s, size_t i);
/* Code point index of byte offset off. */
size_t bv__str_cp_index(const BodyValue *s, size_t off);
/* Python's repr of a string, with quotes. */
int bv__repr_str(StrBuf *out, const char *s, size_t len);
bool bv__unicode_isprintable(uint32_t cp);
bool bv__unicode_isspace(uint32_t cp);
bool bv__unicode_isalpha(uint32_t cp);
bool bv__unicode_isdigit(uint32_t cp);
uint32_t bv__unicode_lower(uint32_t cp);
uint32_t bv__unicode_upper(uint32_t cp);
/* Decode the code point at s[off], which is valid UTF-8. */
uint32_t bv__cp_at(const char *s, size_t len, size_t off, size_t *ret_size);
/* Append cp as Python's repr escapes it: \xNN, \uNNNN or \UNNNNNNNN
 * (StrBuf's 0 or negative errno). */
int bv__put_cp_escape(StrBuf *out, uint32_t cp);

/* ---- sequences (value-item.c) ---- */

/* Resolve a slice against a length: Python's PySlice_AdjustIndices. Returns
 * the number of items selected, or -1 with an exception pending. */
int64_t bv__slice_indices(BodyVM *vm, BodyValue *slice, int64_t length, int64_t *start,
                          int64_t *stop, int64_t *step);
/* Collect an iterable into a fresh array of new references. */
int bv__collect(BodyVM *vm, BodyValue *iterable, BodyValue ***ret_items, size_t *ret_n);
void bv__free_items(BodyVM *vm, BodyValue **items, size_t n);
/* Stable sort of items[0..n) with an optional key function and reverse. */
int bv__sort(BodyVM *vm, BodyValue **items, size_t n, BodyValue *key, bool reverse);
BodyValue *bv__iter_new(BodyVM *vm, BvIterKind kind, BodyValue *src);
BodyValue *bv__range_new(BodyVM *vm, int64_t start, int64_t stop, int64_t step);
/* ---- ranges beyond int64 (value-range.c); these take any range ---- */
/* range(start, stop, step) of ints or bools, step != 0. */
BodyValue *bv__range_make(BodyVM *vm, BodyValue *start, BodyValue *stop, BodyValue *step);
/* The same, always in the int form (z). */
BodyValue *bv__range_make_big(BodyVM *vm, BodyValue *start, BodyValue *stop, BodyValue *step);
BodyValue *bv__range_part(BodyVM *vm, BodyValue *r, const char *name);
/* len(): OverflowError "Python int too large to convert to C ssize_t" past int64. */
int bv__range_len(BodyVM *vm, BodyValue *r, size_t *ret);
bool bv__range_truthy(const BodyValue *r);
BodyValue *bv__range_item(BodyVM *vm, BodyValue *r, BodyValue *key);
BodyValue *bv__range_slice(BodyVM *vm, BodyValue *r, BodyValue *slice);
/* item in r when r is in the int form. */
int bv__range_contains_big(BodyVM *vm, BodyValue *r, BodyValue *item);
/* == of ranges when either is in the int form. */
int bv__range_eq_big(BodyVM *vm, BodyValue *a, BodyValue *b);
/* What equal ranges share: len, start (0 when empty), step (0 when len <= 1). */
int bv__range_key(BodyVM *vm, BodyValue *r, BodyValue *ret[3]);
/* repr() of a range in the int form. */
int bv__range_repr_big(BodyVM *vm, BodyValue *r, StrBuf *out);
BodyValue *bv__range_reversed(BodyVM *vm, BodyValue *r);
BodyValue *bv__range_iter_big(BodyVM *vm, BodyValue *r);
int bv__range_next(BodyVM *vm, BvIter *it, BodyValue **ret);
extern const BvBuiltinDef bv__range_methods[];
/* Next line of a file opened for reading (value-file.c): bv_next() rules. */
int bv__file_next(BodyVM *vm, BodyValue *file, BodyValue **ret);

/* ---- method tables ---- */

/* The methods of a kind: the library's tables for str, list, dict, ...,
 * the core's for files and ranges. */
const BvBuiltinDef *bv__find_method(BvKind kind, const char *name);
extern const BvBuiltinDef bv__file_methods[];
/* Dict helpers shared by builtins and methods. */
int bv__dict_update(BodyVM *vm, BodyValue *dict, BodyValue *other, BodyValue *kwargs);
BodyValue *bv__dict_copy(BodyVM *vm, BodyValue *dict);
void bv__dict_clear(BodyValue *dict);

/* ---- objects the core constructs ---- */

BodyValue *bv__builtin_open(BodyVM *vm, BodyValue *self, BodyValue **args, size_t n,
                            BodyValue *kwargs);
BodyValue *bv__script_call(BodyVM *vm, BodyValue *script, BodyValue **args, size_t n,
                           BodyValue *kwargs);
int bv__uuid_str(const uint8_t u[16], char buf[static 37]);

/* ---- json (value-json.c) ---- */

typedef struct BvJsonOptions {
        const char *indent; /* NULL: one line */
        size_t indent_len;
        const char *item_sep;
        const char *key_sep;
        bool sort_keys;
        bool ensure_ascii;
        bool allow_nan;
        bool skipkeys;
} BvJsonOptions;

int bv__json_dump(BodyVM *vm, BodyValue *v, const BvJsonOptions *opt, StrBuf *out);
BodyValue *bv__json_loads(BodyVM *vm, const char *s, size_t len);
