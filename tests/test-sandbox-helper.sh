#!/bin/bash
# Real runs of muranoagent-sandbox, in TAP. Checks that need root, or a
# namespace the kernel refuses here, say "# SKIP reason"; the reason is
# detected, never assumed. MURANOAGENT comes from meson (tests/meson.build);
# the helper is built beside it, or named by MURANOAGENT_SANDBOX.
set -u
agent=${MURANOAGENT:?}
helper=${MURANOAGENT_SANDBOX:-$(dirname "$agent")/sandbox/muranoagent-sandbox}
tmp=$(mktemp -d)
work=
trap 'rm -rf "$tmp" ${work:+"$work"}' EXIT
P=PATH=/usr/bin:/bin

. "$(dirname "$0")/tap.sh"
# same DESCRIPTION WANT GOT
sb() { timeout 20 "$helper" "$@"; }
# The helper's exit as Python's subprocess reports it: -N for signal N.
returncode() {
    timeout 20 python3 -c 'import subprocess, sys; print(subprocess.run(sys.argv[1:]).returncode)' \
        "$helper" "$@"
}
# Dead: gone, or a zombie that init has not reaped yet.
dead() { [ ! -e "/proc/$1" ] || grep -q '^[0-9]* (.*) Z' "/proc/$1/stat" 2>/dev/null; }

[ -x "$helper" ] || { echo "Bail out! no helper at $helper"; exit 1; }
root=no
[ "$(id -u)" = 0 ] && root=yes

# --- Environment, limits, session, descriptors: no root needed. ---
same "env is exactly --env, later values win" "$(printf 'A=2\nB=x y')" \
    "$(FOO=bar sb --env A=1 --env 'B=x y' --env A=2 -- /usr/bin/env)"
same "nothing inherited" "" "$(FOO=bar sb -- /usr/bin/env)"
mkdir "$tmp/bin"
printf '#!/bin/sh\necho found\n' >"$tmp/bin/myprog"
chmod +x "$tmp/bin/myprog"
same "PROGRAM is searched in the PATH of --env" found "$(sb --env "PATH=$tmp/bin" -- myprog)"

limits=$(sb --rlimit-nofile 77 --rlimit-nproc 1000 --rlimit-cpu 100 --rlimit-as 2000000000 \
    -- /bin/cat /proc/self/limits)
lim() { awk -v k="$1" 'index($0, k) == 1 { print $(NF - 2), $(NF - 1) }' <<<"$limits"; }
same "rlimit nofile" "77 77" "$(lim 'Max open files')"
same "rlimit nproc" "1000 1000" "$(lim 'Max processes')"
same "rlimit cpu" "100 100" "$(lim 'Max cpu time')"
same "rlimit as" "2000000000 2000000000" "$(lim 'Max address space')"
same "core size is 0" "0 0" "$(lim 'Max core file size')"
same "no_new_privs" "NoNewPrivs:	1" "$(sb --no-new-privs -- /bin/grep NoNewPrivs /proc/self/status)"
# shellcheck disable=SC2016 # the inner sh expands $$
same "own session and process group" yes "$(sb -- /bin/sh -c \
    'read -r pid comm state ppid pgrp sid rest </proc/$$/stat
     [ "$pid" = "$$" ] && [ "$pgrp" = "$$" ] && [ "$sid" = "$$" ] && echo yes')"
same "descriptors above 2 are closed" "0 1 2 3" \
    "$(sb -- /bin/ls /proc/self/fd 5</dev/null 7</dev/null 9>/dev/null | tr '\n' ' ' | sed 's/ $//')"
same "the status fd is closed at exec" "0 1 2 3" \
    "$(sb --status-fd 7 -- /bin/ls /proc/self/fd 7>"$tmp/st" | tr '\n' ' ' | sed 's/ $//')"
same "no status line on success" "" "$(cat "$tmp/st")"
same "signals are reset (SIGPIPE default, nothing ignored or blocked)" \
    "SigBlk:	0000000000000000 SigIgn:	0000000000000000" \
    "$(trap '' PIPE INT; sb -- /bin/grep -E '^Sig(Blk|Ign)' /proc/self/status | tr '\n' ' ' | sed 's/ $//')"

# --- Exit statuses and status lines. ---
same "exit code is PROGRAM's" 7 "$(returncode -- /bin/sh -c 'exit 7')"
same "death by signal is passed on" -9 "$(returncode -- /bin/sh -c 'kill -9 $$')"
setup() { # setup WANT_RC WANT_LINE ARGS...: the exit code and the status line on fd 3 and stderr
    local rc=$1 line=$2
    shift 2
    sb --status-fd 3 "$@" 3>"$tmp/status" 2>"$tmp/stderr"
    same "exit $rc: $line" "$rc|$line|$line" "$?|$(cat "$tmp/status")|$(cat "$tmp/stderr")"
}
setup 125 "muranoagent-sandbox: chdir /nonexistent: No such file or directory" \
    --chdir /nonexistent -- /bin/true
setup 125 "muranoagent-sandbox: user 'no-such-user-xyz': no such user" \
    --user no-such-user-xyz -- /bin/true
setup 125 "muranoagent-sandbox: group 'no-such-group-xyz': no such group" \
    --group no-such-group-xyz -- /bin/true
setup 125 "muranoagent-sandbox: user 4000123: no passwd entry to take a group from; give --group" \
    --user 4000123 -- /bin/true
setup 125 "muranoagent-sandbox: cgroup /nonexistent: No such file or directory" \
    --cgroup /nonexistent -- /bin/true
setup 125 "muranoagent-sandbox: usage: unknown option or missing value: '--bogus'" \
    --bogus -- /bin/true
setup 125 "muranoagent-sandbox: usage: --rlimit-nofile: 'many' is not a number" \
    --rlimit-nofile many -- /bin/true
setup 125 "muranoagent-sandbox: usage: --env: 'NOEQUALS' is not NAME=VALUE" \
    --env NOEQUALS -- /bin/true
setup 125 "muranoagent-sandbox: usage: --private-tmp, --read-only, --writable, --mask and --protect-kernel need --unshare-mount" \
    --read-only /usr -- /bin/true
setup 125 "muranoagent-sandbox: usage: --private-tmp, --read-only, --writable, --mask and --protect-kernel need --unshare-mount" \
    --mask /etc/shadow -- /bin/true
setup 125 "muranoagent-sandbox: usage: --drop-capabilities: 'sys_admin' is not a hex mask" \
    --drop-capabilities sys_admin -- /bin/true
setup 125 "muranoagent-sandbox: usage: no PROGRAM given (see --help)"
setup 127 "muranoagent-sandbox: exec /nonexistent/prog: No such file or directory" \
    -- /nonexistent/prog
setup 127 "muranoagent-sandbox: exec myprog: No such file or directory" -- myprog
printf 'echo hi\n' >"$tmp/noexec"
setup 126 "muranoagent-sandbox: exec $tmp/noexec: Permission denied" -- "$tmp/noexec"
sb --help | grep -q -- '--status-fd FD'
same "--help documents the options" 0 "$?"

# --die-with-parent: the parent shell exits after 0.3 s, the helper with it.
pid=$(sh -c '"$0" --die-with-parent -- /bin/sleep 30 >/dev/null 2>&1 & echo $!; sleep 0.3' "$helper")
sleep 0.3
if dead "$pid"; then ok "--die-with-parent"; else not_ok "--die-with-parent"; kill -9 "$pid"; fi

# --- Root only: identity, namespaces, cgroups. ---
if [ $root = no ]; then
    skip "identity, namespaces and cgroups" "not root"
    echo "1..$n"
    exit $((fails > 0))
fi

# shellcheck disable=SC2016 # the inner sh runs id
same "--user nobody" "65534 65534 65534" "$(sb --user nobody -- /bin/sh -c 'echo $(id -u) $(id -g) $(id -G)')"
# shellcheck disable=SC2016
same "--user and --group by number" "4000123 4000124 4000124" \
    "$(sb --user 4000123 --group 4000124 -- /bin/sh -c 'echo $(id -u) $(id -g) $(id -G)')"
# shellcheck disable=SC2016
same "--group alone keeps the uid" "0 65534" "$(sb --group 65534 -- /bin/sh -c 'echo $(id -u) $(id -G)')"
# --drop-capabilities: gone from the bounding, effective and permitted sets
# (CAP_SYS_ADMIN is bit 21), for root and for the user it then becomes.
# shellcheck disable=SC2016 # expanded by the script
caps() { sb "$@" -- /bin/sh -c 'for k in Bnd Eff Prm; do
    c=$(sed -n "s/^Cap$k:[[:space:]]*//p" /proc/self/status); echo -n "$((0x$c >> 21 & 1))"; done'; }
same "--drop-capabilities: CAP_SYS_ADMIN held without it" 111 "$(caps)"
same "--drop-capabilities 200000: CAP_SYS_ADMIN gone from every set" 000 \
    "$(caps --drop-capabilities 200000)"
same "--drop-capabilities with --user: gone from the bounding set too" 000 \
    "$(caps --drop-capabilities 200000 --user nobody)"
# chdir comes after the identity change.
mkdir -m 700 "$tmp/private"
setup 125 "muranoagent-sandbox: chdir $tmp/private: Permission denied" \
    --user nobody --chdir "$tmp/private" -- /bin/true

# Each namespace is used only where the kernel grants it; a refusal is
# reported by the helper itself, and turns the checks into skips.
declare -A ns_ok
for ns in mount pid ipc uts net; do
    if line=$(sb --unshare-$ns -- /bin/true 2>&1); then ns_ok[$ns]=yes; else ns_ok[$ns]=$line; fi
done
for pair in mount:mnt pid:pid ipc:ipc uts:uts net:net; do
    ns=${pair%%:*} file=${pair#*:}
    if [ "${ns_ok[$ns]}" != yes ]; then skip "new $ns namespace" "${ns_ok[$ns]}"; continue; fi
    inside=$(sb "--unshare-$ns" -- /bin/readlink "/proc/self/ns/$file")
    if [ "$inside" != "$(readlink "/proc/self/ns/$file")" ]; then ok "new $ns namespace"
    else not_ok "new $ns namespace"; fi
done

if [ "${ns_ok[mount]}" = yes ]; then
    # A writable directory outside /tmp and /var/tmp, which --private-tmp hides.
    work=$(mktemp -d "$(dirname "$agent")/../sandbox-test.XXXXXX")
    case "$work" in
    /tmp/* | /var/tmp/*) skip "mount namespace" "the build directory is under /tmp" ;;
    *)
        before=$(wc -l </proc/self/mountinfo)
        out=$(sb --unshare-mount --private-tmp --read-only / --writable "$work" --env "$P" -- /bin/sh -c "
            touch /usr/sandbox-test 2>/dev/null && echo usr-writable
            touch /etc/sandbox-test 2>/dev/null && echo etc-writable
            touch /root/sandbox-test 2>/dev/null && echo root-writable
            touch /var/lib/sandbox-test 2>/dev/null && echo var-lib-writable
            touch '$work/x' && echo work-ok
            echo tmp-entries \$(ls -A /tmp | wc -l) \$(ls -A /var/tmp | wc -l)
            touch /tmp/sandbox-test-$$ && echo tmp-ok
            echo hi >/dev/null && echo devnull-ok")
        same "mount namespace: read-only /, writable dir, fresh /tmp" \
            "$(printf 'work-ok\ntmp-entries 0 0\ntmp-ok\ndevnull-ok')" "$out"
        same "mount namespace: nothing leaks out" "no no $before" \
            "$([ -e /tmp/sandbox-test-$$ ] && echo yes || echo no) $([ -e /usr/sandbox-test ] && echo yes || echo no) $(wc -l </proc/self/mountinfo)"
        same "mount namespace: a writable dir is kept" yes "$([ -e "$work/x" ] && echo yes)"
        # --mask: the agent's directory empty but for the plan's own,
        # which stays writable; a file that cannot be opened; a missing
        # path skipped.
        mkdir -p "$work/agent/files/mine" "$work/agent/files/other"
        echo secret >"$work/agent/files/other/secret"
        echo secret >"$work/conf"
        out=$(sb --unshare-mount --writable "$work/agent/files/mine" --mask "$work/agent" \
            --mask "$work/conf" --mask /nonexistent-sandbox-test --env "$P" -- /bin/sh -c "
            ls -A '$work/agent'; ls -A '$work/agent/files'
            cat '$work/agent/files/other/secret' 2>/dev/null || echo other-hidden
            cat '$work/conf' 2>/dev/null || echo conf-hidden
            touch '$work/agent/files/mine/x' && echo mine-writable
            touch '$work/agent/y' 2>/dev/null || echo mask-read-only")
        same "--mask: a directory shows empty but for a --writable below it, a file is shut" \
            "$(printf '%s\n' files mine other-hidden conf-hidden mine-writable mask-read-only)" "$out"
        same "--mask: nothing changes outside" "secret secret" \
            "$(cat "$work/agent/files/other/secret" "$work/conf" | xargs)"
        # The new /dev: the links and directories always, the devices and
        # /dev/log (a link under systemd) where the host has them.
        dev_want() {
            local d
            printf '%s\n' fd ptmx pts shm stderr stdin stdout
            for d in full null random tty urandom zero; do [ -e "/dev/$d" ] && echo "$d"; done
            [ -L /dev/log ] && echo log
        }
        out=$(sb --unshare-mount --protect-kernel --env "$P" -- /bin/sh -c "
            ls /dev | xargs; ls -A /sys/fs/cgroup | wc -l
            (echo 0 >/proc/sys/kernel/core_uses_pid) 2>/dev/null || echo sysctl-refused
            touch /sys/sandbox-test 2>/dev/null || echo sys-read-only
            echo x >/dev/null && echo devnull-ok")
        same "--protect-kernel: /dev without disks, no cgroupfs, /proc/sys and /sys read-only" \
            "$(printf '%s\n' "$(dev_want | sort | xargs)" 0 sysctl-refused sys-read-only \
                devnull-ok)" "$out"
        setup 125 "muranoagent-sandbox: writable /tmp: would be hidden by --private-tmp" \
            --unshare-mount --private-tmp --writable /tmp -- /bin/true
        setup 125 "muranoagent-sandbox: read-only /nonexistent: No such file or directory" \
            --unshare-mount --read-only /nonexistent -- /bin/true
        ;;
    esac
fi

if [ "${ns_ok[pid]}" = yes ] && [ "${ns_ok[mount]}" = yes ]; then
    same "pid namespace: PROGRAM is pid 1, with a /proc of its own" "1 sh hidden" \
        "$(sb --unshare-pid --unshare-mount -- /bin/sh -c \
            "echo \$\$ \$(cat /proc/1/comm) \$([ -e /proc/$$ ] && echo visible || echo hidden)")"
    same "pid namespace: exit code passed on" 7 "$(returncode --unshare-pid -- /bin/sh -c 'exit 7')"
    # pid 1 ignores signals it has no handler for, even SIGKILL from inside;
    # a real fault still kills it, and the helper dies of the same signal.
    same "pid namespace: death by signal passed on" -11 \
        "$(returncode --unshare-pid --env "$P" -- python3 -c 'import ctypes; ctypes.string_at(0)')"
    # SIGTERM sent to the helper alone reaches pid 1, which has a handler.
    got=$(python3 - "$helper" <<'EOF'
import subprocess, sys, time
p = subprocess.Popen([sys.argv[1], "--unshare-pid", "--", "/bin/sh", "-c",
                      "trap 'exit 42' TERM; echo ready; while :; do sleep 0.05; done"],
                     stdout=subprocess.PIPE)
p.stdout.readline()
p.terminate()
print(p.wait(timeout=10))
EOF
)
    same "pid namespace: SIGTERM to the helper is passed on" 42 "$got"
    # SIGKILL from outside kills pid 1; the helper reports it. Then the
    # other way round: a killed helper takes pid 1 with it.
    got=$(python3 - "$helper" <<'EOF'
import os, signal, subprocess, sys, time
def child_of(pid):
    for _ in range(200):
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = f.read().split()
        if kids:
            return int(kids[0])
        time.sleep(0.01)
p = subprocess.Popen([sys.argv[1], "--unshare-pid", "--", "/bin/sleep", "30"])
os.kill(child_of(p.pid), signal.SIGKILL)
a = p.wait(timeout=10)
p = subprocess.Popen([sys.argv[1], "--unshare-pid", "--", "/bin/sleep", "30"])
c = child_of(p.pid)
p.kill()
p.wait(timeout=10)
for _ in range(200):
    try:
        with open(f"/proc/{c}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                break
    except FileNotFoundError:
        break
    time.sleep(0.01)
else:
    os.kill(c, signal.SIGKILL)
    print(a, "pid 1 survived")
    sys.exit()
print(a, "pid 1 died")
EOF
)
    same "pid namespace: SIGKILL both ways" "-9 pid 1 died" "$got"
fi

if [ "${ns_ok[net]}" = yes ]; then
    same "network namespace: only loopback, and it is up" "lo ok" "$(sb --unshare-net --env "$P" -- python3 -c '
import socket
names = [l.split(":")[0].strip() for l in open("/proc/net/dev").readlines()[2:]]
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
socket.create_connection(s.getsockname(), timeout=2)
print(" ".join(names), "ok")')"
fi
if [ "${ns_ok[uts]}" = yes ]; then
    host=$(hostname)
    same "uts namespace: hostname is private" "sandbox-test $host" \
        "$(sb --unshare-uts --env "$P" -- /bin/sh -c 'hostname sandbox-test; hostname') $(hostname)"
fi

# --cgroup joins the directory before PROGRAM starts.
cg=/sys/fs/cgroup/pids
if [ -w "$cg/cgroup.procs" ] && grep -q ':pids:/$' /proc/self/cgroup && mkdir "$cg/sandbox-test-$$"; then
    same "--cgroup joins the cgroup" yes \
        "$(sb --cgroup "$cg/sandbox-test-$$" -- /bin/grep -q ":pids:/sandbox-test-$$\$" /proc/self/cgroup && echo yes)"
    rmdir "$cg/sandbox-test-$$"
else
    skip "--cgroup joins the cgroup" "no writable cgroup v1 pids hierarchy at $cg"
fi

tap_done
