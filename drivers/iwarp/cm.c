// SPDX-License-Identifier: GPL-2.0
/*
 * Connection management for iw_cm: kernel TCP sockets in the netdev's
 * namespace, the MPA exchange (mpa.c) driven by socket callbacks, and
 * the events iw_cm expects: CONNECT_REQUEST, CONNECT_REPLY, ESTABLISHED,
 * DISCONNECT and CLOSE. No port mapper: the device sets IW_F_NO_PORT_MAP.
 *
 * Set-up never blocks a worker: data_ready, state_change and a deadline
 * timer queue the endpoint's setup_work, which takes what the socket has
 * and returns. A listener holds at most IWARP_MAX_HALF_OPEN connections in
 * set-up and refuses more; each gets IWARP_MPA_TIMEOUT in all. All of it
 * runs on srdma_unbound_wq, which module exit drains.
 *
 * Endpoint references: whoever owns the endpoint's next step holds the
 * reference - the set-up, then the request table between CONNECT_REQUEST
 * and accept/reject, then the attachment to the QP until the close work.
 * Each queued setup_work holds one more. Socket callbacks find the
 * endpoint through sk_user_data under sk_callback_lock, which is cleared
 * before the owner's reference goes.
 *
 * iw_cm may drop a CONNECT_REQUEST without ever answering it (its
 * listener is destroyed while the event waits in its queue), so it is
 * never given the endpoint: it carries a handle into iwarp_requests, whose
 * entry holds the reference. Exactly one of accept, reject, the accept
 * deadline, device removal and the namespace's exit erases the entry,
 * and with it takes the endpoint and its socket; a late accept or reject
 * finds nothing.
 *
 * A request in the table counts against its listener's backlog (what
 * iw_cm passed to create_listen), as a TCP listener's accept queue does:
 * iw_cm bounds only the events it has not delivered yet, and ucma only
 * those its process has not read, so a consumer that reads requests and
 * answers them late or never would otherwise let a peer hold any number
 * of sockets for a deadline each. A full backlog makes a peer wait, as
 * TCP does, rather than fail: the listener stops taking connections from
 * its TCP sockets' accept queues, which the same backlog bounds (TCP
 * drops SYNs beyond it and clients retry), and a set-up whose request is
 * in by then waits for a slot within its own deadline and the half-open
 * cap. Whoever erases the entry frees its slot (iwarp_request_taken()),
 * which goes to the oldest waiting set-up, else lets the listener take
 * connections again. The entry holds a reference on the listener for
 * that, as it may outlive the listener's stop (iw_cm's consumer may still
 * accept it).
 *
 * Sockets hold no reference on their namespace; net.c counts them and
 * ends them when the namespace goes.
 */
#include <linux/inetdevice.h>
#include <linux/sched/signal.h>
#include <linux/tcp.h>
#include <net/addrconf.h>
#include <net/tcp.h>

#include "iwarp.h"
#include "trace.h"

static void iwarp_setup_work(struct work_struct *work);
static void iwarp_setup_expire(struct timer_list *t);
static void iwarp_close_work(struct work_struct *work);

/* handle (as iw_cm's provider_data) -> endpoint awaiting accept/reject */
static DEFINE_XARRAY_ALLOC1(iwarp_requests);
static u32 iwarp_request_next;	/* under the xa_lock: cyclic handles */

static struct iwarp_ep *iwarp_ep_alloc(struct srdma_dev *dev, bool active)
{
	struct iwarp_ep *ep = kzalloc(sizeof(*ep), GFP_KERNEL);

	if (!ep)
		return NULL;
	kref_init(&ep->ref);
	spin_lock_init(&ep->lock);
	ep->dev = dev;
	ep->active = active;
	ep->state = active ? IWARP_EP_CONNECTING : IWARP_EP_SETUP;
	INIT_WORK(&ep->setup_work, iwarp_setup_work);
	timer_setup(&ep->timer, iwarp_setup_expire, 0);
	INIT_LIST_HEAD(&ep->half_open);
	INIT_LIST_HEAD(&ep->wait_node);
	INIT_LIST_HEAD(&ep->net_node);
	INIT_DELAYED_WORK(&ep->close_work, iwarp_close_work);
	return ep;
}

static void iwarp_listener_free(struct kref *ref)
{
	struct iwarp_listener *l = container_of(ref, struct iwarp_listener,
						ref);

	kfree(l);
}

void iwarp_listener_put(struct iwarp_listener *l)
{
	kref_put(&l->ref, iwarp_listener_free);
}

/* The set-up is done with the private data (or failed). */
void iwarp_ep_pdata_free(struct iwarp_ep *ep)
{
	kfree(ep->pdata);
	ep->pdata = NULL;
	ep->pd_len = 0;
}

static void iwarp_ep_free(struct kref *ref)
{
	struct iwarp_ep *ep = container_of(ref, struct iwarp_ep, ref);

	if (ep->sock)
		iwarp_ep_sock_close(ep, false);
	if (ep->listener)
		iwarp_listener_put(ep->listener);
	WARN_ON_ONCE(ep->req_listener);	/* its eraser let go of it */
	kfree(ep->pdata);
	kfree(ep);
}

void iwarp_ep_put(struct iwarp_ep *ep)
{
	kref_put(&ep->ref, iwarp_ep_free);
}

/*
 * Queue the next set-up step. The caller holds a reference that cannot
 * be the last (the set-up's own, found under a lock), so the put of a
 * kick that was already queued is never the final one.
 */
static void iwarp_setup_kick(struct iwarp_ep *ep)
{
	kref_get(&ep->ref);
	if (!queue_work(srdma_unbound_wq, &ep->setup_work))
		iwarp_ep_put(ep);
}

/* Listener stop, QP reset or destroy: end a set-up now. Any context. */
void iwarp_ep_abort(struct iwarp_ep *ep)
{
	set_bit(IWARP_EPF_ABORT, &ep->flags);
	if (!test_bit(IWARP_EPF_SETUP_DONE, &ep->flags))
		iwarp_setup_kick(ep);
}

static void iwarp_setup_expire(struct timer_list *t)
{
	struct iwarp_ep *ep = from_timer(ep, t, timer);

	set_bit(IWARP_EPF_TIMEOUT, &ep->flags);
	iwarp_setup_kick(ep);
}

static int iwarp_event(struct iwarp_ep *ep, struct iw_cm_id *id,
		       enum iw_cm_event_type type, int status,
		       const void *pdata, u8 pd_len)
{
	struct iw_cm_event ev = {
		.event = type,
		.status = status,
		.ird = ep->conn.ird,
		.ord = ep->conn.ord,
		.private_data = (void *)pdata,
		.private_data_len = pd_len,
	};

	/* the rest of the sockaddr_storage stays zero */
	memcpy(&ev.local_addr, &ep->laddr, sizeof(ep->laddr));
	memcpy(&ev.remote_addr, &ep->raddr, sizeof(ep->raddr));
	if (type == IW_CM_EVENT_CONNECT_REQUEST)
		ev.provider_data = (void *)(uintptr_t)ep->handle;
	return id->event_handler(id, &ev);
}

static int iwarp_addr_len(const struct sockaddr *a)
{
	return a->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
					  sizeof(struct sockaddr_in);
}

/* Set-up: anything the socket does may let the set-up go on. */
static void iwarp_setup_data_ready(struct sock *sk)
{
	struct iwarp_ep *ep;

	read_lock_bh(&sk->sk_callback_lock);
	ep = sk->sk_user_data;
	if (ep)
		iwarp_setup_kick(ep);
	read_unlock_bh(&sk->sk_callback_lock);
}

static void iwarp_setup_state_change(struct sock *sk)
{
	void (*orig)(struct sock *sk) = NULL;
	struct iwarp_ep *ep;

	read_lock_bh(&sk->sk_callback_lock);
	ep = sk->sk_user_data;
	if (ep) {
		orig = ep->saved_state_change;
		iwarp_setup_kick(ep);
	}
	read_unlock_bh(&sk->sk_callback_lock);
	if (orig)
		orig(sk);
}

static void iwarp_setup_hook(struct iwarp_ep *ep)
{
	struct sock *sk = ep->sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	ep->saved_data_ready = sk->sk_data_ready;
	ep->saved_state_change = sk->sk_state_change;
	sk->sk_user_data = ep;
	sk->sk_data_ready = iwarp_setup_data_ready;
	sk->sk_state_change = iwarp_setup_state_change;
	write_unlock_bh(&sk->sk_callback_lock);
}

/*
 * Set-up is over, whichever way: from here no callback or timer kicks
 * it, and a kick already queued finds IWARP_EPF_SETUP_DONE and does nothing.
 * Called once, from the set-up work.
 */
static void iwarp_setup_end(struct iwarp_ep *ep)
{
	struct sock *sk = ep->sock ? ep->sock->sk : NULL;

	set_bit(IWARP_EPF_SETUP_DONE, &ep->flags);
	if (sk && sk->sk_user_data == ep) {
		write_lock_bh(&sk->sk_callback_lock);
		sk->sk_user_data = NULL;
		sk->sk_data_ready = ep->saved_data_ready;
		sk->sk_state_change = ep->saved_state_change;
		write_unlock_bh(&sk->sk_callback_lock);
	}
	del_timer_sync(&ep->timer);
}

/*
 * Passive side: done with the listener, last thing of the set-up. Its
 * stop waits for this, so a request it saw half-open is in iwarp_requests
 * (or gone) by the time the device can go.
 */
static void iwarp_setup_leave_listener(struct iwarp_ep *ep)
{
	struct iwarp_listener *l = ep->listener;

	ep->listener = NULL;
	spin_lock_bh(&l->lock);
	list_del_init(&ep->half_open);
	l->nhalf--;
	spin_unlock_bh(&l->lock);
	wake_up(&l->wq);
	iwarp_listener_put(l);
}

static bool iwarp_qp_state_may_connect(enum ib_qp_state state)
{
	return state == IB_QPS_INIT || state == IB_QPS_RTR;
}

/*
 * iw_cm names the QP of a connect or accept by number, and for a user
 * cm_id rdma_cm passes on whatever number the caller gave: any local
 * user could otherwise put another process's QP on a connection of its
 * own (its posted receives would take the intruder's data). A user QP
 * is claimed only from the process that created it (connect and accept
 * run in the caller's context). A kernel QP cannot be told apart from
 * here, as kernel consumers connect from process context too.
 */
static bool iwarp_qp_caller_owns(struct srdma_qp *qp)
{
	struct task_struct *owner = qp->ibqp.res.task;

	return !qp->is_user || (owner && same_thread_group(current, owner));
}

/*
 * One connection per QP: connect and accept claim the QP for their
 * endpoint, which alone may attach to it; the claim lasts until the
 * set-up fails or the close work is done with the QP.
 */
static int iwarp_qp_claim(struct srdma_qp *qp, struct iwarp_ep *ep)
{
	struct iwarp_qp *iqp = to_iwqp(qp);
	int err = 0;

	if (!iwarp_qp_caller_owns(qp))
		return -EACCES;
	spin_lock_bh(&iqp->lock);
	if (iqp->claim)
		err = -EBUSY;
	else if (iqp->released ||
		 !iwarp_qp_state_may_connect(READ_ONCE(qp->state)))
		err = -EINVAL;
	else
		iqp->claim = ep;
	spin_unlock_bh(&iqp->lock);
	return err;
}

static void iwarp_qp_unclaim(struct srdma_qp *qp, struct iwarp_ep *ep)
{
	struct iwarp_qp *iqp = to_iwqp(qp);

	spin_lock_bh(&iqp->lock);
	if (iqp->claim == ep) {
		iqp->claim = NULL;
		iqp->claim_attached = false;
	}
	spin_unlock_bh(&iqp->lock);
	wake_up(&iqp->detach_wq);
}

/*
 * Reset and destroy: the QP must be free of connections before its
 * rings go. A set-up loses its claim and aborts (it cannot attach any
 * more); an attached connection closes abortively, and we wait until
 * its close work has let go of the QP. Process context, may sleep.
 */
void iwarp_qp_detach(struct srdma_qp *qp)
{
	struct iwarp_qp *iqp = to_iwqp(qp);
	struct iwarp_ep *ep;

	spin_lock_bh(&iqp->lock);
	ep = iqp->claim;
	if (ep && !iqp->claim_attached) {
		iqp->claim = NULL;
		iwarp_ep_abort(ep);
		ep = NULL;
	} else if (ep) {
		iwarp_ep_close(ep, !iqp->term_pending);
	}
	spin_unlock_bh(&iqp->lock);
	if (ep)
		wait_event(iqp->detach_wq, READ_ONCE(iqp->claim) != ep);
}

/*
 * Socket state changes of a connected endpoint: the peer's FIN is a
 * graceful disconnect, anything that ends the connection closes it.
 */
static void iwarp_ep_state_change(struct sock *sk)
{
	void (*orig)(struct sock *sk);
	struct iwarp_ep *ep;

	read_lock_bh(&sk->sk_callback_lock);
	ep = sk->sk_user_data;
	if (!ep) {
		/* close restores the callbacks with sk_user_data cleared */
		read_unlock_bh(&sk->sk_callback_lock);
		return;
	}
	orig = ep->saved_state_change;
	switch (sk->sk_state) {
	case TCP_CLOSE_WAIT:
	case TCP_CLOSING:
	case TCP_TIME_WAIT:
	case TCP_LAST_ACK:
		WRITE_ONCE(ep->peer_closed, true);
		iwarp_ep_close(ep, false);
		break;
	case TCP_CLOSE:
		iwarp_ep_close(ep, false);
		break;
	default:
		break;
	}
	read_unlock_bh(&sk->sk_callback_lock);
	orig(sk);
}

/*
 * Attach with qp->modify_lock held, the lock every state change takes:
 * a reset (which takes the claim back) and a new INIT cannot come
 * between the claim check and the move to RTS, so a set-up that lost
 * its claim never moves a QP someone else owns now.
 */
static int iwarp_ep_attach_locked(struct iwarp_ep *ep, u32 mss)
{
	struct srdma_qp *qp = ep->qp;
	struct iwarp_qp *iqp = to_iwqp(qp);
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RTS };
	bool ours;
	int err;

	spin_lock_bh(&iqp->lock);
	ours = iqp->claim == ep && !iqp->released;
	spin_unlock_bh(&iqp->lock);
	attr.cur_qp_state = READ_ONCE(qp->state);
	if (!ours || !iwarp_qp_state_may_connect(attr.cur_qp_state))
		return -ECONNRESET;
	/* the exit closes what is connected; spare it the round trip */
	if (iwarp_net_dying(ep->inet))
		return -ENETDOWN;
	/*
	 * Sized only now, as the claim's holder: a set-up that lost its
	 * claim must not resize the buffer and rings of the connection
	 * that holds the QP now.
	 */
	err = iwarp_tx_prepare(iqp, ep, iwarp_max_payload(mss));
	if (err)
		return err;
	/* from the state seen above only: a fatal error in between fails it */
	err = srdma_modify_qp_locked(qp, &attr, IB_QP_STATE | IB_QP_CUR_STATE);
	if (err)
		return err;

	spin_lock_bh(&iqp->lock);
	/* destroy_qp took the claim back (qp_release, after its modify_lock) */
	if (iqp->claim != ep || iqp->released) {
		spin_unlock_bh(&iqp->lock);
		return -ECONNRESET;
	}
	iwarp_rx_reset(iqp);
	iwarp_tx_reset(iqp);
	iqp->conn = ep->conn;
	iqp->max_payload = iwarp_max_payload(mss);
	iqp->ep = ep;
	iqp->claim_attached = true;
	iqp->sock = ep->sock;
	iqp->tx_idx = qp->sq_cons;
	iqp->tx_complete = qp->sq_cons;
	iqp->tx_complete_end = qp->sq_cons;
	spin_unlock_bh(&iqp->lock);
	return 0;
}

/*
 * The MPA exchange is done: hand the socket to the QP, move the QP to
 * RTS and let the socket's callbacks drive rx and tx. Only the claim's
 * holder gets here, and only from INIT or RTR.
 */
static int iwarp_ep_attach(struct iwarp_ep *ep)
{
	struct srdma_qp *qp = ep->qp;
	struct sock *sk = ep->sock->sk;
	u32 mss;
	int err;

	/* one FPDU per TCP segment where the MSS allows it */
	mss = clamp_t(u32, tcp_sk(sk)->mss_cache, 256, IWARP_MAX_FPDU);
	mutex_lock(&qp->modify_lock);
	err = iwarp_ep_attach_locked(ep, mss);
	mutex_unlock(&qp->modify_lock);
	if (err)
		return err;

	write_lock_bh(&sk->sk_callback_lock);
	ep->saved_data_ready = sk->sk_data_ready;
	ep->saved_write_space = sk->sk_write_space;
	ep->saved_state_change = sk->sk_state_change;
	sk->sk_user_data = ep;
	sk->sk_data_ready = iwarp_rx_data_ready;
	sk->sk_write_space = iwarp_tx_write_space;
	sk->sk_state_change = iwarp_ep_state_change;
	write_unlock_bh(&sk->sk_callback_lock);
	iwarp_count(ep->dev, IWARP_CNT_CONNECTIONS);
	if (ep->conn.crc)
		iwarp_count(ep->dev, IWARP_CNT_CRC_CONNECTIONS);
	return 0;
}

/*
 * After the event that tells the consumer it is connected: take what
 * arrived meanwhile, then allow closing. A close that was asked for
 * before that (peer gone, QP failed, reset) is caught by the checks after.
 */
static void iwarp_ep_start(struct iwarp_ep *ep)
{
	struct iwarp_qp *iqp = to_iwqp(ep->qp);
	struct sock *sk = ep->sock->sk;

	iwarp_rx_start(iqp, ep->sock);
	/* once CONNECTED the close work may free ep: decide under the lock */
	spin_lock_bh(&ep->lock);
	if (READ_ONCE(sk->sk_state) != TCP_ESTABLISHED ||
	    READ_ONCE(ep->qp->state) == IB_QPS_ERR || ep->close_req) {
		ep->state = IWARP_EP_CLOSING;
		mod_delayed_work(srdma_unbound_wq, &ep->close_work, 0);
	} else {
		ep->state = IWARP_EP_CONNECTED;
		iwarp_tx_kick(iqp);
	}
	spin_unlock_bh(&ep->lock);
}

/*
 * Connected endpoint: close once, from the close work. One attached but
 * not yet started remembers the request for iwarp_ep_start.
 */
void iwarp_ep_close(struct iwarp_ep *ep, bool abort)
{
	unsigned long flags;

	spin_lock_irqsave(&ep->lock, flags);
	if (ep->state == IWARP_EP_CONNECTED || ep->state == IWARP_EP_DRAINING) {
		ep->state = IWARP_EP_CLOSING;
		ep->abort |= abort;
		mod_delayed_work(srdma_unbound_wq, &ep->close_work, 0);
	} else if (ep->state < IWARP_EP_CONNECTED) {
		ep->close_req = true;
		ep->abort |= abort;
	}
	spin_unlock_irqrestore(&ep->lock, flags);
}

/* Our FIN is out: the peer has IWARP_CLOSE_TIMEOUT to answer with its own. */
void iwarp_ep_drain(struct iwarp_ep *ep)
{
	unsigned long flags;

	spin_lock_irqsave(&ep->lock, flags);
	if (ep->state == IWARP_EP_CONNECTED) {
		ep->state = IWARP_EP_DRAINING;
		queue_delayed_work(srdma_unbound_wq, &ep->close_work,
				   IWARP_CLOSE_TIMEOUT);
	}
	spin_unlock_irqrestore(&ep->lock, flags);
}

/* Close once: the first run of the close work marks it done. */
static bool iwarp_ep_close_begin(struct iwarp_ep *ep)
{
	spin_lock_bh(&ep->lock);
	if (ep->state == IWARP_EP_CLOSED) {
		spin_unlock_bh(&ep->lock);
		return false;
	}
	if (ep->state == IWARP_EP_DRAINING)
		ep->abort = true;	/* the peer never answered our FIN */
	ep->state = IWARP_EP_CLOSED;
	spin_unlock_bh(&ep->lock);
	/* nobody queues us again now; drop a re-queue that raced */
	cancel_delayed_work(&ep->close_work);
	return true;
}

/* The socket's own callbacks back: none of ours runs after this. */
static void iwarp_ep_unhook(struct iwarp_ep *ep)
{
	struct sock *sk = ep->sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_user_data = NULL;
	sk->sk_data_ready = ep->saved_data_ready;
	sk->sk_write_space = ep->saved_write_space;
	sk->sk_state_change = ep->saved_state_change;
	write_unlock_bh(&sk->sk_callback_lock);
}

/*
 * Take the socket from the QP and wait until tx is done with it. The
 * Terminate pending then is the close's to send: true if there is one.
 */
static bool iwarp_close_stop_tx(struct iwarp_qp *iqp)
{
	bool term;

	spin_lock_bh(&iqp->lock);
	iqp->ep = NULL;
	iqp->sock = NULL;
	term = iqp->term_pending;
	iqp->term_pending = false;
	spin_unlock_bh(&iqp->lock);
	cancel_work_sync(&iqp->tx_work);
	/* a sender in the poster's context is done with the socket too */
	mutex_lock(&iqp->tx_mutex);
	mutex_unlock(&iqp->tx_mutex);
	return term;
}

/* Send the pending Terminate, unless the peer has closed its side. */
static void iwarp_close_terminate(struct iwarp_ep *ep, struct iwarp_qp *iqp)
{
	if (ep->peer_closed || iwarp_tx_terminate(iqp, ep->sock))
		return;
	iwarp_count(ep->dev, IWARP_CNT_TERMINATE_SENT);
	trace_srdma_iw_terminate(&iqp->qp->ibqp, true, iqp->term_ctrl);
	ep->abort = false;	/* let the Terminate reach the peer */
}

/*
 * The connection's last steps, in this order: rx takes the last bytes
 * while the callbacks are still ours, tx stops, the Terminate (queued by
 * rx, tx or that last read) goes out, the QP gives back what rx and tx
 * held and is let go, then the socket closes and iw_cm hears of it.
 */
static void iwarp_close_work(struct work_struct *work)
{
	struct iwarp_ep *ep = container_of(to_delayed_work(work),
					   struct iwarp_ep, close_work);
	struct srdma_qp *qp = ep->qp;
	struct iwarp_qp *iqp = to_iwqp(qp);

	if (!iwarp_ep_close_begin(ep))
		return;
	iwarp_rx_drain(iqp, ep->sock->sk, !ep->abort);
	iwarp_ep_unhook(ep);
	if (iwarp_close_stop_tx(iqp))
		iwarp_close_terminate(ep, iqp);
	/*
	 * rx and tx are quiet: give back what they held. The receive being
	 * filled is older than any still posted, so its flush comes first.
	 */
	iwarp_rx_flush(iqp);
	srdma_qp_closed(qp);
	spin_lock_bh(&iqp->lock);
	iwarp_tx_release(iqp);
	iqp->orq_head = iqp->orq_tail;
	spin_unlock_bh(&iqp->lock);
	iwarp_tx_buf_free(iqp);
	/* done with the QP: a reset waiting for us may go on */
	iwarp_qp_unclaim(qp, ep);

	iwarp_obs_close(ep);
	iwarp_ep_sock_close(ep, ep->abort);

	if (ep->peer_closed)
		iwarp_event(ep, ep->cm_id, IW_CM_EVENT_DISCONNECT, 0, NULL, 0);
	iwarp_event(ep, ep->cm_id, IW_CM_EVENT_CLOSE, 0, NULL, 0);
	ep->cm_id->rem_ref(ep->cm_id);
	ep->cm_id = NULL;
	ep->qp = NULL;
	srdma_qp_put(qp);
	iwarp_ep_put(ep);		/* the attachment's reference */
}

/* Why a set-up must stop now, if it must. */
static int iwarp_setup_check(struct iwarp_ep *ep)
{
	if (test_bit(IWARP_EPF_ABORT, &ep->flags))
		return -ECONNRESET;
	if (test_bit(IWARP_EPF_TIMEOUT, &ep->flags))
		return -ETIMEDOUT;
	return 0;
}

/* Active side: a socket bound where rdma_cm asked, connecting. */
static int iwarp_active_start(struct iwarp_ep *ep)
{
	struct net *net = dev_net(ep->dev->ndev);
	union iwarp_addr any;
	int err;

	err = iwarp_net_ep_enter(ep, net);
	if (err)
		return err;
	err = iwarp_sock_create(net, ep->raddr.sa.sa_family, &ep->sock);
	if (err) {
		iwarp_net_ep_leave(ep);
		return err;
	}
	err = kernel_bind(ep->sock, &ep->laddr.sa, iwarp_addr_len(&ep->laddr.sa));
	if (err == -EADDRINUSE) {
		/* rdma_cm's port is its own; TCP may have it in use */
		any = ep->laddr;
		if (any.sa.sa_family == AF_INET6)
			any.v6.sin6_port = 0;
		else
			any.v4.sin_port = 0;
		err = kernel_bind(ep->sock, &any.sa, iwarp_addr_len(&any.sa));
	}
	if (err)
		return err;
	/* before connect: its completion is a state change */
	iwarp_setup_hook(ep);
	err = kernel_connect(ep->sock, &ep->raddr.sa, iwarp_addr_len(&ep->raddr.sa),
			     O_NONBLOCK);
	return err == -EINPROGRESS ? 0 : err;
}

/* Active side: TCP connect, then our MPA request; -EINPROGRESS: later. */
static int iwarp_active_connect(struct iwarp_ep *ep)
{
	struct sock *sk;
	int err;

	if (!ep->sock) {
		err = iwarp_active_start(ep);
		if (err)
			return err;
	}
	sk = ep->sock->sk;
	switch (READ_ONCE(sk->sk_state)) {
	case TCP_SYN_SENT:
		return -EINPROGRESS;	/* state_change brings us back */
	case TCP_ESTABLISHED:
		break;
	default:
		err = sock_error(sk);
		return err ? err : -ECONNRESET;
	}
	kernel_getsockname(ep->sock, &ep->laddr.sa);
	err = iwarp_mpa_send(ep, true, false, ep->pdata, ep->pd_len);
	ibdev_dbg_ratelimited(&ep->dev->ibdev,
			      "mpa request sent: %d ird %u ord %u pd %u\n",
			      err, ep->conn.ird, ep->conn.ord, ep->pd_len);
	if (err)
		return err;
	iwarp_ep_pdata_free(ep);	/* the reply's comes in its own */
	ep->state = IWARP_EP_SETUP;
	return 0;
}

/* Active side: TCP connect, MPA request, MPA reply, attach. */
static void iwarp_setup_active(struct iwarp_ep *ep)
{
	struct iw_cm_id *id = ep->cm_id;
	bool rejected = false;
	int err;

	err = iwarp_setup_check(ep);
	if (!err && ep->state == IWARP_EP_CONNECTING)
		err = iwarp_active_connect(ep);
	if (!err)
		err = iwarp_mpa_recv_reply(ep, &rejected);
	if (err == -EINPROGRESS)
		return;
	iwarp_setup_end(ep);
	iwarp_obs_setup(ep, err);
	if (!err && iwarp_ep_attach(ep))
		err = -ECONNRESET;
	if (!err) {
		iwarp_event(ep, id, IW_CM_EVENT_CONNECT_REPLY, 0, ep->pdata,
			    ep->pd_len);
		iwarp_ep_pdata_free(ep);	/* before the close work may run */
		iwarp_ep_start(ep);
		return;
	}

	ibdev_dbg_ratelimited(&ep->dev->ibdev, "connect failed: %d\n", err);
	if (err == -ETIMEDOUT)
		iwarp_count(ep->dev, IWARP_CNT_SETUP_TIMEOUT);
	else if (err != -ECONNREFUSED)
		err = -ECONNRESET;
	iwarp_event(ep, id, IW_CM_EVENT_CONNECT_REPLY, err,
		    rejected ? ep->pdata : NULL, rejected ? ep->pd_len : 0);
	iwarp_ep_pdata_free(ep);
	id->rem_ref(id);
	ep->cm_id = NULL;
	iwarp_qp_unclaim(ep->qp, ep);
	srdma_qp_put(ep->qp);
	ep->qp = NULL;
	iwarp_ep_put(ep);		/* the set-up's reference */
}

int srdma_iw_connect(struct iw_cm_id *id, struct iw_cm_conn_param *param)
{
	struct srdma_dev *dev = to_sdev(id->device);
	struct iwarp_ep *ep;
	struct srdma_qp *qp;
	int err;

	/* what an MPA frame carries besides IRD/ORD, and iw_cm events */
	if (param->private_data_len > U8_MAX)
		return -EINVAL;
	if (id->m_remote_addr.ss_family != AF_INET &&
	    id->m_remote_addr.ss_family != AF_INET6)
		return -EAFNOSUPPORT;
	qp = srdma_qp_get(dev, param->qpn);
	if (!qp)
		return -EINVAL;
	ep = iwarp_ep_alloc(dev, true);
	if (ep && param->private_data_len) {
		/* kept until the request is sent, once TCP connects */
		ep->pdata = kmemdup(param->private_data,
				    param->private_data_len, GFP_KERNEL);
		ep->pd_len = param->private_data_len;
		if (!ep->pdata) {
			iwarp_ep_put(ep);
			ep = NULL;
		}
	}
	if (!ep) {
		srdma_qp_put(qp);
		return -ENOMEM;
	}
	err = iwarp_qp_claim(qp, ep);
	if (err) {
		srdma_qp_put(qp);
		iwarp_ep_put(ep);
		return err;
	}
	ep->qp = qp;
	ep->cm_id = id;
	id->add_ref(id);
	id->provider_data = ep;
	/* IPv4 or IPv6 (checked above): the head of the storage */
	memcpy(&ep->laddr, &id->m_local_addr, sizeof(ep->laddr));
	memcpy(&ep->raddr, &id->m_remote_addr, sizeof(ep->raddr));
	ep->rev = MPA_REV2;
	ep->enhanced = true;
	ep->conn.crc = srdma_iw_crc;
	ep->conn.atomics = true;
	ep->conn.ird = min_t(u32, param->ird, IWARP_MAX_IRD);
	ep->conn.ord = clamp_t(u32, param->ord, 1, IWARP_MAX_ORD);
	mod_timer(&ep->timer, jiffies + IWARP_MPA_TIMEOUT);
	iwarp_obs_connect(ep);
	iwarp_setup_kick(ep);
	return 0;
}

/*
 * The set-up's request is in: take a slot in its listener's backlog, in
 * ep->req_listener with a listener reference of its own, before the
 * request is published. With none free it waits on l->waiting
 * (-EINPROGRESS) until iwarp_backlog_free_locked() grants it one and
 * kicks it. Waiting costs nothing the half-open cap and the set-up
 * deadline do not bound already: a peer holds no more this way than by
 * sending its request slowly. One that gave up meanwhile gives its place
 * up too (-ENOTCONN).
 */
static int iwarp_request_admit(struct iwarp_ep *ep)
{
	struct iwarp_listener *l = ep->listener;
	int err = 0;

	spin_lock_bh(&l->lock);
	if (ep->req_listener) {
		/* granted while it waited */
	} else if (l->npending < l->backlog) {
		/* so none waits: a slot freed while any did went to them */
		l->npending++;
		kref_get(&l->ref);	/* the set-up holds one: l is alive */
		ep->req_listener = l;
	} else if (READ_ONCE(ep->sock->sk->sk_state) != TCP_ESTABLISHED) {
		err = -ENOTCONN;
	} else {
		if (list_empty(&ep->wait_node))
			list_add_tail(&ep->wait_node, &l->waiting);
		err = -EINPROGRESS;
	}
	spin_unlock_bh(&l->lock);
	return err;
}

/*
 * A slot in @l's backlog is free: it passes to the set-up that has waited
 * longest, else the listener takes connections again if it stopped for
 * want of room. The accept work is queued only while the listener is not
 * dying, which iwarp_listener_shut() sets under this lock before it
 * cancels the work: none is queued after that.
 */
static void iwarp_backlog_free_locked(struct iwarp_listener *l)
{
	struct iwarp_ep *w;

	lockdep_assert_held(&l->lock);
	w = list_first_entry_or_null(&l->waiting, struct iwarp_ep, wait_node);
	if (w) {
		/* it holds its set-up reference while it is on the list */
		list_del_init(&w->wait_node);
		kref_get(&l->ref);
		w->req_listener = l;
		iwarp_setup_kick(w);
		return;
	}
	l->npending--;
	if (l->accept_paused && !l->dying) {
		l->accept_paused = false;
		queue_work(srdma_unbound_wq, &l->accept_work);
	}
}

/*
 * Publish a request under a new handle. Any context that may sleep.
 * From here whoever erases the entry owns the set-up's reference.
 */
static int iwarp_request_add(struct iwarp_ep *ep)
{
	if (xa_alloc_cyclic(&iwarp_requests, &ep->handle, ep, xa_limit_31b,
			    &iwarp_request_next, GFP_KERNEL) >= 0)
		return 0;
	/* a failed alloc may have written a handle it did not store */
	ep->handle = 0;
	return -ENOMEM;
}

/*
 * @ep is out of the table (or never got in), and the caller owns it:
 * nothing kicks it now, and its slot in its listener's backlog is free
 * again. Once per request, by whoever erased it, or by its set-up when it
 * fails off the waiting list; the listener may be stopped by now.
 */
static void iwarp_request_taken(struct iwarp_ep *ep)
{
	struct iwarp_listener *l = ep->req_listener;

	del_timer_sync(&ep->timer);
	if (!l)
		return;			/* it never had a slot */
	ep->req_listener = NULL;
	spin_lock_bh(&l->lock);
	iwarp_backlog_free_locked(l);
	spin_unlock_bh(&l->lock);
	iwarp_listener_put(l);
}

/*
 * Take @ep back from the table, if nobody else did: true if the caller
 * now owns it. A deadline that took it counts as a set-up timeout, under
 * the table's lock, which device removal also takes: ep->dev is alive.
 */
static bool iwarp_request_take(struct iwarp_ep *ep, bool expired)
{
	bool taken;

	xa_lock(&iwarp_requests);
	taken = __xa_cmpxchg(&iwarp_requests, ep->handle, ep, NULL, 0) == ep;
	if (taken && expired)
		iwarp_count(ep->dev, IWARP_CNT_SETUP_TIMEOUT);
	xa_unlock(&iwarp_requests);
	if (taken)
		iwarp_request_taken(ep);
	return taken;
}

/* A request taken from the table that will not be accepted: end it. */
static void iwarp_request_end(struct iwarp_ep *ep)
{
	iwarp_mpa_send(ep, false, true, NULL, 0);
	iwarp_ep_put(ep);		/* the table's reference */
}

/* accept/reject: the request iw_cm names, if it is still there. */
static struct iwarp_ep *iwarp_request_claim(struct iw_cm_id *id)
{
	unsigned long handle = (uintptr_t)id->provider_data;
	struct iwarp_ep *ep;

	id->provider_data = NULL;
	if (!handle)
		return NULL;
	ep = xa_erase(&iwarp_requests, handle);
	if (ep)
		iwarp_request_taken(ep);
	return ep;
}

/* The accept deadline passed (setup_work after the timer): end it. */
static void iwarp_request_expire(struct iwarp_ep *ep)
{
	if (test_bit(IWARP_EPF_TIMEOUT, &ep->flags) &&
	    iwarp_request_take(ep, true))
		iwarp_request_end(ep);
}

/* End every request @match picks: no accept or reject can come for it. */
static void iwarp_requests_flush_if(bool (*match)(const struct iwarp_ep *ep,
						  const void *arg),
				 const void *arg)
{
	struct iwarp_ep *ep, *found;
	unsigned long i;

	do {
		found = NULL;
		xa_lock(&iwarp_requests);
		xa_for_each(&iwarp_requests, i, ep) {
			if (match(ep, arg)) {
				__xa_erase(&iwarp_requests, i);
				found = ep;
				break;
			}
		}
		xa_unlock(&iwarp_requests);
		if (found) {
			iwarp_request_taken(found);
			iwarp_request_end(found);
		}
	} while (found);
}

static bool iwarp_request_of_dev(const struct iwarp_ep *ep, const void *dev)
{
	return ep->dev == dev;
}

/* Device removal: its requests end. */
void iwarp_requests_flush(struct srdma_dev *dev)
{
	iwarp_requests_flush_if(iwarp_request_of_dev, dev);
}

/* The entry holds the endpoint's socket, so ep->inet is stable. */
static bool iwarp_request_of_net(const struct iwarp_ep *ep, const void *in)
{
	return ep->inet == in;
}

/* The namespace is going (net.c): the requests on its sockets end. */
void iwarp_requests_flush_net(struct iwarp_net *in)
{
	iwarp_requests_flush_if(iwarp_request_of_net, in);
}

/*
 * Passive side, the request is in: tell iw_cm. The request goes into
 * iwarp_requests first, with its accept deadline armed: once the event is
 * out, accept or reject may take it at once on another CPU, and iw_cm
 * may also drop the event and never answer. The set-up work holds its
 * kick's reference throughout, so ep stays valid here whoever takes it.
 */
static void iwarp_setup_hand_off(struct iwarp_ep *ep)
{
	struct iwarp_listener *l = ep->listener;
	int err = -ECONNRESET;

	ep->state = IWARP_EP_AWAIT_ACCEPT;
	/* the set-up's deadline is spent; the consumer gets a fresh one */
	clear_bit(IWARP_EPF_TIMEOUT, &ep->flags);
	set_bit(IWARP_EPF_OFFERED, &ep->flags);
	/* armed before it is published: a taker's del_timer_sync is final */
	mod_timer(&ep->timer, jiffies + IWARP_ACCEPT_TIMEOUT);
	/*
	 * A stopping listener's iw_cm would drop the request unanswered. It
	 * has a slot in the backlog (iwarp_request_admit()) either way.
	 */
	if (!READ_ONCE(l->dying))
		err = iwarp_request_add(ep);
	if (!err)
		err = iwarp_event(ep, l->cm_id, IW_CM_EVENT_CONNECT_REQUEST, 0,
				  ep->pdata, ep->pd_len);
	/* iw_cm copied it; accept and reject send their own */
	iwarp_ep_pdata_free(ep);
	if (err) {
		/* iw_cm did not take the request: ours, unless a deadline was */
		if (!ep->handle) {
			iwarp_request_taken(ep);
			iwarp_request_end(ep);
		} else if (iwarp_request_take(ep, false)) {
			iwarp_request_end(ep);
		}
	}
	iwarp_setup_leave_listener(ep);
}

/*
 * A passive set-up failed: off the waiting list first, so that no slot is
 * granted to it after that, then give back one that was. A request that
 * waited for a slot gets a reject, as one the deadline took from the
 * table does; only a peer that gave up waiting (-ENOTCONN) gets none.
 */
static void iwarp_setup_passive_fail(struct iwarp_ep *ep, int err)
{
	struct iwarp_listener *l = ep->listener;

	spin_lock_bh(&l->lock);
	list_del_init(&ep->wait_node);
	spin_unlock_bh(&l->lock);
	iwarp_request_taken(ep);
	if (!ep->req_in) {
		if (err == -ETIMEDOUT)
			iwarp_count(ep->dev, IWARP_CNT_SETUP_TIMEOUT);
	} else if (err != -ENOTCONN) {
		/* the consumer kept its backlog full for the whole deadline */
		if (err == -ETIMEDOUT)
			iwarp_count(ep->dev, IWARP_CNT_BACKLOG_REFUSED);
		iwarp_mpa_send(ep, false, true, NULL, 0);
	}
	iwarp_setup_leave_listener(ep);
	iwarp_ep_put(ep);		/* the set-up's reference */
}

/* Passive side: read the MPA request, wait for room, tell iw_cm. */
static void iwarp_setup_passive(struct iwarp_ep *ep)
{
	int err;

	err = iwarp_setup_check(ep);
	if (!err && !ep->req_in) {
		err = iwarp_mpa_recv_request(ep);
		ep->req_in = !err;
	}
	if (!err)
		err = iwarp_request_admit(ep);
	if (err == -EINPROGRESS)
		return;
	ibdev_dbg_ratelimited(&ep->dev->ibdev, "mpa request received: %d\n",
			      err);
	iwarp_setup_end(ep);
	iwarp_obs_setup(ep, err);
	if (err)
		iwarp_setup_passive_fail(ep, err);
	else
		iwarp_setup_hand_off(ep);
}

static void iwarp_setup_work(struct work_struct *work)
{
	struct iwarp_ep *ep = container_of(work, struct iwarp_ep, setup_work);

	if (test_bit(IWARP_EPF_OFFERED, &ep->flags)) {
		iwarp_request_expire(ep);
	} else if (!test_bit(IWARP_EPF_SETUP_DONE, &ep->flags)) {
		if (ep->active)
			iwarp_setup_active(ep);
		else
			iwarp_setup_passive(ep);
	}
	iwarp_ep_put(ep);		/* the kick's reference */
}

/* iw_cm gives up on a request it took: it hears no more of it. */
static void iwarp_accept_fail(struct iwarp_ep *ep)
{
	iwarp_mpa_send(ep, false, true, NULL, 0);
	iwarp_ep_put(ep);
}

/*
 * The namespace is going: end whatever the endpoint is doing, as for any
 * connection abort (set-ups fail, connections close with their events).
 * A request in iwarp_requests is the flush's (iwarp_requests_flush_net); one
 * that accept took and is attaching fails to attach, or closes here on
 * the exit's next round. The caller holds a reference; process context.
 */
void iwarp_ep_net_down(struct iwarp_ep *ep)
{
	if (!test_bit(IWARP_EPF_SETUP_DONE, &ep->flags))
		iwarp_ep_abort(ep);
	else
		iwarp_ep_close(ep, true);
}

int srdma_iw_accept(struct iw_cm_id *id, struct iw_cm_conn_param *param)
{
	struct iwarp_ep *ep = iwarp_request_claim(id);
	struct srdma_dev *dev = to_sdev(id->device);
	struct srdma_qp *qp;
	int err;

	/* expired, or ended by device removal: the peer was told */
	if (!ep)
		return -ECONNRESET;
	/* a failed accept precludes provider events: the request ends here */
	if (param->private_data_len > U8_MAX) {
		iwarp_accept_fail(ep);
		return -EINVAL;
	}
	qp = srdma_qp_get(dev, param->qpn);
	if (!qp) {
		iwarp_accept_fail(ep);
		return -EINVAL;
	}
	err = iwarp_qp_claim(qp, ep);
	if (err) {
		srdma_qp_put(qp);
		iwarp_accept_fail(ep);
		return err;
	}
	ep->qp = qp;
	/* serve at least what the peer will send; send no more than it serves */
	ep->conn.ird = clamp_t(u32, max_t(u32, ep->conn.ird, param->ird), 1,
			       IWARP_MAX_IRD);
	ep->conn.ord = clamp_t(u32, min_t(u32, ep->conn.ord, param->ord), 1,
			       IWARP_MAX_ORD);

	ep->cm_id = id;
	id->add_ref(id);
	err = iwarp_mpa_send(ep, false, false, param->private_data,
			     param->private_data_len);
	ibdev_dbg_ratelimited(&ep->dev->ibdev, "mpa reply sent: %d\n", err);
	if (!err)
		err = iwarp_ep_attach(ep);
	if (err) {
		id->rem_ref(id);
		ep->cm_id = NULL;
		ep->qp = NULL;
		iwarp_qp_unclaim(qp, ep);
		srdma_qp_put(qp);
		iwarp_ep_put(ep);
		return err;
	}
	iwarp_event(ep, id, IW_CM_EVENT_ESTABLISHED, 0, NULL, 0);
	iwarp_ep_start(ep);
	return 0;
}

int srdma_iw_reject(struct iw_cm_id *id, const void *pdata, u8 pdata_len)
{
	struct iwarp_ep *ep = iwarp_request_claim(id);

	if (!ep)
		return -ECONNRESET;
	iwarp_mpa_send(ep, false, true, pdata, pdata_len);
	kernel_sock_shutdown(ep->sock, SHUT_RDWR);
	iwarp_ep_put(ep);
	return 0;
}

/* Listening sockets: accept in a work item, one endpoint per socket. */
static void iwarp_listen_data_ready(struct sock *sk)
{
	struct iwarp_listener *l;

	read_lock_bh(&sk->sk_callback_lock);
	l = sk->sk_user_data;
	if (l && !READ_ONCE(l->dying))
		queue_work(srdma_unbound_wq, &l->accept_work);
	read_unlock_bh(&sk->sk_callback_lock);
}

/*
 * Room for one more connection in set-up? Counts it if so; the caller
 * resets one beyond the half-open cap, which bounds what peers flooding
 * the listener with set-ups hold, whatever the consumer does.
 */
static bool iwarp_listener_admit(struct iwarp_listener *l)
{
	bool ok;

	spin_lock_bh(&l->lock);
	ok = l->nhalf < IWARP_MAX_HALF_OPEN;
	if (ok)
		l->nhalf++;
	spin_unlock_bh(&l->lock);
	if (!ok)
		iwarp_count(l->dev, IWARP_CNT_SETUP_REFUSED);
	return ok;
}

/*
 * May the accept work take a connection from the accept queue? Not while
 * the backlog is full of requests the consumer has not answered: the
 * connections stay queued in TCP, as they would for a TCP server that
 * does not call accept(), until iwarp_backlog_free_locked() makes room
 * and queues the work again. Counted once per pause.
 */
static bool iwarp_listener_room(struct iwarp_listener *l)
{
	bool room;

	spin_lock_bh(&l->lock);
	room = l->npending < l->backlog;
	if (!room && !l->accept_paused) {
		l->accept_paused = true;
		iwarp_count(l->dev, IWARP_CNT_ACCEPT_PAUSED);
	}
	spin_unlock_bh(&l->lock);
	return room;
}

/* A new connection: start its set-up, or close it at once. */
static void iwarp_accept_one(struct iwarp_listener *l, struct socket *ns)
{
	struct iwarp_ep *ep = NULL;

	/* a child inherits the listener's callbacks: undo */
	write_lock_bh(&ns->sk->sk_callback_lock);
	ns->sk->sk_user_data = NULL;
	ns->sk->sk_data_ready = l->saved_data_ready;
	write_unlock_bh(&ns->sk->sk_callback_lock);

	if (!iwarp_listener_admit(l)) {
		sock_no_linger(ns->sk);	/* RST: nothing of it lingers */
		sock_release(ns);
		return;
	}
	ep = iwarp_ep_alloc(l->dev, false);
	/* last: a namespace that is going takes no new connection */
	if (!ep || kernel_getsockname(ns, &ep->laddr.sa) < 0 ||
	    kernel_getpeername(ns, &ep->raddr.sa) < 0 ||
	    iwarp_net_ep_enter(ep, sock_net(ns->sk))) {
		kfree(ep);
		sock_no_linger(ns->sk);
		sock_release(ns);
		spin_lock_bh(&l->lock);
		l->nhalf--;
		spin_unlock_bh(&l->lock);
		wake_up(&l->wq);
		return;
	}
	ep->sock = ns;
	tcp_sock_set_nodelay(ns->sk);
	kref_get(&l->ref);
	ep->listener = l;
	spin_lock_bh(&l->lock);
	list_add_tail(&ep->half_open, &l->half_open);
	spin_unlock_bh(&l->lock);
	/* armed before any kick: the set-up's end must find it armed */
	mod_timer(&ep->timer, jiffies + IWARP_MPA_TIMEOUT);
	iwarp_setup_hook(ep);
	iwarp_setup_kick(ep);		/* the request may be in already */
}

/*
 * A connection waits in @s's accept queue. Unlocked: one queued after the
 * look runs data_ready, which queues the accept work again.
 */
static bool iwarp_listen_queued(struct socket *s)
{
	return !reqsk_queue_empty(&inet_csk(s->sk)->icsk_accept_queue);
}

static void iwarp_accept_work(struct work_struct *work)
{
	struct iwarp_listener *l = container_of(work, struct iwarp_listener,
					     accept_work);
	int budget = IWARP_ACCEPT_BUDGET;
	struct socket *ns;
	int i;

	for (i = 0; i < l->nsocks; i++) {
		struct socket *s = l->socks[i];

		while (!READ_ONCE(l->dying) && iwarp_listen_queued(s)) {
			if (!iwarp_listener_room(l))
				return;		/* paused, for every socket */
			if (kernel_accept(s, &ns, O_NONBLOCK))
				break;
			iwarp_accept_one(l, ns);
			if (--budget)
				continue;
			/* a flood: let other work have the worker */
			queue_work(srdma_unbound_wq, &l->accept_work);
			return;
		}
	}
}

static int iwarp_listen_one(struct iwarp_listener *l,
			    struct sockaddr_storage *a, int backlog)
{
	struct socket *s;
	struct sock *sk;
	int err;

	if (l->nsocks == IWARP_MAX_LISTEN)
		return -ENOSPC;
	err = iwarp_sock_create(l->net, a->ss_family, &s);
	if (err)
		return err;
	sk = s->sk;
	if (a->ss_family == AF_INET6)
		sk->sk_ipv6only = true;	/* IPv4 has its own sockets */
	err = kernel_bind(s, (struct sockaddr *)a,
			  iwarp_addr_len((struct sockaddr *)a));
	if (!err)
		err = kernel_listen(s, backlog);
	if (err) {
		sock_release(s);
		return err;
	}
	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_user_data = l;
	l->saved_data_ready = sk->sk_data_ready;
	sk->sk_data_ready = iwarp_listen_data_ready;
	write_unlock_bh(&sk->sk_callback_lock);
	l->socks[l->nsocks++] = s;
	return 0;
}

/*
 * The addresses a wildcard listen binds, at most IWARP_MAX_LISTEN: the
 * netdev's IPv4 ones, on the wildcard's port. Returns how many.
 */
static int iwarp_listen_addrs4(struct net_device *ndev,
			       const struct sockaddr_storage *wild,
			       struct sockaddr_storage *addrs)
{
	const struct sockaddr_in *w = (const void *)wild;
	struct in_device *in_dev;
	const struct in_ifaddr *ifa;
	int n = 0;

	rcu_read_lock();
	in_dev = __in_dev_get_rcu(ndev);
	if (in_dev) {
		in_dev_for_each_ifa_rcu(ifa, in_dev) {
			struct sockaddr_in *a = (void *)&addrs[n];

			if (n == IWARP_MAX_LISTEN)
				break;
			memset(a, 0, sizeof(addrs[n]));
			a->sin_family = AF_INET;
			a->sin_port = w->sin_port;
			a->sin_addr.s_addr = ifa->ifa_local;
			n++;
		}
	}
	rcu_read_unlock();
	return n;
}

/*
 * Likewise for IPv6: the netdev's addresses but tentative ones (their
 * duplicate address detection is not through), link-local ones scoped
 * to the netdev.
 */
static int iwarp_listen_addrs6(struct net_device *ndev,
			       const struct sockaddr_storage *wild,
			       struct sockaddr_storage *addrs)
{
	const struct sockaddr_in6 *w = (const void *)wild;
	struct inet6_dev *idev = in6_dev_get(ndev);
	struct inet6_ifaddr *ifp;
	int n = 0;

	if (!idev)
		return 0;
	read_lock_bh(&idev->lock);
	list_for_each_entry(ifp, &idev->addr_list, if_list) {
		struct sockaddr_in6 *a = (void *)&addrs[n];

		if (n == IWARP_MAX_LISTEN)
			break;
		if (ifp->flags & IFA_F_TENTATIVE)
			continue;
		memset(a, 0, sizeof(addrs[n]));
		a->sin6_family = AF_INET6;
		a->sin6_port = w->sin6_port;
		a->sin6_addr = ifp->addr;
		if (ipv6_addr_type(&ifp->addr) & IPV6_ADDR_LINKLOCAL)
			a->sin6_scope_id = ndev->ifindex;
		n++;
	}
	read_unlock_bh(&idev->lock);
	in6_dev_put(idev);
	return n;
}

/* A wildcard listen binds each address the netdev has, like a NIC does. */
static int iwarp_listen_wildcard(struct iwarp_listener *l,
				 const struct sockaddr_storage *wild,
				 int backlog)
{
	struct net_device *ndev = l->dev->ndev;
	struct sockaddr_storage *addrs;
	int i, n, err = 0;

	addrs = kcalloc(IWARP_MAX_LISTEN, sizeof(*addrs), GFP_KERNEL);
	if (!addrs)
		return -ENOMEM;
	if (wild->ss_family == AF_INET)
		n = iwarp_listen_addrs4(ndev, wild, addrs);
	else
		n = iwarp_listen_addrs6(ndev, wild, addrs);
	for (i = 0; i < n; i++) {
		int e = iwarp_listen_one(l, &addrs[i], backlog);

		if (e && !err)
			err = e;
	}
	kfree(addrs);
	/* an address-less netdev listens on nothing, as a NIC would */
	return l->nsocks || !n ? 0 : err;
}

static bool iwarp_addr_is_any(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	return ipv6_addr_any(&((const struct sockaddr_in6 *)a)->sin6_addr);
}

static void iwarp_listener_shut(struct iwarp_listener *l)
{
	struct iwarp_ep *ep;
	int i;

	/*
	 * Under the lock: a backlog slot freed from here on (by a request
	 * that outlives the stop) queues no accept work after the cancel.
	 */
	spin_lock_bh(&l->lock);
	WRITE_ONCE(l->dying, true);
	spin_unlock_bh(&l->lock);
	for (i = 0; i < l->nsocks; i++) {
		struct sock *sk = l->socks[i]->sk;

		write_lock_bh(&sk->sk_callback_lock);
		sk->sk_user_data = NULL;
		sk->sk_data_ready = l->saved_data_ready;
		write_unlock_bh(&sk->sk_callback_lock);
	}
	cancel_work_sync(&l->accept_work);
	for (i = 0; i < l->nsocks; i++)
		sock_release(l->socks[i]);
	/* a child still queued could have run our callback until now */
	cancel_work_sync(&l->accept_work);
	l->nsocks = 0;

	/*
	 * No set-up outlives its listener, waiting for a backlog slot or
	 * not: end them and wait. Requests may: their erasers free their
	 * slots (iwarp_request_taken()).
	 */
	spin_lock_bh(&l->lock);
	list_for_each_entry(ep, &l->half_open, half_open)
		iwarp_ep_abort(ep);
	spin_unlock_bh(&l->lock);
	wait_event(l->wq, !READ_ONCE(l->nhalf));
}

/*
 * Close the listening sockets and end the set-ups behind them, once:
 * iw_cm's destroy_listen and the namespace's exit may both ask.
 */
void iwarp_listener_stop(struct iwarp_listener *l)
{
	mutex_lock(&l->stop_lock);
	if (!l->stopped) {
		iwarp_listener_shut(l);
		iwarp_net_listener_leave(l);
		l->stopped = true;
	}
	mutex_unlock(&l->stop_lock);
}

int srdma_iw_create_listen(struct iw_cm_id *id, int backlog)
{
	struct sockaddr_storage *a = &id->m_local_addr;
	struct iwarp_listener *l;
	int err;

	if (a->ss_family != AF_INET && a->ss_family != AF_INET6)
		return -EAFNOSUPPORT;
	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l)
		return -ENOMEM;
	kref_init(&l->ref);
	spin_lock_init(&l->lock);
	mutex_init(&l->stop_lock);
	INIT_LIST_HEAD(&l->half_open);
	INIT_LIST_HEAD(&l->waiting);
	INIT_LIST_HEAD(&l->net_node);
	init_waitqueue_head(&l->wq);
	l->dev = to_sdev(id->device);
	l->net = dev_net(l->dev->ndev);
	l->cm_id = id;
	INIT_WORK(&l->accept_work, iwarp_accept_work);
	err = iwarp_net_listener_enter(l);
	if (err) {
		kfree(l);
		return err;
	}
	backlog = clamp(backlog, 1, IWARP_MAX_BACKLOG);
	l->backlog = backlog;
	if (iwarp_addr_is_any(a))
		err = iwarp_listen_wildcard(l, a, backlog);
	else
		err = iwarp_listen_one(l, a, backlog);
	if (err) {
		iwarp_listener_stop(l);
		iwarp_listener_put(l);	/* nothing listened: the last one */
		return err;
	}
	id->add_ref(id);
	id->provider_data = l;
	return 0;
}

int srdma_iw_destroy_listen(struct iw_cm_id *id)
{
	struct iwarp_listener *l = id->provider_data;

	if (!l)
		return 0;
	id->provider_data = NULL;
	iwarp_listener_stop(l);
	/*
	 * Stopped: no set-up is left to hand a request to the id, so l uses
	 * it no more; requests may keep l a while, never l->cm_id.
	 */
	id->rem_ref(id);
	iwarp_listener_put(l);
	return 0;
}
