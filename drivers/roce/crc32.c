// SPDX-License-Identifier: GPL-2.0
/*
 * The CRC-32 under the ICRC (net.c), which covers every payload byte on
 * both ends of a RoCE packet.
 *
 * The kernel's crc32_le() is the library for it, and where the library is
 * built for the CPU (arm64 always, x86 from 6.14 on) it is used as it is.
 * On x86 before 6.14 the library is table-driven (slice-by-8, about a
 * cycle per byte), while the crypto API has the same CRC folded with
 * PCLMULQDQ (crc32-pclmul, Debian builds it as a module) at a fraction of
 * that. There, payloads go through the crypto API's "crc32" if it
 * resolves to anything but the generic driver (which is crc32_le()).
 */
#include <crypto/hash.h>
#include <linux/crc32.h>

#include "roce.h"

/*
 * Shorter buffers (the masked headers) stay with the table: crc32-pclmul
 * itself hands anything under 79 bytes to it, and the crypto call and
 * the FPU section it opens cost more than a short CRC saves.
 */
#define ROCE_CRC32_CRYPTO_MIN	256
/* what a "crc32" driver may keep per call: its running CRC */
#define ROCE_CRC32_CTX_MAX	16

static struct crypto_shash *roce_crc32_tfm;

/*
 * crc32_le(@crc, @p, @len), by whichever implementation roce_crc32_init()
 * chose. The crypto API's "crc32" keeps the CRC as it runs, without the
 * final inversion, so importing @crc and exporting after the update is
 * exactly crc32_le().
 */
u32 roce_crc32(u32 crc, const void *p, size_t len)
{
	struct crypto_shash *tfm = READ_ONCE(roce_crc32_tfm);
	u8 buf[sizeof(struct shash_desc) + ROCE_CRC32_CTX_MAX]
		__aligned(__alignof__(struct shash_desc));
	struct shash_desc *desc = (void *)buf;
	u32 state = crc;

	if (!tfm || len < ROCE_CRC32_CRYPTO_MIN)
		return crc32_le(crc, p, len);
	desc->tfm = tfm;
	if (crypto_shash_import(desc, &state) ||
	    crypto_shash_update(desc, p, len) ||
	    crypto_shash_export(desc, &state))
		return crc32_le(crc, p, len);
	return state;
}

/* Which implementation roce_crc32() runs: for the load message, selftests */
const char *roce_crc32_impl(void)
{
	struct crypto_shash *tfm = READ_ONCE(roce_crc32_tfm);

	return tfm ? crypto_shash_driver_name(tfm) : "crc32_le";
}

/* Never fails: without a usable accelerated driver crc32_le() serves. */
void roce_crc32_init(void)
{
	struct crypto_shash *tfm;

	if (!SRDMA_CRC32_LE_IS_TABLE || roce_crc32_tfm)
		return;
	tfm = crypto_alloc_shash("crc32", 0, 0);
	if (IS_ERR(tfm))
		return;
	if (!strcmp(crypto_shash_driver_name(tfm), "crc32-generic") ||
	    crypto_shash_descsize(tfm) > ROCE_CRC32_CTX_MAX ||
	    crypto_shash_statesize(tfm) != sizeof(u32)) {
		crypto_free_shash(tfm);
		return;
	}
	WRITE_ONCE(roce_crc32_tfm, tfm);
}

/* Once nothing computes an ICRC any more (module exit, selftests). */
void roce_crc32_exit(void)
{
	struct crypto_shash *tfm = roce_crc32_tfm;

	WRITE_ONCE(roce_crc32_tfm, NULL);
	if (tfm)
		crypto_free_shash(tfm);
}
