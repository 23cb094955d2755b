// SPDX-License-Identifier: GPL-2.0
/*
 * Self-tests of iWARP's pure logic: MPA frame header checks and the
 * negotiation of a request and a reply (mpa.c) on endpoints that have no
 * socket, the DDP/RDMAP header length of each opcode (rx.c) and FPDU
 * framing with its pad and CRC32c (tx.c) against FPDUs computed outside
 * the kernel.
 */
#include <linux/slab.h>

#include "../iwarp/iwarp.h"
#include "selftest.h"

struct srdma_st_mpa {
	const char *what;
	const char *key;	/* the frame's key */
	const char *want_key;	/* the key the receiver expects */
	u8 rev;
	u16 pd_len;
	int want;		/* pd_len or -EPROTO */
};

static const struct srdma_st_mpa srdma_st_mpa_cases[] __initconst = {
	{ "request, rev 1", MPA_KEY_REQ, MPA_KEY_REQ, 1, 0, 0 },
	{ "request, rev 2", MPA_KEY_REQ, MPA_KEY_REQ, 2, 4, 4 },
	{ "reply, rev 2", MPA_KEY_REP, MPA_KEY_REP, 2, 0, 0 },
	{ "request, 255 bytes + IRD/ORD", MPA_KEY_REQ, MPA_KEY_REQ, 2, 259,
	  259 },
	{ "request, 260 bytes", MPA_KEY_REQ, MPA_KEY_REQ, 2, 260, -EPROTO },
	{ "reply, 512 bytes", MPA_KEY_REP, MPA_KEY_REP, 1, 512, -EPROTO },
	{ "request, 0xffff bytes", MPA_KEY_REQ, MPA_KEY_REQ, 1, 0xffff,
	  -EPROTO },
	{ "request, 0x8000 bytes", MPA_KEY_REQ, MPA_KEY_REQ, 1, 0x8000,
	  -EPROTO },
	{ "reply key on a request", MPA_KEY_REP, MPA_KEY_REQ, 1, 0, -EPROTO },
	{ "request key on a reply", MPA_KEY_REQ, MPA_KEY_REP, 1, 0, -EPROTO },
	{ "key, last byte wrong", "MPA ID Req Framf", MPA_KEY_REQ, 1, 0,
	  -EPROTO },
	{ "key, first byte wrong", "mPA ID Req Frame", MPA_KEY_REQ, 1, 0,
	  -EPROTO },
	{ "revision 0", MPA_KEY_REQ, MPA_KEY_REQ, 0, 0, -EPROTO },
	{ "revision 3", MPA_KEY_REQ, MPA_KEY_REQ, 3, 0, -EPROTO },
	{ "revision 255", MPA_KEY_REP, MPA_KEY_REP, 255, 0, -EPROTO },
};

/* Room for the most private data a frame may carry, for every case. */
static u8 *srdma_st_pdata __initdata;

/* An MPA frame as iwarp_mpa_recv_frame leaves it in @ep. */
static void __init srdma_st_frame(struct iwarp_ep *ep, u8 rev, u8 flags,
				  u16 ird, u16 ord, const char *pd, u16 pd_len)
{
	struct mpa_v2_params v2 = {
		.ird = cpu_to_be16(ird),
		.ord = cpu_to_be16(ord),
	};
	u16 off = 0;

	ep->mpa.rev = rev;
	ep->mpa.flags = flags;
	ep->mpa.pd_len = cpu_to_be16(pd_len);
	ep->pdata = srdma_st_pdata;
	memset(ep->pdata, 'x', MPA_MAX_PRIV_DATA);
	if (rev == MPA_REV2 && (flags & MPA_FLAG_ENHANCED) &&
	    pd_len >= sizeof(v2)) {
		memcpy(ep->pdata, &v2, sizeof(v2));
		off = sizeof(v2);
	}
	if (pd)
		memcpy(ep->pdata + off, pd, strlen(pd));
	ep->pd_len = pd_len;
}

/* The passive side's reading of a request: iwarp_mpa_take_request. */
static void __init srdma_st_mpa_request(struct srdma_st *st,
					struct iwarp_ep *ep)
{
	const u8 offer = MPA_FLAG_SRDMA_ATOMIC_OFFER;
	const u8 enh = MPA_FLAG_ENHANCED;
	int err;

	memset(ep, 0, sizeof(*ep));
	srdma_st_frame(ep, MPA_REV1, 0, 0, 0, NULL, 0);
	err = iwarp_mpa_take_request(ep);
	ST_CHECK(st, !err && !ep->enhanced && ep->rev == MPA_REV1 &&
		 ep->conn.ird == 1 && ep->conn.ord == 1 &&
		 !ep->conn.atomics && ep->conn.crc == srdma_iw_crc,
		 "request rev 1: %d, IRD %u ORD %u", err, ep->conn.ird,
		 ep->conn.ord);

	memset(ep, 0, sizeof(*ep));
	srdma_st_frame(ep, MPA_REV2, enh | MPA_FLAG_CRC | offer,
		       MPA_V2_PEER_TO_PEER | 5, 3, "hi", 6);
	err = iwarp_mpa_take_request(ep);
	ST_CHECK(st, !err && ep->enhanced && ep->conn.ird == 3 &&
		 ep->conn.ord == 5 && ep->conn.crc && ep->conn.atomics &&
		 ep->req_flags == (enh | MPA_FLAG_CRC | offer) &&
		 ep->pd_len == 2 && !memcmp(ep->pdata, "hi", 2),
		 "request rev 2, IRD 5 ORD 3 + 2 bytes: %d, IRD %u ORD %u, %u bytes",
		 err, ep->conn.ird, ep->conn.ord, ep->pd_len);

	memset(ep, 0, sizeof(*ep));
	srdma_st_frame(ep, MPA_REV2, enh, 0x3fff, 0xffff, NULL, 4);
	err = iwarp_mpa_take_request(ep);
	ST_CHECK(st, !err && ep->conn.ird == IWARP_MAX_IRD &&
		 ep->conn.ord == IWARP_MAX_ORD && ep->pd_len == 0,
		 "request IRD/ORD above the limits: %d, IRD %u ORD %u", err,
		 ep->conn.ird, ep->conn.ord);

	memset(ep, 0, sizeof(*ep));
	srdma_st_frame(ep, MPA_REV2, enh, 0, 0, NULL, 2);
	err = iwarp_mpa_take_request(ep);
	ST_CHECK(st, err == -EPROTO, "request rev 2 without IRD/ORD: %d", err);

	memset(ep, 0, sizeof(*ep));
	srdma_st_frame(ep, MPA_REV1, enh, 0, 0, "abcd", 4);
	err = iwarp_mpa_take_request(ep);
	ST_CHECK(st, !err && !ep->enhanced && ep->pd_len == 4 &&
		 !memcmp(ep->pdata, "abcd", 4) && ep->conn.ird == 1,
		 "request rev 1 with the enhanced flag: %d, %u bytes", err,
		 ep->pd_len);

	memset(ep, 0, sizeof(*ep));
	srdma_st_frame(ep, MPA_REV2, enh, 1, 1, NULL, 259);
	err = iwarp_mpa_take_request(ep);
	ST_CHECK(st, !err && ep->pd_len == 255,
		 "request rev 2, IRD/ORD + 255 bytes: %d", err);

	memset(ep, 0, sizeof(*ep));
	srdma_st_frame(ep, MPA_REV1, 0, 0, 0, NULL, 256);
	err = iwarp_mpa_take_request(ep);
	ST_CHECK(st, err == -EPROTO, "request rev 1, 256 bytes: %d", err);

	memset(ep, 0, sizeof(*ep));
	srdma_st_frame(ep, MPA_REV1, MPA_FLAG_MARKERS | offer, 0, 0, NULL, 0);
	err = iwarp_mpa_take_request(ep);
	ST_CHECK(st, err == -EOPNOTSUPP && !ep->conn.atomics,
		 "request with markers: %d", err);
}

/* The active side's reading of a reply: iwarp_mpa_take_reply. */
static void __init srdma_st_mpa_reply(struct srdma_st *st, struct iwarp_ep *ep)
{
	const u8 enh = MPA_FLAG_ENHANCED, rej = MPA_FLAG_REJECT;
	const u8 accept = MPA_FLAG_SRDMA_ATOMIC_ACCEPT;
	const struct iwarp_conn ours = { .ird = 2, .ord = 8 };
	bool rejected;
	int err;

	memset(ep, 0, sizeof(*ep));
	ep->enhanced = true;
	srdma_st_frame(ep, MPA_REV2, enh | rej, 1, 1, "no", 6);
	err = iwarp_mpa_take_reply(ep, &rejected);
	ST_CHECK(st, err == -ECONNREFUSED && rejected && ep->pd_len == 2 &&
		 !memcmp(ep->pdata, "no", 2),
		 "reject rev 2 + 2 bytes: %d, %u bytes", err, ep->pd_len);

	memset(ep, 0, sizeof(*ep));
	ep->enhanced = true;
	srdma_st_frame(ep, MPA_REV2, enh | rej, 0, 0, NULL, 2);
	err = iwarp_mpa_take_reply(ep, &rejected);
	ST_CHECK(st, err == -ECONNREFUSED && rejected && !ep->pd_len,
		 "reject rev 2 without IRD/ORD: %d, %u bytes", err,
		 ep->pd_len);

	memset(ep, 0, sizeof(*ep));
	srdma_st_frame(ep, MPA_REV1, rej, 0, 0, "abc", 3);
	err = iwarp_mpa_take_reply(ep, &rejected);
	ST_CHECK(st, err == -ECONNREFUSED && rejected && ep->pd_len == 3,
		 "reject rev 1 + 3 bytes: %d, %u bytes", err, ep->pd_len);

	memset(ep, 0, sizeof(*ep));
	srdma_st_frame(ep, MPA_REV1, rej, 0, 0, NULL, 259);
	err = iwarp_mpa_take_reply(ep, &rejected);
	ST_CHECK(st, err == -ECONNREFUSED && rejected && !ep->pd_len,
		 "reject with 259 bytes passes none: %d, %u bytes", err,
		 ep->pd_len);

	memset(ep, 0, sizeof(*ep));
	srdma_st_frame(ep, MPA_REV1, MPA_FLAG_MARKERS, 0, 0, NULL, 0);
	err = iwarp_mpa_take_reply(ep, &rejected);
	ST_CHECK(st, err == -EPROTO && !rejected, "reply with markers: %d",
		 err);

	memset(ep, 0, sizeof(*ep));
	ep->enhanced = true;
	srdma_st_frame(ep, MPA_REV1, 0, 0, 0, NULL, 0);
	err = iwarp_mpa_take_reply(ep, &rejected);
	ST_CHECK(st, err == -EPROTO, "rev 1 reply to a rev 2 request: %d",
		 err);

	memset(ep, 0, sizeof(*ep));
	ep->enhanced = true;
	srdma_st_frame(ep, MPA_REV2, 0, 0, 0, NULL, 4);
	err = iwarp_mpa_take_reply(ep, &rejected);
	ST_CHECK(st, err == -EPROTO, "rev 2 reply without the enhanced flag: %d",
		 err);

	memset(ep, 0, sizeof(*ep));
	ep->enhanced = true;
	srdma_st_frame(ep, MPA_REV2, enh, 0, 0, NULL, 2);
	err = iwarp_mpa_take_reply(ep, &rejected);
	ST_CHECK(st, err == -EPROTO, "rev 2 reply without IRD/ORD: %d", err);

	/* our ORD falls to the peer's IRD; our IRD rises to its ORD */
	memset(ep, 0, sizeof(*ep));
	ep->enhanced = true;
	ep->conn = ours;
	srdma_st_frame(ep, MPA_REV2, enh, MPA_V2_PEER_TO_PEER | 4,
		       MPA_V2_READ_RTR | 6, NULL, 4);
	err = iwarp_mpa_take_reply(ep, &rejected);
	ST_CHECK(st, !err && !rejected && ep->conn.ord == 4 &&
		 ep->conn.ird == 6 && !ep->pd_len,
		 "reply IRD 4 ORD 6 to IRD 2 ORD 8: %d, IRD %u ORD %u", err,
		 ep->conn.ird, ep->conn.ord);

	memset(ep, 0, sizeof(*ep));
	ep->enhanced = true;
	ep->conn = ours;
	srdma_st_frame(ep, MPA_REV2, enh, 0x3fff, 0x3fff, NULL, 4);
	err = iwarp_mpa_take_reply(ep, &rejected);
	ST_CHECK(st, !err && ep->conn.ord == 8 && ep->conn.ird == IWARP_MAX_IRD,
		 "reply IRD/ORD above the limits: %d, IRD %u ORD %u", err,
		 ep->conn.ird, ep->conn.ord);

	/* CRC if either side asked; atomics only if offered and accepted */
	memset(ep, 0, sizeof(*ep));
	srdma_st_frame(ep, MPA_REV1, MPA_FLAG_CRC, 0, 0, NULL, 0);
	err = iwarp_mpa_take_reply(ep, &rejected);
	ST_CHECK(st, !err && ep->conn.crc, "reply asks for CRC: %d", err);

	memset(ep, 0, sizeof(*ep));
	ep->conn.crc = true;
	srdma_st_frame(ep, MPA_REV1, 0, 0, 0, NULL, 0);
	err = iwarp_mpa_take_reply(ep, &rejected);
	ST_CHECK(st, !err && ep->conn.crc, "we asked for CRC: %d", err);

	memset(ep, 0, sizeof(*ep));
	srdma_st_frame(ep, MPA_REV1, 0, 0, 0, NULL, 0);
	err = iwarp_mpa_take_reply(ep, &rejected);
	ST_CHECK(st, !err && !ep->conn.crc && !ep->conn.atomics,
		 "nobody asked for CRC: %d", err);

	memset(ep, 0, sizeof(*ep));
	ep->conn.atomics = true;
	srdma_st_frame(ep, MPA_REV1, accept, 0, 0, NULL, 0);
	err = iwarp_mpa_take_reply(ep, &rejected);
	ST_CHECK(st, !err && ep->conn.atomics, "atomics accepted: %d", err);

	memset(ep, 0, sizeof(*ep));
	ep->conn.atomics = true;
	srdma_st_frame(ep, MPA_REV1, MPA_FLAG_SRDMA_ATOMIC_OFFER, 0, 0, NULL,
		       0);
	err = iwarp_mpa_take_reply(ep, &rejected);
	ST_CHECK(st, !err && !ep->conn.atomics,
		 "offer echoed back is no accept: %d", err);

	memset(ep, 0, sizeof(*ep));
	srdma_st_frame(ep, MPA_REV1, accept, 0, 0, NULL, 0);
	err = iwarp_mpa_take_reply(ep, &rejected);
	ST_CHECK(st, !err && !ep->conn.atomics,
		 "accept of atomics never offered: %d", err);

	memset(ep, 0, sizeof(*ep));
	srdma_st_frame(ep, MPA_REV1, 0, 0, 0, NULL, 256);
	err = iwarp_mpa_take_reply(ep, &rejected);
	ST_CHECK(st, err == -EPROTO, "reply with 256 bytes: %d", err);
}

void __init srdma_st_mpa(struct srdma_st *st)
{
	const struct srdma_st_mpa *c;
	struct mpa_frame f;
	struct iwarp_ep *ep;
	unsigned int i;
	int got;

	for (i = 0; i < ARRAY_SIZE(srdma_st_mpa_cases); i++) {
		c = &srdma_st_mpa_cases[i];
		memcpy(f.key, c->key, MPA_KEY_LEN);
		f.flags = MPA_FLAG_CRC | MPA_FLAG_ENHANCED;
		f.rev = c->rev;
		f.pd_len = cpu_to_be16(c->pd_len);
		got = iwarp_mpa_check_hdr(&f, c->want_key);
		ST_CHECK(st, got == c->want, "%s: %d, want %d", c->what, got,
			 c->want);
	}

	ep = kmalloc(sizeof(*ep), GFP_KERNEL);
	srdma_st_pdata = kmalloc(MPA_MAX_PRIV_DATA, GFP_KERNEL);
	if (ST_ALLOCATED(st, ep) && ST_ALLOCATED(st, srdma_st_pdata)) {
		srdma_st_mpa_request(st, ep);
		srdma_st_mpa_reply(st, ep);
	}
	kfree(srdma_st_pdata);
	srdma_st_pdata = NULL;
	kfree(ep);
}

/* RFC 5041 4.2/4.3, RFC 5040 4.4-4.6, RFC 7306 5.2, with the length field */
static int __init srdma_st_want_hdr_len(bool tagged, u8 op)
{
	if (tagged)
		return op == RDMAP_WRITE || op == RDMAP_READ_RESP ?
		       2 + 14 : -EPROTO;
	switch (op) {
	case RDMAP_SEND:
	case RDMAP_SEND_INV:
	case RDMAP_SEND_SE:
	case RDMAP_SEND_SE_INV:
		return 2 + 18;
	case RDMAP_READ_REQ:
		return 2 + 18 + 28;
	case RDMAP_TERMINATE:
		return 2 + 18 + 4;
	case RDMAP_ATOMIC_REQ:
		return 2 + 18 + 52;
	case RDMAP_ATOMIC_RESP:
		return 2 + 18 + 12;
	default:	/* WRITE and READ_RESP untagged, immediate data, 0xc-f */
		return -EPROTO;
	}
}

static void __init srdma_st_hdr_len(struct srdma_st *st)
{
	static const u8 ddp_bits[] __initconst = { 0, DDP_LAST | DDP_VERSION };
	static const u8 rdmap_bits[] __initconst = { 0, RDMAP_VERSION, 0xf0 };
	unsigned int t, d, r;
	int got, want;
	u8 op;

	for (t = 0; t < 2; t++)
		for (op = 0; op <= RDMAP_OPCODE_MASK; op++)
			for (d = 0; d < ARRAY_SIZE(ddp_bits); d++)
				for (r = 0; r < ARRAY_SIZE(rdmap_bits); r++) {
					u8 ddp = ddp_bits[d] | (t ? DDP_TAGGED : 0);
					u8 rdmap = rdmap_bits[r] | op;

					want = srdma_st_want_hdr_len(t, op);
					got = iwarp_rx_hdr_len(ddp, rdmap);
					ST_CHECK(st, got == want,
						 "header length, DDP %#x RDMAP %#x: %d, want %d",
						 ddp, rdmap, got, want);
				}
}

/*
 * Two FPDUs as they go on the wire, their CRC32c computed outside the
 * kernel (a bitwise CRC32c over length field, ULPDU and pad, stored
 * least significant byte first as RFC 5044 4.1 and RFC 3720 B.4 show).
 */
static const u8 srdma_st_fpdu_send[] __initconst = {
	0x00, 0x17,				/* ULPDU length 23 */
	0x41, 0x43,				/* last; RDMAP v1 SEND */
	0x00, 0x00, 0x00, 0x00,			/* reserved */
	0x00, 0x00, 0x00, 0x00,			/* QN 0 */
	0x00, 0x00, 0x00, 0x01,			/* MSN 1 */
	0x00, 0x00, 0x00, 0x00,			/* MO 0 */
	's', 'r', 'd', 'm', 'a',
	0x00, 0x00, 0x00,			/* pad */
	0xb6, 0x56, 0x10, 0xfa,			/* CRC */
};

static const u8 srdma_st_fpdu_write[] __initconst = {
	0x00, 0x12,				/* ULPDU length 18 */
	0x81, 0x40,				/* tagged; RDMAP v1 WRITE */
	0xde, 0xad, 0xbe, 0x01,			/* STag */
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,	/* TO */
	0x00, 0x01, 0x02, 0x03,			/* payload, no pad */
	0x91, 0x15, 0x19, 0x40,			/* CRC */
};

static void __init srdma_st_seal(struct srdma_st *st, const char *what,
				 const u8 *want, u32 len, u8 *buf)
{
	u32 ulpdu = get_unaligned_be16(want);
	u32 got;

	/* the ULPDU as tx.c writes it; stale bytes where pad and CRC go */
	memset(buf, 0xaa, 64);
	memcpy(buf + MPA_LEN_SIZE, want + MPA_LEN_SIZE, ulpdu);
	got = iwarp_fpdu_seal(buf, ulpdu, true);
	ST_CHECK(st, got == len && !memcmp(buf, want, len),
		 "%s with CRC: length %u, want %u; %*ph", what, got, len,
		 (int)min(got, 64U), buf);

	memset(buf, 0xaa, 64);
	memcpy(buf + MPA_LEN_SIZE, want + MPA_LEN_SIZE, ulpdu);
	got = iwarp_fpdu_seal(buf, ulpdu, false);
	ST_CHECK(st, got == len &&
		 !memcmp(buf, want, len - MPA_CRC_SIZE) &&
		 !get_unaligned_le32(buf + len - MPA_CRC_SIZE),
		 "%s without CRC: length %u, want %u, CRC field zero", what,
		 got, len);
}

void __init srdma_st_fpdu(struct srdma_st *st)
{
	u32 n, pad;
	u8 *buf;

	srdma_st_hdr_len(st);

	for (n = 0; n < 16; n++) {
		pad = mpa_pad(n);
		ST_CHECK(st, pad < 4 && !((MPA_LEN_SIZE + n + pad) & 3),
			 "pad after a %u-byte ULPDU: %u", n, pad);
	}
	ST_CHECK(st, mpa_pad(0xffff) == 3, "pad after the longest ULPDU");

	buf = kmalloc(64, GFP_KERNEL);
	if (!ST_ALLOCATED(st, buf))
		return;
	srdma_st_seal(st, "untagged SEND, 5 bytes", srdma_st_fpdu_send,
		      sizeof(srdma_st_fpdu_send), buf);
	srdma_st_seal(st, "tagged WRITE, 4 bytes", srdma_st_fpdu_write,
		      sizeof(srdma_st_fpdu_write), buf);
	kfree(buf);
}
