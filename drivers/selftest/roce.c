// SPDX-License-Identifier: GPL-2.0
/*
 * Self-tests of RoCEv2's pure logic: PSN arithmetic, the ICRC against
 * packets whose ICRC was computed outside the kernel, roce_parse on
 * good and malformed packets, and the DCQCN rate arithmetic.
 */
#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/udp.h>

#include "../roce/roce.h"
#include "selftest.h"

/* psn_add and psn_diff, and the window tests built on them, at the wrap */
void __init srdma_st_psn(struct srdma_st *st)
{
	static const u32 bases[] __initconst = {
		0, 1, 0x7fffff, 0x800000, 0xfffffe, 0xffffff,
	};
	static const u32 steps[] __initconst = {
		0, 1, 2, 255, 256, 0x7ffffe, 0x7fffff,
	};
	unsigned int i, j;

	ST_CHECK(st, psn_add(0xfffffe, 1) == 0xffffff, "0xfffffe + 1");
	ST_CHECK(st, psn_add(0xffffff, 1) == 0, "0xffffff + 1 wraps to 0");
	ST_CHECK(st, psn_add(0xffffff, 0x1000000) == 0xffffff,
		 "adding 2^24 is the identity");
	ST_CHECK(st, psn_add(0x800000, 0x800000) == 0, "2^23 + 2^23");
	ST_CHECK(st, psn_add(0x123456, 0xff000000) == 0x123456,
		 "bits above 24 of the step are dropped");
	ST_CHECK(st, psn_diff(0, 0xffffff) == 1, "0 is one after 0xffffff");
	ST_CHECK(st, psn_diff(0xffffff, 0) == -1, "0xffffff is one before 0");
	ST_CHECK(st, psn_diff(0x7fffff, 0) == 0x7fffff, "largest positive");
	ST_CHECK(st, psn_diff(0x800000, 0) == -0x800000,
		 "half the space away is behind");
	ST_CHECK(st, psn_diff(0x1abcdef, 0xabcdef) == 0,
		 "bits above 24 are ignored");
	/* responder resources: laps, epsn, resource lap, first, last, dup */
	ST_CHECK(st, psn_lap_holds(0, 100, 0, 50, 60, 55), "inside, same lap");
	ST_CHECK(st, psn_lap_holds(0, 100, 0, 50, 60, 50), "at its first PSN");
	ST_CHECK(st, psn_lap_holds(0, 100, 0, 50, 60, 60), "at its last PSN");
	ST_CHECK(st, !psn_lap_holds(0, 100, 0, 50, 60, 61), "one past its last");
	ST_CHECK(st, !psn_lap_holds(0, 100, 0, 50, 60, 49), "one before its first");
	ST_CHECK(st, psn_lap_holds(1, 10, 0, 0xfffff0, 0xffffff, 0xfffff5),
		 "epsn wrapped since: still the resource's");
	ST_CHECK(st, psn_lap_holds(1, 10, 0, 0xfffff0, 4, 2),
		 "a range across the wrap, past it");
	ST_CHECK(st, psn_lap_holds(1, 10, 0, 0xfffff0, 4, 0xfffff1),
		 "a range across the wrap, before it");
	ST_CHECK(st, !psn_lap_holds(1, 100, 0, 50, 60, 55),
		 "the same PSNs a lap later: another request");
	ST_CHECK(st, !psn_lap_holds(0, 5, 0, 0xfffff0, 0xffffff, 0xfffffa),
		 "a PSN before the count began");
	ST_CHECK(st, psn_lap_holds(0, 0x800010, 0, 0x10, 0x80000f, 0x10),
		 "a 2^23-PSN READ, retried from its start");
	ST_CHECK(st, psn_lap_holds(2, 0x400000, 1, 0xc00000, 0x3fffff, 0x200000),
		 "a 2^23-PSN READ across the wrap, retried from its middle");
	for (i = 0; i < ARRAY_SIZE(bases); i++) {
		for (j = 0; j < ARRAY_SIZE(steps); j++) {
			u32 a = bases[i], n = steps[j], b = psn_add(a, n);

			ST_CHECK(st, psn_diff(b, a) == (s32)n &&
				 psn_diff(a, b) == -(s32)n,
				 "psn_diff(%#x + %#x, %#x) = %d", a, n, a,
				 psn_diff(b, a));
		}
	}
	/*
	 * The requester's window, as req.c and comp.c test it: a PSN is
	 * outstanding when una <= psn < next, across the wrap.
	 */
	for (i = 0; i < ARRAY_SIZE(bases); i++) {
		u32 una = bases[i], next = psn_add(una, 256);
		u32 in[] = { una, psn_add(una, 255) };
		u32 out[] = { psn_add(una, 0xffffff), next,
			      psn_add(una, 0x800000) };

		for (j = 0; j < ARRAY_SIZE(in); j++)
			ST_CHECK(st, psn_diff(in[j], una) >= 0 &&
				 psn_diff(in[j], next) < 0,
				 "%#x in window [%#x, %#x)", in[j], una, next);
		for (j = 0; j < ARRAY_SIZE(out); j++)
			ST_CHECK(st, psn_diff(out[j], una) < 0 ||
				 psn_diff(out[j], next) >= 0,
				 "%#x outside window [%#x, %#x)", out[j], una,
				 next);
	}
}

/*
 * Two packets as they leave the IP layer, ICRC included. The ICRCs were
 * computed outside the kernel (Python's zlib.crc32) over eight 0xff
 * bytes, then the packet with the variant fields (IPv4 ToS, TTL and
 * checksum; IPv6 traffic class, flow label and hop limit; the UDP
 * checksum; the BTH's FECN/BECN/resv6 byte) set to ones (IBTA A17.8.1).
 */
static const u8 srdma_st_pkt4[] __initconst = {
	0x45, 0x00, 0x00, 0x34, 0x12, 0x34, 0x40, 0x00,
	0x40, 0x11, 0x00, 0x00, 0xc0, 0x00, 0x02, 0x01,
	0xc0, 0x00, 0x02, 0x02, 0xc0, 0x00, 0x12, 0xb7,
	0x00, 0x20, 0x00, 0x00, 0x04, 0x30, 0xff, 0xff,
	0x00, 0x00, 0x00, 0x11, 0x80, 0xab, 0xcd, 0xef,
	0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x00, 0x00, 0x00,
	0x32, 0x1b, 0x02, 0x15,
};

static const u8 srdma_st_pkt6[] __initconst = {
	0x61, 0x23, 0x45, 0x67, 0x00, 0x28, 0x11, 0x40,
	0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
	0xc0, 0x01, 0x12, 0xb7, 0x00, 0x28, 0x12, 0x34,
	0x64, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x22,
	0x00, 0x00, 0x00, 0x01, 0x80, 0x01, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x01, 0x52, 0x44, 0x4d, 0x41,
	0x74, 0x65, 0x73, 0x74, 0x9b, 0x99, 0x22, 0x05,
};

#define ST_V4_IB	(sizeof(struct iphdr) + sizeof(struct udphdr))
#define ST_V6_IB	(sizeof(struct ipv6hdr) + sizeof(struct udphdr))
#define ST_V4_ICRC	0x15021b32
#define ST_V6_ICRC	0x0522999b

/*
 * An skb holding @len bytes of @pkt from the IP header on, its data at
 * the BTH @ib bytes in, as srdma_roce_rcv hands it to roce_parse.
 */
static struct sk_buff *__init srdma_st_skb(const u8 *pkt, u32 len, u32 ib,
					   bool ipv6)
{
	struct sk_buff *skb = alloc_skb(len, GFP_KERNEL);

	if (!skb)
		return NULL;
	skb_put_data(skb, pkt, len);
	skb_reset_network_header(skb);
	skb->protocol = htons(ipv6 ? ETH_P_IPV6 : ETH_P_IP);
	__skb_pull(skb, ib);
	return skb;
}

/* The ICRC by the spec's rules, on a copy of the whole packet. */
static u32 __init srdma_st_icrc_spec(const u8 *pkt, u32 len, bool ipv6)
{
	static const u8 lrh[8] __initconst = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	u32 ib = ipv6 ? ST_V6_IB : ST_V4_IB;
	u8 buf[ST_V6_IB + sizeof(struct roce_bth)];
	u32 crc;

	if (len < ib + sizeof(struct roce_bth) + ROCE_ICRC_BYTES)
		return 0;
	/* the fields the ICRC masks are all in the IP, UDP and BT headers */
	memcpy(buf, pkt, ib + sizeof(struct roce_bth));
	if (ipv6) {
		buf[0] |= 0x0f;		/* traffic class, flow label */
		memset(buf + 1, 0xff, 3);
		buf[7] = 0xff;		/* hop limit */
	} else {
		buf[1] = 0xff;		/* ToS */
		buf[8] = 0xff;		/* TTL */
		buf[10] = 0xff;		/* header checksum */
		buf[11] = 0xff;
	}
	buf[ib - 2] = 0xff;		/* UDP checksum */
	buf[ib - 1] = 0xff;
	buf[ib + 4] = 0xff;		/* BTH: FECN, BECN, resv6 */
	crc = crc32_le(~0U, lrh, sizeof(lrh));
	crc = crc32_le(crc, buf, ib + sizeof(struct roce_bth));
	crc = crc32_le(crc, pkt + ib + sizeof(struct roce_bth),
		       len - ib - sizeof(struct roce_bth) - ROCE_ICRC_BYTES);
	return ~crc;
}

/* roce_icrc_ok on @pkt with byte @off xor-ed with @flip (none if 0). */
static int __init srdma_st_icrc_flip(const u8 *pkt, u32 len, bool ipv6,
				     u32 off, u8 flip)
{
	struct roce_pkt p = { .ipv6 = ipv6 };
	struct sk_buff *skb;
	int ok;

	skb = srdma_st_skb(pkt, len, ipv6 ? ST_V6_IB : ST_V4_IB, ipv6);
	if (!skb)
		return -ENOMEM;
	skb_network_header(skb)[off] ^= flip;
	p.skb = skb;
	ok = roce_icrc_ok(&p);
	kfree_skb(skb);
	return ok;
}

struct srdma_st_flip {
	const char *what;
	u8 off;
	u8 flip;
};

/* Fields the ICRC leaves out (changed by routers): the ICRC still holds. */
static const struct srdma_st_flip srdma_st_v4_variant[] __initconst = {
	{ "IPv4 ToS", 1, 0xb8 },
	{ "IPv4 TTL", 8, 0x3f },
	{ "IPv4 header checksum", 10, 0x5a },
	{ "UDP checksum", 27, 0x01 },
	{ "BTH FECN", ST_V4_IB + 4, 0x80 },
	{ "BTH BECN", ST_V4_IB + 4, 0x40 },
};

static const struct srdma_st_flip srdma_st_v6_variant[] __initconst = {
	{ "IPv6 traffic class", 0, 0x0f },
	{ "IPv6 traffic class, low bits", 1, 0xf0 },
	{ "IPv6 flow label", 3, 0xff },
	{ "IPv6 hop limit", 7, 0x01 },
	{ "UDP checksum", 47, 0x80 },
};

/* Fields the ICRC covers: any change is caught. */
static const struct srdma_st_flip srdma_st_v4_covered[] __initconst = {
	{ "IPv4 source address", 15, 0x01 },
	{ "IPv4 destination address", 19, 0x01 },
	{ "IPv4 total length", 3, 0x04 },
	{ "UDP source port", 20, 0x01 },
	{ "BTH opcode", ST_V4_IB, 0x01 },
	{ "BTH SE bit", ST_V4_IB + 1, 0x80 },
	{ "BTH P_Key", ST_V4_IB + 2, 0x80 },
	{ "BTH destination QP", ST_V4_IB + 7, 0x01 },
	{ "BTH AckReq", ST_V4_IB + 8, 0x80 },
	{ "BTH PSN", ST_V4_IB + 11, 0x01 },
	{ "payload", ST_V4_IB + 12, 0x20 },
	{ "pad byte", ST_V4_IB + 19, 0x01 },
	{ "ICRC", ST_V4_IB + 20, 0x01 },
	{ "ICRC, last byte", ST_V4_IB + 23, 0x80 },
};

static const struct srdma_st_flip srdma_st_v6_covered[] __initconst = {
	{ "IPv6 version", 0, 0x10 },
	{ "IPv6 payload length", 5, 0x04 },
	{ "IPv6 next header", 6, 0x01 },
	{ "IPv6 source address", 23, 0x01 },
	{ "IPv6 destination address", 39, 0x02 },
	{ "UDP destination port", 43, 0x01 },
	{ "DETH Q_Key", ST_V6_IB + 12, 0x01 },
	{ "DETH source QP", ST_V6_IB + 19, 0x01 },
	{ "payload, last byte", ST_V6_IB + 27, 0x01 },
};

static void __init srdma_st_icrc_one(struct srdma_st *st, const char *name,
				     const u8 *pkt, u32 len, bool ipv6,
				     u32 want,
				     const struct srdma_st_flip *variant,
				     unsigned int nvariant,
				     const struct srdma_st_flip *covered,
				     unsigned int ncovered)
{
	unsigned int i;
	int ok;

	ST_CHECK(st, get_unaligned_le32(pkt + len - ROCE_ICRC_BYTES) == want,
		 "%s: the vector carries its ICRC", name);
	ST_CHECK(st, srdma_st_icrc_spec(pkt, len, ipv6) == want,
		 "%s: ICRC by the spec's rules %#x, want %#x", name,
		 srdma_st_icrc_spec(pkt, len, ipv6), want);
	ok = srdma_st_icrc_flip(pkt, len, ipv6, 0, 0);
	ST_CHECK(st, ok == 1, "%s: roce_icrc_ok on the packet: %d", name, ok);
	for (i = 0; i < nvariant; i++) {
		ok = srdma_st_icrc_flip(pkt, len, ipv6, variant[i].off,
					variant[i].flip);
		ST_CHECK(st, ok == 1, "%s: %s changed: ICRC must hold (%d)",
			 name, variant[i].what, ok);
	}
	for (i = 0; i < ncovered; i++) {
		ok = srdma_st_icrc_flip(pkt, len, ipv6, covered[i].off,
					covered[i].flip);
		ST_CHECK(st, ok == 0, "%s: %s changed: ICRC must fail (%d)",
			 name, covered[i].what, ok);
	}
}

/*
 * roce_crc32() is crc32_le() by whichever implementation it runs (the
 * crypto API's accelerated one where crc32.c takes it): every length
 * around the crypto threshold and the 16-byte folding, at every
 * alignment, on bytes that differ from each other.
 */
static void __init srdma_st_crc32(struct srdma_st *st)
{
	static const u32 lens[] __initconst = {
		0, 1, 15, 64, 79, 80, 255, 256, 257, 271, 1024, 1037, 4096,
		4111,
	};
	const u32 max = 4111 + 16;
	u32 i, a, x = 2463534242U, bad = 0, cases = 0;
	u8 *buf;

	buf = kmalloc(max, GFP_KERNEL);
	if (!ST_ALLOCATED(st, buf))
		return;
	for (i = 0; i < max; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = x;
	}
	roce_crc32_init();
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		for (a = 0; a < 16; a++) {
			u32 seed = a ? x + a : ~0U;

			cases++;
			if (roce_crc32(seed, buf + a, lens[i]) !=
			    crc32_le(seed, buf + a, lens[i]))
				bad++;
		}
	}
	ST_CHECK(st, !bad, "roce_crc32 (%s) differs from crc32_le in %u of %u cases",
		 roce_crc32_impl(), bad, cases);
	roce_crc32_exit();
	kfree(buf);
}

/* The packet's first @head bytes in the skb's head, the rest in a page. */
static struct sk_buff *__init srdma_st_skb_paged(const u8 *pkt, u32 len,
						 u32 head)
{
	struct sk_buff *skb = alloc_skb(head, GFP_KERNEL);
	struct page *page = alloc_page(GFP_KERNEL);

	if (!skb || !page || len - head > PAGE_SIZE) {
		kfree_skb(skb);
		if (page)
			__free_page(page);
		return NULL;
	}
	skb_put_data(skb, pkt, head);
	memcpy(page_address(page), pkt + head, len - head);
	skb_add_rx_frag(skb, 0, page, 0, len - head, PAGE_SIZE);
	skb_reset_network_header(skb);
	skb->protocol = htons(ETH_P_IP);
	__skb_pull(skb, ST_V4_IB);
	return skb;
}

struct srdma_st_gather {
	u8 *buf;
	u32 pieces;
};

static int __init srdma_st_gather_piece(void *arg, u32 off, const void *buf,
					u32 n)
{
	struct srdma_st_gather *g = arg;

	memcpy(g->buf + off, buf, n);
	g->pieces++;
	return 0;
}

/*
 * A packet whose payload a NIC left in pages (virtio-net at a jumbo MTU
 * does): its ICRC is checked and its payload read where it lies, the
 * same bytes as from one buffer, and a flipped byte in the page fails it.
 */
static void __init srdma_st_icrc_paged(struct srdma_st *st)
{
	const u32 paylen = 1000, ib = ST_V4_IB;
	const u32 len = ib + sizeof(struct roce_bth) + paylen + ROCE_ICRC_BYTES;
	const u32 head = ib + sizeof(struct roce_bth) + 100;
	struct srdma_st_gather g = { };
	struct roce_pkt p = { };
	struct sk_buff *skb;
	struct iphdr *ip4;
	struct udphdr *uh;
	u8 *pkt, *frag;
	int err;
	u32 i;

	pkt = kzalloc(len, GFP_KERNEL);
	g.buf = kzalloc(paylen, GFP_KERNEL);
	if (!ST_ALLOCATED(st, pkt) || !ST_ALLOCATED(st, g.buf))
		goto out;
	ip4 = (struct iphdr *)pkt;
	ip4->version = 4;
	ip4->ihl = 5;
	ip4->tot_len = htons(len);
	ip4->ttl = 64;
	ip4->protocol = IPPROTO_UDP;
	ip4->saddr = htonl(0xc0000201);
	ip4->daddr = htonl(0xc0000202);
	uh = (struct udphdr *)(ip4 + 1);
	uh->source = htons(49152);
	uh->dest = htons(ROCE_UDP_PORT);
	uh->len = htons(len - sizeof(*ip4));
	roce_fill_bth((void *)(uh + 1), ROCE_OP_RC | ROCE_SEND_ONLY, paylen,
		      0x11, 0x123, ROCE_FILL_ACKREQ);
	for (i = 0; i < paylen; i++)
		pkt[ib + sizeof(struct roce_bth) + i] = i * 7 + 3;
	put_unaligned_le32(srdma_st_icrc_spec(pkt, len, false),
			   pkt + len - ROCE_ICRC_BYTES);

	skb = srdma_st_skb_paged(pkt, len, head);
	if (!ST_ALLOCATED(st, skb))
		goto out;
	p.skb = skb;
	ST_CHECK(st, skb_is_nonlinear(skb) && roce_icrc_ok(&p),
		 "paged packet: ICRC checked in place");
	frag = skb_frag_address(&skb_shinfo(skb)->frags[0]);
	frag[500] ^= 0x10;
	ST_CHECK(st, !roce_icrc_ok(&p),
		 "paged packet: a flipped byte in its page fails the ICRC");
	frag[500] ^= 0x10;

	err = roce_parse(&p);
	ST_CHECK(st, !err && !p.payload && p.paylen == paylen &&
		 p.payoff == sizeof(struct roce_bth),
		 "paged packet: parsed (%d), payload of %u left in place", err,
		 p.paylen);
	err = roce_pkt_payload_each(&p, srdma_st_gather_piece, &g);
	ST_CHECK(st, !err && g.pieces == 2 &&
		 !memcmp(g.buf, pkt + ib + sizeof(struct roce_bth), paylen),
		 "paged packet: payload read in %u pieces (%d), byte for byte",
		 g.pieces, err);
	kfree_skb(skb);
out:
	kfree(g.buf);
	kfree(pkt);
}

void __init srdma_st_icrc(struct srdma_st *st)
{
	struct roce_bth bth;
	struct roce_pkt p = { };
	struct sk_buff *skb;
	int err;

	/* the requester's BTH for this packet is the vector's, byte for byte */
	roce_fill_bth(&bth, ROCE_OP_RC | ROCE_SEND_ONLY, 5, 0x11, 0xabcdef,
		      ROCE_FILL_ACKREQ);
	ST_CHECK(st, !memcmp(&bth, srdma_st_pkt4 + ST_V4_IB, sizeof(bth)),
		 "roce_fill_bth: RC SEND_ONLY, 5 bytes, AckReq");

	srdma_st_crc32(st);
	srdma_st_icrc_paged(st);
	srdma_st_icrc_one(st, "IPv4 RC SEND_ONLY", srdma_st_pkt4,
			  sizeof(srdma_st_pkt4), false, ST_V4_ICRC,
			  srdma_st_v4_variant, ARRAY_SIZE(srdma_st_v4_variant),
			  srdma_st_v4_covered, ARRAY_SIZE(srdma_st_v4_covered));
	srdma_st_icrc_one(st, "IPv6 UD SEND_ONLY", srdma_st_pkt6,
			  sizeof(srdma_st_pkt6), true, ST_V6_ICRC,
			  srdma_st_v6_variant, ARRAY_SIZE(srdma_st_v6_variant),
			  srdma_st_v6_covered, ARRAY_SIZE(srdma_st_v6_covered));

	/*
	 * A bad ICRC is a different drop from a malformed packet: the parser
	 * takes the packet (not RX_DROP_MALFORMED), the ICRC check refuses it
	 * (RX_BAD_CRC).
	 */
	skb = srdma_st_skb(srdma_st_pkt4, sizeof(srdma_st_pkt4), ST_V4_IB,
			   false);
	if (!ST_ALLOCATED(st, skb))
		return;
	skb->data[12] ^= 1;
	p.skb = skb;
	err = roce_parse(&p);
	ST_CHECK(st, !err && !roce_icrc_ok(&p),
		 "corrupted payload: parsed (%d), then refused by the ICRC",
		 err);
	kfree_skb(skb);
}

/* One packet for roce_parse, built from the BTH on. */
struct srdma_st_rx {
	const char *what;
	u8 opcode;
	u8 pad;			/* PadCnt */
	u8 tver;
	u16 len;		/* from the BTH to the end, ICRC included */
	s16 paylen;		/* accepted: the payload length; -1: refused */
	u8 payload;		/* accepted: its offset from the BTH */
};

#define RC(op)	(ROCE_OP_RC | ROCE_##op)
#define UC(op)	(ROCE_OP_UC | ROCE_##op)
#define UD(op)	(ROCE_OP_UD | ROCE_##op)

static const struct srdma_st_rx srdma_st_rx_cases[] __initconst = {
	/* accepted */
	{ "RC SEND_ONLY, 5 bytes", RC(SEND_ONLY), 3, 0, 24, 5, 12 },
	{ "RC SEND_ONLY, pad 3 of 4 bytes", RC(SEND_ONLY), 3, 0, 20, 1, 12 },
	{ "RC SEND_ONLY, empty", RC(SEND_ONLY), 0, 0, 16, 0, 12 },
	{ "RC WRITE_ONLY_IMM, 8 bytes", RC(WRITE_ONLY_IMM), 0, 0, 44, 8, 32 },
	{ "RC READ_REQ", RC(READ_REQ), 0, 0, 32, 0, 28 },
	{ "RC ACK", RC(ACK), 0, 0, 20, 0, 16 },
	{ "RC ATOMIC_ACK", RC(ATOMIC_ACK), 0, 0, 28, 0, 24 },
	{ "RC CMP_SWAP", RC(CMP_SWAP), 0, 0, 44, 0, 40 },
	{ "RC SEND_LAST_INV, 4 bytes", RC(SEND_LAST_INV), 0, 0, 24, 4, 16 },
	{ "UC SEND_FIRST, 256 bytes", UC(SEND_FIRST), 0, 0, 12 + 256 + 4, 256, 12 },
	{ "UD SEND_ONLY, 4 bytes", UD(SEND_ONLY), 0, 0, 28, 4, 20 },
	{ "UD SEND_ONLY_IMM, empty", UD(SEND_ONLY_IMM), 0, 0, 28, 0, 24 },
	/* malformed */
	{ "shorter than BTH and ICRC", RC(SEND_ONLY), 0, 0, 12, -1 },
	{ "BTH and 3 bytes", RC(SEND_ONLY), 0, 0, 15, -1 },
	{ "empty", RC(SEND_ONLY), 0, 0, 0, -1 },
	{ "reserved opcode 0x15", ROCE_OP_RC | 0x15, 0, 0, 16, -1 },
	{ "reserved opcode 0x1f", ROCE_OP_RC | 0x1f, 0, 0, 16, -1 },
	{ "RD service", 0x40 | ROCE_SEND_ONLY, 0, 0, 16, -1 },
	{ "CNP service", 0x80 | ROCE_SEND_ONLY, 0, 0, 16, -1 },
	{ "manufacturer opcode", 0xe0 | ROCE_SEND_ONLY, 0, 0, 16, -1 },
	{ "transport version 1", RC(SEND_ONLY), 0, 1, 16, -1 },
	{ "transport version 15", RC(ACK), 0, 15, 20, -1 },
	{ "UD WRITE_ONLY", UD(WRITE_ONLY), 0, 0, 44, -1 },
	{ "UD SEND_FIRST", UD(SEND_FIRST), 0, 0, 28, -1 },
	{ "UC READ_REQ", UC(READ_REQ), 0, 0, 32, -1 },
	{ "UC ACK", UC(ACK), 0, 0, 20, -1 },
	{ "UC SEND_ONLY_INV", UC(SEND_ONLY_INV), 0, 0, 20, -1 },
	{ "UC ATOMIC_WRITE", UC(ATOMIC_WRITE), 0, 0, 44, -1 },
	{ "READ_REQ without its RETH", RC(READ_REQ), 0, 0, 16, -1 },
	{ "WRITE_ONLY with half a RETH", RC(WRITE_ONLY), 0, 0, 24, -1 },
	{ "UD SEND_ONLY with half a DETH", UD(SEND_ONLY), 0, 0, 20, -1 },
	{ "pad 3, no payload", RC(SEND_ONLY), 3, 0, 16, -1 },
	{ "pad 1, no payload", RC(SEND_ONLY), 1, 0, 16, -1 },
	{ "IMM: pad 2 beyond the header", RC(SEND_ONLY_IMM), 2, 0, 20, -1 },
	{ "length not a multiple of 4", RC(SEND_ONLY), 0, 0, 25, -1 },
	{ "ACK with a payload", RC(ACK), 0, 0, 24, -1 },
	{ "READ_REQ with a payload", RC(READ_REQ), 0, 0, 36, -1 },
	{ "ACK with a pad", RC(ACK), 1, 0, 20, -1 },
};

/* roce_parse on @c behind an IPv4 or IPv6 header. */
static void __init srdma_st_parse_one(struct srdma_st *st,
				      const struct srdma_st_rx *c, bool ipv6,
				      u8 *buf)
{
	u32 iplen = ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
	u32 psn = ipv6 ? 0xffffff : 0x000001;
	struct roce_pkt p = { };
	struct roce_bth *bth;
	struct sk_buff *skb;
	int err;

	memset(buf, 0, 512);
	buf[0] = ipv6 ? 0x60 : 0x45;
	bth = (struct roce_bth *)(buf + iplen);
	roce_fill_bth(bth, c->opcode, 0, 0x42, psn,
		      ipv6 ? 0 : ROCE_FILL_ACKREQ);
	bth->flags |= (c->pad << ROCE_BTH_PAD_SHIFT) | c->tver;
	skb = srdma_st_skb(buf, iplen + c->len, iplen, ipv6);
	if (!ST_ALLOCATED(st, skb))
		return;
	p.skb = skb;
	err = roce_parse(&p);
	if (c->paylen < 0) {
		ST_CHECK(st, err == -EINVAL, "%s over IPv%d: %d, want -EINVAL",
			 c->what, ipv6 ? 6 : 4, err);
	} else {
		ST_CHECK(st, !err && p.ipv6 == ipv6 &&
			 p.bth == (void *)skb->data &&
			 p.opcode == c->opcode && p.psn == psn &&
			 p.ackreq == !ipv6 && p.paylen == c->paylen &&
			 p.payload == skb->data + c->payload &&
			 !!p.deth == ((c->opcode & ROCE_OP_SERVICE_MASK) ==
				      ROCE_OP_UD) &&
			 (!p.deth || (void *)p.deth == skb->data + 12),
			 "%s over IPv%d: %d, payload %u at %td",
			 c->what, ipv6 ? 6 : 4, err, p.paylen,
			 err ? -1 : (u8 *)p.payload - skb->data);
	}
	kfree_skb(skb);
}

void __init srdma_st_parse(struct srdma_st *st)
{
	unsigned int i;
	u8 *buf;

	buf = kmalloc(512, GFP_KERNEL);
	if (!ST_ALLOCATED(st, buf))
		return;
	for (i = 0; i < ARRAY_SIZE(srdma_st_rx_cases); i++) {
		srdma_st_parse_one(st, &srdma_st_rx_cases[i], false, buf);
		srdma_st_parse_one(st, &srdma_st_rx_cases[i], true, buf);
	}
	kfree(buf);
}

/*
 * The DCQCN arithmetic of cc.c, which is pure: rates in kbit/s, alpha in
 * 1/ROCE_DCQCN_ALPHA_ONE. A line rate of 100 Mbit/s and a floor of 1.
 */
void __init srdma_st_dcqcn(struct srdma_st *st)
{
	const u32 one = ROCE_DCQCN_ALPHA_ONE;
	struct roce_dcqcn_params p = {
		.min_kbps = 1000,
		.max_kbps = 100000,
		.ai_kbps = 500,
		.hai_kbps = 2000,
		.g_shift = 4,
		.fr_steps = 5,
	};
	static const u32 fr[] __initconst = { 60000, 70000, 75000, 77500, 78750 };
	struct roce_dcqcn s;
	unsigned int i;
	bool ok;

	roce_dcqcn_start(&s, 200000, &p);
	ST_CHECK(st, s.rc == 100000 && s.rt == 100000 && s.alpha == one,
		 "start above the line rate: at it, alpha one (rc %u)", s.rc);
	roce_dcqcn_start(&s, 10, &p);
	ST_CHECK(st, s.rc == 1000, "start below the floor: at it (rc %u)", s.rc);

	/* decrease */
	roce_dcqcn_start(&s, 80000, &p);
	ok = roce_dcqcn_cut(&s, &p);
	ST_CHECK(st, ok && s.rc == 40000 && s.rt == 80000 && s.cnp_seen &&
		 !s.t_stage && !s.b_stage,
		 "a CNP at alpha one halves the rate, the target keeps it (rc %u rt %u)",
		 s.rc, s.rt);
	roce_dcqcn_start(&s, 80000, &p);
	s.alpha = one / 2;
	roce_dcqcn_cut(&s, &p);
	ST_CHECK(st, s.rc == 60000, "alpha one half cuts a quarter (rc %u)",
		 s.rc);
	p.clamp_target = true;
	roce_dcqcn_start(&s, 80000, &p);
	roce_dcqcn_cut(&s, &p);
	ST_CHECK(st, s.rc == 40000 && s.rt == 40000,
		 "clamp_target: the target is the new rate (rt %u)", s.rt);
	p.clamp_target = false;
	for (i = 0; i < 64; i++)
		roce_dcqcn_cut(&s, &p);
	ST_CHECK(st, s.rc == 1000, "cuts stop at the floor (rc %u)", s.rc);
	ST_CHECK(st, !roce_dcqcn_cut(&s, &p) && s.rc == 1000,
		 "a cut at the floor changes nothing");

	/* alpha */
	roce_dcqcn_start(&s, 80000, &p);
	roce_dcqcn_alpha(&s, &p);
	ST_CHECK(st, s.alpha == one - one / 16,
		 "no CNP in a period: alpha *= 1 - g (%u)", s.alpha);
	s.alpha = one;
	s.cnp_seen = true;
	roce_dcqcn_alpha(&s, &p);
	ST_CHECK(st, s.alpha == one && !s.cnp_seen,
		 "a CNP in the period at alpha one: stays one (%u)", s.alpha);
	for (i = 0; i < 200; i++)
		roce_dcqcn_alpha(&s, &p);
	ST_CHECK(st, s.alpha < one / 1000,
		 "200 quiet periods decay alpha to nearly nothing (%u)", s.alpha);
	s.alpha = 0;
	for (i = 0; i < 200; i++) {
		s.cnp_seen = true;
		roce_dcqcn_alpha(&s, &p);
	}
	ST_CHECK(st, s.alpha > one - one / 100 && s.alpha <= one,
		 "a CNP every period raises alpha to nearly one (%u)", s.alpha);

	/* fast recovery: halfway to the target per event, F events */
	roce_dcqcn_start(&s, 80000, &p);
	roce_dcqcn_cut(&s, &p);
	for (i = 0; i < ARRAY_SIZE(fr); i++) {
		roce_dcqcn_inc(&s, &p, ROCE_DCQCN_INC_TIMER);
		ST_CHECK(st, s.rc == fr[i] && s.rt == 80000,
			 "fast recovery step %u: rc %u rt %u", i + 1, s.rc,
			 s.rt);
	}
	/* additive: one kind of event past F */
	roce_dcqcn_inc(&s, &p, ROCE_DCQCN_INC_TIMER);
	ST_CHECK(st, s.rt == 80500 && s.rc == 79625,
		 "additive increase after F timer events: rc %u rt %u", s.rc,
		 s.rt);
	/* hyper: both kinds past F, by how far */
	s.rc = 50000;
	s.rt = 60000;
	s.t_stage = 7;
	s.b_stage = 7;
	roce_dcqcn_inc(&s, &p, ROCE_DCQCN_INC_TIMER);
	ST_CHECK(st, s.rt == 64000 && s.rc == 57000,
		 "hyper increase: rt += 2 * R_HAI (rc %u rt %u)", s.rc, s.rt);
	/* the byte counter drives stages of its own */
	roce_dcqcn_start(&s, 80000, &p);
	roce_dcqcn_cut(&s, &p);
	roce_dcqcn_inc(&s, &p, ROCE_DCQCN_INC_BYTES);
	ST_CHECK(st, s.b_stage == 1 && !s.t_stage && s.rc == 60000,
		 "a byte counter event is fast recovery too (rc %u)", s.rc);

	/* ceiling: the rate gets to the line rate exactly and stays */
	for (i = 0; i < 1000 && s.rc < p.max_kbps; i++)
		roce_dcqcn_inc(&s, &p, i & 1 ? ROCE_DCQCN_INC_BYTES :
					       ROCE_DCQCN_INC_TIMER);
	ST_CHECK(st, s.rc == 100000 && s.rt == 100000,
		 "increases end at the line rate (rc %u rt %u after %u)", s.rc,
		 s.rt, i);
	ST_CHECK(st, !roce_dcqcn_inc(&s, &p, ROCE_DCQCN_INC_TIMER) &&
		 s.rc == 100000, "an increase at the line rate changes nothing");
	s.rc = 99999;
	s.rt = 100000;
	s.t_stage = 0;
	s.b_stage = 0;
	roce_dcqcn_inc(&s, &p, ROCE_DCQCN_INC_TIMER);
	ST_CHECK(st, s.rc == 100000,
		 "one kbit/s short: the rate rounds up to the target (%u)",
		 s.rc);
	p.max_kbps = 50000;
	roce_dcqcn_inc(&s, &p, ROCE_DCQCN_INC_TIMER);
	ST_CHECK(st, s.rc == 50000 && s.rt == 50000,
		 "a lower line rate caps rate and target (rc %u rt %u)", s.rc,
		 s.rt);
}
