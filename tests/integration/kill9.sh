#!/bin/bash
# Test 3: kill -9 at random points, many times, and nothing is lost or run
# twice. Each iteration starts the agent on the same storage, publishes 1 to
# 3 plans (half of them stamped) whose scripts take 0 to 300 ms, and has the
# agent killed with SIGKILL: every other iteration from outside after a
# random sleep (0 to 600 ms), the others by the agent itself at a named
# point of a plan's life through the MURANOAGENT_CRASH_AT test hook
# (agent/daemon/daemon-crash.c): stored (before the ack), begun (marked
# running, nothing run), result (result journaled, not published), published
# (before the confirm) and confirmed (before the entry is removed). Then the
# agent runs to the end of its work.
#
# Checks: every plan has a result, and exactly one result document: its
# real one (ErrorCode 0, the script's output) or the documented interrupted
# error (ErrorCode 103, naming the call that was running when the plan had
# begun it). A kill before the ack makes the broker redeliver the plan, which is answered from the journal's done record; a kill after
# the broker took a result but before the agent removed it makes the agent
# publish it again. Both send the same document again (same bytes, same
# result ID), which the engine ignores; they are counted and reported, and
# must be byte-identical. Each script appends the plan's ID to a log outside
# the storage directory: no ID appears twice, and every plan answered with
# ErrorCode 0 appears once.
# The plans' scripts are written in single quotes: $1 is theirs.
# shellcheck disable=SC2016
# shellcheck source=tests/integration/common.sh
. "$(dirname "$0")/common.sh"

ITER=${KILL9_ITERATIONS:-60}
# KILL9_CALLS=N: each Body calls its script N + 1 times (run(id + " i")), so
# that durable calls are seen resuming plans; KILL9_CONF: a line for the
# agent's [agent] section (durable_calls = false, to compare).
CALLS=${KILL9_CALLS:-1}
agent_conf k ${KILL9_CONF:+"$KILL9_CONF"}
queues k
runlog=$T/runs.log
: >"$runlog"
mkdir -p "$T/plans"

points=(stored begun result published confirmed)
total=0
stamp=5000
outside=0
hooked=0
missed=0
RANDOM=$$

for ((i = 1; i <= ITER; i++)); do
    files=()
    nplans=$((1 + RANDOM % 3))
    for ((j = 1; j <= nplans; j++)); do
        id=k-$i-$j
        # Half the plans carry a Stamp, as the engine's call/send build
        # them; the others have none, as callRaw sends them. A stamped plan
        # that comes again is also caught by the stamp check; a stamp-less
        # one only by the journal's done records.
        stamp=$((stamp + 1))
        script_plan "$T/plans/$id.json" "$id" \
            "$(printf '#!/bin/sh\necho "$*" >> %s\nsleep 0.%03d\necho "$1"\n' "$runlog" $((RANDOM % 300)))" \
            $((RANDOM % 2 ? stamp : -1))
        if [ "$CALLS" -gt 1 ]; then
            python3 - "$T/plans/$id.json" "$CALLS" <<'EOF'
import json, sys
plan = json.load(open(sys.argv[1]))
plan["Body"] = "".join("run(args.id + ' %d')\n" % i for i in range(int(sys.argv[2])))
plan["Body"] += "return run(args.id + ' last').stdout"
json.dump(plan, open(sys.argv[1], "w"))
EOF
        fi
        files+=("$T/plans/$id.json")
        total=$((total + 1))
    done
    if ((i % 2)); then
        agent_start k
        amqp publish "$q" "${files[@]}" >/dev/null || bail "cannot publish"
        sleep "0.$(printf '%03d' $((RANDOM % 600)))"
        agent_kill k
        outside=$((outside + 1))
    else
        # The N-th time the point is reached, N at most the plans sent now,
        # so that the point is reached whatever the journal held before.
        point=${points[$(((i / 2) % 5))]}:$((1 + RANDOM % nplans))
        agent_start k "MURANOAGENT_CRASH_AT=$point"
        amqp publish "$q" "${files[@]}" >/dev/null || bail "cannot publish"
        agent_wait_exit k 10
        if [ "$AGENT_STATUS" = 137 ]; then
            hooked=$((hooked + 1))
        else
            diag "iteration $i: the agent did not reach $point within 10 s ($AGENT_STATUS)"
            agent_kill k
            missed=$((missed + 1))
        fi
    fi
done
diag "$ITER kills: $outside from outside, $hooked by the hook, $missed hooks not reached"
for p in "${points[@]}"; do
    c=$(count_lines "$T/k/log" "test hook: killing the agent at '$p'")
    check "the hook killed the agent at '$p' ($c times)" test "$c" -ge 1
done
check "at least 50 kills" test $((outside + hooked + missed)) -ge 50

# The last start runs to the end of the work.
before=$(count_lines "$T/k/log" "INFO muranoagent consuming '")
agent_start k
agent_wait_consuming k "$((before + 1))" || diag "the last start did not log its consuming line"
wait_for 120 eval '[ -z "$(journal_entries k)" ]'
same "the journal empties" "" "$(journal_entries k)"
mkdir -p "$T/res"
got=$(amqp drain --idle 3000 --timeout 200 --out "$T/res" "$rq")
diag "$total plans, $got result messages"

report=$(python3 - "$T/res" "$T/plans" "$runlog" "$CALLS" <<'EOF'
import collections, glob, json, os, re, sys
res, plans, runlog = sys.argv[1:4]
calls = int(sys.argv[4])
want = {os.path.basename(f)[:-5] for f in glob.glob(plans + "/*.json")}
bodies = collections.defaultdict(list)
for f in sorted(glob.glob(res + "/*.body")):
    raw = open(f, "rb").read()
    bodies[json.loads(raw)["SourceID"]].append(raw)
runs = collections.Counter(l.strip() for l in open(runlog) if l.strip())
interrupted = ("The plan was interrupted: the agent stopped or restarted while it was running, "
               "and it was not run again")
# With durable calls, a plan killed during its one call names it; one killed
# before the call resumes and runs (docs/daemon.md).
in_call = re.compile(r"The plan was interrupted: the agent stopped during call \d+, run\(\), which "
                     r"was not run again \(its script is not marked idempotent\); the calls "
                     r"before it were not run again either\Z")
# The lines each plan's calls append: its ID alone for one call, else
# "ID i" for each call and "ID last".
def lines(pid):
    if calls == 1:
        return [pid]
    return ["%s %d" % (pid, i) for i in range(calls)] + [pid + " last"]
problems = []
codes = collections.Counter()
dups = 0
for pid in sorted(want | set(bodies)):
    b = bodies.get(pid, [])
    if pid not in want:
        problems.append("%s: a result for a plan never sent" % pid)
        continue
    if not b:
        problems.append("%s: no result" % pid)
        continue
    if len(set(b)) != 1:
        problems.append("%s: %d different results" % (pid, len(set(b))))
    dups += len(b) - 1
    r = json.loads(b[0])
    codes[r["ErrorCode"]] += 1
    if r["ErrorCode"] == 0:
        if r["Body"] != pid:
            problems.append("%s: wrong body %r" % (pid, r["Body"]))
        if any(runs[l] != 1 for l in lines(pid)):
            problems.append("%s: answered 0 but its calls ran %r times" %
                            (pid, [runs[l] for l in lines(pid)]))
    elif r["ErrorCode"] == 103:
        m = r["Body"].get("Message") if isinstance(r["Body"], dict) else None
        if r["Body"] != {"Message": interrupted, "AdditionalInfo": None} and not (
                isinstance(m, str) and in_call.match(m) and r["Body"]["AdditionalInfo"] is None):
            problems.append("%s: wrong 103 body %r" % (pid, r["Body"]))
    else:
        problems.append("%s: ErrorCode %r: %r" % (pid, r["ErrorCode"], r["Body"]))
twice = sorted(p for p, c in runs.items() if c > 1)
if twice:
    problems.append("scripts that ran more than once: " + " ".join(twice))
print("problems=%d" % len(problems))
print("ok=%d interrupted=%d duplicates=%d ran=%d" % (codes[0], codes[103], dups, len(runs)))
for p in problems[:20]:
    print(p)
EOF
)
same "every plan has exactly one result document, 0 or 103, and no script ran twice" \
    "problems=0" "$(head -1 <<<"$report")"
tail -n +2 <<<"$report" | while read -r line; do diag "$line"; done
diag "redelivered plans answered from the journal: $(count_lines "$T/k/log" \
    "plan already answered; sending its result again")"
counts=$(sed -n 2p <<<"$report")
dups=$(sed -E 's/.*duplicates=([0-9]+).*/\1/' <<<"$counts")
intr=$(sed -E 's/.*interrupted=([0-9]+).*/\1/' <<<"$counts")
check "kills during execution gave interrupted results ($intr)" test "${intr:-0}" -ge 1
check "resent copies ($dups) are at most two per kill" test "${dups:-0}" -le $((2 * ITER))
same "the plan queue is empty (ready, unacked)" "0 0" "$(queue_counts "$q")"
agent_stop k
same "SIGTERM: the agent exits 0" 0 "$AGENT_STATUS"

done_testing
