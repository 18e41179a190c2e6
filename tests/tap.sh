# shellcheck shell=bash
# TAP for the test scripts (sourced): a counter, ok/not_ok/check/skip/same,
# notes, and the plan line at the end, so that a script need not count its
# checks.
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
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; } # skip DESCRIPTION REASON
same() { # same DESCRIPTION WANT GOT: passes when GOT is WANT, else shows both
    if [ "$2" = "$3" ]; then ok "$1"; else
        not_ok "$1"
        printf '# want: %q\n#  got: %q\n' "$2" "$3"
    fi
}
same_file() { # same_file DESCRIPTION WANT-FILE GOT-FILE: passes when equal, else shows the diff
    if cmp -s "$2" "$3"; then ok "$1"; else not_ok "$1"; diff -u "$2" "$3" | note; fi
}
elapsed() { echo "# $1 took $(($(date +%s) - $2)) s"; } # elapsed WHAT START: seconds since START
# tap_done: the plan line; the script's status says whether all passed.
tap_done() {
    echo "1..$n"
    [ "$fails" -eq 0 ]
}
