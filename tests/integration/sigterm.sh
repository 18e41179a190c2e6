#!/bin/bash
# Test 7: SIGTERM. Idle, the agent exits 0 within a few seconds. While a
# plan runs, its script is given stop_grace seconds: a script that ends in
# time gives its real result; one that does not gets SIGTERM (and SIGKILL
# after kill_grace if it ignores that), and the plan's result is the
# interrupted error 103, published before the agent exits or, if not, at the
# next start. Either way there is exactly one result, the agent exits 0, and
# no process of the script is left (its pid and its child's are gone). A
# stop that comes while a plan is checked leaves it to run at the next start.
# The plans' scripts are written in single quotes: $1 is theirs.
# shellcheck disable=SC2016
# shellcheck source=tests/integration/common.sh
. "$(dirname "$0")/common.sh"

agent_conf a "stop_grace = 3" "kill_grace = 1"
queues a
ms() { date +%s%3N; }
dead() { [ ! -e "/proc/$1" ] || grep -q '^[0-9]* (.*) Z' "/proc/$1/stat" 2>/dev/null; }

# ---- idle ----
agent_up a
t0=$(ms)
agent_stop a 10
t1=$(ms)
same "idle: SIGTERM, exit status 0" 0 "$AGENT_STATUS"
check "idle: exits within 3 s ($((t1 - t0)) ms)" test $((t1 - t0)) -lt 3000
check "idle: says it stopped" log_has a "INFO muranoagent stopped; 0 plans done since start"

# run_case NAME SCRIPT: start the agent, send a plan running SCRIPT (which
# writes its pid to $T/NAME.pid and its child's to $T/NAME.child), SIGTERM
# the agent once the script runs, and collect the one result into $T/res-NAME.
# start_plan NAME: start the agent, publish $T/NAME.json, and wait until
# its script has written $T/NAME.child; t0 is that moment.
start_plan() {
    agent_up a "$((++starts))"
    amqp publish "$q" "$T/$1.json" >/dev/null
    wait_for 20 test -s "$T/$1.child" || bail "$1: the script did not start"
    t0=$(ms)
}
run_case() {
    local name=$1 script=$2 got
    script_plan "$T/$name.json" "$name" "$script"
    start_plan "$name"
    kill -TERM "${AGENT_PID[a]}"
    sleep 1
    alive_after_1s=no
    dead "$(cat "$T/$name.pid")" || alive_after_1s=yes
    agent_wait_exit a 20
    t1=$(ms)
    mkdir -p "$T/res-$name"
    got=$(amqp drain --idle 2000 --out "$T/res-$name" "$rq")
    published_before_exit=$got
    if [ "$got" = 0 ]; then
        # Journaled, not published: the next start publishes it.
        agent_start a
        agent_wait_consuming a "$((++starts))"
        got=$(amqp drain --count 1 --idle 10000 --out "$T/res-$name" "$rq")
        agent_stop a
    fi
    results=$got
}
starts=1

# ---- a script that ends within stop_grace ----
run_case quick "$(printf '#!/bin/sh\necho $$ > %s/quick.pid\nsleep 1 & echo $! > %s/quick.child\nwait\necho "finished $1"\n' "$T" "$T")"
same "quick: the agent exits 0" 0 "$AGENT_STATUS"
check "quick: it waited for the script, about 1 s ($((t1 - t0)) ms)" test $((t1 - t0)) -lt 3000
same "quick: one result, the real one" "$(printf 'quick\t0\t"finished quick"')" \
    "$(results_table "$T/res-quick" | cut -f1,2,4)"
same "quick: published before the agent exited" 1 "$published_before_exit"

# ---- a script that stops on SIGTERM ----
run_case polite "$(printf '#!/bin/sh\necho $$ > %s/polite.pid\ntrap '"'"'echo TERM >> %s/polite.term; kill $c; exit 143'"'"' TERM\nsleep 60 & c=$!; echo $c > %s/polite.child\nwait\n' "$T" "$T" "$T")"
same "polite: the agent exits 0" 0 "$AGENT_STATUS"
same "polite: the script was still running 1 s after SIGTERM (stop_grace 3 s)" yes "$alive_after_1s"
same "polite: then it got SIGTERM, once" TERM "$(cat "$T/polite.term" 2>/dev/null)"
check "polite: the agent exited after the grace, in 3 to 6 s ($((t1 - t0)) ms)" \
    test $((t1 - t0)) -ge 2900 -a $((t1 - t0)) -lt 6000
same "polite: one result" 1 "$results"
same "polite: the interrupted error 103" \
    "$(printf 'polite\t103\t{"Message": "The agent stopped while the plan was running", "AdditionalInfo": null}')" \
    "$(results_table "$T/res-polite" | cut -f1,2,4)"
check "polite: no process left" dead "$(cat "$T/polite.pid")"
check "polite: not even the script's child" dead "$(cat "$T/polite.child")"

# ---- a script that ignores SIGTERM: SIGKILL after kill_grace ----
run_case stubborn "$(printf '#!/bin/sh\necho $$ > %s/stubborn.pid\ntrap "" TERM\nsleep 60 & echo $! > %s/stubborn.child\nwhile :; do sleep 1; done\n' "$T" "$T")"
same "stubborn: the agent exits 0" 0 "$AGENT_STATUS"
check "stubborn: after stop_grace + kill_grace, in 4 to 7 s ($((t1 - t0)) ms)" \
    test $((t1 - t0)) -ge 3900 -a $((t1 - t0)) -lt 7000
same "stubborn: one result" 1 "$results"
same "stubborn: the interrupted error 103" "stubborn	103" \
    "$(results_table "$T/res-stubborn" | cut -f1,2)"
check "stubborn: no process left" dead "$(cat "$T/stubborn.pid")"
check "stubborn: not even the script's child (it ignored nothing, it was in the tree)" \
    dead "$(cat "$T/stubborn.child")"

# ---- a second SIGTERM does not wait for the grace ----
script_plan "$T/twice.json" twice "$(printf '#!/bin/sh\necho $$ > %s/twice.pid\ntrap "" TERM\nsleep 60 & echo $! > %s/twice.child\nwait\n' "$T" "$T")"
start_plan twice
kill -TERM "${AGENT_PID[a]}"
sleep 0.5
kill -TERM "${AGENT_PID[a]}"
agent_wait_exit a 20
t1=$(ms)
same "twice: the agent exits 0" 0 "$AGENT_STATUS"
check "twice: before stop_grace would end ($((t1 - t0)) ms)" test $((t1 - t0)) -lt 2900
check "twice: the log says why" log_has a "again: killing the running script now"
check "twice: no process left" dead "$(cat "$T/twice.pid")"
check "twice: not even the script's child" dead "$(cat "$T/twice.child")"
mkdir -p "$T/res-twice"
got=$(amqp drain --idle 2000 --out "$T/res-twice" "$rq")
if [ "$got" = 0 ]; then
    agent_start a
    agent_wait_consuming a "$((++starts))"
    got=$(amqp drain --count 1 --idle 10000 --out "$T/res-twice" "$rq")
    agent_stop a
fi
same "twice: one result, 103" "twice	103" "$(results_table "$T/res-twice" | cut -f1,2)"

# ---- a stop while the plan is checked: it waits for the next start ----
# MURANOAGENT_STOP_AT=checked sends the agent SIGTERM after the plan's
# checks and before it is marked running. The plan must not be answered as
# interrupted (it never ran): it stays pending and runs at the next start.
# With the journal's write-ahead log (the default, agent a) the stop
# checkpoints it: journal.log holds no record after its checkpoint and the
# entry is its plan.json, made durable by that checkpoint. Without it
# (agent w, journal_log = false) the entry holds the empty result slot its
# store made durable.
agent_conf w "stop_grace = 3" "kill_grace = 1" "journal_log = false"
# checked_case AGENT FILES: the case with AGENT, whose entry holds FILES.
checked_case() {
    local a=$1 files=$2 e gen0 gen1 live
    queues "$a"
    script_plan "$T/checked.json" checked "$(printf '#!/bin/sh\necho "ran $1"\n')"
    agent_start "$a" MURANOAGENT_STOP_AT=checked
    agent_wait_consuming "$a" "$3" || bail "the agent did not start consuming"
    read -r gen0 live <<<"$(wal_state "$a")"
    amqp publish "$q" "$T/checked.json" >/dev/null
    agent_wait_exit "$a" 20
    same "checked ($a): the agent exits 0" 0 "$AGENT_STATUS"
    check "checked ($a): the log says the plan waits" \
        log_has "$a" "stays in the journal and runs at the next start"
    same "checked ($a): nothing published before the restart" 0 "$(amqp drain --idle 1000 "$rq")"
    e=$(journal_entries "$a")
    same "checked ($a): its entry holds $files, no running mark" "$files" \
        "$(find "$T/$a/storage/plans/$e" -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null |
            LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')"
    read -r gen1 live <<<"$(wal_state "$a")"
    if [ "$a" = a ]; then
        check "checked ($a): the stop checkpointed the log (generation $gen0, then $gen1)" \
            test "$gen1" -gt "$gen0"
        same "checked ($a): the log holds no record after its checkpoint" 0 "$live"
    else
        same "checked ($a): no journal.log" "" "$gen1"
    fi
    agent_up "$a" "$(($3 + 1))"
    rm -rf "$T/res-checked"
    mkdir -p "$T/res-checked"
    amqp drain --count 1 --idle 10000 --out "$T/res-checked" "$rq" >/dev/null
    agent_stop "$a"
    same "checked ($a): one result, the real one" "$(printf 'checked\t0\t"ran checked"')" \
        "$(results_table "$T/res-checked" | cut -f1,2,4)"
}
checked_case a "plan.json" "$((++starts))"
checked_case w ".result plan.json" 1

for a in a w; do
    queues "$a"
    same "$a: nothing more comes" 0 "$(amqp drain --idle 1000 "$rq")"
    same "$a: the journal holds no entry" "" "$(journal_entries "$a")"
    same "$a: the plan queue is empty" "0 0" "$(queue_counts "$q")"
done

done_testing
