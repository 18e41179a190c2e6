#!/bin/sh
# Count the start, and print this boot's ID: the one after the reboot.
echo started >>/var/lib/muranoagent-vm-reboot-second
cat /proc/sys/kernel/random/boot_id
