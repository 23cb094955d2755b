// SPDX-License-Identifier: GPL-2.0
/*
 * The memory-key table, shared by both transports. A key is
 * (index << 8 | byte): the index finds the object in an xarray, the byte
 * is random for a new registration (or the consumer's key byte after a
 * fast-register or MW bind), so a stale key does not match a new object.
 * Indices are handed out cyclically from a random start with random gaps:
 * an index comes back only after the cursor went round all 2^24 of them
 * (millions of registrations later, with a new random byte), and the
 * neighbours of a key that a peer was given are not simply the next ones.
 *
 * Lifetime and invalidation ("in flight" defined):
 * - A lookup takes a reference under RCU. A reference keeps the struct
 *   alive, nothing more: the last put frees it (after an RCU grace
 *   period), so removal never waits for a peer that holds a key.
 * - Every key check and every copy holds mem->lock for reading and
 *   checks the state (and bounds) under it; invalidation, deregistration
 *   and unbinding take it for writing. So an access in flight is one
 *   copy (one packet's bytes, at most an MTU or FPDU): an invalidation
 *   completes after the copies already under way and every later copy
 *   through a reference taken before it fails, with the memory untouched.
 *   Nothing sleeps under the lock; it is taken with interrupts off
 *   because binds and local invalidates run under the QP's state lock.
 * - A reference from before an invalidation must never see the key made
 *   valid again (a re-bind or fast-register with new pages): an object
 *   that still has holders when it would be made valid again is replaced
 *   in the table by a fresh one (srdma_mem_replace) and stays dead.
 * The table's xa_lock is taken with interrupts off: a kernel ULP may post
 * a bind or fast-register (which can replace an object) from any context.
 */
#include <linux/error-injection.h>
#include <linux/random.h>

#include "srdma.h"
#include "transport.h"

#define SRDMA_KEY_INDEX_MAX	((1U << 24) - 1)
/* gaps of 0..15: unguessable neighbours, still dense xarray nodes */
#define SRDMA_KEY_GAP_MASK	15

struct srdma_mem *srdma_mem_alloc(enum srdma_mem_type type, gfp_t gfp)
{
	struct srdma_mem *mem = kzalloc(sizeof(*mem), gfp);

	if (!mem)
		return NULL;
	rwlock_init(&mem->lock);
	mem->type = type;
	mem->state = SRDMA_MEM_INVALID;
	refcount_set(&mem->ref, 1);	/* the table's reference */
	atomic_set(&mem->bound_mws, 0);
	mem->page_shift = PAGE_SHIFT;
	return mem;
}
ALLOW_ERROR_INJECTION(srdma_mem_alloc, NULL);

static void srdma_mem_free_rcu(struct rcu_head *rcu)
{
	struct srdma_mem *mem = container_of(rcu, struct srdma_mem, rcu);

	/* a fast-register page list belongs to its srdma_mr */
	if (mem->type == SRDMA_MEM_USER)
		kvfree(mem->pages);
	kfree(mem);
}

/*
 * The last reference is gone, or the object was never published. The
 * last put can come with interrupts off (a local invalidate or bind under
 * the QP's state lock racing a dereg), where vfree() of a large page
 * array must not run: free from an RCU callback, which also keeps the
 * struct alive for lookups still under RCU. Module exit waits for these
 * callbacks (rcu_barrier()).
 */
void srdma_mem_free(struct srdma_mem *mem)
{
	call_rcu(&mem->rcu, srdma_mem_free_rcu);
}

/* Where the next index is looked for: a random gap after the last one. */
static void srdma_key_next(struct srdma_dev *dev)
{
	u32 next = dev->next_key_index;

	if (!next)
		next = get_random_u32() % SRDMA_KEY_INDEX_MAX + 1;
	else
		next += get_random_u8() & SRDMA_KEY_GAP_MASK;
	if (next > SRDMA_KEY_INDEX_MAX)
		next = 1;
	dev->next_key_index = next;
}

int srdma_key_add(struct srdma_dev *dev, struct srdma_mem *mem)
{
	u32 index;
	int err;

	xa_lock_irq(&dev->keys);
	srdma_key_next(dev);
	/* reserve the index, so that the key is set before lookups see it */
	err = __xa_alloc_cyclic(&dev->keys, &index, NULL,
				XA_LIMIT(1, SRDMA_KEY_INDEX_MAX),
				&dev->next_key_index, GFP_KERNEL);
	if (err >= 0) {
		mem->key = index << 8 | get_random_u8();
		err = xa_err(__xa_store(&dev->keys, index, mem, GFP_KERNEL));
		if (err)
			__xa_erase(&dev->keys, index);
	}
	xa_unlock_irq(&dev->keys);
	return err < 0 ? err : 0;
}
ALLOW_ERROR_INJECTION(srdma_key_add, ERRNO);

/*
 * Unpublish @mem, which the caller made SRDMA_MEM_DEAD under its lock,
 * and drop the table's reference. Holders keep the struct until they
 * put it; their copies already fail.
 */
void srdma_key_remove(struct srdma_dev *dev, struct srdma_mem *mem)
{
	xa_cmpxchg_irq(&dev->keys, mem->key >> 8, mem, NULL, 0);
	srdma_mem_put(mem);
}

/*
 * Put @new, filled in, in @old's place in the table. The caller holds
 * @old's lock for writing and found it not dead. On success @old is dead
 * for good and the caller puts the table's reference on it; false if
 * @old is no longer in the table (deallocated meanwhile): the caller
 * frees @new, which nobody saw. Any context.
 */
bool srdma_mem_replace(struct srdma_dev *dev, struct srdma_mem *old,
		       struct srdma_mem *new)
{
	unsigned long flags;
	void *cur;

	xa_lock_irqsave(&dev->keys, flags);
	/* the slot exists: replacing an entry allocates nothing */
	cur = __xa_cmpxchg(&dev->keys, old->key >> 8, old, new, GFP_ATOMIC);
	xa_unlock_irqrestore(&dev->keys, flags);
	if (cur != old)
		return false;
	old->state = SRDMA_MEM_DEAD;
	return true;
}

/* A lookup by key index; the caller checks the key under mem->lock. */
struct srdma_mem *srdma_key_get(struct srdma_dev *dev, u32 key)
{
	struct srdma_mem *mem;

	rcu_read_lock();
	mem = xa_load(&dev->keys, key >> 8);
	if (mem && !refcount_inc_not_zero(&mem->ref))
		mem = NULL;
	rcu_read_unlock();
	return mem;
}

void srdma_mem_put(struct srdma_mem *mem)
{
	if (refcount_dec_and_test(&mem->ref))
		srdma_mem_free(mem);
}

/* [iova, iova + length) lies inside @mem, computed without overflow. */
bool srdma_mem_in_range(const struct srdma_mem *mem, u64 iova, u64 length)
{
	return iova >= mem->iova && length <= mem->length &&
	       iova - mem->iova <= mem->length - length;
}

/*
 * Check one access with mem->lock held: the key must be valid, in @pd,
 * allow @access, and cover [iova, iova + length).
 * Returns 0, -EINVAL (invalid key), -EPERM (wrong PD or QP),
 * -EACCES (access rights) or -ERANGE (bounds).
 */
int srdma_mem_check(const struct srdma_mem *mem, struct ib_pd *pd,
		    int access, u64 iova, u64 length)
{
	if (mem->state != SRDMA_MEM_VALID)
		return -EINVAL;
	if (mem->pd != pd)
		return -EPERM;
	if (access & ~mem->access)
		return -EACCES;
	if (!srdma_mem_in_range(mem, iova, length))
		return -ERANGE;
	return 0;
}

/*
 * The whole check of one access through @key, mem->lock held. Local keys
 * (lkeys) name MRs only.
 */
int srdma_key_check_locked(const struct srdma_mem *mem, struct srdma_qp *qp,
			   u32 key, u64 iova, u64 length, int access,
			   bool remote)
{
	if (mem->key != key)
		return -EINVAL;
	if (mem->type == SRDMA_MEM_MW) {
		if (!remote)
			return -EINVAL;
		if (mem->mw_type == IB_MW_TYPE_2 &&
		    mem->state == SRDMA_MEM_VALID &&
		    (mem->qp != qp || mem->qpn != qp->ibqp.qp_num))
			return -EPERM;
	}
	return srdma_mem_check(mem, qp->ibqp.pd, access, iova, length);
}

/*
 * Look up and check one access; the caller puts the reference. A type 2
 * window is usable only through the QP it was bound on.
 */
struct srdma_mem *srdma_rkey_check(struct srdma_qp *qp, u32 rkey,
				   u64 iova, u64 length, int access,
				   int *err)
{
	struct srdma_dev *dev = qp_dev(qp);
	struct srdma_mem *mem = srdma_key_get(dev, rkey);
	unsigned long flags;

	if (mem) {
		read_lock_irqsave(&mem->lock, flags);
		*err = srdma_key_check_locked(mem, qp, rkey, iova, length,
					      access, true);
		read_unlock_irqrestore(&mem->lock, flags);
		if (!*err)
			return mem;
		srdma_mem_put(mem);
	} else {
		*err = -EINVAL;
	}
	srdma_count(dev, SRDMA_CNT_REMOTE_KEY_ERR);
	return NULL;
}
