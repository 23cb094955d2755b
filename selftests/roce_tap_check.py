#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A packet tap that reads late: capture RoCE v2 packets (IPv4, UDP 4791)
on one interface with a plain AF_PACKET socket, read none of them until a
file appears, then check each one's ICRC against its bytes as read now.

A tap's socket queues what it captured until the application reads it.
Were the queued packets to share pages with the sender's buffers
(sroce's zero-copy transmit), bytes the sender's consumer wrote after its
completion would show here, under an ICRC computed before: the stack must
copy a zero-copy packet's pages before it hands a tap a clone.

  roce_tap_check.py IFNAME UNTIL_FILE [MIN_PACKETS]

Prints the counts; exit 0 when at least MIN_PACKETS (default 1) RoCE
packets were captured and every ICRC matched.
"""
import os
import socket
import struct
import sys
import time
import zlib

ETH_P_ALL = 0x0003
ETH_P_IP = 0x0800
ROCE_PORT = 4791
BTH_LEN = 12
WAIT_S = 600


def icrc_ok(ip):
    """True if the IPv4 RoCE packet @ip (IP header to ICRC) is intact."""
    ihl = (ip[0] & 0x0f) * 4
    if len(ip) < ihl + 8 + BTH_LEN + 4:
        return False
    h = bytearray(ip[:ihl + 8 + BTH_LEN])
    h[1] = 0xff                        # TOS
    h[8] = 0xff                        # TTL
    h[10] = h[11] = 0xff               # header checksum
    h[ihl + 6] = h[ihl + 7] = 0xff     # UDP checksum
    h[ihl + 8 + 4] = 0xff              # BTH: FECN, BECN, resv6
    crc = zlib.crc32(b'\xff' * 8 + bytes(h) + ip[ihl + 8 + BTH_LEN:-4])
    return crc == struct.unpack('<I', ip[-4:])[0]


def roce_ipv4(frame):
    """The IP packet in Ethernet @frame if it is IPv4 RoCE v2, else None."""
    if len(frame) < 14 + 20 or struct.unpack('!H', frame[12:14])[0] != ETH_P_IP:
        return None
    ip = frame[14:]
    if ip[0] >> 4 != 4 or ip[9] != socket.IPPROTO_UDP:
        return None
    ihl = (ip[0] & 0x0f) * 4
    total = struct.unpack('!H', ip[2:4])[0]
    if total > len(ip) or total < ihl + 8:
        return None
    if struct.unpack('!H', ip[ihl + 2:ihl + 4])[0] != ROCE_PORT:
        return None
    return ip[:total]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    ifname, until = sys.argv[1], sys.argv[2]
    least = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                      socket.htons(ETH_P_ALL))
    # SO_RCVBUFFORCE: room for every packet of the transfer, unread
    s.setsockopt(socket.SOL_SOCKET, 33, 256 << 20)
    s.bind((ifname, 0))
    print('tap: capturing on %s' % ifname, flush=True)
    deadline = time.monotonic() + WAIT_S
    while not os.path.exists(until):
        if time.monotonic() > deadline:
            sys.exit('tap: %s never appeared' % until)
        time.sleep(0.2)
    s.setblocking(False)
    seen = bad = 0
    while True:
        try:
            frame = s.recv(65536)
        except BlockingIOError:
            break
        ip = roce_ipv4(frame)
        if ip is None:
            continue
        seen += 1
        if not icrc_ok(ip):
            bad += 1
    print('tap: %d RoCE packets read after the transfer, %d with a wrong ICRC'
          % (seen, bad))
    sys.exit(0 if seen >= least and not bad else 1)


if __name__ == '__main__':
    main()
