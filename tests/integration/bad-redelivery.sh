#!/bin/bash
# Test 5 and 9 together: a message that is not a plan, redelivered after a
# crash between storing it and acking it (MURANOAGENT_CRASH_AT=stored), gets
# the same error document as the first time, byte for byte (same result ID
# and Time), as a valid plan does. For each kind of bad body: not JSON, a
# JSON array, a plan with a key given twice; with a message_id, and without
# one (then the journal keys its answer by a digest of the delivery).
# The journal check is eval'd: its $(...) is meant to wait.
# shellcheck disable=SC2016
# shellcheck source=tests/integration/common.sh
. "$(dirname "$0")/common.sh"

agent_conf a
queues a

printf 'this is not json' >"$T/nonjson"
printf '[1, 2, 3]' >"$T/array"
printf '%s' '{"FormatVersion": "2.0.0", "ID": "d1", "ID": "d2", "Body": "return", "Scripts": {}}' >"$T/dupkey"

starts=0
# redeliver NAME FILE [PUBLISH OPTIONS...]: the agent dies right after
# storing FILE, before its ack; started again, it gets the message again.
# Every result is drained into $T/res-NAME.
redeliver() {
    local name=$1 file=$2
    shift 2
    agent_start a MURANOAGENT_CRASH_AT=stored
    starts=$((starts + 1))
    amqp publish "$@" "$q" "$file" >/dev/null || bail "cannot publish"
    agent_wait_exit a 30
    same "$name: the agent died at 'stored'" 137 "$AGENT_STATUS"
    agent_start a
    starts=$((starts + 1))
    agent_wait_consuming a "$starts" || bail "the agent did not start again"
    mkdir -p "$T/res-$name"
    same "$name: stored once, delivered twice: two answers" 2 \
        "$(amqp drain --count 2 --idle 15000 --out "$T/res-$name" "$rq")"
    same "$name: one distinct document, byte for byte" 1 \
        "$(md5sum "$T/res-$name"/*.body | cut -d' ' -f1 | sort -u | wc -l)"
    same "$name: nothing more" 0 "$(amqp drain --idle 1500 "$rq")"
    wait_for 10 eval '[ -z "$(journal_entries a)" ]'
    same "$name: the journal holds no entry" "" "$(journal_entries a)"
    agent_stop a
    same "$name: SIGTERM: the agent exits 0" 0 "$AGENT_STATUS"
}

redeliver nonjson "$T/nonjson" --message-id m-nonjson
same "nonjson: error 1 under its message_id" "m-nonjson	1" \
    "$(results_table "$T/res-nonjson" | head -n1 | cut -f1,2)"
redeliver array "$T/array" --message-id m-array
redeliver dupkey "$T/dupkey" --message-id m-dupkey
same "dupkey: error 1 under the message_id (the plan's ID is unreadable)" "m-dupkey	1" \
    "$(results_table "$T/res-dupkey" | head -n1 | cut -f1,2)"
redeliver nonjson-noid "$T/nonjson" --no-message-id
same "nonjson without message_id: error 1, SourceID empty" "	1" \
    "$(results_table "$T/res-nonjson-noid" | head -n1 | cut -f1,2)"
redeliver array-noid "$T/array" --no-message-id

# Two different bad bodies without message_id are two plans: each has its
# own answer, not the other's.
agent_start a
starts=$((starts + 1))
agent_wait_consuming a "$starts" || bail "the agent did not start again"
amqp publish --no-message-id "$q" "$T/nonjson" "$T/array" >/dev/null || bail "cannot publish"
mkdir -p "$T/two"
same "two different ID-less bad bodies: two answers" 2 \
    "$(amqp drain --count 2 --idle 15000 --out "$T/two" "$rq")"
same "each answered for itself (different messages)" 2 \
    "$(python3 -c 'import glob, json, sys
print(len({json.load(open(f))["Body"]["Message"] for f in glob.glob(sys.argv[1] + "/*.body")}))' "$T/two")"
agent_stop a
same "SIGTERM: the agent exits 0" 0 "$AGENT_STATUS"

done_testing
