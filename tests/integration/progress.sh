#!/bin/bash
# Live progress events (docs/operations.md, "Live progress"): with
# [agent] progress_routing_key set, muranoagent-send --follow shows a
# script's first output line seconds before the plan's result; the events
# come in order, numbered, never to the results' routing key; output is
# bounded and rate-limited; nobody listening costs nothing but the events.
# The plans' scripts are written in single quotes: $1 is theirs.
# shellcheck disable=SC2016
# shellcheck source=tests/integration/common.sh
. "$(dirname "$0")/common.sh"

key=$(qname a)-progress
agent_conf a "progress_routing_key = $key"
queues a
agent_up a
check "the agent says where the events go" \
    log_has a "progress events go to exchange '' with routing key '$key'"
ms() { date +%s%3N; }

# ---- --follow: the first line long before the result ----
script_plan "$T/slow.json" plan-slow 'echo first line; sleep 3; echo second line'
snd --queue "$q" --results-queue "$rq" --timeout 60 --follow "$key" --raw "$T/slow.json" \
    >"$T/slow.out" 2> >(while IFS= read -r line; do echo "$(ms) $line"; done >"$T/slow.err")
rc=$?
t_result=$(ms)
sleep 0.2 # the stamping subshell writes its last line
same "--follow: the plan's result, exit 0" 0 "$rc"
note <"$T/slow.err"
t_first=$(awk '/script run \| first line/ { print $1; exit }' "$T/slow.err")
check "--follow printed the first output line" test -n "$t_first"
gap=$((t_result - ${t_first:-t_result}))
check "the first line came $gap ms before the result (>= 2500)" test "$gap" -ge 2500
events=$(cut -d' ' -f2- "$T/slow.err" | sed -E 's/^[0-9:.]+ //; s/in [0-9.]+ s/in S/; s/pid [0-9]+/pid P/')
same "the events, in order, numbered from 1" "$(
    cat <<'EOF_EVENTS'
#1 plan plan-slow accepted
#2 script run started (pid P)
#3 script run | first line
#4 script run | second line
#5 script run finished: exit code 0 in S
#6 plan plan-slow finished: ErrorCode 0 in S
EOF_EVENTS
)" "$events"
grep -q 'second line' "$T/slow.out"
check "stdout holds the result alone" test $? -eq 0
same "nothing else reached the results queue" "0 0" "$(queue_counts "$rq")"

# ---- the events themselves, and the output limits ----
amqp declare "$key" >/dev/null
script_plan "$T/loud.json" plan-loud \
    'head -c 3000000 /dev/zero | tr "\0" x; sleep 0.6; printf "\n\303"; sleep 1; printf "\251 end\n"'
amqp publish "$q" "$T/loud.json" >/dev/null
mkdir -p "$T/res" "$T/ev"
same "the loud plan's result" 1 "$(amqp drain --count 1 --idle 30000 --out "$T/res" "$rq")"
amqp drain --idle 2000 --out "$T/ev" "$key" >/dev/null
python3 - "$T/ev" >"$T/ev.txt" <<'EOF_PY'
import glob, json, sys
msgs = [json.load(open(p)) for p in sorted(glob.glob(sys.argv[1] + "/*.body"))]
evs = [e for m in msgs for e in m]
out = [e for e in evs if e["event"] == "output"]
print("kinds", " ".join(e["event"] for e in evs if e["event"] != "output"))
print("seq", [e["seq"] for e in evs] == list(range(1, len(evs) + 1)))
print("plan", set(e["plan"] for e in evs) == {"plan-loud"})
print("chunks", len(out), max(len(e["text"].encode()) for e in out))
print("dropped", sum(e["dropped"] for e in out))
print("tail", repr("".join(e["text"] for e in out)[-7:]))
print("messages", len(msgs), len(evs))
print("props", open(sys.argv[1] + "/00001.props").read().replace("\n", " "))
EOF_PY
note <"$T/ev.txt"
same "every kind, in order" "kinds accepted script_started script_finished plan_finished" \
    "$(grep ^kinds "$T/ev.txt")"
same "seq counts 1, 2, 3, ... without a gap" "seq True" "$(grep ^seq "$T/ev.txt")"
same "every event names the plan" "plan True" "$(grep ^plan "$T/ev.txt")"
read -r _ n_chunks biggest < <(grep ^chunks "$T/ev.txt")
check "3 MB of output: $n_chunks chunks (<= 12), the largest $biggest bytes (<= 4096)" \
    test "$n_chunks" -le 12 -a "$biggest" -le 4096
read -r _ dropped < <(grep ^dropped "$T/ev.txt")
check "what did not fit is counted ($dropped bytes left out)" test "$dropped" -ge 2900000
same "a UTF-8 character split across writes arrives whole" "tail '\\né end\\n'" \
    "$(grep ^tail "$T/ev.txt")"
grep -q "routing_key: \"$key\" " "$T/ev.txt"
check "published with the progress routing key" test $? -eq 0

# ---- a short plan: one message ----
script_plan "$T/short.json" plan-short 'echo hello'
amqp publish "$q" "$T/short.json" >/dev/null
mkdir -p "$T/res1" "$T/ev1"
same "the short plan's result" 1 "$(amqp drain --count 1 --idle 20000 --out "$T/res1" "$rq")"
amqp drain --idle 1000 --out "$T/ev1" "$key" >/dev/null
same "a short plan's 5 events go as one message" "messages 1 5" \
    "$(python3 - "$T/ev1" <<'EOF_PY'
import glob, json, sys
msgs = [json.load(open(p)) for p in sorted(glob.glob(sys.argv[1] + "/*.body"))]
print("messages", len(msgs), sum(len(m) for m in msgs))
EOF_PY
)"

# ---- nobody listening ----
ctl delete_queue "$key" >/dev/null 2>&1
script_plan "$T/quiet.json" plan-quiet 'echo hello'
amqp publish "$q" "$T/quiet.json" >/dev/null
mkdir -p "$T/res2"
same "no queue for the events: the result still comes" 1 \
    "$(amqp drain --count 1 --idle 20000 --out "$T/res2" "$rq")"
status=$("$MURANOAGENT" --config-file "$T/a/agent.conf" status --json)
same "status counts the events: all sent, none dropped by the agent" "True 0" \
    "$(python3 -c 'import json, sys; p = json.load(sys.stdin)["progress"]; print(p["sent"] >= 18, p["dropped"])' <<<"$status")"

# ---- a key that would reach the results is refused ----
agent_stop a
agent_conf b "progress_routing_key = $(qname b)-results"
queues b
agent_up b
check "progress_routing_key = the results' key: refused, progress off" \
    log_has b "progress_routing_key '$(qname b)-results' is the results' routing key; progress events are off"
agent_stop b
done_testing
