/* Python's str(), repr(), type name and truth value of JSON values, as
 * CPython 3.11 gives them.
 *
 * The reference agent puts Python-formatted values into messages and onto
 * shell command lines ("Invalid file ID1: {'Name': 'x'}", '{0}'.format(True)),
 * and scripts parse that text, so the quoting has to be exactly Python's:
 * strings in single quotes unless they contain ' and no ", backslash escapes
 * for control and non-printable characters (\n, \x00, \u200b, \U000e0001),
 * True/False/None, floats as repr(float), ", " and ": " separators.
 *
 * JSON values map to Python values the way json.loads builds them: objects
 * are dicts (keys in document order), arrays are lists, integers are ints,
 * reals are floats. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/strbuf.h"

/* Append repr(v). Returns 0, -ENOMEM, -E2BIG (buffer limit), -EILSEQ (a
 * string that is not valid UTF-8) or -EINVAL (nesting deeper than 1000,
 * where Python would raise RecursionError). */
int pyrepr_repr(const json_t *v, StrBuf *out);

/* Append str(v): the string itself for a string, repr(v) for the rest. */
int pyrepr_str(const json_t *v, StrBuf *out);

/* Append repr() of the Python string s[0..len) (UTF-8). */
int pyrepr_string(StrBuf *out, const char *s, size_t len);

/* The Python type name of v as error messages print it: 'dict', 'list',
 * 'str', 'int', 'float', 'bool' or 'NoneType'. */
const char *pyrepr_type_name(const json_t *v);

/* bool(v): null, false, 0, 0.0, "", [] and {} are false; so is a missing
 * value (NULL), as dict.get() gives None. */
bool pyrepr_truthy(const json_t *v);
