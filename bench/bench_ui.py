"""Benchmark: `engine ui` opening the page of a 50,000-event run (issue "engine ui", item "fast on
big logs": under a second), against a baseline that reads the same run: `engine log RUN --json`.

    python bench/bench_ui.py [--events N] [--rounds N] [--smoke]

(--smoke: a 1,000-event run, one round, exit 0 whatever the time: to check the bench runs)

The run is bench_core's mixed log (agent call, solution, evaluation, verdict and note cycles) in a
SQLite store. Each round starts `engine ui --port 0` afresh and measures, over HTTP on loopback:
* first render: the run page's HTML, fully received, the first time that server renders it
  (the server is up: its runs list answered);
* cold open: from starting the `engine ui` process to the run page received (process start,
  imports, reading and folding every run, rendering);
and, interleaved, the baseline: the `engine log RUN --json` process from start to exit (stdout
discarded). The best of the rounds is reported, and the ratios to the baseline.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.bench_core import build_big_run  # noqa: E402

TARGET_S = 1.0
ENV = {**os.environ, "PYTHONPATH": str(REPO), "ENGINE_LOG_LEVEL": "WARNING"}


def engine(*args: str) -> list[str]:
    return [sys.executable, "-m", "engine.cli", *args]


def fetch(url: str) -> int:
    with urllib.request.urlopen(url, timeout=300) as response:
        return len(response.read())


def baseline(db: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(engine("log", "BIG", "--json", "--db", str(db)), stdout=subprocess.DEVNULL, check=True, env=ENV,
                   cwd=REPO)
    return time.perf_counter() - t0


def ui_round(db: Path) -> tuple[float, float, int]:
    """(first render of the run page on a ready server, cold open, page bytes)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(engine("ui", "--db", str(db), "--port", "0"), stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, text=True, env=ENV, cwd=REPO)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        match = re.search(r"serving (http://\S+)", line)
        assert match, line
        url = match.group(1)
        cold_t0 = time.perf_counter()
        size = fetch(url + "run/BIG")  # cold: this server's first look at anything
        cold = time.perf_counter() - cold_t0 + (cold_t0 - t0)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    proc = subprocess.Popen(engine("ui", "--db", str(db), "--port", "0"), stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, text=True, env=ENV, cwd=REPO)
    try:
        assert proc.stderr is not None
        url = re.search(r"serving (http://\S+)", proc.stderr.readline()).group(1)  # type: ignore[union-attr]
        fetch(url)  # the server is up (it answers once it has read the store)
        t1 = time.perf_counter()
        fetch(url + "run/BIG")
        first = time.perf_counter() - t1
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    return first, cold, size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="1,000 events, one round")
    args = parser.parse_args(argv)
    if args.smoke:
        args.events, args.rounds = 1_000, 1
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "big.db"
        build_big_run(db, args.events)
        base, first, cold, size = [], [], [], 0
        for _ in range(args.rounds):  # interleaved: both see the same machine load
            base.append(baseline(db))
            f, c, size = ui_round(db)
            first.append(f)
            cold.append(c)
    b, f, c = min(base), min(first), min(cold)
    verdict = "OK" if f < TARGET_S else "TOO SLOW"
    print(f"engine ui benchmark: the page of a {args.events:,}-event run (SQLite), best of {args.rounds}")
    print(f"  baseline `engine log RUN --json` (process start to exit): {b * 1000:8.0f} ms")
    print(f"  first render of the run page (server up):               {f * 1000:8.0f} ms   "
          f"ratio to baseline {f / b:.2f}   (target < {TARGET_S:.0f} s: {verdict})")
    print(f"  cold open (start `engine ui` → run page received):      {c * 1000:8.0f} ms   ratio to baseline {c / b:.2f}")
    print(f"  page size: {size / 1024:,.0f} KiB")
    return 0 if verdict == "OK" or args.smoke else 1


if __name__ == "__main__":
    sys.exit(main())
