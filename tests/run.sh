#!/bin/bash
# The whole test suite, from a fresh clone on Debian 12 (README, command 2):
# installs what is missing, checks the formatting of the C code and the shell
# scripts, builds, runs the unit and CLI tests, runs them again under
# ASan+UBSan and under valgrind, and gives the fuzzers a short run.
#   tests/run.sh            everything
#   QUICK=1 tests/run.sh    one build and one pass only
set -euo pipefail
cd "$(dirname "$0")/.."

packaging/build-deps.sh

werror=false
[ "${CI:-}" = "true" ] && werror=true
jobs=$(nproc)

passed=0
failed=0
count() { # count the Ok/Fail lines of a meson test summary in $1
    local ok fail
    ok=$(awk '/^Ok:/ {print $2}' "$1" | tail -n1)
    fail=$(awk '/^(Fail|Unexpected Pass|Timeout):/ {s += $2} END {print s + 0}' "$1")
    passed=$((passed + ${ok:-0}))
    failed=$((failed + fail))
}

setup() { # setup DIR [meson options...]
    local dir=$1
    shift
    if [ -d "$dir" ]; then
        meson setup --reconfigure "$dir" -Dwerror=$werror "$@" >/dev/null
    else
        meson setup "$dir" -Dwerror=$werror "$@" >/dev/null
    fi
    ninja -C "$dir" -j "$jobs"
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT

style() { # style NAME COMMAND...: one check, failed when COMMAND prints or fails
    if "${@:2}" >"$log" 2>&1 && [ ! -s "$log" ]; then
        echo "ok $1"
        passed=$((passed + 1))
    else
        cat "$log"
        echo "FAIL $1"
        failed=$((failed + 1))
    fi
}

# Every tracked C file against .clang-format (tests/data's own turns it off
# for generated fixtures), and every tracked shell script, by name or by its
# #! line, through shellcheck with .shellcheckrc. The scripts of
# tests/data/send/spec are not shell: each holds the four bytes "text" of the
# spec's example.
echo "== formatting (clang-format) and shell scripts (shellcheck)"
mapfile -t c_files < <(git ls-files '*.c' '*.h')
mapfile -t scripts < <({
    git ls-files '*.sh' ':!:tests/data/send/spec/*'
    git ls-files -s ':!:*.sh' | awk '$1 ~ /^100/ {print $4}' | xargs awk \
        'FNR == 1 && /^#!.*\/(env +)?(ba|da)?sh( |$)/ {print FILENAME} {nextfile}'
} | sort -u)
style "clang-format: ${#c_files[@]} C files" clang-format --dry-run --Werror "${c_files[@]}"
style "shellcheck: ${#scripts[@]} scripts" shellcheck "${scripts[@]}"

echo "== build and test (gcc, -Werror=$werror)"
setup build
meson test -C build --print-errorlogs --num-processes "$jobs" --no-suite integration \
    --no-suite broker | tee "$log" || true
count "$log"

# One throwaway broker for the whole run (tests/broker.sh: 127.0.0.1, a free
# port, its own data directory), shared by the integration tests. Tests that
# must disrupt a broker (restart it, freeze it, add a TLS listener) start a
# private one of their own, so they cannot upset the others.
echo "== integration tests against a real rabbitmq-server"
broker_dir=$(mktemp -d /tmp/muranoagent-broker.XXXXXX)
rmdir "$broker_dir"
trap 'tests/broker.sh stop "$broker_dir" >/dev/null 2>&1 || true; rm -f "$log"' EXIT
if tests/broker.sh start "$broker_dir"; then
    # shellcheck disable=SC1091
    . "$broker_dir/env"
    export BROKER_DIR BROKER_PORT BROKER_NODE
    meson test -C build --print-errorlogs --num-processes "$jobs" --suite integration \
        --suite broker | tee "$log" || true
    count "$log"
    tests/broker.sh stop "$broker_dir" >/dev/null 2>&1 || true
    unset BROKER_DIR BROKER_PORT BROKER_NODE
else
    echo "FAIL: the test broker did not start"
    failed=$((failed + 1))
fi

if [ -z "${QUICK:-}" ]; then
    echo "== ASan + UBSan (clang)"
    CC=clang setup build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        meson test -C build-asan --print-errorlogs --num-processes "$jobs" --suite unit \
        --suite cli | tee "$log" || true
    count "$log"

    echo "== valgrind"
    # JOURNAL_CRASH_SEEDS: fewer power-loss disks per crash point (test-journal-crash.c);
    # JOURNAL_LOG_STEPS: a shorter workload for the log's power losses (test-journal-log.c).
    CK_FORK=no JOURNAL_CRASH_SEEDS=2 JOURNAL_LOG_STEPS=100 meson test -C build --print-errorlogs --num-processes "$jobs" --suite unit \
        --timeout-multiplier 10 \
        --wrapper 'valgrind --quiet --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect --error-exitcode=99' \
        | tee "$log" || true
    count "$log"

    echo "== packaging (systemd unit, cloud-init, .deb, .rpm, man pages, Debian 12 image and VM)"
    packaging/test-deps.sh
    for t in tests/test-cloud-init.sh tests/test-packaging.sh tests/test-image.sh tests/test-vm.sh; do
        st=0
        "$t" build >"$log" 2>&1 || st=$?
        grep -v '^ok ' "$log" || true
        ok=$(grep -c '^ok ' "$log" || true)
        bad=$(grep -c '^not ok ' "$log" || true)
        if [ "$st" -ne 0 ] && [ "$bad" -eq 0 ]; then bad=1; fi
        echo "$t: $ok passed, $bad failed"
        passed=$((passed + ok))
        failed=$((failed + bad))
    done

    if [ -f tests/fuzz/meson.build ]; then
        echo "== fuzz (short run on the seed corpora)"
        CC=clang setup build-fuzz -Dfuzz=true -Dtests=disabled -Dbuildtype=debugoptimized \
            -Db_sanitize=address,undefined -Db_lundef=false
        for f in build-fuzz/tests/fuzz/fuzz-*; do
            if [ ! -f "$f" ] || [ ! -x "$f" ]; then continue; fi
            name=$(basename "$f")
            corpus="tests/fuzz/corpus-${name#fuzz-}"
            work=$(mktemp -d)
            if "$f" -max_total_time="${FUZZ_SECONDS:-30}" -timeout=10 -rss_limit_mb=2048 \
                "$work" "$corpus" >"$work.log" 2>&1; then
                echo "ok $name: $(grep -c . "$work.log") log lines, no crash, hang or leak"
                passed=$((passed + 1))
            else
                tail -n 40 "$work.log"
                echo "FAIL $name"
                failed=$((failed + 1))
            fi
            rm -rf "$work" "$work.log"
        done
    fi
fi

echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
