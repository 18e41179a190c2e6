/* libyaml, loaded on first use.
 *
 * Only YAML plans read from a file need libyaml (plan_parse_file(), for
 * `muranoagent check` and `run` and muranoagent-send); the daemon's plans
 * come as JSON. A linked libyaml costs every idle agent about 0.1 MiB of
 * resident memory that no other program shares (docs/footprint.md), so the
 * agent does not link it (util/lazylib.h): this header replaces the few
 * yaml_* functions the plan parser calls with calls through a table that
 * yaml_lazy_load() fills once from "libyaml-0.so.2". yaml.h is only needed
 * at build time.
 *
 * The rule: plan_parse_yaml() calls yaml_lazy_load() before any yaml_*
 * function and rejects the plan with the loader's reason when it returns
 * -1. libyaml's own memory rules are unchanged (plan/plan-yaml.c). */
#pragma once

#include <yaml.h>

#include "util/lazylib.h"

/* X(member, libyaml symbol): every libyaml function the agent calls. */
#define YAML_LAZY_FUNCTIONS(X)                                                                     \
        X(parser_initialize, yaml_parser_initialize)                                               \
        X(parser_set_input_string, yaml_parser_set_input_string)                                   \
        X(parser_parse, yaml_parser_parse)                                                         \
        X(parser_delete, yaml_parser_delete)                                                       \
        X(event_delete, yaml_event_delete)

/* yaml_lazy_lib, yaml_lazy, yaml_lazy_load(), yaml_lazy_error(): see
 * util/lazylib.h. */
LAZYLIB_DECLARE(yaml, YAML_LAZY_FUNCTIONS)

#define yaml_parser_initialize       (*yaml_lazy.f.parser_initialize)
#define yaml_parser_set_input_string (*yaml_lazy.f.parser_set_input_string)
#define yaml_parser_parse            (*yaml_lazy.f.parser_parse)
#define yaml_parser_delete           (*yaml_lazy.f.parser_delete)
#define yaml_event_delete            (*yaml_lazy.f.event_delete)
