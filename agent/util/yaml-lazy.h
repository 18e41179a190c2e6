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

/* Tests may set yaml_lazy_lib.library (the file name to dlopen()) before
 * the first load. */
extern LazyLib yaml_lazy_lib;

/* Load libyaml and resolve every function below, once per process:
 * lazylib_load(). */
static inline int yaml_lazy_load(void)
{
        return lazylib_load(&yaml_lazy_lib);
}

/* Why the load failed ("" before the first load, or after a success). */
static inline const char *yaml_lazy_error(void)
{
        return lazylib_error(&yaml_lazy_lib);
}

/* X(member, libyaml symbol): every libyaml function the agent calls. */
#define YAML_LAZY_FUNCTIONS(X)                                                                     \
        X(parser_initialize, yaml_parser_initialize)                                               \
        X(parser_set_input_string, yaml_parser_set_input_string)                                   \
        X(parser_parse, yaml_parser_parse)                                                         \
        X(parser_delete, yaml_parser_delete)                                                       \
        X(event_delete, yaml_event_delete)

#define YAML_LAZY_MEMBER(m, sym) __typeof__(sym) *m;
#define YAML_LAZY_ONE(m, sym)    +1
/* The functions by name, and as the slots lazylib_load() fills. */
union yaml_lazy_table {
        struct {
                YAML_LAZY_FUNCTIONS(YAML_LAZY_MEMBER)
        } f;
        void *slots[0 YAML_LAZY_FUNCTIONS(YAML_LAZY_ONE)];
};
#undef YAML_LAZY_ONE
#undef YAML_LAZY_MEMBER

extern union yaml_lazy_table yaml_lazy;

#define yaml_parser_initialize       (*yaml_lazy.f.parser_initialize)
#define yaml_parser_set_input_string (*yaml_lazy.f.parser_set_input_string)
#define yaml_parser_parse            (*yaml_lazy.f.parser_parse)
#define yaml_parser_delete           (*yaml_lazy.f.parser_delete)
#define yaml_event_delete            (*yaml_lazy.f.event_delete)
