#!/bin/bash
# The daemon bench in one command: start a throwaway RabbitMQ broker on
# 127.0.0.1 (tests/broker.sh), run bench-daemon against it, stop the broker.
#
#   bench/run-daemon-bench.sh [-B BUILD_DIR] [BENCH-DAEMON OPTIONS...]
#
# BUILD_DIR is the meson build directory (default: build). The options go to
# bench-daemon as they are (--runs, --big, --burst, --bursts, --starts,
# --dir, --shm-dir, --only, --config-extra, --wrap, --debug, --keep; see
# `bench-daemon --help`); --port is added here. BENCH_PREFIX, when set, is a
# command line put before bench-daemon, such as "chrt -f 10" (real-time
# priority for the bench and the consumers it starts, not for the broker).
# Run it as root, as the agent runs: the cgroup of each script needs it.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
if [ "${1:-}" = -B ]; then
    [ $# -ge 2 ] || { echo "usage: $0 [-B BUILD_DIR] [OPTIONS...]" >&2; exit 2; }
    build=$(cd "$2" && pwd)
    shift 2
fi
bench=$build/bench/bench-daemon
[ -x "$bench" ] || { echo "run-daemon-bench: $bench is not built (ninja -C $build)" >&2; exit 2; }

broker_dir=$(mktemp -d /tmp/bench-daemon-broker.XXXXXX)
rmdir "$broker_dir" # broker.sh start wants to make it
stop_broker() { "$root/tests/broker.sh" stop "$broker_dir" >/dev/null 2>&1 || true; }
trap stop_broker EXIT
"$root/tests/broker.sh" start "$broker_dir"
# shellcheck disable=SC1091
. "$broker_dir/env"

echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC'); $(nproc) CPUs; load average" \
    "$(cut -d' ' -f1-3 /proc/loadavg); kernel $(uname -r)"
# shellcheck disable=SC2086 # BENCH_PREFIX is a command line
${BENCH_PREFIX:-} "$bench" --port "$BROKER_PORT" "$@"
