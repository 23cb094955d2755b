/* SPDX-License-Identifier: GPL-2.0 */
/* Small libibverbs helpers shared by the C selftests. */
#ifndef SRDMA_SELFTEST_VERBS_UTIL_H
#define SRDMA_SELFTEST_VERBS_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

/* Open the RDMA device called @name, or NULL. */
static inline struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

/*
 * INIT -> RTR -> RTS for an RC QP of a RoCE device talking to @dqpn at
 * @gid: PSNs 100, path MTU 1024, @rd_atomic reads in flight both ways,
 * local ACK timeout @timeout, 7 retries.
 */
static inline int qp_rtr_rts(struct ibv_qp *qp, uint32_t dqpn, int gid_index,
			     const union ibv_gid *gid, uint8_t rd_atomic,
			     uint8_t timeout)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = 100;
	a.max_dest_rd_atomic = rd_atomic;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 100;
	a.max_rd_atomic = rd_atomic;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/*
 * One uverbs write-ABI command: @cmd (@len bytes, whose first field is the
 * response pointer) behind a header naming @command, written to the
 * context's command fd. For what rdma-core 44's librxe never sends itself.
 * 0 or -errno.
 */
static inline int uverbs_write(struct ibv_context *ctx, uint32_t command,
			       const void *cmd, size_t len, size_t resp_len)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		uint64_t body[16];
	} req;
	size_t total = sizeof(req.hdr) + len;

	if (len > sizeof(req.body))
		return -EINVAL;
	memset(&req, 0, sizeof(req));
	req.hdr.command = command;
	req.hdr.in_words = total / 4;
	req.hdr.out_words = resp_len / 4;
	memcpy(req.body, cmd, len);
	if (write(ctx->cmd_fd, &req, total) != (ssize_t)total)
		return -errno;
	return 0;
}

/*
 * ibv_rereg_mr(@mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, @access)
 * through the uverbs write ABI: rdma-core 44's librxe has no rereg_mr. The
 * MR keeps its handle; its keys become the ones the kernel answers (a
 * driver may make a new MR to replace it), as ibv_rereg_mr() would set
 * them. 0 or -errno (errno is left as the write set it).
 */
static inline int rereg_mr_access(struct ibv_mr *mr, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ib_uverbs_rereg_mr cmd = {
		.response = (uintptr_t)&resp,
		.mr_handle = mr->handle,
		.flags = IBV_REREG_MR_CHANGE_ACCESS,
		.access_flags = access,
	};
	int err;

	memset(&resp, 0, sizeof(resp));
	err = uverbs_write(mr->context, IB_USER_VERBS_CMD_REREG_MR, &cmd,
			   sizeof(cmd), sizeof(resp));
	if (err)
		return err;
	mr->lkey = resp.lkey;
	mr->rkey = resp.rkey;
	return 0;
}

/* librxe's send doorbell, rung by hand: a POST_SEND with no work requests. */
static inline int rxe_doorbell(struct ibv_qp *qp)
{
	struct ib_uverbs_post_send_resp resp;
	struct ib_uverbs_post_send cmd = {
		.response = (uintptr_t)&resp,
		.qp_handle = qp->handle,
		.wqe_size = sizeof(struct ib_uverbs_send_wr),
	};

	return uverbs_write(qp->context, IB_USER_VERBS_CMD_POST_SEND, &cmd,
			    sizeof(cmd), sizeof(resp));
}

#endif
