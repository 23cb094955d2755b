/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iWARP wire formats: MPA connection frames (RFC 5044, RFC 6581), the
 * MPA FPDU framing, DDP tagged and untagged headers (RFC 5041), RDMAP
 * opcodes, Read Request and Terminate (RFC 5040) and the atomic
 * extensions (RFC 7306). All multi-byte fields are big endian.
 */
#ifndef IWARP_WIRE_H
#define IWARP_WIRE_H

#include <linux/types.h>

/* MPA Request/Reply frame: key, flags, revision, private data length. */
#define MPA_KEY_LEN		16
#define MPA_KEY_REQ		"MPA ID Req Frame"
#define MPA_KEY_REP		"MPA ID Rep Frame"
#define MPA_MAX_PRIV_DATA	512

struct mpa_frame {
	u8 key[MPA_KEY_LEN];
	u8 flags;
	u8 rev;
	__be16 pd_len;
} __packed;

#define MPA_FLAG_MARKERS	0x80
#define MPA_FLAG_CRC		0x40
#define MPA_FLAG_REJECT		0x20
#define MPA_FLAG_ENHANCED	0x10	/* RFC 6581: IRD/ORD in private data */
/*
 * srdma's own use of two reserved bits: a request offering RFC 7306
 * atomics sets OFFER, and only an srdma responder answers with ACCEPT.
 * Peers that echo the request's flags (siw does) never set ACCEPT, so
 * they are never sent an atomic.
 */
#define MPA_FLAG_SRDMA_ATOMIC_OFFER	0x02
#define MPA_FLAG_SRDMA_ATOMIC_ACCEPT	0x01

#define MPA_REV1		1
#define MPA_REV2		2

/* RFC 6581 enhanced connection set-up: first 4 bytes of private data. */
struct mpa_v2_params {
	__be16 ird;
	__be16 ord;
} __packed;

#define MPA_V2_PEER_TO_PEER	0x8000	/* in ird */
#define MPA_V2_ZERO_LEN_RTR	0x4000	/* in ird */
#define MPA_V2_WRITE_RTR	0x8000	/* in ord */
#define MPA_V2_READ_RTR		0x4000	/* in ord */
#define MPA_V2_IRD_ORD_MASK	0x3fff

/* FPDU: 2-byte ULPDU length, ULPDU, pad to 4 bytes, CRC32c. */
#define MPA_LEN_SIZE		2
#define MPA_CRC_SIZE		4

/* Pad after a ULPDU of @ulpdu_len bytes: length field + ULPDU + pad is 4n. */
static inline u32 mpa_pad(u32 ulpdu_len)
{
	return (4 - ((MPA_LEN_SIZE + ulpdu_len) & 3)) & 3;
}

/* DDP control byte and RDMAP control byte (first two ULPDU bytes). */
#define DDP_TAGGED		0x80
#define DDP_LAST		0x40
#define DDP_VERSION_MASK	0x03
#define DDP_VERSION		1
#define RDMAP_VERSION_MASK	0xc0
#define RDMAP_VERSION		0x40	/* version 1 in bits 7:6 */
#define RDMAP_OPCODE_MASK	0x0f

enum rdmap_opcode {
	RDMAP_WRITE		= 0x0,
	RDMAP_READ_REQ		= 0x1,
	RDMAP_READ_RESP		= 0x2,
	RDMAP_SEND		= 0x3,
	RDMAP_SEND_INV		= 0x4,
	RDMAP_SEND_SE		= 0x5,
	RDMAP_SEND_SE_INV	= 0x6,
	RDMAP_TERMINATE		= 0x7,
	RDMAP_IMM_DATA		= 0x8,	/* RFC 7306 */
	RDMAP_IMM_DATA_SE	= 0x9,
	RDMAP_ATOMIC_REQ	= 0xa,
	RDMAP_ATOMIC_RESP	= 0xb,
};

/* Untagged queue numbers. */
enum ddp_qn {
	DDP_QN_SEND		= 0,
	DDP_QN_READ_REQ		= 1,	/* and RFC 7306 Atomic Requests */
	DDP_QN_TERMINATE	= 2,
	DDP_QN_ATOMIC_RESP	= 3,	/* RFC 7306 */
	DDP_QN_COUNT		= 4,
};

struct ddp_tagged_hdr {
	u8 ddp;
	u8 rdmap;
	__be32 stag;
	__be64 to;
} __packed;

struct ddp_untagged_hdr {
	u8 ddp;
	u8 rdmap;
	__be32 ulp;		/* Send with Invalidate: the STag */
	__be32 qn;
	__be32 msn;
	__be32 mo;
} __packed;

/* RDMAP Read Request, after the untagged header (QN 1). */
struct rdmap_read_req {
	__be32 sink_stag;
	__be64 sink_to;
	__be32 size;
	__be32 src_stag;
	__be64 src_to;
} __packed;

/* RFC 7306 Atomic Request, after the untagged header (QN 1). */
struct rdmap_atomic_req {
	__be32 opcode;		/* low 4 bits: enum rdmap_atomic_op */
	__be32 req_id;
	__be32 stag;
	__be64 to;
	__be64 add_or_swap;
	__be64 add_or_swap_mask;
	__be64 compare;
	__be64 compare_mask;
} __packed;

enum rdmap_atomic_op {
	RDMAP_ATOMIC_FETCH_ADD	= 0x0,
	RDMAP_ATOMIC_CMP_SWAP	= 0x2,
};

/* RFC 7306 Atomic Response, after the untagged header (QN 3). */
struct rdmap_atomic_resp {
	__be32 req_id;
	__be64 orig;
} __packed;

/* Terminate control word, after the untagged header (QN 2). */
struct rdmap_term {
	__be32 ctrl;
} __packed;

#define TERM_LAYER_SHIFT	28
#define TERM_ETYPE_SHIFT	24
#define TERM_CODE_SHIFT		16
#define TERM_FLAG_M		0x8000	/* MPA length field follows */
#define TERM_FLAG_D		0x4000	/* DDP header follows */
#define TERM_FLAG_R		0x2000	/* RDMAP header follows */

enum term_layer {
	TERM_LAYER_RDMAP	= 0,
	TERM_LAYER_DDP		= 1,
	TERM_LAYER_LLP		= 2,
};

/* RDMAP error types and codes. */
#define TERM_RDMAP_CATASTROPHIC		0
#define TERM_RDMAP_PROTECTION		1
#define TERM_RDMAP_OPERATION		2
#define TERM_RDMAP_INVALID_STAG		0x00
#define TERM_RDMAP_BASE_BOUNDS		0x01
#define TERM_RDMAP_ACCESS		0x02
#define TERM_RDMAP_STAG_NOT_ASSOC	0x03
#define TERM_RDMAP_TO_WRAP		0x04
#define TERM_RDMAP_VERSION		0x05
#define TERM_RDMAP_OPCODE		0x06
#define TERM_RDMAP_STREAM		0x07
#define TERM_RDMAP_GLOBAL		0x08
#define TERM_RDMAP_CANNOT_INV		0x09
#define TERM_RDMAP_UNSPECIFIED		0xff

/* DDP error types and codes. */
#define TERM_DDP_CATASTROPHIC		0
#define TERM_DDP_TAGGED			1
#define TERM_DDP_UNTAGGED		2
#define TERM_DDP_T_INVALID_STAG		0x00
#define TERM_DDP_T_BASE_BOUNDS		0x01
#define TERM_DDP_T_NOT_ASSOC		0x02
#define TERM_DDP_T_TO_WRAP		0x03
#define TERM_DDP_T_VERSION		0x04
#define TERM_DDP_U_INVALID_QN		0x01
#define TERM_DDP_U_NO_BUFFER		0x02
#define TERM_DDP_U_MSN_RANGE		0x03
#define TERM_DDP_U_INVALID_MO		0x04
#define TERM_DDP_U_TOO_LONG		0x05
#define TERM_DDP_U_VERSION		0x06

/* LLP (MPA) error codes, error type 0 (RFC 5044 section 8, RFC 6581). */
#define TERM_LLP_CLOSED			0x01
#define TERM_LLP_CRC			0x02
#define TERM_LLP_MARKER			0x03
#define TERM_LLP_BAD_REQ_REP		0x04
#define TERM_LLP_CATASTROPHIC		0x05

#endif /* IWARP_WIRE_H */
