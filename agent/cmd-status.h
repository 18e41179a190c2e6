/* muranoagent status: ask the running agent, through its control socket
 * (control/control.h), what it is doing, and print the answer for people
 * or, with --json, as the JSON document docs/operations.md describes. */
#pragma once

#include "config/config.h"

/* args are the words after "status". Returns the exit status: 0 when the
 * agent answered, 1 when it could not be asked or refused, 2 for a bad
 * command line. */
int cmd_status(const Config *cfg, char **args, int n_args);
