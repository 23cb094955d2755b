/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srdma tracepoints: /sys/kernel/tracing/events/srdma/, trace-cmd,
 * perf, bpftrace. Off, each costs a static branch. Documentation/debugging.rst
 * says what each one shows.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM srdma

#if !defined(SRDMA_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SRDMA_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>

#include "roce_wire.h"
#include "iwarp_wire.h"

/*
 * What __assign_str() does, without its second argument, which 6.10
 * dropped: __string() reserved strlen(src) + 1 bytes.
 */
#define srdma_assign_str(dst, src) strcpy(__get_str(dst), src)

#define srdma_show_qp_state(s)						\
	__print_symbolic(s, { IB_QPS_RESET, "RESET" },			\
			 { IB_QPS_INIT, "INIT" }, { IB_QPS_RTR, "RTR" },	\
			 { IB_QPS_RTS, "RTS" }, { IB_QPS_SQD, "SQD" },	\
			 { IB_QPS_SQE, "SQE" }, { IB_QPS_ERR, "ERR" })

/* One RoCE packet; @bth is its Base Transport Header, @len from there. */
DECLARE_EVENT_CLASS(srdma_roce_pkt,
	TP_PROTO(const struct ib_qp *qp, const struct roce_bth *bth, u32 len),
	TP_ARGS(qp, bth, len),
	TP_STRUCT__entry(
		__string(dev, dev_name(&qp->device->dev))
		__field(u32, qpn)
		__field(u32, dqpn)
		__field(u32, psn)
		__field(u32, len)
		__field(u8, opcode)
		__field(bool, ackreq)
	),
	TP_fast_assign(
		srdma_assign_str(dev, dev_name(&qp->device->dev));
		__entry->qpn = qp->qp_num;
		__entry->dqpn = be32_to_cpu(bth->qpn) & ROCE_QPN_MASK;
		__entry->psn = be32_to_cpu(bth->apsn) & ROCE_PSN_MASK;
		__entry->ackreq = !!(be32_to_cpu(bth->apsn) & ROCE_BTH_ACKREQ);
		__entry->opcode = bth->opcode;
		__entry->len = len;
	),
	TP_printk("%s qpn %u dqpn %u opcode %#04x psn %#08x%s len %u",
		  __get_str(dev), __entry->qpn, __entry->dqpn,
		  __entry->opcode, __entry->psn,
		  __entry->ackreq ? " ackreq" : "", __entry->len)
);

DEFINE_EVENT(srdma_roce_pkt, srdma_roce_tx,
	TP_PROTO(const struct ib_qp *qp, const struct roce_bth *bth, u32 len),
	TP_ARGS(qp, bth, len));

DEFINE_EVENT(srdma_roce_pkt, srdma_roce_rx,
	TP_PROTO(const struct ib_qp *qp, const struct roce_bth *bth, u32 len),
	TP_ARGS(qp, bth, len));

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

/* RoCE requester: what it sends again, and why. */
TRACE_EVENT(srdma_retransmit,
	TP_PROTO(const struct ib_qp *qp, const char *why, u32 psn, u32 next_psn,
		 u8 retry_left),
	TP_ARGS(qp, why, psn, next_psn, retry_left),
	TP_STRUCT__entry(
		__string(dev, dev_name(&qp->device->dev))
		__string(why, why)
		__field(u32, qpn)
		__field(u32, psn)
		__field(u32, next_psn)
		__field(u8, retry_left)
	),
	TP_fast_assign(
		srdma_assign_str(dev, dev_name(&qp->device->dev));
		srdma_assign_str(why, why);
		__entry->qpn = qp->qp_num;
		__entry->psn = psn;
		__entry->next_psn = next_psn;
		__entry->retry_left = retry_left;
	),
	TP_printk("%s qpn %u %s from psn %#08x next %#08x retries left %u",
		  __get_str(dev), __entry->qpn, __get_str(why), __entry->psn,
		  __entry->next_psn, __entry->retry_left)
);

#define srdma_show_aeth(s)						\
	__print_symbolic(s, { 0x60, "PSN sequence error" },		\
			 { 0x61, "invalid request" },			\
			 { 0x62, "remote access error" },		\
			 { 0x63, "remote operational error" },		\
			 { 0x64, "invalid RD request" })

/* A RoCE NAK: @syndrome is the AETH's (RNR NAK: 0x20 | timer code). */
DECLARE_EVENT_CLASS(srdma_nak,
	TP_PROTO(const struct ib_qp *qp, u8 syndrome, u32 psn),
	TP_ARGS(qp, syndrome, psn),
	TP_STRUCT__entry(
		__string(dev, dev_name(&qp->device->dev))
		__field(u32, qpn)
		__field(u32, psn)
		__field(u8, syndrome)
	),
	TP_fast_assign(
		srdma_assign_str(dev, dev_name(&qp->device->dev));
		__entry->qpn = qp->qp_num;
		__entry->psn = psn;
		__entry->syndrome = syndrome;
	),
	TP_printk("%s qpn %u psn %#08x syndrome %#04x %s", __get_str(dev),
		  __entry->qpn, __entry->psn, __entry->syndrome,
		  (__entry->syndrome & ROCE_AETH_TYPE_MASK) ==
		  ROCE_AETH_RNR_NAK ? "RNR" : srdma_show_aeth(__entry->syndrome))
);

DEFINE_EVENT(srdma_nak, srdma_nak_send,
	TP_PROTO(const struct ib_qp *qp, u8 syndrome, u32 psn),
	TP_ARGS(qp, syndrome, psn));

DEFINE_EVENT(srdma_nak, srdma_nak_recv,
	TP_PROTO(const struct ib_qp *qp, u8 syndrome, u32 psn),
	TP_ARGS(qp, syndrome, psn));

/* The requester waits @delay_us after an RNR NAK, or gives up. */
TRACE_EVENT(srdma_rnr_wait,
	TP_PROTO(const struct ib_qp *qp, u32 psn, u32 delay_us, u8 rnr_left,
		 bool give_up),
	TP_ARGS(qp, psn, delay_us, rnr_left, give_up),
	TP_STRUCT__entry(
		__string(dev, dev_name(&qp->device->dev))
		__field(u32, qpn)
		__field(u32, psn)
		__field(u32, delay_us)
		__field(u8, rnr_left)
		__field(bool, give_up)
	),
	TP_fast_assign(
		srdma_assign_str(dev, dev_name(&qp->device->dev));
		__entry->qpn = qp->qp_num;
		__entry->psn = psn;
		__entry->delay_us = delay_us;
		__entry->rnr_left = rnr_left;
		__entry->give_up = give_up;
	),
	TP_printk("%s qpn %u psn %#08x %s %u us, RNR retries left %u",
		  __get_str(dev), __entry->qpn, __entry->psn,
		  __entry->give_up ? "gives up after" : "waits",
		  __entry->delay_us, __entry->rnr_left)
);

/*
 * RoCE congestion control changed a QP's rate: @why is "cnp" (a cut),
 * "timer" or "bytes" (an increase), "line rate" or "disabled" (the
 * limit ends; @rate_kbps is then the line rate). @alpha is in units of
 * 1/2^20 (ROCE_DCQCN_ALPHA_ONE).
 */
TRACE_EVENT(srdma_cc_rate,
	TP_PROTO(const struct ib_qp *qp, u32 rate_kbps, u32 target_kbps,
		 u32 alpha, const char *why),
	TP_ARGS(qp, rate_kbps, target_kbps, alpha, why),
	TP_STRUCT__entry(
		__string(dev, dev_name(&qp->device->dev))
		__string(reason, why)
		__field(u32, qpn)
		__field(u32, rate_kbps)
		__field(u32, target_kbps)
		__field(u32, alpha)
	),
	TP_fast_assign(
		srdma_assign_str(dev, dev_name(&qp->device->dev));
		srdma_assign_str(reason, why);
		__entry->qpn = qp->qp_num;
		__entry->rate_kbps = rate_kbps;
		__entry->target_kbps = target_kbps;
		__entry->alpha = alpha;
	),
	TP_printk("%s qpn %u rate_kbps %u target_kbps %u alpha %u reason %s",
		  __get_str(dev), __entry->qpn, __entry->rate_kbps,
		  __entry->target_kbps, __entry->alpha, __get_str(reason))
);

/* modify_qp moved the QP (maybe to where it was), or an error to ERR. */
TRACE_EVENT(srdma_qp_state,
	TP_PROTO(const struct ib_qp *qp, int old, int new),
	TP_ARGS(qp, old, new),
	TP_STRUCT__entry(
		__string(dev, dev_name(&qp->device->dev))
		__field(u32, qpn)
		__field(int, old)
		__field(int, new)
	),
	TP_fast_assign(
		srdma_assign_str(dev, dev_name(&qp->device->dev));
		__entry->qpn = qp->qp_num;
		__entry->old = old;
		__entry->new = new;
	),
	TP_printk("%s qpn %u %s -> %s", __get_str(dev), __entry->qpn,
		  srdma_show_qp_state(__entry->old),
		  srdma_show_qp_state(__entry->new))
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

#endif /* SRDMA_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
