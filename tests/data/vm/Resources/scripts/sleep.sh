#!/bin/sh
# Record the start on the disk and, once it is there, on the serial console,
# where the test waits for it before it cuts the power.
echo started >>/var/lib/muranoagent-vm-sleep
sync
echo "muranoagent-vm: the sleep plan is running" >/dev/ttyS0
sleep 600
echo "slept"
