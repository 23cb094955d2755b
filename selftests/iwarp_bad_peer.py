#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A misbehaving iWARP peer for srdma's tests: a raw TCP server that does
a valid MPA exchange with an rping client, takes the client's first SEND
(rping's buffer advertisement: address, rkey, size), then breaks the
protocol in one of several ways and checks what comes back.

  iwarp_bad_peer.py ADDR PORT CASE

CASE: bad-crc, bad-stag, out-of-bounds, bad-opcode (expect a Terminate
with the RFC's layer/type/code, then the connection closing), reset (send
a TCP RST), silent (never answer the MPA request), slow-reply (answer it
a byte a second). Exit 0 when the peer saw what RFC 5040/5041/5044 say it
must.

  iwarp_bad_peer.py ADDR PORT read-rereg FLAG

read-rereg (with iw_owner read-rereg as the client): READ all of the
advertised buffer and read nothing back until FLAG exists (the client
took REMOTE_READ away with rereg and overwrote the buffer); then no byte
of the new contents may arrive, and the READ ends with a Terminate
(RDMAP, remote protection, access rights) before all of it came.

As a client of srdma's listener (an rping server):

  iwarp_bad_peer.py ADDR PORT flood N CAP [--early]
  iwarp_bad_peer.py ADDR PORT slow-request
  iwarp_bad_peer.py ADDR PORT unanswered
  iwarp_bad_peer.py ADDR PORT hoard N CAP FLAG

flood opens N TCP connections that never send an MPA request and holds
them: N - CAP must be closed at once (within 5 s: the listener's cap on
half-open connections), the rest by the set-up timeout (10 s), not
before 5 s and not after 25 s; with --early, all of them within 6 s (the listener went
away). slow-request sends a valid request a byte a second: the listener
must close it by the timeout, before the request is in. unanswered
sends a valid request to a listener that never answers it (iw_owner
unanswered): it must be rejected and closed by the accept deadline.
hoard sends N valid requests to a consumer that holds the first CAP of
them unanswered (iw_owner hoard, listen backlog CAP): the other N - CAP
must wait, as TCP makes a client of a server that does not accept() wait:
connected or with the connect still pending, but with no MPA reply and
neither RST nor FIN. Once it has seen all N wait, the peer creates FLAG;
the consumer then answers the held ones (private data "held") and serves
the others (private data "served"), each of which must get that reply.
"""
import errno
import os
import select
import socket
import struct
import sys
import time

MPA_REQ = b"MPA ID Req Frame"
MPA_REP = b"MPA ID Rep Frame"
CRC = 0x40
ENHANCED = 0x10
DDP_TAGGED, DDP_LAST, DDP_V1 = 0x80, 0x40, 0x01
RDMAP_V1 = 0x40
OP_WRITE, OP_READ_REQ, OP_READ_RESP, OP_SEND, OP_TERMINATE = 0, 1, 2, 3, 7
REJECT = 0x20

# case: (want MPA CRC, expected terminate (layer, etype, code))
CASES = {
    "bad-crc": (True, (2, 0, 0x02)),        # LLP/MPA: CRC error
    "bad-stag": (False, (1, 1, 0x00)),      # DDP tagged: invalid STag
    "send-cut": (False, (1, 1, 0x00)),      # the same, inside a SEND
    "out-of-bounds": (False, (1, 1, 0x01)),  # DDP tagged: base/bounds
    "bad-opcode": (False, (0, 2, 0x06)),    # RDMAP remote op: opcode
    "reset": (False, None),
    "silent": (False, None),
    "slow-reply": (False, None),
    "read-rereg": (False, (0, 1, 0x02)),   # RDMAP protection: access
}
SETUP_TIMEOUT = 10      # srdma's IWARP_MPA_TIMEOUT, seconds
# hoard: how long the waiting connections are watched before the consumer
# may answer (its held requests' accept deadline is SETUP_TIMEOUT), and
# then how long the waiting ones may take to be served (a connect whose
# SYN TCP dropped retries 1, 3, 7, 15 s after the first)
HOARD_SETTLE = 1.5
HOARD_SERVE = 45


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise EOFError("peer closed after %d of %d bytes" % (len(buf), n))
        buf += chunk
    return buf


def fpdu(ulpdu, crc, corrupt=False):
    body = struct.pack(">H", len(ulpdu)) + ulpdu
    body += b"\0" * (-len(body) % 4)
    value = crc32c(body) if crc else 0
    if corrupt:
        value ^= 0x5A5A5A5A
    return body + struct.pack("<I", value)


def read_fpdu(s):
    (ulen,) = struct.unpack(">H", recv_exact(s, 2))
    ulpdu = recv_exact(s, ulen)
    recv_exact(s, (-(ulen + 2) % 4) + 4)
    return ulpdu


def untagged(op, qn, msn, mo=0, last=True, inv=0):
    return struct.pack(">BBIIII", DDP_V1 | (DDP_LAST if last else 0),
                       RDMAP_V1 | op, inv, qn, msn, mo)


def tagged(op, stag, to, last=True):
    return struct.pack(">BBIQ", DDP_TAGGED | DDP_V1 | (DDP_LAST if last else 0),
                       RDMAP_V1 | op, stag, to)


def main():
    addr, port, case = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    want_crc, expect = CASES[case]
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    ls = socket.socket(family, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if case == "read-rereg":
        # little buffering: the READ reply stalls early in srdma
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    ls.bind((addr, port))
    ls.listen(1)
    ls.settimeout(60)
    s, _ = ls.accept()
    s.settimeout(20)

    key, flags, rev, pd_len = struct.unpack(">16sBBH", recv_exact(s, 20))
    pdata = recv_exact(s, pd_len)
    if key != MPA_REQ:
        print("bad MPA request key %r" % key)
        return 1
    if case == "silent":
        # the client must give up on its own (MPA timeout) and close
        try:
            more = s.recv(1)
        except socket.timeout:
            print("client still connected after 20 s")
            return 1
        print("client closed the silent connection (%r)" % more)
        return 0 if not more else 1
    if case == "slow-reply":
        return slow_send(s, struct.pack(">16sBBH", MPA_REP, ENHANCED, 2, 4) +
                         struct.pack(">HH", 1, 1))
    crc = want_crc or bool(flags & CRC)
    rep_flags = (CRC if crc else 0)
    rep_pd = b""
    if rev == 2 and flags & ENHANCED:
        rep_flags |= ENHANCED
        rep_pd = struct.pack(">HH", 1, 1)
    s.sendall(struct.pack(">16sBBH", MPA_REP, rep_flags, rev, len(rep_pd)) + rep_pd)
    print("MPA rev %d done, CRC %s" % (rev, "on" if crc else "off"))

    # rping's advertisement: buf (u64), rkey (u32), size (u32), big endian
    first = read_fpdu(s)
    if first[1] & 0x0F != OP_SEND:
        print("first FPDU is not a SEND: %r" % first[:4])
        return 1
    buf, rkey, size = struct.unpack(">QII", first[18:34])
    print("client advertised buf %#x rkey %#x size %d" % (buf, rkey, size))

    if case == "read-rereg":
        return read_rereg(s, crc, buf, rkey, size, sys.argv[4], expect)
    if case == "reset":
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
        print("sent RST")
        return 0
    if case == "bad-crc":
        bad = fpdu(untagged(OP_SEND, 0, 1) + b"x" * 16, crc, corrupt=True)
    elif case == "bad-stag":
        bad = fpdu(tagged(OP_WRITE, rkey ^ 0x5A5A5A00, buf) + b"x" * 16, crc)
    elif case == "send-cut":
        # a SEND's first segment takes the client's receive, then a bad
        # STag ends the stream: that receive must not complete as a
        # message (it is flushed when the QP closes)
        bad = fpdu(untagged(OP_SEND, 0, 1, last=False) + b"x" * 16, crc)
        bad += fpdu(tagged(OP_WRITE, rkey ^ 0x5A5A5A00, buf) + b"x" * 16, crc)
    elif case == "out-of-bounds":
        bad = fpdu(tagged(OP_WRITE, rkey, buf + size - 8) + b"x" * 16, crc)
    else:
        bad = fpdu(untagged(0x0C, 0, 1) + b"x" * 16, crc)
    s.sendall(bad)

    while True:
        try:
            u = read_fpdu(s)
        except (EOFError, ConnectionResetError):
            print("connection closed without a Terminate")
            return 1
        op = u[1] & 0x0F
        if op != OP_TERMINATE:
            print("skipping FPDU opcode %d" % op)
            continue
        qn = struct.unpack(">I", u[6:10])[0]
        ctrl = u[18:22]
        got = (ctrl[0] >> 4, ctrl[0] & 0x0F, ctrl[1])
        print("Terminate on QN %d: layer %d type %d code %#x" % ((qn,) + got))
        if qn != 2 or got != expect:
            print("expected layer %d type %d code %#x" % expect)
            return 1
        break
    # then the stream ends: FIN or RST, nothing else
    try:
        rest = s.recv(4096)
    except ConnectionResetError:
        rest = b""
    if rest:
        print("data after the Terminate: %r" % rest[:32])
        return 1
    print("connection closed after the Terminate")
    return 0


def read_rereg(s, crc, buf, rkey, size, flag, expect):
    """READ the whole buffer; once FLAG exists, nothing read may be of
    what the client wrote after taking REMOTE_READ away."""
    req = struct.pack(">IQIIQ", 0x1234, 0, size, rkey, buf)
    s.sendall(fpdu(untagged(OP_READ_REQ, 1, 1) + req, crc))
    t_end = time.monotonic() + 40
    while not os.path.exists(flag):
        if time.monotonic() > t_end:
            print("the client never took REMOTE_READ away")
            return 1
        time.sleep(0.2)
    got = 0
    while True:
        try:
            u = read_fpdu(s)
        except (EOFError, ConnectionResetError, socket.timeout):
            print("READ reply: %d of %d bytes, then the stream ended "
                  "without a Terminate" % (got, size))
            return 1
        op = u[1] & 0x0F
        if op == OP_READ_RESP:
            data = u[14:]
            if data.count(0xAA) != len(data):
                print("byte read after the rereg, at offset %d" %
                      (got + len(data) - len(data.lstrip(b"\xaa"))))
                return 1
            got += len(data)
            continue
        if op != OP_TERMINATE:
            print("unexpected FPDU opcode %d" % op)
            return 1
        qn = struct.unpack(">I", u[6:10])[0]
        ctrl = u[18:22]
        term = (ctrl[0] >> 4, ctrl[0] & 0x0F, ctrl[1])
        print("READ reply: %d of %d bytes, all from before the rereg; "
              "Terminate on QN %d: layer %d type %d code %#x" %
              ((got, size, qn) + term))
        return 0 if qn == 2 and term == expect and got < size else 1


def unanswered(addr, port):
    """A request the consumer never answers: rejected and closed by the
    accept deadline, not before it and not much after."""
    s = connect(addr, port)
    s.settimeout(SETUP_TIMEOUT + 10)
    pd = struct.pack(">HH", 1, 1)
    s.sendall(struct.pack(">16sBBH", MPA_REQ, ENHANCED, 2, len(pd)) + pd)
    t0 = time.monotonic()
    try:
        key, flags, _, pd_len = struct.unpack(">16sBBH", recv_exact(s, 20))
        recv_exact(s, pd_len)
        rest = s.recv(1)
    except (EOFError, OSError) as e:
        print("no reject frame after %.1f s: %s" % (time.monotonic() - t0, e))
        return 1
    took = time.monotonic() - t0
    print("reply %r flags %#x, then %r, after %.1f s" % (key, flags, rest, took))
    if key != MPA_REP or not flags & REJECT or rest:
        return 1
    return 0 if SETUP_TIMEOUT - 3 <= took <= SETUP_TIMEOUT + 8 else 1


def closed(s):
    """True once the other side closed s (FIN or RST)."""
    try:
        return s.recv(1, socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def slow_send(s, frame):
    """A byte a second: the other side must close before the frame is in,
    by its set-up timeout."""
    t0 = time.monotonic()
    for i, b in enumerate(frame):
        try:
            s.send(bytes([b]))
        except OSError as e:
            print("send failed after %d bytes: %s" % (i, e))
            break
        r, _, _ = select.select([s], [], [], 1.0)
        if r and closed(s):
            break
    took = time.monotonic() - t0
    done = closed(s)
    print("closed by the other side: %s after %.1f s" % (done, took))
    return 0 if done and SETUP_TIMEOUT - 3 <= took <= SETUP_TIMEOUT + 8 else 1


def connect(addr, port):
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(15)
    s.connect((addr, port))
    return s


def flood(addr, port, n, cap, early):
    """n idle connections: which are closed when (seconds after each one's
    own connect), by the listener."""
    opened, life = {}, {}
    t_end = None
    while len(life) < n:
        if len(opened) < n:
            s = socket.socket(socket.AF_INET6 if ":" in addr else
                              socket.AF_INET, socket.SOCK_STREAM)
            opened[s] = time.monotonic()
            try:
                s.settimeout(15)
                s.connect((addr, port))
            except ConnectionResetError:
                life[s] = 0.0   # reset before connect() even returned
            wait = 0.01     # a listen backlog of 3 (rping): let it drain
        else:
            t_end = t_end or time.monotonic() + 2 * SETUP_TIMEOUT + 10
            if time.monotonic() > t_end:
                break
            wait = 0.5
        live = [s for s in opened if s not in life]
        r, _, _ = select.select(live, [], [], wait)
        for s in r:
            if closed(s):
                life[s] = time.monotonic() - opened[s]
    for s in opened:
        s.close()
    times = sorted(life.values())
    # reset at once, give or take a SYN-ACK retransmission; the admitted
    # ones live for the set-up timeout
    at_once = len([t for t in times if t < SETUP_TIMEOUT / 2])
    print("closed: %d of %d; at once: %d; lifetimes %s" %
          (len(times), n, at_once, " ".join("%.1f" % t for t in times)))
    if len(times) != n:
        print("%d connections never closed" % (n - len(times)))
        return 1
    if early:
        return 0 if times[-1] < SETUP_TIMEOUT - 4 else 1
    if at_once != max(0, n - cap):
        print("expected %d closed at once (cap %d)" % (max(0, n - cap), cap))
        return 1
    late = times[at_once:]
    if late and late[-1] > SETUP_TIMEOUT + 15:
        print("half-open connections not closed by the timeout")
        return 1
    return 0


class Hoarded:
    """One of hoard's connections: its request goes out once TCP has
    connected, and what comes back is kept until the stream ends."""

    def __init__(self, addr, port, req):
        self.sock = socket.socket(socket.AF_INET6 if ":" in addr else
                                  socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setblocking(False)
        self.req = req
        self.sent = False
        self.got = b""
        self.end = None         # why the stream ended, once it did
        err = self.sock.connect_ex((addr, port))
        if err not in (0, errno.EINPROGRESS):
            self.end = "connect: %s" % os.strerror(err)

    def connecting(self):
        return self.end is None and not self.sent

    def on_writable(self):
        """TCP connected (or failed): send the request."""
        err = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if err:
            self.end = "connect: %s" % os.strerror(err)
            return
        # a few dozen bytes into an empty socket buffer
        self.sock.send(self.req)
        self.sent = True

    def on_readable(self):
        try:
            b = self.sock.recv(4096)
        except BlockingIOError:
            return
        except OSError as e:
            self.end = "reset (%s)" % e
            return
        self.got += b
        if not b:
            self.end = "closed"

    def reply(self):
        """The consumer's private data in the MPA reject that came back
        (after the RFC 6581 IRD/ORD), or None."""
        f = self.got
        if len(f) < 20 or f[:16] != MPA_REP or not f[16] & REJECT:
            return None
        pd = f[20:20 + struct.unpack(">H", f[18:20])[0]]
        return pd[4:] if f[16] & ENHANCED else pd


def hoard_watch(conns, wait):
    """Let the connections make progress for up to wait seconds."""
    live = [c for c in conns if c.end is None]
    if not live:
        time.sleep(wait)
        return
    rd = [c.sock for c in live]
    wr = [c.sock for c in live if c.connecting()]
    r, w, _ = select.select(rd, wr, [], wait)
    for c in live:
        if c.sock in w:
            c.on_writable()
        if c.sock in r and c.end is None:
            c.on_readable()


def hoard(addr, port, n, cap, flag):
    """n requests to a consumer that holds the first cap of them: the rest
    wait for it, not reset, until it answers (once flag exists); then
    each is served."""
    pd = struct.pack(">HH", 1, 1)
    req = struct.pack(">16sBBH", MPA_REQ, ENHANCED, 2, len(pd)) + pd
    conns = []
    for _ in range(n):
        conns.append(Hoarded(addr, port, req))
        # one at a time: the consumer has the last before the next comes
        t_next = time.monotonic() + 0.3
        while time.monotonic() < t_next:
            hoard_watch(conns, max(0.0, t_next - time.monotonic()))
    t_end = time.monotonic() + HOARD_SETTLE
    while time.monotonic() < t_end:
        hoard_watch(conns, max(0.0, t_end - time.monotonic()))

    answered = [c for c in conns if c.got or c.end]
    pending = len([c for c in conns if c.connecting()])
    print("while the backlog is held: %d of %d requests sent, %d connects "
          "pending, %d answered or ended" %
          (len([c for c in conns if c.sent]), n, pending, len(answered)))
    for c in answered:
        print("  got %r, %s" % (c.got[:32], c.end or "still open"))
    if answered:
        print("expected all %d to wait unanswered" % n)
        return 1

    # the consumer answers the held ones, then serves the rest
    open(flag, "w").close()
    t_end = time.monotonic() + HOARD_SERVE
    while any(c.end is None for c in conns) and time.monotonic() < t_end:
        hoard_watch(conns, 0.5)
    for c in conns:
        c.sock.close()

    replies = [c.reply() for c in conns]
    held = replies.count(b"held")
    served = replies.count(b"served")
    other = [c for c, r in zip(conns, replies) if r not in (b"held", b"served")
             or c.end != "closed"]
    print("after the consumer answered: held %d, served %d, other %d" %
          (held, served, len(other)))
    for c in other:
        print("  got %r, %s" % (c.got[:32], c.end or "still open"))
    if held != cap or served != n - cap or other:
        print("expected %d held and %d served" % (cap, n - cap))
        return 1
    return 0


def client_main():
    addr, port, case = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if case == "flood":
        return flood(addr, port, int(sys.argv[4]), int(sys.argv[5]),
                     "--early" in sys.argv[6:])
    if case == "unanswered":
        return unanswered(addr, port)
    if case == "hoard":
        return hoard(addr, port, int(sys.argv[4]), int(sys.argv[5]),
                     sys.argv[6])
    s = connect(addr, port)
    pd = struct.pack(">HH", 1, 1)
    return slow_send(s, struct.pack(">16sBBH", MPA_REQ, ENHANCED, 2,
                                    len(pd)) + pd)


if __name__ == "__main__":
    if sys.argv[3] in ("flood", "slow-request", "unanswered", "hoard"):
        sys.exit(client_main())
    sys.exit(main())
