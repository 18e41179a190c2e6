#!/bin/bash
# Durable Body calls (docs/daemon.md, "Durable calls, resume and reboots"):
# plans of several calls that survive the reboot they ask for and the kill
# -9 they did not, against the real broker. The agent's reboot_command is a
# script that kills the agent with SIGKILL, as a power loss would, and the
# test starts it again on the same storage. Every script appends "<call>
# <plan>" to a counter file outside the storage, so that each start of a
# script is counted.
#
# - a three-call Body whose second script asks for a reboot (exit code 194,
#   its Options' rebootExitCode) gives ONE result, ErrorCode 0, holding all
#   three outputs, and each script started exactly once;
# - a kill -9 during the third call gives 103 naming it (and the reboot,
#   when the boot ID changed), and calls one and two do not run again; an
#   idempotent third call runs again and succeeds;
# - a Body whose calls depend on the time it reads from a file resumes on
#   the path it took (the read is recorded); one that reads the time where
#   the agent does not record it (a file opened for update) and takes
#   another path is caught: ErrorCode 108 naming the divergence;
# - a second reboot request beyond max_reboots ends the plan with 109.
# The scripts are written in single quotes: $1 is theirs.
# shellcheck disable=SC2016
# shellcheck source=tests/integration/common.sh
. "$(dirname "$0")/common.sh"

counter=$T/counter
: >"$counter"
clock=$T/clock

# plan FILE ID BODY NAME:TEXT:OPTIONS_JSON...: a v2 plan whose scripts are
# Application scripts with TEXT (sh, gets the plan ID as $1), and OPTIONS
# merged into captureStdout and verifyExitcode.
plan() {
    python3 - "$@" <<'EOF'
import json, sys
path, pid, body = sys.argv[1:4]
scripts, files = {}, {}
for i, spec in enumerate(sys.argv[4:]):
    name, text, opts = spec.split(":", 2)
    o = {"captureStdout": True, "captureStderr": True, "verifyExitcode": True}
    o.update(json.loads(opts))
    scripts[name] = {"Type": "Application", "Version": "1.0.0", "EntryPoint": "f%d" % i,
                     "Files": [], "Options": o}
    files["f%d" % i] = {"Name": name + ".sh", "BodyType": "Text", "Body": text}
plan = {"FormatVersion": "2.1.0", "Version": "1.0.0", "Name": "itest " + pid,
        "Parameters": {"id": pid}, "Body": body,
        "Scripts": scripts, "Files": files, "ID": pid, "Action": "Execute"}
open(path, "w").write(json.dumps(plan))
EOF
}

# A script that counts its start as call N and prints WORD.
say() { printf '#!/bin/sh\necho "%s $1" >> %s\necho %s\n' "$1" "$counter" "$2"; }
# The same, then asks for a reboot.
say_reboot() { printf '#!/bin/sh\necho "%s $1" >> %s\necho %s\nexit 194\n' "$1" "$counter" "$2"; }
# Counts its start, then hangs until it is killed, unless MARK exists (made
# by the first start): an idempotent script that finishes the second time.
hang_once() {
    printf '#!/bin/sh\necho "%s $1" >> %s\nif [ ! -e %s ]; then touch %s; sleep 60; fi\necho %s\n' \
        "$1" "$counter" "$3" "$3" "$2"
}
starts() { count_lines "$counter" "^$1 $2\$"; }

cat >"$T/reboot.sh" <<EOF
#!/bin/sh
# The test's reboot: the agent dies at once, as at a power loss.
echo reboot >> $T/reboots
kill -KILL "\$(cat $T/r/pid)"
EOF
chmod 755 "$T/reboot.sh"

agent_conf r "reboot_command = $T/reboot.sh" "max_reboots = 1"
queues r

# result1 DIR: the one result drained into DIR, as "<ErrorCode> <Body>".
result1() {
    python3 - "$1" <<'EOF'
import glob, json, sys
fs = sorted(glob.glob(sys.argv[1] + "/*.body"))
for f in fs:
    r = json.loads(open(f).read())
    b = r["Body"]
    if isinstance(b, list):
        b = " ".join(x.strip() for x in b)
    elif isinstance(b, dict):
        b = b.get("Message")
    print("%s %s" % (r["ErrorCode"], b))
EOF
}

# restart [ENV=VALUE...]: start agent r again on the same storage.
restart() {
    local n
    n=$(count_lines "$T/r/log" "INFO muranoagent consuming '")
    agent_start r "$@"
    agent_wait_consuming r $((n + 1)) || bail "agent r did not start again"
}

three='a = one(args.id).stdout
b = two(args.id).stdout
c = three(args.id).stdout
return [a, b, c]'

# ---- 1. a reboot asked for by the second call --------------------------------
plan "$T/p1.json" reboot "$three" \
    "one:$(say 1 one):{}" "two:$(say_reboot 2 two):{\"rebootExitCode\": 194}" \
    "three:$(say 3 three):{}"
agent_up r
amqp publish "$q" "$T/p1.json" >/dev/null || bail "cannot publish"
agent_wait_exit r 30
same "the reboot command killed the agent" 137 "$AGENT_STATUS"
same "before the reboot: calls one and two started once, three not" "1 1 0" \
    "$(starts 1 reboot) $(starts 2 reboot) $(starts 3 reboot)"
restart
mkdir -p "$T/res1"
got=$(amqp drain --idle 3000 --timeout 60 --out "$T/res1" "$rq")
same "one result for the plan that rebooted" 1 "$got"
same "ErrorCode 0 with the three outputs" "0 one two three" "$(result1 "$T/res1")"
same "each script started exactly once" "1 1 1" \
    "$(starts 1 reboot) $(starts 2 reboot) $(starts 3 reboot)"
check "the log says the reboot is over" log_has r "the reboot that call 1, two\(\), asked for is over"

# ---- 2. kill -9 during the third call ----------------------------------------
plan "$T/p2.json" kill3 "$three" \
    "one:$(say 1 one):{}" "two:$(say 2 two):{}" "three:$(hang_once 3 three "$T/mark2"):{}"
amqp publish "$q" "$T/p2.json" >/dev/null || bail "cannot publish"
wait_for 30 eval '[ "$(starts 3 kill3)" -ge 1 ]' || bail "call three did not start"
agent_kill r
# The agent comes back with another boot ID, as after a reboot it did not
# ask for (the test hook names the file it reads instead of the kernel's).
echo 00000000-0000-4000-8000-000000000000 >"$T/boot_id"
restart "MURANOAGENT_BOOT_ID_FILE=$T/boot_id"
mkdir -p "$T/res2"
amqp drain --idle 3000 --timeout 60 --out "$T/res2" "$rq" >/dev/null
res=$(result1 "$T/res2")
same "killed during call three: 103" 103 "${res%% *}"
check "the message names call 2, three(), and the reboot ($res)" \
    grep -q "the VM rebooted during call 2, three(), which was not run again" <<<"$res"
same "calls one and two did not run again, three not either" "1 1 1" \
    "$(starts 1 kill3) $(starts 2 kill3) $(starts 3 kill3)"

# ---- 3. an idempotent third call runs again ----------------------------------
plan "$T/p3.json" idem "$three" \
    "one:$(say 1 one):{}" "two:$(say 2 two):{}" \
    "three:$(hang_once 3 three "$T/mark3"):{\"idempotent\": true}"
amqp publish "$q" "$T/p3.json" >/dev/null || bail "cannot publish"
wait_for 30 eval '[ "$(starts 3 idem)" -ge 1 ]' || bail "call three did not start"
agent_kill r
restart
mkdir -p "$T/res3"
amqp drain --idle 3000 --timeout 60 --out "$T/res3" "$rq" >/dev/null
same "the idempotent call ran again: ErrorCode 0, three outputs" "0 one two three" \
    "$(result1 "$T/res3")"
same "one and two started once, the idempotent three twice" "1 1 2" \
    "$(starts 1 idem) $(starts 2 idem) $(starts 3 idem)"

# ---- 4. a Body whose calls depend on the time --------------------------------
# MODE is how the Body opens the clock: 'r' is recorded, 'r+' is not.
clock_body() {
    printf 't = int(open(%s, %s).read())
if t %% 2 == 0:
    even(args.id)
else:
    odd(args.id)
return slow(args.id).stdout.strip()' "'$clock'" "'$1'"
}
for mode in r r+; do
    id=clock-${mode/+/plus}
    plan "$T/$id.json" "$id" "$(clock_body "$mode")" \
        "even:$(say even even):{}" "odd:$(say odd odd):{}" \
        "slow:$(hang_once slow finished "$T/mark-$id"):{\"idempotent\": true}"
    # An even second.
    echo $(($(date +%s) / 2 * 2)) >"$clock"
    amqp publish "$q" "$T/$id.json" >/dev/null || bail "cannot publish"
    wait_for 30 eval '[ "$(starts slow "$id")" -ge 1 ]' || bail "call slow did not start"
    agent_kill r
    # The clock moves on: an odd second now.
    echo $(($(cat "$clock") + 1)) >"$clock"
    restart
    mkdir -p "$T/res-$id"
    amqp drain --idle 3000 --timeout 60 --out "$T/res-$id" "$rq" >/dev/null
    res=$(result1 "$T/res-$id")
    if [ "$mode" = r ]; then
        same "the time read with 'r' is replayed: the same path, ErrorCode 0" "0 finished" "$res"
        same "even ran once, odd never" "1 0" "$(starts even "$id") $(starts odd "$id")"
    else
        same "the time read with 'r+' took another path: ErrorCode 108" 108 "${res%% *}"
        check "the message names the divergence ($res)" \
            grep -q "asked for call 0, odd() where the call log (record [0-9]*) holds call 0, even()" \
            <<<"$res"
        same "odd never ran" 0 "$(starts odd "$id")"
    fi
done

# ---- 5. more reboots than max_reboots ----------------------------------------
plan "$T/p5.json" reboots 'one(args.id)
two(args.id)
return "unreachable"' \
    "one:$(say_reboot 1 one):{\"rebootExitCode\": 194}" \
    "two:$(say_reboot 2 two):{\"rebootExitCode\": 194}"
amqp publish "$q" "$T/p5.json" >/dev/null || bail "cannot publish"
agent_wait_exit r 30
same "the first reboot killed the agent" 137 "$AGENT_STATUS"
restart
mkdir -p "$T/res5"
amqp drain --idle 3000 --timeout 60 --out "$T/res5" "$rq" >/dev/null
res=$(result1 "$T/res5")
same "a second reboot with max_reboots = 1: ErrorCode 109" 109 "${res%% *}"
same "each script started once" "1 1" "$(starts 1 reboots) $(starts 2 reboots)"

wait_for 10 eval '[ -z "$(journal_entries r)" ]'
same "the journal is empty" "" "$(journal_entries r)"
agent_stop r
same "SIGTERM: the agent exits 0" 0 "$AGENT_STATUS"
done_testing
