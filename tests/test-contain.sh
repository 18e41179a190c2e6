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
        -e "s|@STORAGE@|$work/storage|g" -e "s|@SECRET@|$secret|g" \
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
    printf '[rabbitmq]\npassword = %s\n[sandbox]\nprofile = %s\n' "$secret" "$1" >"$work/agent.conf"
    chmod 600 "$work/agent.conf"
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
    "read the agent's config" "read the journal" "read another plan's files"
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
            skip "$profile: $a" "nothing to attack on this host"
        elif [ "$profile" = compatible ] || { [ "$profile" = contained ] &&
            case $a in "be root"* | "reach the host's network"*) true ;; *) false ;; esac }; then
            # What the profile lets through, as docs/sandbox.md says.
            same "$profile: $a gets through (as documented)" SUCCEEDED "$got"
        else
            same "$profile: $a is stopped" blocked "$got"
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
    done
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
tap_done
