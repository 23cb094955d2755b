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
 * Lookups take no lock: RCU keeps the object's memory alive while a
 * reference is taken; removal waits for the last in-flight reference.
 * srdma_mem_check() is the one place where every access is checked.
 */
#include <linux/random.h>

#include "srdma.h"

#define SRDMA_KEY_INDEX_MAX	((1U << 24) - 1)
/* gaps of 0..15: unguessable neighbours, still dense xarray nodes */
#define SRDMA_KEY_GAP_MASK	15

struct srdma_mem *srdma_mem_alloc(enum srdma_mem_type type, gfp_t gfp)
{
	struct srdma_mem *mem = kzalloc(sizeof(*mem), gfp);

	if (!mem)
		return NULL;
	mem->type = type;
	mem->state = SRDMA_MEM_INVALID;
	refcount_set(&mem->ref, 1);	/* the table's reference */
	init_completion(&mem->released);
	atomic_set(&mem->bound_mws, 0);
	mem->page_shift = PAGE_SHIFT;
	return mem;
}

/* Only after srdma_key_remove() or if the key was never added. */
void srdma_mem_free(struct srdma_mem *mem)
{
	if (mem->type == SRDMA_MEM_USER)
		kvfree(mem->pages);
	else if (mem->type == SRDMA_MEM_FAST)
		kfree(mem->kvas);
	kfree_rcu(mem, rcu);
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

/* Unpublish the key and wait until no transport still uses it. */
void srdma_key_remove(struct srdma_dev *dev, struct srdma_mem *mem)
{
	xa_erase_irq(&dev->keys, mem->key >> 8);
	srdma_mem_put(mem);
	wait_for_completion(&mem->released);
}

struct srdma_mem *srdma_key_get(struct srdma_dev *dev, u32 key)
{
	struct srdma_mem *mem;

	rcu_read_lock();
	mem = xa_load(&dev->keys, key >> 8);
	if (mem && (READ_ONCE(mem->key) != key ||
		    !refcount_inc_not_zero(&mem->ref)))
		mem = NULL;
	rcu_read_unlock();
	/* the key byte may have moved on between the load and the get */
	if (mem && READ_ONCE(mem->key) != key) {
		srdma_mem_put(mem);
		mem = NULL;
	}
	return mem;
}

void srdma_mem_put(struct srdma_mem *mem)
{
	if (refcount_dec_and_test(&mem->ref))
		complete(&mem->released);
}

/*
 * Check one access: the key must be valid, in @pd, allow @access, and
 * cover [iova, iova + length) - computed without overflow.
 * Returns 0, -EINVAL (invalid key), -EPERM (wrong PD or QP),
 * -EACCES (access rights) or -ERANGE (bounds).
 */
int srdma_mem_check(const struct srdma_mem *mem, struct ib_pd *pd,
		    int access, u64 iova, u64 length)
{
	u64 start = READ_ONCE(mem->iova);
	u64 len = READ_ONCE(mem->length);

	if (READ_ONCE(mem->state) != SRDMA_MEM_VALID)
		return -EINVAL;
	if (READ_ONCE(mem->pd) != pd)
		return -EPERM;
	if (access & ~READ_ONCE(mem->access))
		return -EACCES;
	if (iova < start || length > len || iova - start > len - length)
		return -ERANGE;
	return 0;
}

/*
 * Look up and check one access; the caller puts the reference. Local
 * keys (lkeys) name MRs only; a type 2 window is usable remotely only
 * through the QP it was bound on.
 */
static struct srdma_mem *srdma_key_check(struct srdma_qp *qp, u32 key,
					 u64 iova, u64 length, int access,
					 bool remote, int *err)
{
	struct srdma_dev *dev = qp_dev(qp);
	struct srdma_mem *mem = srdma_key_get(dev, key);

	if (!mem)
		*err = -EINVAL;
	else if (!remote && mem->type == SRDMA_MEM_MW)
		*err = -EINVAL;
	else if (remote && mem->type == SRDMA_MEM_MW &&
		 mem->mw_type == IB_MW_TYPE_2 && READ_ONCE(mem->qp) != qp)
		*err = -EPERM;
	else
		*err = srdma_mem_check(mem, qp->ibqp.pd, access, iova, length);
	if (!*err)
		return mem;
	if (mem)
		srdma_mem_put(mem);
	srdma_count(dev, remote ? SRDMA_CNT_REMOTE_KEY_ERR :
				  SRDMA_CNT_LOCAL_KEY_ERR);
	return NULL;
}

struct srdma_mem *srdma_lkey_check(struct srdma_qp *qp,
				   const struct ib_sge *sge, int access,
				   int *err)
{
	return srdma_key_check(qp, sge->lkey, sge->addr, sge->length, access,
			       false, err);
}

struct srdma_mem *srdma_rkey_check(struct srdma_qp *qp, u32 rkey,
				   u64 iova, u64 length, int access,
				   int *err)
{
	return srdma_key_check(qp, rkey, iova, length, access, true, err);
}
