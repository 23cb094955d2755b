/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fuzzers' random numbers: xorshift64*, small, seedable and the same
 * on every machine, so that a seed reproduces a run.
 */
#ifndef SRDMA_SELFTEST_FUZZ_RNG_H
#define SRDMA_SELFTEST_FUZZ_RNG_H

#include <stdint.h>

struct rng {
	uint64_t s;
};

static inline uint64_t rnd64(struct rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dULL;
}

/* 0..n-1 (0 when n is 0) */
static inline uint32_t rnd(struct rng *r, uint32_t n)
{
	return n ? (uint32_t)(rnd64(r) >> 32) % n : 0;
}

#endif
