#!/bin/sh
# Print a unit as systemd would load it from the unit files under ROOT: every
# property, with its drop-ins applied and its aliases resolved, as systemd's
# own test mode dumps it. Works without systemd running (the test suite's
# machine has no systemd as PID 1); needs only the systemd package.
#   packaging/systemd-dump.sh ROOT UNIT
# The test mode refuses to run as root, so it runs as nobody: ROOT and its
# unit directories must be readable by everyone.
set -eu
root=${1:?usage: systemd-dump.sh ROOT UNIT}
unit=${2:?usage: systemd-dump.sh ROOT UNIT}
root=$(cd "$root" && pwd)

# The same directories, in the same order, as systemd's system search path.
path=""
for d in etc/systemd/system run/systemd/system usr/local/lib/systemd/system \
    lib/systemd/system usr/lib/systemd/system; do
    [ -d "$root/$d" ] && path="$path${path:+:}$root/$d"
done

run_test_mode() {
    if [ "$(id -u)" -eq 0 ]; then
        setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
    else
        "$@"
    fi
}

# The dump lists every loaded unit as a tab-indented "-> Unit NAME:" block.
SYSTEMD_UNIT_PATH=$path run_test_mode /lib/systemd/systemd --test --system \
    --unit="$unit" --no-pager 2>/dev/null |
    awk -v want="	-> Unit $unit:" '
        $0 == want { on = 1; print; next }
        on && /^\t-> / { exit }
        on { print }'
