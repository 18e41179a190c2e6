#!/bin/sh
# Build the Debian package from the source tree as it is now, in a scratch
# copy whose debian/ is packaging/debian/, and put the .deb files in OUTDIR.
#   packaging/build-deb.sh OUTDIR
#   DEB_BUILD_OPTIONS=nocheck packaging/build-deb.sh OUTDIR   (skip the unit tests)
# Needs dpkg-dev, debhelper and the Build-Depends of packaging/debian/control
# (packaging/build-deps.sh and packaging/test-deps.sh install them).
set -eu
out=${1:?usage: build-deb.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$here/export-source.sh" "$work/muranoagent"
cp -r "$here/debian" "$work/muranoagent/debian"

# The package version must be the project's: debian/changelog names it.
project=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$here/../meson.build" | head -n1)
changelog=$(cd "$work/muranoagent" && dpkg-parsechangelog -S Version)
if [ "${changelog%%-*}" != "$project" ]; then
    echo "build-deb: debian/changelog is at $changelog, meson.build at $project" >&2
    exit 1
fi

# -b: binary packages only, so no orig tarball is needed; -us -uc: unsigned.
(cd "$work/muranoagent" && dpkg-buildpackage -b -us -uc --no-pre-clean)
mv "$work"/*.deb "$work"/*.buildinfo "$work"/*.changes "$out"/
