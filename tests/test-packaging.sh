#!/bin/bash
# Packaging tests, in TAP: the Debian package (dpkg-buildpackage, lintian,
# its files and maintainer scripts), the systemd unit and the drop-in for
# Murano's unit (systemd-analyze verify, and the unit as systemd loads it),
# the man pages, and the RPM package (rpmbuild).
#   tests/test-packaging.sh [BUILD_DIR]        default BUILD_DIR: build
# BUILD_DIR must hold a build of the tree (for agent/muranoagent and
# agent/muranoagent-send). The packages are left in BUILD_DIR/packages/ for
# tests/test-image.sh. The tools come from packaging/test-deps.sh. The unit
# tests are not run inside the package builds (they run in tests/run.sh);
# PACKAGE_TESTS=1 runs them there too.
set -u
cd "$(dirname "$0")/.." || exit 1
src=$PWD
build=$(cd "${1:-build}" && pwd)
agent=$build/agent/muranoagent
send=$build/agent/muranoagent-send
out=$build/packages
data=$src/tests/data/packaging

tmp=$(mktemp -d)
chmod 755 "$tmp" # systemd's test mode runs as nobody and reads under it
trap 'rm -rf "$tmp"' EXIT

. tests/tap.sh

for tool in dpkg-buildpackage dh lintian rpmbuild rpm2archive systemd-analyze groff man; do
    if ! command -v "$tool" >/dev/null; then
        echo "Bail out! $tool is missing: run packaging/test-deps.sh"
        exit 1
    fi
done
if [ ! -x "$agent" ] || [ ! -x "$send" ]; then
    echo "Bail out! no agent build in $build"
    exit 1
fi
rm -rf "$out"
mkdir -p "$out"
version=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" meson.build | head -n1)

# ---- Debian package -------------------------------------------------------
opts=nocheck
[ -n "${PACKAGE_TESTS:-}" ] && opts=
t0=$(date +%s)
DEB_BUILD_OPTIONS=$opts packaging/build-deb.sh "$out" >"$tmp/deb.log" 2>&1
st=$?
elapsed "dpkg-buildpackage -b -us -uc (DEB_BUILD_OPTIONS=$opts)" "$t0"
check "dpkg-buildpackage -b -us -uc succeeds" test $st -eq 0
[ $st -ne 0 ] && tail -n 40 "$tmp/deb.log" | note
deb=$out/muranoagent_${version}_amd64.deb
if [ ! -f "$deb" ]; then
    echo "Bail out! no package was built"
    exit 1
fi

# Exactly these files and links; directories are implied.
cat >"$tmp/want-files" <<EOF
./etc/murano/agent.conf.sample
./lib/systemd/system/murano-agent.service.d/muranoagent.conf
./lib/systemd/system/muranoagent.service
./usr/bin/muranoagent
./usr/bin/muranoagent-send
./usr/libexec/muranoagent/muranoagent-fetch
./usr/libexec/muranoagent/muranoagent-sandbox
./usr/share/doc/muranoagent/changelog.gz
./usr/share/doc/muranoagent/copyright
./usr/share/doc/muranoagent/examples/cloud-init/user-data.yaml.in
./usr/share/man/man1/muranoagent-send.1.gz
./usr/share/man/man5/muranoagent.conf.5.gz
./usr/share/man/man8/muranoagent.8.gz
EOF
dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {print $6}' | sort >"$tmp/got-files"
same_file "the .deb holds exactly the expected files" "$tmp/want-files" "$tmp/got-files"
check "the helper is executable" \
    sh -c "dpkg-deb -c '$deb' | grep '^-rwxr-xr-x .* ./usr/libexec/muranoagent/muranoagent-sandbox$' >/dev/null"
check "the download program is executable" \
    sh -c "dpkg-deb -c '$deb' | grep '^-rwxr-xr-x .* ./usr/libexec/muranoagent/muranoagent-fetch$' >/dev/null"

for field in Provides Conflicts Replaces; do
    check "$field: murano-agent" test "$(dpkg-deb -f "$deb" "$field")" = "murano-agent"
done
# libgmp is dlopen()ed on first use, so shlibs cannot see it: the
# control file names it, and the binary does not link it.
check "the .deb depends on libgmp10" sh -c "dpkg-deb -f '$deb' Depends | tr ',' '\\n' | sed 's/^ *//' | grep -qx libgmp10"
check "muranoagent does not link libgmp" sh -c "! readelf -d '$agent' | grep -q 'libgmp'"
dpkg-deb -e "$deb" "$tmp/control"
check "the sample configuration is the only conffile" \
    test "$(cat "$tmp/control/conffiles")" = "/etc/murano/agent.conf.sample"
check "postinst enables the unit" grep -q "deb-systemd-helper enable 'muranoagent.service'" "$tmp/control/postinst"
check "postinst never restarts the agent" \
    sh -c "! grep -q 'restart' '$tmp/control/postinst'"
# shellcheck disable=SC2016 # the script's own $1
check "prerm stops the agent on removal only" \
    grep -q '\[ "$1" = remove \] .*' "$tmp/control/prerm"

t0=$(date +%s)
lintian --pedantic "$out/muranoagent_${version}_amd64.changes" >"$tmp/lintian" 2>&1
elapsed "lintian" "$t0"
grep -v '^running with root privileges' "$tmp/lintian" | note
check "lintian reports no errors" sh -c "! grep -q '^E:' '$tmp/lintian'"
check "lintian reports no warnings" sh -c "! grep -q '^W:' '$tmp/lintian'"

# ---- the unit and the drop-in, as systemd loads them ----------------------
# A root with the package's files, and the host's own units for the targets
# the unit refers to.
root=$tmp/root
mkdir -p "$root/lib/systemd/system" "$root/etc/systemd/system"
dpkg-deb -x "$deb" "$root"
cp -a /lib/systemd/system/. "$root/lib/systemd/system/"
chmod -R a+rX "$root"
export MANPATH=$root/usr/share/man # systemd-analyze checks Documentation=

verify() { # verify UNIT: systemd-analyze verify, clean: no message at all
    systemd-analyze verify --root="$root" "$1" >"$tmp/verify" 2>&1
    local st=$?
    note <"$tmp/verify"
    [ $st -eq 0 ] && [ ! -s "$tmp/verify" ]
}
check "systemd-analyze verify muranoagent.service is clean" verify muranoagent.service

packaging/systemd-dump.sh "$root" muranoagent.service >"$tmp/unit"
has() { grep -qxF "$(printf '\t\t%s' "$2")" "$1"; }
for p in "Type: notify" "NotifyAccess: main" "WatchdogSec: 1min" "Restart: on-failure" \
    "RestartSec: 10s" "TimeoutStartSec: 30min" "TimeoutStopSec: 1min 30s" "TimeoutAbortSec: 15s" "KillMode: mixed" \
    "Delegate: yes" "OOMPolicy: continue" "OOMScoreAdjust: -900" "LockPersonality: yes" "RestrictRealtime: yes" \
    "ProtectSystem: no" "ProtectHostname: no" "ProtectClock: no" \
    "DevicePolicy: auto" "UMask: 0022" "Wants: network-online.target (origin-file)" \
    "After: network-online.target (origin-file)" "After: cloud-config.service (origin-file)" \
    "ConditionPathExistsGlob: /etc/murano/*.conf untested" \
    "	Command Line: /usr/bin/muranoagent --config-dir /etc/murano"; do
    check "muranoagent.service: $p" has "$tmp/unit" "$p"
done
check "muranoagent.service is not ordered after cloud-final.service" \
    sh -c "! grep -q 'After: cloud-final.service' '$tmp/unit'"
check "muranoagent.service is not ordered after multi-user.target" \
    sh -c "! grep -q 'After: multi-user.target' '$tmp/unit'"

# The agent's own stop must fit in TimeoutStopSec: stop_grace + kill_grace
# at their defaults, plus time to publish the result.
grace=$("$agent" --config-file /dev/null --print-config |
    awk '$1 == "stop_grace" || $1 == "kill_grace" {s += $3} END {print s}')
check "TimeoutStopSec (90 s) > stop_grace + kill_grace ($grace s) + 30 s" test $((grace + 30)) -le 90

# Murano's first-boot script writes its own murano-agent.service to /etc.
# The drop-in must point it at our binary and give it our settings.
cp "$data/murano-agent.service" "$root/etc/systemd/system/murano-agent.service"
chmod a+r "$root/etc/systemd/system/murano-agent.service"
check "systemd-analyze verify of Murano's murano-agent.service is clean with the drop-in" \
    verify murano-agent.service
mv "$root/lib/systemd/system/murano-agent.service.d" "$tmp/dropin"
systemd-analyze verify --root="$root" murano-agent.service >"$tmp/verify" 2>&1
check "without the drop-in it fails on /usr/local/bin/muranoagent" \
    grep -q "/usr/local/bin/muranoagent is not executable" "$tmp/verify"
mv "$tmp/dropin" "$root/lib/systemd/system/murano-agent.service.d"

packaging/systemd-dump.sh "$root" murano-agent.service >"$tmp/murano"
for p in "DropIn Path: $root/lib/systemd/system/murano-agent.service.d/muranoagent.conf" \
    "Type: simple" "NotifyAccess: main" "WatchdogSec: 1min" "Conflicts: muranoagent.service (origin-file)" \
    "	Command Line: /usr/bin/muranoagent --config-dir /etc/murano"; do
    check "murano-agent.service with the drop-in: $p" has "$tmp/murano" "$p"
done
# Every setting the drop-in repeats must have the unit's value.
props=$'^\t\t((Restart|RestartSec|WatchdogSec|NotifyAccess|TimeoutStopSec|TimeoutAbortSec|KillMode|Delegate|OOMPolicy|OOMScoreAdjust|LockPersonality|RestrictRealtime|Documentation|ProtectSystem|UMask|DevicePolicy): |(After|Wants): (network-online.target|cloud-init.service|cloud-config.service) )'
grep -E "$props" "$tmp/unit" | sort >"$tmp/unit-props"
grep -E "$props" "$tmp/murano" | sort >"$tmp/murano-props"
count=$(wc -l <"$tmp/unit-props")
check "the 21 settings compared are all there ($count)" test "$count" -eq 21
same_file "the drop-in gives Murano's unit the same settings as muranoagent.service" \
    "$tmp/unit-props" "$tmp/murano-props"
# systemd's dump leaves these out; compare the files' lines.
keys='^(StartLimitIntervalSec|StartLimitBurst|RestartPreventExitStatus)='
grep -E "$keys" "$root/lib/systemd/system/muranoagent.service" | sort >"$tmp/unit-keys"
grep -E "$keys" "$root/lib/systemd/system/murano-agent.service.d/muranoagent.conf" | sort >"$tmp/murano-keys"
check "the start limit and RestartPreventExitStatus are set" test "$(wc -l <"$tmp/unit-keys")" -eq 3
same_file "and the drop-in repeats them" "$tmp/unit-keys" "$tmp/murano-keys"

# Enabling our unit must leave Murano's file alone: an Alias= symlink at
# /etc/systemd/system/murano-agent.service would make murano-init.sh's
# redirection overwrite the packaged unit.
systemctl --root="$root" enable muranoagent.service >/dev/null 2>&1
check "systemctl enable muranoagent.service links it into multi-user.target" \
    test -L "$root/etc/systemd/system/multi-user.target.wants/muranoagent.service"
check "and leaves murano-agent.service a plain file" \
    sh -c "[ ! -L '$root/etc/systemd/system/murano-agent.service' ] &&
           cmp -s '$root/etc/systemd/system/murano-agent.service' '$data/murano-agent.service'"

# ---- man pages ------------------------------------------------------------
for page in docs/man/muranoagent.8 docs/man/muranoagent.conf.5 docs/man/muranoagent-send.1; do
    groff -man -ww -z "$page" >"$tmp/groff" 2>&1
    note <"$tmp/groff"
    check "$page: groff -ww reports nothing" test ! -s "$tmp/groff"
    gz=$root/usr/share/man/man${page##*.}/$(basename "$page").gz
    MANWIDTH=80 man --warnings -l "$gz" 2>"$tmp/man" >"$tmp/man.out"
    note <"$tmp/man"
    check "$(basename "$gz") (installed): man --warnings reports nothing" \
        sh -c "[ ! -s '$tmp/man' ] && [ -s '$tmp/man.out' ]"
done

# Every option the agent knows is described in muranoagent.conf(5).
"$agent" --config-file /dev/null --print-config |
    sed -nE 's/^([a-z_0-9]+) =.*/\1/p; s/^# ([a-z_0-9]+) is unset$/\1/p' | sort -u >"$tmp/options"
check "the agent lists its options" test "$(wc -l <"$tmp/options")" -gt 50
missing=$(while read -r o; do
    grep -qE "^\.BR? ${o}( |$)" docs/man/muranoagent.conf.5 || echo "$o"
done <"$tmp/options")
check "muranoagent.conf(5) describes every option${missing:+ (missing: ${missing//$'\n'/ })}" \
    test -z "$missing"

# Every option of muranoagent --help is in muranoagent(8).
"$agent" --help | grep -oE -- '--[a-z][a-z_-]*' | sort -u >"$tmp/agent-options"
missing=$(while read -r o; do
    grep -qF -- "${o//-/\\-}" docs/man/muranoagent.8 || echo "$o"
done <"$tmp/agent-options")
check "muranoagent(8) covers every option of --help${missing:+ (missing: ${missing//$'\n'/ })}" \
    test -z "$missing"

# Every option of muranoagent-send --help is in muranoagent-send(1).
"$send" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u >"$tmp/send-options"
missing=$(while read -r o; do
    grep -qF -- "${o//-/\\-}" docs/man/muranoagent-send.1 || echo "$o"
done <"$tmp/send-options")
check "muranoagent-send(1) covers every option of --help${missing:+ (missing: ${missing//$'\n'/ })}" \
    test -z "$missing"

# ---- RPM ------------------------------------------------------------------
t0=$(date +%s)
rpmargs=(--without tests)
[ -n "${PACKAGE_TESTS:-}" ] && rpmargs=()
packaging/build-rpm.sh "$out" "${rpmargs[@]}" >"$tmp/rpm.log" 2>&1
st=$?
elapsed "rpmbuild -bb ${rpmargs[*]}" "$t0"
check "rpmbuild -bb succeeds" test $st -eq 0
[ $st -ne 0 ] && tail -n 40 "$tmp/rpm.log" | note
rpmfile=$(find "$out" -maxdepth 1 -name "muranoagent-$version-*.rpm" 2>/dev/null | sort | head -n1)
if [ -n "$rpmfile" ]; then
    cat >"$tmp/want-rpm" <<EOF
/etc/murano/agent.conf.sample
/usr/bin/muranoagent
/usr/bin/muranoagent-send
/usr/lib/systemd/system/murano-agent.service.d/muranoagent.conf
/usr/lib/systemd/system/muranoagent.service
/usr/libexec/muranoagent/muranoagent-fetch
/usr/libexec/muranoagent/muranoagent-sandbox
/usr/share/doc/muranoagent/examples/cloud-init/user-data.yaml.in
/usr/share/man/man1/muranoagent-send.1
/usr/share/man/man5/muranoagent.conf.5
/usr/share/man/man8/muranoagent.8
EOF
    # Regular files only; the build ids and %doc directory vary by distribution.
    rpm -qlvp "$rpmfile" | awk '$1 ~ /^-/ {print $NF}' | grep -v -e '^/usr/lib/.build-id/' \
        -e '^/usr/share/doc/muranoagent-[0-9]' | sed 's/\.gz$//' | sort >"$tmp/got-rpm"
    same_file "the .rpm holds exactly the expected files" "$tmp/want-rpm" "$tmp/got-rpm"
    check "the .rpm provides murano-agent" sh -c "rpm -qp --provides '$rpmfile' | grep -qx 'murano-agent = $version-1'"
    check "the .rpm requires gmp" sh -c "rpm -qp --requires '$rpmfile' | grep -q '^gmp'"
    mkdir "$tmp/rpmroot"
    rpm2archive - <"$rpmfile" | tar -xzf - -C "$tmp/rpmroot"
    same_file "the .rpm's unit is the .deb's" "$root/lib/systemd/system/muranoagent.service" \
        "$tmp/rpmroot/usr/lib/systemd/system/muranoagent.service"
    same_file "the .rpm's drop-in is the .deb's" \
        "$root/lib/systemd/system/murano-agent.service.d/muranoagent.conf" \
        "$tmp/rpmroot/usr/lib/systemd/system/murano-agent.service.d/muranoagent.conf"
else
    not_ok "the .rpm holds exactly the expected files (no .rpm)"
fi

tap_done
