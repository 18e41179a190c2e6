#!/bin/sh
# Count the start, print this boot's ID, and ask the agent for a reboot.
echo started >>/var/lib/muranoagent-vm-reboot-first
cat /proc/sys/kernel/random/boot_id
exit 194
