/* Result documents, as the reference agent builds them (spec section 5).
 *
 * A result is a jansson object whose keys are in the reference's order:
 * FormatVersion, ID, SourceID, Action, ErrorCode, Body, Time, then ReplyTo
 * when the result went through the journal. Serialise it with
 * result_to_text(), which writes exactly what Python's json.dumps wrote, so
 * that results compare byte for byte with the reference's, ID and Time
 * aside. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <time.h>

/* Our own ErrorCodes, for ends the reference never reports (it has no time
 * limits, no sandbox, and loses interrupted plans). They sit in the
 * reference's CustomException range (100 + N), beside 100 "script returned
 * error code", because they too are a script or plan that did not run to
 * its own end; the engine treats every non-zero code alike.
 * docs/results.md lists them. */
enum {
        RESULT_CODE_TIMEOUT = 101,     /* script_timeout, plan_timeout or the plan's Timeout */
        RESULT_CODE_SANDBOX = 102,     /* a command could not be started in its sandbox */
        RESULT_CODE_INTERRUPTED = 103, /* the agent stopped, or died, while the plan ran */
        RESULT_CODE_NO_SPACE = 104,    /* the plan could not be stored: the agent's disk is full */
        RESULT_CODE_STAMP = 105,       /* refused for its Stamp: not newer than the last accepted */
        RESULT_CODE_LIMIT = 106,       /* a script reached memory_max or pids_max */
        RESULT_CODE_CANCELLED = 107,   /* cancelled on request, running or before it ran */
};

/* A success result: Body is the Body's return value (borrowed; json null
 * when NULL). source_id is the plan's ID as it appears in the plan (usually
 * a string); NULL gives "". Returns 0 or -errno. */
int result_new_success(json_t **ret, const json_t *source_id, const json_t *body);

/* An error result: Body is {"Message": message, "AdditionalInfo": info}.
 * message NULL gives null, as Python's from_error does for a bare code;
 * additional_info is borrowed (NULL gives null). */
int result_new_error(json_t **ret, const json_t *source_id, int error_code, const char *message,
                     const json_t *additional_info);

/* The same with a given ID and time, for tests and for replaying a journal. */
int result_new_success_at(json_t **ret, const char *id, const struct timespec *when,
                          const json_t *source_id, const json_t *body);
int result_new_error_at(json_t **ret, const char *id, const struct timespec *when,
                        const json_t *source_id, int error_code, const char *message,
                        const json_t *additional_info);

/* Whether a plan ID (a SourceID) reads as text: a string equal to it, or
 * an integer whose decimal form it is. How a cancel names its plan. */
bool result_source_id_is(const json_t *source_id, const char *text);

/* Append "ReplyTo" (borrowed value; NULL gives null) as the last key, as
 * the reference's put_execution_result does for every executed plan. */
int result_set_reply_to(json_t *result, const json_t *reply_to);

/* str(datetime) of a UTC time: "YYYY-MM-DD HH:MM:SS" plus ".ffffff" unless
 * the microseconds are zero. */
void result_format_time(const struct timespec *when, char buf[static 32]);

/* The result as json.dumps(result) writes it. Returns 0 or -errno. */
int result_to_text(const json_t *result, char **ret);
