#!/usr/bin/env python3
"""Where an agent's CPU per plan goes, from a profile of the daemon bench.

    BENCH_PREFIX="chrt -f 10" bench/run-daemon-bench.sh --only d --runs 300 --big 0 \\
        --bursts 0 --starts 1 --wrap "perf record -F 2000 -g -o FILE"
    perf script -i FILE -F comm,tid,time,event,ip,sym,dso > FILE.txt
    bench/perf-split.py FILE.txt PLANS [HZ]

splits the samples of the agent and its scripts by thread and by the
system call each sample is in (the first __x64_sys_* frame of its kernel
stack), and prints each part's share and its milliseconds per plan
(samples / HZ / PLANS; HZ is perf's -F, 2000 by default). The first half
second (the agent's start) is left out. The threads are told apart by what
they do: the loop is the agent's first thread; the transport's I/O thread
is the long-lived one that calls sendto(); the other long-lived ones are
libuv's pool, where the journal works; the short-lived ones are the plans'
threads. A script's process is counted under its own name from its
execve() on; before it, it is the agent's clone and too short to show.
Hand-offs are the samples in futex(), epoll_wait() and poll(), with the
scheduling they cause; the eventfd writes and reads that go with them are
counted with their thread's other system calls.
"""
import collections
import re
import sys

SKIP_S = 0.5
HANDOFF = {"futex", "epoll_wait", "epoll_pwait", "poll"}


def samples(path):
    with open(path) as f:
        text = f.read()
    out = []
    for block in text.split("\n\n"):
        lines = [line for line in block.split("\n") if line.strip()]
        if not lines:
            continue
        head = lines[0].split()
        frames = []
        for line in lines[1:]:
            m = re.match(r"\s*[0-9a-f]+ (.*) \((.*)\)$", line)
            if m:
                frames.append((m.group(1), m.group(2)))
        out.append((head[0], int(head[1]), float(head[2].rstrip(":")), frames))
    t0 = min(s[2] for s in out)
    return [s for s in out if s[2] > t0 + SKIP_S]


def syscall(frames):
    for sym, _ in frames:
        m = re.match(r"__(?:x64|do)_sys_(\w+)", sym)
        if m:
            return m.group(1)
    return None


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    all_samples = samples(sys.argv[1])
    plans = float(sys.argv[2])
    hz = float(sys.argv[3]) if len(sys.argv) == 4 else 2000.0
    agent = [s for s in all_samples if s[0] == "muranoagent"]
    per_tid = collections.Counter(s[1] for s in agent)
    calls = collections.defaultdict(set)
    for _, tid, _, frames in agent:
        calls[tid].add(syscall(frames))
    # Long-lived threads have samples all through the run; a plan's thread
    # has a few.
    long_lived = [t for t, n in per_tid.items() if n > plans / 6]
    loop = min(long_lived)
    io = {t for t in long_lived if "sendto" in calls[t]}
    parts = collections.Counter()
    for comm, tid, _, frames in all_samples:
        call = syscall(frames)
        if comm != "muranoagent":
            part = "scripts from their execve() (sh, echo.sh)"
        elif call in HANDOFF:
            part = "hand-offs: futex, epoll_wait, poll"
        elif tid == loop and (call or (frames and "kernel" in frames[0][1])):
            part = "loop, kernel: the script's containment and start, eventfd reads"
        elif tid == loop:
            part = "loop, user space (libuv, libc, logs, JSON, the pump)"
        elif tid in io:
            part = "transport's I/O thread (rabbitmq-c, send, recv)"
        elif tid in long_lived:
            part = "pool: the journal (fsyncs, files, seals, done records)"
        else:
            part = "plan threads (Body, files, call log, logs, result)"
        parts[part] += 1
    total = len(all_samples)
    print("%d samples: %.2f ms per plan" % (total, 1000.0 * total / hz / plans))
    for part, n in parts.most_common():
        print("%5.1f %%  %5.2f ms  %s" % (100.0 * n / total, 1000.0 * n / hz / plans, part))


if __name__ == "__main__":
    main()
