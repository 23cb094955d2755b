#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Create and destroy verbs objects on one device while the kernel fails
allocations (srdma_fault.sh arms failslab, fail_page_alloc or
fail_function). Every create must either succeed or fail with an errno,
and whatever was made is destroyed again; the caller then checks that
nothing leaked. With --make-it-fail the process marks itself for the
fault injectors' task filter once its imports are done.
Prints: ROUNDS CREATED FAILED, and exits 1 if no create failed at all
(the injection never reached srdma, so the run proved nothing) unless
--may-pass is given."""
import argparse
import errno

from pyverbs.addr import AH, AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR, MW
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsError, PyverbsRDMAError
from pyverbs.qp import QP, QPCap, QPInitAttr
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
import pyverbs.enums as e

ap = argparse.ArgumentParser()
ap.add_argument('dev')
ap.add_argument('gid', type=int)
ap.add_argument('rounds', type=int)
ap.add_argument('--make-it-fail', action='store_true')
ap.add_argument('--may-pass', action='store_true')
args = ap.parse_args()

created = failed = 0
bad = []


def attempt(objs, make):
    global created, failed
    try:
        o = make()
    except PyverbsRDMAError as ex:
        failed += 1
        if ex.error_code == 0 or ex.error_code > 4095:
            bad.append(f'create failed without an errno: {ex}')
        return None
    except PyverbsError:
        failed += 1  # pyverbs' own allocation refused: still an error
        return None
    created += 1
    objs.insert(0, o)
    return o


def one_round(ctx, gid):
    objs = []
    try:
        pd = attempt(objs, lambda: PD(ctx))
        cq = attempt(objs, lambda: CQ(ctx, 16))
        if pd is None or cq is None:
            return
        attempt(objs, lambda: MR(pd, 65536, e.IBV_ACCESS_LOCAL_WRITE |
                                 e.IBV_ACCESS_REMOTE_WRITE |
                                 e.IBV_ACCESS_MW_BIND))
        attempt(objs, lambda: MW(pd, e.IBV_MW_TYPE_2))
        srq = attempt(objs, lambda: SRQ(pd, SrqInitAttr(
            SrqAttr(max_wr=64, max_sge=2))))
        attempt(objs, lambda: QP(pd, QPInitAttr(
            qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=QPCap(64, 64, 2, 2))))
        if srq is not None:
            attempt(objs, lambda: QP(pd, QPInitAttr(
                qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, srq=srq,
                cap=QPCap(64, 0, 2, 0))))
        try:
            attempt(objs, lambda: AH(pd, attr=AHAttr(
                gr=GlobalRoute(dgid=ctx.query_gid(1, gid), sgid_index=gid),
                is_global=1, port_num=1)))
        except PyverbsError:
            pass  # query_gid itself refused
    finally:
        for o in objs:
            o.close()


ctx = Context(name=args.dev)
if args.make_it_fail:
    with open('/proc/self/make-it-fail', 'w') as f:
        f.write('1')
for _ in range(args.rounds):
    one_round(ctx, args.gid)
if args.make_it_fail:
    with open('/proc/self/make-it-fail', 'w') as f:
        f.write('0')
ctx.close()
print(f'{args.rounds} rounds: {created} created, {failed} failed')
for b in bad[:10]:
    print(b)
if bad or (failed == 0 and not args.may_pass):
    raise SystemExit(1)
