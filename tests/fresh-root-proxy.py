#!/usr/bin/python3
"""The way out of tests/fresh-root.sh's network namespace: an HTTP proxy that
forwards only to the hosts it is given, in two halves joined by a Unix socket.

  fresh-root-proxy.py serve SOCKET HOST...   outside: accept proxy requests on
                                             the Unix socket SOCKET and forward
                                             those for http://HOST:80/ only
  fresh-root-proxy.py bridge PORT SOCKET     inside the namespace: listen on
                                             127.0.0.1:PORT and join each
                                             connection to SOCKET

Only plain HTTP in absolute form ("GET http://deb.debian.org/... HTTP/1.1")
is forwarded, rewritten to origin form; CONNECT, other hosts and ports, and
request bodies in chunks get "403" and the connection is closed. Requests
that follow on a kept-alive connection are checked one by one. Each refusal
is logged on stderr; so is the number of requests forwarded, at the end.
"""
import os
import signal
import socket
import sys
import threading
from urllib.parse import urlsplit

MAX_LINE = 65536
forwarded = 0
count_lock = threading.Lock()


def pipe(src, dst):
    """Copy src to dst until end of file, then pass the end of file on."""
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def refuse(client, why):
    sys.stderr.write("fresh-root proxy: refused %s\n" % why)
    body = ("fresh-root proxy: refused %s\n" % why).encode("latin-1", "replace")
    try:
        client.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n"
                       b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    except OSError:
        pass


def serve_one(client, allowed):
    global forwarded
    rfile = client.makefile("rb")
    up = None
    up_host = None
    reader = None
    try:
        while True:
            line = rfile.readline(MAX_LINE)
            if not line:
                break
            if line in (b"\r\n", b"\n"):
                continue
            parts = line.decode("latin-1").split()
            headers = []
            while True:
                h = rfile.readline(MAX_LINE)
                if h in (b"\r\n", b"\n", b""):
                    break
                headers.append(h)
            if len(parts) != 3:
                refuse(client, "a malformed request line")
                break
            method, target, version = parts
            url = urlsplit(target)
            if url.scheme != "http" or url.hostname not in allowed or (url.port or 80) != 80:
                if up is None:
                    refuse(client, "%s %s" % (method, target))
                else:
                    sys.stderr.write("fresh-root proxy: refused %s %s\n" % (method, target))
                break
            length = 0
            chunked = False
            kept = []
            for h in headers:
                name, _, value = h.decode("latin-1").partition(":")
                name = name.strip().lower()
                if name in ("proxy-connection", "proxy-authorization"):
                    continue
                if name == "content-length":
                    length = int(value.strip())
                if name == "transfer-encoding" and "chunked" in value.lower():
                    chunked = True
                kept.append(h)
            if chunked:
                refuse(client, "a chunked request body")
                break
            if up is None:
                up_host = url.hostname
                up = socket.create_connection((up_host, 80), timeout=120)
                up.settimeout(None)
                reader = threading.Thread(target=pipe, args=(up, client), daemon=True)
                reader.start()
            elif url.hostname != up_host:
                break
            path = url.path or "/"
            if url.query:
                path += "?" + url.query
            head = ("%s %s %s\r\n" % (method, path, version)).encode("latin-1")
            up.sendall(head + b"".join(kept) + b"\r\n")
            while length > 0:
                data = rfile.read(min(length, 65536))
                if not data:
                    break
                up.sendall(data)
                length -= len(data)
            with count_lock:
                forwarded += 1
    except (OSError, ValueError) as e:
        sys.stderr.write("fresh-root proxy: %s\n" % e)
    finally:
        if up is not None:
            try:
                up.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            reader.join()
            up.close()
        rfile.close()
        client.close()


def serve(path, allowed):
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    os.chmod(path, 0o600)
    srv.listen(64)

    def stop(signum, frame):
        sys.stderr.write("fresh-root proxy: %d requests forwarded\n" % forwarded)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while True:
        client, _ = srv.accept()
        threading.Thread(target=serve_one, args=(client, set(allowed)), daemon=True).start()


def join(a, b):
    """Copy both ways between a and b until both ends are done, then close them."""
    back = threading.Thread(target=pipe, args=(b, a), daemon=True)
    back.start()
    pipe(a, b)
    back.join()
    a.close()
    b.close()


def bridge(port, path):
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", port))
    srv.listen(64)
    signal.signal(signal.SIGTERM, lambda s, f: os._exit(0))
    while True:
        client, _ = srv.accept()
        out = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            out.connect(path)
        except OSError as e:
            sys.stderr.write("fresh-root bridge: %s: %s\n" % (path, e))
            client.close()
            out.close()
            continue
        threading.Thread(target=join, args=(client, out), daemon=True).start()


def main(argv):
    if len(argv) >= 3 and argv[1] == "serve":
        serve(argv[2], argv[3:])
    elif len(argv) == 4 and argv[1] == "bridge":
        bridge(int(argv[2]), argv[3])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
