#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The tap_echo example against Linux's TCP, inside a network namespace this
# script creates and deletes: two connections (1 MiB of random bytes, then
# a short line), each echo compared byte for byte. Exit 77 (skipped) when
# not root or without /dev/net/tun or network namespaces.
set -u
EX=$1
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (a network namespace and a TAP device)"; exit 77; }
[ -c /dev/net/tun ] || { echo "SKIP: no /dev/net/tun"; exit 77; }
NS=cnexample$$
ip netns add "$NS" 2>/dev/null || { echo "SKIP: cannot create a network namespace"; exit 77; }
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; ip netns del "$NS"; }
trap cleanup EXIT
ip netns exec "$NS" ip tuntap add dev cn0 mode tap || { echo "SKIP: cannot create a TAP device"; exit 77; }
ip netns exec "$NS" ip link set cn0 up
ip netns exec "$NS" ip addr add 10.77.0.1/24 dev cn0
ip netns exec "$NS" "$EX" cn0 10.77.0.2 7 2 &
PID=$!
ip netns exec "$NS" python3 - <<'PY' || exit 1
import os, socket, threading, time
def echo(data):
    for attempt in range(50):  # the server may still be starting
        try:
            s = socket.create_connection(("10.77.0.2", 7), timeout=20)
            break
        except OSError:
            time.sleep(0.1)
    def send():
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
    t = threading.Thread(target=send)
    t.start()
    got = b"".join(iter(lambda: s.recv(65536), b""))  # until EOF
    t.join()
    s.close()
    if got != data:
        raise SystemExit("echo differs: sent %d bytes, got %d" % (len(data), len(got)))
    print("echoed %d bytes intact" % len(data))
echo(os.urandom(1 << 20))
echo(b"hello, cachenet\n")
PY
wait "$PID"; rc=$?
PID=
exit $rc
