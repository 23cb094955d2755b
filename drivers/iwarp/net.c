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
 * exchange (or IWARP_LINGER_TIMEOUT passed) rather than leaving an orphan
 * that TCP would keep after the namespace is gone.
 */
#include <linux/tcp.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/tcp_states.h>

#include "iwarp.h"

#define IWARP_LINGER_TIMEOUT (60 * HZ)	/* as TCP's tcp_fin_timeout */

struct iwarp_net {
	spinlock_t lock;		/* everything below */
	bool dying;			/* pernet exit began: no new sockets */
	unsigned int owners;		/* endpoints, listeners, lingerers */
	struct list_head eps;		/* endpoints that own a socket */
	struct list_head listeners;	/* listeners that own sockets */
	struct list_head lingering;	/* graceful closes under way */
	wait_queue_head_t wq;		/* exit waits for owners == 0 */
};

/* A socket closed gracefully: released once TCP is done with the FIN. */
struct iwarp_linger {
	struct list_head node;		/* on iwarp_net.lingering */
	struct iwarp_net *in;
	struct socket *sock;
	struct delayed_work work;	/* TCP closed it, or the deadline */
	void (*saved_state_change)(struct sock *sk);
};

static unsigned int iwarp_net_id;

static struct iwarp_net *iwarp_net(struct net *net)
{
	return net_generic(net, iwarp_net_id);
}

/* Counts a new owner of sockets in @in, unless the namespace is going. */
static bool iwarp_net_enter(struct iwarp_net *in, struct list_head *node,
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
static void iwarp_net_leave(struct iwarp_net *in)
{
	spin_lock_bh(&in->lock);
	if (!--in->owners)
		wake_up(&in->wq);
	spin_unlock_bh(&in->lock);
}

static void iwarp_net_unlist(struct iwarp_net *in, struct list_head *node)
{
	spin_lock_bh(&in->lock);
	list_del_init(node);
	spin_unlock_bh(&in->lock);
}

bool iwarp_net_dying(struct iwarp_net *in)
{
	return READ_ONCE(in->dying);
}

/*
 * An endpoint is about to own a socket in @net: the socket's own, which
 * for an accepted one is its listener's even if the netdev moved since.
 */
int iwarp_net_ep_enter(struct iwarp_ep *ep, struct net *net)
{
	struct iwarp_net *in = iwarp_net(net);

	if (!iwarp_net_enter(in, &ep->net_node, &in->eps))
		return -ENETDOWN;
	ep->inet = in;
	return 0;
}

/* The endpoint's socket is gone, or it never got one. */
void iwarp_net_ep_leave(struct iwarp_ep *ep)
{
	struct iwarp_net *in = ep->inet;

	iwarp_net_unlist(in, &ep->net_node);
	ep->inet = NULL;
	iwarp_net_leave(in);
}

/* A listener is about to own sockets in l->net. */
int iwarp_net_listener_enter(struct iwarp_listener *l)
{
	struct iwarp_net *in = iwarp_net(l->net);

	if (!iwarp_net_enter(in, &l->net_node, &in->listeners))
		return -ENETDOWN;
	l->inet = in;
	return 0;
}

void iwarp_net_listener_leave(struct iwarp_listener *l)
{
	struct iwarp_net *in = l->inet;

	iwarp_net_unlist(in, &l->net_node);
	l->inet = NULL;
	iwarp_net_leave(in);
}

/* A kernel TCP socket: no reference on @net, the pernet exit ends it. */
int iwarp_sock_create(struct net *net, int family, struct socket **out)
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

static void iwarp_sock_abort(struct socket *s)
{
	sock_no_linger(s->sk);	/* RST: nothing of it stays with TCP */
	sock_release(s);
}

static void iwarp_linger_state_change(struct sock *sk)
{
	void (*orig)(struct sock *sk) = NULL;
	struct iwarp_linger *lg;

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

static void iwarp_linger_work(struct work_struct *work)
{
	struct iwarp_linger *lg = container_of(to_delayed_work(work),
					    struct iwarp_linger, work);
	struct sock *sk = lg->sock->sk;

	/* off the list first: the exit kicks no work that is about to go */
	iwarp_net_unlist(lg->in, &lg->node);
	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_user_data = NULL;
	sk->sk_state_change = lg->saved_state_change;
	write_unlock_bh(&sk->sk_callback_lock);
	cancel_delayed_work(&lg->work);	/* a kick that raced */

	/* past the deadline, or the namespace is going: reset */
	if (READ_ONCE(sk->sk_state) != TCP_CLOSE)
		iwarp_sock_abort(lg->sock);
	else
		sock_release(lg->sock);
	iwarp_net_leave(lg->in);
	kfree(lg);
}

/* No FIN to wait for in these states: release at once. */
static bool iwarp_sock_needs_linger(struct sock *sk)
{
	return !((1 << READ_ONCE(sk->sk_state)) &
		 (TCPF_CLOSE | TCPF_SYN_SENT | TCPF_LISTEN));
}

/*
 * Graceful close: FIN now, release once TCP reaches CLOSE. The caller's
 * count in @in passes to the lingerer. False if it could not linger.
 */
static bool iwarp_sock_linger(struct iwarp_net *in, struct socket *s)
{
	struct sock *sk = s->sk;
	struct iwarp_linger *lg;

	kernel_sock_shutdown(s, SHUT_RDWR);
	if (!iwarp_sock_needs_linger(sk))
		return false;
	lg = kzalloc(sizeof(*lg), GFP_KERNEL);
	if (!lg)
		return false;
	lg->in = in;
	lg->sock = s;
	INIT_DELAYED_WORK(&lg->work, iwarp_linger_work);
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
	sk->sk_state_change = iwarp_linger_state_change;
	write_unlock_bh(&sk->sk_callback_lock);
	queue_delayed_work(srdma_unbound_wq, &lg->work, IWARP_LINGER_TIMEOUT);
	spin_unlock_bh(&in->lock);
	/* TCP may have finished before the callback was ours */
	if (!iwarp_sock_needs_linger(sk))
		mod_delayed_work(srdma_unbound_wq, &lg->work, 0);
	return true;
}

/*
 * Release an endpoint's socket: with a RST for @abort, else after a
 * graceful close. Either way the namespace's exit waits for it. Process
 * context; the endpoint's callbacks must be off the socket.
 */
void iwarp_ep_sock_close(struct iwarp_ep *ep, bool abort)
{
	struct iwarp_net *in = ep->inet;
	struct socket *s = ep->sock;

	ep->sock = NULL;
	iwarp_net_unlist(in, &ep->net_node);
	ep->inet = NULL;
	if (!abort && !iwarp_net_dying(in) && iwarp_sock_linger(in, s))
		return;
	iwarp_sock_abort(s);
	iwarp_net_leave(in);
}

/*
 * The next endpoint this pass of the exit has not seen, with a reference
 * (one that is being freed releases its socket itself). The list is
 * walked from its head each time: entries go while the lock is dropped.
 */
static struct iwarp_ep *iwarp_net_next_ep(struct iwarp_net *in,
					  unsigned int pass)
{
	struct iwarp_ep *ep;

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

static struct iwarp_listener *iwarp_net_next_listener(struct iwarp_net *in,
						      unsigned int pass)
{
	struct iwarp_listener *l;

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
static void iwarp_net_abort_all(struct iwarp_net *in, unsigned int pass)
{
	struct iwarp_listener *l;
	struct iwarp_linger *lg;
	struct iwarp_ep *ep;

	/* listeners first: no new set-up starts behind our back */
	while ((l = iwarp_net_next_listener(in, pass))) {
		iwarp_listener_stop(l);
		iwarp_listener_put(l);
	}
	/* requests iw_cm holds: nobody will accept them in here now */
	iwarp_requests_flush_net(in);
	while ((ep = iwarp_net_next_ep(in, pass))) {
		iwarp_ep_net_down(ep);
		iwarp_ep_put(ep);
	}
	spin_lock_bh(&in->lock);
	list_for_each_entry(lg, &in->lingering, node)
		mod_delayed_work(srdma_unbound_wq, &lg->work, 0);
	spin_unlock_bh(&in->lock);
}

static __net_init int iwarp_net_init(struct net *net)
{
	struct iwarp_net *in = iwarp_net(net);

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
static __net_exit void iwarp_net_exit(struct net *net)
{
	struct iwarp_net *in = iwarp_net(net);
	unsigned int pass = 0;

	spin_lock_bh(&in->lock);
	in->dying = true;
	spin_unlock_bh(&in->lock);
	for (;;) {
		iwarp_net_abort_all(in, ++pass);
		if (wait_event_timeout(in->wq, !READ_ONCE(in->owners), HZ))
			break;
		if (!(pass % 10))
			pr_warn("netns exit: waiting for %u iWARP socket owners\n",
				READ_ONCE(in->owners));
	}
	/* the last iwarp_net_leave() is out of its critical section */
	spin_lock_bh(&in->lock);
	spin_unlock_bh(&in->lock);
}

static struct pernet_operations iwarp_net_ops = {
	.init = iwarp_net_init,
	.exit = iwarp_net_exit,
	.id = &iwarp_net_id,
	.size = sizeof(struct iwarp_net),
};

/*
 * A subsystem, registered after TCP: its exit runs after the netdevs
 * (and so our devices on them) are gone and before TCP's own exit.
 */
int srdma_iw_net_init(void)
{
	return register_pernet_subsys(&iwarp_net_ops);
}

void srdma_iw_net_exit(void)
{
	unregister_pernet_subsys(&iwarp_net_ops);
}
