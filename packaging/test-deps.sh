#!/bin/sh
# Install the tools that only the packaging tests need (tests/test-packaging.sh,
# tests/test-cloud-init.sh, tests/test-image.sh, tests/test-vm.sh) on Debian
# 12, and nothing when they are all there already. Quiet unless it installs
# something. Run as root.
#   packaging/test-deps.sh
# The build itself needs none of these; packaging/build-deps.sh covers it.
set -eu

# dpkg-dev, debhelper, fakeroot: dpkg-buildpackage, which also insists on
# build-essential (an implicit build dependency); lintian: the package check;
# rpm: rpmbuild; debootstrap: the image test; cloud-init: "cloud-init schema";
# systemd: "systemd-analyze verify"; groff-base and man-db: rendering the man
# pages with warnings on; qemu-system-x86, qemu-utils, genisoimage (the
# NoCloud seed) and socat (the guest's way to the broker): the VM test.
# cloud-init's maintainer scripts try to enable its units; on a machine
# without systemd as PID 1 that is harmless and changes nothing running.
exec "$(dirname "$0")/build-deps.sh" build-essential dpkg-dev debhelper fakeroot lintian rpm \
    debootstrap cloud-init systemd groff-base man-db \
    qemu-system-x86 qemu-utils genisoimage socat
