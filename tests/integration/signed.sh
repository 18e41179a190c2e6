#!/bin/bash
# Tests 5 (signed cases) and 6: an agent with engine_key set (the public half
# of a key made with `openssl genrsa`, written into the config TAB-indented
# as Murano writes it, in PKCS#1 PEM). Messages without a valid signature
# (the engine's void header, no headers at all, a signature over another
# queue name, one made with another key, random bytes) are rejected without
# requeue and never run: no result comes, the queue is empty, and each is
# logged once. A plan signed by muranoagent-send --sign-key (the engine's
# scheme) and one signed with the openssl command line both run.
# The plans' scripts are written in single quotes: $1 is theirs.
# shellcheck disable=SC2016
# shellcheck source=tests/integration/common.sh
. "$(dirname "$0")/common.sh"

openssl genrsa -out "$T/engine.pem" 2048 2>/dev/null || bail "openssl genrsa failed"
openssl genrsa -out "$T/other.pem" 2048 2>/dev/null || bail "openssl genrsa failed"
openssl rsa -in "$T/engine.pem" -RSAPublicKey_out -out "$T/engine.pub" 2>/dev/null ||
    bail "openssl rsa failed"
mapfile -t keylines <"$T/engine.pub"
agent_conf s "[DEFAULT]" "engine_key =" "${keylines[@]/#/$'\t'}"
check "the key is TAB-indented below 'engine_key =' in the config" \
    grep -qP '^\t-----BEGIN RSA PUBLIC KEY-----$' "$T/s/agent.conf"
queues s
runlog=$T/runs.log
agent_up s
check "the agent requires signatures" log_has s "INFO muranoagent plans must be signed \(engine key: RSA 2048 bits\)"

# sign KEY QUEUE FILE OUT: RSA PKCS#1 v1.5 SHA-256 over QUEUE followed by FILE.
sign() { { printf '%s' "$2"; cat "$3"; } | openssl dgst -sha256 -sign "$1" -out "$4"; }

plan() { script_plan "$T/$1.json" "$1" "$(printf '#!/bin/sh\necho "$1" >> %s\necho "ran $1"\n' "$runlog")"; }
for p in unsigned noheaders otherqueue otherkey garbage; do plan "$p"; done
sign "$T/engine.pem" "$q-x" "$T/otherqueue.json" "$T/otherqueue.sig"
sign "$T/other.pem" "$q" "$T/otherkey.json" "$T/otherkey.sig"
head -c 256 /dev/urandom >"$T/garbage.sig"
if ! {
    amqp publish "$q" "$T/unsigned.json" >/dev/null &&
    amqp publish --no-headers "$q" "$T/noheaders.json" >/dev/null &&
    amqp publish --signature "$T/otherqueue.sig" "$q" "$T/otherqueue.json" >/dev/null &&
    amqp publish --signature "$T/otherkey.sig" "$q" "$T/otherkey.json" >/dev/null &&
    amqp publish --signature "$T/garbage.sig" "$q" "$T/garbage.json" >/dev/null
}; then
    bail "cannot publish"
fi
check "five rejections are logged" \
    wait_for 20 log_has s "ERROR muranoagent .*rejecting a message: " 5
same "no result comes for them" 0 "$(amqp drain --idle 2000 "$rq")"
same "they are not requeued: the plan queue is empty (ready, unacked)" "0 0" "$(queue_counts "$q")"
same "each was rejected once, and why" \
    "$(printf '%s\n' "[plan unsigned] rejecting a message: required signature was not found" \
        "[plan noheaders] rejecting a message: required signature was not found" \
        "[plan otherqueue] rejecting a message: invalid signature" \
        "[plan otherkey] rejecting a message: invalid signature" \
        "[plan garbage] rejecting a message: invalid signature")" \
    "$(grep -oE '\[plan [a-z]+\] rejecting a message: .*' "$T/s/log")"
check "none of them ran" test ! -s "$runlog"
same "nothing was kept in the journal" "" "$(journal_entries s)"

# Test 6: correctly signed plans run.
snd --queue "$q" --results-queue "$rq" --timeout 60 --sign-key "$T/engine.pem" \
    "$TEST_DATA_DIR/integration/engine/Resources/greet.template" >"$T/send.out" 2>"$T/send.err"
same "a plan signed by muranoagent-send --sign-key runs (exit 0)" 0 "$?"
mkdir -p "$T/send"
cp "$T/send.out" "$T/send/1.body"
same "and its result is the plan's" "$(printf '0\t"hello, integration, from the engine-built plan"')" \
    "$(results_table "$T/send" | cut -f2,4)"
plan good
sign "$T/engine.pem" "$q" "$T/good.json" "$T/good.sig"
amqp publish --signature "$T/good.sig" "$q" "$T/good.json" >/dev/null
mkdir -p "$T/res"
same "a plan signed with openssl over queue name + body runs" 1 \
    "$(amqp drain --count 1 --idle 20000 --out "$T/res" "$rq")"
same "with its own result" "$(printf 'good\t0\t"ran good"')" "$(results_table "$T/res" | cut -f1,2,4)"
same "only the good plan's script ran" good "$(cat "$runlog")"
same "nothing more comes" 0 "$(amqp drain --idle 2000 "$rq")"
same "the plan queue is empty" "0 0" "$(queue_counts "$q")"
agent_stop s
same "SIGTERM: the agent exits 0" 0 "$AGENT_STATUS"
check "the log never shows the key" test "$(count_lines "$T/s/log" 'BEGIN|MII')" = 0

done_testing
