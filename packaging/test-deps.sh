#!/bin/sh
# Install the tools that only the packaging tests need (tests/test-packaging.sh,
# tests/test-cloud-init.sh, tests/test-image.sh) on Debian 12, and nothing when
# they are all there already. Quiet unless it installs something. Run as root.
#   packaging/test-deps.sh
# The build itself needs none of these; packaging/build-deps.sh covers it.
set -eu

# dpkg-dev, debhelper, fakeroot: dpkg-buildpackage; lintian: the package check;
# rpm: rpmbuild; debootstrap: the image test; cloud-init: "cloud-init schema";
# systemd: "systemd-analyze verify"; groff-base and man-db: rendering the man
# pages with warnings on.
pkgs="dpkg-dev debhelper fakeroot lintian rpm debootstrap cloud-init systemd
      groff-base man-db"

missing=""
for p in $pkgs; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done

if [ -n "$missing" ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "test-deps: missing packages:$missing (run as root to install them)" >&2
        exit 1
    fi
    echo "test-deps: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # cloud-init's maintainer scripts try to enable its units; on a machine
    # without systemd as PID 1 that is harmless and changes nothing running.
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
