/* Execution plans: turning bytes into a plan document, and judging it.
 *
 * A plan document is a jansson object. JSON arrives from the wire as bytes;
 * YAML is what people write by hand. Both give the same document. Parsing
 * refuses what the reference would crash or wedge on (invalid UTF-8, deep
 * nesting, duplicate keys, oversized input, non-object documents) with a
 * clear message, and validation reproduces the reference's checks, codes
 * and message texts exactly (spec section 3.6).
 *
 * Return convention: 0 = ok, PLAN_INVALID (positive) = the input is bad and
 * *err says why, negative errno = the agent failed (out of memory, or a file
 * that cannot be read). *err may be NULL when the caller only wants the
 * verdict; a PlanError that already holds a message is cleared first. Every
 * message is listed in docs/plans.md. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define PLAN_INVALID 1

/* ErrorCode values of the result documents (spec section 5.2). */
enum {
        PLAN_CODE_EXCEPTION = 1, /* any other failure: str(exception) */
        PLAN_CODE_FORMAT = 2,    /* IncorrectFormat from validation */
        PLAN_CODE_VERSION = 9,   /* unsupported FormatVersion */
        PLAN_CODE_SCRIPT = 100,  /* script failed with verifyExitcode */
};

typedef struct PlanLimits {
        size_t max_bytes;   /* larger input is refused */
        unsigned max_depth; /* deeper nesting of arrays/objects is refused */
} PlanLimits;

/* Passing NULL for limits means these. Nesting beyond 2048 levels is always
 * refused (jansson's own limit), whatever max_depth says. */
#define PLAN_LIMITS_DEFAULT ((PlanLimits){.max_bytes = 64u << 20, .max_depth = 64})

typedef struct PlanError {
        int code;      /* result ErrorCode: PLAN_CODE_* */
        char *message; /* owned: Body.Message, exactly as the reference words it */
        int line;      /* 1-based position in the input for people, 0 if unknown */
        int column;    /* 1-based, in characters (code points), 0 if unknown */
        /* The reference finds this problem only when it starts to run the
         * plan (a missing Body), so its result carries ReplyTo like the
         * result of any plan that ran; validation results do not. */
        bool at_run_time;
} PlanError;

#define PLAN_ERROR_INIT ((PlanError){0})

/* Free the message and reset all fields; accepts NULL. */
void plan_error_clear(PlanError *err);

static inline void plan_error_clearp(PlanError *err)
{
        plan_error_clear(err);
}
#define _cleanup_plan_error_ __attribute__((cleanup(plan_error_clearp)))

/* Parse wire bytes as JSON. The document must be an object; duplicate keys,
 * escaped NUL characters (\u0000), lone surrogates and numbers outside the
 * int64/double range are refused. Parse errors all have code 1 and carry
 * the line and column. */
int plan_parse_json(const char *data, size_t len, const PlanLimits *lim, json_t **ret,
                    PlanError *err);

/* A plan's text that the long bodies of some of its Files are still read
 * from, instead of from copies in the document (plan_parse_json_kept()). */
typedef struct PlanText PlanText;

PlanText *plan_text_free(PlanText *t);

static inline void plan_text_freep(PlanText **t)
{
        plan_text_free(*t);
}

/* plan_parse_json() of the text in *text (len bytes, a NUL after them),
 * except that a Files entry's Body made of long runs of plain string text
 * (a Base64 file, as the engine sends it) keeps them in the text: the
 * document's string then holds placeholders (NUL characters, which no
 * parsed string has), plan_text_pieces() gives its value, and the text
 * goes to *ret_text, which takes *text (set to NULL). When no body was
 * kept, *ret_text is NULL and *text stays the caller's. Everything else,
 * the checks and errors included, is plan_parse_json()'s. This spares the
 * document a copy of the body (2.8 MB for a 2 MiB file). */
int plan_parse_json_kept(char **text, size_t len, const PlanLimits *lim, json_t **ret,
                         PlanText **ret_text, PlanError *err);

/* Call fn(userdata, piece, len) for each piece of string s's value, in
 * order: the whole value at once when it keeps nothing in t (t may be
 * NULL). Stops at fn's first non-zero return and returns it; 0 when all
 * went through; -EINVAL when s is not a string. */
int plan_text_pieces(const PlanText *t, const json_t *s,
                     int (*fn)(void *userdata, const char *piece, size_t len), void *userdata);

/* Parse hand-written YAML (one document, the scalar rules of PyYAML's
 * safe_load for null, booleans, integers and floats). Must be a mapping.
 * Aliases, merge keys, duplicate keys and tags other than !!str, !!int,
 * !!float, !!bool, !!null, !!map and !!seq are refused; non-string keys
 * become strings as json.dumps would write them. */
int plan_parse_yaml(const char *data, size_t len, const PlanLimits *lim, json_t **ret,
                    PlanError *err);

/* Parse a plan file: JSON when the text starts with '{' after white space,
 * YAML otherwise. File read errors are returned as negative errno, except a
 * file larger than max_bytes, which is PLAN_INVALID like oversized text. */
int plan_parse_file(const char *path, const PlanLimits *lim, json_t **ret, PlanError *err);

/* The reference's validation (spec 3.6) with its codes and texts, including
 * the Python exceptions it raises on odd types (code 1, str(exception)); then
 * the reference's later KeyError for a missing Body; then our own checks of
 * ID, Stamp and file Names. 0 = valid, PLAN_INVALID with *err filled,
 * -ENOMEM, or -EINVAL when plan is not an object. */
int plan_validate(const json_t *plan, PlanError *err);
