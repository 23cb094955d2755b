// SPDX-License-Identifier: GPL-2.0
/*
 * iWARP observability: connection events (counters and the srdma_iw_cm
 * tracepoint). FPDUs are traced where they are framed (tx.c) and
 * parsed (rx.c).
 */
#include "iwarp.h"
#include "trace.h"

static void iw_obs_trace(struct iw_ep *ep, const char *step, int err)
{
	trace_srdma_iw_cm(&ep->dev->ibdev, step, err, &ep->raddr, ep->rev,
			  ep->conn.crc, ep->conn.ird, ep->conn.ord);
}

/* iw_cm asked for a connection (srdma_iw_connect). */
void iw_obs_connect(struct iw_ep *ep)
{
	srdma_count(ep->dev, SRDMA_CNT_IW_CONNECTS);
	iw_obs_trace(ep, "connect", 0);
}

/* An MPA request, reply or reject went out (mpa.c); returns @err. */
int iw_obs_mpa_sent(struct iw_ep *ep, bool request, bool reject, int err)
{
	if (reject)
		srdma_count(ep->dev, SRDMA_CNT_IW_REJECTS_SENT);
	else if (!request && !err)
		srdma_count(ep->dev, SRDMA_CNT_IW_ACCEPTS);
	iw_obs_trace(ep, request ? "mpa request sent" :
			 reject ? "mpa reject sent" : "mpa reply sent", err);
	return err;
}

/* Set-up ended, @err from TCP connect or the MPA exchange (cm.c). */
void iw_obs_setup(struct iw_ep *ep, int err)
{
	const char *step;

	if (!err) {
		step = ep->active ? "mpa reply received" :
				    "mpa request received";
	} else if (err == -ECONNREFUSED && ep->state == IW_EP_SETUP) {
		srdma_count(ep->dev, SRDMA_CNT_IW_REJECTS_RCVD);
		step = "mpa reject received";
	} else if (err == -EPROTO || err == -EOPNOTSUPP) {
		srdma_count(ep->dev, SRDMA_CNT_IW_MPA_FAILURES);
		step = "mpa frame refused";
	} else {
		step = "set-up failed";
	}
	iw_obs_trace(ep, step, err);
}

/* The close work is about to shut the socket down (cm.c). */
void iw_obs_close(struct iw_ep *ep)
{
	if (ep->abort)
		srdma_count(ep->dev, SRDMA_CNT_IW_ABORTS);
	iw_obs_trace(ep, ep->abort ? "abort" : "close", 0);
}
