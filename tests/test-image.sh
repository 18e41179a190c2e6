#!/bin/bash
# Image test, in TAP: installs the built .deb into a minimal Debian 12 root
# made with debootstrap, as an image builder would, and checks that the
# files, the unit and the default configuration are in place, that the agent
# in that root answers --version and check, that Murano's first-boot flow
# finds it, and that purging removes it.
#   tests/test-image.sh [BUILD_DIR]             default BUILD_DIR: build
# Runs as root. The package is BUILD_DIR/packages/muranoagent_VERSION_amd64.deb
# (tests/test-packaging.sh leaves it there; built here when missing) or
# $MURANOAGENT_DEB. The root is cached in BUILD_DIR/image-cache/ (or
# $IMAGE_CACHE): the first run downloads about 55 MB from $DEBIAN_MIRROR
# (default http://deb.debian.org/debian) and takes about 3 minutes; later
# runs unpack the cache and take about half a minute.
set -u
cd "$(dirname "$0")/.." || exit 1
build=$(cd "${1:-build}" && pwd)
version=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" meson.build | head -n1)
deb=${MURANOAGENT_DEB:-$build/packages/muranoagent_${version}_amd64.deb}
cache=${IMAGE_CACHE:-$build/image-cache}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=bookworm
start=$(date +%s)

tmp=$(mktemp -d)
chmod 755 "$tmp" # systemd's test mode runs as nobody and reads under it
trap 'rm -rf "$tmp"' EXIT

. tests/tap.sh

if [ "$(id -u)" -ne 0 ]; then
    echo "1..0 # SKIP needs root (debootstrap, chroot)"
    exit 0
fi
command -v debootstrap >/dev/null || { echo "Bail out! debootstrap is missing: run packaging/test-deps.sh"; exit 1; }
if [ ! -f "$deb" ]; then
    t0=$(date +%s)
    DEB_BUILD_OPTIONS=nocheck packaging/build-deb.sh "$build/packages" >"$tmp/deb.log" 2>&1 ||
        { tail -n 40 "$tmp/deb.log" | note; echo "Bail out! cannot build the package"; exit 1; }
    elapsed "building the package" "$t0"
fi
echo "# package: $deb"

# ---- the root ---------------------------------------------------------------
# minbase plus systemd (a VM image has it; its systemd-analyze checks our
# unit inside the root) plus the package's dependencies, so that dpkg -i
# needs no network. The cache names carry that list: a new dependency makes
# a new cache. debootstrap's own tarball (--make-tarball) keeps the download,
# the root's tarball saves the slow second stage.
deps=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed -E 's/^ *//; s/[ |(].*//' | grep . | sort -u)
include=$(printf '%s\n' systemd "$deps" | sort -u | paste -sd, -)
key=$(printf '%s %s' "$suite" "$include" | sha256sum | cut -c1-12)
debs=$cache/$suite-debs-$key.tgz
rootfs=$cache/$suite-root-$key.tar.gz
root=$tmp/root
mkdir -p "$cache" "$root"

t0=$(date +%s)
if [ ! -f "$rootfs" ]; then
    echo "# no cached root: debootstrap --variant=minbase --include=$include $suite"
    if [ ! -f "$debs" ]; then
        debootstrap --variant=minbase --include="$include" --make-tarball="$debs.part" \
            "$suite" "$tmp/download" "$mirror" >"$tmp/debootstrap.log" 2>&1 ||
            { tail -n 20 "$tmp/debootstrap.log" | note; echo "Bail out! debootstrap --make-tarball failed"; exit 1; }
        mv "$debs.part" "$debs"
        rm -rf "$tmp/download"
    fi
    debootstrap --variant=minbase --include="$include" --unpack-tarball="$debs" \
        "$suite" "$root" "$mirror" >"$tmp/debootstrap.log" 2>&1 ||
        { tail -n 20 "$tmp/debootstrap.log" | note; echo "Bail out! debootstrap failed"; exit 1; }
    tar -C "$root" --numeric-owner -czf "$rootfs.part" . && mv "$rootfs.part" "$rootfs"
else
    tar -C "$root" --numeric-owner -xzf "$rootfs"
fi
elapsed "the Debian $suite root" "$t0"
check "the root is Debian 12" grep -q '^VERSION_ID="12"$' "$root/etc/os-release"

in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"; }

# ---- install ----------------------------------------------------------------
cp "$deb" "$root/tmp/muranoagent.deb"
t0=$(date +%s)
in_root dpkg -i /tmp/muranoagent.deb >"$tmp/dpkg.log" 2>&1
st=$?
note <"$tmp/dpkg.log"
elapsed "dpkg -i" "$t0"
check "dpkg -i installs the package" test $st -eq 0
# shellcheck disable=SC2016 # dpkg-query's own ${Status}
check "dpkg says it is installed" \
    test "$(in_root dpkg-query -W -f '${Status}' muranoagent)" = "install ok installed"

for f in /usr/bin/muranoagent /usr/bin/muranoagent-send /usr/libexec/muranoagent/muranoagent-sandbox; do
    check "$f is an executable" test -x "$root$f"
done
for f in /lib/systemd/system/muranoagent.service \
    /lib/systemd/system/murano-agent.service.d/muranoagent.conf /etc/murano/agent.conf.sample \
    /usr/share/man/man8/muranoagent.8.gz /usr/share/man/man5/muranoagent.conf.5.gz \
    /usr/share/man/man1/muranoagent-send.1.gz \
    /usr/share/doc/muranoagent/examples/cloud-init/user-data.yaml.in; do
    check "$f is in place" test -f "$root$f"
done
check "no configuration is installed, only the sample" test ! -e "$root/etc/murano/agent.conf"

# ---- the unit ---------------------------------------------------------------
check "the unit is enabled (linked into multi-user.target)" \
    test "$(readlink "$root/etc/systemd/system/multi-user.target.wants/muranoagent.service")" = \
    /lib/systemd/system/muranoagent.service
check "systemctl is-enabled says enabled" test "$(in_root systemctl is-enabled muranoagent.service)" = enabled
# The root's own systemd (252, Debian 12's) checks the unit. Man pages are
# not looked up: minbase has no man-db.
in_root systemd-analyze verify --man=no muranoagent.service >"$tmp/verify" 2>&1
st=$?
note <"$tmp/verify"
check "systemd-analyze verify in the root is clean" sh -c "[ $st -eq 0 ] && [ ! -s '$tmp/verify' ]"
chmod -R a+rX "$root/etc/systemd" "$root/usr/lib/systemd"
packaging/systemd-dump.sh "$root" muranoagent.service >"$tmp/unit"
check "systemd loads the unit: Type=notify, our binary" sh -c "
    grep -qxF '		Type: notify' '$tmp/unit' &&
    grep -qxF '			Command Line: /usr/bin/muranoagent --config-dir /etc/murano' '$tmp/unit'"
# What cloud-init's runcmd does, offline (the start itself needs a booted system).
in_root systemctl enable --no-block muranoagent.service >"$tmp/enable" 2>&1
st=$?
note <"$tmp/enable"
check "systemctl enable --no-block muranoagent.service succeeds in the image" test $st -eq 0

# ---- the programs -------------------------------------------------------------
check "muranoagent --version" test "$(in_root muranoagent --version)" = "muranoagent $version"
check "muranoagent-send --version" test "$(in_root muranoagent-send --version)" = "muranoagent-send $version"

mkdir "$root/tmp/plans"
cp plans/examples/*.yaml plans/examples/*.json "$root/tmp/plans/"
nplans=$(find "$root/tmp/plans" -mindepth 1 -maxdepth 1 | wc -l)
in_root sh -c 'muranoagent check /tmp/plans/*' >"$tmp/check" 2>"$tmp/check.err"
st=$?
note <"$tmp/check.err"
check "muranoagent check accepts the $nplans example plans" \
    sh -c "[ $st -eq 0 ] && [ \$(grep -cx ok '$tmp/check') -eq $nplans ]"
printf '{"FormatVersion": "2.0.0", "ID": "p1", "Body": "return", "Scripts": {"s": {"Type": "Chef", "EntryPoint": "a::b"}}, "Files": {}}\n' \
    >"$root/tmp/bad.json"
in_root muranoagent check /tmp/bad.json >"$tmp/check" 2>/dev/null
st=$?
check "muranoagent check refuses an invalid plan with an error result" \
    sh -c "[ $st -eq 1 ] && grep -q '\"ErrorCode\": 2' '$tmp/check'"

# The default configuration: Murano's --config-dir /etc/murano reads no
# file yet (the sample is not *.conf), and the sample, read on purpose,
# sets nothing: both give the built-in defaults.
in_root muranoagent --config-file /dev/null --print-config >"$tmp/defaults" 2>&1
in_root muranoagent --config-dir /etc/murano --print-config >"$tmp/confdir" 2>&1
check "muranoagent --config-dir /etc/murano --print-config works" test -s "$tmp/confdir"
same_file "--config-dir /etc/murano gives the defaults (the sample is not read)" "$tmp/defaults" "$tmp/confdir"
in_root muranoagent --config-file /etc/murano/agent.conf.sample --print-config >"$tmp/sample" 2>&1
same_file "the sample configuration parses, without a warning, to the defaults" "$tmp/defaults" "$tmp/sample"

# ---- Murano's first-boot flow (spec section 1.4) ------------------------------
# murano-init.sh installs the Python agent with pip unless "which muranoagent"
# succeeds with its PATH, then writes its own unit.
check "which muranoagent finds /usr/bin/muranoagent with murano-init.sh's PATH" test \
    "$(in_root sh -c 'PATH=/usr/local/bin:/usr/local/sbin:/usr/bin:/usr/sbin:/bin:/sbin; which muranoagent')" = \
    /usr/bin/muranoagent
install -m 0644 tests/data/packaging/murano-agent.service "$root/etc/systemd/system/murano-agent.service"
in_root systemd-analyze verify --man=no murano-agent.service >"$tmp/verify" 2>&1
st=$?
note <"$tmp/verify"
check "Murano's murano-agent.service verifies clean in the image (the drop-in applies)" \
    sh -c "[ $st -eq 0 ] && [ ! -s '$tmp/verify' ]"
packaging/systemd-dump.sh "$root" murano-agent.service >"$tmp/murano"
check "and runs /usr/bin/muranoagent, with Delegate=yes" sh -c "
    grep -qxF '			Command Line: /usr/bin/muranoagent --config-dir /etc/murano' '$tmp/murano' &&
    grep -qxF '		Delegate: yes' '$tmp/murano'"
rm "$root/etc/systemd/system/murano-agent.service"

# ---- purge --------------------------------------------------------------------
in_root dpkg-query -L muranoagent | grep -v -e '^/\.$' -e '^/usr/share/doc/muranoagent$' >"$tmp/owned"
in_root dpkg --purge muranoagent >"$tmp/purge" 2>&1
st=$?
note <"$tmp/purge"
check "dpkg --purge succeeds" test $st -eq 0
# Only files: the package's directories (/lib, /usr/bin) are shared.
left=$(while read -r f; do
    [ -f "$root$f" ] && echo "$f"
done <"$tmp/owned")
check "purge leaves none of the package's files${left:+ (left: ${left//$'\n'/ })}" test -z "$left"
check "purge removes the multi-user.target link" \
    test ! -e "$root/etc/systemd/system/multi-user.target.wants/muranoagent.service"

elapsed "the image test" "$start"
tap_done
