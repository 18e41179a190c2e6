#!/bin/bash
# The daemon with [sandbox] profile = contained: a plan's script, root in
# its namespaces, finds nothing of the agent: no journal entry in the
# storage (where the daemon keeps the plan it is running), no config file
# (with the broker password), no agent among its processes; its result still
# comes back, and so does the next plan's. The scripts only look (ls, grep,
# kill -0), so nothing is harmed should the sandbox fail. Needs root; the
# namespaces the kernel refuses make it a skip.
# The plans' scripts are written in single quotes: $1 is theirs.
# shellcheck disable=SC2016
# shellcheck source=tests/integration/common.sh
. "$(dirname "$0")/common.sh"

if [ "$(id -u)" != 0 ] || ! unshare -m -p -f true 2>/dev/null; then
    skip "the daemon with profile = contained" "needs root and mount and pid namespaces"
    done_testing
fi
agent_conf a "[sandbox]" "enabled = true" "profile = contained" "[agent]"
q=$(qname a)
rq=$q-results
amqp declare "$q" "$rq" >/dev/null || bail "cannot declare the queues"
agent_start a
agent_wait_consuming a || bail "the agent did not start consuming: $(tail -5 "$T/a/log")"

probe='#!/bin/sh
echo "journal entries: $(ls -A '"$T/a/storage/plans"' 2>/dev/null | wc -l)"
grep -qs input_queue '"$T/a/agent.conf"' && echo "config: read" || echo "config: hidden"
found=no
for p in /proc/[0-9]*; do
    tr "\0" " " <$p/cmdline 2>/dev/null | grep -q "muranoagent --config-file" &&
        kill -0 "${p#/proc/}" 2>/dev/null && found=yes
done
echo "agent found: $found"
'
python3 - "$probe" >"$T/probe.json" <<'PY'
import json, sys
print(json.dumps({
    "FormatVersion": "2.1.0", "Version": "1.0.0", "Name": "probe", "ID": "probe-1",
    "Action": "Execute", "Body": "return probe().stdout",
    "Scripts": {"probe": {"Type": "Application", "Version": "1.0.0", "EntryPoint": "f",
                          "Files": [], "Options": {"captureStdout": True,
                                                   "captureStderr": True}}},
    "Files": {"f": {"Name": "probe.sh", "BodyType": "Text", "Body": sys.argv[1]}}}))
PY
for i in 1 2; do
    mkdir -p "$T/out$i"
    snd --queue "$q" --no-wait --raw "$T/probe.json" >/dev/null 2>"$T/err$i" ||
        { not_ok "plan $i: published"; note <"$T/err$i"; continue; }
    same "plan $i: one result" 1 "$(amqp drain --count 1 --idle 20000 --out "$T/out$i" "$rq")"
    same "plan $i: the script saw no journal entry, no config, no agent" \
        "$(printf '%s\n' "journal entries: 0" "config: hidden" "agent found: no")" \
        "$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
print(d["ErrorCode"] or d["Body"])' "$T/out$i/00001.body" 2>/dev/null)"
done
check "the log names the profile" log_has a "sandbox: profile=contained "
agent_stop a
same "the agent stops cleanly" 0 "$AGENT_STATUS"
done_testing
