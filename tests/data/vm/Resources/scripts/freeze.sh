#!/bin/sh
# Stop the agent that runs this script with SIGSTOP, as a careless or
# hostile root script can under the default profile. systemd's watchdog
# must notice, the agent must come back, and the plan get one answer.
echo started >>/var/lib/muranoagent-vm-freeze
sync
pid=$$
while [ "$pid" -gt 1 ] && [ "$(cat "/proc/$pid/comm")" != muranoagent ]; do
    pid=$(sed -n 's/^PPid:[[:space:]]*//p' "/proc/$pid/status")
done
if [ "$pid" -le 1 ]; then
    echo "no muranoagent above this script" >&2
    exit 1
fi
echo "muranoagent-vm: the freeze plan stops the agent ($pid)" >/dev/ttyS0
kill -STOP "$pid"
sleep 600
