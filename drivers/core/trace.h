/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srdma tracepoints: /sys/kernel/tracing/events/srdma/, trace-cmd,
 * perf, bpftrace. Off, each costs a static branch. Documentation/debugging.rst
 * says what each one shows.
 *
 * The core's events; each transport defines its own, in the same
 * system, in its trace.h (roce/trace.h, iwarp/trace.h).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM srdma

#if !defined(SRDMA_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SRDMA_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>

#include "srdma.h"

#define srdma_show_qp_state(s)						\
	__print_symbolic(s, { IB_QPS_RESET, "RESET" },			\
			 { IB_QPS_INIT, "INIT" }, { IB_QPS_RTR, "RTR" },	\
			 { IB_QPS_RTS, "RTS" }, { IB_QPS_SQD, "SQD" },	\
			 { IB_QPS_SQE, "SQE" }, { IB_QPS_ERR, "ERR" })

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

#endif /* SRDMA_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
