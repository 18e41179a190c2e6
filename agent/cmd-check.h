/* `muranoagent check PLAN...`: judge plan files as the agent would. */
#pragma once

#include "plan/plan.h"

/* Print, for each plan in order, one line on stdout: "ok", or the error
 * result document the agent would publish for it. A human-readable line per
 * failing plan goes to stderr. Returns the exit status: 0 when every plan is
 * valid, 1 otherwise. */
int cmd_check(char *const *paths, int n, const PlanLimits *lim);
