// SPDX-License-Identifier: GPL-2.0
/*
 * GSO trains: the equal-size packets of one message sent as one UDP GSO
 * skb (SKB_GSO_UDP_L4) on a route whose device takes such skbs whole: a
 * NIC with UDP segmentation offload, or lo. IP, netfilter, the qdisc and
 * the driver then see one skb where single packets cost a trip each, and
 * the NIC (or, for a frame that reaches a host whole, the receiving UDP
 * layer: udp_unexpected_gso()) cuts it back into its packets.
 *
 * Each packet lies whole in the train's payload, BTH to ICRC, gso_size
 * bytes after the one before (the last may be shorter), so that every
 * segment is one RoCEv2 packet. Its ICRC covers the IP and UDP headers
 * the segment will carry: segmentation gives segment i the train's IPv4
 * ID plus i and lengths of its own (inet_gso_segment() and
 * __udp_gso_segment(), as NICs do for TSO and USO), so each packet is
 * sealed over those. Segmentation also needs a UDP checksum to fill in
 * (CHECKSUM_PARTIAL): a train's packets carry one where single packets
 * carry zero, as RoCEv2 allows (IBTA A17.4.3).
 *
 * Payloads are copied into page fragments, one per packet, never lent:
 * a lent packet takes two or three fragments of the skb's seventeen.
 */
#include <linux/module.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>
#include <net/udp.h>

#include "roce.h"
#include "trace.h"

static bool roce_gso_trains = true;
module_param(roce_gso_trains, bool, 0644);
MODULE_PARM_DESC(roce_gso_trains,
		 "Send a message's RC and UC packets as UDP GSO trains where the route's device takes them whole (a NIC with UDP segmentation offload, lo) (default: on)");

/*
 * A train's packets, BTH to ICRC, all together: with the headers they
 * stay within the IP and UDP length fields, and the 64 KiB GSO frame a
 * device takes.
 */
#define ROCE_TRAIN_BYTES_MAX	(SZ_64K - 256)

/* Whether packets to @ndev should go as trains. */
bool roce_train_route(const struct net_device *ndev)
{
	return READ_ONCE(roce_gso_trains) &&
	       (ndev->features & NETIF_F_GSO_UDP_L4) &&
	       READ_ONCE(ndev->gso_max_segs) >= ROCE_TRAIN_MAX;
}

/* A train with no packets yet. Returns 0 or -ENOMEM. */
int roce_train_start(struct srdma_qp *qp, struct roce_train *t)
{
	memset(t, 0, sizeof(*t));
	t->skb = roce_alloc_skb(qp, NULL, 0, 0);
	if (!t->skb)
		return -ENOMEM;
	/* roce_alloc_skb() put an ICRC's room for one packet in the head */
	__skb_trim(t->skb, 0);
	return 0;
}

/* Give up a train not sent (not a drop: its packets go singly). */
void roce_train_abort(struct roce_train *t)
{
	consume_skb(t->skb);
	t->skb = NULL;
}

/**
 * roce_train_add() - room for one more packet at the end of a train
 * @t: the train
 * @len: the packet's bytes, BTH to ICRC: the first packet's, or fewer
 *	for the message's last packet, after which nothing is added
 *
 * Return: where to write the packet (@len bytes, in one piece), or NULL
 * when it does not fit: the train is full, or no memory.
 */
void *roce_train_add(struct roce_train *t, u32 len)
{
	struct sk_buff *skb = t->skb;
	int i = skb_shinfo(skb)->nr_frags;
	struct page *page;
	void *buf;

	if (t->n == ROCE_TRAIN_MAX || i == MAX_SKB_FRAGS ||
	    (t->n && len > t->pkt_len) || t->len + len > ROCE_TRAIN_BYTES_MAX)
		return NULL;
	buf = netdev_alloc_frag(len);
	if (!buf)
		return NULL;
	page = virt_to_head_page(buf);
	skb_fill_page_desc(skb, i, page, buf - page_address(page), len);
	skb->len += len;
	skb->data_len += len;
	skb->truesize += len;
	if (!t->n)
		t->pkt_len = len;
	t->len += len;
	t->pkt[t->n++] = buf;
	return buf;
}

/* The length of packet @i of @t, ICRC included. */
static u32 roce_train_pkt_len(const struct roce_train *t, u32 i)
{
	return i + 1 < t->n ? t->pkt_len : t->len - (t->n - 1) * t->pkt_len;
}

/*
 * Seal each packet with the ICRC of the headers segmentation will give
 * it, from the train's IP and UDP headers at @skb's network header.
 */
static void roce_train_seal(struct srdma_qp *qp, const struct roce_train *t,
			    struct sk_buff *skb, bool ipv6)
{
	u8 hdr[sizeof(struct ipv6hdr) + sizeof(struct udphdr)];
	u32 iplen = ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
	struct udphdr *uh = (void *)hdr + iplen;
	struct ipv6hdr *ip6 = (void *)hdr;
	struct iphdr *ip4 = (void *)hdr;
	u16 id;
	u32 i;

	memcpy(hdr, skb_network_header(skb), iplen + sizeof(*uh));
	id = ntohs(ip4->id);
	for (i = 0; i < t->n; i++) {
		u32 len = roce_train_pkt_len(t, i);
		u32 ib_len = len - ROCE_ICRC_BYTES;
		u8 *ib = t->pkt[i];

		uh->len = htons(sizeof(*uh) + len);
		if (ipv6) {
			ip6->payload_len = uh->len;
		} else {
			ip4->tot_len = htons(iplen + sizeof(*uh) + len);
			ip4->id = htons(id + i);
		}
		put_unaligned_le32(roce_icrc(hdr, ipv6, ib, ib_len),
				   ib + ib_len);
		trace_srdma_roce_tx(&qp->ibqp, (struct roce_bth *)ib, len);
		srdma_count_pkt(qp, true, len);
	}
}

/**
 * roce_train_xmit() - send a train of two or more packets
 * @qp: their QP
 * @av: their path
 * @t: the train, every packet written but its ICRC
 *
 * Return: 0, or roce_wrap()'s and ip_local_out()'s errors (a lost packet
 * is retransmitted, as one sent singly). Consumes the train.
 */
int roce_train_xmit(struct srdma_qp *qp, const struct srdma_av *av,
		    struct roce_train *t)
{
	bool ipv6 = av->network_type == RXE_NETWORK_TYPE_IPV6;
	struct roce_bth *bth = t->pkt[0];
	struct sk_buff *skb = t->skb;
	struct udphdr *uh;
	int err;

	t->skb = NULL;
	err = roce_wrap(qp, av, skb, bth->opcode, t->n);
	if (err)
		return err;
	roce_train_seal(qp, t, skb, ipv6);

	uh = udp_hdr(skb);
	if (ipv6) {
		const struct ipv6hdr *ip6 = ipv6_hdr(skb);

		uh->check = ~udp_v6_check(ntohs(uh->len), &ip6->saddr,
					  &ip6->daddr, 0);
	} else {
		const struct iphdr *ip4 = ip_hdr(skb);

		uh->check = ~udp_v4_check(ntohs(uh->len), ip4->saddr,
					  ip4->daddr, 0);
	}
	skb->ip_summed = CHECKSUM_PARTIAL;
	skb->csum_start = skb_transport_header(skb) - skb->head;
	skb->csum_offset = offsetof(struct udphdr, check);
	skb_shinfo(skb)->gso_type = SKB_GSO_UDP_L4;
	skb_shinfo(skb)->gso_size = t->pkt_len;
	skb_shinfo(skb)->gso_segs = t->n;
	roce_count(qp_dev(qp), ROCE_CNT_TX_TRAINS);
	srdma_tp_count_add(qp_dev(qp), ROCE_CNT_TX_TRAIN_PKTS, t->n);
	trace_srdma_roce_train(&qp->ibqp, bth, t->n, t->pkt_len);
	return roce_output(qp, skb, t->n);
}
