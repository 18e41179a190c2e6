/* Results on the results queue, judged as the engine judges them.
 *
 * The engine's listener (murano/engine/system/agent_listener.py) parses each
 * body as JSON and wakes the waiter subscribed under
 * body.get('SourceID', message_id); Agent._send then returns the result's
 * Body or raises AgentException (spec sections 5.2, 5.3, 7.3). */
#pragma once

#include <jansson.h>
#include <stddef.h>

/* Does the message answer the plan subscribed under key (see
 * send_plan_message_id)? message_id is the AMQP property, "" when absent.
 * 1 with *ret_doc (a new reference) when it does; 0 when it does not, or
 * when the body is not a JSON object (the engine's listener cannot read
 * those either); -ENOMEM. */
int send_result_match(const char *body, size_t len, const char *message_id, const json_t *key,
                      json_t **ret_doc);

/* 1 when the engine would raise AgentException for this result (v2: a
 * truthy ErrorCode; v1: IsException at the top or in the last command, or a
 * result it cannot read), 0 when it would return the result's value. */
int send_result_failed(const json_t *doc);
