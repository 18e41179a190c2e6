#!/bin/bash
# Cancel (issue 13): muranoagent-send --cancel publishes a cancel message to
# the agent's queue. A running plan's whole script tree is stopped (the
# script, its child, and a child that double-forked and left the session
# with setsid, which only the run's cgroup and audit session reach, so the
# agent runs with the sandbox where it can) and the plan gets one result,
# ErrorCode 107, naming the script that ran; a queued plan is answered with
# 107 without running, and stays unrun after a kill -9 right after its
# cancel was taken; an ID that is unknown or has its result changes nothing;
# the next plan runs each time. With engine_key set, a cancel must be signed
# as a plan is: an unsigned one, or one signed with another key, is rejected
# and cancels nothing, and a signed one cancels. `muranoagent cancel` does
# the same on the agent's machine, over its control socket; `status` lists
# the queued plan by its ID, and then among the recent plans, ErrorCode 107,
# not run.
# The plans' scripts are written in single quotes: $1 is theirs, and the
# helpers below are called through wait_for and check.
# shellcheck disable=SC2016,SC2317
# shellcheck source=tests/integration/common.sh
. "$(dirname "$0")/common.sh"

runlog=$T/runs.log
: >"$runlog"
dead() { [ ! -e "/proc/$1" ] || grep -q '^[0-9]* (.*) Z' "/proc/$1/stat" 2>/dev/null; }

# The sandbox's cgroup and audit session are what reach a process that left
# the script's process group; without root they cannot be had, and that one
# check is skipped.
sandbox=("[sandbox]" "enabled = false")
if [ "$(id -u)" = 0 ]; then
    sandbox=("[sandbox]" "enabled = true")
fi

# slow_plan NAME: a plan whose script writes its pid, starts a child and a
# double-forked child in a session of its own (their pids to NAME.child and
# NAME.orphan), prints "started" and waits.
slow_plan() {
    script_plan "$T/$1.json" "$1" "$(printf '#!/bin/sh
echo "$1" >> %s
echo $$ > %s/%s.pid
(setsid sh -c "echo \\$\\$ > %s/%s.orphan.tmp; mv %s/%s.orphan.tmp %s/%s.orphan; exec sleep 300" </dev/null >/dev/null 2>&1 &)
sleep 300 &
echo $! > %s/%s.child
echo started
wait
' "$runlog" "$T" "$1" "$T" "$1" "$T" "$1" "$T" "$1" "$T" "$1")"
}
quick_plan() {
    script_plan "$T/$1.json" "$1" "$(printf '#!/bin/sh\necho "$1" >> %s\necho "ran $1"\n' "$runlog")"
}
# start_slow NAME: publish the slow plan NAME and wait until its script and
# both its children run.
start_slow() {
    slow_plan "$1"
    amqp publish "$q" "$T/$1.json" >/dev/null
    wait_for 20 test -s "$T/$1.child" -a -s "$T/$1.orphan" || bail "$1: the script did not start"
}
# gone NAME: the script of NAME, its child and its double-forked child are
# all gone (within 5 s).
tree_gone() {
    local p
    for p in "$T/$1.pid" "$T/$1.child" "$T/$1.orphan"; do
        dead "$(cat "$p")" || return 1
    done
}
gone() { wait_for 5 tree_gone "$1"; }
# tree_alive NAME: none of them is gone.
tree_alive() {
    local p
    for p in "$T/$1.pid" "$T/$1.child" "$T/$1.orphan"; do
        ! dead "$(cat "$p")" || return 1
    done
}
# stored NAME N: the agent's journal holds N entries.
stored() { [ "$(journal_entries "$1" | wc -l)" -ge "$2" ]; }
# result_of DIR: "<SourceID> <ErrorCode> <Message>" of each result in DIR.
result_of() {
    python3 - "$1" <<'EOF'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/*.body")):
    r = json.loads(open(f, "rb").read())
    b = r.get("Body")
    m = b.get("Message") if isinstance(b, dict) and r.get("ErrorCode") else b
    print("%s\t%s\t%s" % (r.get("SourceID"), r.get("ErrorCode"), m))
EOF
}
# next_runs NAME: a quick plan runs after it all, with its own result.
next_runs() {
    quick_plan "$1"
    mkdir -p "$T/res-$1"
    amqp publish "$q" "$T/$1.json" >/dev/null
    amqp drain --count 1 --idle 20000 --out "$T/res-$1" "$rq" >/dev/null
    same "$1: the next plan runs" "$(printf '%s\t0\tran %s' "$1" "$1")" "$(result_of "$T/res-$1")"
}

# ---- unsigned -------------------------------------------------------------
agent_conf a "kill_grace = 1" "${sandbox[@]}"
queues a
agent_up a

# A running plan, and a plan queued behind it: the queued one is cancelled
# first, then the running one.
start_slow run1
quick_plan queued1
amqp publish "$q" "$T/queued1.json" >/dev/null
wait_for 10 stored a 2 || bail "queued1 was not stored"
snd --queue "$q" --cancel queued1 >"$T/cancel-queued1.out" 2>"$T/cancel-queued1.err"
same "queued: muranoagent-send --cancel exits 0" 0 "$?"
check "queued: it prints the cancel message's id" grep -qE '^[0-9a-f]{32}$' "$T/cancel-queued1.out"
check "queued: the agent answers it without running it" \
    wait_for 10 log_has a "\[plan queued1\] cancelled by a remote request before it ran \(entry [0-9]+\): answered with ErrorCode 107"
t0=$(date +%s%3N)
snd --queue "$q" --cancel run1 >/dev/null 2>"$T/cancel-run1.err"
same "running: muranoagent-send --cancel exits 0" 0 "$?"
check "running: the agent stops it, naming the script" \
    wait_for 10 log_has a "\[plan run1\] cancelled by a remote request during script run: stopping its scripts"
mkdir -p "$T/res1"
same "two results come" 2 "$(amqp drain --count 2 --idle 20000 --out "$T/res1" "$rq")"
t1=$(date +%s%3N)
same "each plan gets one result, ErrorCode 107, saying who and during which call" \
    "$(printf '%s\n' "queued1	107	The plan was cancelled by a remote request before it ran; it was not run" \
        "run1	107	The plan was cancelled by a remote request during script run")" \
    "$(result_of "$T/res1")"
diag "running: the result came $((t1 - t0)) ms after the cancel was sent (kill_grace 1 s)"
check "running: the script and its child are gone" gone run1 ||
    diag "left: $(for p in pid child orphan; do dead "$(cat "$T/run1.$p")" || echo "$p"; done)"
if [ "${sandbox[1]}" = "enabled = true" ]; then
    check "running: the double-forked child in its own session is gone too" dead "$(cat "$T/run1.orphan")"
else
    kill -KILL "$(cat "$T/run1.orphan")" 2>/dev/null
    skip "running: the double-forked child in its own session is gone too" "needs root (cgroup, audit session)"
fi
same "the queued plan never ran" run1 "$(cat "$runlog")"
same "nothing more comes" 0 "$(amqp drain --idle 2000 "$rq")"
next_runs next1

# Unknown and finished IDs change nothing.
snd --queue "$q" --cancel nosuch >/dev/null 2>&1
check "unknown ID: logged" \
    wait_for 10 log_has a "\[plan nosuch\] a remote request to cancel it: no such plan here"
snd --queue "$q" --cancel next1 >/dev/null 2>&1
check "finished ID: logged" \
    wait_for 10 log_has a "\[plan next1\] a remote request to cancel it came after its end"
same "no result comes for them" 0 "$(amqp drain --idle 2000 "$rq")"
same "the queue is empty (ready, unacked)" "0 0" "$(queue_counts "$q")"
next_runs next2

# --results-queue: the cancel waits for the plan's result and prints it.
start_slow run2
snd --queue "$q" --results-queue "$rq" --timeout 30 --cancel run2 >"$T/run2.out" 2>"$T/run2.err"
same "waiting: muranoagent-send --cancel exits 1 (an error result)" 1 "$?"
mkdir -p "$T/res-run2" && cp "$T/run2.out" "$T/res-run2/1.body"
same "waiting: it prints the plan's result" \
    "run2	107	The plan was cancelled by a remote request during script run" "$(result_of "$T/res-run2")"
check "waiting: the tree is gone" gone run2

# A queued plan's cancel survives a kill -9 right after it was taken: the
# answer was on disk before the ack. The running plan is answered as
# interrupted at the next start, the queued one never runs.
start_slow run3
quick_plan queued3
amqp publish "$q" "$T/queued3.json" >/dev/null
wait_for 10 stored a 2 || bail "queued3 was not stored"
snd --queue "$q" --cancel queued3 >/dev/null 2>&1
wait_for 10 log_has a "\[plan queued3\] cancelled by a remote request before it ran" ||
    not_ok "kill -9: the cancel was taken"
agent_kill a
kill -KILL "$(cat "$T/run3.pid")" "$(cat "$T/run3.child")" "$(cat "$T/run3.orphan")" 2>/dev/null
agent_up a 2
mkdir -p "$T/res3"
amqp drain --idle 5000 --out "$T/res3" "$rq" >/dev/null
same "kill -9: after the restart, run3 is answered as interrupted and queued3 cancelled, once each" \
    "$(printf '%s\n' "queued3	107	The plan was cancelled by a remote request before it ran; it was not run" \
        "run3	103	The plan was interrupted: the agent stopped during call 0, run(), which was not run again (its script is not marked idempotent); the calls before it were not run again either")" \
    "$(result_of "$T/res3" | sort -u)"
check "kill -9: queued3 never ran" test "$(count_lines "$runlog" '^queued3$')" = 0
next_runs next3

# Local: muranoagent cancel, over the agent's control socket.
local_cancel() { "$MURANOAGENT" --config-file "$T/a/agent.conf" cancel "$1"; }
start_slow run4
quick_plan queued4
amqp publish "$q" "$T/queued4.json" >/dev/null
wait_for 10 stored a 2 || bail "queued4 was not stored"
# status_field EXPR: EXPR of the status document s, in Python.
status_field() {
    "$MURANOAGENT" --config-file "$T/a/agent.conf" status --json |
        python3 -c 'import json, sys; s = json.load(sys.stdin); print('"$1"')'
}
same "status: the queued plan by its ID" "['queued4']" \
    "$(status_field '[p["id"] for p in s["queued_plans"]]')"
local_cancel queued4 >"$T/local-queued4.out" 2>&1
same "local, queued: muranoagent cancel exits 0" 0 "$?"
same "local, queued: and says what it did" \
    "plan queued4: cancelled by a local request (muranoagent cancel) before it ran (entry N): answered with ErrorCode 107, it will not run" \
    "$(sed -E 's/entry [0-9]+/entry N/' "$T/local-queued4.out")"
same "status: the queued plan answered cancelled is a recent plan, not queued" "[] queued4 107 None" \
    "$(status_field 's["queued_plans"], s["recent"]["plans"][0]["id"], s["recent"]["plans"][0]["error_code"], s["recent"]["plans"][0]["duration_ms"]' | tr -d "(),'")"
local_cancel run4 >"$T/local-run4.out" 2>&1
same "local, running: muranoagent cancel exits 0" 0 "$?"
same "local, running: and says what it did" \
    "plan run4: cancelled by a local request (muranoagent cancel) during script run: stopping its scripts (SIGTERM, SIGKILL after 1 s); its result will say ErrorCode 107" \
    "$(cat "$T/local-run4.out")"
mkdir -p "$T/res4"
amqp drain --count 2 --idle 20000 --out "$T/res4" "$rq" >/dev/null
same "local: one result each, ErrorCode 107, saying who" \
    "$(printf '%s\n' "queued4	107	The plan was cancelled by a local request (muranoagent cancel) before it ran; it was not run" \
        "run4	107	The plan was cancelled by a local request (muranoagent cancel) during script run")" \
    "$(result_of "$T/res4")"
check "local: the tree is gone" gone run4
check "local: queued4 never ran" test "$(count_lines "$runlog" '^queued4$')" = 0
local_cancel nosuch >"$T/local-nosuch.out" 2>&1
same "local, unknown ID: exit 1" 1 "$?"
same "local, unknown ID: says so" \
    "plan nosuch: a local request (muranoagent cancel) to cancel it: no such plan here (not received yet, or finished long ago); nothing changed" \
    "$(cat "$T/local-nosuch.out")"
same "local: nothing more comes" 0 "$(amqp drain --idle 2000 "$rq")"
next_runs next4
agent_stop a
same "the agent stops cleanly" 0 "$AGENT_STATUS"
local_cancel run4 >"$T/local-down.out" 2>&1
same "local, no agent running: exit 1" 1 "$?"
check "local, no agent running: says so" grep -q "^muranoagent cancel: " "$T/local-down.out"

# ---- signed ---------------------------------------------------------------
openssl genrsa -out "$T/engine.pem" 2048 2>/dev/null || bail "openssl genrsa failed"
openssl genrsa -out "$T/other.pem" 2048 2>/dev/null || bail "openssl genrsa failed"
openssl rsa -in "$T/engine.pem" -RSAPublicKey_out -out "$T/engine.pub" 2>/dev/null ||
    bail "openssl rsa failed"
mapfile -t keylines <"$T/engine.pub"
agent_conf s "kill_grace = 1" "${sandbox[@]}" "[DEFAULT]" "engine_key =" "${keylines[@]/#/$'\t'}"
queues s
agent_up s
sign() { { printf '%s' "$2"; cat "$3"; } | openssl dgst -sha256 -sign "$1" -out "$4"; }
signed_publish() {
    sign "$T/engine.pem" "$q" "$T/$1.json" "$T/$1.sig"
    amqp publish --signature "$T/$1.sig" "$q" "$T/$1.json" >/dev/null
}

slow_plan srun
signed_publish srun
wait_for 20 test -s "$T/srun.child" -a -s "$T/srun.orphan" || bail "srun: the script did not start"
quick_plan squeued
signed_publish squeued
wait_for 10 stored s 2 || bail "squeued was not stored"
snd --queue "$q" --cancel srun >/dev/null 2>&1
snd --queue "$q" --cancel squeued --sign-key "$T/other.pem" >/dev/null 2>&1
check "signed: an unsigned cancel is rejected" \
    wait_for 10 log_has s "\[plan srun\] rejecting a cancel message \(message_id [0-9a-f]{32}\): required signature was not found"
check "signed: a cancel signed with another key is rejected" \
    wait_for 10 log_has s "\[plan squeued\] rejecting a cancel message \(message_id [0-9a-f]{32}\): invalid signature"
check "signed: the plan still runs" tree_alive srun
same "signed: no result came, the queue is empty" "0 0 0" \
    "$(amqp drain --idle 2000 "$rq") $(queue_counts "$q")"
snd --queue "$q" --cancel squeued --sign-key "$T/engine.pem" >/dev/null 2>&1
snd --queue "$q" --cancel srun --sign-key "$T/engine.pem" >/dev/null 2>&1
mkdir -p "$T/sres"
same "signed: two results come" 2 "$(amqp drain --count 2 --idle 20000 --out "$T/sres" "$rq")"
same "signed: a signed cancel answers the queued plan and stops the running one" \
    "$(printf '%s\n' "squeued	107	The plan was cancelled by a remote request before it ran; it was not run" \
        "srun	107	The plan was cancelled by a remote request during script run")" \
    "$(result_of "$T/sres")"
check "signed: the tree is gone" gone srun
check "signed: squeued never ran" test "$(count_lines "$runlog" '^squeued$')" = 0
quick_plan snext
signed_publish snext
mkdir -p "$T/res-snext"
amqp drain --count 1 --idle 20000 --out "$T/res-snext" "$rq" >/dev/null
same "signed: the next plan runs" "$(printf 'snext\t0\tran snext')" "$(result_of "$T/res-snext")"
agent_stop s
same "signed: the agent stops cleanly" 0 "$AGENT_STATUS"

done_testing
