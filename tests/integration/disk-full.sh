#!/bin/bash
# Issue 12, item 2: a full disk never stalls the queue. The agent's storage
# is a small tmpfs that this test mounts in a mount namespace of its own
# (unshare -m; it needs root), once with the journal's write-ahead log and
# once without (full_case below). A plan too large for it is answered at once
# with ErrorCode 104 and acked, and the small plans behind it run; with the
# disk filled to the last block, plans are answered with 104 from the
# journal's reserve, each exactly once; the condition shows in the log and
# in systemd's STATUS= line, and ends by itself when room comes back, after
# which a large plan runs again. Done records stay within their bound.
# The journal check is eval'd: its $(...) is meant to wait.
# shellcheck disable=SC2016
if [ -z "${DISK_FULL_NS:-}" ]; then
    if [ "$(id -u)" != 0 ] || ! unshare -m true 2>/dev/null; then
        echo "1..0 # SKIP needs root and unshare -m for a private tmpfs"
        exit 0
    fi
    DISK_FULL_NS=1 exec unshare -m --propagation private "$0" "$@"
fi
# shellcheck source=tests/integration/common.sh
. "$(dirname "$0")/common.sh"

# The tmpfs is detached at once (lazily: the agent may still be there),
# so that itest_cleanup can remove $T.
trap 'umount -l "$T/a/storage" "$T/w/storage" 2>/dev/null; itest_cleanup' EXIT

# sized_plan FILE ID BYTES: a plan that runs one small script and carries
# a file of BYTES bytes that no script uses.
sized_plan() {
    python3 - "$@" <<'EOF_PY'
import json, sys
path, pid, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
plan = {
    "FormatVersion": "2.1.0", "Version": "1.0.0", "Name": "itest " + pid,
    "Parameters": {"n": 123456789012345678901234567890},  # read as Python reads it
    "Body": "return run().stdout",
    "Scripts": {"run": {"Type": "Application", "Version": "1.0.0", "EntryPoint": "f1",
                        "Files": [], "Options": {"captureStdout": True, "captureStderr": True}}},
    "Files": {"f1": {"Name": "run.sh", "BodyType": "Text", "Body": "#!/bin/sh\necho ran\n"},
              "pad": {"Name": "pad.txt", "BodyType": "Text", "Body": "x" * n}},
    "ID": pid, "Action": "Execute",
}
open(path, "w").write(json.dumps(plan))
EOF_PY
}
mkdir -p "$T/plans"
sized_plan "$T/plans/big" big $((3 << 20))
sized_plan "$T/plans/big-2" big-2 $((3 << 20))
for i in 1 2 3; do sized_plan "$T/plans/small-$i" "small-$i" 100; done
for i in 1 2 3; do sized_plan "$T/plans/full-$i" "full-$i" 100; done
sized_plan "$T/plans/large" large $((500 << 10))

# full_case AGENT SIZE [CONFIG LINES...]: the test with AGENT, whose storage
# is a tmpfs of SIZE.
full_case() {
    local a=$1 size=$2 n_room done_kib start took
    shift 2
    agent_conf "$a" "$@"
    mkdir -p "$T/$a/storage"
    mount -t tmpfs -o "size=$size,mode=0700" muranoagent-itest "$T/$a/storage" || bail "cannot mount a tmpfs"
    queues "$a"

    # Every STATUS= line the agent sends is appended to $T/status.
    notify_listen "$T/$a.sock" "$T/$a.status" status || bail "the notify socket did not appear"

    agent_start "$a" NOTIFY_SOCKET="$T/$a.sock"
    agent_wait_consuming "$a" || bail "the agent did not start consuming"
    check "the journal keeps a reserve for answers" test -f "$T/$a/storage/plans/reserve"

    # 1. A plan larger than the disk, and small plans behind it.
    start=$SECONDS
    amqp publish "$q" "$T/plans/big" "$T/plans/small-1" "$T/plans/small-2" "$T/plans/small-3" \
        >/dev/null || bail "cannot publish"
    mkdir -p "$T/$a-r1"
    same "four results for four plans" 4 "$(amqp drain --count 4 --idle 30000 --out "$T/$a-r1" "$rq")"
    took=$((SECONDS - start))
    check "promptly (${took} s, at most 20)" test "$took" -le 20
    same "the big plan: ErrorCode 104 under its ID; the small ones ran" \
        "$(printf '%s\n' 'big	104' 'small-1	0' 'small-2	0' 'small-3	0')" \
        "$(results_table "$T/$a-r1" | cut -f1,2 | sort)"
    same "the big plan's error says why" \
        '"The plan cannot be stored on the agent'"'"'s disk (No space left on device); it was not run"' \
        "$(results_table "$T/$a-r1" | awk -F'\t' '$1 == "big" { print $4 }' |
            python3 -c 'import json, sys; print(json.dumps(json.loads(sys.stdin.read())["Message"]))')"
    check "the log names the plan and the code" \
        log_has "$a" "\[plan big\] cannot store the plan \([0-9]+ bytes\): No space left on device; answered it with ErrorCode 104"
    check "the log shows the condition" log_has "$a" "storage .* is full \(No space left on device\)"
    check "STATUS= shows it" grep -q "storage full (No space left on device)" "$T/$a.status"
    check "the condition ended when the small plans were stored" \
        wait_for 15 log_has "$a" "storage .* has room again"

    # The answer's SourceID is the body's ID, also when the message_id differs
    # and the body holds an integer beyond 64 bits (as every plan here does).
    amqp publish --message-id not-the-plan-id "$q" "$T/plans/big-2" >/dev/null || bail "cannot publish"
    mkdir -p "$T/$a-r1b"
    same "a big plan sent under another message_id" 1 \
        "$(amqp drain --count 1 --idle 30000 --out "$T/$a-r1b" "$rq")"
    same "is answered 104 under its body's ID" "$(printf 'big-2\t104')" \
        "$(results_table "$T/$a-r1b" | cut -f1,2)"

    # 2. The disk filled to its last block: plans are answered from the reserve.
    dd if=/dev/zero of="$T/$a/storage/filler" bs=4k 2>/dev/null
    check "the disk is full" test "$(df --output=avail -k "$T/$a/storage" | tail -1)" -lt 8
    amqp publish "$q" "$T/plans/full-1" "$T/plans/full-2" "$T/plans/full-3" >/dev/null ||
        bail "cannot publish"
    mkdir -p "$T/$a-r2"
    same "three results on a full disk" 3 "$(amqp drain --count 3 --idle 30000 --out "$T/$a-r2" "$rq")"
    same "each ErrorCode 104 under its ID" "$(printf '%s\n' 'full-1	104' 'full-2	104' 'full-3	104')" \
        "$(results_table "$T/$a-r2" | cut -f1,2 | sort)"
    same "each exactly once" 0 "$(amqp drain --idle 3000 "$rq")"
    same "the plan queue is empty: nothing waits" "0 0" "$(queue_counts "$q")"
    # Their entries, gone, gave the pieces of the reserve back.
    check "the disk is still full: the answers came from the reserve" \
        test "$(df --output=avail -k "$T/$a/storage" | tail -1)" -lt 8
    check "the agent is still running" agent_alive "$a"

    # 3. Room again: the condition ends by itself, and a large plan runs.
    n_room=$(count_lines "$T/$a/log" "has room again")
    rm -f "$T/$a/storage/filler"
    check "the condition ends by itself" wait_for 20 log_has "$a" "storage .* has room again" $((n_room + 1))
    check "the reserve is whole again" \
        test "$(stat -c %s "$T/$a/storage/plans/reserve")" -eq $((256 << 10))
    check "STATUS= is back to consuming" \
        wait_for 10 eval '[ "$(tail -n1 "$T/$a.status")" = "consuming from $q; 3 plans done" ]'
    amqp publish "$q" "$T/plans/large" >/dev/null || bail "cannot publish"
    mkdir -p "$T/$a-r3"
    same "a 500 KiB plan: stored and run" "large	0" \
        "$(amqp drain --count 1 --idle 30000 --out "$T/$a-r3" "$rq" >/dev/null; results_table "$T/$a-r3" | cut -f1,2)"

    # 4. Done records: a few dozen plans more, and their records stay small.
    for i in $(seq 1 40); do sized_plan "$T/plans/many-$i" "many-$i" 10; done
    amqp publish "$q" "$T/plans"/many-* >/dev/null || bail "cannot publish"
    mkdir -p "$T/$a-r4"
    same "40 more plans answered" 40 "$(amqp drain --count 40 --idle 30000 --out "$T/$a-r4" "$rq")"
    wait_for 10 eval '[ -z "$(journal_entries "$a")" ]'
    same "the journal holds no entry" "" "$(journal_entries "$a")"
    done_kib=$(du -sk "$T/$a/storage/plans/done" | cut -f1)
    diag "done records of $(find "$T" -path "$T/$a-r*/*.body" | wc -l) plans: $done_kib KiB"
    check "done records take at most 64 KiB ($done_kib)" test "$done_kib" -le 64

    agent_stop "$a"
    same "SIGTERM: the agent exits 0" 0 "$AGENT_STATUS"
}

# With the journal's write-ahead log (the default): a tmpfs with room for
# journal.log (8 MiB), made at the first start, and 3 MiB more, which the
# test then fills; the log, written in place, needs no more.
full_case a 11m
check "a: the journal kept its write-ahead log" test -s "$T/a/storage/journal.log"
same "a: and never went without it" 0 "$(count_lines "$T/a/log" "cannot make .*journal.log")"
# Without it (journal_log = false), on 2 MiB.
full_case w 2m "journal_log = false"
check "w: no journal.log" test ! -e "$T/w/storage/journal.log"

done_testing
