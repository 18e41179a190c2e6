#!/bin/sh
# Install what building and testing muranoagent needs on Debian 12, and
# nothing when it is all there already. Run as root (or with sudo).
#   packaging/build-deps.sh          build + test dependencies (rabbitmq-server,
#                                    openssl, python3, clang-format and
#                                    ShellCheck are for the tests only: a
#                                    throwaway broker, test keys, JSON checks,
#                                    the formatting and script checks)
#   packaging/build-deps.sh PKG...   those packages instead (packaging/test-deps.sh)
set -eu

pkgs="${*:-gcc meson ninja-build pkg-config
      librabbitmq-dev libyaml-dev libjansson-dev libuv1-dev libgmp-dev check
      libssl-dev libcurl4-openssl-dev
      clang libclang-rt-14-dev valgrind time
      rabbitmq-server openssl python3 clang-format shellcheck}"

missing=""
for p in $pkgs; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done

if [ -n "$missing" ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "$(basename "$0" .sh): missing packages:$missing (run as root to install them)" >&2
        exit 1
    fi
    echo "$(basename "$0" .sh): installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
