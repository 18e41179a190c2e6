/* Helpers shared by the files of the plan module; not for other modules. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan/plan.h"
#include "util/macro.h"

/* jansson refuses deeper input on its own; our limit never exceeds it. */
#define PLAN_JANSSON_MAX_DEPTH 2048

/* Fill *err (if not NULL) with code and the formatted message, followed by
 * " (line L, column C)" when line > 0. Returns PLAN_INVALID, or -ENOMEM when
 * the message cannot be built. */
int plan_error_setf(PlanError *err, int code, int line, int column, const char *fmt, ...)
        _printf_(5, 6);

/* Same, with the message already built; takes ownership of message. */
int plan_error_take(PlanError *err, int code, int line, int column, char *message);

/* 1-based line and column (in code points) of byte offset in data, for
 * positions we find ourselves. The text before offset must be UTF-8. */
void plan_text_position(const char *data, size_t offset, int *ret_line, int *ret_column);

/* The common checks before either parser runs: size, NUL bytes, UTF-8 and
 * empty text. Returns 0, PLAN_INVALID or -ENOMEM. */
int plan_check_text(const char *data, size_t len, const PlanLimits *lim, PlanError *err);

/* The nesting limit in force for lim (NULL = defaults). */
unsigned plan_max_depth(const PlanLimits *lim);

/* A string's text shorter than this goes through jansson as it is; a longer
 * run without escapes is kept away from it (plan-json-runs.c). */
#define PLAN_JSON_LONG_RUN ((size_t)64 * 1024)

/* plan_parse_json() with the threshold as a parameter, for tests and the
 * bench: runs of at least min_run bytes (>= 1; SIZE_MAX: none, the plain
 * parse) are kept away from jansson. *ret_runs, when not NULL, gets how
 * many were (0 when the plain parse decided). */
int plan_parse_json_runs(const char *data, size_t len, const PlanLimits *lim, size_t min_run,
                         json_t **ret, size_t *ret_runs, PlanError *err);

/* plan_parse_json_kept() with the threshold as a parameter, likewise. */
int plan_parse_json_kept_runs(char **text, size_t len, const PlanLimits *lim, size_t min_run,
                              json_t **ret, PlanText **ret_text, PlanError *err);

/* Runs of string text, as byte offsets into the plan. */
typedef struct PlanRun {
        size_t start, len;
} PlanRun;

typedef struct PlanRuns {
        PlanRun *run;
        size_t n, cap;
} PlanRuns;

void plan_runs_clear(PlanRuns *runs);
int plan_runs_add(PlanRuns *runs, size_t start, size_t len);

/* True when text has no control character (below 0x20), which a JSON
 * string may not hold raw. */
bool plan_runs_plain(const char *text, size_t len);

/* A copy of data in which every run is replaced by its placeholder, NUL-
 * terminated. Returns 0 or -ENOMEM. */
int plan_runs_stand_in(const char *data, size_t len, const PlanRuns *runs, char **ret,
                       size_t *ret_len);

/* Replace the placeholders in doc's strings with the runs of data (the
 * text the runs were found in); with keep, the Files' bodies
 * (doc.Files.<id>.Body) keep theirs, and *ret_kept says how many strings
 * did. Returns 0, 1 when some placeholder was not found exactly once, or
 * -ENOMEM. */
int plan_runs_restore(json_t *doc, const char *data, const PlanRuns *runs, bool keep,
                      size_t *ret_kept);

/* plan_text_pieces() of a string that may hold placeholders of runs of
 * data (runs NULL: none). */
int plan_runs_pieces(const char *data, const PlanRuns *runs, const json_t *s,
                     int (*fn)(void *userdata, const char *piece, size_t len), void *userdata);

/* A FormatVersion parsed as semantic_version.Version parses it: strict
 * MAJOR.MINOR.PATCH[-prerelease][+build]. The parts point into text. */
typedef struct PlanVersion {
        const char *text; /* borrowed: the version string */
        size_t text_len;  /* without a trailing newline that Python's $ allows */
        size_t major_len, minor_len, patch_len;
        const char *major, *minor, *patch;
        const char *prerelease; /* NULL when absent */
        size_t prerelease_len;
} PlanVersion;

/* Parse the FormatVersion value (any JSON type) like Version(value). On
 * failure *err gets code 1 and the text of the exception Python raises.
 * Returns 0, PLAN_INVALID or -ENOMEM. */
int plan_version_parse(const json_t *value, PlanVersion *ret, PlanError *err);

/* Precedence of v against the release maj.min.pat, build metadata ignored:
 * negative, zero or positive. */
int plan_version_cmp(const PlanVersion *v, unsigned maj, unsigned min, unsigned pat);

/* semantic_version's Spec('<X.Y.Z') for a release target: a prerelease of
 * X.Y.Z itself is not "less" under its natural prerelease policy. */
bool plan_version_lt(const PlanVersion *v, unsigned maj, unsigned min, unsigned pat);

/* A YAML scalar after tag resolution. Strings keep their text in the event. */
typedef enum PlanScalarKind {
        PLAN_SCALAR_STR,
        PLAN_SCALAR_NULL,
        PLAN_SCALAR_BOOL,
        PLAN_SCALAR_INT,
        PLAN_SCALAR_FLOAT,
} PlanScalarKind;

typedef struct PlanScalar {
        PlanScalarKind kind;
        bool boolean;
        int64_t integer;
        double real; /* may be infinite or NaN (.inf, .nan) */
} PlanScalar;

typedef enum PlanScalarError {
        PLAN_SCALAR_OK,
        PLAN_SCALAR_NOMEM,
        PLAN_SCALAR_BAD_TAG,   /* a tag we do not construct (!!timestamp, !foo) */
        PLAN_SCALAR_BAD_VALUE, /* text that its tag cannot take (!!int abc, 0x_) */
        PLAN_SCALAR_RANGE,     /* an integer outside int64 */
        PLAN_SCALAR_MERGE,     /* the merge key << */
} PlanScalarError;

/* The value of an integer scalar that plan_scalar_resolve() found beyond
 * int64, as a big-integer string (util/pyjson.h): 0 with *ret, 1 when its
 * decimal text has more than 4300 digits (CPython's int() limit), 2 when
 * GMP cannot be loaded (gmp_lazy_error() says why), or -ENOMEM. */
int plan_scalar_bigint(const char *value, size_t len, json_t **ret);

/* Resolve one scalar as PyYAML's safe_load would: tag is the event's tag
 * (NULL when none was written), plain tells an unquoted flow scalar. */
PlanScalarError plan_scalar_resolve(const char *tag, const char *value, size_t len, bool plain,
                                    PlanScalar *ret);
