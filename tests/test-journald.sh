#!/bin/bash
# The agent's log entries through a real systemd-journald, in TAP
# (docs/daemon.md, "Logs"). In a private mount namespace (unshare -m) with a
# tmpfs on /run, and on /var/log/journal, this script starts
# systemd-journald, runs `muranoagent run` on three plans with stderr in a
# file that $JOURNAL_STREAM names (as systemd does for a unit whose stderr is
# the journal), and reads the entries back with journalctl: the fields, a
# message of two lines, one larger than a datagram (sent in a memfd),
# nothing on stderr. Then journald is stopped and the
# entries come to stderr as lines. Needs root, unshare, systemd-journald
# and journalctl; says "# SKIP" without them.
# MURANOAGENT and TEST_DATA_DIR come from meson (tests/meson.build).
set -u
agent=${MURANOAGENT:?}
journald=/lib/systemd/systemd-journald
here=$(cd "$(dirname "$0")" && pwd)

# ---- inside the namespace: journald, the runs, journalctl ----------------
if [ "${1:-}" = inner ]; then
    work=$2
    mount --make-rprivate / && mount -t tmpfs tmpfs /run || exit 1
    if [ -d /var/log/journal ]; then
        mount -t tmpfs tmpfs /var/log/journal || exit 1
    fi
    mkdir -p /run/systemd/journal /run/log/journal
    "$journald" >"$work/journald.out" 2>&1 &
    jpid=$!
    for _ in $(seq 100); do
        [ -S /run/systemd/journal/socket ] && break
        sleep 0.05
    done
    : >"$work/stderr"
    stream=$(stat -c '%d:%i' "$work/stderr")
    for plan in hello fails big; do
        JOURNAL_STREAM=$stream "$agent" --config-file "$work/agent.conf" run "$work/$plan.json" \
            --storage "$work/storage" >/dev/null 2>>"$work/stderr"
    done
    # journald takes the datagrams in its own time: wait for the plans' end.
    for _ in $(seq 200); do
        [ "$(journalctl -D /run/log/journal -o cat --no-pager SYSLOG_IDENTIFIER=muranoagent |
            grep -c '^plan finished')" = 3 ] && break
        sleep 0.05
    done
    journalctl -D /run/log/journal -o json --no-pager SYSLOG_IDENTIFIER=muranoagent \
        >"$work/entries.json"
    journalctl -D /run/log/journal -o cat --no-pager PLAN_ID=jd-fails >"$work/fails.txt"
    journalctl -D /run/log/journal -o cat --no-pager PLAN_ID=jd-big >"$work/big.txt"
    kill "$jpid"
    wait "$jpid"
    # journald gone: the socket is still there, but nobody reads it.
    JOURNAL_STREAM=$stream "$agent" --config-file "$work/agent.conf" run "$work/hello.json" \
        --storage "$work/storage" >/dev/null 2>"$work/after"
    exit 0
fi

. "$here/tap.sh"
if [ "$(id -u)" != 0 ] || [ ! -x "$journald" ] || ! command -v journalctl >/dev/null ||
    ! unshare -m true 2>/dev/null; then
    skip "entries through systemd-journald" "needs root, unshare -m, $journald and journalctl"
    tap_done
    exit
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '[sandbox]\nenabled = false\n' >"$work/agent.conf"
python3 - "$here/../plans/examples/hello.json" "$work" <<'EOF'
import json, sys
plan = json.load(open(sys.argv[1]))
plan["ID"] = "jd-hello"
json.dump(plan, open(sys.argv[2] + "/hello.json", "w"))
plan["ID"] = "jd-fails"
plan["Body"] = 'raise ValueError("first line\\nsecond line")'
json.dump(plan, open(sys.argv[2] + "/fails.json", "w"))
plan["ID"] = "jd-big"
plan["Body"] = 'raise ValueError("big:" + "y" * 400000 + ":end")'
json.dump(plan, open(sys.argv[2] + "/big.json", "w"))
EOF
unshare -m "$0" inner "$work"
note <"$work/journald.out"

check "nothing went to stderr while journald ran" test ! -s "$work/stderr"
summary=$(python3 - "$work/entries.json" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    print(e.get("PLAN_ID"), e.get("PRIORITY"), e.get("SYSLOG_IDENTIFIER"),
          e.get("CODE_FILE", "").startswith("agent/"), e.get("CODE_LINE", "").isdigit(),
          bool(e.get("CODE_FUNC")), e.get("MESSAGE"), sep="|")
EOF
)
note <<<"$summary"
same "the hello plan's entries, with their fields" \
    "jd-hello|6|muranoagent|True|True|True|plan started
jd-hello|6|muranoagent|True|True|True|calling script hello
jd-hello|6|muranoagent|True|True|True|plan finished: ErrorCode 0" \
    "$(grep '^jd-hello|' <<<"$summary" | grep -v 'script hello: sandbox\|script hello finished')"
check "the failing plan's warning has PRIORITY 4" grep -q '^jd-fails|4|muranoagent|True|' <<<"$summary"
check "journalctl PLAN_ID=jd-fails gives a message of two lines, whole" \
    grep -qx 'second line' "$work/fails.txt"
# Larger than a datagram may be: it goes through a sealed memfd.
check "an entry of 400 kB reaches journald whole, through a memfd" \
    python3 -c 'import sys; sys.exit("big:" + "y" * 400000 + ":end" not in open(sys.argv[1]).read())' \
    "$work/big.txt"
check "without journald, the entries come to stderr as lines" \
    grep -q ' INFO muranoagent \[plan jd-hello\] plan finished: ErrorCode 0$' "$work/after"
tap_done
