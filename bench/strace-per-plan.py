#!/usr/bin/env python3
"""System calls per trivial plan, from a trace of the daemon bench.

    BENCH_PREFIX="chrt -f 10" bench/run-daemon-bench.sh --only d --runs 30 --big 0 \\
        --bursts 0 --starts 1 --wrap "strace -f -o FILE"
    bench/strace-per-plan.py FILE

counts the system calls of the agent and its scripts (every thread and
process strace followed) from the first script's execve() of /bin/sh to the
last one's, divided by the plans in between: whole plans, with neither the
agent's start nor its stop. The sweep of /proc for the run's audit session
(an openat(), read() and close() of /proc/PID/sessionid per process on the
machine, docs/sandbox.md) is counted apart, as it follows the number of
processes on the machine, not the agent's work. Hand-offs between threads
are counted as the wake-ups that make them: eventfd writes of 8 bytes
(uv_async_send() to the loop, the loop's commands to the I/O thread) and
FUTEX_WAKE calls that woke a thread (libuv's pool, a plan thread).
"""
import collections
import re
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        lines = f.read().split("\n")
    marks = [i for i, line in enumerate(lines) if 'execve("/bin/sh", ["/bin/sh", "-c"' in line]
    if len(marks) < 2:
        sys.exit("strace-per-plan: fewer than two scripts in the trace")
    plans = len(marks) - 1
    calls = collections.Counter()
    sweep = 0
    wakeups = 0
    waking = set()
    for line in lines[marks[0] : marks[-1]]:
        m = re.match(r"(\d+) +(?:[0-9:.]+ +)?(\w+)\(", line)
        if not m:
            # A resumption, a signal or an exit; a FUTEX_WAKE resumed says
            # how many it woke.
            r = re.match(r"(\d+) +(?:[0-9:.]+ +)?<\.\.\. futex resumed>.*= ([0-9]+)$", line.rstrip())
            if r and r.group(1) in waking:
                waking.discard(r.group(1))
                wakeups += int(r.group(2)) > 0
            continue
        pid, name = m.group(1), m.group(2)
        if name == "openat" and re.search(r'openat\(\d+, "\d+/sessionid"', line):
            sweep += 2  # its close() is taken off below
            calls["close"] -= 1
            continue
        if name == "read" and re.search(r'read\(\d+, "\d+", 15\)', line):
            sweep += 1
            continue
        if name == "write" and '"\\1\\0\\0\\0\\0\\0\\0\\0", 8' in line:
            wakeups += 1
        if name == "futex" and "FUTEX_WAKE" in line:
            if "<unfinished" in line:
                waking.add(pid)
            elif re.search(r"= [1-9]\d*$", line.rstrip()):
                wakeups += 1
        calls[name] += 1
    print("%d plans: %.1f system calls per plan, and %.1f in the /proc sweep; "
          "%.1f wake-ups of another thread" % (plans, sum(calls.values()) / plans, sweep / plans,
                                               wakeups / plans))
    for name, n in calls.most_common():
        if n / plans >= 0.5:
            print("  %-16s %6.1f" % (name, n / plans))


if __name__ == "__main__":
    main()
