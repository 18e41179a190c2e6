#!/bin/bash
# Test 2: 500 plans, each answered exactly once. Variant A: all 500 are
# queued before the agent starts. Variant B: 500 more are published while
# the same agent runs. Every plan is stamped (as the engine stamps them) and
# runs one script that appends the plan's ID to a log outside the storage
# directory. Checks: 500 results per variant, 500 distinct SourceIDs, each
# the plan's own answer; nothing more comes; each script ran once; the plan
# queue and the journal are empty. The times are printed as diagnostics.
# The plans' scripts are written in single quotes: $1 is theirs.
# shellcheck disable=SC2016
# shellcheck source=tests/integration/common.sh
. "$(dirname "$0")/common.sh"

N=${BURST_PLANS:-500}
agent_conf a
queues a
runlog=$T/runs.log

# make_plans DIR PREFIX STAMP_BASE: N plan files DIR/PREFIX-NNN.json.
make_plans() {
    python3 - "$1" "$2" "$3" "$N" "$runlog" <<'EOF'
import json, os, sys
d, prefix, base, n, runlog = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
os.makedirs(d)
script = '#!/bin/sh\necho "$1" >> %s\necho "$1"\n' % runlog
for i in range(n):
    pid = "%s-%03d" % (prefix, i)
    plan = {"FormatVersion": "2.1.0", "Version": "1.0.0", "Name": "burst",
            "Parameters": {"id": pid}, "Body": "return run(args.id).stdout",
            "Scripts": {"run": {"Type": "Application", "Version": "1.0.0", "EntryPoint": "f",
                                "Files": [], "Options": {"captureStdout": True,
                                                         "captureStderr": True,
                                                         "verifyExitcode": True}}},
            "Files": {"f": {"Name": "run.sh", "BodyType": "Text", "Body": script}},
            "ID": pid, "Stamp": base + i, "Action": "Execute"}
    open(os.path.join(d, pid + ".json"), "w").write(json.dumps(plan))
EOF
}

# verify VARIANT PREFIX DIR: the drained results are N, one per plan, right.
verify() {
    local v=$1 prefix=$2 dir=$3 report
    report=$(python3 - "$dir" "$prefix" "$N" <<'EOF'
import collections, glob, json, sys
d, prefix, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
want = {"%s-%03d" % (prefix, i) for i in range(n)}
ids = collections.Counter()
wrong = 0
for f in glob.glob(d + "/*.body"):
    r = json.loads(open(f, "rb").read())
    ids[r["SourceID"]] += 1
    if r["ErrorCode"] != 0 or r["Body"] != r["SourceID"]:
        wrong += 1
print("results=%d distinct=%d duplicates=%d unexpected=%d missing=%d wrong=%d" % (
    sum(ids.values()), len(ids), sum(c - 1 for c in ids.values()),
    len(set(ids) - want), len(want - set(ids)), wrong))
EOF
)
    same "$v: every plan answered exactly once, with its own result" \
        "results=$N distinct=$N duplicates=0 unexpected=0 missing=0 wrong=0" "$report"
    same "$v: each plan's script ran once" \
        "$N $N" "$(grep -c "^$prefix-" "$runlog") $(grep "^$prefix-" "$runlog" | sort -u | wc -l)"
    same "$v: no further result comes" 0 "$(amqp drain --idle 2000 "$rq")"
    same "$v: the plan queue is empty (ready, unacked)" "0 0" "$(queue_counts "$q")"
    same "$v: the journal holds no entry" "" "$(journal_entries a)"
}

ms() { date +%s%3N; }

# ---- A: queued before the agent starts ----
make_plans "$T/plans-a" a 1000 || bail "cannot write the plans"
t0=$(ms)
amqp publish "$q" "$T"/plans-a/*.json >/dev/null || bail "cannot publish"
t1=$(ms)
diag "A: published $N plans in $((t1 - t0)) ms"
same "A: $N plans wait in the queue" "$N 0" "$(amqp count "$q")"
mkdir -p "$T/res-a"
amqp drain --count "$N" --idle 60000 --timeout 300 --out "$T/res-a" "$rq" >"$T/drain-a" &
drain=$!
EXTRA_PIDS+=("$drain")
t0=$(ms)
agent_start a
wait "$drain"
t1=$(ms)
same "A: $N results drained" "$N" "$(cat "$T/drain-a")"
diag "A: agent start to last result: $((t1 - t0)) ms ($((N * 1000 / (t1 - t0 + 1))) plans/s)"
verify A a "$T/res-a"

# ---- B: published while the agent runs ----
make_plans "$T/plans-b" b 2000 || bail "cannot write the plans"
mkdir -p "$T/res-b"
amqp drain --count "$N" --idle 60000 --timeout 300 --out "$T/res-b" "$rq" >"$T/drain-b" &
drain=$!
EXTRA_PIDS+=("$drain")
sleep 0.5 # let the drain's consumer start
t0=$(ms)
amqp publish "$q" "$T"/plans-b/*.json >/dev/null || bail "cannot publish"
t1=$(ms)
wait "$drain"
t2=$(ms)
same "B: $N results drained" "$N" "$(cat "$T/drain-b")"
diag "B: published in $((t1 - t0)) ms; first publish to last result: $((t2 - t0)) ms ($((N * 1000 / (t2 - t0 + 1))) plans/s)"
verify B b "$T/res-b"

check "the agent is still running" agent_alive a
agent_stop a
same "SIGTERM: the agent exits 0" 0 "$AGENT_STATUS"
same "the log has no error or warning" "" "$(grep -E ' (ERROR|WARNING) ' "$T/a/log" | head -5)"

done_testing
