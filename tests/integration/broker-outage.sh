#!/bin/bash
# After a long broker outage, every agent consumes again within 2 s of the
# broker's return (docs/transport.md "Reconnecting and several brokers").
# AGENTS agents, with the default reconnect_max_delay (60 s), consume from a
# private broker (tests/broker.sh down: rabbitmqctl stop_app) that stays
# away OUTAGE seconds, long enough for an exponential back-off to reach
# waits of 8 s and more. Then the broker comes back (start_app). For each
# agent: from the moment the broker is ready again (the first complete AMQP
# handshake of a client the test runs every 20 ms meanwhile) to the agent's
# "consuming" line (in milliseconds, on the same clock), under 2 s. Not from
# the "started TCP listener" line of the broker's log: a broker under load
# logs it up to 17 s before it completes a handshake, and no agent can
# consume before that. And the broker was not hammered meanwhile: at most one
# attempt per 0.4 s while it was away (the attempts' floor is 0.5 s), and
# the log says so once or twice (docs/daemon.md). A plan sent after the return is
# answered by each agent.
# Stopping the broker would disturb other tests, so this test always
# starts a broker of its own.
# shellcheck disable=SC2016
unset BROKER_DIR BROKER_PORT BROKER_NODE
# shellcheck source=tests/integration/common.sh
. "$(dirname "$0")/common.sh"

AGENTS=${OUTAGE_AGENTS:-5}
OUTAGE=${OUTAGE_SECONDS:-15}
names=()
for ((k = 1; k <= AGENTS; k++)); do
    names+=("o$k")
done
for name in "${names[@]}"; do
    agent_conf "$name"
    # The default, not common.sh's 2 s: the outage must be long for the
    # back-off too.
    sed -i 's/^reconnect_max_delay = .*/reconnect_max_delay = 60/' "$T/$name/agent.conf"
    amqp declare "$(qname "$name")" "$(qname "$name")-results" >/dev/null ||
        bail "cannot declare the queues"
    agent_start "$name"
done
for name in "${names[@]}"; do
    agent_wait_consuming "$name" || bail "agent $name did not start consuming"
done

"$BROKER_SH" down "$BROKER_DIR" 2>"$T/down.log" || bail "the broker did not stop"
t_down=$(date +%s%3N)
for name in "${names[@]}"; do
    check "$name lost its connection" wait_for 10 log_has "$name" "WARNING muranoagent connection lost:"
done
sleep "$OUTAGE"
# The first moment a client completes the handshake (and a passive declare
# of an agent's queue) with the broker: the time of the end of the first
# attempt that succeeds, so at most one attempt's length (some 20 ms) and
# the 20 ms between attempts after the broker was ready.
probe_ready() {
    local i
    for ((i = 0; i < 3000; i++)); do
        if amqp count "$1" >/dev/null 2>&1; then
            date +%s%3N
            return 0
        fi
        sleep 0.02
    done
    return 1
}
probe_ready "$(qname "${names[0]}")" >"$T/ready.ms" &
probe=$!
"$BROKER_SH" up "$BROKER_DIR" 2>"$T/up.log" || {
    kill "$probe"
    bail "the broker did not come back"
}
t_up=$(date +%s%3N)
wait "$probe" || bail "no client could complete a handshake with the broker"
t_ready=$(cat "$T/ready.ms")
diag "broker away for $(((t_up - t_down) / 1000)) s"
for name in "${names[@]}"; do
    check "$name consumes again" \
        wait_for 30 log_has "$name" "INFO muranoagent consuming '.*\(connection 2,"
done

# Milliseconds since the epoch: of the last "started TCP listener" in the
# broker's log (which gives its UTC offset), and of each agent's second
# consuming line (local time, as the agent logs). The listener's is only
# shown.
ms_of() { python3 -c 'import datetime, sys
s = sys.argv[1]
if len(s) > 26:
    t = datetime.datetime.strptime(s[:32], "%Y-%m-%d %H:%M:%S.%f%z")
else:
    t = datetime.datetime.strptime(s[:23], "%Y-%m-%d %H:%M:%S.%f").astimezone()
print(round(t.timestamp() * 1000))' "$1"; }
listener=$(grep "started TCP listener on 127.0.0.1:$BROKER_PORT" "$BROKER_DIR/log/rabbit.log" |
    tail -1)
[ -n "$listener" ] || bail "no listener line in the broker's log"
t_listen=$(ms_of "$listener")
diag "the listener started $((t_ready - t_listen)) ms before the first handshake completed, \
$((t_up - t_ready)) ms before 'broker.sh up' returned"
worst=0
for name in "${names[@]}"; do
    line=$(grep -E "INFO muranoagent consuming '.*\(connection 2," "$T/$name/log" | head -1)
    t_back=$(ms_of "$(cut -c1-23 <<<"$line")")
    gap=$((t_back - t_ready))
    ((gap > worst)) && worst=$gap
    tries=$(($(count_lines "$T/$name/log" "muranoagent cannot connect") + 1))
    away=$((t_back - t_down))
    diag "$name: consuming $gap ms after the broker was ready; $tries attempts in $away ms"
    check "$name: consuming within 2 s of the broker's return ($gap ms)" test "$gap" -lt 2000
    check "$name: no more than one attempt per 0.4 s while the broker was away" \
        test $((tries * 400)) -le "$away"
    # The same reason is a warning once a minute, debug otherwise (a
    # second reason, while the broker shuts down, may add one).
    warned=$(count_lines "$T/$name/log" "WARNING muranoagent cannot connect")
    check "$name: $warned 'cannot connect' warning(s) for $tries attempts" \
        test "$warned" -ge 1 -a "$warned" -le 2
done
diag "worst: $worst ms"

mkdir -p "$T/plans"
for name in "${names[@]}"; do
    script_plan "$T/plans/$name.json" "$name-p" '#!/bin/sh
echo "$1"'
    amqp publish "$(qname "$name")" "$T/plans/$name.json" >/dev/null || bail "cannot publish"
done
for name in "${names[@]}"; do
    mkdir -p "$T/res-$name"
    amqp drain --count 1 --idle 30000 --out "$T/res-$name" "$(qname "$name")-results" >/dev/null
    same "$name answers a plan after the outage" "$(printf '%s\t0' "$name-p")" \
        "$(results_table "$T/res-$name" | cut -f1,2)"
done
for name in "${names[@]}"; do
    agent_stop "$name"
    same "$name: SIGTERM, exit 0" 0 "$AGENT_STATUS"
done

done_testing
