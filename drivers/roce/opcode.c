// SPDX-License-Identifier: GPL-2.0
/*
 * What each InfiniBand transport opcode carries (IBTA Vol. 1, 9.4):
 * one table instead of switches spread over the data path. Indexed by the
 * low five bits; the service (RC/UC/UD) is checked separately.
 */
#include "roce.h"

#define BTH	sizeof(struct roce_bth)
#define RETH	sizeof(struct roce_reth)
#define AETH	sizeof(struct roce_aeth)
#define IMM	sizeof(struct roce_immdt)
#define IETH	sizeof(struct roce_ieth)
#define ATMETH	sizeof(struct roce_atmeth)
#define ATMACK	sizeof(struct roce_atmack)

#define OP(f, len) { .flags = (f) | ROCE_F_VALID, .hdr_len = (len) }

const struct roce_opinfo roce_ops[ROCE_OP_MAX] = {
	[ROCE_SEND_FIRST] = OP(ROCE_F_SEND | ROCE_F_PAYLOAD | ROCE_F_FIRST, BTH),
	[ROCE_SEND_MIDDLE] = OP(ROCE_F_SEND | ROCE_F_PAYLOAD | ROCE_F_MIDDLE,
				BTH),
	[ROCE_SEND_LAST] = OP(ROCE_F_SEND | ROCE_F_PAYLOAD | ROCE_F_LAST, BTH),
	[ROCE_SEND_LAST_IMM] = OP(ROCE_F_SEND | ROCE_F_PAYLOAD | ROCE_F_LAST |
				  ROCE_F_IMM, BTH + IMM),
	[ROCE_SEND_ONLY] = OP(ROCE_F_SEND | ROCE_F_PAYLOAD | ROCE_F_FIRST |
			      ROCE_F_LAST, BTH),
	[ROCE_SEND_ONLY_IMM] = OP(ROCE_F_SEND | ROCE_F_PAYLOAD | ROCE_F_FIRST |
				  ROCE_F_LAST | ROCE_F_IMM, BTH + IMM),
	[ROCE_SEND_LAST_INV] = OP(ROCE_F_SEND | ROCE_F_PAYLOAD | ROCE_F_LAST |
				  ROCE_F_IETH, BTH + IETH),
	[ROCE_SEND_ONLY_INV] = OP(ROCE_F_SEND | ROCE_F_PAYLOAD | ROCE_F_FIRST |
				  ROCE_F_LAST | ROCE_F_IETH, BTH + IETH),
	[ROCE_WRITE_FIRST] = OP(ROCE_F_WRITE | ROCE_F_PAYLOAD | ROCE_F_FIRST |
				ROCE_F_RETH, BTH + RETH),
	[ROCE_WRITE_MIDDLE] = OP(ROCE_F_WRITE | ROCE_F_PAYLOAD | ROCE_F_MIDDLE,
				 BTH),
	[ROCE_WRITE_LAST] = OP(ROCE_F_WRITE | ROCE_F_PAYLOAD | ROCE_F_LAST, BTH),
	[ROCE_WRITE_LAST_IMM] = OP(ROCE_F_WRITE | ROCE_F_PAYLOAD | ROCE_F_LAST |
				   ROCE_F_IMM, BTH + IMM),
	[ROCE_WRITE_ONLY] = OP(ROCE_F_WRITE | ROCE_F_PAYLOAD | ROCE_F_FIRST |
			       ROCE_F_LAST | ROCE_F_RETH, BTH + RETH),
	[ROCE_WRITE_ONLY_IMM] = OP(ROCE_F_WRITE | ROCE_F_PAYLOAD |
				   ROCE_F_FIRST | ROCE_F_LAST | ROCE_F_RETH |
				   ROCE_F_IMM, BTH + RETH + IMM),
	[ROCE_READ_REQ] = OP(ROCE_F_READ | ROCE_F_RETH | ROCE_F_FIRST |
			     ROCE_F_LAST, BTH + RETH),
	[ROCE_READ_RESP_FIRST] = OP(ROCE_F_RESP | ROCE_F_PAYLOAD | ROCE_F_FIRST |
				    ROCE_F_AETH, BTH + AETH),
	[ROCE_READ_RESP_MIDDLE] = OP(ROCE_F_RESP | ROCE_F_PAYLOAD |
				     ROCE_F_MIDDLE, BTH),
	[ROCE_READ_RESP_LAST] = OP(ROCE_F_RESP | ROCE_F_PAYLOAD | ROCE_F_LAST |
				   ROCE_F_AETH, BTH + AETH),
	[ROCE_READ_RESP_ONLY] = OP(ROCE_F_RESP | ROCE_F_PAYLOAD | ROCE_F_FIRST |
				   ROCE_F_LAST | ROCE_F_AETH, BTH + AETH),
	[ROCE_ACK] = OP(ROCE_F_RESP | ROCE_F_AETH, BTH + AETH),
	[ROCE_ATOMIC_ACK] = OP(ROCE_F_RESP | ROCE_F_AETH | ROCE_F_ATMACK,
			       BTH + AETH + ATMACK),
	[ROCE_CMP_SWAP] = OP(ROCE_F_ATOMIC | ROCE_F_ATMETH | ROCE_F_FIRST |
			     ROCE_F_LAST, BTH + ATMETH),
	[ROCE_FETCH_ADD] = OP(ROCE_F_ATOMIC | ROCE_F_ATMETH | ROCE_F_FIRST |
			      ROCE_F_LAST, BTH + ATMETH),
};
