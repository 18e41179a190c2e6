#!/bin/bash
# A slow disk does not stop the loop. Every fsync of the journal takes
# 1.5 s more (MURANOAGENT_SLOW_FSYNC_MS), and three plans arrive at once,
# so that for half a minute one journal call after another waits for the
# disk on the thread pool. Meanwhile the loop keeps time: systemd's
# watchdog (WATCHDOG_USEC = 1 s, a ping every 0.5 s) is pinged with no gap
# of 1.2 s, the heartbeat (2 s) keeps the connection (one connection, no
# missed heartbeats on the broker), and every result arrives once.
# The plans' scripts are written in single quotes: $1 is theirs.
# shellcheck disable=SC2016
# shellcheck source=tests/integration/common.sh
. "$(dirname "$0")/common.sh"

# The time of every watchdog ping is appended to $T/pings.
notify_listen "$T/notify.sock" "$T/pings" watchdog || bail "the notify socket did not appear"
missed_before=$(missed_heartbeats)
agent_conf a "heartbeat = 2"
q=$(qname a)
rq=$q-results
amqp declare "$q" "$rq" >/dev/null || bail "cannot declare the queues"
for i in 1 2 3; do
    script_plan "$T/p$i.json" "slow-$i" "$(printf '#!/bin/sh\necho "$1"\n')" "$((1000 + i))"
done

agent_start a NOTIFY_SOCKET="$T/notify.sock" WATCHDOG_USEC=1000000 MURANOAGENT_SLOW_FSYNC_MS=1500
agent_wait_consuming a || bail "the agent did not start consuming"
check "the hook is on" log_has a "every fsync of the journal takes 1500 ms more"

t0=$(date +%s%3N)
for i in 1 2 3; do amqp publish "$q" "$T/p$i.json" >/dev/null; done
mkdir -p "$T/res"
same "three results arrive" 3 "$(amqp drain --count 3 --idle 120000 --out "$T/res" "$rq")"
t1=$(date +%s%3N)
diag "three plans in $((t1 - t0)) ms"
# Each plan waits for 6 fsyncs before its result is sent (store 3, begin 1,
# result 2), one call at a time: the disk was slow all along.
check "the disk was slow: at least 18 fsyncs of 1.5 s" test $((t1 - t0)) -ge 27000
same "each plan answered once" "$(printf 'slow-1\t0\nslow-2\t0\nslow-3\t0')" \
    "$(results_table "$T/res" | cut -f1,2 | sort)"

# The pings since the start, one every 0.5 s.
gap=$(awk 'NR > 1 { g = $1 - prev; if (g > max) max = g } { prev = $1 } END { print max + 0 }' \
    "$T/pings")
pings=$(wc -l <"$T/pings")
diag "$pings watchdog pings, the longest gap $gap ms"
check "the watchdog kept being pinged" test "$pings" -ge $(((t1 - t0) / 1000))
check "no gap between pings of 1.2 s or more (was $gap ms)" test "$gap" -lt 1200
same "no connection lost" 0 "$(count_lines "$T/a/log" "connection lost|cannot connect")"
same "one connection all along" 1 "$(count_lines "$T/a/log" "INFO muranoagent consuming '")"
same "the broker logged no missed heartbeats" "$missed_before" "$(missed_heartbeats)"

agent_stop a 30
same "SIGTERM: the agent exits 0" 0 "$AGENT_STATUS"

done_testing
