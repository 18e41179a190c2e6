#!/bin/bash
# A throwaway RabbitMQ broker for the integration tests and the demo.
#
#   tests/broker.sh start DIR        start a private broker; writes DIR/env
#   tests/broker.sh stop DIR         stop exactly that broker and remove DIR
#   tests/broker.sh restart DIR [S]  stop the rabbit application, keep it down
#                                    S seconds (default 0), start it again on
#                                    the same port and data
#   tests/broker.sh down DIR         stop the rabbit application only
#   tests/broker.sh up DIR           start it again and wait until it serves
#   tests/broker.sh ctl DIR ARGS...  run rabbitmqctl against that broker
#
# The broker is the Debian rabbitmq-server package run directly (not through
# its service or its root wrapper, which would switch to the rabbitmq user and
# its cookie), as the calling user, with everything private to DIR: data, logs,
# Erlang cookie (HOME=DIR), node name, an empty plugin list (so no management
# listener), and its own epmd on a free port. It listens on 127.0.0.1 only, on
# a port chosen at run time. A system broker on 5672, if the package started
# one, is neither used nor disturbed.
#
# DIR/env holds shell assignments for the callers:
#   BROKER_PORT BROKER_NODE BROKER_PID BROKER_WRAPPER_PID BROKER_EPMD_PID
#   BROKER_EPMD_PORT BROKER_DIST_PORT BROKER_DIR
set -euo pipefail

RABBIT_SBIN=${RABBIT_SBIN:-/usr/lib/rabbitmq/bin}
START_TIMEOUT=${BROKER_START_TIMEOUT:-60}

die() {
    echo "broker: $*" >&2
    exit 1
}

usage() {
    sed -n '2,11s/^# \{0,1\}//p' "$0" >&2
    exit 2
}

now_ms() { date +%s%3N; }

# Three free TCP ports on 127.0.0.1 (AMQP, Erlang distribution, epmd), from
# the kernel. Erlang is there whenever rabbitmq-server is, so nothing else is
# needed. The ports are released before use; a lost race shows up as a failed
# start, which start_once's caller retries.
free_ports() {
    erl -noshell -eval '
        L = [begin {ok, S} = gen_tcp:listen(0, [{ip, {127,0,0,1}}]),
                   {ok, P} = inet:port(S), {S, P} end || _ <- [1, 2, 3]],
        io:format("~w ~w ~w~n", [P || {_, P} <- L]),
        halt().'
}

# The environment every rabbitmq program run for this broker needs.
broker_env() {
    local dir=$1
    export HOME=$dir
    export RABBITMQ_NODENAME=$BROKER_NODE
    export RABBITMQ_NODE_IP_ADDRESS=127.0.0.1
    export RABBITMQ_NODE_PORT=$BROKER_PORT
    export RABBITMQ_DIST_PORT=$BROKER_DIST_PORT
    export ERL_EPMD_PORT=$BROKER_EPMD_PORT
    export ERL_EPMD_ADDRESS=127.0.0.1
    export RABBITMQ_CONF_ENV_FILE=$dir/rabbitmq-env.conf
    export RABBITMQ_CONFIG_FILE=$dir/rabbitmq
    export RABBITMQ_ADVANCED_CONFIG_FILE=$dir/advanced.config
    export RABBITMQ_ENABLED_PLUGINS_FILE=$dir/enabled_plugins
    export RABBITMQ_PLUGINS_EXPAND_DIR=$dir/plugins-expand
    export RABBITMQ_MNESIA_BASE=$dir/mnesia
    export RABBITMQ_LOG_BASE=$dir/log
    export RABBITMQ_LOGS=$dir/log/rabbit.log
    export RABBITMQ_PID_FILE=$dir/rabbit.pid
    # Erlang distribution on loopback only.
    export RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
    unset RABBITMQ_ENABLED_PLUGINS NOTIFY_SOCKET
}

load_env() {
    local dir=$1
    [ -f "$dir/env" ] || die "no broker in $dir (missing $dir/env)"
    # shellcheck disable=SC1091
    . "$dir/env"
    broker_env "$dir"
}

ctl() {
    timeout "${CTL_TIMEOUT:-60}" "$RABBIT_SBIN/rabbitmqctl" -q -n "$BROKER_NODE" "$@"
}

# True once the broker answers an AMQP 0-9-1 protocol header with a frame
# (connection.start): the listener is up and the broker is serving.
amqp_ready() {
    local port=$1 byte
    (
        exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 1
        printf 'AMQP\0\0\011\001' >&3
        IFS= read -r -t 2 -N 1 byte <&3 || exit 1
        [ "$byte" = $'\001' ]
    ) 2>/dev/null
}

wait_ready() {
    local dir=$1 deadline
    deadline=$(($(date +%s) + START_TIMEOUT))
    while ! amqp_ready "$BROKER_PORT"; do
        if [ -n "${BROKER_WRAPPER_PID:-}" ] && ! kill -0 "$BROKER_WRAPPER_PID" 2>/dev/null; then
            return 1
        fi
        [ "$(date +%s)" -lt "$deadline" ] || return 1
        sleep 0.1
    done
}

show_logs() {
    local dir=$1 f
    for f in "$dir"/log/*; do
        [ -f "$f" ] || continue
        echo "--- $f (last 40 lines)" >&2
        tail -n 40 "$f" >&2
    done
}

# Is pid still a process we started? Pids are recycled, so never signal a
# recorded pid without checking that it still carries our broker's unique
# node name in its environment (the wrapper, the VM and epmd all do).
ours() {
    local pid=$1 environ
    [ -n "$pid" ] && [ -r "/proc/$pid/environ" ] || return 1
    environ=$({ tr '\0' '\n' <"/proc/$pid/environ"; } 2>/dev/null) || return 1
    grep -qxF "RABBITMQ_NODENAME=$BROKER_NODE" <<<"$environ"
}

kill_ours() { # kill_ours PID: TERM, then KILL after 10 s
    local pid=$1 _
    ours "$pid" || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    for _ in $(seq 100); do
        ours "$pid" || return 0
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
}

start_once() {
    local dir=$1 ports
    ports=$(free_ports) || die "cannot find free ports"
    read -r BROKER_PORT BROKER_DIST_PORT BROKER_EPMD_PORT <<<"$ports"
    BROKER_NODE="muranotest-$$-$BROKER_PORT@localhost"
    broker_env "$dir"

    # epmd in the foreground of its own session, so that its pid is ours.
    setsid epmd -port "$BROKER_EPMD_PORT" -address 127.0.0.1 </dev/null \
        >>"$dir/log/epmd.log" 2>&1 &
    BROKER_EPMD_PID=$!

    setsid "$RABBIT_SBIN/rabbitmq-server" </dev/null >>"$dir/log/console.log" 2>&1 &
    BROKER_WRAPPER_PID=$!

    if ! wait_ready "$dir"; then
        return 1
    fi
    BROKER_PID=$(cat "$dir/rabbit.pid" 2>/dev/null || true)
    cat >"$dir/env" <<EOF
BROKER_DIR=$dir
BROKER_PORT=$BROKER_PORT
BROKER_NODE=$BROKER_NODE
BROKER_PID=$BROKER_PID
BROKER_WRAPPER_PID=$BROKER_WRAPPER_PID
BROKER_EPMD_PID=$BROKER_EPMD_PID
BROKER_EPMD_PORT=$BROKER_EPMD_PORT
BROKER_DIST_PORT=$BROKER_DIST_PORT
EOF
}

# Stop whatever start_once left running, by the pids it recorded (the VM's
# from its pid file when start_once gave up before recording it).
stop_pids() {
    BROKER_PID=${BROKER_PID:-$(cat "${BROKER_DIR:-/nonexistent}/rabbit.pid" 2>/dev/null || true)}
    kill_ours "${BROKER_WRAPPER_PID:-}"
    kill_ours "${BROKER_PID:-}"
    kill_ours "${BROKER_EPMD_PID:-}"
}

cmd_start() {
    local dir=$1 t0 _
    if ! command -v erl >/dev/null || [ ! -x "$RABBIT_SBIN/rabbitmq-server" ]; then
        die "rabbitmq-server is not installed (packaging/build-deps.sh installs it)"
    fi
    if [ -e "$dir" ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then
        die "$dir exists and is not empty"
    fi
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    t0=$(now_ms)
    BROKER_DIR=$dir
    for _ in 1 2 3; do
        BROKER_PID=
        rm -rf "${dir:?}"/* "$dir"/.erlang.cookie
        mkdir -p "$dir/log" "$dir/mnesia"
        (umask 077 && head -c 15 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$dir/.erlang.cookie")
        echo '[].' >"$dir/enabled_plugins"
        : >"$dir/rabbitmq-env.conf"
        # Keep publishers from being blocked on a nearly full test disk.
        echo 'disk_free_limit.absolute = 8MB' >"$dir/rabbitmq.conf"
        if start_once "$dir"; then
            echo "broker: $BROKER_NODE listening on 127.0.0.1:$BROKER_PORT" \
                "(started in $(($(now_ms) - t0)) ms)" >&2
            return 0
        fi
        # A port taken between choosing and binding it is worth another try;
        # anything else is reported.
        if ! grep -qs eaddrinuse "$dir"/log/*; then
            break
        fi
        stop_pids
    done
    echo "broker: $BROKER_NODE did not start within $START_TIMEOUT s" >&2
    show_logs "$dir"
    stop_pids
    exit 1
}

cmd_stop() {
    local dir=$1 t0 _
    [ -d "$dir" ] || return 0
    if [ ! -f "$dir/env" ]; then
        # A start that failed leaves its logs and no broker. Remove only a
        # directory that start made (or an empty one), never anything else.
        [ -f "$dir/enabled_plugins" ] || [ -z "$(ls -A "$dir")" ] ||
            die "$dir is not a broker directory"
        rm -rf "$dir"
        return 0
    fi
    t0=$(now_ms)
    load_env "$dir"
    if ours "$BROKER_PID"; then
        CTL_TIMEOUT=20 ctl stop >/dev/null 2>&1 || true
        for _ in $(seq 150); do
            ours "$BROKER_PID" || break
            sleep 0.1
        done
    fi
    stop_pids
    rm -rf "$dir"
    echo "broker: $BROKER_NODE stopped in $(($(now_ms) - t0)) ms" >&2
}

cmd_down() {
    load_env "$1"
    ctl stop_app >/dev/null
}

cmd_up() {
    local t0
    load_env "$1"
    t0=$(now_ms)
    ctl start_app >/dev/null
    wait_ready "$1" || {
        show_logs "$1"
        die "$BROKER_NODE did not come back within $START_TIMEOUT s"
    }
    echo "broker: $BROKER_NODE serving again ($(($(now_ms) - t0)) ms)" >&2
}

[ $# -ge 2 ] || usage
cmd=$1
dir=$2
shift 2
case $cmd in
start) cmd_start "$dir" ;;
stop) cmd_stop "$dir" ;;
down) cmd_down "$dir" ;;
up) cmd_up "$dir" ;;
restart)
    cmd_down "$dir"
    sleep "${1:-0}"
    cmd_up "$dir"
    ;;
ctl)
    load_env "$dir"
    ctl "$@"
    ;;
*) usage ;;
esac
