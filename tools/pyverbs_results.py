#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Turn a verbose pyverbs (unittest -v) log into per-test results and judge
them against an expectations file.

  pyverbs_results.py LOG --results OUT [--expect FILE] [--record FILE] [--label L]

Results file: one "test-id status" per line, status one of pass, skip, fail,
error, xfail (expected failure), xpass (unexpected success).
Expectations file: "test-id pass|xfail" per line, '#' comments. A test
expected to pass that does not is a regression; a fail/error not listed as
xfail is a failure too; skips are never failures unless listed as pass.
Exit 0 when the run meets the expectations (or none were given and nothing
failed), 1 otherwise.
"""
import argparse
import re
import sys

HEADER = re.compile(r'^(test\w*) \(([\w.]+)\)(.*)$')
WORDS = {'ok': 'pass', 'FAIL': 'fail', 'ERROR': 'error',
         'expected failure': 'xfail', 'unexpected success': 'xpass'}


def status_of(text):
    text = text.strip()
    if text in WORDS:
        return WORDS[text]
    if text.startswith('skipped'):
        return 'skip'
    return None


def parse(lines):
    """unittest -v prints "name (id) ... result"; a docstring moves the
    result to the next line, and tests' own prints may land in between."""
    results, cur = {}, None
    for line in lines:
        line = line.rstrip('\n')
        m = HEADER.match(line)
        if m:
            name, tid, rest = m.groups()
            cur = tid if tid.endswith('.' + name) else tid + '.' + name
            if ' ... ' not in rest:
                continue
            line = rest
        if cur is None:
            continue
        st = None
        if ' ... ' in line:
            st = status_of(line.rsplit(' ... ', 1)[1])
        if st is None:
            st = status_of(line)
        if st is not None:
            results[cur] = st
            cur = None
    ran = None
    for line in lines:
        m = re.match(r'^Ran (\d+) tests? in', line)
        if m:
            ran = int(m.group(1))
    return results, ran


def read_expect(path):
    exp = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split('#', 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) != 2 or parts[1] not in ('pass', 'xfail'):
                sys.exit(f'{path}:{n}: want "test-id pass|xfail"')
            exp[parts[0]] = parts[1]
    return exp


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('log')
    ap.add_argument('--results', required=True)
    ap.add_argument('--expect')
    ap.add_argument('--record')
    ap.add_argument('--label', default='pyverbs')
    a = ap.parse_args()

    with open(a.log, errors='replace') as f:
        lines = f.readlines()
    res, ran = parse(lines)
    with open(a.results, 'w') as f:
        for tid in sorted(res):
            f.write(f'{tid} {res[tid]}\n')

    count = {s: 0 for s in ('pass', 'skip', 'fail', 'error', 'xfail', 'xpass')}
    for st in res.values():
        count[st] += 1
    bad = []
    if not res:
        bad.append('no test results in the log (crash or timeout?)')
    elif ran is None:
        bad.append(f'run did not finish: {len(res)} results, no "Ran N tests" line')
    elif ran != len(res):
        bad.append(f'unittest ran {ran} tests but {len(res)} results were parsed')

    notes = []
    if a.expect:
        exp = read_expect(a.expect)
        for tid, want in sorted(exp.items()):
            got = res.get(tid, 'missing')
            if want == 'pass' and got != 'pass':
                bad.append(f'REGRESSION {tid}: expected pass, got {got}')
            elif want == 'xfail' and got == 'pass':
                notes.append(f'now passes (update {a.expect}): {tid}')
        for tid, got in sorted(res.items()):
            if got in ('fail', 'error', 'xpass') and exp.get(tid) != 'xfail':
                bad.append(f'UNEXPECTED {tid}: {got}')
    else:
        for tid, got in sorted(res.items()):
            if got in ('fail', 'error', 'xpass'):
                bad.append(f'{tid}: {got}')

    if a.record:
        with open(a.record, 'w') as f:
            f.write(f'# pyverbs expectations for {a.label}: "test-id pass|xfail".\n'
                    '# pass: must pass; xfail: known failure. Unlisted skips are fine.\n'
                    '# Regenerate: tools/pyverbs.sh --record (see its header).\n')
            for tid in sorted(res):
                if res[tid] == 'pass':
                    f.write(f'{tid} pass\n')
                elif res[tid] in ('fail', 'error', 'xpass'):
                    f.write(f'{tid} xfail\n')

    for line in notes + bad:
        print(f'{a.label}: {line}')
    print(f'{a.label}: {count["pass"]} pass, {count["skip"]} skip, {count["fail"]} fail, '
          f'{count["error"]} error, {count["xfail"]} xfail, {count["xpass"]} xpass '
          f'({len(res)} tests){"" if not bad else f"; {len(bad)} problem(s)"}')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
