#!/bin/sh
# Copy the source tree, as it is now, into DIR (which must not exist yet):
# the files git tracks plus new files it does not ignore, so that uncommitted
# work is packaged too, and never build directories or .git. Outside a git
# checkout (an unpacked release tarball), everything but build*/ is copied.
#   packaging/export-source.sh DIR
set -eu
dest=${1:?usage: export-source.sh DIR}
src=$(cd "$(dirname "$0")/.." && pwd)

mkdir "$dest"
cd "$src"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    # Files deleted from the work tree but still tracked are skipped.
    # shellcheck disable=SC2016 # the inner sh expands $f
    git ls-files -z --cached --others --exclude-standard |
        xargs -0 sh -c 'for f; do [ -e "$f" ] || [ -L "$f" ] && printf "%s\0" "$f"; done; :' sh |
        tar --null --files-from=- -cf - | tar -xf - -C "$dest"
else
    tar --exclude='./build*' --exclude=./.git -cf - . | tar -xf - -C "$dest"
fi
