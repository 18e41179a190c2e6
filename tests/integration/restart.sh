#!/bin/bash
# A start right after a kill -9 succeeds (docs/daemon.md "After a crash or
# a restart"). The journal's flock() outlives a killed agent by a moment (a
# kill returns before the agent has ended), so a new agent on the same
# storage waits for it, up to 10 s, and logs why and who holds it.
#
# Part 1, a restart that overlaps the old agent's end: agent a runs a plan
# whose script leaves a child behind; agent b is started on the same
# storage while a still runs. b must wait (its log names a's pid), not exit
# 1; then a is killed with SIGKILL, and b opens the journal at once, answers
# the interrupted plan once, and consumes.
#
# Part 2, kill -9 and start again at once: ITER times, the running agent is
# killed with SIGKILL while a script runs (its children linger a second or
# two after the agent's end) and the other one is started on the same
# storage without waiting for the killed one to end. Every start consumes;
# every plan gets exactly one result document; no script runs twice.
# The plans' scripts are written in single quotes: $1 is theirs.
# shellcheck disable=SC2016
# shellcheck source=tests/integration/common.sh
. "$(dirname "$0")/common.sh"

ITER=${RESTART_ITERATIONS:-15}
agent_conf a
mkdir -p "$T/b"
cp "$T/a/agent.conf" "$T/b/agent.conf"
queues a
runlog=$T/runs.log
: >"$runlog"
mkdir -p "$T/plans"

# A plan whose script logs its ID, leaves a child that lingers LINGER
# seconds, and runs for RUN seconds.
lingering_plan() { # lingering_plan ID LINGER RUN
    script_plan "$T/plans/$1.json" "$1" \
        "$(printf '#!/bin/sh\n(sleep %s) &\necho "$1" >> %s\nsleep %s\necho "$1"\n' \
            "$2" "$runlog" "$3")"
}
# consuming NAME N: the agent's N-th consuming line, or its end.
# shellcheck disable=SC2317 # called through wait_for
consuming() { log_has "$1" "INFO muranoagent consuming '" "$2" || ! agent_alive "$1"; }

# ---- part 1 ----
agent_up a
lingering_plan r0 2 8
amqp publish "$q" "$T/plans/r0.json" >/dev/null || bail "cannot publish"
wait_for 20 grep -qx r0 "$runlog" || bail "r0's script did not start"
agent_start b
check "b, started while a holds the journal, waits and names a's pid" \
    wait_for 10 log_has b "the journal in .*/plans is locked by process ${AGENT_PID[a]} \(an agent"
check "b is still there" agent_alive b
t0=$(date +%s%3N)
kill -KILL "${AGENT_PID[a]}"
check "b opens the journal once a has ended" \
    wait_for 10 log_has b "the journal's lock was released after"
t1=$(date +%s%3N)
diag "b opened the journal $((t1 - t0)) ms after the SIGKILL"
wait_for 30 consuming b 1
check "b consumes" log_has b "INFO muranoagent consuming '"
agent_wait_exit a 10
same "a ended by SIGKILL" 137 "$AGENT_STATUS"
agent_alive b || bail "agent b is not running: $(tail -n 1 "$T/b/log")"

# ---- part 2 ----
waited=0
cur=b
for ((i = 1; i <= ITER; i++)); do
    next=$([ "$cur" = a ] && echo b || echo a)
    want=$(($(count_lines "$T/$next/log" "INFO muranoagent consuming '") + 1))
    lingering_plan "r$i" "1.$((RANDOM % 10))" 2
    amqp publish "$q" "$T/plans/r$i.json" >/dev/null || bail "cannot publish"
    wait_for 20 grep -qx "r$i" "$runlog" || bail "r$i's script did not start"
    sleep "0.$(printf '%03d' $((RANDOM % 200)))"
    # At once: the next start does not wait for the killed agent's end.
    kill -KILL "${AGENT_PID[$cur]}"
    agent_start "$next"
    wait_for 30 consuming "$next" "$want"
    if ! log_has "$next" "INFO muranoagent consuming '" "$want"; then
        diag "iteration $i: the start after the kill did not consume:" \
            "$(tail -n 3 "$T/$next/log")"
        break
    fi
    agent_wait_exit "$cur" 10
    [ "$AGENT_STATUS" = 137 ] || diag "iteration $i: the killed agent ended with $AGENT_STATUS"
    cur=$next
done
same "every start right after a kill -9 consumed" "$ITER" "$((i - 1))"
for name in a b; do
    waited=$((waited + $(count_lines "$T/$name/log" "the journal in .*/plans is locked by process")))
done
diag "starts that waited for the lock: $waited of $((ITER + 1)) (part 1's included)"
for name in a b; do
    check "agent $name never failed for the lock" \
        test "$(count_lines "$T/$name/log" "cannot open the journal")" -eq 0
done

wait_for 60 eval '[ -z "$(journal_entries a)" ]'
same "the journal empties" "" "$(journal_entries a)"
mkdir -p "$T/res"
got=$(amqp drain --idle 3000 --timeout 120 --out "$T/res" "$rq")
diag "$((ITER + 1)) plans, $got result messages"
report=$(python3 - "$T/res" "$ITER" <<'EOF'
import collections, glob, json, sys
res, n = sys.argv[1], int(sys.argv[2])
# Killed during its one call, a plan names it (durable calls, docs/daemon.md).
interrupted = {"Message": "The plan was interrupted: the agent stopped during call 0, run(), "
               "which was not run again (its script is not marked idempotent); the calls "
               "before it were not run again either", "AdditionalInfo": None}
got = collections.defaultdict(list)
for f in sorted(glob.glob(res + "/*.body")):
    r = json.loads(open(f, "rb").read())
    got[r["SourceID"]].append(r)
codes = collections.Counter()
for pid in ["r%d" % k for k in range(n + 1)]:
    rs = got.pop(pid, [])
    if len(rs) != 1:
        print("%s: %d results" % (pid, len(rs)))
        continue
    r = rs[0]
    codes[r["ErrorCode"]] += 1
    if (r["ErrorCode"], r["Body"]) not in ((103, interrupted), (0, pid)):
        print("%s: ErrorCode %r, Body %r" % (pid, r["ErrorCode"], r["Body"]))
for pid in got:
    print("%s: a result for a plan never sent" % pid)
print("codes: interrupted %d, finished %d" % (codes[103], codes[0]))
EOF
)
same "every plan has exactly one result, interrupted (or finished before the kill)" \
    "" "$(grep -v '^codes:' <<<"$report")"
diag "$(grep '^codes:' <<<"$report")"
same "no script ran twice" "" "$(sort "$runlog" | uniq -d)"
agent_stop "$cur"
same "SIGTERM: the last agent exits 0" 0 "$AGENT_STATUS"

done_testing
