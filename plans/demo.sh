#!/bin/bash
# The main job end to end, from a fresh clone on Debian 12 (README, command 1):
# installs what is missing, builds, starts a throwaway RabbitMQ on 127.0.0.1
# (its own data directory and port), starts the agent, sends example plans
# the way the Murano engine does, prints their results, and stops
# everything it started.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD

packaging/build-deps.sh
[ -d build ] || meson setup build >/dev/null
ninja -C build >/dev/null

agent=$top/build/agent/muranoagent
send=$top/build/agent/muranoagent-send
work=$(mktemp -d /tmp/muranoagent-demo.XXXXXX)
agent_pid=""

# shellcheck disable=SC2317 # run by the trap
cleanup() {
    if [ -n "$agent_pid" ] && kill -0 "$agent_pid" 2>/dev/null; then
        kill -TERM "$agent_pid"
        wait "$agent_pid" 2>/dev/null || true
    fi
    tests/broker.sh stop "$work/broker" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

echo "== starting a throwaway RabbitMQ on 127.0.0.1"
tests/broker.sh start "$work/broker" | tail -n 1
# shellcheck disable=SC1091
. "$work/broker/env"

queue="e$(printf '%032x' $$)-h$(printf '%032x' $RANDOM)"
results="-execution-results-demo$$"
cat >"$work/agent.conf" <<CONF
# What Murano's cloud-init writes into the VM (Agent-v2.template), for this demo.
[DEFAULT]
storage = $work/storage
log_file = $work/agent.log

[rabbitmq]
host = 127.0.0.1
port = $BROKER_PORT
login = guest
password = guest
virtual_host = /
input_queue = $queue
result_routing_key = $results

[agent]
# Murano's engine declares the queue before its first plan; standing alone,
# the agent declares it itself, with the engine's arguments.
declare_queue = true
CONF
chmod 600 "$work/agent.conf"

echo "== starting the agent: $agent --config-file $work/agent.conf"
"$agent" --config-file "$work/agent.conf" &
agent_pid=$!

status=0
for plan in plans/examples/telnet.yaml plans/examples/runcommand.yaml; do
    echo
    echo "== sending $plan"
    if ! "$send" --port "$BROKER_PORT" --queue "$queue" --results-queue "$results" \
        --timeout 60 --raw "$plan"; then
        status=1
    fi
    echo
done

echo
echo "== agent log"
sed 's/^/  /' "$work/agent.log"
echo "== stopping the agent and the broker"
exit $status
