/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place where srdma bends to the kernel it is built against.
 * Supported: Debian 12's two kernels, 6.1 and 6.12. Every difference is a
 * wrapper or a macro here, keyed on LINUX_VERSION_CODE, with the upstream
 * change that made it; the rest of the code is written for neither.
 * Included by srdma.h after its prototypes, so it may wrap srdma's own ops.
 */
#ifndef SRDMA_COMPAT_H
#define SRDMA_COMPAT_H

#include <linux/version.h>
#include <rdma/ib_verbs.h>

/*
 * True when building against kernel major.minor or later. The only use of
 * LINUX_VERSION_CODE (checkpatch warns about it once, here: an out-of-tree
 * module is built for more than the kernel it would be merged into).
 */
#define SRDMA_KERNEL_SINCE(major, minor) \
	(KERNEL_VERSION(major, minor, 0) <= LINUX_VERSION_CODE)

/*
 * 6.12, "move asm/unaligned.h to linux/unaligned.h" (v6.12-rc2): the
 * get_unaligned_*() and put_unaligned_*() helpers moved header.
 */
#if SRDMA_KERNEL_SINCE(6, 12)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * 6.11, "RDMA: Pass entire uverbs attr bundle to create cq function":
 * ib_device_ops.create_cq takes the uverbs attribute bundle instead of the
 * driver's udata. The udata is the bundle's driver_udata; kernel CQs
 * (ib_alloc_cq) pass no bundle. srdma_create_cq keeps the udata form;
 * SRDMA_CREATE_CQ_OP is what goes into the ops table.
 */
#if SRDMA_KERNEL_SINCE(6, 11)
#include <rdma/uverbs_ioctl.h>

static inline int srdma_create_cq_attrs(struct ib_cq *ibcq,
					const struct ib_cq_init_attr *attr,
					struct uverbs_attr_bundle *attrs)
{
	return srdma_create_cq(ibcq, attr,
			       attrs ? &attrs->driver_udata : NULL);
}

#define SRDMA_CREATE_CQ_OP srdma_create_cq_attrs
#else
#define SRDMA_CREATE_CQ_OP srdma_create_cq
#endif

/*
 * 6.10, "tracing: Remove second parameter to __assign_str()" (v6.10-rc1):
 * what __assign_str() does, with neither signature, for the trace.h
 * headers: __string() reserved strlen(src) + 1 bytes.
 */
#define srdma_assign_str(dst, src) strcpy(__get_str(dst), src)

/*
 * 6.5, "net: Kill sendpage" and its series (v6.5-rc1): ->sendpage() and
 * kernel_sendpage() are gone; sendmsg() with MSG_SPLICE_PAGES and a bvec
 * iterator takes page references instead. Sends the @len bytes at @off in
 * the compound @page (whole pages of our own, never slab) by reference
 * with @msg's flags; returns the bytes TCP took (fewer when the socket
 * fills) or a negative errno. Either way TCP copies where the route
 * cannot take page fragments.
 */
#include <linux/net.h>

#define SRDMA_SEND_PAGES_MAX (64 * 1024)	/* the most one call sends */

#if SRDMA_KERNEL_SINCE(6, 5)
#include <linux/bvec.h>

static inline int srdma_sock_send_pages(struct socket *s, struct msghdr *msg,
					struct page *page, u32 off, u32 len)
{
	struct bio_vec bv[SRDMA_SEND_PAGES_MAX / PAGE_SIZE + 1];
	u32 done = 0, n = 0;

	if (WARN_ON_ONCE(len > SRDMA_SEND_PAGES_MAX))
		return -EINVAL;		/* more than bv has room for */
	while (done < len) {
		u32 at = off + done;
		u32 chunk = min_t(u32, len - done,
				  PAGE_SIZE - offset_in_page(at));

		bvec_set_page(&bv[n++], nth_page(page, at >> PAGE_SHIFT),
			      chunk, offset_in_page(at));
		done += chunk;
	}
	msg->msg_flags |= MSG_SPLICE_PAGES;
	iov_iter_bvec(&msg->msg_iter, ITER_SOURCE, bv, n, len);
	return sock_sendmsg(s, msg);
}
#else
static inline int srdma_sock_send_pages(struct socket *s, struct msghdr *msg,
					struct page *page, u32 off, u32 len)
{
	u32 done = 0;

	while (done < len) {
		u32 at = off + done;
		u32 chunk = min_t(u32, len - done,
				  PAGE_SIZE - offset_in_page(at));
		int flags = msg->msg_flags;
		int rc;

		/*
		 * A blocking send waits up to sk_sndtimeo per call: one page
		 * per call, so that the caller's deadline, which sets it
		 * before each, holds for the whole.
		 */
		if (done && !(flags & MSG_DONTWAIT))
			break;

		/*
		 * TCP pushes after the last piece only, also where it copies
		 * the pages (MSG_MORE): no short segment per page.
		 */
		if (done + chunk < len)
			flags |= MSG_SENDPAGE_NOTLAST | MSG_MORE;
		rc = kernel_sendpage(s, nth_page(page, at >> PAGE_SHIFT),
				     offset_in_page(at), chunk, flags);
		if (rc <= 0)
			return done ? done : rc;
		done += rc;
		if (rc < chunk)
			break;
	}
	return done;
}
#endif

/*
 * 6.10, "net: extend ubuf_info callback to ops structure" (v6.10-rc1): the
 * completion callback of a zero-copy skb's ubuf_info moved into an ops
 * table. SRDMA_UBUF_OPS() defines @name for @complete, which
 * srdma_ubuf_set_ops() installs.
 */
#include <linux/skbuff.h>

#if SRDMA_KERNEL_SINCE(6, 10)
#define SRDMA_UBUF_OPS(name, complete_fn) \
	static const struct ubuf_info_ops name = { .complete = complete_fn }
#define srdma_ubuf_set_ops(uarg, name) ((uarg)->ops = &(name))
#else
#define SRDMA_UBUF_OPS(name, complete_fn) \
	static void (*const name)(struct sk_buff *, struct ubuf_info *, \
				  bool) = complete_fn
#define srdma_ubuf_set_ops(uarg, name) ((uarg)->callback = (name))
#endif

/*
 * 6.14, "x86/crc32: expose CRC32 functions through lib" (v6.14-rc1): from
 * then on crc32_le() folds with PCLMULQDQ on x86; before, it is the table
 * there, and only the crypto API's crc32-pclmul is accelerated
 * (roce/crc32.c takes that one for payloads).
 */
#define SRDMA_CRC32_LE_IS_TABLE \
	(IS_ENABLED(CONFIG_X86) && !SRDMA_KERNEL_SINCE(6, 14))

#endif /* SRDMA_COMPAT_H */
