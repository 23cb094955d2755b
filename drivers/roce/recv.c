// SPDX-License-Identifier: GPL-2.0
/*
 * RoCEv2 receive entry, called from the UDP tunnel socket in softirq:
 * validate the packet (length, version, ICRC, P_Key, QP), then hand it to
 * the responder (requests) or the completer (responses). Anything bad is
 * dropped and counted, never trusted further.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <net/inet_ecn.h>
#include <net/ipv6.h>
#include <net/udp.h>

#include "roce.h"
#include "trace.h"

static bool roce_service_ok(struct srdma_qp *qp, u8 service)
{
	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
		return service == ROCE_OP_RC;
	case IB_QPT_UC:
		return service == ROCE_OP_UC;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return service == ROCE_OP_UD;
	default:
		return false;
	}
}

/* Where the IP header the UDP stack left in front of the BTH is. */
static void roce_pkt_ip(struct roce_pkt *pkt)
{
	pkt->ipv6 = pkt->skb->protocol == htons(ETH_P_IPV6);
	if (pkt->ipv6)
		pkt->ip6 = ipv6_hdr(pkt->skb);
	else
		pkt->ip4 = ip_hdr(pkt->skb);
}

/*
 * A packet this short is pulled into the skb's head whole: copying it is
 * cheaper than walking its pieces, and a handler may read its payload in
 * place (an ATOMIC WRITE's eight bytes).
 */
#define ROCE_PULL_WHOLE 256

/*
 * Fill @pkt from its skb, which starts at the BTH. The headers are pulled
 * into the skb's head; the payload of a longer packet may stay in pages
 * (pkt->payload NULL, roce_pkt_payload_each()). Also used again on a
 * packet the reorder queue held (its headers are still in place).
 * Returns 0, -EINVAL for a malformed packet, -ENOMEM.
 */
int roce_parse(struct roce_pkt *pkt)
{
	struct sk_buff *skb = pkt->skb;
	const struct roce_opinfo *info;
	u32 hdr_len, pad;
	u8 service;

	if (skb->len < sizeof(struct roce_bth) + ROCE_ICRC_BYTES)
		return -EINVAL;
	if (!pskb_may_pull(skb, skb->len <= ROCE_PULL_WHOLE ? skb->len :
			   sizeof(struct roce_bth)))
		return -ENOMEM;
	pkt->bth = (struct roce_bth *)skb->data;
	pkt->opcode = pkt->bth->opcode;
	service = pkt->opcode & ROCE_OP_SERVICE_MASK;
	info = &roce_ops[pkt->opcode & ~ROCE_OP_SERVICE_MASK];
	if (!(info->flags & ROCE_F_VALID) || (pkt->bth->flags & ROCE_BTH_TVER_MASK))
		return -EINVAL;
	if (service != ROCE_OP_RC && service != ROCE_OP_UC &&
	    service != ROCE_OP_UD)
		return -EINVAL;
	if (service == ROCE_OP_UD &&
	    (pkt->opcode & ~ROCE_OP_SERVICE_MASK) != ROCE_SEND_ONLY &&
	    (pkt->opcode & ~ROCE_OP_SERVICE_MASK) != ROCE_SEND_ONLY_IMM)
		return -EINVAL;
	/* reads, atomics, invalidates and responses exist on RC only */
	if (service != ROCE_OP_RC &&
	    (info->flags & (ROCE_F_READ | ROCE_F_ATOMIC | ROCE_F_ATMWR |
			    ROCE_F_RESP | ROCE_F_IETH)))
		return -EINVAL;
	hdr_len = info->hdr_len +
		  (service == ROCE_OP_UD ? sizeof(struct roce_deth) : 0);
	pad = (pkt->bth->flags & ROCE_BTH_PAD_MASK) >> ROCE_BTH_PAD_SHIFT;
	/* headers, payload and pad fill whole 32-bit words (9.2.3) */
	if (skb->len < hdr_len + pad + ROCE_ICRC_BYTES || (skb->len & 3))
		return -EINVAL;
	if (!(info->flags & ROCE_F_PAYLOAD) && skb->len != hdr_len + pad +
	    ROCE_ICRC_BYTES)
		return -EINVAL;
	/* the head may move: every pointer into it is taken after this */
	if (!pskb_may_pull(skb, hdr_len))
		return -ENOMEM;
	roce_pkt_ip(pkt);
	pkt->bth = (struct roce_bth *)skb->data;

	pkt->flags = info->flags;
	pkt->psn = be32_to_cpu(pkt->bth->apsn) & ROCE_PSN_MASK;
	pkt->ackreq = be32_to_cpu(pkt->bth->apsn) & ROCE_BTH_ACKREQ;
	pkt->ext = pkt->bth + 1;
	if (service == ROCE_OP_UD) {
		pkt->deth = pkt->ext;
		pkt->ext += sizeof(struct roce_deth);
	}
	pkt->payoff = hdr_len;
	pkt->paylen = skb->len - hdr_len - pad - ROCE_ICRC_BYTES;
	pkt->payload = skb_headlen(skb) >= hdr_len + pkt->paylen ?
		       skb->data + hdr_len : NULL;
	return 0;
}

/**
 * roce_pkt_payload_each() - hand a parsed packet's payload to @place
 * @pkt: the packet
 * @place: called with @arg, the piece's offset in the payload, its bytes
 *	and length; in order, once if the payload is in the skb's head
 * @arg: for @place
 *
 * Return: 0 (also for no payload), @place's first non-zero return, or
 * -EFAULT when the skb is shorter than parsed.
 */
int roce_pkt_payload_each(const struct roce_pkt *pkt,
			  int (*place)(void *arg, u32 off, const void *buf,
				       u32 n),
			  void *arg)
{
	if (!pkt->paylen)
		return 0;
	if (pkt->payload)
		return place(arg, 0, pkt->payload, pkt->paylen);
	return roce_skb_walk(pkt->skb, pkt->payoff, pkt->paylen, place, arg);
}

/*
 * A connected QP takes packets only from the peer its path names, sent
 * to the address it sends from: anyone else who reaches UDP 4791 could
 * otherwise inject requests, spoof ACKs and NAKs or fill the reorder
 * queue. Before RTR the path is not set and nothing matches; nothing is
 * taken then either.
 */
static bool roce_path_ok(struct srdma_qp *qp, const struct roce_pkt *pkt)
{
	const struct srdma_av *av = &qp->attr.av;

	if (qp->ibqp.qp_type != IB_QPT_RC && qp->ibqp.qp_type != IB_QPT_UC)
		return true;
	if (pkt->ipv6)
		return av->network_type == RXE_NETWORK_TYPE_IPV6 &&
		       ipv6_addr_equal(&pkt->ip6->saddr,
				       &av->daddr.v6.sin6_addr) &&
		       ipv6_addr_equal(&pkt->ip6->daddr,
				       &av->saddr.v6.sin6_addr);
	return av->network_type == RXE_NETWORK_TYPE_IPV4 &&
	       pkt->ip4->saddr == av->daddr.v4.sin_addr.s_addr &&
	       pkt->ip4->daddr == av->saddr.v4.sin_addr.s_addr;
}

/* Did a router mark the packet Congestion Experienced? */
static bool roce_pkt_ce(const struct roce_pkt *pkt)
{
	u8 dsfield = pkt->ipv6 ? ipv6_get_dsfield(pkt->ip6) : pkt->ip4->tos;

	return INET_ECN_is_ce(dsfield);
}

/*
 * A Congestion Notification Packet (A17.9.2): a BTH, 16 reserved bytes
 * and the ICRC, for one of our RC or UC QPs on its path. Checked as any
 * packet is, then handed to congestion control (cc.c), which ignores it
 * when disabled; never to the responder, which would take the opcode for
 * an invalid request. Consumes the skb.
 */
static void roce_cnp_rcv(struct roce_pkt *pkt)
{
	struct sk_buff *skb = pkt->skb;
	struct srdma_dev *dev = pkt->dev;
	u32 qpn;

	roce_pkt_ip(pkt);
	pkt->bth = (struct roce_bth *)skb->data;
	if (skb->len != sizeof(struct roce_bth) + ROCE_CNP_RSVD_BYTES +
	    ROCE_ICRC_BYTES || (pkt->bth->flags & ROCE_BTH_TVER_MASK)) {
		roce_count(dev, ROCE_CNT_RX_DROP_MALFORMED);
		goto drop_count;
	}
	if (!roce_icrc_ok(pkt)) {
		srdma_count(dev, SRDMA_CNT_RX_BAD_CRC);
		goto drop;
	}
	if ((be16_to_cpu(pkt->bth->pkey) & 0x7fff) != 0x7fff) {
		roce_count(dev, ROCE_CNT_RX_DROP_PKEY);
		goto drop_count;
	}
	qpn = be32_to_cpu(pkt->bth->qpn) & ROCE_QPN_MASK;
	pkt->qp = srdma_qp_get(dev, qpn);
	if (!pkt->qp) {
		roce_count(dev, ROCE_CNT_RX_BAD_QP);
		goto drop;
	}
	if (pkt->qp->ibqp.qp_type != IB_QPT_RC &&
	    pkt->qp->ibqp.qp_type != IB_QPT_UC) {
		roce_count(dev, ROCE_CNT_RX_DROP_SERVICE);
		goto drop_put;
	}
	if (!roce_path_ok(pkt->qp, pkt)) {
		roce_count(dev, ROCE_CNT_RX_DROP_PATH);
		goto drop_put;
	}
	trace_srdma_roce_rx(&pkt->qp->ibqp, pkt->bth, skb->len);
	srdma_count_pkt(pkt->qp, false, skb->len);
	roce_cc_cnp_rcvd(pkt->qp);
	srdma_qp_put(pkt->qp);
	consume_skb(skb);
	return;

drop_put:
	srdma_qp_put(pkt->qp);
drop_count:
	srdma_count(dev, SRDMA_CNT_RX_DROPPED);
drop:
	kfree_skb(skb);
}

int srdma_roce_rcv(struct roce_net *rnet, struct sk_buff *skb)
{
	struct roce_pkt pkt = { .skb = skb };
	struct srdma_dev *dev;
	u32 qpn;
	int err;

	/*
	 * The UDP header and what fits of a BTH in the skb's head; the parser
	 * pulls the rest of the headers, the payload may stay in pages.
	 */
	if (!pskb_may_pull(skb, min_t(u32, skb->len, sizeof(struct udphdr) +
					      sizeof(struct roce_bth))))
		goto drop;
	dev = roce_rx_dev(rnet, skb);
	if (!dev)
		goto drop;
	pkt.dev = dev;
	__skb_pull(skb, sizeof(struct udphdr));

	if (skb->len && skb->data[0] == ROCE_OP_CNP) {
		roce_cnp_rcv(&pkt);
		return 0;
	}
	err = roce_parse(&pkt);
	if (err) {
		ibdev_dbg_ratelimited(&dev->ibdev, "malformed packet (len %u)\n",
				      skb->len);
		if (err == -EINVAL)
			roce_count(dev, ROCE_CNT_RX_DROP_MALFORMED);
		goto drop_count;
	}
	if (!roce_icrc_ok(&pkt)) {
		srdma_count(dev, SRDMA_CNT_RX_BAD_CRC);
		goto drop;
	}
	/* one P_Key, the default, full or limited membership */
	if ((be16_to_cpu(pkt.bth->pkey) & 0x7fff) != 0x7fff) {
		ibdev_dbg_ratelimited(&dev->ibdev, "bad P_Key %#x\n",
				      be16_to_cpu(pkt.bth->pkey));
		roce_count(dev, ROCE_CNT_RX_DROP_PKEY);
		goto drop_count;
	}

	qpn = be32_to_cpu(pkt.bth->qpn) & ROCE_QPN_MASK;
	if (qpn == ROCE_MCAST_QPN) {
		if ((pkt.opcode & ROCE_OP_SERVICE_MASK) != ROCE_OP_UD)
			goto drop_count;
		roce_mcast_rcv(&pkt);
		consume_skb(skb);
		return 0;
	}
	pkt.qp = srdma_qp_get(dev, qpn);
	if (!pkt.qp) {
		roce_count(dev, ROCE_CNT_RX_BAD_QP);
		goto drop;
	}
	if (!roce_service_ok(pkt.qp, pkt.opcode & ROCE_OP_SERVICE_MASK)) {
		ibdev_dbg_ratelimited(&dev->ibdev,
				      "opcode %#x for QP %u of type %d\n",
				      pkt.opcode, qpn, pkt.qp->ibqp.qp_type);
		roce_count(dev, ROCE_CNT_RX_DROP_SERVICE);
		srdma_qp_put(pkt.qp);
		goto drop_count;
	}
	if (!roce_path_ok(pkt.qp, &pkt)) {
		ibdev_dbg_ratelimited(&dev->ibdev,
				      "packet for QP %u from outside its path\n",
				      qpn);
		roce_count(dev, ROCE_CNT_RX_DROP_PATH);
		srdma_qp_put(pkt.qp);
		goto drop_count;
	}
	trace_srdma_roce_rx(&pkt.qp->ibqp, pkt.bth, skb->len);
	srdma_count_pkt(pkt.qp, false, skb->len);
	if (pkt.paylen && !pkt.payload)
		roce_count(dev, ROCE_CNT_RX_PAGED);
	if (roce_pkt_ce(&pkt))
		roce_cc_ce_rcvd(pkt.qp);
	if (pkt.flags & ROCE_F_RESP)
		roce_comp_rcv(&pkt);
	else
		roce_resp_rcv(&pkt);
	srdma_qp_put(pkt.qp);
	consume_skb(pkt.skb);	/* NULL when the reorder queue kept it */
	return 0;

drop_count:
	srdma_count(dev, SRDMA_CNT_RX_DROPPED);
drop:
	kfree_skb(skb);
	return 0;
}
