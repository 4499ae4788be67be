"""REQ-OR-024: a run's limit is the wall clock of the command that starts it, so its clock starts
with the process: the interpreter's start-up and the CLI's imports (0.7 s of ``engine start``
here) count, and a run that fills its limit exits by it (flight-delay at 120 s ended its driven
clock 1.7 s before its process did, when the clock started at the command's first line)."""

from __future__ import annotations

import subprocess
import sys

PAUSE_S = 0.5


def test_REQ_OR_024_the_run_s_clock_starts_when_its_process_did():
    """A process that spends PAUSE_S before it asks (as the imports before ``engine start``'s
    first line do) finds at least that much already on the run's clock."""
    code = (f"import time; time.sleep({PAUSE_S})\n"
            "from engine.run.lifecycle import process_started_monotonic\n"
            "print(time.monotonic() - process_started_monotonic())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) >= PAUSE_S
