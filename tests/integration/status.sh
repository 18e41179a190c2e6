#!/bin/bash
# muranoagent status (docs/operations.md): the control socket answers, as
# root only, within 50 ms, while a plan runs, while the broker is away and
# after it is back, and while every fsync takes 2 s. The answer names the broker's state and the running
# plan. Stopping the broker would disturb other tests, so this test starts
# a broker of its own.
# shellcheck disable=SC2016
unset BROKER_DIR BROKER_PORT BROKER_NODE
# shellcheck source=tests/integration/common.sh
. "$(dirname "$0")/common.sh"

QUERY=$ITEST_ROOT/tests/integration/status-query.py
agent_conf a "heartbeat = 10"
queues a
conf=$T/a/agent.conf
storage=$T/a/storage

# field JSON PYTHON-EXPR: the value of an expression over the document s.
field() { python3 -c 'import json, sys; s = json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2"; }
# query N: the slowest of N answers (ms) into $worst, the last document into $doc.
query() {
    local out
    out=$("$QUERY" "$storage" "$1") || return 1
    worst=$(head -1 <<<"$out")
    doc=$(tail -1 <<<"$out")
}
# shellcheck disable=SC2317 # called through check
fast() { python3 -c 'import sys; sys.exit(float(sys.argv[1]) >= 50)' "$worst"; }

agent_up a
out=$("$MURANOAGENT" --config-file "$conf" status)
check "status answers as root (exit 0)" test $? -eq 0
grep -q "^broker:  connected to 127.0.0.1:$BROKER_PORT" <<<"$out"
check "the human form says the broker is connected" test $? -eq 0
note <<<"$out"
mode=$(stat -c %a "$storage/control")
same "the socket's directory is mode 700" 700 "$mode"
if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
    # A copy of the configuration that nobody may read, so that only the
    # socket's directory stands in the way.
    grep -v '^debug' "$conf" >"$T/public.conf"
    chmod 644 "$T/public.conf"
    err=$(setpriv --reuid=nobody --regid=nogroup --clear-groups \
        "$MURANOAGENT" --config-file "$T/public.conf" status 2>&1)
    rc=$?
    same "another user cannot ask (exit 1)" 1 "$rc"
    note <<<"$err"
else
    skip "another user cannot ask" "no user nobody or no setpriv"
fi

# ---- a running plan ----
# Each plan's script waits for a file of the test's, so that it runs as long
# as the test needs, however slow the machine.
script_plan "$T/p1.json" plan-one "echo first line; echo second line
while [ ! -e $T/go1 ]; do sleep 0.05; done; echo done"
amqp publish "$q" "$T/p1.json" >/dev/null
wait_for 20 log_has a "plan-one.*script run" || bail "the plan did not start"
wait_for 20 eval 'query 1 && [ "$(field "$doc" "len(s[\"plan\"][\"output_tail\"])")" = 2 ]'
query 20 || bail "no answer"
check "while a plan runs: 20 answers, the slowest in $worst ms (< 50)" fast
same "the running plan's ID" plan-one "$(field "$doc" 's["plan"]["id"]')"
same "its script" "script run" "$(field "$doc" 's["plan"]["script"]["name"]')"
pid=$(field "$doc" 's["plan"]["script"]["pid"]')
check "the script's pid ($pid) is a live process" test -e "/proc/$pid"
same "the tail of its output" "['first line', 'second line']" \
    "$(field "$doc" 's["plan"]["output_tail"]')"
out=$("$MURANOAGENT" --config-file "$conf" status)
note <<<"$out"
grep -q "^plan:    plan-one, running for" <<<"$out"
check "the human form names the running plan" test $? -eq 0
touch "$T/go1"
mkdir -p "$T/res"
got=$(amqp drain --count 1 --idle 20000 --out "$T/res" "$rq")
same "the plan's result came" 1 "$got"
wait_for 5 eval 'query 1 && [ "$(field "$doc" "s[\"plan\"]")" = None ]'
same "after it: the last plans list it with ErrorCode 0" "plan-one 0" \
    "$(field "$doc" '"%s %s" % (s["recent"]["plans"][0]["id"], s["recent"]["plans"][0]["error_code"])')"

# ---- the broker away, a plan running ----
script_plan "$T/p2.json" plan-two "echo away; while [ ! -e $T/go2 ]; do sleep 0.05; done"
amqp publish "$q" "$T/p2.json" >/dev/null
wait_for 20 log_has a "plan-two.*script run" || bail "the second plan did not start"
"$BROKER_SH" down "$BROKER_DIR" 2>"$T/down.log" || bail "the broker did not stop"
wait_for 15 log_has a "WARNING muranoagent connection lost:" || bail "the agent did not notice"
query 20 || bail "no answer while the broker is away"
check "broker away, a plan running: 20 answers, the slowest in $worst ms (< 50)" fast
same "the broker is disconnected, the plan runs" "disconnected plan-two" \
    "$(field "$doc" '"%s %s" % (s["broker"]["state"], s["plan"] and s["plan"]["id"])')"
check "with the reason" test "$(field "$doc" 's["broker"]["last_error"] is not None')" = True
touch "$T/go2"
wait_for 20 eval 'query 1 && [ "$(field "$doc" "s[\"unsent\"]")" = 1 ]'
check "the plan's result waits: 1 unsent" test "$(field "$doc" 's["unsent"]')" = 1
same "and the plan is listed as done" "plan-two 0" \
    "$(field "$doc" '"%s %s" % (s["recent"]["plans"][0]["id"], s["recent"]["plans"][0]["error_code"])')"
out=$("$MURANOAGENT" --config-file "$conf" status)
note <<<"$out"
grep -q "^broker:  DISCONNECTED since" <<<"$out"
check "the human form says DISCONNECTED" test $? -eq 0

# ---- and back ----
"$BROKER_SH" up "$BROKER_DIR" 2>"$T/up.log" || bail "the broker did not come back"
wait_for 30 log_has a "INFO muranoagent consuming '.*\(connection 2," || bail "no reconnection"
query 20 || bail "no answer after the broker came back"
check "broker back: 20 answers, the slowest in $worst ms (< 50)" fast
same "connected again, connection 2" "connected 2 1" \
    "$(field "$doc" '"%s %s %s" % (s["broker"]["state"], s["broker"]["connection"], s["broker"]["reconnects"])')"
mkdir -p "$T/res2"
same "the waiting result went out" 1 "$(amqp drain --count 1 --idle 20000 --out "$T/res2" "$rq")"
wait_for 5 eval 'query 1 && [ "$(field "$doc" "s[\"unsent\"]")" = 0 ]'
same "nothing unsent any more" 0 "$(field "$doc" 's["unsent"]')"

# ---- a slow disk ----
# Every flush of the journal 2 s slower (MURANOAGENT_SLOW_FSYNC_MS): the
# answers do not wait for the disk while plans are stored and run.
agent_conf b
queues b
agent_start b MURANOAGENT_SLOW_FSYNC_MS=2000
agent_wait_consuming b || bail "agent b did not start consuming"
for i in 1 2 3; do
    script_plan "$T/slow$i.json" "slow-$i" 'echo slow'
    amqp publish "$q" "$T/slow$i.json" >/dev/null
done
sleep 0.5
storage=$T/b/storage
query 20 || bail "no answer with a slow disk"
check "slow disk: 20 answers, the slowest in $worst ms (< 50)" fast
check "with the journal's counts" test "$(field "$doc" 's["queued"] is not None')" = True
agent_stop b
storage=$T/a/storage

agent_stop a
same "the agent stopped cleanly" 0 "$AGENT_STATUS"
check "the socket is gone after the stop" test ! -e "$storage/control/muranoagent.sock"
out=$("$MURANOAGENT" --config-file "$conf" status 2>&1)
same "status without an agent: exit 1" 1 "$?"
note <<<"$out"
done_testing
