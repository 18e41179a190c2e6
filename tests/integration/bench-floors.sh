#!/bin/bash
# bench-daemon's floors (docs/benchmarks.md): a short run of the bench with
# the durable floor, the contained floor, the compatible floor and one agent
# succeeds, every result checked by the bench, and prints the floors' ratio
# columns and the split of the agent's cost. The contained floors ran every
# script as the agent does, in a cgroup (their runner's log entries say so),
# and the contained floor refuses to go on when a script cannot be
# contained: run without the rights to make a cgroup, it stops at its first
# message and publishes nothing. The compatible floor runs a plan's own
# script from its files, laid out as the reference lays them out, removes
# them, and answers with every field of the reference's result.
# shellcheck source=tests/integration/common.sh
. "$(dirname "$0")/common.sh"

BENCH_DAEMON=${BENCH_DAEMON:-$(dirname "$MURANOAGENT")/../bench/bench-daemon}
CONTAINED=$(cd "$(dirname "$BENCH_DAEMON")" && pwd)/bench-daemon-contained
COMPATIBLE=$(dirname "$CONTAINED")/bench-daemon-compatible
HELPER=$(dirname "$MURANOAGENT")/sandbox/muranoagent-sandbox
# shellcheck disable=SC2317 # called through wait_for
consuming() { [ "$(amqp count "$q" | cut -d' ' -f2)" = 1 ]; }
if [ ! -x "$BENCH_DAEMON" ] || [ ! -x "$CONTAINED" ] || [ ! -x "$COMPATIBLE" ]; then
    bail "bench-daemon is not built"
fi
if [ "$(id -u)" != 0 ]; then
    echo "1..0 # SKIP the floors' scripts need a cgroup, so root"
    exit 0
fi

# The consumers' CPU accounting cgroups (named as their plan queues).
bench_cgroups() { find /sys/fs/cgroup -maxdepth 3 -type d -name 'bench-daemon-*' | sort; }
cgroups_before=$(bench_cgroups)
out=$T/bench.out
timeout 300 "$BENCH_DAEMON" --port "$BROKER_PORT" --only bkpd --runs 4 --big 1 --burst 10 \
    --bursts 1 --starts 1 --dir "$T" --keep >"$out" 2>"$T/bench.err"
rc=$?
same "a short bench run with the three floors succeeds" 0 "$rc"
[ "$rc" = 0 ] || {
    note <"$T/bench.err"
    tail -20 "$T"/bench-daemon.*/[kp]/log 2>/dev/null | note
}
check "the round trips have the contained floor's row, against the floor" \
    grep -Eq '^contained floor +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+x *[0-9.]+$' "$out"
check "and the compatible floor's, against the other two" \
    grep -Eq '^compatible floor +([0-9.]+ +){4}[0-9.]+x +[0-9.]+x *[0-9.]+$' "$out"
check "the agent's round trips are against the three floors" \
    grep -Eq '^agent \(disk\) +([0-9.]+ +){4}[0-9.]+x +[0-9.]+x +[0-9.]+x +[0-9.]+$' "$out"
check "the bench splits the agent's cost in three" \
    grep -Eq '^ +floor +contained +compatible +agent +contain +files +rest +shares$' "$out"
check "and judges the targets against each floor" \
    test "$(grep -Ec '^targets \(issue 17\), per agent, against the (durable|contained|compatible) floor:$' "$out")" = 3
# Each consumer's CPU from a cgroup of its own, removed at the end
# (docs/benchmarks.md, "How CPU is measured").
check "the CPU figures are the consumers' own cgroups'" \
    grep -Eq "^CPU: each consumer's own cgroup \((cpuacct.usage|cpu.stat usage_usec)\)" "$out"
same "no cgroup of the bench's is left" "$cgroups_before" "$(bench_cgroups)"
klog=$(echo "$T"/bench-daemon.*/k/log)
# 5 warm-up and 4 measured round trips, 1 + 1 of 2 MiB, 10 in the burst.
check "each of the contained floor's 21 scripts ran in a cgroup" \
    test "$(grep -Ec 'script (echo|sha).sh: sandbox: .*cgroups=[1-9]' "$klog")" = 21
same "each of them ended with exit code 0" 21 \
    "$(grep -Ec 'script (echo|sha).sh finished: exit code 0$' "$klog")"
plog=$(echo "$T"/bench-daemon.*/p/log)
check "so did each of the compatible floor's 21" \
    test "$(grep -Ec 'script (echo|sha).sh: sandbox: .*cgroups=[1-9]' "$plog")" = 21
same "each of them ended with exit code 0" 21 \
    "$(grep -Ec 'script (echo|sha).sh finished: exit code 0$' "$plog")"
same "the compatible floor removed every plan's files" "" \
    "$(find "$T"/bench-daemon.*/p/files -mindepth 1 2>&1)"

# The compatible floor alone: the plan's script runs in its own folder,
# where its file is a link to the file in the plan's cache dir, and the
# result has the reference's fields.
queues compatible
mkdir "$T/compatible"
# shellcheck disable=SC2016 # the script's own expansions
script_plan "$T/layout-1.json" layout-1 'echo "$(pwd) $(readlink run.sh) $(head -c 4 ../f1)"'
(cd "$T/compatible" && exec timeout 120 env MURANOAGENT_SANDBOX="$(realpath "$HELPER")" \
    "$COMPATIBLE" "$BROKER_PORT" "$q" "$rq" \
    >"$T/compatible.out" 2>&1) &
pid=$!
EXTRA_PIDS+=("$pid")
wait_for 30 consuming || diag "the compatible floor did not consume"
same "the compatible floor answers the plan" 1 "$(answer compatible-results "$T/layout-1.json")"
cache=$T/compatible/files/layout-1
same "its script ran from its folder, through the link to its file" \
    "layout-1	0	\"$cache/run $cache/f1 echo\"" \
    "$(results_table "$T/compatible-results" | cut -f1,2,4)"
check "the result has every field of the reference's" python3 -c '
import json, re, sys
r = json.load(open(sys.argv[1]))
assert sorted(r) == sorted(["FormatVersion", "ID", "SourceID", "Action", "ErrorCode", "Body",
                            "Time"]), sorted(r)
assert r["FormatVersion"] == "2.0.0" and r["Action"] == "Execution:Result", r
assert re.fullmatch("[0-9a-f]{32}", r["ID"]) and re.fullmatch(
    r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}", r["Time"]), r' "$T"/compatible-results/*.body
same "and nothing of the plan is left" "" "$(find "$T/compatible/files" -mindepth 1 2>&1)"
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null

# Without the rights to make a cgroup (nor an audit session): not contained.
queues nobody
mkdir "$T/nobody"
printf '#!/bin/sh\necho hello\n' >"$T/nobody/echo.sh"
echo '{}' >"$T/plan.json"
# Copies of the programs: the build tree may be where nobody cannot go
# (a checkout in /root, mode 0700).
mkdir "$T/nobody/bin"
cp "$CONTAINED" "$HELPER" "$T/nobody/bin/"
chown -R nobody "$T/nobody"
(cd "$T/nobody" && exec timeout 60 setpriv --reuid=nobody --regid=nogroup --clear-groups \
    env MURANOAGENT_SANDBOX="$T/nobody/bin/muranoagent-sandbox" \
    "$T/nobody/bin/bench-daemon-contained" "$BROKER_PORT" "$q" "$rq" \
    >"$T/nobody.out" 2>&1) &
pid=$!
EXTRA_PIDS+=("$pid")
wait_for 30 consuming || diag "the contained floor did not consume"
amqp publish --message-id echo-n-1 "$q" "$T/plan.json" >/dev/null
wait "$pid"
same "the contained floor stops when its script cannot be contained" 1 "$?"
check "it says why" grep -q "echo-n-1: script echo.sh was not contained as the agent contains it: " \
    "$T/nobody.out"
note <"$T/nobody.out"
same "it published no result" "0 0" "$(queue_counts "$rq")"

done_testing
