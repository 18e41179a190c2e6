#!/usr/bin/env python3
"""Ask the agent's control socket for its status N times, as `muranoagent
status --json` does (docs/operations.md), and print the slowest answer in
milliseconds, then the last status document (one JSON line).

    status-query.py STORAGE [N]
"""
import json
import socket
import sys
import time

storage = sys.argv[1]
count = int(sys.argv[2]) if len(sys.argv) > 2 else 1
path = storage + "/control/muranoagent.sock"
worst = 0.0
status = None
for _ in range(count):
    t0 = time.monotonic()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(path)
    s.sendall(b'{"command": "status"}\n')
    data = b""
    while not data.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    worst = max(worst, (time.monotonic() - t0) * 1000)
    reply = json.loads(data)
    if not reply.get("ok"):
        sys.exit("refused: %s" % reply.get("error"))
    status = reply["status"]
    time.sleep(0.01)
print("%.1f" % worst)
print(json.dumps(status))
