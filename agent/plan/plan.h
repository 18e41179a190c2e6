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
 * *err says why, negative errno = the agent failed (out of memory). */
#pragma once

#include <jansson.h>
#include <stddef.h>

#define PLAN_INVALID 1

/* ErrorCode values of the result documents (spec section 5.2). */
enum {
        PLAN_CODE_EXCEPTION = 1,    /* any other failure: str(exception) */
        PLAN_CODE_FORMAT = 2,       /* IncorrectFormat from validation */
        PLAN_CODE_VERSION = 9,      /* unsupported FormatVersion */
        PLAN_CODE_SCRIPT = 100,     /* script failed with verifyExitcode */
};

typedef struct PlanLimits {
        size_t max_bytes;   /* larger input is refused */
        unsigned max_depth; /* deeper nesting of arrays/objects is refused */
} PlanLimits;

#define PLAN_LIMITS_DEFAULT ((PlanLimits){.max_bytes = 64u << 20, .max_depth = 64})

typedef struct PlanError {
        int code;      /* result ErrorCode: PLAN_CODE_* */
        char *message; /* owned: Body.Message, exactly as the reference words it */
        int line;      /* 1-based position in the input for people, 0 if unknown */
        int column;
} PlanError;

void plan_error_clear(PlanError *err);

/* Parse wire bytes as JSON. The document must be an object. */
int plan_parse_json(const char *data, size_t len, const PlanLimits *lim, json_t **ret,
                    PlanError *err);

/* Parse hand-written YAML (one document, the scalar rules of PyYAML's
 * safe_load for null, booleans, integers and floats). Must be a mapping. */
int plan_parse_yaml(const char *data, size_t len, const PlanLimits *lim, json_t **ret,
                    PlanError *err);

/* Parse a plan file: JSON when the text starts with '{' after white space,
 * YAML otherwise. File read errors are returned as negative errno. */
int plan_parse_file(const char *path, const PlanLimits *lim, json_t **ret, PlanError *err);

/* The reference's validation (spec 3.6) plus our own checks on file Names,
 * in the reference's order. 0 = valid, PLAN_INVALID with *err filled. */
int plan_validate(const json_t *plan, PlanError *err);
