"""Re-record the replay fixtures: ``python -m tests.replays.record [NAME ...|--all|--list]``.

Each fixture is recorded by the real ``engine start`` in a subprocess (fixed run id, seed and
settings from ``tests/replays/fixtures.py``) into a scratch database under
``$TMPDIR/engine-fixtures/<name>/`` (a fixed place, so the paths inside the log stay the same
from one recording to the next), exported as JSON Lines to ``tests/replays/<name>.jsonl``,
rewritten to the old Note schema where the spec says so, and finally replayed through the
current handlers: a recording that does not replay cleanly is not written. ``make fixtures``
re-records them all (issue "Replay-based regression suite", item 2).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.replays.fixtures import (
    BY_NAME,
    FIXTURES,
    FixtureSpec,
    describe,
    downgrade_notes_to_v1,
    downgrade_to_before_rows,
    write_jsonl,
)

REPO = Path(__file__).resolve().parents[2]


def scratch_dir(spec: FixtureSpec) -> Path:
    return Path(tempfile.gettempdir()) / "engine-fixtures" / spec.name


def record(spec: FixtureSpec, *, quiet: bool = False) -> Path:
    from engine.run.replayer import replay_log
    from store.sqlite import SQLiteEventStore

    work = scratch_dir(spec)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    db = work / "e.db"
    cmd = [sys.executable, "-m", "engine.cli", "start", "--task", spec.task, "--strategy", spec.strategy,
           "--agent", spec.agent, "--preset", "quick", "--seed", str(spec.seed), "--run-id", spec.run_id,
           "--db", str(db)]
    for setting in spec.settings:
        cmd += ["--set", setting]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENGINE_FAILPOINT", "ENGINE_EFFECT_TRACE"))}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    started = time.monotonic()
    proc = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=1800,
                          stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise SystemExit(f"{spec.name}: engine start failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n"
                         f"{proc.stderr[-3000:]}")
    store = SQLiteEventStore(db, create=False)
    envelopes = list(store.read(spec.run_id))
    store.close()
    if envelopes[-1].type != "RunCompleted":
        raise SystemExit(f"{spec.name}: the run ended with {envelopes[-1].type}, not RunCompleted")
    if spec.note_v1:
        envelopes = downgrade_notes_to_v1(envelopes)
    if spec.before_rows:
        envelopes = downgrade_to_before_rows(envelopes)
    divergence, _ = replay_log(envelopes)
    if divergence is not None:
        raise SystemExit(f"{spec.name}: the fresh recording does not replay:\n{divergence.describe()}")
    write_jsonl(envelopes, spec.path)
    if not quiet:
        info = describe(spec.path)
        print(f"{spec.name}: {info['events']} events, {info['bytes'] / 1024:.0f} KiB, "
              f"recorded in {time.monotonic() - started:.0f} s -> {spec.path.relative_to(REPO)}")
    return spec.path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.replays.record", description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="fixtures to re-record (see --list)")
    parser.add_argument("--all", action="store_true", help="re-record every fixture")
    parser.add_argument("--list", action="store_true", help="list the fixtures and exit")
    parser.add_argument("--jobs", type=int, default=2, help="recordings run at once (default 2)")
    args = parser.parse_args(argv)
    if args.list:
        for spec in FIXTURES:
            print(f"{spec.name:<42} {spec.about}")
        return 0
    unknown = [n for n in args.names if n not in BY_NAME]
    if unknown or not (args.names or args.all):
        parser.error(f"unknown fixture(s) {unknown}" if unknown else "name fixtures or pass --all")
    specs = list(FIXTURES) if args.all else [BY_NAME[n] for n in args.names]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        list(pool.map(record, specs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
