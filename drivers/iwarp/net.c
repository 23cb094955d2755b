// SPDX-License-Identifier: GPL-2.0
/*
 * iWARP sockets and network namespaces.
 *
 * siwarp's TCP sockets are kernel sockets: they hold no reference on
 * their namespace, or a namespace where siwarp ever had a connection
 * would never be dismantled. In exchange nothing of ours may outlive the
 * namespace: every socket is counted here from its creation to its
 * release, and the pernet exit, which runs once the last reference on
 * the namespace is gone, ends them all (listeners stop, set-ups abort,
 * connections close abortively, lingering closes are reset) and waits
 * until the count is zero before TCP's own exit runs.
 *
 * A graceful close keeps its socket here until TCP has finished the FIN
 * exchange (or IW_LINGER_TIMEOUT passed) rather than leaving an orphan
 * that TCP would keep after the namespace is gone.
 */
#include <linux/tcp.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/tcp_states.h>

#include "iwarp.h"

#define IW_LINGER_TIMEOUT (60 * HZ)	/* as TCP's tcp_fin_timeout */

struct iw_net {
	spinlock_t lock;		/* everything below */
	bool dying;			/* pernet exit began: no new sockets */
	unsigned int owners;		/* endpoints, listeners, lingerers */
	struct list_head eps;		/* endpoints that own a socket */
	struct list_head listeners;	/* listeners that own sockets */
	struct list_head lingering;	/* graceful closes under way */
	wait_queue_head_t wq;		/* exit waits for owners == 0 */
};

/* A socket closed gracefully: released once TCP is done with the FIN. */
struct iw_linger {
	struct list_head node;		/* on iw_net.lingering */
	struct iw_net *in;
	struct socket *sock;
	struct delayed_work work;	/* TCP closed it, or the deadline */
	void (*saved_state_change)(struct sock *sk);
};

static unsigned int iw_net_id;

static struct iw_net *iw_net(struct net *net)
{
	return net_generic(net, iw_net_id);
}

/* Counts a new owner of sockets in @in, unless the namespace is going. */
static bool iw_net_enter(struct iw_net *in, struct list_head *node,
			 struct list_head *list)
{
	bool ok;

	spin_lock_bh(&in->lock);
	ok = !in->dying;
	if (ok) {
		in->owners++;
		list_add_tail(node, list);
	}
	spin_unlock_bh(&in->lock);
	return ok;
}

/* The owner's sockets are released. The wake-up is the last use of @in. */
static void iw_net_leave(struct iw_net *in)
{
	spin_lock_bh(&in->lock);
	if (!--in->owners)
		wake_up(&in->wq);
	spin_unlock_bh(&in->lock);
}

static void iw_net_unlist(struct iw_net *in, struct list_head *node)
{
	spin_lock_bh(&in->lock);
	list_del_init(node);
	spin_unlock_bh(&in->lock);
}

bool iw_net_dying(struct iw_net *in)
{
	return READ_ONCE(in->dying);
}

/*
 * An endpoint is about to own a socket in @net: the socket's own, which
 * for an accepted one is its listener's even if the netdev moved since.
 */
int iw_net_ep_enter(struct iw_ep *ep, struct net *net)
{
	struct iw_net *in = iw_net(net);

	if (!iw_net_enter(in, &ep->net_node, &in->eps))
		return -ENETDOWN;
	ep->inet = in;
	return 0;
}

/* The endpoint's socket is gone, or it never got one. */
void iw_net_ep_leave(struct iw_ep *ep)
{
	struct iw_net *in = ep->inet;

	iw_net_unlist(in, &ep->net_node);
	ep->inet = NULL;
	iw_net_leave(in);
}

/* A listener is about to own sockets in l->net. */
int iw_net_listener_enter(struct iw_listener *l)
{
	struct iw_net *in = iw_net(l->net);

	if (!iw_net_enter(in, &l->net_node, &in->listeners))
		return -ENETDOWN;
	l->inet = in;
	return 0;
}

void iw_net_listener_leave(struct iw_listener *l)
{
	struct iw_net *in = l->inet;

	iw_net_unlist(in, &l->net_node);
	l->inet = NULL;
	iw_net_leave(in);
}

/* A kernel TCP socket: no reference on @net, the pernet exit ends it. */
int iw_sock_create(struct net *net, int family, struct socket **out)
{
	struct socket *s;
	int err;

	err = sock_create_kern(net, family, SOCK_STREAM, IPPROTO_TCP, &s);
	if (err)
		return err;
	sock_set_reuseaddr(s->sk);
	tcp_sock_set_nodelay(s->sk);
	*out = s;
	return 0;
}

static void iw_sock_abort(struct socket *s)
{
	sock_no_linger(s->sk);	/* RST: nothing of it stays with TCP */
	sock_release(s);
}

static void iw_linger_state_change(struct sock *sk)
{
	void (*orig)(struct sock *sk) = NULL;
	struct iw_linger *lg;

	read_lock_bh(&sk->sk_callback_lock);
	lg = sk->sk_user_data;
	if (lg) {
		orig = lg->saved_state_change;
		if (sk->sk_state == TCP_CLOSE)
			mod_delayed_work(srdma_unbound_wq, &lg->work, 0);
	}
	read_unlock_bh(&sk->sk_callback_lock);
	if (orig)
		orig(sk);
}

static void iw_linger_work(struct work_struct *work)
{
	struct iw_linger *lg = container_of(to_delayed_work(work),
					    struct iw_linger, work);
	struct sock *sk = lg->sock->sk;

	/* off the list first: the exit kicks no work that is about to go */
	iw_net_unlist(lg->in, &lg->node);
	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_user_data = NULL;
	sk->sk_state_change = lg->saved_state_change;
	write_unlock_bh(&sk->sk_callback_lock);
	cancel_delayed_work(&lg->work);	/* a kick that raced */

	/* past the deadline, or the namespace is going: reset */
	if (READ_ONCE(sk->sk_state) != TCP_CLOSE)
		iw_sock_abort(lg->sock);
	else
		sock_release(lg->sock);
	iw_net_leave(lg->in);
	kfree(lg);
}

/* No FIN to wait for in these states: release at once. */
static bool iw_sock_needs_linger(struct sock *sk)
{
	return !((1 << READ_ONCE(sk->sk_state)) &
		 (TCPF_CLOSE | TCPF_SYN_SENT | TCPF_LISTEN));
}

/*
 * Graceful close: FIN now, release once TCP reaches CLOSE. The caller's
 * count in @in passes to the lingerer. False if it could not linger.
 */
static bool iw_sock_linger(struct iw_net *in, struct socket *s)
{
	struct sock *sk = s->sk;
	struct iw_linger *lg;

	kernel_sock_shutdown(s, SHUT_RDWR);
	if (!iw_sock_needs_linger(sk))
		return false;
	lg = kzalloc(sizeof(*lg), GFP_KERNEL);
	if (!lg)
		return false;
	lg->in = in;
	lg->sock = s;
	INIT_DELAYED_WORK(&lg->work, iw_linger_work);
	spin_lock_bh(&in->lock);
	if (in->dying) {
		spin_unlock_bh(&in->lock);
		kfree(lg);
		return false;
	}
	list_add_tail(&lg->node, &in->lingering);
	write_lock_bh(&sk->sk_callback_lock);
	lg->saved_state_change = sk->sk_state_change;
	sk->sk_user_data = lg;
	sk->sk_state_change = iw_linger_state_change;
	write_unlock_bh(&sk->sk_callback_lock);
	queue_delayed_work(srdma_unbound_wq, &lg->work, IW_LINGER_TIMEOUT);
	spin_unlock_bh(&in->lock);
	/* TCP may have finished before the callback was ours */
	if (!iw_sock_needs_linger(sk))
		mod_delayed_work(srdma_unbound_wq, &lg->work, 0);
	return true;
}

/*
 * Release an endpoint's socket: with a RST for @abort, else after a
 * graceful close. Either way the namespace's exit waits for it. Process
 * context; the endpoint's callbacks must be off the socket.
 */
void iw_ep_sock_close(struct iw_ep *ep, bool abort)
{
	struct iw_net *in = ep->inet;
	struct socket *s = ep->sock;

	ep->sock = NULL;
	iw_net_unlist(in, &ep->net_node);
	ep->inet = NULL;
	if (!abort && !iw_net_dying(in) && iw_sock_linger(in, s))
		return;
	iw_sock_abort(s);
	iw_net_leave(in);
}

/*
 * The next endpoint this pass of the exit has not seen, with a reference
 * (one that is being freed releases its socket itself). The list is
 * walked from its head each time: entries go while the lock is dropped.
 */
static struct iw_ep *iw_net_next_ep(struct iw_net *in, unsigned int pass)
{
	struct iw_ep *ep;

	spin_lock_bh(&in->lock);
	list_for_each_entry(ep, &in->eps, net_node) {
		if (ep->net_pass == pass)
			continue;
		ep->net_pass = pass;
		if (kref_get_unless_zero(&ep->ref)) {
			spin_unlock_bh(&in->lock);
			return ep;
		}
	}
	spin_unlock_bh(&in->lock);
	return NULL;
}

static struct iw_listener *iw_net_next_listener(struct iw_net *in,
						unsigned int pass)
{
	struct iw_listener *l;

	spin_lock_bh(&in->lock);
	list_for_each_entry(l, &in->listeners, net_node) {
		if (l->net_pass == pass)
			continue;
		l->net_pass = pass;
		if (kref_get_unless_zero(&l->ref)) {
			spin_unlock_bh(&in->lock);
			return l;
		}
	}
	spin_unlock_bh(&in->lock);
	return NULL;
}

/* One round of ending everything: each step is harmless if repeated. */
static void iw_net_abort_all(struct iw_net *in, unsigned int pass)
{
	struct iw_listener *l;
	struct iw_linger *lg;
	struct iw_ep *ep;

	/* listeners first: no new set-up starts behind our back */
	while ((l = iw_net_next_listener(in, pass))) {
		iw_listener_stop(l);
		iw_listener_put(l);
	}
	/* requests iw_cm holds: nobody will accept them in here now */
	iw_requests_flush_net(in);
	while ((ep = iw_net_next_ep(in, pass))) {
		iw_ep_net_down(ep);
		iw_ep_put(ep);
	}
	spin_lock_bh(&in->lock);
	list_for_each_entry(lg, &in->lingering, node)
		mod_delayed_work(srdma_unbound_wq, &lg->work, 0);
	spin_unlock_bh(&in->lock);
}

static __net_init int iw_net_init(struct net *net)
{
	struct iw_net *in = iw_net(net);

	spin_lock_init(&in->lock);
	INIT_LIST_HEAD(&in->eps);
	INIT_LIST_HEAD(&in->listeners);
	INIT_LIST_HEAD(&in->lingering);
	init_waitqueue_head(&in->wq);
	return 0;
}

/*
 * The namespace is going (or the module is): end every socket of ours in
 * it and wait for them, repeating the round now and then for anything
 * that was between two states when the last one looked, as
 * netdev_wait_allrefs() does for netdev references.
 */
static __net_exit void iw_net_exit(struct net *net)
{
	struct iw_net *in = iw_net(net);
	unsigned int pass = 0;

	spin_lock_bh(&in->lock);
	in->dying = true;
	spin_unlock_bh(&in->lock);
	for (;;) {
		iw_net_abort_all(in, ++pass);
		if (wait_event_timeout(in->wq, !READ_ONCE(in->owners), HZ))
			break;
		if (!(pass % 10))
			pr_warn("netns exit: waiting for %u iWARP socket owners\n",
				READ_ONCE(in->owners));
	}
	/* the last iw_net_leave() is out of its critical section */
	spin_lock_bh(&in->lock);
	spin_unlock_bh(&in->lock);
}

static struct pernet_operations iw_net_ops = {
	.init = iw_net_init,
	.exit = iw_net_exit,
	.id = &iw_net_id,
	.size = sizeof(struct iw_net),
};

/*
 * A subsystem, registered after TCP: its exit runs after the netdevs
 * (and so our devices on them) are gone and before TCP's own exit.
 */
int srdma_iw_net_init(void)
{
	return register_pernet_subsys(&iw_net_ops);
}

void srdma_iw_net_exit(void)
{
	unregister_pernet_subsys(&iw_net_ops);
}
