#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Sum a function_graph trace into a call tree: calls, total and own time.

    ftrace_graph_sum.py TRACE [MIN_SHARE]

TRACE is /sys/kernel/tracing/trace as the function_graph tracer wrote it
with the funcgraph-tail option (closing braces name their function). Each
line of the output is one call path (indented by depth): how often it was
called, its total time, its time per call, its own time (not in traced
children) and its share of its root's time. Paths under MIN_SHARE (0.01)
of their root are left out. Times are the guest clock's, with the
tracer's own cost inside: read the shares, not the absolute times.
"""
import re
import sys

# " 1) + 12.345 us   |    } /* name */", " 0)   0.5 us  |  name();",
# " 0)               |  name [mod]() {"
LINE = re.compile(r'^\s*(\d+)\)\s*(?:[-+!#*@$]\s*)?(?:([\d.]+) us\s*)?\|(\s*)(.*?)\s*$')
OPEN = re.compile(r'^([\w.]+)(?: \[\w+\])?\(\) \{$')
LEAF = re.compile(r'^([\w.]+)(?: \[\w+\])?\(\);$')
CLOSE = re.compile(r'^\}(?: /\* ([\w.]+)(?: \[\w+\])? \*/)?$')


def merge(into, frm):
    for path, (calls, us) in frm.items():
        entry = into.setdefault(path, [0, 0.0])
        entry[0] += calls
        entry[1] += us


def parse(lines):
    """Return {path tuple: [calls, total us]} over the calls the trace
    holds whole. A frame's children count only once the frame closes: a
    call cut by the start or the end of the trace counts not at all, and
    neither do its children. The tracer indents by depth, which tells
    where a line belongs even when the trace began mid-call."""
    stacks = {}     # per CPU: [name, {path: [calls, us]}] frames
    acc = {}

    def record(stack, path, us):
        pending = stack[-1][1] if stack else acc
        entry = pending.setdefault(path, [0, 0.0])
        entry[0] += 1
        entry[1] += us

    for line in lines:
        m = LINE.match(line)
        if not m:
            continue
        cpu, dur, body = m.group(1), m.group(2), m.group(4)
        depth = max(len(m.group(3)) - 2, 0) // 2
        stack = stacks.setdefault(cpu, [])
        # lost closes (an overrun) unwind, their frames uncounted
        while len(stack) > depth + 1 or \
                (len(stack) > depth and not CLOSE.match(body)):
            stack.pop()
        if depth > len(stack):
            continue    # inside a call that began before the trace
        path = tuple(f[0] for f in stack)
        o = OPEN.match(body)
        if o:
            stack.append([o.group(1), {}])
            continue
        leaf = LEAF.match(body)
        if leaf and dur is not None:
            record(stack, path + (leaf.group(1),), float(dur))
            continue
        c = CLOSE.match(body)
        if c and dur is not None and len(stack) == depth + 1:
            name, pending = stack.pop()
            if c.group(1) and c.group(1) != name:
                continue
            record(stack, path, float(dur))
            merge(stack[-1][1] if stack else acc, pending)
    return acc


def report(acc, min_share):
    roots = sorted((p for p in acc if len(p) == 1), key=lambda p: -acc[p][1])
    children = {}
    for p in acc:
        if len(p) > 1:
            children.setdefault(p[:-1], []).append(p)
    print('%-58s %9s %10s %9s %9s %6s' %
          ('call path', 'calls', 'total ms', 'us/call', 'own us', 'share'))

    def show(path, root_us):
        calls, us = acc[path]
        kids = children.get(path, [])
        own = us - sum(acc[k][1] for k in kids)
        share = us / root_us if root_us else 0.0
        name = '  ' * (len(path) - 1) + path[-1]
        print('%-58s %9d %10.1f %9.2f %9.2f %5.1f%%' %
              (name[:58], calls, us / 1000, us / calls, own / calls,
               100 * share))
        for k in sorted(kids, key=lambda k: -acc[k][1]):
            if root_us and acc[k][1] / root_us >= min_share:
                show(k, root_us)

    for r in roots:
        show(r, acc[r][1])


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    min_share = float(sys.argv[2]) if len(sys.argv) > 2 else 0.01
    with open(sys.argv[1], errors='replace') as f:
        acc = parse(f)
    if not acc:
        sys.exit('no function_graph entries in ' + sys.argv[1])
    report(acc, min_share)


if __name__ == '__main__':
    main()
