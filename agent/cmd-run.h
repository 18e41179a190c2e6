/* `muranoagent run PLAN [--storage DIR]`: run one plan file locally with the
 * full executor and sandbox, and print its result document. */
#pragma once

#include "config/config.h"

/* args are the words after "run". Returns the exit status: 0 when the
 * result's ErrorCode is 0, 1 for any other result, 2 for a bad command
 * line. */
int cmd_run(const Config *cfg, char *const *args, int n);
