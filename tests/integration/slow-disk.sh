#!/bin/bash
# A slow disk does not stop the loop. Every flush of the journal takes
# 1.5 s more (MURANOAGENT_SLOW_FSYNC_MS), and three plans arrive at once,
# so that for half a minute one journal call after another waits for the
# disk on the thread pool. Meanwhile the loop keeps time: systemd's
# watchdog (WATCHDOG_USEC = 1 s, a ping every 0.5 s) is pinged with no gap
# of 1.2 s, the heartbeat (2 s) keeps the connection (one connection, no
# missed heartbeats on the broker), and every result arrives once. Played
# with the journal's write-ahead log (the default, agent a) and without it
# (agent w, journal_log = false).
# The plans' scripts are written in single quotes: $1 is theirs.
# shellcheck disable=SC2016
# shellcheck source=tests/integration/common.sh
. "$(dirname "$0")/common.sh"

# slow_case AGENT FLUSHES: three plans of which each waits for FLUSHES
# flushes before its result is sent, one at a time (the journal's flushes
# are serialized).
slow_case() {
    local a=$1 flushes=$2 missed_before t0 t1 gap pings
    # The time of every watchdog ping is appended to $T/$a.pings.
    notify_listen "$T/$a.sock" "$T/$a.pings" watchdog || bail "the notify socket did not appear"
    missed_before=$(missed_heartbeats)
    queues "$a"
    for i in 1 2 3; do
        script_plan "$T/p$i.json" "slow-$i" "$(printf '#!/bin/sh\necho "$1"\n')" "$((1000 + i))"
    done

    agent_start "$a" NOTIFY_SOCKET="$T/$a.sock" WATCHDOG_USEC=1000000 MURANOAGENT_SLOW_FSYNC_MS=1500
    agent_wait_consuming "$a" || bail "the agent did not start consuming"
    check "$a: the hook is on" log_has "$a" "every flush of the journal takes 1500 ms more"

    t0=$(date +%s%3N)
    for i in 1 2 3; do amqp publish "$q" "$T/p$i.json" >/dev/null; done
    mkdir -p "$T/res-$a"
    same "$a: three results arrive" 3 "$(amqp drain --count 3 --idle 120000 --out "$T/res-$a" "$rq")"
    t1=$(date +%s%3N)
    diag "$a: three plans in $((t1 - t0)) ms"
    check "$a: the disk was slow: at least $((3 * flushes)) flushes of 1.5 s" \
        test $((t1 - t0)) -ge $((3 * flushes * 1500))
    same "$a: each plan answered once" "$(printf 'slow-1\t0\nslow-2\t0\nslow-3\t0')" \
        "$(results_table "$T/res-$a" | cut -f1,2 | sort)"

    # The pings since the start, one every 0.5 s.
    gap=$(awk 'NR > 1 { g = $1 - prev; if (g > max) max = g } { prev = $1 } END { print max + 0 }' \
        "$T/$a.pings")
    pings=$(wc -l <"$T/$a.pings")
    diag "$a: $pings watchdog pings, the longest gap $gap ms"
    check "$a: the watchdog kept being pinged" test "$pings" -ge $(((t1 - t0) / 1000))
    check "$a: no gap between pings of 1.2 s or more (was $gap ms)" test "$gap" -lt 1200
    same "$a: no connection lost" 0 "$(count_lines "$T/$a/log" "connection lost|cannot connect")"
    same "$a: one connection all along" 1 "$(count_lines "$T/$a/log" "INFO muranoagent consuming '")"
    same "$a: the broker logged no missed heartbeats" "$missed_before" "$(missed_heartbeats)"

    agent_stop "$a" 30
    same "$a: SIGTERM, the agent exits 0" 0 "$AGENT_STATUS"
}

# With the log, each plan waits for its PLAN, BEGIN, its call's start
# CALL and RESULT records' fdatasync()s.
agent_conf a "heartbeat = 2"
slow_case a 4
# Without it, for 6 fsyncs (store 3, begin 1, result 2).
agent_conf w "heartbeat = 2" "journal_log = false"
slow_case w 6

done_testing
