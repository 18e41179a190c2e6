#!/bin/bash
# Command-line tests of the muranoagent binary, in TAP. MURANOAGENT and
# TEST_DATA_DIR come from meson (tests/meson.build).
set -u
agent=${MURANOAGENT:?}
data=${TEST_DATA_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/tap.sh"
# Run the agent with a time limit: nothing may hang.
run() { timeout 20 "$agent" "$@"; }
# Replace the fresh ID and Time of result documents so they can be compared.
normalise() { sed -E 's/"ID": "[0-9a-f]{32}"/"ID": "<ID>"/; s/"Time": "[0-9: .-]+"/"Time": "<TIME>"/'; }

# --help and --version
run --help >"$tmp/out"; st=$?
check "--help exits 0" test $st -eq 0
check "--help shows check" grep -q "check PLAN" "$tmp/out"
run --version >"$tmp/out"; st=$?
check "--version exits 0" test $st -eq 0
check "--version prints the name" grep -qE '^muranoagent [0-9]+\.[0-9]+\.[0-9]+' "$tmp/out"
run --no-such-option >/dev/null 2>&1; st=$?
check "unknown option exits 2" test $st -eq 2
run frobnicate >/dev/null 2>&1; st=$?
check "unknown command exits 2" test $st -eq 2
run check >/dev/null 2>&1; st=$?
check "check without plans exits 2" test $st -eq 2

# status without an agent: exit 1 and why; a bad argument: exit 2.
printf '[DEFAULT]\nstorage = %s/no-agent\n' "$tmp" >"$tmp/status.conf"
run --config-file "$tmp/status.conf" status >"$tmp/out" 2>"$tmp/err"; st=$?
check "status without an agent exits 1" test $st -eq 1
check "status says no agent answers, and where it asked" grep -qF \
    "no agent answers at $tmp/no-agent/control/muranoagent.sock" "$tmp/err"
run --config-file "$tmp/status.conf" status --bogus >/dev/null 2>&1; st=$?
check "status with an unknown argument exits 2" test $st -eq 2
check "--help shows status" grep -q "status \[--json\]" <(run --help)

# Valid plans: one "ok" line each, exit 0.
plans=("$data"/../../plans/examples/*.yaml "$data"/../../plans/examples/*.json)
run check "${plans[@]}" >"$tmp/out" 2>"$tmp/err"; st=$?
check "example plans are valid (exit 0)" test $st -eq 0
check "one ok line per example plan" test "$(grep -cx ok "$tmp/out")" -eq "${#plans[@]}"

# An invalid plan between two valid ones: line order follows the arguments.
cat >"$tmp/bad.json" <<'PLAN'
{"FormatVersion": "2.0.0", "ID": "p1", "Body": "return", "Scripts": {"s": {"Type": "Chef", "EntryPoint": "a::b"}}, "Files": {}}
PLAN
run check "${plans[0]}" "$tmp/bad.json" "${plans[0]}" >"$tmp/out" 2>"$tmp/err"; st=$?
check "an invalid plan makes check exit 1" test $st -eq 1
check "lines follow the argument order" test "$(sed -n '1p;3p' "$tmp/out" | tr '\n' ' ')" = "ok ok "
sed -n 2p "$tmp/out" | normalise >"$tmp/line"
printf '%s\n' '{"FormatVersion": "2.0.0", "ID": "<ID>", "SourceID": "p1", "Action": "Execution:Result", "ErrorCode": 2, "Body": {"Message": "Type Chef is not valid for format 2.0.0", "AdditionalInfo": null}, "Time": "<TIME>"}' >"$tmp/want"
check "the error document is the reference's, byte for byte" cmp -s "$tmp/line" "$tmp/want"
check "stderr names the failing file" grep -q "bad.json" "$tmp/err"

# Hostile input: each gives one error document and exit 1, never a crash or hang.
printf '{"FormatVersion": "2.0.0", "Body": "ret' >"$tmp/truncated.json"
head -c 4096 /dev/urandom >"$tmp/garbage.json"
printf '{"a": "\xff\xfe"}' >"$tmp/badutf8.json"
{ printf '{"x": '; head -c 200000 /dev/zero | tr '\0' '['; } >"$tmp/deep.json"
{ printf 'x:\n'; for i in $(seq 1 300); do printf '%*s- \n' "$((i * 2))" ''; done; } >"$tmp/deep.yaml"
printf '[1, 2, 3]\n' >"$tmp/array.json"
printf -- '- just\n- a list\n' >"$tmp/list.yaml"
printf '{"Body": 1, "Body": 2}' >"$tmp/dupkey.json"
: >"$tmp/empty.json"
for f in truncated.json garbage.json badutf8.json deep.json deep.yaml array.json list.yaml dupkey.json empty.json; do
    run check "$tmp/$f" >"$tmp/out" 2>"$tmp/err"; st=$?
    check "$f: exit 1" test $st -eq 1
    check "$f: one error document" grep -qE '^\{"FormatVersion": "2.0.0", .*"ErrorCode": [0-9]+' "$tmp/out"
done

# Larger than the limit: refused without reading it all into memory.
head -c $((70 * 1024 * 1024)) /dev/zero | tr '\0' ' ' >"$tmp/huge.json"
run check "$tmp/huge.json" >"$tmp/out" 2>"$tmp/err"; st=$?
check "huge plan: exit 1" test $st -eq 1
check "huge plan: says it is too large" grep -q "larger than" "$tmp/out"

run check "$tmp/does-not-exist.yaml" >"$tmp/out" 2>"$tmp/err"; st=$?
check "missing plan file: exit 1" test $st -eq 1
check "missing plan file: named in the message" grep -q "does-not-exist.yaml" "$tmp/out"

# Configuration: errors stop before anything else (exit 2), with file and line.
printf '[rabbitmq]\nport = abc\nfoo = 1\n' >"$tmp/bad.conf"
run --config-file "$tmp/bad.conf" check "${plans[0]}" >"$tmp/out" 2>"$tmp/err"; st=$?
check "bad config: exit 2" test $st -eq 2
check "bad config: file, line, option and expectation" \
    grep -qF "$tmp/bad.conf:2: [rabbitmq] port: expected an integer from 1 to 65535, got 'abc'" "$tmp/err"
check "bad config: unknown option is only a warning" grep -qF "$tmp/bad.conf:3: unknown option [rabbitmq] foo, ignoring" "$tmp/err"
check "bad config: no plan was judged" test ! -s "$tmp/out"
run --config-file "$tmp/missing.conf" --print-config >/dev/null 2>"$tmp/err"; st=$?
check "missing config file: exit 2" test $st -eq 2
check "missing config file: named" grep -qF "$tmp/missing.conf" "$tmp/err"

# Murano's own file, through --config-dir as Murano starts the agent.
mkdir -p "$tmp/etc-murano"
cp "$data/config/agent-v2.conf" "$tmp/etc-murano/agent.conf"
printf '[rabbitmq]\nport = 5999\n' >"$tmp/etc-murano/zz-override.conf"
printf '[rabbitmq]\nport = junk\n' >"$tmp/etc-murano/agent.conf.sample"
run --config-dir "$tmp/etc-murano" --print-config >"$tmp/out" 2>"$tmp/err"; st=$?
check "--config-dir: exit 0" test $st -eq 0
check "--config-dir: later *.conf overrides, *.conf.sample ignored" grep -qx "port = 5999" "$tmp/out"
check "--print-config masks the password" grep -qx "password = \*\*\*" "$tmp/out"
check "--print-config never shows the password" bash -c "! grep -q s3cr3t '$tmp/out'"
check "--print-config masks engine_key" grep -qx "engine_key = \*\*\*" "$tmp/out"
run --config-dir "$tmp/etc-murano" -d --noenable_dynamic_result_queue --print-config >"$tmp/out" 2>&1
check "--debug overrides the files" grep -qx "debug = true" "$tmp/out"
run --config-dir "$tmp/etc-murano" --max-plan-size=1 check "${plans[0]}" >/dev/null 2>&1; st=$?
check "unknown long option: exit 2" test $st -eq 2
printf '[agent]\nmax_plan_size = 100\n' >"$tmp/small.conf"
run --config-file "$tmp/small.conf" check "${plans[0]}" >"$tmp/out" 2>&1; st=$?
check "max_plan_size from the config applies to check" grep -q "larger than 100 bytes" "$tmp/out"

# The journal's lock: a start waits up to 10 s for it, naming the process
# that holds it (docs/daemon.md, "After a crash or a restart"), and starts
# when it is released; held longer, the start fails with exit 1 and says so.
# No broker is needed: the journal is opened before the first connection.
lk=$tmp/lock
mkdir -p "$lk/storage/plans"
printf '[DEFAULT]\nstorage = %s\n[rabbitmq]\nhost = 127.0.0.1\nport = 9\ninput_queue = q\n[sandbox]\nenabled = false\n' \
    "$lk/storage" >"$lk/agent.conf"
chmod 600 "$lk/agent.conf"
# hold_lock SECONDS: flock(1) holds plans/ for that long, in the background;
# returns once the lock is taken. holder is flock's pid, the lock's owner.
hold_lock() {
    rm -f "$lk/held"
    flock "$lk/storage/plans" sh -c "touch '$lk/held'; exec sleep $1" &
    holder=$!
    for _ in $(seq 200); do [ -e "$lk/held" ] && break; sleep 0.05; done
}
hold_lock 1
timeout 20 "$agent" --config-file "$lk/agent.conf" >"$lk/out" 2>"$lk/err" &
agent_pid=$!
for _ in $(seq 200); do grep -q "muranoagent started" "$lk/err" && break; sleep 0.05; done
kill -TERM "$agent_pid" 2>/dev/null
wait "$agent_pid"; st=$?
wait "$holder"
check "lock held for 1 s: the agent waits and starts" grep -q "muranoagent started" "$lk/err"
check "lock held for 1 s: the wait is logged once, with the holder's pid" \
    test "$(grep -c "plans is locked by process $holder (an agent that is still ending" "$lk/err")" -eq 1
check "lock held for 1 s: the release is logged" grep -q "the journal's lock was released after" "$lk/err"
check "lock held for 1 s: SIGTERM, exit 0" test "$st" -eq 0
hold_lock 14
t0=$SECONDS
timeout 20 "$agent" --config-file "$lk/agent.conf" >"$lk/out" 2>"$lk/err"; st=$?
took=$((SECONDS - t0))
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
check "lock held for longer: exit 1" test "$st" -eq 1
check "lock held for longer: after the 10 s wait ($took s)" test "$took" -ge 9 -a "$took" -le 13
check "lock held for longer: a clear error naming the holder" grep -qF \
    "cannot open the journal in $lk/storage/plans: process $holder still holds its lock after 10 s; another agent is using this storage" \
    "$lk/err"
check "lock held for longer: never started" test "$(grep -c "muranoagent started" "$lk/err")" -eq 0
# The journal's key (made by the starts above) replaced by something that
# is not one: the start fails and says so, and the file is left as it is.
head -c 16 /dev/zero >"$lk/storage/journal.key"
timeout 20 "$agent" --config-file "$lk/agent.conf" >"$lk/out" 2>"$lk/err"; st=$?
check "a key file that is not the journal's key: exit 1" test "$st" -eq 1
check "a key file that is not the journal's key: the error names it" grep -qF \
    "cannot open the journal in $lk/storage/plans: $lk/storage/journal.key is not the agent's key" \
    "$lk/err"
check "a key file that is not the journal's key: left as it was" \
    test "$(wc -c <"$lk/storage/journal.key")" -eq 16

# HTTP(S) downloads go through muranoagent-fetch, found beside the agent in
# the build tree (MURANOAGENT_FETCH unset), inside the default sandbox. The
# agent itself must not load libcurl. The storage is below the build
# directory, as in test-run.sh: the sandbox may hide /tmp from the script.
if ldd "$agent" 2>/dev/null | grep -q libcurl; then
    not_ok "the agent does not link libcurl"
else
    ok "the agent does not link libcurl"
fi
dl=$(mktemp -d "$PWD/test-cli-dl.XXXXXX")
chmod 755 "$dl"
mkdir "$dl/www"
printf 'downloaded body\n' >"$dl/www/hello.txt"
# -u: the port is read from the log while the server runs.
python3 -u -m http.server --bind 127.0.0.1 0 --directory "$dl/www" >"$dl/http.log" 2>&1 &
http_pid=$!
port=
for _ in $(seq 100); do
    port=$(grep -oE 'port [0-9]+' "$dl/http.log" | head -1 | cut -d' ' -f2)
    [ -n "$port" ] && break
    sleep 0.1
done
check "the test HTTP server says its port" test -n "$port"
download_plan() { # download_plan PATH: a plan that downloads PATH and prints it
    cat <<PLAN
{"FormatVersion": "2.1.0", "Version": "1.0.0", "ID": "dl", "Name": "dl",
 "Body": "return cat().stdout",
 "Files": {"f": {"Name": "got", "Type": "Downloadable", "URL": "http://127.0.0.1:$port$1"},
           "c": {"Name": "cat.sh", "BodyType": "Text", "Body": "#!/bin/sh\\ncat got/*\\n"}},
 "Scripts": {"cat": {"Type": "Application", "Version": "1.0.0", "EntryPoint": "c", "Files": ["f"],
                     "Options": {"captureStdout": true, "captureStderr": true}}}}
PLAN
}
body_of() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(json.dumps([d["ErrorCode"], d["Body"]]))'; }
printf '' >"$dl/empty.conf"
download_plan /hello.txt >"$dl/ok.json"
env -u MURANOAGENT_FETCH -u http_proxy -u HTTP_PROXY timeout 60 "$agent" --config-file "$dl/empty.conf" \
    run "$dl/ok.json" --storage "$dl/storage" >"$dl/out" 2>"$dl/err"
check "an HTTP download through muranoagent-fetch" \
    test "$(body_of <"$dl/out")" = '[0, "downloaded body"]'
download_plan /missing.txt >"$dl/missing.json"
env -u MURANOAGENT_FETCH -u http_proxy -u HTTP_PROXY timeout 60 "$agent" --config-file "$dl/empty.conf" \
    run "$dl/missing.json" --storage "$dl/storage" >"$dl/out" 2>"$dl/err"
check "a 404 gives muranoagent-fetch's reason" grep -qF \
    "Error to download the file http://127.0.0.1:$port/missing.txt: the server answered with HTTP status 404" \
    "$dl/out"
kill "$http_pid" 2>/dev/null
wait "$http_pid" 2>/dev/null
rm -rf "$dl"

tap_done
