// SPDX-License-Identifier: GPL-2.0
/*
 * The self-test runner: `insmod srdma.ko selftest=1` runs every group
 * below before anything is registered, prints one line per group and
 * fails the load if any case failed. Without the parameter it returns at
 * once; either way the code and data here are freed after load.
 */
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/printk.h>

#include "selftest.h"

static bool selftest;
module_param(selftest, bool, 0444);
MODULE_PARM_DESC(selftest,
		 "Run the pure-logic self-tests at load; fail the load if one fails");

struct srdma_st_group {
	const char *name;
	void (*run)(struct srdma_st *st);
};

static const struct srdma_st_group srdma_st_groups[] __initconst = {
	{ "psn", srdma_st_psn },
	{ "icrc", srdma_st_icrc },
	{ "parse", srdma_st_parse },
	{ "dcqcn", srdma_st_dcqcn },
	{ "keys", srdma_st_keys },
	{ "sq", srdma_st_sq },
	{ "publish", srdma_st_publish },
	{ "handlers", srdma_st_handlers },
	{ "mpa", srdma_st_mpa },
	{ "fpdu", srdma_st_fpdu },
};

bool __init srdma_st_check(struct srdma_st *st, bool ok, int line,
			   const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	if (ok) {
		st->passed++;
		return true;
	}
	st->failed++;
	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_err("selftest: %s: FAIL: %pV (line %d)\n", st->group, &vaf, line);
	va_end(args);
	return false;
}

int __init srdma_selftest(void)
{
	unsigned int i, failed = 0;
	u64 start;

	if (!selftest)
		return 0;
	start = ktime_get_ns();
	for (i = 0; i < ARRAY_SIZE(srdma_st_groups); i++) {
		struct srdma_st st = { .group = srdma_st_groups[i].name };

		srdma_st_groups[i].run(&st);
		if (st.failed)
			pr_err("selftest: %s: %u passed, %u failed\n",
			       st.group, st.passed, st.failed);
		else if (st.passed)
			pr_info("selftest: %s: %u passed\n", st.group,
				st.passed);
		else
			pr_err("selftest: %s: no case ran\n", st.group);
		failed += st.failed || !st.passed;
	}
	if (failed) {
		pr_err("selftest: %u of %zu groups failed\n", failed,
		       ARRAY_SIZE(srdma_st_groups));
		return -ENOTRECOVERABLE;
	}
	pr_info("selftest: all %zu groups passed in %llu us\n",
		ARRAY_SIZE(srdma_st_groups),
		div_u64(ktime_get_ns() - start, NSEC_PER_USEC));
	return 0;
}
