#!/bin/bash
# The Body interpreter's layers point one way (docs/body.md): syntax/
# includes none of values/, eval/ and library/; values/ includes none of
# syntax/, eval/ and library/; eval/ does not include library/; library/
# includes neither syntax/ nor eval/. Each #include "body/<layer>/..." of a
# file under agent/body/<layer>/ is checked against that table.
#
#     tests/test-body-layers.sh [SOURCE_ROOT]
set -u
# shellcheck disable=SC1091
. "$(dirname "$0")/tap.sh"
root=${1:-$(dirname "$0")/..}
body=$root/agent/body

# forbidden LAYER: the layers LAYER must not include.
forbidden() {
    case $1 in
    syntax) echo "values eval library" ;;
    values) echo "syntax eval library" ;;
    eval) echo "library" ;;
    library) echo "syntax eval" ;;
    esac
}

for layer in syntax values eval library; do
    [ -d "$body/$layer" ] || {
        not_ok "agent/body/$layer exists"
        continue
    }
    for bad in $(forbidden "$layer"); do
        hits=$(grep -rn --include='*.[ch]' "^#include \"body/$bad/" "$body/$layer")
        if [ -z "$hits" ]; then
            ok "$layer/ includes nothing from $bad/"
        else
            not_ok "$layer/ includes nothing from $bad/"
            note <<<"${hits//$body\//}"
        fi
    done
done
tap_done
