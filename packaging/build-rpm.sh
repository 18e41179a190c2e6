#!/bin/sh
# Build the RPM package from the source tree as it is now, and put the .rpm
# files in OUTDIR. Extra arguments go to rpmbuild ("--without tests").
#   packaging/build-rpm.sh OUTDIR [RPMBUILD-ARGS...]
# On a system that is not RPM-based (Debian, in the test suite) the build
# dependencies cannot be checked (--nodeps) and there is no debuginfo
# tooling to rely on, so no debuginfo package is made.
set -eu
out=${1:?usage: build-rpm.sh OUTDIR [RPMBUILD-ARGS...]}
shift
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)

spec=$here/rpm/muranoagent.spec
version=$(sed -n 's/^Version: *//p' "$spec")
project=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$here/../meson.build" | head -n1)
if [ "$version" != "$project" ]; then
    echo "build-rpm: the spec is at $version, meson.build at $project" >&2
    exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/SOURCES"
"$here/export-source.sh" "$work/muranoagent-$version"
tar -C "$work" -czf "$work/SOURCES/muranoagent-$version.tar.gz" "muranoagent-$version"

set -- --define "_topdir $work" "$@"
if [ ! -f /etc/redhat-release ] && [ ! -f /etc/SuSE-release ]; then
    set -- --nodeps --define "debug_package %{nil}" "$@"
fi
rpmbuild -bb "$@" "$spec"
find "$work/RPMS" -name '*.rpm' -exec mv {} "$out"/ \;
