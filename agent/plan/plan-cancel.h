/* plan-cancel: the cancel message, our extension of the plan queue's
 * protocol (docs/compatibility.md, "Cancel messages"). muranoagent-send
 * --cancel builds it and the daemon recognises it among the messages of
 * its input queue, before anything is stored. The body is a JSON object
 * that no engine sends and the reference agent drops:
 *
 *   {"Control": "Cancel", "PlanID": "<plan ID>", "ID": "<32 hex>", "Stamp": 0}
 *
 * `Control` marks it, `PlanID` names the plan to cancel (its SourceID),
 * `ID` is the message's own (also its AMQP message_id), and `Stamp` 0 makes
 * the reference drop it as an old message before it validates it (its last
 * stamp is never below 0). The signature, when the agent has an
 * engine_key, covers the body as it does a plan's, so the body alone must
 * say what the message is: no AMQP property takes part. */
#pragma once

#include <stddef.h>

/* Bodies longer than this are never cancel messages (nor parsed as one). */
#define PLAN_CANCEL_MAX 4096
/* The longest PlanID taken: a plan ID the engine makes is 32 hex digits,
 * and an AMQP message_id, the other source of plan IDs, holds 255 bytes. */
#define PLAN_CANCEL_ID_MAX 255

/* plan_cancel_parse(): a control message that cannot be obeyed. */
#define PLAN_CANCEL_INVALID 2

/* The body of a cancel message for plan_id, whose own ID is msg_id. 0 with
 * *ret (malloc'ed, NUL-terminated); -EINVAL for an empty plan_id or one
 * longer than PLAN_CANCEL_ID_MAX; -ENOMEM. */
int plan_cancel_build(const char *plan_id, const char *msg_id, char **ret);

/* What a message body is: 0 not a control message (a plan, or anything
 * else: the daemon handles it as a plan); 1 a cancel of the plan
 * *ret_plan_id (owned); PLAN_CANCEL_INVALID a control message that is
 * malformed or of an unknown kind, *ret_error (owned) says why; -ENOMEM.
 * A control message is a JSON object of at most PLAN_CANCEL_MAX bytes with
 * a `Control` key and none of `FormatVersion`, `Scripts` and `Body`. */
int plan_cancel_parse(const char *body, size_t len, char **ret_plan_id, char **ret_error);
