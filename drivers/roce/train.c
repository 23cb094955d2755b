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
 * A packet copied lies in one page fragment of its own. A packet whose
 * payload is lent (as roce_alloc_skb_lent() lends one sent singly) takes
 * a fragment of ours for its headers and the ICRC of the packet before,
 * then the user's pages: two fragments, three where the payload crosses
 * a page, so about eight such packets fill the skb's seventeen. A lent
 * train is one zero-copy skb whose callback counts for all its packets.
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

/* Room for the link, IP and UDP headers in a device's GSO limit. */
#define ROCE_TRAIN_HDR_ROOM	128

/*
 * The most bytes a train to @ndev may hold (ROCE_TRAIN_BYTES_MAX at most,
 * and what its GSO size leaves), or 0 when @ndev would not take it whole.
 */
static u32 roce_train_dev_bytes(const struct net_device *ndev)
{
	u32 gso = READ_ONCE(ndev->gso_max_size);

	if (!(READ_ONCE(ndev->features) & NETIF_F_GSO_UDP_L4) ||
	    READ_ONCE(ndev->gso_max_segs) < ROCE_TRAIN_MAX ||
	    gso <= ROCE_TRAIN_HDR_ROOM)
		return 0;
	return min_t(u32, ROCE_TRAIN_BYTES_MAX, gso - ROCE_TRAIN_HDR_ROOM);
}

/* netdev_walk_all_lower_dev_rcu(): the least of the devices' limits */
static int roce_train_lower(struct net_device *lower,
			    struct netdev_nested_priv *priv)
{
	u32 *bytes = priv->data;

	*bytes = min(*bytes, roce_train_dev_bytes(lower));
	return !*bytes;		/* no need to look further */
}

/**
 * roce_train_route() - how big a train the route's device takes whole
 * @ndev: the route's device
 *
 * Stacked devices (VLANs, bonds, bridges, macvlan) claim UDP segmentation
 * whatever the devices below them do: a train is only sent where every
 * device below takes it too, or it would be cut in software there (after
 * a lent train's pages were copied, for a start).
 *
 * Return: the most bytes, BTH to ICRC, a train may hold; 0: no trains.
 */
u32 roce_train_route(struct net_device *ndev)
{
	struct netdev_nested_priv priv;
	u32 bytes;

	if (!READ_ONCE(roce_gso_trains))
		return 0;
	bytes = roce_train_dev_bytes(ndev);
	if (!bytes)
		return 0;
	priv.data = &bytes;
	rcu_read_lock();
	netdev_walk_all_lower_dev_rcu(ndev, roce_train_lower, &priv);
	rcu_read_unlock();
	return bytes;
}

/*
 * A train with no packets yet, of at most @max_bytes (roce_train_route());
 * @lent: its payloads will be the user's pages (roce_train_add_lent()),
 * else copies (roce_train_add()). Returns 0 or -ENOMEM.
 */
int roce_train_start(struct srdma_qp *qp, struct roce_train *t, bool lent,
		     u32 max_bytes)
{
	memset(t, 0, sizeof(*t));
	t->max_bytes = max_bytes;
	t->skb = roce_alloc_skb(qp, NULL, 0, 0);
	if (!t->skb)
		return -ENOMEM;
	/* roce_alloc_skb() put an ICRC's room for one packet in the head */
	__skb_trim(t->skb, 0);
	t->lent = lent;
	return 0;
}

/* Give up a train not sent (not a drop: its packets go singly). */
void roce_train_abort(struct roce_train *t)
{
	consume_skb(t->skb);
	t->skb = NULL;
}

/* Whether a packet of @len bytes, BTH to ICRC, may join @t. */
static bool roce_train_fits(const struct roce_train *t, u32 len)
{
	return t->n < ROCE_TRAIN_MAX && (!t->n || len <= t->pkt_len) &&
	       t->len + len <= t->max_bytes;
}

/* The next packet of @len bytes, at @bth, its ICRC at @icrc, is in. */
static void roce_train_count(struct roce_train *t, u32 len, void *bth,
			     void *icrc)
{
	if (!t->n)
		t->pkt_len = len;
	t->len += len;
	t->bth[t->n] = bth;
	t->icrc[t->n++] = icrc;
}

/**
 * roce_train_add() - room for one more packet, copied, at a train's end
 * @t: the train, not lent
 * @len: the packet's bytes, BTH to ICRC: the first packet's, or fewer
 *	for the message's last packet, after which nothing is added
 *
 * Return: where to write the packet (@len bytes, in one piece), or NULL
 * when it does not fit: the train is full, or no memory.
 */
void *roce_train_add(struct roce_train *t, u32 len)
{
	void *buf;

	if (!roce_train_fits(t, len))
		return NULL;
	buf = roce_skb_add_frag(t->skb, len);
	if (buf)
		roce_train_count(t, len, buf, buf + len - ROCE_ICRC_BYTES);
	return buf;
}

/* Drop @t's fragments from @nr on: a packet that did not fit after all. */
static void roce_train_trim(struct roce_train *t, int nr)
{
	struct skb_shared_info *sh = skb_shinfo(t->skb);

	while (sh->nr_frags > nr) {
		skb_frag_t *f = &sh->frags[--sh->nr_frags];
		u32 len = skb_frag_size(f);

		t->skb->len -= len;
		t->skb->data_len -= len;
		t->skb->truesize -= len;
		put_page(skb_frag_page(f));
	}
}

/**
 * roce_train_add_lent() - one more packet, its payload lent, at a train's end
 * @t: the train, lent
 * @qp: the QP
 * @w: the send WQE whose payload the packet carries
 * @hdr_len: the packet's headers, BTH on
 * @off: its payload's first byte in @w
 * @paylen: its payload's bytes
 * @err: set where the payload cannot be lent for a reason of its own
 *	(srdma_swqe_lend()'s error; not when the train is full)
 *
 * The headers go in a piece of our own that also holds the ICRC of the
 * packet before, the payload as references to the pages it lies in
 * (srdma_swqe_lend(), the keys checked), so that a packet takes two
 * fragments, three where its payload crosses a page. roce_train_xmit()
 * adds the last packet's pad and ICRC.
 *
 * Return: where to write the headers, or NULL when the packet does not
 * fit (*@err 0) or cannot be lent (*@err set).
 */
void *roce_train_add_lent(struct roce_train *t, struct srdma_qp *qp,
			  const struct srdma_swqe *w, u32 hdr_len, u32 off,
			  u32 paylen, int *err)
{
	u32 len = hdr_len + ALIGN(paylen, 4) + ROCE_ICRC_BYTES;
	u32 lead = t->n ? ROCE_ICRC_BYTES : 0;
	int nr = skb_shinfo(t->skb)->nr_frags;
	void *buf;

	*err = 0;
	/* a lent packet's payload fills whole words: only full packets */
	if (!roce_train_fits(t, len) || paylen & 3)
		return NULL;
	buf = roce_skb_add_frag(t->skb, lead + hdr_len);
	if (!buf)
		return NULL;
	/* roce_lend_piece() keeps a fragment free for what follows */
	*err = srdma_swqe_lend(qp, w, off, paylen, roce_lend_piece, t->skb);
	if (*err) {
		roce_train_trim(t, nr);
		if (*err == -EOPNOTSUPP)
			*err = 0;	/* the train is full */
		return NULL;
	}
	if (t->n)
		t->icrc[t->n - 1] = buf;
	roce_train_count(t, len, buf + lead, NULL);
	return buf + lead;
}

/**
 * roce_train_finish() - close a train of two or more packets for sending
 * @qp: their QP
 * @t: the train
 *
 * A lent train gets its last packet's ICRC a piece of its own and becomes
 * a zero-copy skb counted as its packets (roce_txq_lend()).
 *
 * Return: 0, or -ENOMEM (abort the train).
 */
int roce_train_finish(struct srdma_qp *qp, struct roce_train *t)
{
	void *tail;

	if (!t->lent)
		return 0;
	/* lent packets are full ones: no pad */
	tail = roce_skb_add_frag(t->skb, ROCE_ICRC_BYTES);
	if (!tail)
		return -ENOMEM;
	t->icrc[t->n - 1] = tail;
	return roce_txq_lend(to_rqp(qp), t->skb, t->n);
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
static int roce_train_seal(struct srdma_qp *qp, const struct roce_train *t,
			   struct sk_buff *skb, bool ipv6)
{
	u8 hdr[sizeof(struct ipv6hdr) + sizeof(struct udphdr)];
	u32 iplen = ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
	struct udphdr *uh = (void *)hdr + iplen;
	struct ipv6hdr *ip6 = (void *)hdr;
	struct iphdr *ip4 = (void *)hdr;
	/* the first BTH, after the UDP header, from skb->data */
	u32 from = skb_transport_offset(skb) + sizeof(*uh);
	u16 id;
	u32 i;

	memcpy(hdr, skb_network_header(skb), iplen + sizeof(*uh));
	id = ntohs(ip4->id);
	for (i = 0; i < t->n; i++) {
		u32 len = roce_train_pkt_len(t, i);
		u32 ib_len = len - ROCE_ICRC_BYTES;
		u32 icrc;
		int err;

		uh->len = htons(sizeof(*uh) + len);
		if (ipv6) {
			ip6->payload_len = uh->len;
		} else {
			ip4->tot_len = htons(iplen + sizeof(*uh) + len);
			ip4->id = htons(id + i);
		}
		err = roce_icrc_walk(hdr, ipv6, t->bth[i], skb,
				     from + sizeof(struct roce_bth), ib_len,
				     &icrc);
		if (err)
			return err;
		put_unaligned_le32(icrc, t->icrc[i]);
		trace_srdma_roce_tx(&qp->ibqp, t->bth[i], len);
		srdma_count_pkt(qp, true, len);
		from += len;
	}
	return 0;
}

/**
 * roce_train_xmit() - send a train of two or more packets
 * @qp: their QP
 * @av: their path
 * @t: the train, every packet written but its ICRC, finished
 *	(roce_train_finish())
 *
 * Return: 0, or roce_wrap()'s and ip_local_out()'s errors (a lost packet
 * is retransmitted, as one sent singly). Consumes the train.
 */
int roce_train_xmit(struct srdma_qp *qp, const struct srdma_av *av,
		    struct roce_train *t)
{
	bool ipv6 = av->network_type == RXE_NETWORK_TYPE_IPV6;
	struct roce_bth *bth = t->bth[0];
	struct sk_buff *skb = t->skb;
	struct udphdr *uh;
	int err;

	t->skb = NULL;
	err = roce_wrap(qp, av, skb, bth->opcode, t->n);
	if (err)
		return err;
	if (WARN_ON_ONCE(roce_train_seal(qp, t, skb, ipv6))) {
		kfree_skb(skb);
		return -EFAULT;
	}

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
