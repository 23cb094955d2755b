/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RoCEv2 wire format: the InfiniBand transport headers (IBTA Vol. 1,
 * chapter 9.2-9.4) carried in UDP to port 4791 (Annex A17).
 * All multi-byte fields are big-endian on the wire.
 */
#ifndef SRDMA_ROCE_WIRE_H
#define SRDMA_ROCE_WIRE_H

#include <linux/types.h>

#define ROCE_UDP_PORT		4791
#define ROCE_ICRC_BYTES		4
#define ROCE_PSN_MASK		0xffffff
#define ROCE_QPN_MASK		0xffffff
#define ROCE_MCAST_QPN		0xffffff
#define ROCE_DEFAULT_PKEY	0xffff
#define ROCE_GSI_QKEY		0x80010000

/* 9.2 Base Transport Header */
struct roce_bth {
	u8 opcode;
	u8 flags;		/* SE:1 M:1 PadCnt:2 TVer:4 */
	__be16 pkey;
	__be32 qpn;		/* F:1 B:1 resv:6 DestQP:24 */
	__be32 apsn;		/* AckReq:1 resv:7 PSN:24 */
} __packed;

#define ROCE_BTH_SE		0x80
#define ROCE_BTH_MIG		0x40
#define ROCE_BTH_PAD_SHIFT	4
#define ROCE_BTH_PAD_MASK	0x30
#define ROCE_BTH_TVER_MASK	0x0f
#define ROCE_BTH_ACKREQ		0x80000000
/* bits of the qpn word the ICRC does not cover (FECN, BECN, resv6) */
#define ROCE_BTH_RESV8A		0xff000000
#define ROCE_BTH_BECN		0x40000000

/* 9.3.3 RDMA Extended Transport Header */
struct roce_reth {
	__be64 va;
	__be32 rkey;
	__be32 len;
} __packed;

/* 9.3.5 ACK Extended Transport Header */
struct roce_aeth {
	__be32 smsn;		/* Syndrome:8 MSN:24 */
} __packed;

#define ROCE_AETH_ACK		0x00	/* low 5 bits: credit count */
#define ROCE_AETH_RNR_NAK	0x20	/* low 5 bits: RNR timer code */
#define ROCE_AETH_NAK		0x60	/* low 5 bits: NAK code below */
#define ROCE_AETH_TYPE_MASK	0xe0
#define ROCE_AETH_CREDIT_INVALID 0x1f

enum roce_nak_code {
	ROCE_NAK_PSN_SEQ = 0,
	ROCE_NAK_INVALID_REQ = 1,
	ROCE_NAK_REMOTE_ACCESS = 2,
	ROCE_NAK_REMOTE_OP = 3,
	ROCE_NAK_INVALID_RD_REQ = 4,
};

/* 9.3.4 Atomic Extended Transport Header */
struct roce_atmeth {
	__be64 va;
	__be32 rkey;
	__be64 swap_add;
	__be64 compare;
} __packed;

/* 9.3.6 Atomic Acknowledge Extended Transport Header */
struct roce_atmack {
	__be64 orig;
} __packed;

/* 9.3.2 Datagram Extended Transport Header */
struct roce_deth {
	__be32 qkey;
	__be32 sqpn;		/* resv:8 SrcQP:24 */
} __packed;

/* 9.3.1 Immediate data, 9.3.7 Invalidate ETH: one 32-bit word each */
struct roce_immdt {
	__be32 imm;
} __packed;

struct roce_ieth {
	__be32 rkey;
} __packed;

/* 9.2 opcodes: transport service in the top three bits */
#define ROCE_OP_RC		0x00
#define ROCE_OP_UC		0x20
#define ROCE_OP_UD		0x60
#define ROCE_OP_SERVICE_MASK	0xe0

enum roce_op {
	ROCE_SEND_FIRST = 0x00,
	ROCE_SEND_MIDDLE = 0x01,
	ROCE_SEND_LAST = 0x02,
	ROCE_SEND_LAST_IMM = 0x03,
	ROCE_SEND_ONLY = 0x04,
	ROCE_SEND_ONLY_IMM = 0x05,
	ROCE_WRITE_FIRST = 0x06,
	ROCE_WRITE_MIDDLE = 0x07,
	ROCE_WRITE_LAST = 0x08,
	ROCE_WRITE_LAST_IMM = 0x09,
	ROCE_WRITE_ONLY = 0x0a,
	ROCE_WRITE_ONLY_IMM = 0x0b,
	ROCE_READ_REQ = 0x0c,
	ROCE_READ_RESP_FIRST = 0x0d,
	ROCE_READ_RESP_MIDDLE = 0x0e,
	ROCE_READ_RESP_LAST = 0x0f,
	ROCE_READ_RESP_ONLY = 0x10,
	ROCE_ACK = 0x11,
	ROCE_ATOMIC_ACK = 0x12,
	ROCE_CMP_SWAP = 0x13,
	ROCE_FETCH_ADD = 0x14,
	ROCE_SEND_LAST_INV = 0x16,
	ROCE_SEND_ONLY_INV = 0x17,
	ROCE_ATOMIC_WRITE = 0x1d,	/* IBTA 1.5: RETH + 8 bytes */
	ROCE_OP_MAX = 0x20,
};

/*
 * A17.9.2 Congestion Notification Packet: a BTH with this opcode (the
 * CNP service 100b, opcode 00001b), BECN set and DestQP the QP whose
 * packets were marked, then 16 reserved bytes, then the ICRC.
 */
#define ROCE_OP_CNP		0x81
#define ROCE_CNP_RSVD_BYTES	16

#endif /* SRDMA_ROCE_WIRE_H */
