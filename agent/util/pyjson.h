/* JSON text exactly as CPython's json.dumps() writes it.
 *
 * The engine and the scripts compare what the agent writes with what the
 * Python reference wrote, so separators, escapes and float spelling follow
 * CPython 3: ", " and ": " (or "," and ": " when indenting), ASCII-only
 * output with lowercase \uXXXX escapes and surrogate pairs, and floats as
 * repr() spells them. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/strbuf.h"

typedef struct PyJsonOptions {
        int indent;     /* < 0: one line (json.dumps default); >= 0: newline + that many spaces */
        bool sort_keys; /* json.dumps(sort_keys=True) */
        bool ensure_ascii; /* json.dumps default: true */
} PyJsonOptions;

#define PYJSON_DEFAULTS ((PyJsonOptions){.indent = -1, .sort_keys = false, .ensure_ascii = true})

/* Integers beyond 64 bits in jansson documents.
 *
 * jansson's json_int_t is 64-bit and its decoder refuses larger integers,
 * but Python's json module reads and writes them exactly. Such an integer
 * travels in a jansson document as a JSON_STRING whose bytes are
 * PYJSON_BIGINT_MARK (0xFF) followed by the decimal digits, with a leading
 * '-' when negative: "\xff-1180591620717411303424". Only our code creates
 * these strings (pyjson_bigint_new(), with jansson's no-check constructor):
 * jansson's decoder accepts valid UTF-8 only, where 0xFF never occurs, and
 * every other string we build is checked UTF-8. Every consumer of a
 * document that may hold one asks pyjson_bigint_digits(): pyjson_dump()
 * writes the digits bare, as json.dumps writes an int; the Body turns it
 * into an int (bv_from_json) and makes one from an int beyond 64 bits
 * (bv_to_json). Integers that fit in 64 bits are always JSON_INTEGER. */
#define PYJSON_BIGINT_MARK '\xff'

/* A new big-integer string for digits[0..len) (an optional '-', then
 * decimal digits without leading zeros; the caller ensures the value is
 * beyond 64 bits). NULL when out of memory. */
json_t *pyjson_bigint_new(const char *digits, size_t len);

/* The digits of a big-integer string (NUL-terminated, after the mark), or
 * NULL when v is anything else. */
const char *pyjson_bigint_digits(const json_t *v);

/* A string that is text, not a big integer: what every reader of a plan's
 * string fields (names, bodies, URLs, IDs) asks instead of
 * json_is_string(). */
static inline bool pyjson_is_string(const json_t *v)
{
        return json_is_string(v) && !pyjson_bigint_digits(v);
}

/* json_loadb() that keeps integers beyond 64 bits as big-integer strings
 * (pyjson-load.c); flags and err as json_loadb's. An integer of more than
 * 4300 digits (CPython's conversion limit) is json_error_numeric_overflow
 * at the number's end, as jansson reports an overflow. */
json_t *pyjson_loadb(const char *text, size_t len, size_t flags, json_error_t *err);

/* Append the text of v. Returns 0, -ENOMEM, -E2BIG (buffer limit) or -EINVAL
 * (a value json.dumps would refuse, such as nesting deeper than 1000). */
int pyjson_dump(const json_t *v, const PyJsonOptions *opt, StrBuf *out);

/* json.dumps(v) with the defaults, as a new string in *ret. */
int pyjson_dumps(const json_t *v, char **ret);

/* A plan's ID as log entries name it: a string's value, another value's
 * json.dumps() text, "" for NULL, null or a value that cannot be written.
 * Returns a new string, or NULL when out of memory. */
char *pyjson_id_text(const json_t *id);

/* Append s[0..len) as a JSON string literal with the quotes. Invalid UTF-8
 * is rejected with -EILSEQ. */
int pyjson_quote(StrBuf *out, const char *s, size_t len, bool ensure_ascii);

/* repr(float) as CPython 3 writes it: the shortest text that reads back as
 * the same double, fixed notation for decimal exponents in [-4, 16),
 * otherwise "1e+16" style. "inf", "-inf" and "nan" for the non-finite. */
void pyfloat_repr(double d, char buf[static 32]);

/* How json.dumps writes a float: repr(), except Infinity/-Infinity/NaN. */
void pyjson_float(double d, char buf[static 32]);
