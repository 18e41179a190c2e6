/* Execution plans built the way the Murano engine builds them.
 *
 * The engine turns a template (a package's Resources/X.template) into the
 * plan it publishes with Agent.build_execution_plan (spec section 7.2): a
 * deep copy with a fresh ID, a Stamp, default Action and Files, and every
 * script file the template names embedded from the package's
 * Resources/scripts directory under a fresh ID. This module does the same
 * on a jansson document, in the same order, so that the plan's key order
 * and text on the wire match the engine's.
 *
 * Return convention: 0 = built; SEND_PLAN_INVALID (positive) = the template
 * or one of its files is unusable and *ret_error (when not NULL) says why in
 * one sentence for people; negative errno = out of memory. */
#pragma once

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define SEND_PLAN_INVALID 1

/* Script files larger than this are refused (the agent refuses plans over
 * 64 MiB anyway, and Base64 grows a file by a third). */
#define SEND_PLAN_MAX_FILE (48u << 20)

typedef struct SendPlanEnv {
        /* The package's Resources directory: script files are read from its
         * scripts/ subdirectory, and may not leave the Resources directory. */
        const char *resources;
        size_t max_file_bytes; /* 0 means SEND_PLAN_MAX_FILE */
        /* Test seams. NULL means uuid4().hex (util/hexid.h) and time.time(). */
        int (*new_id)(void *userdata, char buf[static 33]);
        double (*now)(void *userdata);
        void *userdata;
} SendPlanEnv;

/* Build the plan the engine would publish for tmpl: the v2 path when
 * FormatVersion is set and does not start with "1.", else the v1 path
 * (Scripts become Base64 bodies, only a Stamp is added). tmpl is not
 * changed; *ret is a new document. */
int send_plan_build(const json_t *tmpl, const SendPlanEnv *env, json_t **ret, char **ret_error);

/* The Stamp the engine gives a plan built at time now (seconds since the
 * epoch, as time.time() returns them): int(now * 10000). */
int64_t send_plan_stamp(double now);

/* time.time() as CPython computes it from the realtime clock. */
double send_plan_time_now(void);

/* What the engine puts in the message_id property of a plan, and the value a
 * result's SourceID must equal to answer it (the engine's subscription key):
 * the plan's ID, or a fresh uuid4().hex when the plan has none (callRaw).
 * A falsy ID gives an empty message_id, as the engine's Message class does.
 * *ret_key is a new reference. SEND_PLAN_INVALID for an ID that is a list
 * or an object. */
int send_plan_message_id(const json_t *plan, const SendPlanEnv *env, char **ret_message_id,
                         json_t **ret_key, char **ret_error);
