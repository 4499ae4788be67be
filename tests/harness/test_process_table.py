"""The monitor's process table (engine/harness/monitor.process_table): on Linux it reads
/proc/<pid>/stat itself; what it says of a process must be what the kernel says through os and
psutil, whatever the process's name holds."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil

from engine.harness.monitor import _portable_table, process_table

# The child names itself (its comm) with spaces and parentheses, the fields' separators, then
# waits: the table must still find its parent, group and session after the name.
_NAMED_CHILD = """
import ctypes, sys, time
ctypes.CDLL(None).prctl(15, b"a) b (c) 1 2", 0, 0, 0)
print("named", flush=True)
time.sleep(60)
"""


def _row(pid: int) -> tuple[int, int, int, int]:
    rows = {row[0]: row for row in process_table()}
    return rows[pid]


def test_the_table_names_this_process_and_a_child_in_its_own_session_as_the_kernel_does():
    child = subprocess.Popen([sys.executable, "-c", _NAMED_CHILD], stdout=subprocess.PIPE, text=True,
                             start_new_session=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "named"
        assert psutil.Process(child.pid).name() == "a) b (c) 1 2"
        assert _row(os.getpid()) == (os.getpid(), os.getppid(), os.getpgid(0), os.getsid(0))
        assert _row(child.pid) == (child.pid, os.getpid(), child.pid, child.pid)
    finally:
        child.kill()
        child.wait()


def test_the_linux_table_and_the_portable_one_agree_on_every_process_alive_in_both():
    deadline = time.monotonic() + 30
    while True:  # a process may start or end between the two scans: compare those in both
        fast = {row[0]: row for row in process_table()}
        portable = {row[0]: row for row in _portable_table()}
        common = sorted(fast.keys() & portable.keys())
        differ = [pid for pid in common if fast[pid] != portable[pid]]
        if not differ or time.monotonic() > deadline:
            break
    assert len(common) >= 2 and not differ, [(fast[p], portable[p]) for p in differ]
