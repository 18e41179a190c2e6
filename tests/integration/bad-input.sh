#!/bin/bash
# Test 5 (no engine_key): messages that are not plans, and the engine's
# readiness probe. A non-JSON body, a JSON array and an invalid plan
# (validation, ErrorCode 2) are each answered once with an error result (the
# reference re-sent a stamp-less invalid plan's error about 200 times a
# second and never consumed again, spec 10.3); the probe
# {"Body": "return", "FormatVersion": "2.0.0", "Scripts": {}} sent raw is
# answered once with a success result whose Body is null (engine
# observation 6). The agent keeps consuming: a good plan sent last is
# answered. A body over max_plan_size is answered at once. Nothing is left
# in the queue or the journal. A plan planted in the journal and a result
# forged into it are refused for their seal, and the next plan runs.
# The plans' scripts are written in single quotes: $1 is theirs.
# shellcheck disable=SC2016
# shellcheck source=tests/integration/common.sh
. "$(dirname "$0")/common.sh"

agent_conf a "max_plan_size = 4K"
queues a
agent_up a

printf 'this is not json' >"$T/nonjson"
printf '[1, 2, 3]' >"$T/array"
printf '%s' '{"FormatVersion": "2.0.0", "ID": "m-invalid", "Body": "return", "Scripts": {"s": {"Type": "Application", "Version": "1.0.0", "EntryPoint": "nofile", "Files": [], "Options": {}}}, "Files": {}}' >"$T/invalid"
printf '%s' '{"Body": "return", "FormatVersion": "2.0.0", "Scripts": {}}' >"$T/probe"
script_plan "$T/good.json" m-good "$(printf '#!/bin/sh\necho "good $1"\n')"

if ! {
    amqp publish --message-id m-nonjson "$q" "$T/nonjson" >/dev/null &&
    amqp publish --message-id m-array "$q" "$T/array" >/dev/null &&
    amqp publish --message-id m-invalid-msg "$q" "$T/invalid" >/dev/null &&
    amqp publish --message-id m-probe "$q" "$T/probe" >/dev/null &&
    amqp publish "$q" "$T/good.json" >/dev/null
}; then
    bail "cannot publish"
fi

mkdir -p "$T/res"
got=$(amqp drain --count 5 --idle 20000 --out "$T/res" "$rq")
same "five results for five messages" 5 "$got"
# Anything more within 3 s would be a repeated answer.
same "and nothing more (each answered once)" 0 "$(amqp drain --idle 3000 "$rq")"

want() { printf '{"FormatVersion": "2.0.0", "ID": "<id>", "SourceID": "%s", "Action": "Execution:Result", "ErrorCode": %s, "Body": %s, "Time": "<time>"%s}\n' "$@"; }
body() { mask_result <"$T/res/0000$1.body" 2>/dev/null; echo; }
same "a non-JSON body: error 1 under its message_id, without ReplyTo (not executed)" \
    "$(want m-nonjson 1 '{"Message": "Plan is not valid JSON: invalid token near '"'this'"' (line 1, column 4)", "AdditionalInfo": null}' '')" \
    "$(body 1)"
same "a JSON array: error 1" \
    "$(want m-array 1 '{"Message": "Plan is not a JSON object (got an array)", "AdditionalInfo": null}' '')" \
    "$(body 2)"
same "an invalid plan: error 2 under the plan's own ID, as the reference words it" \
    "$(want m-invalid 2 '{"Message": "Script s misses entry point nofile", "AdditionalInfo": null}' '')" \
    "$(body 3)"
same "the readiness probe: success, Body null, under its message_id" \
    "$(want m-probe 0 null ', "ReplyTo": null')" "$(body 4)"
same "the agent kept consuming: the good plan is answered" \
    "$(want m-good 0 '"good m-good"' ', "ReplyTo": null')" "$(body 5)"
same "the invalid plan's error went out with the reference's properties" \
    "$(printf '%s\n' 'exchange: ""' "routing_key: \"$rq\"" 'redelivered: false' \
        'content_type: "text/plain"' 'content_encoding: "utf-8"' 'headers: {}' \
        'delivery_mode: 2' 'priority: 0' 'message_id: "m-invalid"')" "$(cat "$T/res/00003.props")"

# The probe again, as waitReady polls it: one answer per probe.
for i in 1 2 3; do
    amqp publish --message-id "m-probe-$i" "$q" "$T/probe" >/dev/null
done
mkdir -p "$T/res2"
amqp drain --count 3 --idle 10000 --out "$T/res2" "$rq" >/dev/null
same "three probes, three answers, in order" \
    "$(printf 'm-probe-%s\t0\tnull\n' 1 2 3)" "$(results_table "$T/res2" | cut -f1,2,4)"
same "nothing more" 0 "$(amqp drain --idle 2000 "$rq")"

# A body over max_plan_size is answered at once, not kept.
head -c 5000 /dev/zero | tr '\0' ' ' >"$T/big"
amqp publish --message-id m-big "$q" "$T/big" >/dev/null
mkdir -p "$T/res3"
amqp drain --count 1 --idle 10000 --out "$T/res3" "$rq" >/dev/null
same "a 5000-byte body with max_plan_size 4K: error 1, under its message_id" \
    "$(want m-big 1 '{"Message": "Plan is larger than 4096 bytes", "AdditionalInfo": null}' '')" \
    "$(mask_result <"$T/res3/00001.body" 2>/dev/null; echo)"

same "the plan queue is empty (ready, unacked)" "0 0" "$(queue_counts "$q")"
same "the journal holds no entry" "" "$(journal_entries a)"
check "the agent is still running" agent_alive a
agent_stop a
same "SIGTERM: the agent exits 0" 0 "$AGENT_STATUS"

# A result.json that is no JSON object, found at the next start ahead of a
# plan: logged and removed (on the thread pool), not published, and the
# plan behind it runs. Both files are written as a version before seals
# left them: without the agent's key, which the start makes again, accepting
# what it finds this once (docs/journal.md, "Seals").
rm "$T/a/storage/journal.key"
mkdir -p "$T/a/storage/plans/100" "$T/a/storage/plans/200"
printf '[1]' >"$T/a/storage/plans/100/result.json"
printf '{"Data": "%s", "Signature": "", "ID": "m-after", "ReplyTo": null}' \
    "$(base64 -w0 "$T/probe")" >"$T/a/storage/plans/200/plan.json"
agent_start a
agent_wait_consuming a 2 || bail "the agent did not start consuming again"
mkdir -p "$T/res4"
amqp drain --count 1 --idle 10000 --out "$T/res4" "$rq" >/dev/null
same "the plan behind it is answered" "$(printf 'm-after\t0')" \
    "$(results_table "$T/res4" | cut -f1,2)"
same "and nothing else" 0 "$(amqp drain --idle 2000 "$rq")"
check "the bad result is logged" log_has a "entry 100: result.json is not a JSON object; dropping it"
same "the journal holds no entry" "" "$(journal_entries a)"
agent_stop a
same "SIGTERM: the agent exits 0" 0 "$AGENT_STATUS"

# With the key in place: a plan planted in the journal and a result forged
# into an entry, by a process without the key. Neither is run nor
# published: each is logged and moved to plans/quarantine; a plan sent
# after them still runs.
mkdir -p "$T/a/storage/plans/300" "$T/a/storage/plans/400"
printf '{"Data": "%s", "Signature": "", "ID": "m-planted", "ReplyTo": null}' \
    "$(base64 -w0 "$T/probe")" >"$T/a/storage/plans/300/plan.json"
printf '{"SourceID": "m-forged", "ErrorCode": 0, "Body": "forged"}' \
    >"$T/a/storage/plans/400/result.json"
agent_start a
agent_wait_consuming a 3 || bail "the agent did not start consuming again"
amqp publish "$q" "$T/good.json" >/dev/null
mkdir -p "$T/res5"
amqp drain --count 1 --idle 10000 --out "$T/res5" "$rq" >/dev/null
same "only the plan sent is answered" "$(printf 'm-good\t0')" \
    "$(results_table "$T/res5" | cut -f1,2)"
same "and nothing else" 0 "$(amqp drain --idle 2000 "$rq")"
check "the planted plan is logged" log_has a \
    "entry 300: plan.json does not carry the agent's seal \(planted or altered by a process without its key\); moved to plans/quarantine, never run"
check "the forged result is logged" log_has a \
    "entry 400: result.json does not carry the agent's seal"
same "both are in plans/quarantine" "300.plan.json 400.result.json" \
    "$(cd "$T/a/storage/plans/quarantine" && echo *)"
same "the journal holds no entry" "" "$(journal_entries a)"
agent_stop a
same "SIGTERM: the agent exits 0" 0 "$AGENT_STATUS"

done_testing
