/* daemon: the agent as a service (floor 5, wiring). It joins the transport
 * (AMQP), the journal (disk) and the runner (plans) on one libuv loop:
 *
 *   delivery -> signature check -> journal_put_plan (fsync) -> ack
 *   journal, in the reference's order: unsent results first (publish with
 *   confirms; remove once confirmed), then interrupted plans (answered with
 *   ErrorCode 103), then pending plans (stamp, de-duplication, validation,
 *   run on the runner's plan thread, result journaled)
 *
 * Journal calls that fsync run on libuv's thread pool, never on the loop.
 * docs/daemon.md describes the life of a message and every decision. */
#pragma once

#include "config/config.h"

/* Run the agent until SIGTERM or SIGINT. config_paths (NULL-terminated,
 * may be NULL) are the files the configuration came from, checked for
 * permissions that let other users read the broker password. Returns the
 * exit status: 0 after a clean stop, 2 for a configuration the daemon
 * cannot work with, 1 for a fatal runtime error. */
int daemon_run(const Config *cfg, const char *const *config_paths);
