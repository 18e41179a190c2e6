/* body: the interpreter for the Python subset that plans' Body code uses.
 *
 * The reference agent wraps Body in a function and runs it with exec(). We
 * parse and evaluate the same text ourselves, with Python 3 semantics for the
 * subset real templates use (docs/body.md), and with hard limits so that a
 * hostile Body cannot hang or exhaust the agent.
 *
 * This module knows nothing of processes or event loops: a call of a plan
 * script is handed to BodyHost.call_script, which returns the script's
 * result synchronously. Values cross the boundary as jansson documents:
 * Parameters come in, script arguments and the return value go out with the
 * conversions json.dumps applies (tuples become arrays, non-string dict keys
 * become strings). */
#pragma once

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One call of a plan script from Body: name(...) or name.function(...). */
typedef struct BodyCall {
        const char *script;   /* key of the plan's Scripts */
        const char *function; /* the attribute in name.attr(...), NULL for name(...) */
        const json_t *args;   /* array of positional arguments */
        const json_t *kwargs; /* object of keyword arguments, in call order */
} BodyCall;

/* A script call that failed in a way the Body sees as an exception, such as
 * a non-zero exit with verifyExitcode (ErrorCode 100). */
typedef struct BodyCallError {
        int code;                /* result ErrorCode if the Body does not catch it */
        char *message;           /* owned: str(exception) */
        json_t *additional_info; /* owned, may be NULL: Body.AdditionalInfo */
} BodyCallError;

typedef struct BodyHost {
        void *userdata;
        /* Run one script call. Returns 0 and a new reference to the result
         * object {"exitCode": int, "stdout": str|null, "stderr": str|null} in
         * *ret; 1 with *err filled for a failure raised into the Body; or a
         * negative errno to abort the evaluation. */
        int (*call_script)(void *userdata, const BodyCall *call, json_t **ret, BodyCallError *err);
        /* Directory that relative paths in open() are resolved against, or
         * NULL for the process's working directory. May be NULL itself. */
        const char *(*cwd)(void *userdata);
        /* A value the Body draws that is not a pure function of the plan:
         * kind "hash-key" (16 bytes: the key of hash() and of set and dict
         * order), "uuid4" (32 hex digits) or "file" (a file opened for
         * reading only, what names it: 'C' and its content, or 'E' and
         * the decimal errno open() failed with). *value (malloc'd, *len
         * bytes and a NUL) is what the Body drew; the host may record it, or replace
         * it with one recorded before (free the old, malloc the new, NUL-terminated): the
         * Body then sees that. Returns 0, or a negative errno to abort the
         * evaluation. May be NULL: values are used as drawn. */
        int (*draw)(void *userdata, const char *kind, const char *what, char **value, size_t *len);
} BodyHost;

typedef struct BodyLimits {
        uint64_t max_steps;    /* evaluation steps (roughly: AST nodes visited) */
        unsigned max_depth;    /* nesting of calls and expression evaluation */
        size_t max_memory;     /* bytes of live values at any time */
        size_t max_string;     /* bytes in one string value */
        const char *open_root; /* NULL: open() anywhere, as the reference; else only below it */
        /* When not NULL, another thread may set *cancel to non-zero (a plan
         * timeout, the agent stopping); the evaluation then stops at its
         * next step with an error no except clause can catch (exc_type
         * "ResourceLimitError"). The caller words the result. */
        const atomic_int *cancel;
} BodyLimits;

#define BODY_LIMITS_DEFAULT                                                                        \
        ((BodyLimits){.max_steps = 10000000,                                                       \
                      .max_depth = 200,                                                            \
                      .max_memory = 256u << 20,                                                    \
                      .max_string = 64u << 20,                                                     \
                      .open_root = NULL,                                                           \
                      .cancel = NULL})

/* What a Body evaluation came to: a value, or an error result. */
typedef struct BodyOutcome {
        int error_code;          /* 0 = success; 1 = Python exception; 100 = script failure */
        json_t *value;           /* owned, success only: the return value (json null for None) */
        char *exc_type;          /* owned, error only: "KeyError", "SyntaxError", ... */
        char *message;           /* owned, error only: Body.Message, i.e. str(exception) */
        json_t *additional_info; /* owned, may be NULL: Body.AdditionalInfo */
        int line;                /* error only: line in Body (1-based), 0 if unknown */
} BodyOutcome;

/* Evaluate a plan's Body. `parameters` (may be NULL) becomes args;
 * `scripts` names the callables (the keys of the plan's Scripts). Returns 0
 * with *ret filled, for success and Python errors alike; a negative errno
 * only when the agent itself failed (-ENOMEM outside the Body's budget, or
 * a negative value from call_script). */
int body_run(const char *source, size_t len, const json_t *parameters, const char *const *scripts,
             size_t n_scripts, const BodyHost *host, const BodyLimits *limits, BodyOutcome *ret);

void body_outcome_clear(BodyOutcome *o);
