/* libyaml, loaded on first use: see yaml-lazy.h. */
#include "util/yaml-lazy.h"

#include "util/macro.h"

#define YAML_LAZY_NAME(m, sym) #sym,
static const char *const symbols[] = {YAML_LAZY_FUNCTIONS(YAML_LAZY_NAME)};
#undef YAML_LAZY_NAME

_Static_assert(sizeof(yaml_lazy.f) == sizeof(yaml_lazy.slots), "one slot per function");
_Static_assert(ELEMENTSOF(symbols) == ELEMENTSOF(yaml_lazy.slots), "one name per slot");

union yaml_lazy_table yaml_lazy;
LazyLib yaml_lazy_lib =
        LAZYLIB_INIT("libyaml-0.so.2", symbols, yaml_lazy.slots, ELEMENTSOF(symbols));
