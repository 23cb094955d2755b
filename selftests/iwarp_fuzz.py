#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""iWARP protocol fuzzer: a raw TCP client of iw_fuzz_server (an rdma_cm
server on a siwarp device) speaking MPA/DDP/RDMAP itself, with
iwarp_bad_peer.py's framing.

  iwarp_fuzz.py ADDR PORT [-n CONNS] [-f FPDUS] [-s SEED] [-g GROUP]

Each connection does an MPA exchange, mutated now and then (key,
revision, flags, private data lengths up to 65535, truncation, markers,
FPDUs before the reply). An accepted one learns the server's live keys
from the reply's private data and sends a stream of FPDUs that stays
valid (WRITEs, multi-segment SENDs, READ and atomic requests, zero
lengths, MR edges, answers to the server's own READ and atomic) up to a
point where it may send one mutated FPDU (bad CRC, FPDU shorter than its
header, DDP/RDMAP versions, every opcode, dead and foreign STags,
offsets past the MR, QN/MSN/MO extremes, SENDs too long or with no
receive, Send with Invalidate, READs of 4 GiB, misaligned or refused
atomics, unsolicited or oversized READ and atomic responses, Terminates
with random fields), then more junk, and ends with a FIN, a RST or a cut
in the middle of an FPDU. Up to GROUP connections are open at once.

What must hold, else the run fails: a valid MPA request is answered with
the negotiated flags and the server's private data; a valid stream gets
no Terminate and is not closed; READ responses carry exactly the bytes
written before (or the read-only MR's pattern), within the requested
range, in order, with a good CRC; where the RFCs name a single error
(most mutations), the Terminate srdma sends has that layer/type/code
and the connection then closes; a Terminate from us gets none back.
Exit 0 when nothing failed; the counts are printed.
"""
import argparse
import collections
import os
import random
import select
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import iwarp_bad_peer as bp  # noqa: E402


# iwarp_bad_peer's CRC32c goes bit by bit: fine for a few FPDUs, too slow
# for 100,000 under TCG. Same function, a byte at a time from a table.
def _crc_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
        table.append(c)
    return table


CRC_TABLE = _crc_table()


def crc32c(data):
    crc, t = 0xFFFFFFFF, CRC_TABLE
    for b in data:
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


MARKERS, REJECT = 0x80, 0x20
ATOMIC_OFFER, ATOMIC_ACCEPT = 0x02, 0x01
OP_READ_REQ, OP_READ_RESP, OP_SEND_INV, OP_SEND_SE = 1, 2, 4, 5
OP_SEND_SE_INV, OP_ATOMIC_REQ, OP_ATOMIC_RESP = 6, 0xA, 0xB
QN_SEND, QN_READ, QN_TERM, QN_ARESP = 0, 1, 2, 3
SRV_MAGIC, FZ_MAGIC = 0x49574653, 0x49574643
SRV_INFO = ">IIIIQIIQIIQII"     # iw_fuzz_server.c struct srv_info
FZ_INFO = ">IIIIQII"            # struct fz_info
FZ_ATOMICS = 1
READ_MAX = 4096                 # the server's READ sink
MAX_PENDING = 8                 # our READs and atomics in flight
LANES = 8                       # slices of the rw MR, one per open conn
EDGE = 256                      # MR ends that no lane holds
WAIT = 20                       # seconds for anything srdma owes us

# the pattern of the server's check (SENDs, private data)
PAT = bytes((j * 37) % 251 for j in range(251)) * 8


def pattern(seed, n):
    s = seed % 251
    return PAT[s:s + n]


# the Terminates srdma sends (Documentation/iwarp.rst): layer, type, code
T_CRC, T_SHORT = (2, 0, 0x02), (2, 0, 0x03)
T_STAG, T_BOUNDS, T_NOT_ASSOC = (1, 1, 0x00), (1, 1, 0x01), (1, 1, 0x02)
T_DDP_T_VER, T_DDP_U_VER = (1, 1, 0x04), (1, 2, 0x06)
T_QN, T_NO_BUF, T_MSN, T_MO, T_TOO_LONG = ((1, 2, c) for c in (1, 2, 3, 4, 5))
T_ACCESS = (0, 1, 0x02)
T_R_STAG, T_R_BOUNDS, T_R_NOT_ASSOC = (0, 1, 0x00), (0, 1, 0x01), (0, 1, 0x03)
T_VERSION, T_OPCODE, T_STREAM, T_CANNOT_INV = ((0, 2, c) for c in
                                               (0x05, 0x06, 0x07, 0x09))
SILENT = "no Terminate"


class Stats:
    def __init__(self):
        self.c = collections.Counter()
        self.failures = []

    def fail(self, conn, what):
        self.c["failures"] += 1
        if len(self.failures) < 30:
            self.failures.append("conn %d (%s): %s" %
                                 (conn.idx, conn.story(), what))


class Conn:
    """One TCP connection to the server and the fuzzer's plan for it."""

    def __init__(self, fz, idx, lane):
        self.fz, self.st, self.idx, self.lane = fz, fz.stats, idx, lane
        self.rng = random.Random(fz.seed * 1000003 + idx)
        self.sock = None
        self.done = False
        self.kinds = []             # what was sent, for the failure report
        self.rx = bytearray()
        self.fatal = None           # (kind, expected) once sent
        self.term = None            # (layer, etype, code) received
        self.eof = False
        self.msn = [1, 1, 1, 1]     # next MSN we send, per QN
        self.peer_msn = [1, 1, 1, 1]
        self.pending = collections.deque()  # our READs/atomics in flight
        self.owed = collections.deque()     # the server's, to answer
        self.srv_reqs = 0           # the server's requests still to come
        self.crc = False
        self.atomics = False

    def story(self):
        return ",".join(self.kinds[-6:])

    # ---- the wire ----
    def fpdu(self, ulpdu, corrupt=False, noise=True):
        b = bp.fpdu(ulpdu, self.crc, corrupt)
        if not self.crc and noise and self.rng.random() < 0.3:
            # no CRC agreed: the field is not looked at
            b = b[:-4] + self.rng.randbytes(4)
        return b

    def send(self, data, count=1, mutated=False):
        if mutated:
            self.st.c["fpdus_mutated"] += count
        elif self.fatal:
            self.st.c["fpdus_after_fatal"] += count
        else:
            self.st.c["fpdus_valid"] += count
        self.st.c["fpdus"] += count
        try:
            self.sock.sendall(data)
        except OSError as e:
            if not self.fatal:
                self.st.fail(self, "send on a valid stream failed: %s" % e)
            self.done = True
            return False
        self.drain()
        return True

    def drain(self, timeout=0.0):
        """Take what srdma sent; with a timeout, wait that long for it."""
        if self.eof:
            return
        while True:
            # (the socket has a timeout, which MSG_DONTWAIT would not stop)
            r, _, _ = select.select([self.sock], [], [], timeout)
            if not r:
                break
            timeout = 0
            try:
                d = self.sock.recv(65536)
            except OSError:
                d = b""
            if not d:
                self.eof = True
                if not self.fatal and not self.done:
                    self.st.fail(self, "srdma closed a valid stream")
                break
            self.rx += d
        self.parse()

    def parse(self):
        while len(self.rx) >= 2:
            (ulen,) = struct.unpack_from(">H", self.rx)
            total = 2 + ulen + (-(ulen + 2) % 4) + 4
            if len(self.rx) < total:
                return
            body, trailer = self.rx[:total - 4], self.rx[total - 4:total]
            if self.crc and struct.unpack("<I", trailer)[0] != crc32c(body):
                self.st.fail(self, "srdma sent an FPDU with a bad CRC")
            u = bytes(body[2:2 + ulen])
            del self.rx[:total]
            self.incoming(u)

    def incoming(self, u):
        if len(u) < 2:
            self.st.fail(self, "srdma sent a %d-byte ULPDU" % len(u))
            return
        ddp, op = u[0], u[1] & 0x0F
        if ddp & bp.DDP_TAGGED:
            if op != OP_READ_RESP or len(u) < 14:
                self.st.fail(self, "srdma sent tagged opcode %d" % op)
                return
            _, to = struct.unpack_from(">IQ", u, 2)
            self.read_resp(to, u[14:], ddp & bp.DDP_LAST)
            return
        if len(u) < 18:
            self.st.fail(self, "srdma sent a short untagged ULPDU")
            return
        qn, msn, mo = struct.unpack_from(">III", u, 6)
        if op == bp.OP_TERMINATE:
            ctrl = u[18:22].ljust(4, b"\0")
            self.term = (ctrl[0] >> 4, ctrl[0] & 0x0F, ctrl[1])
            self.st.c["terminates"] += 1
            self.st.c["terminate %d/%d/%#x" % self.term] += 1
            if not self.fatal:
                self.st.fail(self, "Terminate %d/%d/%#x on a valid stream"
                             % self.term)
            return
        if qn < 4:
            if msn != self.peer_msn[qn] or mo:
                self.st.fail(self, "srdma's QN %d MSN %d MO %d, expected "
                             "MSN %d" % (qn, msn, mo, self.peer_msn[qn]))
            self.peer_msn[qn] = msn + 1
        if op == OP_READ_REQ and qn == QN_READ and len(u) >= 46:
            sstag, sto, size = struct.unpack_from(">IQI", u, 18)
            self.owed.append(("read", sstag, sto, size))
            self.srv_reqs -= 1
        elif op == OP_ATOMIC_REQ and qn == QN_READ and len(u) >= 70:
            (req_id,) = struct.unpack_from(">I", u, 22)
            self.owed.append(("atomic", req_id))
            self.srv_reqs -= 1
        elif op == OP_ATOMIC_RESP and qn == QN_ARESP and len(u) >= 30:
            (req_id,) = struct.unpack_from(">I", u, 18)
            if not self.pending or self.pending[0][0] != "atomic" or \
                    self.pending[0][1] != req_id:
                self.st.fail(self, "atomic response %#x out of order" %
                             req_id)
                return
            self.pending.popleft()
            self.st.c["atomics_answered"] += 1
        else:
            self.st.fail(self, "srdma sent opcode %d on QN %d" % (op, qn))

    def read_resp(self, to, data, last):
        if not self.pending or self.pending[0][0] != "read":
            self.st.fail(self, "READ response with no READ outstanding")
            return
        _, sink_to, size, got, expect = self.pending[0]
        off = to - sink_to
        if off != len(got) or off + len(data) > size:
            self.st.fail(self, "READ response at %d+%d, had %d of %d" %
                         (off, len(data), len(got), size))
        got += data
        if not last:
            return
        self.pending.popleft()
        self.st.c["reads_answered"] += 1
        if len(got) != size:
            self.st.fail(self, "READ of %d answered with %d bytes" %
                         (size, len(got)))
        elif expect is not None:
            self.st.c["reads_verified"] += 1
            if bytes(got) != expect:
                bad = next(i for i in range(size) if got[i] != expect[i])
                self.st.fail(self, "READ of %d: byte %d is %#x, wrote %#x" %
                             (size, bad, got[bad], expect[bad]))

    def wait_pending(self, most):
        """Until at most @most of our requests are unanswered."""
        t_end = time.monotonic() + WAIT
        while len(self.pending) > most and not self.eof and not self.done:
            if time.monotonic() > t_end:
                self.st.fail(self, "%d READ/atomic responses missing after "
                             "%d s" % (len(self.pending), WAIT))
                self.done = True
                return
            self.drain(0.5)

    # ---- MPA ----
    def connect(self):
        """The MPA exchange; True when the stream phase may follow."""
        r, st = self.rng, self.st
        fam = socket.AF_INET6 if ":" in self.fz.addr else socket.AF_INET
        self.sock = socket.socket(fam, socket.SOCK_STREAM)
        self.sock.settimeout(WAIT)
        try:
            self.sock.connect((self.fz.addr, self.fz.port))
        except OSError as e:
            # the half-open cap (a reset), or a connect left pending
            # past WAIT behind a full backlog, at most
            st.c["connect_refused"] += 1
            self.kinds.append("connect: %s" % e)
            return False
        st.c["connections"] += 1
        rev = 2 if r.random() < 0.85 else 1
        enhanced = rev == 2 and r.random() < 0.9
        flags = (bp.ENHANCED if enhanced else 0) | r.choice([0, 0, 0x0C])
        self.crc = r.random() < 0.5
        if self.crc:
            flags |= bp.CRC
        offer = r.random() < 0.5
        if offer:
            flags |= ATOMIC_OFFER
        # what the server READs and adds to: ours, it need not exist
        read_len = r.choice([0, 1, 8, 100, 1000, READ_MAX, READ_MAX + 1])
        self.my_stag, self.my_to = r.getrandbits(32), r.getrandbits(64) & ~7
        pd_len = 32 + r.choice([0, 0, r.randrange(224)])
        pd = struct.pack(FZ_INFO, FZ_MAGIC, pd_len, self.my_stag, read_len,
                         self.my_to, FZ_ATOMICS if offer else 0, 0) + \
            pattern(7 + 32, pd_len - 32)
        ird = r.choice([0, 1, 4, 127, 0x3FFF]) | r.choice([0, 0x8000, 0x4000])
        ord_ = r.choice([0, 1, 8, 0x3FFF]) | r.choice([0, 0x8000, 0x4000])
        v2 = struct.pack(">HH", ird, ord_) if enhanced else b""
        req = struct.pack(">16sBBH", bp.MPA_REQ, flags, rev,
                          len(v2) + len(pd)) + v2 + pd
        mutate = r.random() < 0.15
        if mutate:
            return self.bad_request(req, v2 + pd)
        early = self.early_fpdus() if self.crc and r.random() < 0.05 \
            else b""
        if not self.send_raw(req + early):
            return False
        self.kinds.append("mpa rev %d flags %#x pd %d" %
                          (rev, flags, len(v2) + len(pd)))
        try:
            rep = bp.recv_exact(self.sock, 20)
            key, rflags, rrev, rlen = struct.unpack(">16sBBH", rep)
            rpd = bp.recv_exact(self.sock, rlen)
        except (OSError, EOFError) as e:
            st.fail(self, "no MPA reply to a valid request: %s" % e)
            return False
        if key != bp.MPA_REP or rrev != rev:
            st.fail(self, "MPA reply key %r rev %d" % (key, rrev))
            return False
        if rflags & REJECT:
            st.c["mpa_rejected"] += 1     # the server's 64 are busy
            return False
        want = bp.CRC if self.crc else 0
        if enhanced:
            want |= bp.ENHANCED
        if offer:
            want |= ATOMIC_ACCEPT
        # srdma_iw_crc=1 may turn CRC on by itself
        if rflags & ~bp.CRC != want & ~bp.CRC or (self.crc and
                                                  not rflags & bp.CRC):
            st.fail(self, "MPA reply flags %#x to %#x" % (rflags, flags))
            return False
        self.crc = bool(rflags & bp.CRC)
        st.c["crc_connections"] += self.crc
        self.atomics = offer
        rpd = rpd[4:] if enhanced else rpd
        if len(rpd) < struct.calcsize(SRV_INFO) or \
                struct.unpack_from(">I", rpd)[0] != SRV_MAGIC:
            st.fail(self, "MPA reply without the server's private data")
            return False
        (_, self.recv_len, self.credits, self.dead, self.rw_addr, self.rw_key,
         self.rw_len, self.ro_addr, self.ro_key, self.ro_len, self.ot_addr,
         self.ot_key, self.ot_len) = struct.unpack_from(SRV_INFO, rpd)
        self.live = (self.rw_key, self.ro_key, self.ot_key)
        lane = (self.rw_len - 2 * EDGE) // LANES
        self.lane_lo = self.rw_addr + EDGE + self.lane * lane
        self.lane_len = lane & ~7
        # what the server asks of us once it is established
        # (srdma gives it an ORD of at least 1 whatever our IRD)
        if read_len <= READ_MAX:
            self.srv_reqs = 2 if offer else 1
        st.c["mpa_accepted"] += 1
        return True

    def send_raw(self, data):
        try:
            self.sock.sendall(data)
            return True
        except OSError as e:
            self.st.fail(self, "sending the MPA request: %s" % e)
            return False

    def early_fpdus(self):
        """FPDUs right behind the request, before the reply: srdma keeps
        them in the socket for rx. The keys are not known yet, so they
        are what needs none: zero-length WRITEs and a zero-length READ,
        whose empty answer must come once the connection is up."""
        r = self.rng
        self.kinds.append("early FPDUs")
        self.st.c["early FPDUs"] += 1
        out = [self.fpdu(bp.tagged(bp.OP_WRITE, r.getrandbits(32),
                                   r.getrandbits(64)))
               for _ in range(r.randrange(1, 4))]
        sink_to = r.getrandbits(64)
        out.append(self.fpdu(bp.untagged(OP_READ_REQ, QN_READ,
                                         self.msn[QN_READ]) +
                             struct.pack(">IQIIQ", 0, sink_to, 0,
                                         r.getrandbits(32), 0)))
        self.msn[QN_READ] += 1
        self.pending.append(("read", sink_to, 0, bytearray(), b""))
        self.st.c["fpdus"] += len(out)
        self.st.c["fpdus_valid"] += len(out)
        return b"".join(out)

    def bad_request(self, req, pd):
        """A broken MPA request: srdma must not accept it (or at most
        answer with a reject), and must end it promptly."""
        r, st = self.rng, self.st
        kind = r.choice(["key", "rev", "markers", "pd-huge", "pd-v2-short",
                         "pd-256", "truncated", "flags", "trickle"])
        self.kinds.append("mpa-" + kind)
        st.c["mpa_mutated"] += 1
        st.c["mpa " + kind] += 1
        head = bytearray(req[:20])
        body = req[20:]
        must_end = True
        if kind == "key":
            head[r.randrange(16)] ^= 1 << r.randrange(8)
        elif kind == "rev":
            head[17] = r.choice([0, 3, 4, 0x7F, 0xFF])
        elif kind == "markers":
            head[16] |= MARKERS
        elif kind == "pd-huge":
            n = r.choice([513, 1024, 4096, 65535, r.randrange(260, 65536)])
            struct.pack_into(">H", head, 18, n)
            body = r.randbytes(min(n, r.randrange(600)))
        elif kind == "pd-v2-short":
            head[16] |= bp.ENHANCED
            head[17] = 2
            struct.pack_into(">H", head, 18, r.randrange(4))
            body = r.randbytes(head[19])
        elif kind == "pd-256":
            head[16] &= ~bp.ENHANCED & 0xFF
            n = r.randrange(256, 260)
            struct.pack_into(">H", head, 18, n)
            body = r.randbytes(n)
        elif kind == "truncated":
            body = b""
            head = head[:r.randrange(20)]
        elif kind == "flags":
            # reserved bits and a reject flag in a request: srdma may
            # take it or end it
            head[16] |= r.choice([REJECT, 0x0F, 0x2F])
            must_end = False
        else:   # the whole request a few bytes at a time
            must_end = False
        data = bytes(head) + body
        try:
            if kind == "trickle":
                for i in range(0, len(data), 7):
                    self.sock.sendall(data[i:i + 7])
                    time.sleep(0.01)
            else:
                self.sock.sendall(data)
        except OSError:
            return False
        if kind == "truncated":
            self.end(r.choice(["fin", "rst"]))
            return False
        # srdma answers a valid request; for the rest: a reject at most,
        # then the end of the connection, before its 10 s set-up timeout
        t_end = time.monotonic() + 15
        got = b""
        while time.monotonic() < t_end:
            rd, _, _ = select.select([self.sock], [], [], 0.5)
            if not rd:
                if not must_end and len(got) >= 20:
                    break
                continue
            try:
                d = self.sock.recv(4096)
            except OSError:
                d = b""
            if not d:
                break
            got += d
        else:
            if must_end:
                st.fail(self, "a broken MPA request (%s) was not ended in "
                        "15 s" % kind)
        if must_end and len(got) >= 20 and not got[16] & REJECT:
            st.fail(self, "a broken MPA request (%s) was accepted" % kind)
        self.end("rst")
        return False

    # ---- the stream ----
    def run(self, n):
        """Send about @n FPDUs: valid ones, one mutation at a random point
        (or none), then junk; then end the connection some way."""
        r = self.rng
        fatal_at = r.randrange(n + 1) if r.random() < 0.8 else None
        sent = 0
        while not self.done and sent < n:
            yield
            if self.owed and r.random() < 0.7:
                sent += self.answer()
            elif fatal_at is not None and sent >= fatal_at and \
                    not self.fatal:
                sent += self.mutated()
                if self.fatal and self.fatal[1] is not None and \
                        r.random() < 0.6:
                    self.verdict()
            elif self.fatal:
                sent += self.junk()
            else:
                sent += self.valid()
        if not self.done:
            self.end(r.choice(["fin", "fin", "rst", "cut-fin", "cut-rst",
                               "close"]))

    def end(self, how):
        self.kinds.append("end " + how)
        self.st.c["end " + how] += 1
        s, self.done = self.sock, True
        try:
            if how.startswith("cut"):
                f = self.fpdu(bp.tagged(bp.OP_WRITE, self.rng.getrandbits(32),
                                        0) + self.rng.randbytes(64))
                s.sendall(f[:self.rng.randrange(1, len(f))])
                how = how[4:]
            if how == "rst":
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                             struct.pack("ii", 1, 0))
            elif how == "fin":
                s.shutdown(socket.SHUT_WR)
                t_end = time.monotonic() + 5
                while time.monotonic() < t_end:
                    rd, _, _ = select.select([s], [], [], 0.5)
                    if rd and not s.recv(65536):
                        break
        except OSError:
            pass
        s.close()

    def verdict(self):
        """After a mutation with a known answer: srdma's Terminate (or
        none, after ours), then the end of the connection."""
        kind, expect = self.fatal
        t_end = time.monotonic() + WAIT
        while not self.eof and time.monotonic() < t_end:
            self.drain(0.5)
        self.st.c["verdicts"] += 1
        if not self.eof:
            self.st.fail(self, "connection open %d s after %s" % (WAIT, kind))
        if expect == SILENT:
            if self.term:
                self.st.fail(self, "Terminate %d/%d/%#x answered ours" %
                             self.term)
        elif self.term != expect:
            self.st.fail(self, "%s: Terminate %s, expected %d/%d/%#x" %
                         ((kind, self.term and "%d/%d/%#x" % self.term) +
                          expect))
        self.done = True
        self.sock.close()

    def valid(self):
        r = self.rng
        kinds = ["write"] * 30 + ["edge"] * 4 + ["write0"] * 3 + \
            ["read"] * 10 + ["ro-read"] * 4 + ["read0"] * 3
        if self.credits:
            kinds += ["send"] * 20
        if self.atomics:
            kinds += ["atomic"] * 6
        kind = r.choice(kinds)
        if kind.endswith("read") or kind in ("read0", "atomic"):
            self.wait_pending(MAX_PENDING - 1)
            if self.done or self.eof:
                return 0
        self.kinds.append(kind)
        return getattr(self, "v_" + kind.replace("-", "_"))()

    def size(self, most):
        r = self.rng
        n = r.choice([0, 1, 4, r.randrange(8, 64), r.randrange(64, 512),
                      r.randrange(512, 3000)])
        return min(n, most)

    def write_fpdus(self, stag, to, data, segs):
        """One WRITE as @segs tagged FPDUs."""
        out, off, nseg = [], 0, 0
        cut = sorted(self.rng.sample(range(1, len(data)), segs - 1)) \
            if 1 < segs <= len(data) else []
        for end in cut + [len(data)]:
            last = end == len(data)
            out.append(self.fpdu(bp.tagged(bp.OP_WRITE, stag, to + off,
                                           last) + data[off:end]))
            off, nseg = end, nseg + 1
        return b"".join(out), nseg

    def v_write(self):
        r = self.rng
        n = self.size(self.lane_len)
        off = r.randrange(self.lane_len - n + 1)
        data = r.randbytes(n)
        b, k = self.write_fpdus(self.rw_key, self.lane_lo + off, data,
                                r.choice([1, 1, 2, 3]))
        if not self.send(b, k):
            return k
        if n and r.random() < 0.15:
            # read it back: nothing else writes this lane meanwhile
            self.wait_pending(MAX_PENDING - 1)
            k += self.read_req(self.rw_key, self.lane_lo + off, n, data)
            self.wait_pending(0)
        return k

    def v_edge(self):
        """A WRITE that ends at the MR's last byte or starts at its first
        (no lane holds those bytes)."""
        r = self.rng
        n = r.randrange(1, EDGE + 1)
        to = self.rw_addr if r.random() < 0.5 else \
            self.rw_addr + self.rw_len - n
        b, k = self.write_fpdus(self.rw_key, to, r.randbytes(n), 1)
        self.send(b, k)
        return k

    def v_write0(self):
        """A zero-length WRITE touches nothing; srdma checks no key."""
        r = self.rng
        to = r.choice([self.rw_addr, self.rw_addr + self.rw_len,
                       self.lane_lo])
        self.send(self.fpdu(bp.tagged(bp.OP_WRITE, self.rw_key, to,
                                      r.random() < 0.5)))
        return 1

    def read_req(self, stag, to, size, expect):
        sink_to = self.rng.getrandbits(64)
        u = bp.untagged(OP_READ_REQ, QN_READ, self.msn[QN_READ]) + \
            struct.pack(">IQIIQ", self.rng.getrandbits(32), sink_to, size,
                        stag, to)
        self.msn[QN_READ] += 1
        self.pending.append(("read", sink_to, size, bytearray(), expect))
        self.send(self.fpdu(u))
        return 1

    def v_read(self):
        r = self.rng
        if r.random() < 0.03:
            return self.read_req(self.rw_key, self.rw_addr, self.rw_len, None)
        n = self.size(READ_MAX)
        off = r.randrange(self.rw_len - n + 1)
        return self.read_req(self.rw_key, self.rw_addr + off, n, None)

    def v_ro_read(self):
        r = self.rng
        n = self.size(self.ro_len)
        off = r.randrange(self.ro_len - n + 1)
        want = bytes(((off + i) * 7) & 0xFF for i in range(n))
        return self.read_req(self.ro_key, self.ro_addr + off, n, want)

    def v_read0(self):
        """A zero-length READ checks no key: any STag, an empty answer."""
        r = self.rng
        return self.read_req(r.getrandbits(32), r.getrandbits(64), 0, b"")

    def v_send(self):
        r = self.rng
        n = self.size(self.recv_len)
        if n >= 12:
            seed = r.getrandbits(32)
            data = struct.pack(">III", FZ_MAGIC, n, seed) + \
                pattern(seed, n - 12)
        else:
            data = bytes(n)
        segs = r.choice([1, 1, 1, 2, 4])
        cut = sorted(r.sample(range(1, n), segs - 1)) if 1 < segs <= n \
            else []
        op = bp.OP_SEND if r.random() < 0.8 else OP_SEND_SE
        out, off = [], 0
        for end in cut + [n]:
            out.append(self.fpdu(bp.untagged(op, QN_SEND, self.msn[QN_SEND],
                                             off, end == n) + data[off:end]))
            off = end
        self.msn[QN_SEND] += 1
        self.credits -= 1
        self.st.c["sends"] += 1
        self.send(b"".join(out), len(out))
        return len(out)

    def atomic_fpdu(self, opcode, stag, to, msn=None, qn=QN_READ, mo=0,
                    last=True):
        r = self.rng
        req_id = r.getrandbits(32)
        u = bp.untagged(OP_ATOMIC_REQ, qn, self.msn[QN_READ] if msn is None
                        else msn, mo, last) + \
            struct.pack(">IIIQQQQQ", opcode, req_id, stag, to,
                        r.getrandbits(64), r.choice([0, 2 ** 64 - 1]),
                        r.getrandbits(64), 2 ** 64 - 1)
        return u, req_id

    def v_atomic(self):
        r = self.rng
        to = self.lane_lo + 8 * r.randrange(self.lane_len // 8)
        u, req_id = self.atomic_fpdu(r.choice([0, 2]), self.rw_key, to)
        self.msn[QN_READ] += 1
        self.pending.append(("atomic", req_id))
        self.send(self.fpdu(u))
        return 1

    def answer(self):
        """Answer the server's oldest READ or atomic request."""
        a = self.owed.popleft()
        self.kinds.append("answer " + a[0])
        if a[0] == "atomic":
            u = bp.untagged(OP_ATOMIC_RESP, QN_ARESP, self.msn[QN_ARESP]) + \
                struct.pack(">IQ", a[1], self.rng.getrandbits(64))
            self.msn[QN_ARESP] += 1
            self.st.c["answered atomics"] += 1
            self.send(self.fpdu(u))
            return 1
        _, stag, to, size = a
        data = self.rng.randbytes(size)
        out, off = [], 0
        while True:
            n = min(len(data) - off, self.rng.choice([1, 100, 1024, 4096]))
            last = off + n == len(data)
            out.append(self.fpdu(bp.tagged(OP_READ_RESP, stag, to + off,
                                           last) + data[off:off + n]))
            off += n
            if last:
                break
        self.st.c["answered reads"] += 1
        self.send(b"".join(out), len(out))
        return len(out)

    def junk(self):
        """After the stream broke: anything; srdma discards it."""
        r = self.rng
        self.kinds.append("junk")
        if r.random() < 0.5:
            u = r.randbytes(r.randrange(64))
        else:
            u = bp.tagged(bp.OP_WRITE, self.rw_key, self.lane_lo,
                          True) + r.randbytes(r.randrange(64))
        self.send(self.fpdu(u))
        return 1

    # ---- mutations: return FPDUs sent; set self.fatal ----
    def mutated(self):
        r = self.rng
        kinds = ["short", "ddp-version", "rdmap-version", "opcode",
                 "tagged-opcode", "dead-stag", "bounds", "ro-write",
                 "other-pd", "qn", "msn", "mo", "too-long", "no-buffer",
                 "send-inv", "read-huge", "read-dead", "read-other",
                 "terminate", "terminate-mo", "atomic", "atomic-resp",
                 "read-resp", "garbage", "length", "ird-flood", "stag0"]
        if self.crc:
            kinds += ["bad-crc"] * 3
        kind = r.choice(kinds)
        self.kinds.append("*" + kind)
        self.st.c["mut " + kind] += 1
        out, expect = getattr(self, "m_" + kind.replace("-", "_"))()
        if isinstance(out, bytes):
            out = [out]
        self.fatal = (kind, expect)
        self.send(b"".join(out), len(out), mutated=True)
        return len(out)

    def payload(self):
        return self.rng.randbytes(self.rng.randrange(1, 200))

    def m_bad_crc(self):
        u = bp.tagged(bp.OP_WRITE, self.rw_key, self.lane_lo) + self.payload()
        return self.fpdu(u, corrupt=True), T_CRC

    def m_short(self):
        r = self.rng
        if r.random() < 0.5:
            h = bp.tagged(bp.OP_WRITE, self.rw_key, self.lane_lo)
        else:
            h = bp.untagged(bp.OP_SEND, QN_SEND, self.msn[QN_SEND])
        n = r.randrange(len(h))
        b = struct.pack(">H", n) + h + r.randbytes(r.randrange(8))
        return b, T_SHORT

    def m_ddp_version(self):
        v = self.rng.choice([0, 2, 3])
        if self.rng.random() < 0.5:
            u = bytearray(bp.tagged(bp.OP_WRITE, self.rw_key, self.lane_lo))
            expect = T_DDP_T_VER
        else:
            u = bytearray(bp.untagged(bp.OP_SEND, QN_SEND,
                                      self.msn[QN_SEND]))
            expect = T_DDP_U_VER
        u[0] = (u[0] & ~3) | v
        return self.fpdu(bytes(u) + self.payload()), expect

    def m_rdmap_version(self):
        u = bytearray(bp.untagged(bp.OP_SEND, QN_SEND, self.msn[QN_SEND]))
        u[1] = (u[1] & 0x3F) | (self.rng.choice([0, 2, 3]) << 6)
        return self.fpdu(bytes(u) + self.payload()), T_VERSION

    def m_opcode(self):
        op = self.rng.choice([bp.OP_WRITE, OP_READ_RESP, 8, 9, 12, 13, 14,
                              15])
        u = bp.untagged(op, self.rng.randrange(4), 1) + self.payload()
        return self.fpdu(u), T_OPCODE

    def m_tagged_opcode(self):
        op = self.rng.choice([1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 15])
        u = bp.tagged(op, self.rw_key, self.lane_lo) + self.payload()
        return self.fpdu(u), T_OPCODE

    def m_dead_stag(self):
        stag = self.dead
        if self.rng.random() < 0.5:
            stag = self.rng.getrandbits(32)
            if stag in self.live:
                stag ^= 1
        u = bp.tagged(bp.OP_WRITE, stag, self.rw_addr) + self.payload()
        return self.fpdu(u), T_STAG

    def m_bounds(self):
        r = self.rng
        n = r.randrange(1, 300)
        base, end = self.rw_addr, self.rw_addr + self.rw_len
        to = r.choice([base - 1, base - n, end - n + 1, end, end + 4096,
                       2 ** 64 - n + 1, 2 ** 64 - 1, 0]) % 2 ** 64
        u = bp.tagged(bp.OP_WRITE, self.rw_key, to) + r.randbytes(n)
        return self.fpdu(u), T_BOUNDS

    def m_ro_write(self):
        u = bp.tagged(bp.OP_WRITE, self.ro_key, self.ro_addr) + self.payload()
        return self.fpdu(u), T_ACCESS

    def m_other_pd(self):
        u = bp.tagged(bp.OP_WRITE, self.ot_key, self.ot_addr) + self.payload()
        return self.fpdu(u), T_NOT_ASSOC

    def m_qn(self):
        qn = self.rng.choice([1, 2, 3, 4, 5, 0xFFFF, 0xFFFFFFFF])
        u = bp.untagged(bp.OP_SEND, qn, self.msn[QN_SEND]) + self.payload()
        if self.rng.random() < 0.3:
            u = bp.untagged(OP_READ_REQ, self.rng.choice([0, 2, 3, 7]),
                            self.msn[QN_READ]) + bytes(28)
        return self.fpdu(u), T_QN

    def m_msn(self):
        m = self.msn[QN_SEND]
        msn = self.rng.choice([m - 1, m + 1, m + 2 ** 31, 0, 2 ** 32 - 1])
        if msn == m:
            msn += 1
        u = bp.untagged(bp.OP_SEND, QN_SEND, msn % 2 ** 32) + self.payload()
        return self.fpdu(u), T_MSN

    def m_mo(self):
        r = self.rng
        mo = r.choice([1, 4, 1024, 2 ** 31, 2 ** 32 - 1])
        if r.random() < 0.5:
            u = bp.untagged(bp.OP_SEND, QN_SEND, self.msn[QN_SEND], mo) + \
                self.payload()
        elif r.random() < 0.5:
            # one-segment messages: MO 0 and the last flag
            u = bp.untagged(OP_READ_REQ, QN_READ, self.msn[QN_READ],
                            mo) + bytes(28)
        else:
            u = bp.untagged(OP_READ_REQ, QN_READ, self.msn[QN_READ],
                            0, False) + bytes(28)
        return self.fpdu(u), T_MO

    def m_too_long(self):
        if not self.credits:
            return self.m_no_buffer()
        r = self.rng
        n = self.recv_len + r.choice([1, 4, 1000, 30000])
        u = bp.untagged(bp.OP_SEND, QN_SEND, self.msn[QN_SEND]) + bytes(n)
        return self.fpdu(u), T_TOO_LONG

    def m_no_buffer(self):
        out = []
        while self.credits:
            out.append(self.fpdu(bp.untagged(bp.OP_SEND, QN_SEND,
                                             self.msn[QN_SEND])))
            self.msn[QN_SEND] += 1
            self.credits -= 1
        out.append(self.fpdu(bp.untagged(bp.OP_SEND, QN_SEND,
                                         self.msn[QN_SEND]) + b"x"))
        return out, T_NO_BUF

    def m_send_inv(self):
        if not self.credits:
            return self.m_no_buffer()
        r = self.rng
        stag = r.choice([self.rw_key, self.ro_key, self.ot_key, self.dead,
                         r.getrandbits(32), 0])
        op = r.choice([OP_SEND_INV, OP_SEND_SE_INV])
        u = bp.untagged(op, QN_SEND, self.msn[QN_SEND], inv=stag) + \
            self.payload()
        return self.fpdu(u), T_CANNOT_INV

    def rreq(self, stag, to, size):
        u = bp.untagged(OP_READ_REQ, QN_READ, self.msn[QN_READ]) + \
            struct.pack(">IQIIQ", 0, 0, size, stag, to)
        return self.fpdu(u)

    def m_read_huge(self):
        r = self.rng
        size = r.choice([2 ** 32 - 1, 2 ** 31, self.rw_len + 1,
                         r.randrange(self.rw_len + 1, 2 ** 32)])
        to = r.choice([self.rw_addr, self.rw_addr + self.rw_len - 1,
                       2 ** 64 - 1])
        return self.rreq(self.rw_key, to, size), T_R_BOUNDS

    def m_read_dead(self):
        return self.rreq(self.dead, self.rw_addr, 8), T_R_STAG

    def m_read_other(self):
        return self.rreq(self.ot_key, self.ot_addr, 8), T_R_NOT_ASSOC

    def m_stag0(self):
        """STag 0 and the other reserved-looking keys, any opcode."""
        r = self.rng
        stag = r.choice([0, 0xFF, 0xFFFFFFFF, self.rw_key & ~0xFF])
        if stag in self.live:
            stag ^= 0x100
        if r.random() < 0.5:
            return self.rreq(stag, self.rw_addr, 1), T_R_STAG
        u = bp.tagged(bp.OP_WRITE, stag, self.rw_addr) + self.payload()
        return self.fpdu(u), T_STAG

    def m_terminate(self):
        r = self.rng
        ctrl = struct.pack(">I", r.getrandbits(32))
        u = bp.untagged(bp.OP_TERMINATE, QN_TERM, self.msn[QN_TERM]) + ctrl
        u += r.randbytes(r.choice([0, 2, 18, 28, r.randrange(100)]))
        return self.fpdu(u), SILENT

    def m_terminate_mo(self):
        r = self.rng
        if r.random() < 0.5:
            u = bp.untagged(bp.OP_TERMINATE, QN_TERM, self.msn[QN_TERM],
                            r.randrange(1, 2 ** 32)) + bytes(4)
            return self.fpdu(u), T_MO
        u = bp.untagged(bp.OP_TERMINATE, QN_TERM, self.msn[QN_TERM] + 1) + \
            bytes(4)
        return self.fpdu(u), T_MSN

    def m_atomic(self):
        r = self.rng
        if not self.atomics:
            u, _ = self.atomic_fpdu(0, self.rw_key, self.lane_lo)
            return self.fpdu(u), T_OPCODE
        k = r.choice(["misaligned", "opcode", "ro", "bounds", "dead"])
        to = self.lane_lo
        if k == "misaligned":
            u, _ = self.atomic_fpdu(0, self.rw_key, to + r.randrange(1, 8))
            return self.fpdu(u), T_STREAM
        if k == "opcode":
            u, _ = self.atomic_fpdu(r.choice([1, 3, 4, 0xF]), self.rw_key, to)
            return self.fpdu(u), T_OPCODE
        if k == "ro":
            u, _ = self.atomic_fpdu(2, self.ro_key, self.ro_addr)
            return self.fpdu(u), T_ACCESS
        if k == "bounds":
            u, _ = self.atomic_fpdu(0, self.rw_key, self.rw_addr + self.rw_len)
            return self.fpdu(u), T_R_BOUNDS
        u, _ = self.atomic_fpdu(0, self.dead, self.rw_addr)
        return self.fpdu(u), T_R_STAG

    def settled(self):
        """The server has nothing outstanding with us: every request it
        makes has arrived and been answered."""
        return not self.srv_reqs and not self.owed

    def m_atomic_resp(self):
        # a request ID srdma never gave (its IDs count up from 0)
        req_id = self.rng.randrange(2 ** 31, 2 ** 32)
        u = bp.untagged(OP_ATOMIC_RESP, QN_ARESP, self.msn[QN_ARESP]) + \
            struct.pack(">IQ", req_id, 0)
        return self.fpdu(u), T_OPCODE

    def m_read_resp(self):
        r = self.rng
        if self.owed and self.owed[0][0] == "read":
            _, stag, to, size = self.owed[0]
            data = r.randbytes(size + r.choice([1, 8, 4096]))
            u = bp.tagged(OP_READ_RESP, stag, to, True) + data
            self.owed.popleft()
            return self.fpdu(u), T_BOUNDS
        u = bp.tagged(OP_READ_RESP, r.getrandbits(32), 0,
                      r.random() < 0.5) + self.payload()
        # srdma's oldest request is an atomic, or it has none
        sure = self.owed or self.settled()
        return self.fpdu(u), T_OPCODE if sure else None

    def m_garbage(self):
        r = self.rng
        return self.fpdu(r.randbytes(r.randrange(200))), None

    def m_length(self):
        """A valid WRITE whose MPA length says more or less than it is."""
        r = self.rng
        f = bytearray(self.fpdu(bp.tagged(bp.OP_WRITE, self.rw_key,
                                          self.lane_lo) + self.payload()))
        n = struct.unpack_from(">H", f)[0]
        n = r.choice([n + 1, n - 1, n + 4, 0, 0xFFFF, r.randrange(0x10000)])
        struct.pack_into(">H", f, 0, max(0, min(n, 0xFFFF)))
        return bytes(f), None

    def m_ird_flood(self):
        """More READ requests than srdma's 128 responses in flight, sent
        without reading: answered or refused, either is allowed."""
        out = []
        for _ in range(self.rng.randrange(100, 300)):
            out.append(self.rreq(self.rw_key, self.rw_addr, 0))
            self.msn[QN_READ] += 1
            self.pending.append(("read", 0, 0, bytearray(), b""))
        return out, None


class Fuzzer:
    def __init__(self, args):
        self.addr, self.port = args.addr, args.port
        self.seed, self.group = args.seed, args.group
        self.conns, self.fpdus = args.conns, args.fpdus
        self.stats = Stats()

    def run(self):
        st = self.stats
        active, lanes = [], list(range(LANES))
        opened = 0
        rng = random.Random(self.seed)
        t0 = time.monotonic()
        while True:
            want_more = opened < self.conns or st.c["fpdus"] < self.fpdus
            while want_more and len(active) < self.group:
                lane = lanes.pop()
                c = Conn(self, opened, lane)
                opened += 1
                left = max(self.fpdus - st.c["fpdus"], 0)
                per = left / max(self.conns - opened + 1, 1)
                n = max(1, int(per * rng.uniform(0.3, 1.7)))
                if c.connect():
                    active.append((c, c.run(n)))
                else:
                    lanes.append(lane)
                want_more = opened < self.conns or \
                    st.c["fpdus"] < self.fpdus
            if not active:
                break
            i = rng.randrange(len(active))
            c, gen = active[i]
            try:
                next(gen)
            except StopIteration:
                del active[i]
                lanes.append(c.lane)
        took = time.monotonic() - t0
        return took

    def report(self, took):
        c = self.stats.c
        print("seed %d: %d connections in %.0f s (MPA accepted %d, mutated "
              "%d, rejected %d, TCP refused %d)" %
              (self.seed, c["connections"], took, c["mpa_accepted"],
               c["mpa_mutated"], c["mpa_rejected"], c["connect_refused"]))
        print("FPDUs sent: %d (valid %d, mutated %d, after a mutation %d)" %
              (c["fpdus"], c["fpdus_valid"], c["fpdus_mutated"],
               c["fpdus_after_fatal"]))
        print("terminates received: %d; verdicts checked: %d" %
              (c["terminates"], c["verdicts"]))
        print("READs answered %d (verified %d), atomics answered %d, SENDs "
              "%d; the server's READs/atomics answered %d/%d" %
              (c["reads_answered"], c["reads_verified"],
               c["atomics_answered"], c["sends"], c["answered reads"],
               c["answered atomics"]))
        for k in sorted(c):
            if k.startswith(("terminate ", "mut ", "mpa ", "end ")):
                print("  %-24s %d" % (k, c[k]))
        # for the script: what srdma's counters must at least show
        print("totals: connections %d accepted %d crc %d fpdus %d "
              "terminates %d our_terminates %d bad_crc %d" %
              (c["connections"], c["mpa_accepted"], c["crc_connections"],
               c["fpdus"], c["terminates"], c["mut terminate"],
               c["mut bad-crc"]))
        for f in self.stats.failures:
            print("FAIL", f)
        print("failures: %d" % c["failures"])
        return 1 if c["failures"] else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("addr")
    ap.add_argument("port", type=int)
    ap.add_argument("-n", "--conns", type=int, default=100)
    ap.add_argument("-f", "--fpdus", type=int, default=10000)
    ap.add_argument("-s", "--seed", type=int, default=1)
    ap.add_argument("-g", "--group", type=int, default=4)
    args = ap.parse_args()
    args.group = max(1, min(args.group, LANES))
    if crc32c(b"123456789") != bp.crc32c(b"123456789"):
        print("table CRC32c differs from iwarp_bad_peer's")
        return 1
    bp.crc32c = crc32c      # bp.fpdu() looks it up at each call
    fz = Fuzzer(args)
    return fz.report(fz.run())


if __name__ == "__main__":
    sys.exit(main())
