# shellcheck shell=sh
greeting() {
    echo "hello, $1, from the engine-built plan"
}
