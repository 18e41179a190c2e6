#!/bin/bash
# Test 1: round trips through the daemon. Each example plan goes in as the
# engine sends it (muranoagent-send --raw); its result comes out on the
# results queue byte-identical to what `muranoagent run` prints for the same
# plan, apart from the result's ID and Time, with exactly the reference's
# AMQP properties (spec 2.4) on the default exchange with the
# result_routing_key. A callRaw plan without an ID is answered under the
# message_id (engine observation 5). The journal is empty afterwards.
# The plans' scripts are written in single quotes: $1 is theirs.
# shellcheck disable=SC2016
# shellcheck source=tests/integration/common.sh
. "$(dirname "$0")/common.sh"

examples=$ITEST_ROOT/plans/examples
agent_conf a
queues a
agent_up a
ok "the agent consumes its queue (declared by the engine, not by the agent)"

# want_props SOURCE_ID: the properties the reference publishes a result with.
want_props() {
    printf '%s\n' 'exchange: ""' "routing_key: \"$rq\"" 'redelivered: false' \
        'content_type: "text/plain"' 'content_encoding: "utf-8"' 'headers: {}' \
        'delivery_mode: 2' 'priority: 0' "message_id: \"$1\""
}
plan_id() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["SourceID"])' "$1"; }

i=0
for plan in telnet.yaml hello.json runcommand.yaml putfile.yaml apache.yaml; do
    i=$((i + 1))
    out=$T/out$i
    mkdir -p "$out"
    t0=$(date +%s%N)
    snd --queue "$q" --no-wait --raw "$examples/$plan" >"$T/id$i" 2>"$T/err$i" ||
        { not_ok "$plan: published"; sed 's/^/# /' "$T/err$i"; continue; }
    got=$(amqp drain --count 1 --idle 20000 --out "$out" "$rq")
    t1=$(date +%s%N)
    same "$plan: one result on $rq" 1 "$got"
    [ -f "$out/00001.body" ] || continue
    diag "$plan: round trip $(((t1 - t0) / 1000000)) ms"
    "$MURANOAGENT" --config-file "$T/a/agent.conf" run "$examples/$plan" \
        --storage "$T/run-storage" >"$T/run$i" 2>/dev/null
    # `run` ends its document with a newline; the message body has none.
    same "$plan: result bytes equal muranoagent run's (ID and Time aside)" \
        "$(mask_result <"$T/run$i")" "$(mask_result <"$out/00001.body")"
    check "$plan: the message body has no trailing newline" \
        test "$(tail -c 1 "$out/00001.body" | od -An -tx1 | tr -d ' ')" = 7d
    same "$plan: the result answers the plan's ID" "$(cat "$T/id$i")" "$(plan_id "$out/00001.body")"
    same "$plan: AMQP properties are exactly the reference's" \
        "$(want_props "$(cat "$T/id$i")")" "$(cat "$out/00001.props")"
done

# callRaw: no ID in the plan; the AMQP message_id stands in (spec 4.3).
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); del p["ID"]; print(json.dumps(p))' \
    "$examples/hello.json" >"$T/noid.json"
mkdir -p "$T/out-noid"
amqp publish --message-id raw-call-1 "$q" "$T/noid.json" >/dev/null
same "a plan without ID: one result" 1 "$(amqp drain --count 1 --idle 20000 --out "$T/out-noid" "$rq")"
same "a plan without ID is answered under its message_id" \
    "$(printf 'raw-call-1\t0\t"hello, world"')" "$(results_table "$T/out-noid" | cut -f1,2,4)"
same "its properties carry the message_id" "$(want_props raw-call-1)" \
    "$(cat "$T/out-noid/00001.props" 2>/dev/null)"

# Python's unbounded ints: a Parameter beyond 64 bits reaches the Body
# (through the journal's plan.json), and the result (through result.json)
# carries big values back with every digit, under the plan's ID.
printf '%s\n' '{"FormatVersion": "2.0.0", "ID": "big-ints-1", "Body": "return args.big * 100, args.list[0] + 1, 2 ** 64", "Files": {}, "Scripts": {}, "Stamp": 1, "Parameters": {"big": 1180591620717411303424, "list": [123456789012345678901234567890]}}' >"$T/big.json"
mkdir -p "$T/out-big"
amqp publish --message-id big-1 "$q" "$T/big.json" >/dev/null
same "integers beyond 64 bits: one result" 1 \
    "$(amqp drain --count 1 --idle 20000 --out "$T/out-big" "$rq")"
same "integers beyond 64 bits: exact in the result, under the plan's ID" \
    "$(printf 'big-ints-1\t0\t[118059162071741130342400, 123456789012345678901234567891, 18446744073709551616]')" \
    "$(results_table "$T/out-big" | cut -f1,2,4)"

# The engine's own round trip: muranoagent-send builds the plan from a
# package template (scripts embedded, fresh ID and Stamp) and waits.
snd --queue "$q" --results-queue "$rq" --timeout 60 \
    "$TEST_DATA_DIR/integration/engine/Resources/greet.template" >"$T/send.out" 2>"$T/send.err"
same "muranoagent-send waits for the engine-built plan's result and exits 0" 0 "$?"
same "muranoagent-send prints the result" \
    "$(printf '0\t"hello, integration, from the engine-built plan"')" \
    "$(mkdir -p "$T/send" && cp "$T/send.out" "$T/send/1.body" && results_table "$T/send" | cut -f2,4)"

# enable_dynamic_result_queue: the result goes to the plan's ReplyTo, which
# is taken out of the body (spec 2.4), on a second agent.
agent_conf d "[DEFAULT]" "enable_dynamic_result_queue = true"
dq=$(qname d)
reply=$dq-reply
amqp declare "$dq" "$dq-results" "$reply" >/dev/null
agent_up d
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); p["ReplyTo"]=sys.argv[2]; print(json.dumps(p))' \
    "$examples/hello.json" "$reply" >"$T/reply.json"
amqp publish "$dq" "$T/reply.json" >/dev/null
mkdir -p "$T/out-reply"
same "ReplyTo: one result on the plan's ReplyTo queue" 1 \
    "$(amqp drain --count 1 --idle 20000 --out "$T/out-reply" "$reply")"
"$MURANOAGENT" --config-file "$T/d/agent.conf" run "$T/reply.json" --storage "$T/run-storage" \
    2>/dev/null | python3 -c 'import json,sys
r = json.loads(sys.stdin.read())
assert r.pop("ReplyTo") == sys.argv[1]
print(json.dumps(r))' "$reply" >"$T/run-reply"
same "ReplyTo: the body is muranoagent run's without its ReplyTo key (ID and Time aside)" \
    "$(mask_result <"$T/run-reply")" "$(mask_result <"$T/out-reply/00001.body")"
same "ReplyTo: routed by it, with the reference's properties" \
    "$(printf '%s\n' 'exchange: ""' "routing_key: \"$reply\"" 'redelivered: false' \
        'content_type: "text/plain"' 'content_encoding: "utf-8"' 'headers: {}' \
        'delivery_mode: 2' 'priority: 0' 'message_id: "5b0f6a0d2c7e4e1f9a3b8c6d4e2f1a07"')" \
    "$(cat "$T/out-reply/00001.props" 2>/dev/null)"
same "ReplyTo: nothing on result_routing_key" 0 "$(amqp drain --idle 1000 "$dq-results")"
agent_stop d
same "the second agent exits 0" 0 "$AGENT_STATUS"

# Large deliveries, whose checks take the delivery as it was stored (the
# held delivery, daemon-pump.c) and whose file is decoded into place in
# pieces (agent/files/): a plan carrying a 96 KiB file, and a 100 KB body
# that is not JSON, each answered once and rightly.
python3 - "$T/big.json" <<'PYEOF'
import base64, json, sys
data = bytes((i * 7 + 3) % 256 for i in range(98304))
plan = {
    "FormatVersion": "2.1.0", "Version": "1.0.0", "Name": "itest big", "ID": "big",
    "Action": "Execute", "Body": "return run().stdout",
    "Scripts": {"run": {"Type": "Application", "Version": "1.0.0", "EntryPoint": "f1",
                        "Files": ["d1"], "Options": {"captureStdout": True}}},
    "Files": {"f1": {"Name": "run.sh", "BodyType": "Text",
                     "Body": "#!/bin/sh\nwc -c < data.bin\nsha256sum < data.bin\n"},
              "d1": {"Name": "data.bin", "BodyType": "Base64",
                     "Body": base64.b64encode(data).decode()}},
}
open(sys.argv[1], "w").write(json.dumps(plan))
PYEOF
head -c 100000 /dev/zero | tr '\0' x >"$T/bignonjson"
amqp publish "$q" "$T/big.json" >/dev/null
amqp publish --message-id big-nonjson "$q" "$T/bignonjson" >/dev/null
mkdir -p "$T/out-big"
same "large deliveries: two results" 2 "$(amqp drain --count 2 --idle 20000 --out "$T/out-big" "$rq")"
same "a plan with a 96 KiB file: its script read the file whole" \
    "$(printf 'big\t0\t"98304\\n%s  -"' "$(python3 -c 'import hashlib; print(hashlib.sha256(bytes((i * 7 + 3) % 256 for i in range(98304))).hexdigest())')")" \
    "$(results_table "$T/out-big" | grep '^big	' | cut -f1,2,4)"
same "a 100 KB body that is not JSON: error 1" "$(printf 'big-nonjson\t1')" \
    "$(results_table "$T/out-big" | grep '^big-nonjson	' | cut -f1,2)"

# Nothing extra came and nothing is left.
same "no further message on $rq" 0 "$(amqp drain --idle 1500 "$rq")"
same "the plan queue is empty (ready, unacked)" "0 0" "$(queue_counts "$q")"
same "the journal holds no entry" "" "$(journal_entries a)"
agent_stop a
same "SIGTERM: the agent exits 0" 0 "$AGENT_STATUS"
same "the log has no error or warning but the non-JSON body's" "" \
    "$(grep -E ' (ERROR|WARNING) ' "$T/a/log" | grep -v '\[plan big-nonjson\] .*Plan is not valid JSON')"

done_testing
