/* libyaml, loaded on first use: see yaml-lazy.h. */
#include "util/yaml-lazy.h"

LAZYLIB_DEFINE(yaml, YAML_LAZY_FUNCTIONS, "libyaml-0.so.2");
