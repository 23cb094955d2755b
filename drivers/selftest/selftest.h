/* SPDX-License-Identifier: GPL-2.0 */
/*
 * In-module self-tests of srdma's pure logic, run at load when the
 * module parameter selftest=1 asks for them (run.c). All of it is
 * __init: the tests are discarded with the rest of the init text.
 */
#ifndef SRDMA_SELFTEST_H
#define SRDMA_SELFTEST_H

#include <linux/compiler.h>
#include <linux/types.h>

/* One group's tally; the runner prints it. */
struct srdma_st {
	const char *group;
	unsigned int passed;
	unsigned int failed;
};

/*
 * Count one case: passed if @ok, else print the group, the case named by
 * @fmt and the line of the check, and count a failure. Returns @ok.
 */
bool srdma_st_check(struct srdma_st *st, bool ok, int line,
		    const char *fmt, ...) __printf(4, 5);
#define ST_CHECK(st, ok, fmt, ...) \
	srdma_st_check(st, ok, __LINE__, fmt, ##__VA_ARGS__)
/* True if @p was allocated; else a failure (not a case when it was). */
#define ST_ALLOCATED(st, p) \
	((p) || srdma_st_check(st, false, __LINE__, "allocating %s", #p))

/* run.c: 0 when not asked for or all passed, else -ENOTRECOVERABLE. */
int srdma_selftest(void);

/* core.c */
void srdma_st_keys(struct srdma_st *st);

/* sq.c */
void srdma_st_sq(struct srdma_st *st);

/* publish.c */
void srdma_st_publish(struct srdma_st *st);

/* handlers.c */
void srdma_st_handlers(struct srdma_st *st);

/* roce.c */
void srdma_st_psn(struct srdma_st *st);
void srdma_st_icrc(struct srdma_st *st);
void srdma_st_parse(struct srdma_st *st);
void srdma_st_dcqcn(struct srdma_st *st);

/* iwarp.c */
void srdma_st_mpa(struct srdma_st *st);
void srdma_st_fpdu(struct srdma_st *st);

#endif /* SRDMA_SELFTEST_H */
