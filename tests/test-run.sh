#!/bin/bash
# End-to-end runs of `muranoagent run PLAN` with the sandbox on, in TAP: the
# behaviours issue 4 asks to be shown through the real binary (time limits,
# the pids limit, the mount namespace, binary files, output caps, unsafe
# names, SIGTERM, the log, unavailable features, a run-as user). The plans
# are in tests/data/run/ (README.md there). Checks that need root or a
# kernel feature say "# SKIP reason", the reason detected, never assumed.
# MURANOAGENT and TEST_DATA_DIR come from meson (tests/meson.build).
set -u
agent=${MURANOAGENT:?}
data=${TEST_DATA_DIR:?}/run

# The mount namespace makes /tmp and /var/tmp private, so a plan's storage
# there would be hidden from its own script: work below the current
# directory (meson runs tests in the build directory) unless that is there.
case $PWD/ in
/tmp/* | /var/tmp/*) work=$(mktemp -d) ;;
*) work=$(mktemp -d "$PWD/test-run.XXXXXX") ;;
esac
chmod 755 "$work"
# What the user nobody must reach goes to a directory of its own under /tmp
# (the runs there use no mount namespace): $work may be below a directory
# that nobody cannot enter, such as a checkout in /root.
pub=$(mktemp -d)
chmod 755 "$pub"
apid=
cleanup() {
    [ -n "$apid" ] && kill -KILL "$apid" 2>/dev/null
    rm -rf "$work" "$pub"
    # Only there if a check below failed.
    rm -f /tmp/muranoagent-e2e-probe /{usr,etc,root,var,opt}/muranoagent-e2e-probe \
        /etc/muranoagent-e2e-x
}
trap cleanup EXIT

. "$(dirname "$0")/tap.sh"

# A value of the result document in $work/out: keys and list indexes joined
# by dots; strings as they are, anything else as JSON.
res() {
    python3 -c 'import json, sys
v = json.loads(open(sys.argv[1]).read())
for k in filter(None, sys.argv[2].split(".")):
    v = v[int(k)] if isinstance(v, list) else v.get(k)
print(v if isinstance(v, str) else json.dumps(v))' "$work/out" "${1:-}"
}
# Dead: gone, or a zombie that init has not reaped yet.
dead() { [ ! -e "/proc/$1" ] || grep -q '^[0-9]* (.*) Z' "/proc/$1/stat" 2>/dev/null; }
all_dead() { # all_dead FILE...: the pids written in the files are dead
    local f
    for f in "$@"; do
        [ -s "$f" ] || { echo "# no pid in $f"; return 1; }
        dead "$(cat "$f")" || { echo "# pid $(cat "$f") from $f is alive"; return 1; }
    done
}
# Living processes whose working directory is below $work: a script's
# leftovers, whatever session or process group they moved to.
leftovers() {
    local p c
    for p in /proc/[0-9]*; do
        c=$(readlink "$p/cwd" 2>/dev/null) || continue
        case $c in "$work"/*) dead "${p#/proc/}" || echo "${p#/proc/}" ;; esac
    done
}
no_leftovers() {
    local left
    left=$(leftovers)
    [ -z "$left" ] || { echo "# left behind: ${left//$'\n'/ }"; return 1; }
}
# Run cgroups of plan ID $1 still present, in any hierarchy.
cgroups_of() { find /sys/fs/cgroup -maxdepth 6 -type d -name "muranoagent-$1-*" 2>/dev/null; }
now() { date +%s.%N; }
# elapsed_between LOW HIGH START END: LOW <= END - START <= HIGH
elapsed_between() { python3 -c 'import sys; lo, hi, a, b = map(float, sys.argv[1:]); d = b - a
print("# %.2f s" % d); sys.exit(0 if lo <= d <= hi else 1)' "$@"; }

# plan NAME [SED-EXPR]: tests/data/run/NAME.yaml with @DIR@ set, into $work. The
# plan's ID e2e-X becomes e2e-<our pid>-X (SED-EXPR sees the file's own ID):
# run cgroups are named after the ID system-wide, and another test run at the
# same time must not look like a leftover of ours.
plan() {
    sed -e "s|@DIR@|$work/pids|g" ${2:+-e "$2"} -e "s|^ID: e2e-|ID: e2e-$$-|" \
        "$data/$1.yaml" >"$work/$1.yaml"
    echo "$work/$1.yaml"
}
# conf TEXT: a config file with the INI text given.
conf() { printf '%b\n' "$1" >"$work/agent.conf"; }
# run PLAN: muranoagent run with $work/agent.conf; the result document to
# $work/out, the log to $work/err, the exit status to $st.
run() {
    timeout 60 "$agent" --config-file "$work/agent.conf" run "$1" --storage "$work/storage" \
        >"$work/out" 2>"$work/err"
    st=$?
}
# Start a run in the background ($apid), for runs that are watched or signalled.
run_bg() {
    "$agent" --config-file "$work/agent.conf" run "$1" --storage "$work/storage" \
        >"$work/out" 2>"$work/err" &
    apid=$!
}
wait_bg() {
    wait "$apid"
    st=$?
    apid=
}
wait_for_file() { # wait_for_file FILE SECONDS
    local i
    for ((i = 0; i < $2 * 20; i++)); do
        [ -s "$1" ] && return 0
        sleep 0.05
    done
    return 1
}
fresh_pids() { rm -rf "$work/pids"; mkdir -m 777 "$work/pids"; }
storage_empty() { [ -z "$(ls -A "$work/storage/files" 2>/dev/null)" ]; }

[ -x "$agent" ] || { echo "Bail out! no agent at $agent"; exit 1; }
if [ "$(id -u)" != 0 ]; then
    echo "1..1"
    echo "ok 1 - end-to-end runs # SKIP not root: the sandbox's cgroups, users and namespaces need it"
    exit 0
fi
fresh_pids

# --- A plain run, and the log line naming the sandbox features. ---
conf ""
run "$data/../../../plans/examples/hello.json"
same "hello.json: exit status 0" 0 "$st"
same "hello.json: ErrorCode 0" 0 "$(res ErrorCode)"
same "hello.json: the script's output" "hello, world" "$(res Body)"
check "the log names the sandbox features, with the plan ID" grep -qF \
    "[plan 5b0f6a0d2c7e4e1f9a3b8c6d4e2f1a07] script hello: sandbox: user=root group=root no_new_privs rlimits=nofile:1024,core:0 namespaces=none cgroups=" \
    "$work/err"
check "the cache dir is removed after the plan" storage_empty

# --- Time limits: grandchildren that ignore SIGTERM are killed. ---
conf "[agent]\nscript_timeout = 2\nkill_grace = 1"
p=$(plan stubborn)
t0=$(now)
run "$p"
t1=$(now)
same "script_timeout: ErrorCode 101" 101 "$(res ErrorCode)"
same "script_timeout: the message" \
    "Script stubborn timed out: script stubborn timed out after 2 seconds" "$(res Body.Message)"
same "script_timeout: AdditionalInfo keeps the output so far" \
    '{"exitCode": null, "stdout": "started", "stderr": null}' "$(res Body.AdditionalInfo)"
same "script_timeout: exit status 1" 1 "$st"
check "script_timeout: ends after the limit and the kill grace (2 + 1 s)" \
    elapsed_between 2.9 6 "$t0" "$t1"
check "script_timeout: the grandchildren (group, own session) are dead" \
    all_dead "$work/pids/group.pid" "$work/pids/session.pid"
check "script_timeout: no process left" no_leftovers
same "script_timeout: the run cgroups are removed" "" "$(cgroups_of "e2e-$$-stubborn")"

fresh_pids
conf "[agent]\nkill_grace = 1"
p=$(plan stubborn 's/^ID: e2e-stubborn$/&\nTimeout: 2/')
t0=$(now)
run "$p"
t1=$(now)
same "plan Timeout: ErrorCode 101" 101 "$(res ErrorCode)"
same "plan Timeout: the message" "Plan timed out after 2 seconds" "$(res Body.Message)"
check "plan Timeout: ends after the limit and the kill grace" elapsed_between 2.9 6 "$t0" "$t1"
check "plan Timeout: the grandchildren are dead" \
    all_dead "$work/pids/group.pid" "$work/pids/session.pid"
check "plan Timeout: no process left" no_leftovers
check "plan Timeout: the log says the plan timed out" grep -qF \
    "[plan e2e-$$-stubborn] the plan timed out after 2 seconds" "$work/err"

# --- A fork bomb held by pids_max. ---
conf "[agent]\nscript_timeout = 3\nkill_grace = 1\n[sandbox]\npids_max = 40"
p=$(plan bomb)
run_bg "$p"
peak=0
limit=
for ((i = 0; i < 50; i++)); do
    for d in $(cgroups_of "e2e-$$-bomb"); do
        c=$(cat "$d/pids.current" 2>/dev/null) || continue
        # The cgroup may go between the two reads.
        l=$(cat "$d/pids.max" 2>/dev/null) && limit=$l
        [ "$c" -gt "$peak" ] && peak=$c
    done
    sleep 0.05
done
wait_bg
if grep -q "need a cgroup" "$work/out"; then
    skip "fork bomb held by pids_max" "$(res Body.Message)"
else
    same "fork bomb: the run's cgroup has pids.max 40" 40 "$limit"
    check "fork bomb: it never held more than 40 processes (peak $peak)" test "$peak" -le 40
    check "fork bomb: forks were refused, and the log says so" grep -qE \
        "\\[plan e2e-$$-bomb\\] script bomb: [1-9][0-9]* fork\\(s\\) refused at pids_max=40" "$work/err"
    same "fork bomb: the plan ends with the timeout result" 101 "$(res ErrorCode)"
    check "fork bomb: no process left" no_leftovers
    same "fork bomb: the run cgroups are removed" "" "$(cgroups_of "e2e-$$-bomb")"
fi

# --- The default limits, and limits that end a run with ErrorCode 106. ---
# Defaults: pids_max 4096 and memory_max 80% of the RAM (page-rounded), in
# whatever hierarchy offers them.
conf ""
run "$(plan limits)"
want_mem=$(awk '/^MemTotal:/ { printf "%d", int($2 * 1024 / 100) * 80 / 4096 }' /proc/meminfo)
want_mem=$((want_mem * 4096))
if grep -q "not applied, as no cgroup offers" "$work/err"; then
    skip "default limits" "$(grep -o "not applied, as no cgroup offers.*" "$work/err")"
else
    same "defaults: the run's cgroup has pids.max 4096 and 80% of the RAM" \
        "$(printf '4096\n%s\n' "$want_mem" | sort)" "$(res Body | sort)"
fi
# A fork bomb whose shell exits 0 after 0.5 s: the refused forks are why the
# run failed, counted when its cgroup had emptied; the next plan runs.
conf "[sandbox]\npids_max = 40"
run "$(plan bomb 's/sleep 1000/sleep 0.5/')"
if grep -q "need a cgroup" "$work/out"; then
    skip "fork bomb: ErrorCode 106" "$(res Body.Message)"
else
    same "fork bomb, shell exits 0: ErrorCode 106" 106 "$(res ErrorCode)"
    check "fork bomb, shell exits 0: the message names the limit" grep -qE \
        '"Script bomb was stopped by a limit: script bomb reached a limit of its sandbox: [1-9][0-9]* fork\(s\) refused at pids_max=40"' "$work/out"
    check "fork bomb, shell exits 0: no process left" no_leftovers
    run "$data/../../../plans/examples/hello.json"
    same "after the bomb, the next plan runs" "0 hello, world" "$(res ErrorCode) $(res Body)"
fi
conf "[sandbox]\nmemory_max = 64M"
run "$(plan hog)"
if grep -q "need a cgroup" "$work/out"; then
    skip "memory hog: ErrorCode 106" "$(res Body.Message)"
else
    same "memory hog: ErrorCode 106" 106 "$(res ErrorCode)"
    same "memory hog: the message names the limit" \
        "Script hog was stopped by a limit: script hog reached a limit of its sandbox: 1 process(es) killed at memory_max=67108864" \
        "$(res Body.Message)"
    same "memory hog: AdditionalInfo keeps the output and exit code" 'the shell goes on 0' \
        "$(res Body.AdditionalInfo.stdout) $(res Body.AdditionalInfo.exitCode)"
    check "memory hog: no process left" no_leftovers
    run "$data/../../../plans/examples/hello.json"
    same "after the hog, the next plan runs" "0 hello, world" "$(res ErrorCode) $(res Body)"
fi

# --- Nothing a plan started outlives it: a process that moved itself out of
# the run's cgroup (into cgroups this test makes, one per hierarchy), one in a
# session of its own after a double fork, one in a pid namespace of its own.
fresh_pids
for h in /sys/fs/cgroup /sys/fs/cgroup/unified /sys/fs/cgroup/pids /sys/fs/cgroup/memory; do
    [ -f "$h/cgroup.procs" ] && mkdir "$h/e2e-escape-$$" && echo "$h/e2e-escape-$$"
done >"$work/pids/escape-cgroups"
conf ""
run "$(plan outlive)"
same "outlive: the script ran (ErrorCode 0)" 0 "$(res ErrorCode)"
same "outlive: one process had left the run's cgroup for the test's" \
    "$(wc -l <"$work/pids/escape-cgroups")" "$(res Body)"
for f in moved session pidns; do
    check "outlive: the $f process is gone" all_dead "$work/pids/$f.pid"
    # Only on a failure is there anything to kill.
    p=$(cat "$work/pids/$f.pid" 2>/dev/null) && ! dead "$p" && kill -KILL "$p"
done
check "outlive: the log says what was killed outside the cgroup" grep -qE \
    "\\[plan e2e-$$-outlive\\] script outlive: [1-9][0-9]* process\\(es\\) of the run outside its cgroup killed \\(audit session [0-9]+\\)" \
    "$work/err"
# A process killed just now may hold its cgroup for a moment.
while read -r d; do
    for ((i = 0; i < 100; i++)); do rmdir "$d" 2>/dev/null && break; sleep 0.05; done
done <"$work/pids/escape-cgroups"
check "outlive: no process left" no_leftovers
run "$data/../../../plans/examples/hello.json"
same "outlive: the next plan runs" "0 hello, world" "$(res ErrorCode) $(res Body)"

# --- The mount namespace: nothing written outside the script's directories. ---
conf "[sandbox]\nmount_namespace = true"
if ! unshare -m true 2>/dev/null; then
    skip "mount namespace" "unshare -m fails here: $(unshare -m true 2>&1)"
elif case $work/ in /tmp/* | /var/tmp/*) true ;; *) false ;; esac then
    skip "mount namespace" "the test's storage $work is under a private /tmp (run from elsewhere)"
else
    run "$(plan probe)"
    same "mount namespace: ErrorCode 0" 0 "$(res ErrorCode)"
    same "mount namespace: only the script's directories and a private /tmp are writable" \
        "$(printf '%s\n' "/usr: refused" "/etc: refused" "/root: refused" "/var: refused" \
            "/opt: refused" "workdir: written" "plan dir: written" \
            "entries in /tmp and /var/tmp: 0 0" "tmp: written")" "$(res Body)"
    check "mount namespace: nothing reached the host's /tmp or /etc" \
        test ! -e /tmp/muranoagent-e2e-probe -a ! -e /etc/muranoagent-e2e-probe
    check "mount namespace: the log says so" grep -qF \
        "namespaces=mount mounts=read-only:/,private-tmp,writable:1" "$work/err"
fi

# --- A binary Base64 file, byte for byte. ---
conf ""
run "$(plan binary)"
want_sha=$(python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)))' | sha256sum |
    cut -d' ' -f1)
same "binary file: ErrorCode 0" 0 "$(res ErrorCode)"
same "binary file: 256 bytes, the same SHA-256, first and last bytes, linked by ID" \
    "$(printf '%s\n' 256 "$want_sha" 0001020304050607f8f9fafbfcfdfeff allBytes)" "$(res Body)"

# --- 50 MiB of stdout, kept to output_limit, in bounded memory. ---
conf "[agent]\noutput_limit = 64K"
if [ ! -x /usr/bin/time ]; then
    skip "50 MiB of stdout" "/usr/bin/time is missing (packaging/build-deps.sh installs it)"
else
    /usr/bin/time -f %M -o "$work/rss-hello" "$agent" --config-file "$work/agent.conf" run \
        "$data/../../../plans/examples/hello.json" --storage "$work/storage" >/dev/null 2>&1
    /usr/bin/time -f %M -o "$work/rss" "$agent" --config-file "$work/agent.conf" run \
        "$(plan flood)" --storage "$work/storage" >"$work/out" 2>"$work/err"
    st=$?
    same "output cap: exit status 0" 0 "$st"
    same "output cap: ErrorCode 0" 0 "$(res ErrorCode)"
    # 6 + 52428800 + 5 bytes were written; the first and last 32 KiB are
    # kept around the marker, and the final newline is stripped.
    same "output cap: head, marker and tail, exactly" ok "$(python3 -c '
import json, sys
body = json.loads(open(sys.argv[1]).read())["Body"]
marker = "\n[... %d bytes omitted by muranoagent ...]\n" % (52428811 - 65536)
want = "BEGIN\n" + "x" * (32768 - 6) + marker + "x" * (32768 - 5) + "\nEND"
print("ok" if body == want else "len %d, marker at %d" % (len(body), body.find("[...")))
' "$work/out")"
    rss=$(tail -n1 "$work/rss")
    rss_hello=$(tail -n1 "$work/rss-hello")
    echo "# peak RSS: $rss KiB with 50 MiB of output, $rss_hello KiB for hello.json"
    check "output cap: the agent's peak RSS grew by less than 4 MiB over a trivial plan" \
        test $((rss - rss_hello)) -lt 4096
    # AddressSanitizer's shadow memory alone takes some 20 MiB.
    cap=20
    # clang links the sanitizer runtime statically, so look for it inside.
    { ldd "$agent" 2>/dev/null | grep -q libasan || grep -q __asan_init "$agent"; } && cap=40
    check "output cap: the agent's peak RSS stays below $cap MiB" test "$rss" -lt $((cap * 1024))
fi

# --- File names that would leave the script's folder. ---
conf ""
while IFS='|' read -r name why; do
    rm -rf "$work/storage"
    run "$(plan escape "s|@NAME@|$name|")"
    same "Name $name: ErrorCode 2" 2 "$(res ErrorCode)"
    same "Name $name: the message" "Invalid Name in file escapee: $why" "$(res Body.Message)"
    check "Name $name: nothing was written, the script did not run" \
        test ! -e "$work/storage" -a ! -e /etc/muranoagent-e2e-x
done <<'NAMES'
../../etc/x|contains a '..' component
../../../../../../../../etc/muranoagent-e2e-x|contains a '..' component
lib/../../../x|contains a '..' component
/etc/muranoagent-e2e-x|absolute path
NAMES

# --- SIGTERM to the agent during a script. ---
fresh_pids
conf "[agent]\nstop_grace = 2\nkill_grace = 1"
run_bg "$(plan stop)"
if ! wait_for_file "$work/pids/script.pid" 10; then
    not_ok "SIGTERM: the script started"
    kill -KILL "$apid"
    wait_bg
else
    t0=$(now)
    kill -TERM "$apid"
    wait_bg
    t1=$(now)
    same "SIGTERM: ErrorCode 103" 103 "$(res ErrorCode)"
    same "SIGTERM: the message" "The agent stopped while the plan was running" \
        "$(res Body.Message)"
    same "SIGTERM: exit status 1" 1 "$st"
    check "SIGTERM: the script had stop_grace (2 s) before its SIGTERM" \
        elapsed_between 1.9 3.5 "$t0" "$(cat "$work/pids/term" 2>/dev/null || echo 0)"
    check "SIGTERM: the agent ends after stop_grace and kill_grace" \
        elapsed_between 2.9 6 "$t0" "$t1"
    check "SIGTERM: the script and its children are dead" all_dead "$work"/pids/*.pid
    check "SIGTERM: no process left" no_leftovers
    same "SIGTERM: the run cgroups are removed" "" "$(cgroups_of "e2e-$$-stop")"
    check "SIGTERM: the cache dir is removed" storage_empty
fi

fresh_pids
conf "[agent]\nstop_grace = 30"
run_bg "$(plan linger)"
if wait_for_file "$work/pids/script.pid" 10; then
    t0=$(now)
    kill -TERM "$apid"
    wait_bg
    t1=$(now)
    same "SIGTERM within the grace: the script finishes, ErrorCode 0" 0 "$(res ErrorCode)"
    same "SIGTERM within the grace: its output" finished "$(res Body)"
    check "SIGTERM within the grace: the agent exits when the script ends" \
        elapsed_between 1.5 4 "$t0" "$t1"
else
    not_ok "SIGTERM within the grace: the script started"
    kill -KILL "$apid"
    wait_bg
fi

# --- Features asked for and unavailable: an error result, never a downgrade. ---
hello=$data/../../../plans/examples/hello.json
unavailable() { # unavailable DESCRIPTION CONF MESSAGE
    conf "$2"
    run "$hello"
    same "$1: ErrorCode 102" 102 "$(res ErrorCode)"
    same "$1: the message" "$3" "$(res Body.Message)"
    same "$1: exit status 1" 1 "$st"
}
unavailable "user = no-such-user" "[sandbox]\nuser = no-such-user" \
    "[sandbox] user = no-such-user: no such user"
unavailable "group = no-such-group" "[sandbox]\nuser = nobody\ngroup = no-such-group" \
    "[sandbox] group = no-such-group: no such group"
MURANOAGENT_SANDBOX=/nonexistent/muranoagent-sandbox \
    unavailable "no sandbox helper" "" \
    "the sandbox is enabled but muranoagent-sandbox cannot be found: No such file or directory"
v2=
for d in /sys/fs/cgroup /sys/fs/cgroup/unified; do
    [ -f "$d/cgroup.controllers" ] && v2=$d
done
if [ -z "$v2" ]; then
    conf "[sandbox]\ncgroup = v2"
    run "$hello"
    same "cgroup = v2 without cgroup v2: ErrorCode 102" 102 "$(res ErrorCode)"
    check "cgroup = v2 without cgroup v2: the message" \
        grep -qF '"Message": "[sandbox] cgroup = v2 cannot be applied: ' "$work/out"
elif ! grep -qw pids "$v2/cgroup.controllers"; then
    conf "[sandbox]\ncgroup = v2\npids_max = 100"
    run "$hello"
    same "cgroup = v2 with pids_max, on a v2 without pids: ErrorCode 102" 102 "$(res ErrorCode)"
    same "cgroup = v2 with pids_max, on a v2 without pids: the message" \
        "[sandbox] cgroup = v2 cannot be applied: cgroup v2: the pids controller is not available in $v2" \
        "$(res Body.Message)"
else
    skip "cgroup = v2 unavailable" "this host's cgroup v2 ($v2) offers pids"
fi
if ! awk '$3 == "cgroup" && $4 ~ /(^|,)pids(,|$)/ { found = 1 } END { exit !found }' /proc/mounts
then
    conf "[sandbox]\ncgroup = v1\npids_max = 100"
    run "$hello"
    same "cgroup = v1 without a v1 pids hierarchy: ErrorCode 102" 102 "$(res ErrorCode)"
    check "cgroup = v1 without a v1 pids hierarchy: the message" \
        grep -qF '"Message": "[sandbox] cgroup = v1 cannot be applied: ' "$work/out"
else
    skip "cgroup = v1 unavailable" "this host has a v1 pids hierarchy"
fi

# --- Run as nobody: the script reaches its files. The plan and its storage
# are in $pub, which nobody can reach. ---
helper=${MURANOAGENT_SANDBOX:-$(dirname "$agent")/sandbox/muranoagent-sandbox}
if ! getent passwd nobody >/dev/null || ! getent group nogroup >/dev/null; then
    skip "run as nobody" "no user nobody or no group nogroup here"
elif ! timeout 10 "$helper" --user nobody --group nogroup -- /bin/sh -c "cd '$pub'"; then
    not_ok "run as nobody: nobody can enter $pub"
else
    root_work=$work
    work=$pub
    fresh_pids
    conf "[sandbox]\nuser = nobody\ngroup = nogroup"
    run "$(plan whoami)"
    uid=$(id -u nobody)
    gid=$(getent group nogroup | cut -d: -f3)
    same "run as nobody: ErrorCode 0" 0 "$(res ErrorCode)"
    same "run as nobody: its identity, and its files readable, executable and its own" \
        "$(printf '%s\n' "uid=$uid gid=$gid" "entry point: executable" \
            "greeting from lib/common.sh" "lib/common.sh: readable" "workdir: writable" \
            "owners: $uid:$gid")" "$(res Body)"
    check "run as nobody: the log says so" grep -qF "sandbox: user=nobody group=nogroup" \
        "$work/err"
    check "run as nobody: the cache dir is removed" storage_empty
    same "run as nobody: <storage> and <storage>/files are searchable, not readable" \
        "drwx--x--x drwx--x--x" \
        "$(stat -c %A "$work/storage" "$work/storage/files" | tr '\n' ' ' | sed 's/ $//')"
    work=$root_work
fi

# --- The agent itself not root: the default user = root changes nothing. ---
if ! command -v setpriv >/dev/null || ! getent passwd nobody >/dev/null; then
    skip "agent run by nobody" "no setpriv or no user nobody here"
else
    # nobody runs copies of the agent and its helper, in the build tree's
    # layout, and of the plan, all in $pub.
    mkdir -p "$pub/bin/sandbox"
    mkdir -m 777 "$pub/nonroot"
    cp "$agent" "$pub/bin/"
    cp "$helper" "$pub/bin/sandbox/"
    cp "$hello" "$pub/hello.json"
    printf '\n' >"$pub/agent.conf"
    timeout 60 setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups \
        env -u MURANOAGENT_SANDBOX "$pub/bin/$(basename "$agent")" --config-file "$pub/agent.conf" \
        run "$pub/hello.json" --storage "$pub/nonroot/storage" >"$work/out" 2>"$work/err"
    same "agent run by nobody: ErrorCode 0 (the script keeps the agent's identity)" 0 \
        "$(res ErrorCode)"
    same "agent run by nobody: the script's output" "hello, world" "$(res Body)"
fi

# --- An Application script runs through /bin/sh -c, as the reference runs it. ---
mkdir "$work/app"
# Each case: a plan calling one script (the entry file NAME with TEXT) with
# the commandline ARG (JSON, or None for none), returning its whole result.
python3 - "$work/app" <<'PY'
import json, os, sys
out = sys.argv[1]
envdump = "env | sort; echo \"0=$0\"; for a; do echo \"[$a]\"; done; pwd; pwd -P\n"
cases = {
    "args": ("echo.sh", "#!/bin/sh\n" + envdump, "a b=c d-e,f:g+h@i%j ./k_L. 5"),
    "ppid": ("ppid.sh", "#!/bin/sh\necho \"parent: $(ps -o comm= -p $PPID)\"\n", None),
    "nointerp": ("bad.sh", "#!/nonexistent/interp\necho never\n", "x"),
}
for name, (fname, text, arg) in cases.items():
    plan = {
        "FormatVersion": "2.1.0", "Version": "1.0.0", "Name": name, "ID": "e2e-app-" + name,
        "Action": "Execute",
        "Body": "return s(%s)\n" % ("" if arg is None else json.dumps(arg)),
        "Scripts": {"s": {"Type": "Application", "Version": "1.0.0", "EntryPoint": "f",
                          "Files": [],
                          "Options": {"captureStdout": True, "captureStderr": True,
                                      "verifyExitcode": False}}},
        "Files": {"f": {"Name": fname, "BodyType": "Text", "Body": text}},
    }
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(plan, f)
# A directory where the entry file was (EACCES): the first call makes it.
plan = {
    "FormatVersion": "2.1.0", "Version": "1.0.0", "Name": "dir", "ID": "e2e-app-dir",
    "Action": "Execute", "Body": "s()\nreturn s()\n",
    "Scripts": {
        "s": {"Type": "Application", "Version": "1.0.0", "EntryPoint": "f", "Files": [],
              "Options": {"captureStdout": True, "captureStderr": True,
                          "verifyExitcode": False}}},
    "Files": {"f": {"Name": "victim.sh", "BodyType": "Text",
                    "Body": "#!/bin/sh\nrm ./victim.sh && mkdir ./victim.sh\n"}},
}
with open(os.path.join(out, "dir.json"), "w") as f:
    json.dump(plan, f)
PY
conf ""
# The default env_passthrough also passes LC_ALL and the proxy settings that
# are set here (a machine behind a proxy has them).
script_env() { # script_env PWD: the script's environment, as `env | sort` prints it
    local v
    {
        printf '%s\n' "HOME=/root" "LANG=${LANG:-C.UTF-8}" "PATH=$PATH" "PWD=$1"
        for v in LC_ALL http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY; do
            [ -n "${!v+set}" ] && printf '%s=%s\n' "$v" "${!v}"
        done
    } | LC_ALL=C sort
}
same "sandbox: the script's environment and arguments" \
    "$(script_env "$(cd "$work" && pwd -P)/storage/files/e2e-app-args/s"
        printf '%s\n' "0=./echo.sh" "[a]" "[b=c]" "[d-e,f:g+h@i%j]" "[./k_L.]" "[5]")" \
    "$(run "$work/app/args.json"; res Body.stdout | sed '/^\//d')"
# dash forks for the last command of -c, so the script's parent is the
# shell; bash as /bin/sh would exec the script in its own place.
sh_is_dash=false
[ "$(basename "$(readlink -f /bin/sh)")" = dash ] && sh_is_dash=true
if $sh_is_dash; then
    same "sandbox: the script's parent is /bin/sh" "parent: sh" \
        "$(run "$work/app/ppid.json"; res Body.stdout)"
else
    skip "sandbox: the script's parent is /bin/sh" "/bin/sh is not dash"
fi
same "sandbox: a missing interpreter is the shell's error" \
    '127 /bin/sh: 1: ./bad.sh: not found' \
    "$(run "$work/app/nointerp.json"; echo "$(res Body.exitCode) $(res Body.stderr)")"
same "sandbox: a directory is the shell's error" \
    '126 /bin/sh: 1: ./victim.sh: Permission denied' \
    "$(run "$work/app/dir.json"; echo "$(res Body.exitCode) $(res Body.stderr)")"
conf "[sandbox]\nenabled = false"
if $sh_is_dash; then
    # The agent's environment as a service has it: no PWD for the shell to
    # inherit.
    same "no sandbox: the script's parent is /bin/sh" "parent: sh" \
        "$(timeout 60 env -i PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 HOME=/root \
            "$agent" --config-file "$work/agent.conf" run "$work/app/ppid.json" \
            --storage "$work/storage" >"$work/out" 2>"$work/err"; res Body.stdout)"
else
    skip "no sandbox: the script's parent is /bin/sh" "/bin/sh is not dash"
fi

# --- A script that unmounts /proc cannot break what comes after it. ---
# In a mount namespace of the test's own (unshare(1) makes its mounts
# private), so the host's /proc stays; the script checks that it is there by
# a file on a tmpfs that only that namespace has. The second plan runs in
# the same namespace, where the agent finds no /proc at all.
conf ""
fresh_pids
mkdir "$work/pids/private"
if ! unshare -m true 2>/dev/null; then
    skip "plans after a script that unmounts /proc" "unshare -m refused"
else
    p=$(plan umountproc)
    # shellcheck disable=SC2016 # expanded by the inner shell
    unshare -m sh -c 'mount -t tmpfs none "$8" && touch "$8/inside-the-test-namespace" || exit
        "$1" --config-file "$2" run "$3" --storage "$4" >"$5.1" 2>"$6"
        "$1" --config-file "$2" run "$7" --storage "$4" >"$5" 2>>"$6"' sh \
        "$agent" "$work/agent.conf" "$p" "$work/storage" "$work/out" "$work/err" \
        "$data/../../../plans/examples/hello.json" "$work/pids/private"
    same "umount /proc: the script ran, and the next one started at oom_score_adj 1000" \
        '["unmounted: 0 entries left", "oom_score_adj 1000, fds 0 1 2 3"]' \
        "$(python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["Body"]))' \
            "$work/out.1")"
    same "umount /proc: the next plan still runs (ErrorCode 0)" 0 "$(res ErrorCode)"
    same "umount /proc: and prints its output" "hello, world" "$(res Body)"
    check "umount /proc: the agent says scripts keep its OOM score" \
        grep -q "/proc is not mounted (no procfs there): scripts keep the agent's OOM score" \
        "$work/err"
fi
check "the host's /proc is still there" test -e /proc/self/status

# A plan ID of up to a file name's 255 bytes names the plan's cache dir, as
# the reference's does; a longer one gets a fresh name (docs/files.md).
conf ""
for len in 255 256; do
    python3 - "$work/long-id.json" "$len" <<'PY'
import json, sys
s = {"Type": "Application", "Version": "1.0.0", "EntryPoint": "f", "Files": [],
     "Options": {"captureStdout": True, "captureStderr": True}}
json.dump({"FormatVersion": "2.1.0", "Version": "1.0.0", "Name": "long", "ID": "i" * int(sys.argv[2]),
           "Action": "Execute", "Body": "return s()\n", "Scripts": {"s": s},
           "Files": {"f": {"Name": "pwd.sh", "BodyType": "Text", "Body": "#!/bin/sh\npwd\n"}}},
          open(sys.argv[1], "w"))
PY
    run "$work/long-id.json"
    dir=$(res Body.stdout)
    dir=${dir%/s}
    if [ "$len" = 255 ]; then want=$(printf 'i%.0s' $(seq 255)); else want=32; fi
    got=${dir##*/}
    [ "$len" = 255 ] || got=$(printf '%s' "$got" | tr -cd 0-9a-f | wc -c)
    same "a $len-byte plan ID: the cache dir's name" "$want" "$got"
done

check "no process of any plan is left" no_leftovers
tap_done
