// SPDX-License-Identifier: GPL-2.0
/*
 * RoCEv2 packet I/O: building IP/UDP around InfiniBand transport packets,
 * the invariant CRC (IBTA Annex A17.8), routing with a per-QP dst cache,
 * and finding the device an incoming packet is for.
 */
#include <linux/crc32.h>
#include <linux/error-injection.h>
#include <linux/inetdevice.h>
#include <linux/module.h>
#include <net/addrconf.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>
#include <net/udp.h>

#include "roce.h"
#include "trace.h"

/*
 * A packet for this host itself, through lo, is copied anyway: the stack
 * copies a zero-copy skb's pages before a local receiver gets them
 * (skb_orphan_frags_rx()), so lending costs a page and a callback more
 * than copying at the sender. Tests set this to lend through lo all the
 * same, the one device with scatter-gather a single VM has.
 */
static bool roce_lend_local;
module_param(roce_lend_local, bool, 0644);
MODULE_PARM_DESC(roce_lend_local,
		 "Send RoCE payloads from the user's pages also to this host itself, through lo (default: off, a copy costs less there; for tests)");

/* CRC-32 of eight 0xff bytes (the masked LRH RoCEv2 lacks), seed ~0. */
#define ROCE_ICRC_SEED 0xdebb20e3

/*
 * The ICRC's CRC so far over the IP and UDP headers and the BTH with their
 * variant fields set to ones. @nh is the IP header; @bth the BTH.
 */
static u32 roce_icrc_head(const void *nh, bool ipv6, const void *bth_in)
{
	u8 buf[sizeof(struct ipv6hdr) + sizeof(struct udphdr) +
	       sizeof(struct roce_bth)];
	u32 iplen = ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
	struct udphdr *uh = (void *)buf + iplen;
	struct roce_bth *bth = (void *)(uh + 1);

	memcpy(buf, nh, iplen + sizeof(*uh));
	memcpy(bth, bth_in, sizeof(*bth));
	if (ipv6) {
		struct ipv6hdr *ip6 = (void *)buf;

		ip6->priority = 0xf;
		memset(ip6->flow_lbl, 0xff, sizeof(ip6->flow_lbl));
		ip6->hop_limit = 0xff;
	} else {
		struct iphdr *ip4 = (void *)buf;

		ip4->tos = 0xff;
		ip4->ttl = 0xff;
		ip4->check = (__force __sum16)0xffff;
	}
	uh->check = (__force __sum16)0xffff;
	bth->qpn |= cpu_to_be32(ROCE_BTH_RESV8A);

	return crc32_le(ROCE_ICRC_SEED, buf, iplen + sizeof(*uh) + sizeof(*bth));
}

/*
 * The ICRC of a packet in one buffer: the masked headers, then the rest of
 * the IB packet up to the ICRC itself. @nh is the IP header, followed by
 * the UDP header; @ib is the BTH; @ib_len excludes the ICRC.
 */
u32 roce_icrc(const void *nh, bool ipv6, const void *ib, u32 ib_len)
{
	u32 crc = roce_icrc_head(nh, ipv6, ib);

	crc = roce_crc32(crc, ib + sizeof(struct roce_bth),
			 ib_len - sizeof(struct roce_bth));
	return ~crc;
}

/**
 * roce_skb_walk() - hand bytes of an skb to @fn in the pieces it holds them
 * @skb: the packet; its head, page fragments and frag list are read
 * @from: first byte, from skb->data
 * @len: how many
 * @fn: called with @arg, the piece's offset from @from, its bytes and length
 * @arg: for @fn
 *
 * For a packet left in pages (a NIC's receive buffers, virtio-net at a
 * jumbo MTU), read in place rather than linearised: that would allocate a
 * head and copy every byte once more. Atomic context: pages are mapped
 * for the call only.
 *
 * Return: 0, @fn's first non-zero return, or -EFAULT when the skb holds
 * fewer bytes.
 */
int roce_skb_walk(struct sk_buff *skb, u32 from, u32 len,
		  int (*fn)(void *arg, u32 off, const void *buf, u32 n),
		  void *arg)
{
	struct skb_seq_state st;
	u32 done = 0;
	int err = 0;

	skb_prepare_seq_read(skb, from, from + len, &st);
	while (done < len) {
		const u8 *data;
		u32 n = skb_seq_read(done, &data, &st);

		if (!n) {
			err = -EFAULT;
			break;
		}
		/* a piece may reach past @len: take only what was asked */
		n = min(n, len - done);
		err = fn(arg, done, data, n);
		if (err)
			break;
		done += n;
	}
	skb_abort_seq_read(&st);
	return err;
}

static int roce_icrc_piece(void *arg, u32 off, const void *buf, u32 n)
{
	u32 *crc = arg;

	*crc = roce_crc32(*crc, buf, n);
	return 0;
}

/**
 * roce_icrc_walk() - the ICRC of a packet in pieces
 * @nh: its IP header, followed by its UDP header
 * @ipv6: which IP
 * @bth: its BTH
 * @skb: holds the rest of the packet, up to the ICRC...
 * @from: ...from this byte after skb->data (the byte after the BTH)
 * @ib_len: the packet's bytes from the BTH on, without the ICRC
 * @icrc: the result
 *
 * Return: 0, or roce_skb_walk()'s error.
 */
int roce_icrc_walk(const void *nh, bool ipv6, const void *bth,
		   struct sk_buff *skb, u32 from, u32 ib_len, u32 *icrc)
{
	u32 crc = roce_icrc_head(nh, ipv6, bth);
	int err = roce_skb_walk(skb, from, ib_len - sizeof(struct roce_bth),
				roce_icrc_piece, &crc);

	*icrc = ~crc;
	return err;
}

/* ...whose BTH is at skb->data + @bth, in the head */
static int roce_icrc_skb(struct sk_buff *skb, bool ipv6, u32 bth, u32 ib_len,
			 u32 *icrc)
{
	return roce_icrc_walk(skb_network_header(skb), ipv6, skb->data + bth,
			      skb, bth + sizeof(struct roce_bth), ib_len, icrc);
}

struct sk_buff *roce_alloc_skb(struct srdma_qp *qp, const struct srdma_av *av,
			       u32 hdr_len, u32 paylen)
{
	struct net_device *ndev = qp_dev(qp)->ndev;
	u32 pad = (-paylen) & 3;
	/*
	 * Room for the larger IP header whatever @av says now: a connected
	 * QP's path may change under us (modify_qp in SQD), and roce_xmit()
	 * reads it again.
	 */
	u32 head = LL_RESERVED_SPACE(ndev) + sizeof(struct ipv6hdr) +
		   sizeof(struct udphdr);
	struct sk_buff *skb;

	skb = alloc_skb(head + hdr_len + paylen + pad + ROCE_ICRC_BYTES,
			GFP_ATOMIC);
	if (!skb)
		return NULL;
	skb_reserve(skb, head);
	skb_put(skb, hdr_len + paylen + pad + ROCE_ICRC_BYTES);
	if (pad)
		memset(skb->data + hdr_len + paylen, 0, pad);
	return skb;
}
ALLOW_ERROR_INJECTION(roce_alloc_skb, NULL);

/* @len more bytes in @skb's fragments */
static void roce_skb_grow(struct sk_buff *skb, u32 len)
{
	skb->len += len;
	skb->data_len += len;
	skb->truesize += len;
}

/**
 * roce_skb_add_frag() - @len bytes of our own as @skb's next fragment
 * @skb: the packet
 * @len: at most what a page fragment cache gives in one piece
 *
 * The fragment takes the allocation's page reference.
 *
 * Return: where the bytes are, to be written, or NULL (no memory, or no
 * fragment left).
 */
void *roce_skb_add_frag(struct sk_buff *skb, u32 len)
{
	int i = skb_shinfo(skb)->nr_frags;
	struct page *page;
	void *buf;

	if (i == MAX_SKB_FRAGS)
		return NULL;
	buf = netdev_alloc_frag(len);
	if (!buf)
		return NULL;
	page = virt_to_head_page(buf);
	skb_fill_page_desc(skb, i, page, buf - page_address(page), len);
	roce_skb_grow(skb, len);
	return buf;
}

/*
 * srdma_lend_fn: one piece of the payload into @arg's fragments, with a
 * reference on its page, leaving a fragment free for the pad and ICRC.
 */
int roce_lend_piece(void *arg, struct page *page, u32 off, u32 len)
{
	struct sk_buff *skb = arg;
	int i = skb_shinfo(skb)->nr_frags;

	if (i && skb_can_coalesce(skb, i, page, off)) {
		skb_frag_size_add(&skb_shinfo(skb)->frags[i - 1], len);
	} else {
		if (i >= MAX_SKB_FRAGS - 1)
			return -EOPNOTSUPP;
		get_page(page);
		skb_fill_page_desc_noacc(skb, i, page, off, len);
	}
	roce_skb_grow(skb, len);
	return 0;
}

/**
 * roce_alloc_skb_lent() - an skb for one packet whose payload is lent
 * @qp: the QP it goes out on
 * @av: its path
 * @w: the send WQE whose payload it carries
 * @hdr_len: the IB headers from the BTH on, put at skb->data
 * @off: the payload's first byte in @w
 * @paylen: its bytes
 *
 * The payload goes in as references to the pinned user pages it lies in
 * (srdma_swqe_lend()), not copied: a device with scatter-gather reads it
 * from there. Its pad and the ICRC follow in a fragment of their own.
 * The skb is zero-copy (roce_txq_lend()): the stack copies the fragments
 * before anything writes into them, clones the skb or delivers it to a
 * local receiver, and calls back once it no longer refers to the pages,
 * which the QP's completions may wait for.
 *
 * Return: the skb; ERR_PTR(-EOPNOTSUPP) when the payload cannot be lent
 * (the caller copies it), -ENOMEM, or srdma_swqe_read()'s errors.
 */
struct sk_buff *roce_alloc_skb_lent(struct srdma_qp *qp,
				    const struct srdma_av *av,
				    const struct srdma_swqe *w, u32 hdr_len,
				    u32 off, u32 paylen)
{
	u32 tail_len = ((-paylen) & 3) + ROCE_ICRC_BYTES;
	struct sk_buff *skb = roce_alloc_skb(qp, av, hdr_len, 0);
	void *tail;
	int err;

	if (!skb)
		return ERR_PTR(-ENOMEM);
	/* the head holds the headers only: the ICRC goes after the payload */
	__skb_trim(skb, hdr_len);
	err = srdma_swqe_lend(qp, w, off, paylen, roce_lend_piece, skb);
	if (err)
		goto free;
	/* roce_lend_piece() left a fragment for it */
	tail = roce_skb_add_frag(skb, tail_len);
	if (!tail) {
		err = -ENOMEM;
		goto free;
	}
	memset(tail, 0, tail_len);
	err = roce_txq_lend(to_rqp(qp), skb, 1);
	if (err)
		goto free;
	return skb;
free:
	if (err == -EOPNOTSUPP)
		consume_skb(skb);	/* not a drop: the caller copies */
	else
		kfree_skb(skb);
	return ERR_PTR(err);
}

static struct dst_entry *roce_route4(struct srdma_qp *qp,
				     const struct srdma_av *av,
				     struct dst_cache *cache)
{
	struct net *net = dev_net(qp_dev(qp)->ndev);
	struct flowi4 fl = {
		.daddr = av->daddr.v4.sin_addr.s_addr,
		.saddr = av->saddr.v4.sin_addr.s_addr,
		.flowi4_proto = IPPROTO_UDP,
	};
	struct rtable *rt;
	__be32 saddr;

	/* a group is reached through our own netdev, not a default route */
	if (ipv4_is_multicast(fl.daddr))
		fl.flowi4_oif = qp_dev(qp)->ndev->ifindex;
	if (cache) {
		rt = dst_cache_get_ip4(cache, &saddr);
		/* one the path held before it changed family: not ours */
		if (rt && rt->dst.ops->family == AF_INET)
			return &rt->dst;
		if (rt)
			dst_release(&rt->dst);
	}
	rt = ip_route_output_key(net, &fl);
	if (IS_ERR(rt))
		return NULL;
	if (cache)
		dst_cache_set_ip4(cache, &rt->dst, fl.saddr);
	return &rt->dst;
}

static struct dst_entry *roce_route6(struct srdma_qp *qp,
				     const struct srdma_av *av,
				     struct dst_cache *cache)
{
	struct net *net = dev_net(qp_dev(qp)->ndev);
	struct dst_entry *dst;
	struct flowi6 fl = {
		.daddr = av->daddr.v6.sin6_addr,
		.saddr = av->saddr.v6.sin6_addr,
		.flowi6_proto = IPPROTO_UDP,
	};

	if (cache) {
		dst = dst_cache_get(cache);
		if (dst && dst->ops->family == AF_INET6)
			return dst;
		dst_release(dst);
	}
	/* link-local peers and groups need the interface */
	if (ipv6_addr_type(&fl.daddr) &
	    (IPV6_ADDR_LINKLOCAL | IPV6_ADDR_MULTICAST))
		fl.flowi6_oif = qp_dev(qp)->ndev->ifindex;
	dst = ipv6_stub->ipv6_dst_lookup_flow(net, NULL, &fl, NULL);
	if (IS_ERR(dst))
		return NULL;
	if (cache)
		dst_cache_set_ip6(cache, dst, &fl.saddr);
	return dst;
}

/*
 * A connected QP's route is cached for the path it was looked up for:
 * modify_qp may change the path in SQD (IB_QP_AV) without a state
 * change, and a route of the other IP family must never be taken for
 * one of this. rqp->lock held.
 */
static void roce_route_check(struct roce_qp *rqp, const struct srdma_av *av)
{
	struct srdma_av *key = &rqp->route_av;

	lockdep_assert_held(&rqp->lock);
	if (key->network_type == av->network_type &&
	    !memcmp(&key->saddr, &av->saddr, sizeof(key->saddr)) &&
	    !memcmp(&key->daddr, &av->daddr, sizeof(key->daddr)))
		return;
	dst_cache_reset(&rqp->dst_cache);
	key->network_type = av->network_type;
	key->saddr = av->saddr;
	key->daddr = av->daddr;
}

/**
 * roce_wrap() - route a QP's packet and put UDP and IP in front of it
 * @qp: the QP
 * @av: the path
 * @skb: the IB packet at skb->data, BTH first, or a train of @segs of them
 * @opcode: the (first) packet's, for its traffic class
 * @segs: how many packets the IP header is for: a train takes as many IPv4
 *	IDs, one for each packet segmentation cuts from it
 *
 * Return: 0, or -EHOSTUNREACH with @skb freed.
 */
int roce_wrap(struct srdma_qp *qp, const struct srdma_av *av,
	      struct sk_buff *skb, u8 opcode, u32 segs)
{
	bool ipv6 = av->network_type == RXE_NETWORK_TYPE_IPV6;
	struct roce_qp *rqp = to_rqp(qp);
	struct net *net = dev_net(qp_dev(qp)->ndev);
	bool connected = qp->ibqp.qp_type == IB_QPT_RC ||
			 qp->ibqp.qp_type == IB_QPT_UC;
	struct dst_cache *cache = connected ? &rqp->dst_cache : NULL;
	u8 tclass = roce_cc_tclass(qp, av->traffic_class, opcode);
	struct dst_entry *dst;
	struct udphdr *uh;

	if (cache)
		roce_route_check(rqp, av);
	local_bh_disable();
	dst = ipv6 ? roce_route6(qp, av, cache) : roce_route4(qp, av, cache);
	local_bh_enable();
	if (!dst) {
		kfree_skb(skb);
		return -EHOSTUNREACH;
	}
	skb_dst_set(skb, dst);

	uh = skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh->source = htons(rqp->src_port);
	uh->dest = htons(ROCE_UDP_PORT);
	uh->len = htons(skb->len);
	uh->check = 0;	/* the ICRC protects the payload (A17.4.3) */

	if (ipv6) {
		struct ipv6hdr *ip6 = skb_push(skb, sizeof(*ip6));

		skb_reset_network_header(skb);
		ip6_flow_hdr(ip6, tclass,
			     htonl(av->flow_label) & IPV6_FLOWLABEL_MASK);
		ip6->payload_len = htons(skb->len - sizeof(*ip6));
		ip6->nexthdr = IPPROTO_UDP;
		ip6->hop_limit = av->hop_limit ?: ip6_dst_hoplimit(dst);
		ip6->saddr = av->saddr.v6.sin6_addr;
		ip6->daddr = av->daddr.v6.sin6_addr;
		skb->protocol = htons(ETH_P_IPV6);
		memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	} else {
		struct iphdr *ip4 = skb_push(skb, sizeof(*ip4));

		skb_reset_network_header(skb);
		ip4->version = 4;
		ip4->ihl = sizeof(*ip4) >> 2;
		ip4->tos = tclass;
		ip4->tot_len = htons(skb->len);
		ip4->frag_off = htons(IP_DF);
		ip4->ttl = av->hop_limit > 1 ? av->hop_limit :
			   ip4_dst_hoplimit(dst);
		ip4->protocol = IPPROTO_UDP;
		ip4->saddr = av->saddr.v4.sin_addr.s_addr;
		ip4->daddr = av->daddr.v4.sin_addr.s_addr;
		__ip_select_ident(net, ip4, segs);
		ip_send_check(ip4);
		skb->protocol = htons(ETH_P_IP);
		memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	}
	skb->ip_summed = CHECKSUM_NONE;
	return 0;
}

/**
 * roce_output() - hand a wrapped packet, or a train of @pkts, to IP
 * @qp: its QP, which counts @pkts packets in this host until the stack
 *	frees @skb (roce_txq_own())
 * @skb: from roce_wrap(), sealed
 * @pkts: the packets it carries
 *
 * What the route's device takes decides how later packets are built:
 * page fragments (roce_alloc_skb_lent()) or trains (train.c).
 *
 * Return: ip_local_out()'s. Consumes @skb.
 */
int roce_output(struct srdma_qp *qp, struct sk_buff *skb, u32 pkts)
{
	struct dst_entry *dst = skb_dst(skb);
	struct net *net = dev_net(qp_dev(qp)->ndev);
	struct roce_qp *rqp = to_rqp(qp);
	u32 train;
	bool sg;

	/*
	 * roce_send_psn() lends pages only to a route that takes them, and
	 * leaves this host
	 */
	sg = (dst->dev->features & NETIF_F_SG) &&
	     (!(dst->dev->flags & IFF_LOOPBACK) || READ_ONCE(roce_lend_local));
	if (READ_ONCE(rqp->route_sg) != sg)
		WRITE_ONCE(rqp->route_sg, sg);
	train = roce_train_route(dst->dev);
	if (READ_ONCE(rqp->route_train_bytes) != train)
		WRITE_ONCE(rqp->route_train_bytes, train);

	skb->dev = dst->dev;
	roce_txq_own(rqp, skb, pkts);
	if (skb->protocol == htons(ETH_P_IPV6))
		return ip6_local_out(net, NULL, skb);
	return ip_local_out(net, NULL, skb);
}

/*
 * Wrap the IB packet at skb->data in UDP and IP, seal it with the ICRC
 * and send it. Consumes @skb.
 */
int roce_xmit(struct srdma_qp *qp, const struct srdma_av *av,
	      struct sk_buff *skb)
{
	bool ipv6 = av->network_type == RXE_NETWORK_TYPE_IPV6;
	u32 ib_len = skb->len - ROCE_ICRC_BYTES;
	void *ib = skb->data;
	u32 icrc;
	int err;

	err = roce_wrap(qp, av, skb, ((struct roce_bth *)ib)->opcode, 1);
	if (err)
		return err;
	if (!skb_is_nonlinear(skb)) {
		icrc = roce_icrc(skb_network_header(skb), ipv6, ib, ib_len);
		put_unaligned_le32(icrc, ib + ib_len);
	} else {
		/* roce_alloc_skb_lent(): the ICRC is in our own last fragment */
		__le32 le;

		WARN_ON_ONCE(roce_icrc_skb(skb, ipv6, (u8 *)ib - skb->data,
					   ib_len, &icrc));
		le = cpu_to_le32(icrc);
		WARN_ON_ONCE(skb_store_bits(skb, skb->len - ROCE_ICRC_BYTES,
					    &le, sizeof(le)));
	}
	trace_srdma_roce_tx(&qp->ibqp, ib, ib_len + ROCE_ICRC_BYTES);
	srdma_count_pkt(qp, true, ib_len + ROCE_ICRC_BYTES);
	return roce_output(qp, skb, 1);
}

/*
 * Check the ICRC of a received packet: its IP header at the network header,
 * skb->data at the BTH, which must be in the skb's head; the rest may be
 * in pages.
 */
bool roce_icrc_ok(struct roce_pkt *pkt)
{
	struct sk_buff *skb = pkt->skb;
	u32 ib_len = skb->len - ROCE_ICRC_BYTES;
	__le32 want;
	u32 crc;

	if (!skb_is_nonlinear(skb))
		return roce_icrc(skb_network_header(skb), pkt->ipv6, skb->data,
				 ib_len) == get_unaligned_le32(skb->data + ib_len);
	if (skb_headlen(skb) < sizeof(struct roce_bth) ||
	    skb_copy_bits(skb, ib_len, &want, sizeof(want)))
		return false;
	if (roce_icrc_skb(skb, pkt->ipv6, 0, ib_len, &crc))
		return false;
	return crc == le32_to_cpu(want);
}

/*
 * Which of this namespace's devices a packet is for: the one on the
 * netdev it arrived on or, for packets that came over loopback, the one
 * whose netdev holds the destination address. Called under RCU.
 */
struct srdma_dev *roce_rx_dev(struct roce_net *rnet, struct sk_buff *skb)
{
	struct net *net = dev_net(skb->dev);
	struct net_device *owner = NULL;
	struct srdma_dev *dev;

	dev = roce_net_find_dev(rnet, skb->dev);
	if (dev)
		return dev;
	if (skb->protocol == htons(ETH_P_IP))
		owner = __ip_dev_find(net, ip_hdr(skb)->daddr, false);
	else if (skb->protocol == htons(ETH_P_IPV6))
		owner = roce_net_find_dev6(rnet, &ipv6_hdr(skb)->daddr);
	return owner ? roce_net_find_dev(rnet, owner) : NULL;
}

/* RoCEv2 source port: 0xC000 up, a hash of the QP for ECMP entropy. */
void roce_qp_src_port(struct srdma_qp *qp)
{
	u32 h = jhash_2words(qp->ibqp.qp_num, qp->attr.dest_qpn, 0);

	to_rqp(qp)->src_port = 0xc000 | (h & 0x3fff);
}

int roce_qp_net_init(struct roce_qp *rqp)
{
	return dst_cache_init(&rqp->dst_cache, GFP_KERNEL);
}

void roce_qp_net_fini(struct roce_qp *rqp)
{
	dst_cache_destroy(&rqp->dst_cache);
}
