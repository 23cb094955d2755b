/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test data both ends can compute: xorshift64 bytes from a seed, so a
 * receiver checks every byte without the sender's buffer.
 */
#ifndef SRDMA_SELFTEST_FILL_PATTERN_H
#define SRDMA_SELFTEST_FILL_PATTERN_H

#include <stddef.h>
#include <stdint.h>

static inline void fill_pattern(uint8_t *buf, size_t len, uint64_t seed)
{
	uint64_t x = seed;
	size_t i;

	for (i = 0; i < len; i++) {
		if (!(i & 7)) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		buf[i] = x >> ((i & 7) * 8);
	}
}

#endif
