# shellcheck shell=bash
# Shared by the integration tests (tests/integration/*.sh), which run the
# real daemon against a real rabbitmq-server on loopback and print TAP.
# Source it first thing; it sets `set -u` and an EXIT trap.
#
# The broker: tests/run.sh starts one for the whole run and exports
# BROKER_DIR, BROKER_PORT and BROKER_NODE (tests/broker.sh writes them to
# $BROKER_DIR/env). When they are not set (a developer running one test by
# hand) a private broker is started here with tests/broker.sh and stopped at
# exit. Every test uses queue names of its own (it-<test>-<pid>-<name>) and
# its own storage directories, starts its own agents and stops exactly those,
# by pid.
#
# Programs come from meson's environment (tests/integration/meson.build):
# MURANOAGENT, MURANOAGENT_SEND, INTEG_AMQP; by hand they default to the
# build/ directory. ITEST_AGENT_WRAPPER runs every agent under a command
# such as "valgrind --error-exitcode=99 --leak-check=full" (it must keep the
# agent's pid, as valgrind does). ITEST_KEEP=1 keeps the work directory.
set -u

ITEST=$(basename "$0" .sh)
ITEST_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BROKER_SH=$ITEST_ROOT/tests/broker.sh
MURANOAGENT=${MURANOAGENT:-$ITEST_ROOT/build/agent/muranoagent}
MURANOAGENT_SEND=${MURANOAGENT_SEND:-$(dirname "$MURANOAGENT")/muranoagent-send}
INTEG_AMQP=${INTEG_AMQP:-$(dirname "$MURANOAGENT")/../tests/integration/integ-amqp}
TEST_DATA_DIR=${TEST_DATA_DIR:-$ITEST_ROOT/tests/data}
ITEST_SECONDS=$SECONDS

# ---- TAP ------------------------------------------------------------------

. "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }
bail() {
    echo "Bail out! $*"
    exit 1
}
# The plan line comes last, so that a test need not count its checks.
done_testing() {
    echo "1..$n"
    diag "$ITEST: $((SECONDS - ITEST_SECONDS)) s"
    [ "$fails" -eq 0 ]
    exit
}

# ---- clean-up -------------------------------------------------------------

T=$(mktemp -d "/tmp/itest-$ITEST.XXXXXX")
chmod 755 "$T"
declare -A AGENT_PID=()
EXTRA_PIDS=()
PRIVATE_BROKER=

itest_cleanup() {
    local name pid
    for name in "${!AGENT_PID[@]}"; do
        pid=${AGENT_PID[$name]}
        [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
    done
    for pid in "${EXTRA_PIDS[@]+"${EXTRA_PIDS[@]}"}"; do
        kill -KILL "$pid" 2>/dev/null
    done
    wait 2>/dev/null
    if [ -n "$PRIVATE_BROKER" ]; then
        "$BROKER_SH" stop "$PRIVATE_BROKER" 2>/dev/null
    fi
    if [ -n "${ITEST_KEEP:-}" ]; then
        echo "# kept $T" >&2
    else
        rm -rf "$T"
    fi
}
trap itest_cleanup EXIT

# ---- the broker -----------------------------------------------------------

if [ ! -x /usr/lib/rabbitmq/bin/rabbitmq-server ]; then
    echo "1..0 # SKIP rabbitmq-server is not installed (packaging/build-deps.sh)"
    exit 0
fi
for prog in "$MURANOAGENT" "$MURANOAGENT_SEND" "$INTEG_AMQP"; do
    [ -x "$prog" ] || bail "$prog is not built"
done

if [ -z "${BROKER_PORT:-}" ] || [ -z "${BROKER_NODE:-}" ] || [ -z "${BROKER_DIR:-}" ]; then
    PRIVATE_BROKER=$T/broker
    if ! "$BROKER_SH" start "$PRIVATE_BROKER" 2>"$T/broker-start.log"; then
        sed 's/^/# /' "$T/broker-start.log"
        bail "the broker did not start"
    fi
    # shellcheck disable=SC1091
    . "$PRIVATE_BROKER/env"
fi
export BROKER_DIR BROKER_PORT BROKER_NODE

# rabbitmqctl against the test broker, with the environment broker.sh gives
# it (its HOME holds the Erlang cookie). About a second per call.
ctl() { "$BROKER_SH" ctl "$BROKER_DIR" "$@"; }
# "<ready> <unacked>" of one queue, from the broker's own counters.
queue_counts() {
    ctl list_queues name messages messages_unacknowledged |
        awk -v q="$1" '$1 == q { print $2, $3; found = 1 } END { if (!found) print "absent" }'
}
amqp() { timeout 300 "$INTEG_AMQP" --port "$BROKER_PORT" "$@"; }
snd() { timeout 300 "$MURANOAGENT_SEND" --host 127.0.0.1 --port "$BROKER_PORT" "$@"; }

# Queue names of this test: unique per test and per run.
qname() { echo "it-$ITEST-$$-$1"; }

# queues NAME: q, the queue agent NAME consumes, and rq, its results queue,
# both declared as the engine declares them.
queues() {
    q=$(qname "$1")
    rq=$q-results
    amqp declare "$q" "$rq" >/dev/null || bail "cannot declare the queues"
}

# ---- agents ---------------------------------------------------------------

# agent_conf NAME [LINES...]: write $T/NAME/agent.conf for an agent that
# consumes $(qname NAME) and answers to $(qname NAME)-results, stores in
# $T/NAME/storage, and runs scripts without the sandbox (the suite may run
# without cgroups). Each extra argument is a line added at the end, in the
# [agent] section ("heartbeat = 2") unless a line names another section.
agent_conf() {
    local name=$1 line
    shift
    mkdir -p "$T/$name"
    {
        echo "[DEFAULT]"
        echo "storage = $T/$name/storage"
        echo "debug = true"
        echo "[rabbitmq]"
        echo "host = 127.0.0.1"
        echo "port = $BROKER_PORT"
        echo "input_queue = $(qname "$name")"
        echo "result_routing_key = $(qname "$name")-results"
        echo "[sandbox]"
        echo "enabled = false"
        echo "[agent]"
        echo "reconnect_max_delay = 2"
        for line in "$@"; do
            printf '%s\n' "$line"
        done
    } >"$T/$name/agent.conf"
    chmod 600 "$T/$name/agent.conf"
}

# agent_start NAME [ENV=VALUE...]: start the agent in the background; its
# log goes to $T/NAME/log (appended, so restarts keep one log). A subshell
# waits for it and writes its exit status to $T/NAME/status, so that this
# shell never reports "Killed" and a test can see the end of an agent that
# died by itself.
agent_start() {
    local name=$1
    shift
    rm -f "$T/$name/pid" "$T/$name/status"
    (
        # shellcheck disable=SC2086 # the wrapper is a command line
        env "$@" ${ITEST_AGENT_WRAPPER:-} "$MURANOAGENT" --config-file "$T/$name/agent.conf" \
            >>"$T/$name/log" 2>&1 &
        echo $! >"$T/$name/pid.tmp"
        mv "$T/$name/pid.tmp" "$T/$name/pid"
        wait $!
        echo $? >"$T/$name/status.tmp"
        mv "$T/$name/status.tmp" "$T/$name/status"
    ) 2>/dev/null &
    until [ -s "$T/$name/pid" ]; do sleep 0.01; done
    AGENT_PID[$name]=$(cat "$T/$name/pid")
}

# count_lines FILE PATTERN: lines of FILE matching the extended regex.
count_lines() {
    local c
    c=$(grep -cE -- "$2" "$1" 2>/dev/null)
    echo "${c:-0}"
}

# wait_for SECONDS COMMAND...: poll every 50 ms until COMMAND succeeds.
wait_for() {
    local deadline=$((SECONDS + $1))
    shift
    until "$@"; do
        [ "$SECONDS" -lt "$deadline" ] || return 1
        sleep 0.05
    done
}

# log_has NAME PATTERN [N]: the agent's log has at least N (1) matching lines.
log_has() { [ "$(count_lines "$T/$1/log" "$2")" -ge "${3:-1}" ]; }

# missed_heartbeats: how many times the broker's log says a client missed
# its heartbeats.
missed_heartbeats() { count_lines "$BROKER_DIR/log/rabbit.log" "missed heartbeats"; }

# notify_listen SOCKET FILE status|watchdog: a datagram socket standing in
# for systemd's, in the background (its pid in EXTRA_PIDS), until it
# exists. status: the text of every STATUS= line the agent sends is
# appended to FILE; watchdog: the time (ms, monotonic) of every WATCHDOG=1.
notify_listen() {
    python3 - "$@" <<'EOF_PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a") as out:
    while True:
        for line in s.recv(4096).decode(errors="replace").splitlines():
            if sys.argv[3] == "status" and line.startswith("STATUS="):
                out.write(line[7:] + "\n")
            elif sys.argv[3] == "watchdog" and line == "WATCHDOG=1":
                out.write("%d\n" % (time.monotonic() * 1000))
            out.flush()
EOF_PY
    EXTRA_PIDS+=($!)
    wait_for 10 test -S "$1"
}

# agent_wait_consuming NAME [N]: wait until the agent's log shows its N-th
# (default 1) "consuming" line since the log began.
agent_wait_consuming() {
    wait_for 30 log_has "$1" "INFO muranoagent consuming '" "${2:-1}"
}

# agent_up NAME [N]: agent_start NAME, and bail out unless it logs its N-th
# (default 1) "consuming" line.
agent_up() {
    agent_start "$1"
    agent_wait_consuming "$1" "${2:-1}" ||
        bail "agent $1 did not start consuming: $(tail -3 "$T/$1/log")"
}

# agent_alive NAME: started and not ended.
agent_alive() { [ -n "${AGENT_PID[$1]:-}" ] && [ ! -e "$T/$1/status" ]; }

# agent_wait_exit NAME SECONDS: wait for the agent to end; AGENT_STATUS is
# its exit status (137 after SIGKILL), or "timeout".
agent_wait_exit() {
    AGENT_STATUS=timeout
    if wait_for "$2" test -e "$T/$1/status"; then
        AGENT_STATUS=$(cat "$T/$1/status")
        AGENT_PID[$1]=
    fi
}

# agent_stop NAME [SECONDS]: SIGTERM and wait up to SECONDS (10); sets
# AGENT_STATUS. An agent still there after that is killed.
agent_stop() {
    kill -TERM "${AGENT_PID[$1]}" 2>/dev/null
    agent_wait_exit "$1" "${2:-10}"
    if [ "$AGENT_STATUS" = timeout ]; then
        agent_kill "$1"
    fi
}

# agent_kill NAME: SIGKILL, and wait for the end.
agent_kill() {
    local st=${AGENT_STATUS:-}
    kill -KILL "${AGENT_PID[$1]}" 2>/dev/null
    agent_wait_exit "$1" 10
    AGENT_STATUS=$st
}

# Entries of the agent's journal that are not finished (neither `done` nor
# the stamp file).
journal_entries() {
    local d=$T/$1/storage/plans
    [ -d "$d" ] || return 0
    find "$d" -mindepth 1 -maxdepth 1 -type d ! -name 'done' ! -name 'quarantine' -printf '%f\n' | sort
}

# wal_state NAME: "GENERATION LIVE" of agent NAME's journal.log: the
# generation of its checkpoint (the superblock copy of the higher one; the
# MAC is the agent's to check) and whether a record follows it (1: the
# record numbered as the checkpoint says lies at its start, or at the
# ring's start where it would have wrapped; 0: the log is empty). Empty
# output when there is no journal.log.
wal_state() {
    python3 - "$T/$1/storage/journal.log" <<'EOF'
import os, struct, sys
path = sys.argv[1]
if not os.path.exists(path):
    sys.exit(0)
f = open(path, 'rb').read()
best = None
for copy, off in ((0, 0), (1, 4096)):
    sb = f[off:off + 512]
    if sb[:4] != b'MAWS':
        continue
    gen, size, ring, start, seq = struct.unpack_from('<QQQQQ', sb, 8)
    if gen % 2 == copy and (best is None or gen > best[0]):
        best = (gen, start, seq)
if best is None:
    print('none 0')
    sys.exit(0)
gen, start, seq = best
def live(at):
    h = f[at:at + 16]
    return h[:4] == b'MAWL' and struct.unpack_from('<Q', h, 8)[0] == seq
print(gen, int(live(start) or live(8192)))
EOF
}

# ---- plans and results ----------------------------------------------------

# script_plan FILE ID SCRIPT [STAMP]: a v2 plan whose Body returns the stdout
# of one Application script whose text is SCRIPT (sh; gets the ID as $1).
# A negative STAMP means none.
script_plan() {
    python3 - "$@" <<'EOF'
import json, sys
path, pid, script = sys.argv[1:4]
plan = {
    "FormatVersion": "2.1.0", "Version": "1.0.0", "Name": "itest " + pid,
    "Parameters": {"id": pid},
    "Body": "return run(args.id).stdout",
    "Scripts": {"run": {"Type": "Application", "Version": "1.0.0", "EntryPoint": "f1",
                        "Files": [], "Options": {"captureStdout": True,
                                                 "captureStderr": True,
                                                 "verifyExitcode": True}}},
    "Files": {"f1": {"Name": "run.sh", "BodyType": "Text", "Body": script}},
    "ID": pid, "Action": "Execute",
}
if len(sys.argv) > 4 and int(sys.argv[4]) >= 0:
    plan["Stamp"] = int(sys.argv[4])
open(path, "w").write(json.dumps(plan))
EOF
}

# answer NAME FILE...: publish each file to the queue $q, drain one result
# per file from $rq into $T/NAME; prints how many came. q and rq are the
# calling test's.
# shellcheck disable=SC2154
answer() {
    local name=$1
    shift
    mkdir -p "$T/$name"
    amqp publish "$q" "$@" >/dev/null
    amqp drain --count $# --idle 20000 --out "$T/$name" "$rq"
}

# Mask the two fields that differ between two runs of one plan.
mask_result() { sed -E 's/"ID": "[0-9a-f]{32}"/"ID": "<id>"/; s/"Time": "[^"]*"/"Time": "<time>"/'; }

# results_table DIR: one line per message drained into DIR, in order:
# "<SourceID> <ErrorCode> <result ID> <Body as JSON>" (tab-separated).
results_table() {
    python3 - "$1" <<'EOF'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/*.body")):
    try:
        r = json.loads(open(f, "rb").read())
        print("%s\t%s\t%s\t%s" % (r.get("SourceID"), r.get("ErrorCode"), r.get("ID"),
                                  json.dumps(r.get("Body"))))
    except ValueError:
        print("not-json\t-\t-\t-")
EOF
}
