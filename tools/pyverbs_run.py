#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Run rdma-core's pyverbs suite (run_tests.py) with a per-test time limit.

  pyverbs_run.py TESTS_DIR [run_tests.py arguments]

unittest has no timeouts, so one test stuck in the kernel (a completion that
never comes) would eat the whole run's budget. Each test gets SIGALRM after
$PYVERBS_TEST_TIMEOUT seconds (default 60); the exception it raises makes
that test an ERROR and the suite moves on. A test blocked somewhere that
never returns to the interpreter is left to the caller's overall timeout.
"""
import os
import runpy
import signal
import sys
import unittest

LIMIT = int(os.environ.get('PYVERBS_TEST_TIMEOUT', '60'))


class TestTimeout(Exception):
    pass


def on_alarm(signum, frame):
    raise TestTimeout(f'test still running after {LIMIT}s (per-test limit)')


_run = unittest.TestCase.run


def run_with_alarm(self, result=None):
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(LIMIT)
    try:
        return _run(self, result)
    finally:
        signal.alarm(0)


unittest.TestCase.run = run_with_alarm
tests_dir = os.path.abspath(sys.argv[1])
sys.argv = [os.path.join(tests_dir, 'run_tests.py')] + sys.argv[2:]
sys.path.insert(0, tests_dir)
runpy.run_path(sys.argv[0], run_name='__main__')
