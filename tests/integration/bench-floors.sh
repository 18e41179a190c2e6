#!/bin/bash
# bench-daemon's floors (docs/benchmarks.md): a short run of the bench with
# the durable floor, the contained floor and one agent succeeds, every
# result checked by the bench, and prints the contained floor's column and
# the split of the agent's cost. The contained floor ran every script as the
# agent does, in a cgroup (its runner's log entries say so), and it refuses
# to go on when a script cannot be contained: run without the rights to
# make a cgroup, it stops at its first message and publishes nothing.
# shellcheck source=tests/integration/common.sh
. "$(dirname "$0")/common.sh"

BENCH_DAEMON=${BENCH_DAEMON:-$(dirname "$MURANOAGENT")/../bench/bench-daemon}
CONTAINED=$(cd "$(dirname "$BENCH_DAEMON")" && pwd)/bench-daemon-contained
HELPER=$(dirname "$MURANOAGENT")/sandbox/muranoagent-sandbox
# shellcheck disable=SC2317 # called through wait_for
consuming() { [ "$(amqp count "$q" | cut -d' ' -f2)" = 1 ]; }
if [ ! -x "$BENCH_DAEMON" ] || [ ! -x "$CONTAINED" ]; then
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
timeout 300 "$BENCH_DAEMON" --port "$BROKER_PORT" --only bkd --runs 4 --big 1 --burst 10 \
    --bursts 1 --starts 1 --dir "$T" --keep >"$out" 2>"$T/bench.err"
rc=$?
same "a short bench run with both floors succeeds" 0 "$rc"
[ "$rc" = 0 ] || { note <"$T/bench.err"; tail -20 "$T"/bench-daemon.*/k/log 2>/dev/null | note; }
check "the round trips have the contained floor's row, against the floor" \
    grep -Eq '^contained floor +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+x' "$out"
check "the agent's round trips are against both floors" \
    grep -Eq '^agent \(disk\) +([0-9.]+ +){4}[0-9.]+x +[0-9.]+x' "$out"
check "the bench splits the agent's cost" grep -q "where the agent's cost goes" "$out"
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
