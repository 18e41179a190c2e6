#!/bin/bash
# Compatibility evidence, in TAP: `muranoagent run` gives the result documents
# the Python murano-agent gives, byte for byte, with only the fresh ID and Time
# (and the storage directory, where a message names a path) masked.
#
# The plans are tests/data/compat/*.{yaml,json} and plans/examples/*; the
# reference's answers were recorded by tests/data/compat/tools/generate.sh,
# which runs the real Python agent (this test needs no Python). A plan with a
# P.why file is a documented deliberate difference: P.reference holds what
# Python gave, P.expected what muranoagent gives, and the two must differ.
# See docs/compatibility-evidence.md.
#
# Every plan also must leave its storage directory empty (files removed) and
# no process behind. MURANOAGENT and TEST_DATA_DIR come from meson.
set -u
agent=${MURANOAGENT:?}
data=${TEST_DATA_DIR:?}
compat=$data/compat
examples=$data/../../plans/examples
conf=$compat/agent.conf
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/tap.sh"

# The fresh result ID (right after FormatVersion), the Time (last but for
# ReplyTo) and the storage directory become <ID>, <TIME> and <STORAGE>, as
# generate.sh writes them.
normalise() { # normalise STORAGE
    sed -E "s|$1/|<STORAGE>/|g" |
        sed -E 's/^(\{"FormatVersion": "2\.0\.0", "ID": )"[0-9a-f]{32}"/\1"<ID>"/;
            s/"Time": "[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{6})?"(, "ReplyTo": [^}]*)?\}$/"Time": "<TIME>"\2}/'
}

# PIDs of processes whose working directory or command line is inside DIR,
# in one pass over /proc each (other tests run beside this one). grep reads
# its pattern from a file, so that its own command line does not match.
procs_in() { # procs_in DIR
    printf '%s/\n' "$1" >"$tmp/pattern"
    {
        find /proc -mindepth 2 -maxdepth 2 -name cwd \( -lname "$1" -o -lname "$1/*" \) \
            -printf '%h\n' 2>/dev/null
        grep -lsF -f "$tmp/pattern" /proc/[0-9]*/cmdline 2>/dev/null | sed 's|/cmdline$||'
    } | sed 's|^/proc/||' | sort -u
}

# run_plan PLAN EXPECTED-BASE: EXPECTED-BASE.expected is what must come out.
run_plan() {
    local plan=$1 base=$2 name storage st code want left pids
    name=$(basename "$plan")
    storage=$(mktemp -d "$tmp/storage.XXXXXX")
    timeout 60 "$agent" --config-file "$conf" run "$plan" --storage "$storage" \
        >"$tmp/out" 2>"$tmp/err" </dev/null
    st=$?

    normalise "$storage" <"$tmp/out" >"$tmp/got"
    if cmp -s "$base.expected" "$tmp/got"; then
        ok "$name: the result document is $(basename "$base").expected"
    else
        not_ok "$name: the result document is $(basename "$base").expected"
        echo "# want: $(cat "$base.expected")"
        echo "#  got: $(cat "$tmp/got")"
        sed 's/^/# stderr: /' "$tmp/err" | tail -n 5
    fi

    code=$(sed -nE 's/.*"ErrorCode": ([0-9]+), "Body".*/\1/p' "$tmp/got" | head -n 1)
    want=1
    [ "$code" = 0 ] && want=0
    # A sanitizer build (-Db_sanitize=address,undefined) reports on stderr;
    # UBSan goes on after its report, so the exit status alone would miss it.
    if [ "$st" -eq "$want" ] &&
        ! grep -qE 'runtime error:|ERROR: (Address|Leak)Sanitizer' "$tmp/err"; then
        ok "$name: exit status $st for ErrorCode $code, no sanitizer report"
    else
        not_ok "$name: exit status $st for ErrorCode $code (want $want), no sanitizer report"
        grep -E -A3 'runtime error:|Sanitizer' "$tmp/err" | head -n 8 | sed 's/^/# /'
    fi

    # The reference removes files/<ID> after every plan; the files directory
    # itself may stay.
    mapfile -t left < <(find "$storage" -mindepth 1 ! -path "$storage/files" | head -n 5)
    if [ "${#left[@]}" -eq 0 ]; then
        ok "$name: storage is empty afterwards"
    else
        not_ok "$name: storage is empty afterwards"
        printf '# left: %s\n' "${left[@]}"
    fi

    mapfile -t pids < <(procs_in "$storage")
    if [ "${#pids[@]}" -eq 0 ]; then
        ok "$name: no process left behind"
    elif ! grep -qE 'cgroups=[1-9]' "$tmp/err"; then
        skip "$name: no process left behind" "no cgroup here to hold the script's tree"
    else
        not_ok "$name: no process left behind"
        ps -o pid=,args= -p "$(IFS=,; echo "${pids[*]}")" | sed 's/^/# left: /'
    fi
    # Whatever was left is ours to end.
    [ "${#pids[@]}" -eq 0 ] || kill -9 "${pids[@]}" 2>/dev/null
    rm -rf "$storage"
}

[ -x "$agent" ] || { echo "Bail out! no muranoagent at $agent"; exit 1; }
[ -r "$conf" ] || { echo "Bail out! no $conf"; exit 1; }

shopt -s nullglob
plans=("$compat"/*.yaml "$compat"/*.json)
[ "${#plans[@]}" -ge 30 ] || { echo "Bail out! only ${#plans[@]} plans in $compat"; exit 1; }

for plan in "${plans[@]}"; do
    base=${plan%.*}
    if [ ! -e "$base.expected" ]; then
        not_ok "$(basename "$plan"): has an .expected file"
        continue
    fi
    if [ -e "$base.why" ]; then
        if [ -s "$base.reference" ] && ! cmp -s "$base.reference" "$base.expected"; then
            ok "$(basename "$plan"): deliberate difference, recorded with the reference's answer"
        else
            not_ok "$(basename "$plan"): deliberate difference, recorded with the reference's answer"
        fi
    elif [ -e "$base.reference" ]; then
        not_ok "$(basename "$plan"): a .reference file without a .why"
    fi
    run_plan "$plan" "$base"
done

# Every deliberate difference is listed in the evidence document.
doc=$data/../../docs/compatibility-evidence.md
for why in "$compat"/*.why; do
    name=$(basename "${why%.why}")
    if grep -qF "| \`$name\` |" "$doc"; then
        ok "$name: listed in docs/compatibility-evidence.md"
    else
        not_ok "$name: listed in docs/compatibility-evidence.md"
    fi
done

# The example plans are read where they live, so that a changed example
# without fresh evidence fails here.
examples_seen=0
for plan in "$examples"/*.yaml "$examples"/*.json; do
    examples_seen=$((examples_seen + 1))
    base=$compat/examples/$(basename "${plan%.*}")
    if [ ! -e "$base.expected" ]; then
        not_ok "examples/$(basename "$plan"): has an .expected file"
        continue
    fi
    run_plan "$plan" "$base"
done
if [ "$examples_seen" -ge 5 ]; then
    ok "every example plan was run ($examples_seen)"
else
    not_ok "every example plan was run ($examples_seen)"
fi
# putfile.yaml moves its file to this fixed place.
rm -f /tmp/muranoagent-putfile-example.txt

tap_done
