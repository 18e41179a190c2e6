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
        int indent;        /* < 0: one line (json.dumps default); >= 0: newline + that many spaces */
        bool sort_keys;    /* json.dumps(sort_keys=True) */
        bool ensure_ascii; /* json.dumps default: true */
} PyJsonOptions;

#define PYJSON_DEFAULTS ((PyJsonOptions){.indent = -1, .sort_keys = false, .ensure_ascii = true})

/* Append the text of v. Returns 0, -ENOMEM, -E2BIG (buffer limit) or -EINVAL
 * (a value json.dumps would refuse, such as nesting deeper than 1000). */
int pyjson_dump(const json_t *v, const PyJsonOptions *opt, StrBuf *out);

/* json.dumps(v) with the defaults, as a new string in *ret. */
int pyjson_dumps(const json_t *v, char **ret);

/* Append s[0..len) as a JSON string literal with the quotes. Invalid UTF-8
 * is rejected with -EILSEQ. */
int pyjson_quote(StrBuf *out, const char *s, size_t len, bool ensure_ascii);

/* repr(float) as CPython 3 writes it: the shortest text that reads back as
 * the same double, fixed notation for decimal exponents in [-4, 16),
 * otherwise "1e+16" style. "inf", "-inf" and "nan" for the non-finite. */
void pyfloat_repr(double d, char buf[static 32]);

/* How json.dumps writes a float: repr(), except Infinity/-Infinity/NaN. */
void pyjson_float(double d, char buf[static 32]);
