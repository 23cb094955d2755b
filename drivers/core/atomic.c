// SPDX-License-Identifier: GPL-2.0
/*
 * Remote atomics for both transports. They must be atomic against each
 * other across every QP of every device (what an RNIC guarantees), so
 * one lock serialises them; they are rare and short.
 */
#include "srdma.h"
#include "transport.h"

static DEFINE_SPINLOCK(srdma_atomic_lock);

/*
 * Masked add (RFC 7306): every bit set in @mask ends a field, and the
 * carry out of that bit is dropped. A zero mask is one 64-bit add.
 */
static u64 srdma_masked_add(u64 a, u64 b, u64 mask)
{
	u64 sum = 0, carry = 0;
	int i;

	if (!mask)
		return a + b;
	for (i = 0; i < 64; i++) {
		u64 x = (a >> i) & 1, y = (b >> i) & 1;

		sum |= (x ^ y ^ carry) << i;
		carry = (x & y) | (x & carry) | (y & carry);
		if ((mask >> i) & 1)
			carry = 0;
	}
	return sum;
}

/*
 * Run one atomic on the eight aligned bytes at @va, already checked for
 * @mem. Returns the value before the operation through @orig.
 */
int srdma_atomic_op(struct srdma_mem *mem, u64 va,
		    const struct srdma_atomic_args *args, u64 *orig)
{
	unsigned long flags;
	u64 old, val;
	int err;

	spin_lock_bh(&srdma_atomic_lock);
	/* read and write under one hold: an invalidation sees both or none */
	read_lock_irqsave(&mem->lock, flags);
	err = srdma_mem_copy_locked(mem, va, &old, 8, SRDMA_FROM_MEM);
	if (err)
		goto out;
	if (args->cmp_swap) {
		if ((old ^ args->compare) & args->compare_mask)
			val = old;
		else
			val = (old & ~args->swap_mask) |
			      (args->swap_add & args->swap_mask);
	} else {
		val = srdma_masked_add(old, args->swap_add, args->swap_mask);
	}
	err = srdma_mem_copy_locked(mem, va, &val, 8, SRDMA_TO_MEM);
	*orig = old;
out:
	read_unlock_irqrestore(&mem->lock, flags);
	spin_unlock_bh(&srdma_atomic_lock);
	return err;
}

/* IBTA 1.5 ATOMIC WRITE: eight bytes stored as one, among the atomics. */
int srdma_atomic_store(struct srdma_mem *mem, u64 va, const void *src)
{
	u64 val;
	int err;

	memcpy(&val, src, sizeof(val));
	spin_lock_bh(&srdma_atomic_lock);
	err = srdma_mem_copy(mem, va, &val, sizeof(val), SRDMA_TO_MEM);
	spin_unlock_bh(&srdma_atomic_lock);
	return err;
}
