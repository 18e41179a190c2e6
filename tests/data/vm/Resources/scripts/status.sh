#!/bin/sh
# One "name=value" line each. The agent runs in muranoagent.service, or in
# Murano's murano-agent.service (with the package's drop-in): whichever has
# a main process.
unit=none
for u in muranoagent.service murano-agent.service; do
    [ "$(systemctl show -p MainPID --value "$u")" = 0 ] || unit=$u
done
echo "unit=$unit"
systemctl show -p ActiveState -p SubState -p StatusText -p MainPID -p NRestarts "$unit"
pid=$(systemctl show -p MainPID --value "$unit")
echo "VmRSS=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$pid/status")"
# Murano's Agent-v2.template sends the log to a file; our template leaves it
# in the journal.
echo "rejected=$({ cat /var/log/murano-agent.log; journalctl -b -o cat -u "$unit"; } 2>/dev/null |
    grep -c 'rejecting a message: required signature was not found')"
echo "sleep_runs=$(wc -l 2>/dev/null </var/lib/muranoagent-vm-sleep || echo 0)"
echo "freeze_runs=$(wc -l 2>/dev/null </var/lib/muranoagent-vm-freeze || echo 0)"
echo "reboot_first_runs=$(wc -l 2>/dev/null </var/lib/muranoagent-vm-reboot-first || echo 0)"
echo "reboot_second_runs=$(wc -l 2>/dev/null </var/lib/muranoagent-vm-reboot-second || echo 0)"
