#!/bin/bash
# Command-line tests of the muranoagent binary, in TAP. MURANOAGENT and
# TEST_DATA_DIR come from meson (tests/meson.build).
set -u
agent=${MURANOAGENT:?}
data=${TEST_DATA_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() { # check DESCRIPTION COMMAND...: passes when the command succeeds
    local d=$1
    shift
    if "$@"; then ok "$d"; else not_ok "$d"; fi
}
# Run the agent with a time limit: nothing may hang.
run() { timeout 20 "$agent" "$@"; }
# Replace the fresh ID and Time of result documents so they can be compared.
normalise() { sed -E 's/"ID": "[0-9a-f]{32}"/"ID": "<ID>"/; s/"Time": "[0-9: .-]+"/"Time": "<TIME>"/'; }

# --help and --version
run --help >"$tmp/out"; st=$?
check "--help exits 0" test $st -eq 0
check "--help shows check" grep -q "check PLAN" "$tmp/out"
run --version >"$tmp/out"; st=$?
check "--version exits 0" test $st -eq 0
check "--version prints the name" grep -qE '^muranoagent [0-9]+\.[0-9]+\.[0-9]+' "$tmp/out"
run --no-such-option >/dev/null 2>&1; st=$?
check "unknown option exits 2" test $st -eq 2
run frobnicate >/dev/null 2>&1; st=$?
check "unknown command exits 2" test $st -eq 2
run check >/dev/null 2>&1; st=$?
check "check without plans exits 2" test $st -eq 2

# Valid plans: one "ok" line each, exit 0.
plans=("$data"/../../plans/examples/*.yaml "$data"/../../plans/examples/*.json)
run check "${plans[@]}" >"$tmp/out" 2>"$tmp/err"; st=$?
check "example plans are valid (exit 0)" test $st -eq 0
check "one ok line per example plan" test "$(grep -cx ok "$tmp/out")" -eq "${#plans[@]}"

# An invalid plan between two valid ones: line order follows the arguments.
cat >"$tmp/bad.json" <<'PLAN'
{"FormatVersion": "2.0.0", "ID": "p1", "Body": "return", "Scripts": {"s": {"Type": "Chef", "EntryPoint": "a::b"}}, "Files": {}}
PLAN
run check "${plans[0]}" "$tmp/bad.json" "${plans[0]}" >"$tmp/out" 2>"$tmp/err"; st=$?
check "an invalid plan makes check exit 1" test $st -eq 1
check "lines follow the argument order" test "$(sed -n '1p;3p' "$tmp/out" | tr '\n' ' ')" = "ok ok "
sed -n 2p "$tmp/out" | normalise >"$tmp/line"
printf '%s\n' '{"FormatVersion": "2.0.0", "ID": "<ID>", "SourceID": "p1", "Action": "Execution:Result", "ErrorCode": 2, "Body": {"Message": "Type Chef is not valid for format 2.0.0", "AdditionalInfo": null}, "Time": "<TIME>"}' >"$tmp/want"
check "the error document is the reference's, byte for byte" cmp -s "$tmp/line" "$tmp/want"
check "stderr names the failing file" grep -q "bad.json" "$tmp/err"

# Hostile input: each gives one error document and exit 1, never a crash or hang.
printf '{"FormatVersion": "2.0.0", "Body": "ret' >"$tmp/truncated.json"
head -c 4096 /dev/urandom >"$tmp/garbage.json"
printf '{"a": "\xff\xfe"}' >"$tmp/badutf8.json"
{ printf '{"x": '; head -c 200000 /dev/zero | tr '\0' '['; } >"$tmp/deep.json"
{ printf 'x:\n'; for i in $(seq 1 300); do printf '%*s- \n' "$((i * 2))" ''; done; } >"$tmp/deep.yaml"
printf '[1, 2, 3]\n' >"$tmp/array.json"
printf -- '- just\n- a list\n' >"$tmp/list.yaml"
printf '{"Body": 1, "Body": 2}' >"$tmp/dupkey.json"
: >"$tmp/empty.json"
for f in truncated.json garbage.json badutf8.json deep.json deep.yaml array.json list.yaml dupkey.json empty.json; do
    run check "$tmp/$f" >"$tmp/out" 2>"$tmp/err"; st=$?
    check "$f: exit 1" test $st -eq 1
    check "$f: one error document" grep -qE '^\{"FormatVersion": "2.0.0", .*"ErrorCode": [0-9]+' "$tmp/out"
done

# Larger than the limit: refused without reading it all into memory.
head -c $((70 * 1024 * 1024)) /dev/zero | tr '\0' ' ' >"$tmp/huge.json"
run check "$tmp/huge.json" >"$tmp/out" 2>"$tmp/err"; st=$?
check "huge plan: exit 1" test $st -eq 1
check "huge plan: says it is too large" grep -q "larger than" "$tmp/out"

run check "$tmp/does-not-exist.yaml" >"$tmp/out" 2>"$tmp/err"; st=$?
check "missing plan file: exit 1" test $st -eq 1
check "missing plan file: named in the message" grep -q "does-not-exist.yaml" "$tmp/out"

echo "1..$n"
[ "$fails" -eq 0 ]
