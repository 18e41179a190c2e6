#!/bin/sh
# $1: the systemd unit that runs the agent. One "name=value" line each.
unit=$1
echo "unit=$unit"
systemctl show -p ActiveState -p SubState -p StatusText -p MainPID "$unit"
pid=$(systemctl show -p MainPID --value "$unit")
echo "VmRSS=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$pid/status")"
# Murano's Agent-v2.template sends the log to a file; our template leaves it
# in the journal.
echo "rejected=$({ cat /var/log/murano-agent.log; journalctl -b -o cat -u "$unit"; } 2>/dev/null |
    grep -c 'rejecting a message: required signature was not found')"
echo "sleep_runs=$(cat /var/lib/muranoagent-vm-sleep 2>/dev/null | wc -l)"
