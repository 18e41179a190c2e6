#!/bin/bash
# The daemon bench in one command: start a throwaway RabbitMQ broker on
# 127.0.0.1 (tests/broker.sh), run bench-daemon against it, stop the broker.
#
#   bench/run-daemon-bench.sh [-B BUILD_DIR] [--fs LIST] [BENCH-DAEMON OPTIONS...]
#
# (-B and --fs may stand anywhere among the options.)
#
# BUILD_DIR is the meson build directory (default: build). The options go to
# bench-daemon as they are (--runs, --big, --burst, --bursts, --starts,
# --dir, --shm-dir, --only, --config-extra, --wrap, --debug, --keep; see
# `bench-daemon --help`); --port is added here. BENCH_PREFIX, when set, is a
# command line put before bench-daemon, such as "chrt -f 10" (real-time
# priority for the bench and the consumers it starts, not for the broker).
# Run it as root, as the agent runs: the cgroup of each script needs it.
#
# --fs says where the disk's consumers (the floors and the disk agents) keep
# their files, as a comma-separated list of runs of bench-daemon, one after
# the other on the same broker: `dir` is bench-daemon's --dir (default
# /var/tmp), `journaled` a journaled ext4 made for the run
# (bench/journaled-ext4.sh says how; this machine's root ext4 has none) and
# removed after it, `unjournaled` the same without a journal (the control:
# what the loop device under it costs). The default is `dir`. After a
# journaled run the CPU of the file system's journal thread, which commits
# for every consumer outside their cgroups, is printed.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
fs_list=dir
usage() {
    echo "usage: $0 [-B BUILD_DIR] [--fs dir,journaled,unjournaled] [OPTIONS...]" >&2
    exit 2
}
# -B and --fs are ours wherever they stand; every other word goes to
# bench-daemon in its order.
rest=()
while [ $# -gt 0 ]; do
    case $1 in
    -B) [ $# -ge 2 ] || usage; build=$(cd "$2" && pwd); shift 2 ;;
    --fs) [ $# -ge 2 ] || usage; fs_list=$2; shift 2 ;;
    *) rest+=("$1"); shift ;;
    esac
done
set -- ${rest[@]+"${rest[@]}"}
IFS=, read -r -a fs_runs <<<"$fs_list"
for fs in "${fs_runs[@]}"; do
    case $fs in
    dir) ;;
    journaled | unjournaled)
        [ "$(id -u)" = 0 ] || {
            echo "run-daemon-bench: --fs $fs needs root (mkfs, losetup, mount)" >&2
            exit 2
        } ;;
    *) echo "run-daemon-bench: --fs: '$fs' is not dir, journaled or unjournaled" >&2; exit 2 ;;
    esac
done
bench=$build/bench/bench-daemon
[ -x "$bench" ] || { echo "run-daemon-bench: $bench is not built (ninja -C $build)" >&2; exit 2; }
# shellcheck source=bench/journaled-ext4.sh
. "$root/bench/journaled-ext4.sh"

broker_dir=$(mktemp -d /tmp/bench-daemon-broker.XXXXXX)
rmdir "$broker_dir" # broker.sh start wants to make it
stop_all() {
    jext4_remove
    "$root/tests/broker.sh" stop "$broker_dir" >/dev/null 2>&1 || true
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
"$root/tests/broker.sh" start "$broker_dir"
# shellcheck disable=SC1091
. "$broker_dir/env"

# The journal thread's user and system time, in clock ticks.
journal_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

for fs in "${fs_runs[@]}"; do
    echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC'); $(nproc) CPUs; load average" \
        "$(cut -d' ' -f1-3 /proc/loadavg); kernel $(uname -r)"
    if [ "$fs" = dir ]; then
        echo "# the disk's consumers on --dir (default /var/tmp)"
        # shellcheck disable=SC2086 # BENCH_PREFIX is a command line
        ${BENCH_PREFIX:-} "$bench" --port "$BROKER_PORT" "$@"
        continue
    fi
    if [ "$fs" = journaled ]; then
        jext4_make
    else
        JEXT4_MKFS_OPTIONS="${JEXT4_MKFS_OPTIONS:-} -O ^has_journal" jext4_make
    fi
    jext4_describe
    jbd2=$(jext4_journal_thread)
    ticks=$([ -z "$jbd2" ] || journal_ticks "$jbd2")
    # shellcheck disable=SC2086 # BENCH_PREFIX is a command line
    ${BENCH_PREFIX:-} "$bench" --port "$BROKER_PORT" "$@" --dir "$jext4_mnt"
    [ -z "$jbd2" ] || echo "# journal thread (pid $jbd2):" \
        "$((($(journal_ticks "$jbd2") - ticks) * 1000 / $(getconf CLK_TCK))) ms of CPU over the run"
    jext4_commits
    jext4_remove
done
