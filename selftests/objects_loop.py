#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Create and destroy every verbs object many times, with the bad-argument
error paths in between, on one device. Prints TAP; the calling script checks
afterwards that nothing was left behind (rdma res, rmmod)."""
import errno
import sys

from pyverbs.addr import AH, AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR, MW
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPCap, QPInitAttr
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
import pyverbs.enums as e

dev, gid, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
results = []


def case(name, fn):
    try:
        fn()
        results.append((True, name, ''))
    except Exception as ex:  # report, keep going: the count must not lie
        results.append((False, name, repr(ex)))


def expect_errno(code, fn):
    try:
        fn()
    except PyverbsRDMAError as ex:
        codes = code if isinstance(code, tuple) else (code,)
        if ex.error_code not in codes:
            raise AssertionError(f'errno {ex.error_code}, expected {code}')
        return
    raise AssertionError(f'no error, expected errno {code}')


ctx = Context(name=dev)
attr = ctx.query_device()


def loop_objects():
    for _ in range(rounds):
        pd = PD(ctx)
        cq = CQ(ctx, 16)
        mr = MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_MW_BIND)
        mw = MW(pd, e.IBV_MW_TYPE_2)
        srq = SRQ(pd, SrqInitAttr(SrqAttr(max_wr=8, max_sge=1)))
        qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                               cap=QPCap(8, 8, 1, 1)))
        qp2 = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                                srq=srq, cap=QPCap(8, 0, 1, 0)))
        objs = [qp2, qp, srq, mw, mr, cq, pd]
        try:
            objs.insert(0, AH(pd, attr=AHAttr(
                gr=GlobalRoute(dgid=ctx.query_gid(1, gid), sgid_index=gid),
                is_global=1, port_num=1)))
        except PyverbsRDMAError as ex:
            if ex.error_code != errno.EOPNOTSUPP:  # iWARP has no AHs
                raise
        for o in objs:
            o.close()


def loop_errors():
    for _ in range(rounds):
        pd = PD(ctx)
        cq = CQ(ctx, 16)
        # too many WRs / SGEs / CQEs: refused, nothing half-made left behind
        expect_errno(errno.EINVAL, lambda: QP(pd, QPInitAttr(
            qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
            cap=QPCap(attr.max_qp_wr + 1, 8, 1, 1))))
        expect_errno(errno.EINVAL, lambda: QP(pd, QPInitAttr(
            qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
            cap=QPCap(8, 8, attr.max_sge + 1, 1))))
        expect_errno(errno.EINVAL, lambda: CQ(ctx, attr.max_cqe + 1))
        expect_errno(errno.EINVAL, lambda: SRQ(pd, SrqInitAttr(
            SrqAttr(max_wr=attr.max_srq_wr + 1, max_sge=1))))
        # MRs: remote write needs local write; no on-demand paging here
        expect_errno(errno.EINVAL, lambda: MR(pd, 4096,
                                              e.IBV_ACCESS_REMOTE_WRITE))
        expect_errno((errno.EINVAL, errno.EOPNOTSUPP), lambda: MR(
            pd, 4096, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_ON_DEMAND))
        cq.close()
        pd.close()


def send_caps_as_asked():
    # the kernel sizes its copy of each WQE by these, so it must enforce
    # (and report) what was asked for, not what the ring's slot could hold
    pd = PD(ctx)
    cq = CQ(ctx, 16)
    try:
        for sge, inline in ((0, 0), (1, 0), (2, 0), (1, 100), (4, 64),
                            (attr.max_sge, 0)):
            qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                                   cap=QPCap(8, 8, sge, 1, inline)))
            try:
                cap = qp.query(e.IBV_QP_CAP)[0].cap
                got = (cap.max_send_sge, cap.max_inline_data)
                if got != (max(sge, 1), inline):
                    raise AssertionError(f'asked {(sge, inline)}, got {got}')
            finally:
                qp.close()
    finally:
        cq.close()
        pd.close()


case(f'{rounds} rounds of PD, CQ, MR, MW, SRQ, 2 QPs, AH', loop_objects)
case('send SGE and inline limits are the ones asked for', send_caps_as_asked)
case(f'{rounds} rounds of refused creates (QP, CQ, SRQ, MR)', loop_errors)
ctx.close()
print('TAP version 13')
print(f'1..{len(results)}')
for i, (ok, name, why) in enumerate(results, 1):
    print(f'{"ok" if ok else "not ok"} {i} {name}')
    if why:
        print(f'# {why}')
sys.exit(0 if all(r[0] for r in results) else 1)
