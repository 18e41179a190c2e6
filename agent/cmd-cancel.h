/* muranoagent cancel PLAN_ID: ask the running agent, through its control
 * socket (control/control.h), to cancel a plan, and print what it did
 * (docs/operations.md, "Cancel a plan"). */
#pragma once

#include "config/config.h"

/* How long the command waits for the agent's answer: a queued plan is
 * answered on the disk first. */
#define CMD_CANCEL_TIMEOUT_MS 30000

/* args are the words after "cancel". Returns the exit status: 0 when the
 * plan was cancelled (it is being stopped, or was answered before it ran),
 * 1 when nothing changed (no such plan, or it has its result) or the agent
 * could not be asked, 2 for a bad command line. */
int cmd_cancel(const Config *cfg, char **args, int n_args);
