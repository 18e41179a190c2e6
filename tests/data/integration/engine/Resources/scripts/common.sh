greeting() {
    echo "hello, $1, from the engine-built plan"
}
