/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iWARP's tracepoints: FPDUs, Read Requests, connection set-up and close,
 * Terminates.
 * In the core's system, srdma: /sys/kernel/tracing/events/srdma/.
 * Documentation/debugging.rst says what each one shows.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM srdma

#if !defined(SRDMA_IWARP_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SRDMA_IWARP_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>

#include "../core/transport.h"
#include "iwarp_wire.h"

/* One FPDU; @ddp is its DDP header, @len the ULPDU (MPA length field). */
DECLARE_EVENT_CLASS(srdma_iw_fpdu,
	TP_PROTO(const struct ib_qp *qp, const u8 *ddp, u32 len),
	TP_ARGS(qp, ddp, len),
	TP_STRUCT__entry(
		__string(dev, dev_name(&qp->device->dev))
		__field(u32, qpn)
		__field(u32, len)
		__field(u32, qn)
		__field(u32, msn)
		__field(u32, mo)
		__field(u32, stag)
		__field(u64, to)
		__field(u8, opcode)
		__field(bool, tagged)
		__field(bool, last)
	),
	TP_fast_assign(
		const struct ddp_tagged_hdr *t = (const void *)ddp;
		const struct ddp_untagged_hdr *u = (const void *)ddp;

		srdma_assign_str(dev, dev_name(&qp->device->dev));
		__entry->qpn = qp->qp_num;
		__entry->len = len;
		__entry->opcode = ddp[1] & RDMAP_OPCODE_MASK;
		__entry->tagged = ddp[0] & DDP_TAGGED;
		__entry->last = ddp[0] & DDP_LAST;
		__entry->stag = __entry->tagged ? be32_to_cpu(t->stag) : 0;
		__entry->to = __entry->tagged ? be64_to_cpu(t->to) : 0;
		__entry->qn = __entry->tagged ? 0 : be32_to_cpu(u->qn);
		__entry->msn = __entry->tagged ? 0 : be32_to_cpu(u->msn);
		__entry->mo = __entry->tagged ? 0 : be32_to_cpu(u->mo);
	),
	TP_printk("%s qpn %u opcode %u%s %s %#x %s %#llx len %u",
		  __get_str(dev), __entry->qpn, __entry->opcode,
		  __entry->last ? " last" : "",
		  __entry->tagged ? "stag" : "qn",
		  __entry->tagged ? __entry->stag : __entry->qn,
		  __entry->tagged ? "to" : "msn",
		  __entry->tagged ? __entry->to : (u64)__entry->msn,
		  __entry->len)
);

DEFINE_EVENT(srdma_iw_fpdu, srdma_iw_tx,
	TP_PROTO(const struct ib_qp *qp, const u8 *ddp, u32 len),
	TP_ARGS(qp, ddp, len));

DEFINE_EVENT(srdma_iw_fpdu, srdma_iw_rx,
	TP_PROTO(const struct ib_qp *qp, const u8 *ddp, u32 len),
	TP_ARGS(qp, ddp, len));

/* An iWARP Read Request sent or received: what it asks for. */
TRACE_EVENT(srdma_iw_read_req,
	TP_PROTO(const struct ib_qp *qp, bool sent,
		 const struct rdmap_read_req *rr),
	TP_ARGS(qp, sent, rr),
	TP_STRUCT__entry(
		__string(dev, dev_name(&qp->device->dev))
		__field(u32, qpn)
		__field(bool, sent)
		__field(u32, sink_stag)
		__field(u64, sink_to)
		__field(u32, size)
		__field(u32, src_stag)
		__field(u64, src_to)
	),
	TP_fast_assign(
		srdma_assign_str(dev, dev_name(&qp->device->dev));
		__entry->qpn = qp->qp_num;
		__entry->sent = sent;
		__entry->sink_stag = be32_to_cpu(rr->sink_stag);
		__entry->sink_to = be64_to_cpu(rr->sink_to);
		__entry->size = be32_to_cpu(rr->size);
		__entry->src_stag = be32_to_cpu(rr->src_stag);
		__entry->src_to = be64_to_cpu(rr->src_to);
	),
	TP_printk("%s qpn %u %s size %u src stag %#x to %#llx sink stag %#x to %#llx",
		  __get_str(dev), __entry->qpn,
		  __entry->sent ? "sent" : "received", __entry->size,
		  __entry->src_stag, __entry->src_to, __entry->sink_stag,
		  __entry->sink_to)
);

/*
 * An iWARP connection event: @step is named in iwarp/observe.c, @raddr
 * is a sockaddr_in or sockaddr_in6 with room for the latter.
 */
TRACE_EVENT(srdma_iw_cm,
	TP_PROTO(const struct ib_device *ibdev, const char *step, int err,
		 const void *raddr, u8 rev, bool crc,
		 u16 ird, u16 ord),
	TP_ARGS(ibdev, step, err, raddr, rev, crc, ird, ord),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibdev->dev))
		__string(step, step)
		__array(u8, raddr, sizeof(struct sockaddr_in6))
		__field(int, err)
		__field(u16, ird)
		__field(u16, ord)
		__field(u8, rev)
		__field(bool, crc)
	),
	TP_fast_assign(
		srdma_assign_str(dev, dev_name(&ibdev->dev));
		srdma_assign_str(step, step);
		memcpy(__entry->raddr, raddr, sizeof(struct sockaddr_in6));
		__entry->err = err;
		__entry->rev = rev;
		__entry->crc = crc;
		__entry->ird = ird;
		__entry->ord = ord;
	),
	TP_printk("%s %s peer %pISpc err %d rev %u crc %u ird %u ord %u",
		  __get_str(dev), __get_str(step), __entry->raddr,
		  __entry->err, __entry->rev, __entry->crc, __entry->ird,
		  __entry->ord)
);

/* An iWARP Terminate sent or received; @ctrl is its control word. */
TRACE_EVENT(srdma_iw_terminate,
	TP_PROTO(const struct ib_qp *qp, bool sent, u32 ctrl),
	TP_ARGS(qp, sent, ctrl),
	TP_STRUCT__entry(
		__string(dev, dev_name(&qp->device->dev))
		__field(u32, qpn)
		__field(bool, sent)
		__field(u8, layer)
		__field(u8, etype)
		__field(u8, code)
	),
	TP_fast_assign(
		srdma_assign_str(dev, dev_name(&qp->device->dev));
		__entry->qpn = qp->qp_num;
		__entry->sent = sent;
		__entry->layer = ctrl >> TERM_LAYER_SHIFT;
		__entry->etype = (ctrl >> TERM_ETYPE_SHIFT) & 0xf;
		__entry->code = (ctrl >> TERM_CODE_SHIFT) & 0xff;
	),
	TP_printk("%s qpn %u %s layer %s type %u code %#04x",
		  __get_str(dev), __entry->qpn,
		  __entry->sent ? "sent" : "received",
		  __print_symbolic(__entry->layer, { 0, "RDMAP" },
				   { 1, "DDP" }, { 2, "LLP" }),
		  __entry->etype, __entry->code)
);

#endif /* SRDMA_IWARP_TRACE_H */

/*
 * define_trace.h includes <TRACE_INCLUDE_PATH/trace.h>, which the search
 * path resolves: relative to the Kbuild's first -I, include/. Not "."
 * (the core's): that finds the core's trace.h, under the second -I.
 */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH ../drivers/iwarp
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
