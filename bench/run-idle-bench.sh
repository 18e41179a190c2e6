#!/bin/bash
# Idle cost of the agent: wakeups per idle minute and memory (RSS, PSS),
# for one agent or a fleet of them on one broker, beside qemu-guest-agent
# (installed with packaging/build-deps.sh when it is missing).
#
#   bench/run-idle-bench.sh [-B BUILD_DIR] [-n AGENTS] [-s SECONDS] [-k]
#                           [-p PLANS] [-w WATCHDOG_SECONDS] [-e CONFIG_LINES] [-m]
#
#   -n  agents started, each with its own storage and queues (default 1)
#   -s  seconds of idleness measured (default 60)
#   -k  configure engine_key (tests/data/signature) and sign the plans
#   -p  plans each agent runs before the idle period (default 0; at most 10
#       agents get them, one after the other, through muranoagent-send)
#   -w  run the agents under a systemd-style watchdog of that many seconds
#       ($WATCHDOG_USEC, $NOTIFY_SOCKET pointing at a datagram socket that
#       nobody reads)
#   -e  lines appended to each agent's configuration (e.g. "[agent]\nheartbeat = 30")
#   -m  also print the first agent's Rss and Pss per mapped object
#       (/proc/PID/smaps: the program, each library, anonymous memory)
#
# It starts a throwaway broker (tests/broker.sh) on 127.0.0.1, the agents
# (muranoagent of BUILD_DIR), waits until every one consumes and has been
# idle 5 s, then counts over SECONDS, per process, the voluntary context
# switches of all its threads (/proc/PID/task/*/status): a thread that was
# woken goes back to sleep with one, so this is the number of wakeups,
# whatever woke it (a timer, the socket, another thread); a thread that is
# preempted on a busy machine does not count twice. Memory
# is VmRSS and Pss (/proc/PID/smaps_rollup) at the end. Every process it
# started is stopped by its PID. Run it as root, as the agent runs.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
agents=1 seconds=60 key=false plans=0 watchdog=0 extra="" objects=false
while getopts B:n:s:kp:w:e:m opt; do
    case $opt in
    B) build=$(cd "$OPTARG" && pwd) ;;
    n) agents=$OPTARG ;;
    s) seconds=$OPTARG ;;
    k) key=true ;;
    p) plans=$OPTARG ;;
    w) watchdog=$OPTARG ;;
    e) extra=$OPTARG ;;
    m) objects=true ;;
    *) sed -n '2,20s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
    esac
done
agent=$build/agent/muranoagent
send=$build/agent/muranoagent-send
[ -x "$agent" ] || { echo "run-idle-bench: $agent is not built" >&2; exit 2; }
# The agent's yardstick, installed when it is missing (Debian's package; on
# a machine with systemd its unit starts only where a virtio port exists).
"$root/packaging/build-deps.sh" qemu-guest-agent ||
    echo "run-idle-bench: qemu-guest-agent could not be installed; measuring without it" >&2

work=$(mktemp -d /var/tmp/bench-idle.XXXXXX)
broker_dir=$work/broker
pids=()
qga_pid=""
cleanup() {
    local p
    for p in "${pids[@]}" $qga_pid; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}" $qga_pid; do wait "$p" 2>/dev/null || true; done
    "$root/tests/broker.sh" stop "$broker_dir" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
"$root/tests/broker.sh" start "$broker_dir" >/dev/null
# shellcheck disable=SC1091
. "$broker_dir/env"

# The sum of the voluntary context switches of every thread of PID.
switches() {
    cat /proc/"$1"/task/*/status 2>/dev/null |
        awk '/^voluntary_ctxt_switches/ { n += $2 } END { print n + 0 }'
}
pss() { awk '/^Pss:/ { print $2 }' /proc/"$1"/smaps_rollup; }
rss() { awk '/^VmRSS:/ { print $2 }' /proc/"$1"/status; }

key_text=""
if $key; then
    key_text="engine_key = $(sed 's/^/  /' "$root/tests/data/signature/engine-pkcs1.pem")"
fi
mkdir "$work/scripts"
printf '#!/bin/sh\necho hello\n' >"$work/scripts/echo.sh"
cat >"$work/plan.yaml" <<'EOF'
FormatVersion: 2.1.0
Version: 1.0.0
Name: idle-bench
Body: return echo().stdout
Scripts:
  echo:
    Type: Application
    Version: 1.0.0
    EntryPoint: echo.sh
    Files: []
    Options: {captureStdout: true, captureStderr: true, verifyExitcode: true}
EOF

for i in $(seq 1 "$agents"); do
    d=$work/agent-$i
    mkdir -p "$d"
    printf '[DEFAULT]\nstorage = %s/storage\n%s\n[rabbitmq]\nhost = 127.0.0.1\nport = %s\ninput_queue = idle-%s\nresult_routing_key = idle-%s-results\n[agent]\ndeclare_queue = true\n%b\n' \
        "$d" "$key_text" "$BROKER_PORT" "$i" "$i" "$extra" >"$d/agent.conf"
    chmod 600 "$d/agent.conf"
    if [ "$watchdog" != 0 ]; then
        WATCHDOG_USEC=$((watchdog * 1000000)) NOTIFY_SOCKET=$work/notify \
            "$agent" --config-file "$d/agent.conf" >"$d/log" 2>&1 &
    else
        "$agent" --config-file "$d/agent.conf" >"$d/log" 2>&1 &
    fi
    pids+=($!)
done
for i in $(seq 1 "$agents"); do
    for _ in $(seq 1 600); do
        grep -q "consuming '" "$work/agent-$i/log" && break
        sleep 0.1
    done
    grep -q "consuming '" "$work/agent-$i/log" ||
        { echo "run-idle-bench: agent $i does not consume:" >&2; tail "$work/agent-$i/log" >&2; exit 1; }
done
if [ "$plans" -gt 0 ]; then
    sign=()
    $key && sign=(--sign-key "$root/tests/data/signature/engine.key")
    for i in $(seq 1 $((agents < 10 ? agents : 10))); do
        for _ in $(seq 1 "$plans"); do
            "$send" --port "$BROKER_PORT" --queue "idle-$i" --results-queue "idle-$i-results" \
                --timeout 60 "${sign[@]}" "$work/plan.yaml" >/dev/null
        done
    done
fi

if command -v qemu-ga >/dev/null; then
    qemu-ga -m unix-listen -p "$work/qga.sock" -t "$work" -f "$work/qga.pid" &
    qga_pid=$!
fi
sleep 5

declare -A before
for p in "${pids[@]}" $qga_pid; do before[$p]=$(switches "$p"); done
sleep "$seconds"
total_w=0 total_pss=0 total_rss=0 max_w=0
for p in "${pids[@]}"; do
    w=$(($(switches "$p") - before[$p]))
    total_w=$((total_w + w))
    [ "$w" -gt "$max_w" ] && max_w=$w
    total_pss=$((total_pss + $(pss "$p")))
    total_rss=$((total_rss + $(rss "$p")))
done

echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC'); $(nproc) CPUs; load average" \
    "$(cut -d' ' -f1-3 /proc/loadavg); $agents agent(s); engine_key $key;" \
    "$plans plan(s) each before; watchdog ${watchdog} s; ${seconds} s idle"
printf '%-22s %8s %14s %14s %10s %10s\n' program processes "wakeups/min" "max wakeups/min" \
    "RSS KiB" "PSS KiB"
awk -v n="$agents" -v w="$total_w" -v mw="$max_w" -v s="$seconds" -v r="$total_rss" \
    -v p="$total_pss" 'BEGIN { printf "%-22s %8d %14.2f %14.2f %10d %10d\n",
        "muranoagent (mean)", n, w / n * 60 / s, mw * 60 / s, r / n, p / n }'
if [ -n "$qga_pid" ]; then
    w=$(($(switches "$qga_pid") - before[$qga_pid]))
    awk -v w="$w" -v s="$seconds" -v r="$(rss "$qga_pid")" -v p="$(pss "$qga_pid")" \
        'BEGIN { printf "%-22s %8d %14.2f %14.2f %10d %10d\n", "qemu-ga", 1, w * 60 / s,
                 w * 60 / s, r, p }'
fi
if $objects; then
    # smaps: a header line per mapping (its path is the 6th field, none for
    # anonymous memory), then its counters.
    awk '/^[0-9a-f]+-[0-9a-f]+ / { o = NF >= 6 ? $6 : "[anon]"; sub(".*/", "", o); next }
         $1 == "Rss:" { r[o] += $2 } $1 == "Pss:" { p[o] += $2 }
         END { for (o in r) if (r[o]) printf "  %-28s %10d %10d\n", o, r[o], p[o] }' \
        /proc/"${pids[0]}"/smaps | sort -k2 -rn
fi
