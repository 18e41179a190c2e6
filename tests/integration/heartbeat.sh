#!/bin/bash
# Test 8: heartbeats are served while a script runs. With [agent]
# heartbeat = 2, a plan whose script runs 10 s (five times the heartbeat,
# more than twice the broker's 2 x heartbeat limit) does not cost the
# connection: the log shows one connection, negotiated at 2 s, never lost;
# the broker logs no missed heartbeats; the result arrives on it.
# The plans' scripts are written in single quotes: $1 is theirs.
# shellcheck disable=SC2016
# shellcheck source=tests/integration/common.sh
. "$(dirname "$0")/common.sh"

agent_conf a "heartbeat = 2"
q=$(qname a)
rq=$q-results
amqp declare "$q" "$rq" >/dev/null || bail "cannot declare the queues"
missed_before=$(missed_heartbeats)

agent_start a
agent_wait_consuming a || bail "the agent did not start consuming"
check "the heartbeat is negotiated at 2 s" log_has a "\(connection 1, heartbeat 2 s\)"
script_plan "$T/long.json" long "$(printf '#!/bin/sh\nsleep 10\necho "$1 after 10 s"\n')"
t0=$(date +%s%3N)
amqp publish "$q" "$T/long.json" >/dev/null
mkdir -p "$T/res"
same "the result arrives" 1 "$(amqp drain --count 1 --idle 30000 --out "$T/res" "$rq")"
t1=$(date +%s%3N)
diag "round trip $((t1 - t0)) ms"
check "after the 10 s script" test $((t1 - t0)) -ge 10000
same "it is the plan's result" "$(printf 'long\t0\t"long after 10 s"')" \
    "$(results_table "$T/res" | cut -f1,2,4)"
same "no connection lost" 0 "$(count_lines "$T/a/log" "connection lost|cannot connect")"
same "one connection all along" 1 "$(count_lines "$T/a/log" "INFO muranoagent consuming '")"
same "the broker logged no missed heartbeats" "$missed_before" "$(missed_heartbeats)"

# Idle for 3 x heartbeat, then a plan: the same connection takes it.
sleep 6
script_plan "$T/after.json" after "$(printf '#!/bin/sh\necho "$1"\n')"
amqp publish "$q" "$T/after.json" >/dev/null
mkdir -p "$T/res2"
same "a plan after 6 s idle is answered" 1 "$(amqp drain --count 1 --idle 20000 --out "$T/res2" "$rq")"
same "still one connection" 1 "$(count_lines "$T/a/log" "INFO muranoagent consuming '")"
agent_stop a
same "SIGTERM: the agent exits 0" 0 "$AGENT_STATUS"

done_testing
