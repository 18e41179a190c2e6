# shellcheck shell=bash
# TAP for the test scripts (sourced): a counter, ok/not_ok/check, notes, and
# the plan line at the end, so that a script need not count its checks.
n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() { # check DESCRIPTION COMMAND...: passes when the command succeeds
    local d=$1
    shift
    if "$@"; then ok "$d"; else not_ok "$d"; fi
}
note() { sed 's/^/# /'; } # note < TEXT: each line as a TAP comment
# tap_done: the plan line; the script's status says whether all passed.
tap_done() {
    echo "1..$n"
    [ "$fails" -eq 0 ]
}
