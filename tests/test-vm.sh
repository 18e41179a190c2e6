#!/bin/bash
# VM test, in TAP: boots a Debian 12 VM with the built .deb installed, under
# QEMU, and drives the agent in it from the host as the Murano engine does.
# Two first boots, each from a fresh copy of one disk image:
#   murano  the user-data Murano's engine generates (a MIME multipart of its
#           cloud-config and its murano-init.sh + linux-init.sh, with
#           Agent-v2.template filled in), so the agent runs as Murano's own
#           murano-agent.service with our drop-in;
#   ours    cloud-init/user-data.yaml.in filled in, so muranoagent.service.
# In each: the agent consumes from its queue, an engine-built plan comes
# back with the right answer, systemd sees the unit active with the agent's
# STATUS= line (READY for Type=notify), the agent rejects an unsigned plan
# (the engine key is set) and runs signed ones. In "ours", then, the power
# is cut (SIGKILL to QEMU) while a plan's script runs, the VM boots again
# from the same disk, and the results queue gets exactly one result for that
# plan: the journal's "interrupted" answer, the script not started again.
# Then a plan whose first script asks for a reboot: the VM reboots (QEMU
# ends with it), boots again, and the plan goes on: one result, ErrorCode 0,
# each script started once. Last, a plan's script freezes the agent with
# SIGSTOP: systemd's watchdog kills it, Restart= brings it back, and that
# plan gets one answer too.
#   tests/test-vm.sh [BUILD_DIR]                default BUILD_DIR: build
# Runs as root. The package is found or built as tests/test-image.sh does.
# The VM's network reaches nothing but a private rabbitmq-server on the
# host's loopback (tests/broker.sh): QEMU user networking with restrict=on,
# and one guestfwd from 10.0.2.100:5672 to the broker. KVM when it can boot
# the kernel, TCG otherwise (the output says which; VM_ACCEL=kvm|tcg forces
# one). The image without the agent is cached in $VM_CACHE (default
# /var/cache/muranoagent-test-vm), keyed by its package list and by the
# recipe below; the first run downloads about 150 MB from $DEBIAN_MIRROR
# (default http://deb.debian.org/debian) and takes 6 to 9 minutes longer.
set -u
cd "$(dirname "$0")/.." || exit 1
build=$(cd "${1:-build}" && pwd)
version=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" meson.build | head -n1)
deb=${MURANOAGENT_DEB:-$build/packages/muranoagent_${version}_amd64.deb}
cache=${VM_CACHE:-/var/cache/muranoagent-test-vm}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=bookworm
send=$build/agent/muranoagent-send
amqp_tool=$build/tests/integration/integ-amqp
data=$PWD/tests/data/vm
start=$(date +%s)

. tests/tap.sh
bail() {
    echo "Bail out! $*"
    exit 1
}

if [ "$(id -u)" -ne 0 ]; then
    echo "1..0 # SKIP needs root (debootstrap, chroot, mkfs.ext4 -d)"
    exit 0
fi
for tool in debootstrap qemu-system-x86_64 qemu-img mkfs.ext4 genisoimage socat openssl python3; do
    command -v "$tool" >/dev/null || bail "$tool is missing: run packaging/test-deps.sh"
done
[ -x /usr/lib/rabbitmq/bin/rabbitmq-server ] || bail "rabbitmq-server is missing: run packaging/build-deps.sh"
{ [ -x "$send" ] && [ -x "$amqp_tool" ]; } || bail "no build in $build (muranoagent-send, integ-amqp)"

tmp=$(mktemp -d /tmp/muranoagent-vm.XXXXXX)
broker=$tmp/broker
qemu_pid=
cleanup() {
    local pid
    [ -n "$qemu_pid" ] && kill -KILL "$qemu_pid" 2>/dev/null
    # The relays QEMU started for the guest's connections, each recorded by
    # its own pid.
    if [ -f "$tmp/relay.pids" ]; then
        while read -r pid; do
            kill -TERM "$pid" 2>/dev/null
        done <"$tmp/relay.pids"
    fi
    wait 2>/dev/null
    [ -f "$broker/env" ] && tests/broker.sh stop "$broker" >/dev/null 2>&1
    rm -rf "$tmp"
}
trap cleanup EXIT

if [ ! -f "$deb" ]; then
    t0=$(date +%s)
    DEB_BUILD_OPTIONS=nocheck packaging/build-deb.sh "$build/packages" >"$tmp/deb.log" 2>&1 ||
        { tail -n 40 "$tmp/deb.log" | note; bail "cannot build the package"; }
    elapsed "building the package" "$t0"
fi
echo "# package: $deb"

# ---- the image --------------------------------------------------------------
# minbase plus a kernel, systemd as init, cloud-init, ifupdown (which
# renders cloud-init's network configuration) and the package's
# dependencies, so that dpkg -i needs no network. debootstrap does not
# resolve virtual packages: python3-cffi-backend provides the
# python3-cffi-backend-api-* that cloud-init's python3-cryptography needs.
# The recipe (this function) is part of the cache key: changing it makes a
# new cache.
prepare_root() { # prepare_root ROOT
    local root=$1
    # The disk has no partition table: QEMU boots the kernel and initrd of
    # the root directly, with root=/dev/vda. An initrd with just what that
    # needs is a sixth of Debian's default one, and boots faster under TCG.
    echo '/dev/vda / ext4 errors=remount-ro 0 1' >"$root/etc/fstab"
    echo 'MODULES=list' >"$root/etc/initramfs-tools/conf.d/muranoagent-test"
    printf '%s\n' virtio_pci virtio_blk ext4 >>"$root/etc/initramfs-tools/modules"
    chroot "$root" update-initramfs -u -k all >/dev/null 2>&1 || return 1
    # Only the datasource the test gives; a cloud image names its own.
    echo 'datasource_list: [NoCloud, None]' >"$root/etc/cloud/cloud.cfg.d/90-muranoagent-test.cfg"
    # Every VM made from the image gets its own machine id at first boot.
    : >"$root/etc/machine-id"
    rm -f "$root/var/lib/dbus/machine-id"
    chroot "$root" apt-get clean
}
deps=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed -E 's/^ *//; s/[ |(].*//' | grep . | sort -u)
# shellcheck disable=SC2086 # one package a word
include=$(printf '%s\n' systemd systemd-sysv linux-image-amd64 cloud-init python3-cffi-backend \
    ifupdown iproute2 $deps |
    sort -u | paste -sd, -)
debs_key=$(printf '%s %s %s\n' "$suite" "$mirror" "$include" | sha256sum | cut -c1-12)
key=$( (echo "$debs_key" && declare -f prepare_root) | sha256sum | cut -c1-12)
debs=$cache/$suite-vm-debs-$debs_key.tgz
cached_root=$cache/$suite-vm-root-$key
root=$tmp/root
mkdir -p "$cache"

t0=$(date +%s)
if [ ! -d "$cached_root" ]; then
    echo "# no cached image root: debootstrap --variant=minbase --include=$include $suite"
    if [ ! -f "$debs" ]; then
        debootstrap --variant=minbase --include="$include" --make-tarball="$debs.part" \
            "$suite" "$tmp/download" "$mirror" >"$tmp/debootstrap.log" 2>&1 ||
            { tail -n 20 "$tmp/debootstrap.log" | note; bail "debootstrap --make-tarball failed"; }
        mv "$debs.part" "$debs"
        rm -rf "$tmp/download"
    fi
    rm -rf "$cached_root.part"
    debootstrap --variant=minbase --include="$include" --unpack-tarball="$debs" \
        "$suite" "$cached_root.part" "$mirror" >"$tmp/debootstrap.log" 2>&1 ||
        { tail -n 20 "$tmp/debootstrap.log" | note; bail "debootstrap failed"; }
    chroot "$cached_root.part" dpkg --audit >"$tmp/audit" 2>&1
    [ ! -s "$tmp/audit" ] || { note <"$tmp/audit"; bail "debootstrap left packages unconfigured"; }
    prepare_root "$cached_root.part" || bail "cannot prepare the root"
    mv "$cached_root.part" "$cached_root"
    # Those of older package lists or recipes are not used again.
    find "$cache" -mindepth 1 -maxdepth 1 -name "$suite-vm-*" ! -name "$suite-vm-debs-$debs_key.tgz" \
        ! -name "$suite-vm-root-$key" -exec rm -rf {} +
fi
cp -a "$cached_root" "$root"
elapsed "the Debian $suite root (cache: $cached_root)" "$t0"

t0=$(date +%s)
cp "$deb" "$root/tmp/muranoagent.deb"
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin dpkg -i /tmp/muranoagent.deb \
    >"$tmp/dpkg.log" 2>&1
st=$?
rm -f "$root/tmp/muranoagent.deb"
note <"$tmp/dpkg.log"
check "dpkg -i installs the package into the image" test $st -eq 0
{ cp -L "$root/vmlinuz" "$tmp/vmlinuz" && cp -L "$root/initrd.img" "$tmp/initrd.img"; } ||
    bail "no kernel or initrd in the root"
# The file system's size: what the root holds, plus room for plans.
size=$(($(du -sm "$root" | cut -f1) * 5 / 4 + 512))
mkfs.ext4 -q -F -L muranoroot -d "$root" "$tmp/disk.raw" "${size}M" >"$tmp/mkfs.log" 2>&1 ||
    { note <"$tmp/mkfs.log"; bail "mkfs.ext4 -d failed"; }
rm -rf "$root"
elapsed "installing the package and making the ${size} MiB disk" "$t0"

# ---- the broker, the keys, the relay ----------------------------------------
t0=$(date +%s)
tests/broker.sh start "$broker" 2>"$tmp/broker.log" || { note <"$tmp/broker.log"; bail "the broker did not start"; }
# shellcheck disable=SC1091
. "$broker/env"
elapsed "starting the broker" "$t0"
{ openssl genrsa -out "$tmp/engine.pem" 2048 2>/dev/null &&
    openssl rsa -in "$tmp/engine.pem" -RSAPublicKey_out -out "$tmp/engine.pub" 2>/dev/null; } ||
    bail "cannot make the engine key"

# QEMU starts this for every connection the guest opens to 10.0.2.100:5672,
# with the connection on its standard input and output.
cat >"$tmp/relay" <<EOF
#!/bin/sh
echo \$\$ >>"$tmp/relay.pids"
exec socat -T 600 - TCP:127.0.0.1:$BROKER_PORT
EOF
chmod +x "$tmp/relay"

amqp() { timeout 300 "$amqp_tool" --port "$BROKER_PORT" "$@"; }
snd() { timeout 300 "$send" --host 127.0.0.1 --port "$BROKER_PORT" "$@"; }

# ---- the accelerator ----------------------------------------------------------
# KVM when it boots the kernel: without a root file system the kernel
# panics and, with panic=-1 and -no-reboot, QEMU exits. A KVM that cannot run
# this kernel hangs or fails there; TCG is used then.
probe_kvm() {
    [ -w /dev/kvm ] || { echo "no writable /dev/kvm"; return 1; }
    timeout 15 qemu-system-x86_64 -accel kvm -m 256 -display none -no-reboot -monitor none \
        -serial "file:$tmp/kvm-probe.log" -kernel "$tmp/vmlinuz" \
        -append "console=ttyS0 panic=-1" >"$tmp/kvm-probe.err" 2>&1
    if grep -q 'VFS: Unable to mount root fs' "$tmp/kvm-probe.log" 2>/dev/null; then
        return 0
    fi
    if [ -s "$tmp/kvm-probe.log" ]; then
        echo "under KVM the kernel did not reach its root file system within 15 s"
    else
        echo "under KVM the kernel printed nothing within 15 s"
    fi
    return 1
}
t0=$(date +%s)
case ${VM_ACCEL:-} in
kvm | tcg) accel=$VM_ACCEL why="VM_ACCEL" ;;
*)
    if why=$(probe_kvm); then accel=kvm why="the kernel boots under KVM"; else accel=tcg; fi
    ;;
esac
echo "# accelerator: $accel ($why; probed in $(($(date +%s) - t0)) s)"

# ---- booting --------------------------------------------------------------------

# seed NAME USER-DATA: a NoCloud seed (an ISO 9660 volume labelled cidata).
# The network is static and has no name server: the guest reaches the broker
# by address, and everything else fails at once.
seed() {
    local dir=$tmp/seed-$1
    mkdir -p "$dir"
    cp "$2" "$dir/user-data"
    printf 'instance-id: iid-muranoagent-vm-%s-%s\nlocal-hostname: muranoagent-%s\n' \
        "$1" "$$" "$1" >"$dir/meta-data"
    cat >"$dir/network-config" <<'EOF'
version: 1
config:
  - type: physical
    name: eth0
    subnets:
      - type: static
        address: 10.0.2.15/24
EOF
    genisoimage -quiet -output "$tmp/seed-$1.iso" -volid cidata -joliet -rock \
        "$dir/user-data" "$dir/meta-data" "$dir/network-config"
}

# boot NAME: start QEMU on $tmp/NAME.qcow2 with $tmp/seed-NAME.iso; the
# serial console goes to $tmp/console-NAME-<boot>.log.
boots=0
boot() {
    boots=$((boots + 1))
    console=$tmp/console-$1-$boots.log
    : >"$console"
    qemu-system-x86_64 -accel "$accel" -m 1024 -smp 2 -display none -monitor none -no-reboot \
        -serial "file:$console" \
        -kernel "$tmp/vmlinuz" -initrd "$tmp/initrd.img" \
        -append "root=/dev/vda rw console=ttyS0 net.ifnames=0 panic=-1" \
        -drive "file=$tmp/$1.qcow2,if=virtio,format=qcow2" \
        -drive "file=$tmp/seed-$1.iso,if=virtio,format=raw,readonly=on" \
        -netdev "user,id=n0,restrict=on,guestfwd=tcp:10.0.2.100:5672-cmd:$tmp/relay" \
        -device virtio-net-pci,netdev=n0 >"$tmp/qemu-$1.log" 2>&1 &
    qemu_pid=$!
    boot_start=$(date +%s)
}

# wait_consuming QUEUE SECONDS: until the queue has a consumer (the agent);
# sets boot_seconds, the time from QEMU's start.
wait_consuming() {
    local deadline=$(($(date +%s) + $2)) counts
    while :; do
        counts=$(amqp count "$1" 2>/dev/null)
        if [ "${counts#* }" = 1 ]; then
            boot_seconds=$(($(date +%s) - boot_start))
            return 0
        fi
        if ! kill -0 "$qemu_pid" 2>/dev/null; then
            note <"$tmp/qemu-$name.log"
            return 1
        fi
        [ "$(date +%s)" -lt "$deadline" ] || return 1
        sleep 1
    done
}

# first_boot NAME USER-DATA: a fresh disk and seed for NAME, the queues $q and
# $rq declared (the engine declares the agent's queue before it boots the VM:
# Agent.prepare), then boot and wait_consuming; checks that the agent
# consumes and returns wait_consuming's status.
first_boot() {
    local st
    seed "$1" "$2" || bail "cannot make the seed"
    qemu-img create -q -f qcow2 -F raw -b "$tmp/disk.raw" "$tmp/$1.qcow2" || bail "qemu-img create failed"
    amqp declare "$q" "$rq" >/dev/null || bail "cannot declare the queues"
    boot "$1"
    wait_consuming "$q" 600
    st=$?
    check "$1: the agent consumes from its queue ($accel)" test $st -eq 0
    return $st
}

# power_off: SIGKILL to QEMU, the power cut.
power_off() {
    kill -KILL "$qemu_pid" 2>/dev/null
    wait "$qemu_pid" 2>/dev/null
    qemu_pid=
}

# show_console FILE [LINES]: the end of a serial console log, and the
# broker's last errors.
show_console() {
    tail -n "${2:-30}" "$1" | tr -d '\r' | note
    grep -h '\[error\]' "$broker"/log/*.log 2>/dev/null | tail -n 5 | note
}

# result KEY FILE: one value of a result document, as a line of text.
result() {
    python3 -c 'import json, sys; print(str(json.load(open(sys.argv[2])).get(sys.argv[1])).rstrip("\n"))' \
        "$1" "$2" 2>/dev/null
}

# field NAME FILE: the value of a "NAME=value" line of a status plan's output.
field() { sed -n "s/^$1=//p" "$2" | head -n1; }

# status NAME: send status.template, signed, and keep the lines its
# script printed in $tmp/status-NAME; succeeds when the plan succeeded.
status() {
    snd --queue "$q" --results-queue "$rq" --timeout 300 --sign-key "$tmp/engine.pem" \
        "$data/Resources/status.template" >"$tmp/status.json" 2>"$tmp/status.err" || {
        note <"$tmp/status.err"
        return 1
    }
    result Body "$tmp/status.json" >"$tmp/status-$1"
}

# drain_one NAME WHAT: drain the results queue into $tmp/NAME (the first
# result waited for up to two minutes, then whatever else comes) and check
# that exactly one came.
drain_one() {
    local got
    mkdir -p "$tmp/$1"
    got=$(amqp drain --count 1 --idle 120000 --timeout 180 --out "$tmp/$1" "$rq")
    got=$((got + $(amqp drain --idle 3000 --out "$tmp/$1-more" "$rq")))
    check "$2: exactly one result ($got)" test "$got" = 1
}

# result_and_status NAME WHAT FILE WANT: check WHAT, that FILE (what a
# check of the one result printed) holds WANT; then run the status plan
# (its lines in $tmp/status-NAME) and check that it ran.
result_and_status() {
    note <"$3"
    check "$2" test "$(cat "$3")" = "$4"
    status "$1"
    check "${2%%:*}: the status plan runs" test $? -eq 0
    note <"$tmp/status-$1"
}

# ---- a booted VM: what both flows must show ------------------------------------
# run_checks NAME UNIT TYPE
run_checks() {
    local name=$1 unit=$2 type=$3 id

    snd --queue "$q" --results-queue "$rq" --timeout 300 --sign-key "$tmp/engine.pem" \
        tests/data/integration/engine/Resources/greet.template >"$tmp/greet.json" 2>"$tmp/greet.err"
    st=$?
    note <"$tmp/greet.err"
    check "$name: a signed engine-built plan comes back with its answer" \
        test "$st $(result Body "$tmp/greet.json")" = "0 hello, integration, from the engine-built plan"

    # The engine's void signature header: the agent must refuse it.
    printf '{"FormatVersion": "2.1.0", "ID": "unsigned-%s", "Body": "return 1", "Scripts": {}, "Files": {}}' \
        "$name" >"$tmp/unsigned-$name.json"
    amqp publish "$q" "$tmp/unsigned-$name.json" >/dev/null || bail "cannot publish"

    status "$name"
    check "$name: the status plan runs" test $? -eq 0
    note <"$tmp/status-$name"
    id=$(result SourceID "$tmp/status.json")
    check "$name: the agent runs in $unit" test "$(field unit "$tmp/status-$name")" = "$unit"
    check "$name: systemd sees it active and running" \
        test "$(field ActiveState "$tmp/status-$name") $(field SubState "$tmp/status-$name")" = "active running"
    if [ "$type" = notify ]; then
        # Type=notify: "active" only after READY=1.
        check "$name: READY=1 reached ($unit is Type=notify)" \
            test "$(field ActiveState "$tmp/status-$name")" = active
    fi
    check "$name: the agent's STATUS= line reaches systemd (\"running plan $id\")" \
        test "$(field StatusText "$tmp/status-$name")" = "running plan $id"
    check "$name: the unsigned plan was rejected for its missing signature" \
        test "$(field rejected "$tmp/status-$name")" = 1
    rss=$(field VmRSS "$tmp/status-$name")
    echo "# $name: the agent's resident memory in the VM: ${rss:-?} KiB (VmRSS, while running a plan)"
    check "$name: the agent's VmRSS is known" test -n "$rss"
    check "$name: no result came for the unsigned plan, nothing else is left" \
        test "$(amqp drain --idle 2000 "$rq")" = 0
    check "$name: the plan queue is empty" test "$(amqp count "$q")" = "0 1"
}

# ---- a frozen agent -----------------------------------------------------------
# freeze_checks: a plan's script stops the agent with SIGSTOP (the default
# profile lets a root script find it). systemd's watchdog must kill it
# (WatchdogSec, then TimeoutAbortSec), Restart= must bring it back, and the
# plan must get exactly one answer, "interrupted", its script not run again.
freeze_checks() {
    local freeze_id got t0

    freeze_id=$(snd --queue "$q" --no-wait --sign-key "$tmp/engine.pem" \
        "$data/Resources/freeze.template" 2>"$tmp/freeze.err")
    check "ours: the freeze plan is published" test $? -eq 0
    note <"$tmp/freeze.err"
    deadline=$(($(date +%s) + 120))
    until grep -q 'muranoagent-vm: the freeze plan stops the agent' "$console"; do
        [ "$(date +%s)" -lt "$deadline" ] || break
        sleep 0.2
    done
    check "ours: the freeze plan's script stops the agent" \
        grep -q 'muranoagent-vm: the freeze plan stops the agent' "$console"
    t0=$(date +%s)
    mkdir -p "$tmp/freeze"
    got=$(amqp drain --count 1 --idle 240000 --timeout 300 --out "$tmp/freeze" "$rq")
    t0=$(($(date +%s) - t0))
    echo "# ours: the frozen agent's plan was answered $t0 s after the freeze"
    # WatchdogSec (60 s at most after the last ping), TimeoutAbortSec (15),
    # RestartSec (10) and a start: under 120 s. Without TimeoutAbortSec the
    # SIGKILL would wait for TimeoutStopSec (90 s): 130 s at least.
    check "ours, frozen agent: answered within 120 s of the freeze ($t0 s)" test "$t0" -lt 120
    got=$((got + $(amqp drain --idle 3000 --out "$tmp/freeze-more" "$rq")))
    check "ours, frozen agent: exactly one result ($got)" test "$got" = 1
    check "ours, frozen agent: it is the freeze plan's, ErrorCode 103" \
        test "$(result SourceID "$tmp/freeze/00001.body") $(result ErrorCode "$tmp/freeze/00001.body")" \
        = "$freeze_id 103"
    status ours-freeze
    check "ours, frozen agent: the status plan runs after it" test $? -eq 0
    note <"$tmp/status-ours-freeze"
    check "ours, frozen agent: systemd restarted the agent once" \
        test "$(field NRestarts "$tmp/status-ours-freeze")" = 1
    check "ours, frozen agent: the freeze plan's script started once, and not again" \
        test "$(field freeze_runs "$tmp/status-ours-freeze")" = 1
}

# ---- 1. Murano's own user-data --------------------------------------------------
# As LinuxMuranoInstance builds it: Agent-v2.template filled and base64-coded
# into linux-init.sh, after murano-init.sh with its three service files;
# and murano-init.conf bound with the host name, as a cloud-config part. Heat's
# OS::Heat::MultipartMime joins the two parts (text/plain, no subtype).
name=murano
env_id=$(python3 -c 'import uuid; print(uuid.uuid4().hex)')
q=e$env_id-h$(python3 -c 'import uuid; print(uuid.uuid4().hex)')
rq=-execution-results-vm-$$
DATA=$data/murano PUB=$tmp/engine.pub QUEUE=$q RESULTS=$rq OUT=$tmp/user-data-murano \
    python3 - <<'EOF' || bail "cannot build Murano's user-data"
import base64, os, yaml
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
e = os.environ
def read(name):
    return open(os.path.join(e["DATA"], name)).read()
def b64(text):
    return base64.b64encode(text.encode()).decode()
key = "".join("\t" + line for line in open(e["PUB"]).read().splitlines(True))
config = read("Agent-v2.template")
for k, v in {"%RABBITMQ_HOST%": "10.0.2.100", "%RABBITMQ_PORT%": "5672",
             "%RABBITMQ_USER%": "guest", "%RABBITMQ_PASSWORD%": "guest",
             "%RABBITMQ_VHOST%": "/", "%RABBITMQ_SSL%": "false",
             "%RABBITMQ_INSECURE%": "false", "%RABBITMQ_INPUT_QUEUE%": e["QUEUE"],
             "%RESULT_QUEUE%": e["RESULTS"], "%SIGNING_KEY%": key}.items():
    config = config.replace(k, v)
init = read("linux-init.sh")
for k, v in {"%AGENT_CONFIG_BASE64%": b64(config), "%INTERNAL_HOSTNAME%": "muranoagent-vm",
             "%MURANO_SERVER_ADDRESS%": "10.0.2.100", "%CA_ROOT_CERT_BASE64%": ""}.items():
    init = init.replace(k, v)
murano = read("murano-init.sh")
for k, v in {"%MURANO_AGENT_CONF%": b64(read("murano-agent.conf")),
             "%MURANO_AGENT_SERVICE%": b64(read("murano-agent.service")),
             "%MURANO_AGENT%": b64(read("murano-agent")),
             "%PIP_SOURCE%": "murano-agent"}.items():
    murano = murano.replace(k, v)
cloud = yaml.safe_load(read("murano-init.conf").replace("$instanceHostname", "muranoagent-vm"))
parts = [MIMEText("#cloud-config\n" + yaml.safe_dump(cloud, default_flow_style=False), _charset="us-ascii"),
         MIMEText(murano + init, _charset="us-ascii")]
open(e["OUT"], "w").write(MIMEMultipart(_subparts=parts).as_string())
EOF
first_boot murano "$tmp/user-data-murano"
st=$?
if [ $st -eq 0 ]; then
    echo "# murano: boot to consuming: $boot_seconds s ($accel)"
    run_checks murano murano-agent.service simple
else
    show_console "$console" 60
fi
power_off

# ---- 2. our cloud-config, and a power cut -----------------------------------------
name=ours
q=e$(python3 -c 'import uuid; print(uuid.uuid4().hex)')-h$(python3 -c 'import uuid; print(uuid.uuid4().hex)')
rq=-execution-results-vm-ours-$$
PUB=$tmp/engine.pub QUEUE=$q RESULTS=$rq OUT=$tmp/user-data-ours python3 - <<'EOF' || bail "cannot fill our template"
import os
e = os.environ
text = open("cloud-init/user-data.yaml.in").read()
prefix = "      \t"
key = "".join(prefix + line for line in open(e["PUB"]).read().splitlines(True))
for k, v in {"RABBITMQ_HOST": "10.0.2.100", "RABBITMQ_PORT": "5672", "RABBITMQ_USER": "guest",
             "RABBITMQ_PASSWORD": "guest", "RABBITMQ_VHOST": "/", "RABBITMQ_SSL": "false",
             "RABBITMQ_INSECURE": "false", "RABBITMQ_INPUT_QUEUE": e["QUEUE"],
             "RESULT_QUEUE": e["RESULTS"], "SIGNING_KEY": key, "CA_ROOT_CERT_BASE64": ""}.items():
    text = text.replace("%" + k + "%", v)
open(e["OUT"], "w").write(text)
EOF
first_boot ours "$tmp/user-data-ours"
st=$?
if [ $st -ne 0 ]; then
    show_console "$console" 60
    power_off
    elapsed "the VM test" "$start"
    tap_done
    exit
fi
echo "# ours: boot to consuming: $boot_seconds s ($accel)"
run_checks ours muranoagent.service notify

# The power cut: once the sleep plan's script has started (it says so on
# the serial console after its start is on the disk), QEMU is killed.
sleep_id=$(snd --queue "$q" --no-wait --sign-key "$tmp/engine.pem" "$data/Resources/sleep.template" 2>"$tmp/sleep.err")
st=$?
note <"$tmp/sleep.err"
check "ours: the sleep plan is published" test $st -eq 0
deadline=$(($(date +%s) + 120))
until grep -q 'muranoagent-vm: the sleep plan is running' "$console"; do
    [ "$(date +%s)" -lt "$deadline" ] || break
    sleep 0.2
done
check "ours: its script runs" grep -q 'muranoagent-vm: the sleep plan is running' "$console"
power_off
echo "# ours: power cut (SIGKILL to QEMU) while plan $sleep_id runs"
check "ours: no result came before the power cut" test "$(amqp drain --idle 1000 "$rq")" = 0

boot ours
wait_consuming "$q" 600
st=$?
check "ours, after the power cut: the agent consumes again" test $st -eq 0
if [ $st -eq 0 ]; then
    echo "# ours: boot to consuming after the power cut: $boot_seconds s ($accel)"
    drain_one after "ours, after the power cut"
    python3 - "$tmp/after/00001.body" "$sleep_id" >"$tmp/after.check" 2>&1 <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
# With durable calls the answer names the call and the reboot (the boot ID
# changed); a call log whose name the power cut took gives the older text.
want = [{"Message": m, "AdditionalInfo": None} for m in (
    "The plan was interrupted: the VM rebooted during call 0, sleep(), which was not run again "
    "(its script is not marked idempotent); the calls before it were not run again either",
    "The plan was interrupted: the agent stopped or restarted while it was running, "
    "and it was not run again")]
print("source", "same" if r.get("SourceID") == sys.argv[2] else "differs: %r" % r.get("SourceID"))
print("code", r.get("ErrorCode"))
print("body", "same" if r.get("Body") in want else "differs: %r" % r.get("Body"))
EOF
    result_and_status ours-after "ours, after the power cut: it is the sleep plan's, ErrorCode 103, interrupted" \
        "$tmp/after.check" "$(printf 'source same\ncode 103\nbody same')"
    check "ours, after the power cut: the sleep plan's script started once, and not again" \
        test "$(field sleep_runs "$tmp/status-ours-after")" = 1
    check "ours, after the power cut: nothing else in the results queue" \
        test "$(amqp drain --idle 2000 "$rq")" = 0

    # A reboot on request (durable calls, docs/daemon.md): the plan's first
    # script exits 194, the agent records it and runs `systemctl reboot`,
    # and QEMU (-no-reboot) ends with the guest's reboot; booted again, the
    # agent resumes the plan: one result with both outputs, the two boot
    # IDs, each script started once.
    reboot_id=$(snd --queue "$q" --no-wait --sign-key "$tmp/engine.pem" "$data/Resources/reboot.template" 2>"$tmp/reboot.err")
    st=$?
    note <"$tmp/reboot.err"
    check "ours: the reboot plan is published" test $st -eq 0
    deadline=$(($(date +%s) + 300))
    while kill -0 "$qemu_pid" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do
        sleep 0.5
    done
    check "ours: the VM rebooted for the plan (QEMU ended with the guest)" \
        test "$(kill -0 "$qemu_pid" 2>/dev/null && echo running || echo ended)" = ended
    check "ours: no result came before the reboot" test "$(amqp drain --idle 1000 "$rq")" = 0
    power_off
    boot ours
    wait_consuming "$q" 600
    check "ours, after the requested reboot: the agent consumes again" test $? -eq 0
    drain_one rebooted "ours, after the requested reboot"
    python3 - "$tmp/rebooted/00001.body" "$reboot_id" >"$tmp/rebooted.check" 2>&1 <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
b = r.get("Body")
print("source", "same" if r.get("SourceID") == sys.argv[2] else "differs: %r" % r.get("SourceID"))
print("code", r.get("ErrorCode"))
print("body", "two boot IDs" if isinstance(b, list) and len(b) == 2 and len(b[0]) == 36 and
      len(b[1]) == 36 and b[0] != b[1] else "differs: %r" % b)
EOF
    result_and_status ours-rebooted "ours, after the requested reboot: ErrorCode 0, both outputs, from two boots" \
        "$tmp/rebooted.check" "$(printf 'source same\ncode 0\nbody two boot IDs')"
    check "ours, after the requested reboot: each script started once" \
        test "$(field reboot_first_runs "$tmp/status-ours-rebooted") $(field reboot_second_runs "$tmp/status-ours-rebooted")" = "1 1"
    freeze_checks
else
    show_console "$console" 60
fi
power_off

elapsed "the VM test" "$start"
tap_done
