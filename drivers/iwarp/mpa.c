// SPDX-License-Identifier: GPL-2.0
/*
 * MPA connection set-up (RFC 5044 section 7, RFC 6581): the request and
 * reply frames, revision 1 and 2, CRC and IRD/ORD negotiation. Nothing
 * here blocks: a frame is collected from what the socket has, over as
 * many calls as the peer takes (cm.c bounds the time), and nothing past
 * the frame is read, so FPDUs that follow stay in the socket for rx.c.
 */
#include <linux/net.h>
#include <linux/slab.h>

#include "iwarp.h"

/* Take what the socket has, up to @len: bytes read or a negative errno. */
static int iwarp_sock_recv_some(struct socket *s, void *buf, size_t len)
{
	struct kvec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = { .msg_flags = MSG_DONTWAIT };
	int rc;

	rc = kernel_recvmsg(s, &msg, &iov, 1, len, MSG_DONTWAIT);
	if (rc == -EAGAIN)
		return -EINPROGRESS;	/* data_ready brings us back */
	return rc ? rc : -ECONNRESET;	/* peer closed inside the frame */
}

/*
 * Set-up frames are a few hundred bytes on a socket that has sent
 * nothing else yet: they fit in its buffer, so do not wait for room.
 */
int iwarp_sock_send(struct socket *s, const void *buf, size_t len)
{
	struct kvec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_flags = MSG_NOSIGNAL | MSG_DONTWAIT };
	int rc;

	rc = kernel_sendmsg(s, &msg, &iov, 1, len);
	if (rc == len)
		return 0;
	return rc < 0 && rc != -EAGAIN ? rc : -EIO;
}

/*
 * Send our request or reply. The request offers CRC when the module
 * parameter asks for it, RFC 6581 IRD/ORD and srdma atomics; the reply
 * answers what ep->conn holds after negotiation.
 */
int iwarp_mpa_send(struct iwarp_ep *ep, bool request, bool reject,
		   const void *pdata, u8 pdata_len)
{
	/*
	 * What follows the frame header is one area: the RFC 6581 IRD/ORD
	 * (enhanced MPA only), then the ULP's private data. One array, so
	 * that FORTIFY_SOURCE sees the private data's real room.
	 */
	struct {
		struct mpa_frame f;
		union {
			struct mpa_v2_params v2;
			u8 area[sizeof(struct mpa_v2_params) + U8_MAX];
		};
	} __packed msg = {};
	u32 v2_len = ep->enhanced ? sizeof(msg.v2) : 0;
	u8 *pd = msg.area + v2_len;

	memcpy(msg.f.key, request ? MPA_KEY_REQ : MPA_KEY_REP, MPA_KEY_LEN);
	msg.f.rev = ep->rev;
	if (ep->conn.crc)
		msg.f.flags |= MPA_FLAG_CRC;
	if (reject)
		msg.f.flags |= MPA_FLAG_REJECT;
	if (ep->enhanced) {
		msg.f.flags |= MPA_FLAG_ENHANCED;
		msg.v2.ird = cpu_to_be16(ep->conn.ird & MPA_V2_IRD_ORD_MASK);
		msg.v2.ord = cpu_to_be16(ep->conn.ord & MPA_V2_IRD_ORD_MASK);
	}
	if (request && ep->conn.atomics)
		msg.f.flags |= MPA_FLAG_SRDMA_ATOMIC_OFFER;
	if (!request && ep->conn.atomics && !reject)
		msg.f.flags |= MPA_FLAG_SRDMA_ATOMIC_ACCEPT;
	msg.f.pd_len = cpu_to_be16(v2_len + pdata_len);
	if (pdata_len)
		memcpy(pd, pdata, pdata_len);
	return iwarp_obs_mpa_sent(ep, request, reject, iwarp_sock_send(ep->sock,
			       &msg, sizeof(msg.f) + v2_len + pdata_len));
}

/* Read @len more bytes of the frame to @buf, which holds @have of them. */
static int iwarp_mpa_fill(struct iwarp_ep *ep, u8 *buf, u32 have, u32 len)
{
	int rc;

	while (have < len) {
		rc = iwarp_sock_recv_some(ep->sock, buf + have, len - have);
		if (rc < 0)
			return rc;
		have += rc;
		ep->mpa_have += rc;
	}
	return 0;
}

/*
 * Check a received frame header against @key (MPA_KEY_REQ or
 * MPA_KEY_REP): the private data length it announces, or -EPROTO.
 */
int iwarp_mpa_check_hdr(const struct mpa_frame *f, const char *key)
{
	u32 pd_len;

	BUILD_BUG_ON(U8_MAX + sizeof(struct mpa_v2_params) > MPA_MAX_PRIV_DATA);
	if (memcmp(f->key, key, MPA_KEY_LEN))
		return -EPROTO;
	if (f->rev != MPA_REV1 && f->rev != MPA_REV2)
		return -EPROTO;
	pd_len = be16_to_cpu(f->pd_len);
	/* iw_cm events carry at most 255 bytes besides the IRD/ORD words */
	if (pd_len > U8_MAX + sizeof(struct mpa_v2_params))
		return -EPROTO;
	return pd_len;
}

/*
 * Collect the frame header into ep->mpa and its private data into
 * ep->pdata, allocated to the length the header announces: 0 once all
 * of it is in, -EINPROGRESS until then. The header is checked before
 * any private data is read. Process context (the set-up work).
 */
static int iwarp_mpa_recv_frame(struct iwarp_ep *ep, const char *key)
{
	const u32 hlen = sizeof(ep->mpa);
	struct mpa_frame *f = &ep->mpa;
	int pd_len, err;

	if (ep->mpa_have < hlen) {
		err = iwarp_mpa_fill(ep, (u8 *)f, ep->mpa_have, hlen);
		if (err)
			return err;
	}
	pd_len = iwarp_mpa_check_hdr(f, key);
	if (pd_len < 0)
		return pd_len;
	/* the header is in whole: pd_len is the same on every call */
	if (pd_len && !ep->pdata) {
		ep->pdata = kmalloc(pd_len, GFP_KERNEL);
		if (!ep->pdata)
			return -ENOMEM;
	}
	err = iwarp_mpa_fill(ep, ep->pdata, ep->mpa_have - hlen, pd_len);
	if (err)
		return err;
	ep->pd_len = pd_len;
	return 0;
}

/* Strip and return the RFC 6581 IRD/ORD words from the private data. */
static int iwarp_mpa_take_v2(struct iwarp_ep *ep, u16 *ird, u16 *ord)
{
	struct mpa_v2_params v2;

	if (ep->pd_len < sizeof(v2))
		return -EPROTO;
	memcpy(&v2, ep->pdata, sizeof(v2));
	*ird = be16_to_cpu(v2.ird);
	*ord = be16_to_cpu(v2.ord);
	ep->pd_len -= sizeof(v2);
	memmove(ep->pdata, ep->pdata + sizeof(v2), ep->pd_len);
	return 0;
}

/*
 * Passive side, the request in ep->mpa and ep->pdata: fill ep->conn with
 * what the peer asked for (its ORD is our IRD and the other way round).
 * -EOPNOTSUPP for markers, which are not supported; -EPROTO for a
 * request srdma cannot take.
 */
int iwarp_mpa_take_request(struct iwarp_ep *ep)
{
	const struct mpa_frame *f = &ep->mpa;
	u16 ird = 1, ord = 1;
	int err;

	ep->rev = f->rev;
	ep->req_flags = f->flags;
	ep->enhanced = f->rev == MPA_REV2 && (f->flags & MPA_FLAG_ENHANCED);
	if (ep->enhanced) {
		err = iwarp_mpa_take_v2(ep, &ird, &ord);
		if (err)
			return err;
	}
	if (ep->pd_len > U8_MAX)
		return -EPROTO;
	ep->conn.crc = srdma_iw_crc || (f->flags & MPA_FLAG_CRC);
	ep->conn.atomics = !!(f->flags & MPA_FLAG_SRDMA_ATOMIC_OFFER);
	ep->conn.ird = min_t(u16, ord & MPA_V2_IRD_ORD_MASK, IWARP_MAX_IRD);
	ep->conn.ord = min_t(u16, ird & MPA_V2_IRD_ORD_MASK, IWARP_MAX_ORD);
	if (f->flags & MPA_FLAG_MARKERS) {
		ep->conn.atomics = false;
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * Passive side: read the request (-EINPROGRESS until all of it is in)
 * and take it; a request with markers is refused with a reject reply.
 */
int iwarp_mpa_recv_request(struct iwarp_ep *ep)
{
	int err;

	err = iwarp_mpa_recv_frame(ep, MPA_KEY_REQ);
	if (err)
		return err;
	err = iwarp_mpa_take_request(ep);
	if (err == -EOPNOTSUPP)
		iwarp_mpa_send(ep, false, true, NULL, 0);
	return err;
}

/*
 * Active side, the reply in ep->mpa and ep->pdata: settle ep->conn with
 * what the peer answered. A reject is reported through @rejected
 * (-ECONNREFUSED) with its private data kept for the CONNECT_REPLY event.
 */
int iwarp_mpa_take_reply(struct iwarp_ep *ep, bool *rejected)
{
	const struct mpa_frame *f = &ep->mpa;
	u16 ird, ord;
	int err;

	*rejected = false;
	if (f->flags & MPA_FLAG_REJECT) {
		/* the consumer gets the peer's own private data only */
		if (f->rev == MPA_REV2 && (f->flags & MPA_FLAG_ENHANCED) &&
		    iwarp_mpa_take_v2(ep, &ird, &ord))
			ep->pd_len = 0;
		/* more than an iw_cm event carries: none rather than cut */
		if (ep->pd_len > U8_MAX)
			ep->pd_len = 0;
		*rejected = true;
		return -ECONNREFUSED;
	}
	if (f->flags & MPA_FLAG_MARKERS)
		return -EPROTO;
	if (ep->enhanced) {
		if (f->rev != MPA_REV2 || !(f->flags & MPA_FLAG_ENHANCED))
			return -EPROTO;
		err = iwarp_mpa_take_v2(ep, &ird, &ord);
		if (err)
			return err;
		/* we may not have more outstanding than the peer serves */
		ep->conn.ord = min_t(u16, ep->conn.ord,
				     ird & MPA_V2_IRD_ORD_MASK);
		ep->conn.ird = max_t(u16, ep->conn.ird,
				     ord & MPA_V2_IRD_ORD_MASK);
		ep->conn.ird = min_t(u16, ep->conn.ird, IWARP_MAX_IRD);
	}
	if (ep->pd_len > U8_MAX)
		return -EPROTO;
	/* CRC is on if either side asked for it (RFC 5044 7.1.2) */
	ep->conn.crc = ep->conn.crc || (f->flags & MPA_FLAG_CRC);
	ep->conn.atomics = ep->conn.atomics &&
			   (f->flags & MPA_FLAG_SRDMA_ATOMIC_ACCEPT);
	return 0;
}

/* Active side: read the reply (-EINPROGRESS until all of it is in). */
int iwarp_mpa_recv_reply(struct iwarp_ep *ep, bool *rejected)
{
	int err;

	*rejected = false;
	err = iwarp_mpa_recv_frame(ep, MPA_KEY_REP);
	if (err)
		return err;
	return iwarp_mpa_take_reply(ep, rejected);
}
