#!/bin/bash
# The newcomer's machine: runs the README's commands in a fresh Debian 12 root
# whose only way out is the Debian archive, and says whether they pass.
#   tests/fresh-root.sh [OPTIONS] [COMMAND...]
# COMMAND is demo (plans/demo.sh), suite (tests/run.sh), shell (an
# interactive shell there) or any shell command line, run in /root/project;
# the default is "demo suite". Options:
#   --keep      keep the root afterwards (its path is printed), for a look
#   --refresh   debootstrap anew instead of unpacking the cached root
# Run as root on Debian 12 with debootstrap and python3.
#
# The root: debootstrap --variant=minbase of bookworm plus what a small
# server has (ca-certificates git sudo procps iproute2 python3 netbase), with
# empty apt lists, cached as a tarball in $FRESH_ROOT_CACHE (default
# /var/cache/muranoagent-fresh-root/) under a name that carries the package
# list. The checkout's HEAD commit (not uncommitted changes) is cloned to
# /root/project, /root being mode 0700, and the commands run there as root
# with CI=true, in network, mount and pid namespaces of their own: loopback,
# and http_proxy to a proxy that forwards to $DEBIAN_MIRROR's host only
# (tests/fresh-root-proxy.py), no_proxy for loopback; the root gets its own
# /proc, /sys, cgroup2 on /sys/fs/cgroup, /dev (with a fresh /dev/shm),
# while /tmp stays its own directory on disk, as on Debian 12. The
# environment is a clean login's, none of the caller's. Everything started
# is stopped, by pid, and the namespaces take their mounts with them.
# Which runs are expected to take how long: README.md, "Quick start".
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

keep=false
refresh=false
cmds=()
while [ $# -gt 0 ]; do
    case $1 in
    --keep) keep=true ;;
    --refresh) refresh=true ;;
    -h | --help)
        sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    -*)
        echo "fresh-root: unknown option $1 (see --help)" >&2
        exit 2
        ;;
    *) cmds+=("$1") ;;
    esac
    shift
done
[ ${#cmds[@]} -gt 0 ] || cmds=(demo suite)

if [ "$(id -u)" -ne 0 ]; then
    echo "fresh-root: run as root (debootstrap, namespaces, chroot)" >&2
    exit 2
fi
for t in debootstrap unshare chroot python3 git; do
    command -v "$t" >/dev/null || { echo "fresh-root: $t is missing" >&2; exit 2; }
done

suite=bookworm
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
mirror_host=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.urlsplit(sys.argv[1]).hostname)' "$mirror")
include=ca-certificates,git,sudo,procps,iproute2,python3,netbase
cache=${FRESH_ROOT_CACHE:-/var/cache/muranoagent-fresh-root}
key=$(printf '%s %s %s' "$suite" "$mirror" "$include" | sha256sum | cut -c1-12)
tarball=$cache/$suite-minbase-$key.tar.gz
port=3128

state=$(mktemp -d /var/tmp/muranoagent-fresh-root.XXXXXX)
root=$state/root
proxy_pid=
ns_pid=
cleanup() {
    local st=$?
    set +e
    # The pid namespace ends with unshare's child, taking every process of
    # the run and every mount of the mount namespace with it.
    if [ -n "$ns_pid" ]; then
        kill -KILL "$ns_pid" 2>/dev/null
        wait "$ns_pid" 2>/dev/null
    fi
    if [ -n "$proxy_pid" ]; then
        kill -TERM "$proxy_pid" 2>/dev/null
        wait "$proxy_pid" 2>/dev/null
    fi
    if $keep && [ -d "$root" ]; then
        echo "fresh-root: the root is kept in $root (rm -rf $state when done)"
        rm -f "$state/proxy.sock" "$state/inner.sh"
    else
        rm -rf "$state"
    fi
    exit "$st"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

elapsed() { echo "$(($(date +%s) - $1)) s"; }

# ---- the root -----------------------------------------------------------------
t0=$(date +%s)
if $refresh || [ ! -f "$tarball" ]; then
    echo "fresh-root: debootstrap $suite (minbase + $include) from $mirror"
    mkdir -p "$cache" "$state/boot"
    if ! debootstrap --variant=minbase --include="$include" "$suite" "$state/boot" "$mirror" \
        >"$state/debootstrap.log" 2>&1; then
        tail -n 30 "$state/debootstrap.log"
        echo "fresh-root: debootstrap failed"
        exit 1
    fi
    chroot "$state/boot" apt-get clean
    tar -C "$state/boot" --numeric-owner -czf "$tarball.tmp" .
    mv "$tarball.tmp" "$tarball"
    rm -rf "${state:?}/boot"
    echo "fresh-root: cached the root in $tarball ($(elapsed "$t0"))"
fi
mkdir "$root"
tar -C "$root" --numeric-owner -xzf "$tarball"
rm -rf "$root"/var/lib/apt/lists/*
mkdir -p "$root/var/lib/apt/lists/partial"

# The commit being tested, cloned as a user clones it.
head=$(git -C "$here" rev-parse HEAD)
git clone -q --no-checkout "$here" "$root/root/project"
git -C "$root/root/project" checkout -q -B fresh-root "$head"
chmod 0700 "$root/root"
echo "fresh-root: root ready in $root, $(git -C "$here" log -1 --format='%h %s' "$head") ($(elapsed "$t0"))"

# ---- the way out: the archive only --------------------------------------------
python3 "$here/tests/fresh-root-proxy.py" serve "$state/proxy.sock" "$mirror_host" \
    2>"$state/proxy.log" &
proxy_pid=$!
for _ in $(seq 50); do
    [ -S "$state/proxy.sock" ] && break
    sleep 0.1
done
[ -S "$state/proxy.sock" ] || { cat "$state/proxy.log"; echo "fresh-root: the proxy did not start"; exit 1; }

# ---- inside: namespaces, mounts, then each command in the chroot ---------------
cat >"$state/inner.sh" <<'INNER'
set -eu
state=$1 root=$2 here=$3 port=$4
shift 4
mount --make-rprivate /
# The root a mount point of its own, as / is on a machine: the sandbox makes
# "/" a slave mount, which the kernel refuses for a plain directory.
mount --bind "$root" "$root"
ip link set lo up
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount -t cgroup2 cgroup2 "$root/sys/fs/cgroup"
mount --rbind /dev "$root/dev"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/dev/shm"
python3 "$here/tests/fresh-root-proxy.py" bridge "$port" "$state/proxy.sock" 2>>"$state/proxy.log" &
for _ in $(seq 50); do
    python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' \
        "$port" 2>/dev/null && break
    sleep 0.1
done
i=0
for cmd; do
    i=$((i + 1))
    case $cmd in
    demo) line="plans/demo.sh" ;;
    suite) line="tests/run.sh" ;;
    shell) line="exec bash -i" ;;
    *) line=$cmd ;;
    esac
    if [ "$line" = "$cmd" ]; then echo "fresh-root: == $cmd"; else echo "fresh-root: == $cmd: $line"; fi
    t0=$(date +%s)
    st=0
    chroot "$root" /usr/bin/env -i HOME=/root USER=root LOGNAME=root SHELL=/bin/bash \
        TERM="${TERM:-dumb}" PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        CI=true http_proxy="http://127.0.0.1:$port/" no_proxy=127.0.0.1,localhost,::1 \
        /bin/bash -c "cd /root/project && $line" || st=$?
    echo "$i $st $(($(date +%s) - t0))" >>"$state/results"
done
INNER

: >"$state/results"
# Ctrl-C in the shell must not end the run; "exit" there does.
case " ${cmds[*]} " in *" shell "*) trap '' INT ;; esac
# Started in the background so that the traps can stop it; its standard
# input given explicitly, as a background job's would be /dev/null.
exec 3<&0
unshare --net --mount --pid --fork --kill-child \
    bash "$state/inner.sh" "$state" "$root" "$here" "$port" "${cmds[@]}" <&3 &
ns_pid=$!
wait "$ns_pid" || true
ns_pid=

kill -TERM "$proxy_pid" 2>/dev/null
wait "$proxy_pid" 2>/dev/null || true
proxy_pid=

echo
fails=0
summary=
for i in "${!cmds[@]}"; do
    st=missing secs=0
    read -r _ st secs < <(awk -v i=$((i + 1)) '$1 == i' "$state/results") || true
    if [ "$st" = 0 ]; then word=passed; else word="FAILED (exit $st)"; fails=$((fails + 1)); fi
    summary="$summary${summary:+; }${cmds[$i]} $word in $secs s"
done
refused=$(grep -c 'refused' "$state/proxy.log" || true)
[ "$refused" -eq 0 ] || grep 'refused' "$state/proxy.log" | sort | uniq -c | head -n 20
echo "fresh-root: $summary; proxy: $(grep -o '[0-9]* requests forwarded' "$state/proxy.log" ||
    echo "no count"), $refused refused"
if [ "$fails" -eq 0 ]; then
    echo "fresh-root: PASS"
else
    echo "fresh-root: FAIL"
    exit 1
fi
