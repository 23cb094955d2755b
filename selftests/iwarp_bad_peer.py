#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A misbehaving iWARP peer for srdma's tests: a raw TCP server that does
a valid MPA exchange with an rping client, takes the client's first SEND
(rping's buffer advertisement: address, rkey, size), then breaks the
protocol in one of several ways and checks what comes back.

  iwarp_bad_peer.py ADDR PORT CASE

CASE: bad-crc, bad-stag, out-of-bounds, bad-opcode (expect a Terminate
with the RFC's layer/type/code, then the connection closing), reset (send
a TCP RST), silent (never answer the MPA request). Exit 0 when the peer
saw what RFC 5040/5041/5044 say it must.
"""
import socket
import struct
import sys

MPA_REQ = b"MPA ID Req Frame"
MPA_REP = b"MPA ID Rep Frame"
CRC = 0x40
ENHANCED = 0x10
DDP_TAGGED, DDP_LAST, DDP_V1 = 0x80, 0x40, 0x01
RDMAP_V1 = 0x40
OP_WRITE, OP_SEND, OP_TERMINATE = 0, 3, 7

# case: (want MPA CRC, expected terminate (layer, etype, code))
CASES = {
    "bad-crc": (True, (2, 0, 0x02)),        # LLP/MPA: CRC error
    "bad-stag": (False, (1, 1, 0x00)),      # DDP tagged: invalid STag
    "out-of-bounds": (False, (1, 1, 0x01)),  # DDP tagged: base/bounds
    "bad-opcode": (False, (0, 2, 0x06)),    # RDMAP remote op: opcode
    "reset": (False, None),
    "silent": (False, None),
}


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

    if case == "reset":
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
        print("sent RST")
        return 0
    if case == "bad-crc":
        bad = fpdu(untagged(OP_SEND, 0, 1) + b"x" * 16, crc, corrupt=True)
    elif case == "bad-stag":
        bad = fpdu(tagged(OP_WRITE, rkey ^ 0x5A5A5A00, buf) + b"x" * 16, crc)
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


if __name__ == "__main__":
    sys.exit(main())
