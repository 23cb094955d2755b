#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A stand-in for ssh between the two test VMs, for Open MPI's launcher.

  remote_exec.py serve PORT LOG   run ONE command sent by a client: its
                                  stdout and stderr go to LOG, its exit
                                  status back to the client; then exit
                                  with that status
  remote_exec.py HOST CMD...      (mpirun's plm_rsh_agent) run CMD on HOST
                                  through its server, as ssh would: the
                                  words joined by spaces, run by /bin/sh;
                                  exits with CMD's status

The port is REMOTE_EXEC_PORT (client) or PORT (server); the client tries
for 60 s while the server is not listening yet. A connection that sends
nothing (a readiness probe) is ignored. If the client goes away, the
command's process group is killed. Test VMs only: it runs whatever it is
sent, once, for the one test step that starts it.
"""
import os
import select
import signal
import socket
import subprocess
import sys
import time


def serve(port, log):
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("", port))
    srv.listen(4)
    while True:
        conn, peer = srv.accept()
        req = b""
        while not req.endswith(b"\n"):
            chunk = conn.recv(65536)
            if not chunk:
                break
            req += chunk
        if not req.endswith(b"\n"):
            conn.close()  # a probe, or a client that gave up
            continue
        break
    srv.close()
    cmd = req[:-1].decode()
    with open(log, "ab") as out:
        out.write(("remote_exec: from %s: %s\n" % (peer[0], cmd)).encode())
        out.flush()
        child = subprocess.Popen(["/bin/sh", "-c", cmd], stdin=subprocess.DEVNULL,
                                 stdout=out, stderr=out, start_new_session=True)
        while child.poll() is None:
            ready, _, _ = select.select([conn], [], [], 0.2)
            if ready and not conn.recv(1):
                out.write(b"remote_exec: client gone, killing the command\n")
                os.killpg(child.pid, signal.SIGKILL)
                child.wait()
                return 1
        rc = child.returncode
        out.write(("remote_exec: exit status %d\n" % rc).encode())
    rc = rc if rc >= 0 else 128 - rc
    conn.sendall(b"%d\n" % rc)
    conn.close()
    return rc


def client(host, words):
    port = int(os.environ.get("REMOTE_EXEC_PORT", "19997"))
    for _ in range(60):  # the server may not listen yet
        try:
            conn = socket.create_connection((host, port), timeout=30)
            break
        except ConnectionRefusedError:
            time.sleep(1)
    else:
        sys.stderr.write("remote_exec: %s:%d refused for 60 s\n" % (host, port))
        return 255
    conn.settimeout(None)
    conn.sendall(" ".join(words).encode() + b"\n")
    reply = b""
    while True:
        chunk = conn.recv(64)
        if not chunk:
            break
        reply += chunk
    try:
        return int(reply.strip())
    except ValueError:
        sys.stderr.write("remote_exec: %s closed without a status\n" % host)
        return 255


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "serve":
        return serve(int(sys.argv[2]), sys.argv[3])
    if len(sys.argv) >= 3:
        return client(sys.argv[1], sys.argv[2:])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
