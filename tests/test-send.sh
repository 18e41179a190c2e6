#!/bin/bash
# Integration tests of muranoagent-send against a private rabbitmq-server
# (tests/broker.sh), in TAP. What the engine would do is checked on the
# broker's side: queue arguments with rabbitmqctl, message properties and
# signatures with the program's own --consume mode and openssl. The agent is
# played by hand: its plan is taken off the queue and a result published
# with --raw. MURANOAGENT and TEST_DATA_DIR come from meson.
set -u
here=$(cd "$(dirname "$0")" && pwd)
data=${TEST_DATA_DIR:?}/send
send=${MURANOAGENT_SEND:-$(dirname "${MURANOAGENT:?}")/muranoagent-send}

if [ ! -x /usr/lib/rabbitmq/bin/rabbitmq-server ]; then
    echo "1..0 # SKIP rabbitmq-server is not installed (packaging/build-deps.sh)"
    exit 0
fi
[ -x "$send" ] || { echo "Bail out! $send is not built"; exit 1; }

tmp=$(mktemp -d)
broker=$tmp/broker
cleanup() {
    [ -n "${bg:-}" ] && kill "$bg" 2>/dev/null
    "$here/broker.sh" stop "$broker" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
# The broker runs in sessions of its own: stop it even when meson's timeout
# ends this script.
trap 'exit 1' TERM INT HUP

. "$(dirname "$0")/tap.sh"
if ! "$here/broker.sh" start "$broker" 2>"$tmp/start.log"; then
    sed 's/^/# /' "$tmp/start.log"
    echo "Bail out! the broker did not start"
    exit 1
fi
sed 's/^/# /' "$tmp/start.log"
# shellcheck disable=SC1091
. "$broker/env"

# Every run of the program is bounded, so that nothing hangs the suite.
snd() { timeout 60 "$send" --port "$BROKER_PORT" "$@"; }
queues() { "$here/broker.sh" ctl "$broker" list_queues name durable auto_delete arguments messages; }
queue_line() { queues | awk -v q="$1" '$1 == q'; }
plan_id() { sed -E 's/.*"ID": "([0-9a-f]{32})".*/\1/' "$1"; }
# The spec's plan with the fresh IDs and the Stamp replaced by placeholders.
normalise() { sed -E 's/[0-9a-f]{32}/<id>/g; s/"Stamp": [0-9]+/"Stamp": <stamp>/'; }

spec=$data/spec/Resources/application.template
want_spec=$(sed -E 's/"ID[0-9]"/"<id>"/g; s/"Stamp": [0-9]+/"Stamp": <stamp>/' "$data/spec/expected.json")
q=e0123456789abcdef0123456789abcdef-h0123456789abcdef0123456789abcdef
rq=-execution-results-test

# --- building without a broker ---
snd --dry-run "$spec" >"$tmp/dry"; st=$?
same "--dry-run exits 0" 0 "$st"
same "--dry-run prints the engine's plan" "$want_spec" "$(normalise <"$tmp/dry")"
stamp=$(sed -E 's/.*"Stamp": ([0-9]+).*/\1/' "$tmp/dry")
now=$(date +%s)
check "the Stamp is int(time.time() * 10000)" \
    test "$stamp" -ge $(((now - 5) * 10000)) -a "$stamp" -le $(((now + 5) * 10000))

# --- a cancel message (docs/muranoagent-send.md, "Cancelling a plan") ---
snd --dry-run --cancel 5b1f0e3c9d2a4b7e >"$tmp/cancel"; st=$?
same "--cancel --dry-run exits 0" "$st" 0
same "--cancel --dry-run prints the cancel message, byte for byte" \
    "$(sed -E 's/"ID": "[0-9a-f]{32}"/"ID": "<id>"/' "$tmp/cancel")" \
    '{"Control": "Cancel", "PlanID": "5b1f0e3c9d2a4b7e", "ID": "<id>", "Stamp": 0}'
snd --queue "$q" --cancel x "$spec" >/dev/null 2>"$tmp/err"; st=$?
same "--cancel with a plan file is a usage error" "$st" 2
snd --cancel x >/dev/null 2>"$tmp/err"; st=$?
same "--cancel without --queue is a usage error" "$st" 2

# --- publishing as the engine does ---
snd --queue "$q" --no-wait "$spec" >"$tmp/id" 2>"$tmp/err"; st=$?
same "--no-wait exits 0" 0 "$st"
id=$(cat "$tmp/id")
check "--no-wait prints the plan ID" grep -qxE '[0-9a-f]{32}' "$tmp/id"
line=$(queue_line "$q")
same "the agent queue is declared as the engine declares it, with 1 message" \
    "$q	true	false	[{\"x-ha-policy\",\"all\"},{\"x-expires\",86400000}]	1" "$line"

mkdir "$tmp/m1"
snd --consume "$q" --save "$tmp/m1" --timeout 10 >"$tmp/m1.out"; st=$?
same "--consume exits 0" 0 "$st"
check "--consume prints the body it saved" cmp -s "$tmp/m1.out" "$tmp/m1/body"
same "the body is the engine's plan" "$want_spec" "$(normalise <"$tmp/m1/body")"
same "the body carries the printed ID" "$id" "$(plan_id "$tmp/m1/body")"
same "the properties are the engine's, with a void signature header" \
    "content_type: text/plain
content_encoding: utf-8
headers.signature: V
delivery_mode: 2
priority: 0
message_id: $id" "$(cat "$tmp/m1/properties")"
check "an unsigned plan has no signature bytes" test ! -e "$tmp/m1/signature"
same "the consumed message was acked" 0 "$(queue_line "$q" | awk '{print $NF}')"

# --- signing ---
openssl genrsa -out "$tmp/key.pem" 2048 2>/dev/null
openssl rsa -in "$tmp/key.pem" -pubout -out "$tmp/pub.pem" 2>/dev/null
snd --queue "$q" --no-wait --sign-key "$tmp/key.pem" "$spec" >"$tmp/id2"; st=$?
same "a signed plan is sent (exit 0)" 0 "$st"
mkdir "$tmp/m2"
snd --consume "$q" --save "$tmp/m2" --timeout 10 >/dev/null
check "the signature header holds 256 raw bytes" \
    grep -qx 'headers.signature: S 256 bytes' "$tmp/m2/properties"
verifies() { # verifies FILE: the saved signature is valid over FILE's bytes
    openssl dgst -sha256 -verify "$tmp/pub.pem" -signature "$tmp/m2/signature" "$1" >/dev/null 2>&1
}
{ printf '%s' "$q"; cat "$tmp/m2/body"; } >"$tmp/signed"
check "openssl verifies the signature over queue name + body" verifies "$tmp/signed"
rejects() { ! verifies "$1"; }
check "the signature does not verify over the body alone" rejects "$tmp/m2/body"

# --- a round trip, with this script as the agent ---
# result FILE SOURCE_ID ERROR_CODE BODY_JSON: a v2 result as json.dumps writes it
result() {
    printf '{"FormatVersion": "2.0.0", "ID": "%s", "SourceID": "%s", "Action": "Execution:Result", "ErrorCode": %s, "Body": %s, "Time": "2026-01-01 00:00:00.000001", "ReplyTo": null}' \
        "$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')" "$2" "$3" "$4" >"$1"
}
# agent_answers CODE BODY: take the plan off the queue and publish a result
# for another plan first (which the sender must ack and ignore), then its own.
agent_answers() {
    mkdir -p "$tmp/agent"
    snd --consume "$q" --save "$tmp/agent" --timeout 30 >/dev/null || return 1
    result "$tmp/other.json" 00000000000000000000000000000000 0 '"not yours"'
    result "$tmp/result.json" "$(plan_id "$tmp/agent/body")" "$1" "$2"
    snd --raw --queue "$rq" --no-wait "$tmp/other.json" >/dev/null &&
        snd --raw --queue "$rq" --no-wait "$tmp/result.json" >/dev/null
}

# send_answered CODE BODY: send the spec's plan and wait for its result
# while agent_answers CODE BODY; st is the sender's exit status.
send_answered() {
    snd --queue "$q" --results-queue "$rq" --timeout 30 "$spec" >"$tmp/out" 2>"$tmp/err" &
    bg=$!
    agent_answers "$1" "$2"
    wait "$bg"; st=$?
    bg=
}

send_answered 0 '"Deployed"'
same "a success result exits 0" 0 "$st"
check "the result is printed byte for byte" cmp -s "$tmp/out" "$tmp/result.json"
same "the results queue is declared as the engine's listener declares it, and drained" \
    "$rq	true	false	[{\"x-ha-policy\",\"all\"},{\"x-expires\",86400000}]	0" \
    "$(queue_line "$rq")"

send_answered 100 '{"Message": "Script deploy returned error code", "AdditionalInfo": {"exitCode": 1, "stdout": "", "stderr": "boom"}}'
same "an error result exits 1" 1 "$st"
check "the error result is printed" cmp -s "$tmp/out" "$tmp/result.json"

# --- the broker goes away while the sender waits ---
snd --queue "$q" --results-queue "$rq" --timeout 60 "$spec" >"$tmp/out" 2>"$tmp/err" &
bg=$!
mkdir -p "$tmp/agent"
snd --consume "$q" --save "$tmp/agent" --timeout 30 >/dev/null
"$here/broker.sh" restart "$broker" 2 2>>"$tmp/restart.log"
result "$tmp/result.json" "$(plan_id "$tmp/agent/body")" 0 null
snd --raw --queue "$rq" --no-wait "$tmp/result.json" >/dev/null
wait "$bg"; st=$?
bg=
same "after a broker restart the sender reconnects and gets the result (exit 0)" 0 "$st"
check "the result after the restart is printed" cmp -s "$tmp/out" "$tmp/result.json"
check "the reconnect is reported on stderr" grep -q "reconnecting" "$tmp/err"

# --- timeouts and failures ---
snd --queue "$q" --results-queue "$rq" --timeout 2 "$spec" >"$tmp/out" 2>"$tmp/err"; st=$?
same "no answer exits 3" 3 "$st"
same "the timeout is reported in the engine's words" \
    "The murano-agent did not respond within 2 seconds" "$(cat "$tmp/err")"
snd --consume "$q" --timeout 10 >/dev/null 2>&1 # the unanswered plan

snd --consume no-such-queue --timeout 5 >/dev/null 2>"$tmp/err"; st=$?
same "consuming a missing queue exits 4" 4 "$st"
check "the broker's refusal is reported" grep -q "404" "$tmp/err"
printf 'wrong\n' >"$tmp/password"
snd --password-file "$tmp/password" --queue "$q" --no-wait "$spec" >/dev/null 2>"$tmp/err"; st=$?
same "a wrong password exits 4" 4 "$st"
timeout 60 "$send" --port "$BROKER_DIST_PORT" --queue "$q" --no-wait "$spec" >/dev/null 2>&1; st=$?
same "a port without a broker exits 4" 4 "$st"
snd --queue "$q" --no-wait "$tmp/no-such-plan.yaml" >/dev/null 2>&1; st=$?
same "a missing plan file exits 2" 2 "$st"
printf 'FormatVersion: 2.0.0\nScripts:\n  s: {Type: Application, EntryPoint: missing.sh}\n' >"$tmp/bad.yaml"
snd --queue "$q" --no-wait "$tmp/bad.yaml" >/dev/null 2>"$tmp/err"; st=$?
same "a plan naming a missing script exits 2" 2 "$st"
check "the missing script is named" grep -q "scripts/missing.sh: No such file or directory" "$tmp/err"
snd --queue "$q" --no-wait --sign-key "$tmp/nope.pem" "$spec" >/dev/null 2>&1; st=$?
same "an unreadable signing key exits 2" 2 "$st"
snd --queue "$q" "$spec" >/dev/null 2>&1; st=$?
same "neither --results-queue nor --no-wait exits 2" 2 "$st"
same "nothing was published by the failed runs" 0 "$(queue_line "$q" | awk '{print $NF}')"

# --- the broker goes away for good ---
pid=$BROKER_PID
"$here/broker.sh" stop "$broker" 2>"$tmp/stop.log"
sed 's/^/# /' "$tmp/stop.log"
# A stopped process may linger as a zombie until it is reaped; what matters
# is that no process runs our node any more.
check "broker.sh stop ends the broker" \
    bash -c "! grep -qaF '$BROKER_NODE' /proc/$pid/cmdline 2>/dev/null"
check "broker.sh stop removes its directory" test ! -e "$broker"

tap_done
