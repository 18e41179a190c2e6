#!/bin/bash
# Test 4: the broker restarts while a plan runs (tests/broker.sh restart:
# rabbitmqctl stop_app, a pause, start_app, on the same node, port and
# data). The plan's script outlives the broker's absence, so its result is
# journaled while no broker is there; once the broker is back, the agent
# reconnects by itself, publishes the result (once), and consumes again.
# This test restarts the shared broker, so meson runs it alone.
# The plans' scripts are written in single quotes: $1 is theirs.
# shellcheck disable=SC2016
# shellcheck source=tests/integration/common.sh
. "$(dirname "$0")/common.sh"

agent_conf a
queues a
runlog=$T/runs.log
agent_up a

# p1 ends only once the test has seen the connection drop (or after 60 s),
# so that it finishes while the broker is away however long the broker takes
# to close its connections on a loaded machine.
gone=$T/broker-gone
script_plan "$T/p1.json" p1 "$(printf '#!/bin/sh\necho "$1" >> %s\ni=0\nwhile [ ! -e %s ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done\necho "$1 done"\n' "$runlog" "$gone")"
script_plan "$T/p2.json" p2 "$(printf '#!/bin/sh\necho "$1" >> %s\necho "$1 done"\n' "$runlog")"

amqp publish "$q" "$T/p1.json" >/dev/null
wait_for 20 log_has a "\[plan p1\] calling script run" || bail "p1 did not start"
t0=$(date +%s%3N)
"$BROKER_SH" restart "$BROKER_DIR" 4 2>"$T/restart.log" &
restart_pid=$!
wait_for 60 log_has a "WARNING muranoagent connection lost:" && touch "$gone"
wait "$restart_pid"
same "the broker restarted" 0 "$?"
t1=$(date +%s%3N)
diag "broker down and up again in $((t1 - t0)) ms" "$(cat "$T/restart.log")"
check "the agent lost its connection" log_has a "WARNING muranoagent connection lost:"
check "the agent is still running" agent_alive a
check "p1 finished while the broker was away" \
    log_has a "\[plan p1\] plan finished: ErrorCode 0"

check "the agent reconnects by itself" \
    wait_for 30 log_has a "INFO muranoagent consuming '$q' on .*\(connection 2,"
t2=$(date +%s%3N)
line_of() { grep -nE -- "$1" "$T/a/log" | head -1 | cut -d: -f1; }
lost=$(line_of "WARNING muranoagent connection lost:")
finished=$(line_of "\[plan p1\] plan finished")
back=$(line_of "\(connection 2,")
check "in the log: connection lost, then p1 finished, then connection 2" \
    test "${lost:-0}" -gt 0 -a "${finished:-0}" -gt "${lost:-0}" -a "${back:-0}" -gt "${finished:-0}"
diag "reconnected $((t2 - t1)) ms after the broker was back"
mkdir -p "$T/res1"
same "p1's result arrives" 1 "$(amqp drain --count 1 --idle 30000 --out "$T/res1" "$rq")"
same "it is p1's real result" "$(printf 'p1\t0\t"p1 done"')" "$(results_table "$T/res1" | cut -f1,2,4)"

# The consumer is back: a new plan is taken and answered.
amqp publish "$q" "$T/p2.json" >/dev/null
mkdir -p "$T/res2"
same "a plan sent after the restart is answered" 1 \
    "$(amqp drain --count 1 --idle 30000 --out "$T/res2" "$rq")"
same "with its own result" "$(printf 'p2\t0\t"p2 done"')" "$(results_table "$T/res2" | cut -f1,2,4)"
same "nothing else comes (p1's result was published once)" 0 "$(amqp drain --idle 2000 "$rq")"
same "each script ran once" "p1 p2" "$(sort "$runlog" | tr '\n' ' ' | sed 's/ $//')"
same "the plan queue is empty (ready, unacked)" "0 0" "$(queue_counts "$q")"
same "the journal holds no entry" "" "$(journal_entries a)"
same "connected twice in all (one reconnection)" 2 \
    "$(count_lines "$T/a/log" "INFO muranoagent consuming '")"
agent_stop a
same "SIGTERM: the agent exits 0" 0 "$AGENT_STATUS"

done_testing
