/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RoCE's tracepoints: packets, the requester's recovery (retransmits,
 * NAKs, RNR waits) and congestion control's rate changes.
 * In the core's system, srdma: /sys/kernel/tracing/events/srdma/.
 * Documentation/debugging.rst says what each one shows.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM srdma

#if !defined(SRDMA_ROCE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SRDMA_ROCE_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>

#include "../core/transport.h"
#include "roce_wire.h"

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

/* A GSO train (train.c): @pkts packets of @pkt_len bytes, the first @bth. */
TRACE_EVENT(srdma_roce_train,
	TP_PROTO(const struct ib_qp *qp, const struct roce_bth *bth, u32 pkts,
		 u32 pkt_len),
	TP_ARGS(qp, bth, pkts, pkt_len),
	TP_STRUCT__entry(
		__string(dev, dev_name(&qp->device->dev))
		__field(u32, qpn)
		__field(u32, psn)
		__field(u8, opcode)
		__field(u32, pkts)
		__field(u32, pkt_len)
	),
	TP_fast_assign(
		srdma_assign_str(dev, dev_name(&qp->device->dev));
		__entry->qpn = qp->qp_num;
		__entry->psn = be32_to_cpu(bth->apsn) & ROCE_PSN_MASK;
		__entry->opcode = bth->opcode;
		__entry->pkts = pkts;
		__entry->pkt_len = pkt_len;
	),
	TP_printk("%s qpn %u psn %#08x opcode %#04x %u packets of %u bytes",
		  __get_str(dev), __entry->qpn, __entry->psn, __entry->opcode,
		  __entry->pkts, __entry->pkt_len)
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

#endif /* SRDMA_ROCE_TRACE_H */

/*
 * define_trace.h includes <TRACE_INCLUDE_PATH/trace.h>, which the search
 * path resolves: relative to the Kbuild's first -I, include/. Not "."
 * (the core's): that finds the core's trace.h, under the second -I.
 */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH ../drivers/roce
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
