#!/bin/bash
# The sandbox's profiles against hostile scripts, in TAP (docs/sandbox.md,
# "Profiles"): under `contained` and `user` every attack of
# tests/data/run/attacks.yaml is stopped and the next plan still runs;
# under `compatible` each gets through, as the table in docs/sandbox.md
# says; `apt-get install` of a local package works under `compatible` and
# `contained`; the agent warns when the scripts' user may read its config.
#
# Safe as root on a developer's machine: every plan runs inside mount and
# pid namespaces this test makes (unshare -m -p), where the attacks only
# reach the test's own mounts and processes, and the package install goes
# to copies of the dpkg and apt state and a tmpfs. MURANOAGENT and
# TEST_DATA_DIR come from meson (tests/meson.build).
set -u
agent=${MURANOAGENT:?}
data=${TEST_DATA_DIR:?}/run

. "$(dirname "$0")/tap.sh"

[ -x "$agent" ] || { echo "Bail out! no agent at $agent"; exit 1; }
if [ "$(id -u)" != 0 ]; then
    echo "1..1"
    echo "ok 1 - hostile scripts # SKIP not root: namespaces and capabilities need it"
    exit 0
fi
if ! unshare -m -p -f --mount-proc true 2>/dev/null; then
    echo "1..1"
    echo "ok 1 - hostile scripts # SKIP unshare -m -p refused here:" \
        "$(unshare -m -p -f --mount-proc true 2>&1 | head -n1)"
    exit 0
fi

# The plans mount a tmpfs on /tmp in their namespace: work elsewhere, in a
# directory the user nobody can reach (the user profile's scripts are his).
case $PWD/ in
/tmp/* | /var/tmp/*) work=$(mktemp -d /var/lib/muranoagent-test.XXXXXX) ;;
*) work=$(mktemp -d "$PWD/test-contain.XXXXXX") ;;
esac
chmod 755 "$work"
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
# The agent, its helpers and the plain plan, copied into $work: the attack
# run mounts a tmpfs on /tmp, which would hide a checkout below /tmp.
mkdir "$work/bin"
cp "$agent" "$work/bin/muranoagent"
cp "$(dirname "$agent")/sandbox/muranoagent-sandbox" "$work/bin/"
cp "${MURANOAGENT_FETCH:-$(dirname "$agent")/files/muranoagent-fetch}" \
    "$work/bin/muranoagent-fetch"
agent=$work/bin/muranoagent
export MURANOAGENT_FETCH=$work/bin/muranoagent-fetch
cp "$data/../../../plans/examples/hello.json" "$work/hello.json"
hello=$work/hello.json
secret=muranoagent-secret-$$

res() { # res KEY: a value of the result document in $work/out
    python3 -c 'import json, sys
v = json.loads(open(sys.argv[1]).read()).get(sys.argv[2])
print(v if isinstance(v, str) else json.dumps(v))' "$work/out" "$1" 2>/dev/null
}
plan() { # plan NAME: tests/data/run/NAME.yaml with the test's values, into $work
    local rootdev
    # The disk under /, when the test itself may read it (a container's
    # device rules may refuse even root).
    rootdev=$(findmnt -no SOURCE / 2>/dev/null)
    [ -b "$rootdev" ] && [ "$(head -c 4096 "$rootdev" 2>/dev/null | wc -c)" = 4096 ] || rootdev=
    sed -e "s|@DIR@|$work/d|g" -e "s|@CONF@|$work/agent.conf|g" \
        -e "s|@STORAGE@|$work/storage|g" -e "s|@SECRET@|$secret|g" -e "s|@LOG@|$work/agent.log|g" \
        -e "s|@ROOTDEV@|$rootdev|g" -e "s|^ID: e2e-|ID: e2e-$$-|" \
        "$data/$1.yaml" >"$work/$1.yaml"
    echo "$work/$1.yaml"
}

# in_namespace SCRIPT ARGS...: run SCRIPT with sh in new mount and pid
# namespaces (private mounts, a /proc of their own) with $agent as $A, the
# config as $C and the storage as $S; whatever it mounts stays there. It runs
# in /, as the tmpfs it mounts on /tmp would hide a checkout below /tmp.
in_namespace() {
    (cd / && A=$agent C=$work/agent.conf S=$work/storage unshare -m -p -f --mount-proc \
        sh -c "$@")
}

# The attack run, in the test's namespace: its own /tmp (to unmount), a
# read-only bind of $work/d/ro (to remount), /run on a tmpfs where a
# listener stands in for the D-Bus system bus and systemd's private socket,
# a journal entry and another plan's file planted in the storage. The
# attack plan, then hello.json: the next plan must still run.
attack_run() { # attack_run PROFILE
    rm -rf "$work/d" "$work/storage"
    mkdir -p "$work/d/mnt" "$work/d/ro" "$work/storage/plans" "$work/storage/files/e2e-other"
    chmod 755 "$work/d"
    printf '{"ID": "planted", "secret": "%s"}\n' "$secret" >"$work/storage/plans/planted.json"
    echo "$secret" >"$work/storage/files/e2e-other/secret"
    # Not a key the journal would take (32 bytes): `run` does not open it.
    echo "$secret" >"$work/storage/journal.key"
    echo "plan e2e-other: $secret" >"$work/agent.log"
    printf '[DEFAULT]\nlog_file = %s\n[rabbitmq]\npassword = %s\n[sandbox]\nprofile = %s\n' \
        "$work/agent.log" "$secret" "$1" >"$work/agent.conf"
    chmod 600 "$work/agent.conf" "$work/agent.log" "$work/storage/journal.key"
    # shellcheck disable=SC2016 # expanded by the inner shell
    in_namespace '
        mount -t tmpfs none /tmp && touch /tmp/still-mounted &&
        mount --bind "$0/d/ro" "$0/d/ro" && mount -o remount,bind,ro "$0/d/ro" &&
        mount -t tmpfs none /run && mkdir /run/dbus /run/systemd || exit
        python3 -c "import socket, sys, time
import os
for p, mode in (sys.argv[1], 0o666), (sys.argv[2], 0o600):
    s = socket.socket(socket.AF_UNIX); s.bind(p); os.chmod(p, mode); s.listen(8); globals()[p] = s
t = socket.socket(); t.bind((\"127.0.0.1\", 0)); t.listen(8)
open(sys.argv[3], \"w\").write(str(t.getsockname()[1]))
time.sleep(120)" /run/dbus/system_bus_socket /run/systemd/private "$0/d/port" &
        tries=0
        while [ ! -s "$0/d/port" ]; do
            tries=$((tries + 1)) && [ "$tries" -le 200 ] || exit 1
            sleep 0.05
        done
        "$A" --config-file "$C" run "$1" --storage "$S" >"$0/out.attacks" 2>"$0/err"
        "$A" --config-file "$C" run "$2" --storage "$S" >"$0/out" 2>>"$0/err"
        ls /proc/self/ >/dev/null && echo "/proc there" >"$0/d/after"
        [ -e /tmp/still-mounted ] && echo "/tmp there" >>"$0/d/after"' "$work" "$(plan attacks)" "$hello"
}

attacks=("mount a tmpfs" "remount a read-only mount read-write" "nsenter -t 1 -m"
    "read the agent's config" "read the journal" "read the journal's key" "read the agent's log"
    "read another plan's files"
    "find and signal the agent" "read the root disk raw" "write a kernel sysctl"
    "write a cgroup.procs" "hold CAP_SYS_ADMIN" "be root (setuid 0)"
    "regain CAP_SYS_ADMIN through a file capability" "connect to /run/dbus/system_bus_socket"
    "connect to /run/systemd/private" "reach the host's network (a port on 127.0.0.1)"
    "umount /tmp" "umount -l /proc")
# outcome ATTACK: its line's outcome in the attack plan's output
outcome() {
    python3 -c 'import json, sys
body = json.load(open(sys.argv[1])).get("Body") or ""
for line in body.split("\n"):
    if line.startswith(sys.argv[2] + ": "):
        print(line[len(sys.argv[2]) + 2:])' "$work/out.attacks" "$1" 2>/dev/null
}

# The table of docs/sandbox.md ("What each profile does to each attack")
# says what to expect: expect ROW PROFILE prints the outcome its cell
# starts with (through, stopped, root, works, none), or "missing". Each row
# asked is noted, so that the end can tell a row no check asked for.
table=$data/../../../docs/sandbox.md
expect() {
    printf '%s\n' "$1" >>"$work/rows-checked"
    python3 - "$table" "$1" "$2" <<'PY'
import sys
doc, row, profile = sys.argv[1:]
text = open(doc).read().split("### What each profile does to each attack", 1)[-1]
lines = [l for l in text.split("\n## ", 1)[0].split("\n") if l.startswith("| ")]
head = [c.strip().strip("`") for c in lines[0].strip("|").split("|")]
for l in lines[1:]:
    cells = [c.strip() for c in l.strip("|").split("|")]
    if cells[0] == row:
        cell = cells[head.index(profile)]
        for prefix, name in (("gets through", "through"), ("stopped", "stopped"),
                             ("root already", "root"), ("works", "works"),
                             ("not attempted", "none")):
            if cell.startswith(prefix):
                print(name)
                sys.exit()
        print("unknown: " + cell)
        sys.exit()
print("missing")
PY
}
# agree ROW PROFILE OBSERVED: the outcome seen is the table's.
agree() {
    local want
    want=$(expect "$1" "$2")
    same "$2: $1: $want (docs/sandbox.md)" "$want" "$3"
}
# As agree, for an attack script's SUCCEEDED or blocked.
agree_line() {
    case $3 in
    SUCCEEDED) agree "$1" "$2" through ;;
    blocked) agree "$1" "$2" stopped ;;
    *) agree "$1" "$2" "$3" ;;
    esac
}

for profile in contained user compatible; do
    if [ "$profile" = user ] && ! getent passwd nobody >/dev/null; then
        skip "profile user" "no user nobody here"
        continue
    fi
    if [ "$profile" = user ] && ! setpriv --reuid=nobody --regid=nogroup --clear-groups \
        test -x "$work" 2>/dev/null; then
        skip "profile user" "nobody cannot reach $work"
        continue
    fi
    attack_run "$profile"
    body=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("ErrorCode"))' \
        "$work/out.attacks" 2>/dev/null)
    same "$profile: the attack plan ran (ErrorCode 0)" 0 "$body"
    [ "$body" = 0 ] || { note <"$work/out.attacks"; note <"$work/err"; }
    for a in "${attacks[@]}"; do
        got=$(outcome "$a")
        if [ "$got" = n/a ]; then
            expect "$a" "$profile" >/dev/null
            skip "$profile: $a" "nothing to attack on this host"
        else
            agree_line "$a" "$profile" "$got"
        fi
    done
    same "$profile: the next plan still runs (ErrorCode 0)" 0 "$(res ErrorCode)"
    same "$profile: and prints its output" "hello, world" "$(res Body)"
    if [ "$profile" != compatible ]; then
        same "$profile: the test's /proc and /tmp are still mounted" \
            "$(printf '/proc there\n/tmp there')" "$(cat "$work/d/after" 2>/dev/null)"
        check "$profile: the log names the profile" grep -q "sandbox: profile=$profile " \
            "$work/err"
    fi
done

# --- Exhausting, tricking and regaining, per profile. ---
# In the test's namespace the storage is a 48 MiB tmpfs: the disk that
# the plan's directory is on, which a script fills. The battery's plans,
# then hello.json: the next plan must still run.
priv=$work/priv
mkdir -p "$priv" && chmod 755 "$priv"
cp "$(command -v setpriv)" "$priv/suid-setpriv" && chmod 4755 "$priv/suid-setpriv"
cp "$(command -v setpriv)" "$priv/cap-setpriv"
if ! setcap cap_setuid,cap_setgid+ep "$priv/cap-setpriv" 2>/dev/null; then
    rm -f "$priv/cap-setpriv"
fi
battery_run() { # battery_run PROFILE
    rm -rf "$work/d" "$work/storage" "$work/err"
    mkdir -p "$work/d/victim" "$work/storage"
    chmod 755 "$work/d"
    printf '[sandbox]\nprofile = %s\n' "$1" >"$work/agent.conf"
    chmod 600 "$work/agent.conf"
    # shellcheck disable=SC2016 # expanded by the inner shell
    in_namespace '
        mount -t tmpfs -o size=48m,mode=755 none "$S" || exit
        dir=$0
        for p in "$@"; do
            name=$(basename "$p" .yaml)
            name=${name%.json}
            timeout 120 "$A" --config-file "$C" run "$p" --storage "$S" >"$dir/out.$name" \
                2>>"$dir/err"
            echo "$(ls -A "$S/files" 2>/dev/null | wc -l)" >"$dir/left.$name"
        done' "$work" "$(plan exhaust)" "$(plan symlinks)" "$(plan names)" "$escape" \
        "$(plan regain)" "$hello"
}
escape=$(plan escape) && sed -i 's|@NAME@|../x|' "$escape"
val() { # val NAME EXPR: a Python expression of the result document d of plan NAME
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$work/out.$1" "$2" 2>/dev/null
}
line() { # line NAME N PREFIX: the outcome of PREFIX in the Body (item N) of plan NAME
    python3 -c 'import json, sys
b = json.load(open(sys.argv[1]))["Body"]
b = b[int(sys.argv[2])] if sys.argv[2] != "-" else b
for l in b.split("\n"):
    if l.startswith(sys.argv[3] + ": "):
        print(l[len(sys.argv[3]) + 2:])' "$work/out.$1" "$2" "$3" 2>/dev/null
}
nosuid=$(findmnt -no OPTIONS --target "$priv" | tr ',' '\n' | grep -x nosuid)
# CAP_SYS_RESOURCE (24) in the test's own bounding set: what root scripts
# may keep (some containers hold it back).
sys_resource=$((0x$(sed -n 's/^CapBnd:[[:space:]]*//p' /proc/self/status) >> 24 & 1))

for profile in compatible contained user; do
    if [ "$profile" = user ] && ! setpriv --reuid=nobody --regid=nogroup --clear-groups \
        test -x "$work" 2>/dev/null; then
        skip "battery, profile user" "nobody cannot reach $work"
        continue
    fi
    start=$SECONDS
    battery_run "$profile"
    [ "$(val exhaust 'd["ErrorCode"]')" = 0 ] ||
        { head -c 600 "$work/out.exhaust" | note; tail -n 8 "$work/err" | note; }
    # Descriptors: RLIMIT_NOFILE (1024) holds; only compatible keeps
    # CAP_SYS_RESOURCE.
    got=$(val exhaust '"|".join(d["Body"][0].split("\n")[:2])')
    [ "$got" = "open until EMFILE|limit: 1024 1024, open: 1024" ] && got=stopped
    agree "open descriptors until EMFILE" "$profile" "$got"
    got=$(line exhaust 0 "raise RLIMIT_NOFILE")
    if [ "$profile" = compatible ] && [ "$sys_resource" = 0 ]; then
        expect "raise RLIMIT_NOFILE" "$profile" >/dev/null
        skip "$profile: raise RLIMIT_NOFILE" "this host gives the test no CAP_SYS_RESOURCE (CapBnd)"
    else
        agree_line "raise RLIMIT_NOFILE" "$profile" "$got"
    fi
    # Disk: the plan's file system fills; the result still comes, and the
    # space with the plan's files.
    got=$(line exhaust 2 "fill the disk")
    [ "$got" = "full (ENOSPC)" ] && got=through
    agree "fill the plan's disk" "$profile" "$got"
    same "$profile: fill the plan's disk: the result comes (ErrorCode 0)" 0 \
        "$(val exhaust 'd["ErrorCode"]')"
    same "$profile: fill the plan's disk: the plan's files are gone after it" 0 \
        "$(cat "$work/left.exhaust" 2>/dev/null)"
    # Output: 1 GiB kept to output_limit (1 MiB) with the marker.
    got=$(val exhaust '(str(len(d["Body"][1]) <= (1 << 20) + 200) + " " +
        str("bytes omitted by muranoagent" in d["Body"][1]))')
    [ "$got" = "True True" ] && got=stopped
    agree "print 1 GiB on stdout" "$profile" "$got"
    # Symlinks planted to redirect the agent's writes: an error result
    # saying so, nothing written through them.
    got="$(val symlinks 'd["ErrorCode"]') $(find "$work/d/victim" -mindepth 1 | wc -l)"
    [ "$got" = "1 0" ] && grep -qE "symbolic link|File exists" "$work/out.symlinks" && got=stopped
    agree "plant symlinks to redirect the agent's writes" "$profile" "$got"
    # Names that would leave the plan's directory.
    got="$(val names 'd["ErrorCode"] != 0') $(test -e "$work/storage/files/x" && echo written)"
    [ "$got" = "True " ] && got=stopped
    agree "a file ID ../x" "$profile" "$got"
    got=$(val escape 'd["ErrorCode"]')
    [ "$got" = 2 ] && got=stopped
    agree "a file Name ../x" "$profile" "$got"
    # Regaining root.
    for a in "a set-user-ID root program" "sudo" "a file capability (cap_setuid)"; do
        if [ "$profile" != user ]; then
            got=$(val regain 'd["Body"].strip()')
            [ "$got" = "root already" ] && got=root
            agree "regain root: $a" "$profile" "$got"
            continue
        fi
        got=$(line regain - "$a")
        if [ "$got" = n/a ]; then
            expect "regain root: $a" user >/dev/null
            skip "user: regain root: $a" "not installed here"
        elif [ "$a" = "a set-user-ID root program" ] && [ -n "$nosuid" ]; then
            expect "regain root: $a" user >/dev/null
            skip "user: regain root: $a" "$priv is on a nosuid mount"
        elif [ "$a" = "a file capability (cap_setuid)" ] && [ ! -e "$priv/cap-setpriv" ]; then
            expect "regain root: $a" user >/dev/null
            skip "user: regain root: $a" "setcap refused here"
        else
            agree_line "regain root: $a" user "$got"
        fi
    done
    same "$profile: the next plan still runs (ErrorCode 0)" 0 "$(val hello 'd["ErrorCode"]')"
    note <<<"$profile: battery in $((SECONDS - start)) s"
done

# --- apt-get install of a real package, under the profiles that promise it. ---
if ! command -v apt-get >/dev/null || ! command -v dpkg-deb >/dev/null; then
    skip "apt-get install" "no apt-get or dpkg-deb here"
elif [ ! -d /srv ] || [ ! -d /var/lib/dpkg ] || [ ! -d /var/lib/apt ]; then
    skip "apt-get install" "no /srv, /var/lib/dpkg or /var/lib/apt to stand in for"
else
    pkg=$work/pkg
    mkdir -p "$pkg/DEBIAN" "$pkg/srv/muranoagent-contain-test"
    echo installed >"$pkg/srv/muranoagent-contain-test/hello"
    printf '%s\n' "Package: muranoagent-contain-test" "Version: 1.0" "Architecture: all" \
        "Maintainer: muranoagent tests <tests@invalid>" \
        "Description: a package the sandbox tests install" >"$pkg/DEBIAN/control"
    # shellcheck disable=SC2016 # expanded by the postinst
    printf '#!/bin/sh\nset -e\necho "postinst as uid $(id -u)" >%s\n' \
        /srv/muranoagent-contain-test/postinst >"$pkg/DEBIAN/postinst"
    chmod 755 "$pkg/DEBIAN/postinst"
    mkdir -p "$work/d"
    dpkg-deb --build --root-owner-group "$pkg" "$work/d/muranoagent-contain-test.deb" >/dev/null
    for profile in compatible contained; do
        rm -rf "$work/dpkg" "$work/apt" "$work/storage"
        cp -a /var/lib/dpkg "$work/dpkg"
        cp -a /var/lib/apt "$work/apt"
        printf '[sandbox]\nprofile = %s\n' "$profile" >"$work/agent.conf"
        # apt and dpkg write their state, logs and caches: copies and
        # tmpfs mounts in the test's namespace stand in for each.
        # shellcheck disable=SC2016 # expanded by the inner shell
        in_namespace '
            mount --bind "$0/dpkg" /var/lib/dpkg && mount --bind "$0/apt" /var/lib/apt &&
            mount -t tmpfs none /var/log && mkdir /var/log/apt &&
            mount -t tmpfs none /var/cache/apt && mkdir -p /var/cache/apt/archives/partial &&
            mount -t tmpfs none /srv || exit
            "$A" --config-file "$C" run "$1" --storage "$S" >"$0/out" 2>"$0/err"' \
            "$work" "$(plan aptinstall)"
        same "$profile: apt-get install of a local .deb (ErrorCode 0)" 0 "$(res ErrorCode)"
        same "$profile: its files and its postinst, as root, and dpkg knows it" \
            "$(printf '%s\n' installed "postinst as uid 0" \
                "muranoagent-contain-test 1.0 install ok installed")" "$(res Body)"
        [ "$(res ErrorCode)" = 0 ] && got=works || got="ErrorCode $(res ErrorCode)"
        agree "apt-get install of a local package" "$profile" "$got"
    done
    expect "apt-get install of a local package" user >/dev/null
    check "apt-get install: the host's packages did not change" \
        test -z "$(dpkg-query -W muranoagent-contain-test 2>/dev/null)"
fi

# --- Hiding without the mount namespace: refused, never run unprotected. ---
printf '[sandbox]\nprofile = contained\nmount_namespace = false\n' >"$work/agent.conf"
timeout 60 "$agent" --config-file "$work/agent.conf" run "$hello" \
    --storage "$work/storage" >"$work/out" 2>/dev/null
same "contained without its mount namespace: ErrorCode 102" 102 "$(res ErrorCode)"
same "contained without its mount namespace: the message" \
    "[sandbox] hide_agent, hide_paths and protect_kernel need mount_namespace = true" \
    "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["Body"]["Message"])' \
        "$work/out" 2>/dev/null)"

# --- The scripts' user may read the config: a warning at every start. ---
if getent passwd nobody >/dev/null && getent group nogroup >/dev/null; then
    printf '[sandbox]\nprofile = user\n' >"$work/agent.conf"
    chmod 644 "$work/agent.conf"
    # No input_queue: the daemon checks its files, then exits with status 2.
    timeout 10 "$agent" --config-file "$work/agent.conf" >/dev/null 2>"$work/err"
    check "user profile, config mode 0644: the start warns that nobody may read it" grep -qF \
        "$work/agent.conf is readable by [sandbox] user nobody, whom scripts run as" "$work/err"
    chmod 600 "$work/agent.conf"
    timeout 10 "$agent" --config-file "$work/agent.conf" >/dev/null 2>"$work/err"
    check "user profile, config mode 0600 root's: no warning" \
        test -z "$(grep -F "readable by [sandbox] user" "$work/err")"
else
    skip "the config readable by the scripts' user" "no user nobody or group nogroup here"
fi
# Every row of the table was asked for by a check (or by a skip).
same "every row of the table in docs/sandbox.md is checked" "" "$(python3 - "$table" \
    "$work/rows-checked" <<'PY'
import sys
text = open(sys.argv[1]).read().split("### What each profile does to each attack", 1)[-1]
rows = [l.strip("|").split("|")[0].strip() for l in text.split("\n## ", 1)[0].split("\n")
        if l.startswith("| ")][1:]
seen = set(open(sys.argv[2]).read().split("\n"))
print(", ".join(r for r in rows if r not in seen))
PY
)"
tap_done
