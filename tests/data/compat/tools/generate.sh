#!/bin/bash
# Regenerate the reference's result documents for the compatibility test
# (tests/test-compat.sh), by running every plan through the real Python
# murano-agent with run-reference.py. The tests never run this.
#
# For each plan tests/data/compat/P.{yaml,json} and plans/examples/P.{yaml,json}
# (the latter kept as tests/data/compat/examples/P.*), the reference's result,
# with its fresh ID and Time replaced by <ID> and <TIME> and its storage
# directory by <STORAGE> (some messages name a path), is written to
# P.expected, or to P.reference when P.why exists: that plan is a documented
# deliberate difference, and P.expected holds muranoagent's answer, written
# by hand (docs/compatibility-evidence.md lists them).
#
# Usage: generate.sh [PLAN...]   (default: every plan)
# Needs /tmp/ref, the reference tree:
#   mkdir -p /tmp/ref && git -C /work/.mirror/openstack+murano-agent/repo archive 9ae3969 | tar -x -C /tmp/ref
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
compat=$(dirname "$here")
top=$(cd "$compat/../../.." && pwd)
ref=${REF:-/tmp/ref}

storage=$(mktemp -d /tmp/compat-ref.XXXXXX)
trap 'rm -rf "$storage"' EXIT

normalise() {
    sed -E "s|$storage/|<STORAGE>/|g" |
    sed -E 's/^(\{"FormatVersion": "2\.0\.0", "ID": )"[0-9a-f]{32}"/\1"<ID>"/;
            s/"Time": "[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{6})?"(, "ReplyTo": [^}]*)?\}$/"Time": "<TIME>"\2}/'
}

if [ $# -eq 0 ]; then
    set -- "$compat"/*.yaml "$compat"/*.json "$top"/plans/examples/*.yaml "$top"/plans/examples/*.json
fi

for plan in "$@"; do
    plan=$(cd "$(dirname "$plan")" && pwd)/$(basename "$plan")
    name=$(basename "${plan%.*}")
    case $plan in
    "$top"/plans/examples/*) out=$compat/examples/$name ;;
    *) out=$compat/$name ;;
    esac
    mkdir -p "$(dirname "$out")"
    target=$out.expected
    [ -e "$out.why" ] && target=$out.reference
    rm -rf "$storage" && mkdir "$storage"
    /usr/bin/python3 "$here/run-reference.py" --ref "$ref" --storage "$storage" "$plan" \
        2>/dev/null </dev/null |
        normalise >"$target.tmp"
    mv "$target.tmp" "$target"
    # The reference leaves a script's background processes running
    # (script-orphan.yaml): end those whose directory was in its storage.
    for cwd in /proc/[0-9]*/cwd; do
        case $(readlink "$cwd" 2>/dev/null) in
        "$storage"/*) pid=${cwd#/proc/}; kill "${pid%/cwd}" 2>/dev/null || true ;;
        esac
    done
    echo "$(basename "$target"): $(head -c 160 "$target")"
done
