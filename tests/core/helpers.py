"""Shared helpers for the core tests: running the real ``engine`` CLI in subprocesses and
reading its databases back through the store (issue "Event-sourced core", Must show)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from events.base import Envelope
from replay.state import RESULT_TYPES, PipelineState, fold
from store.base import DatabaseLocked, RunNotFound
from store.sqlite import SQLiteEventStore

REPO = Path(__file__).resolve().parents[2]
TOY_TASK = REPO / "tests" / "toy" / "task"
TOY_STRATEGY = "tests.toy.strategy:main"
TOY_AGENT = "tests.toy.strategy:EchoBackend"
SLOW_AGENT = "tests.core.toy_variants:SlowEchoBackend"
BOOKKEEPING = frozenset({"DriverStarted", "DriverStopped", "AgentSpendRecorded"})
VOLATILE_FIELDS = frozenset({"elapsed_s", "duration_s"})


def engine_env(extra_path: Path | str | None = None, **overrides: str | None) -> dict[str, str]:
    """The environment for an ``engine`` subprocess: the repo (and ``extra_path``) importable."""
    env = dict(os.environ)
    for key in ("ENGINE_FAILPOINT_KILL_AFTER_SEQ", "ENGINE_DB", "TOY_TRACE_DIR", "TOY_DELAY_S"):
        env.pop(key, None)
    paths = [str(extra_path)] if extra_path else []
    paths.append(str(REPO))
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["PYTHONUNBUFFERED"] = "1"
    env["COLUMNS"] = "400"  # rich must not wrap the messages the tests look for
    for key, value in overrides.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def engine_cmd(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "engine.cli", *map(str, args)]


def run_engine(*args: str | Path, env: dict[str, str] | None = None, timeout: float = 600,
               cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(engine_cmd(*args), env=env or engine_env(), capture_output=True, text=True,
                          timeout=timeout, cwd=cwd or REPO, stdin=subprocess.DEVNULL)


def popen_engine(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(engine_cmd(*args), env=env or engine_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=REPO, stdin=subprocess.DEVNULL)


def start_toy(db: Path, run_id: str, *, seed: int = 7, agent: str = TOY_AGENT, env: dict[str, str] | None = None,
              extra: tuple[str, ...] = ()) -> list[str]:
    """The argument list of ``engine start`` for the toy strategy."""
    return ["start", "--task", str(TOY_TASK), "--strategy", TOY_STRATEGY, "--agent", agent,
            "--db", str(db), "--run-id", run_id, "--seed", str(seed), *extra]


def read_log(db: Path, run_id: str) -> list[Envelope]:
    store = SQLiteEventStore(db, create=False)
    try:
        return list(store.read(run_id))
    finally:
        store.close()


def state_of(db: Path, run_id: str) -> PipelineState:
    return fold(read_log(db, run_id))


def wait_for(predicate, timeout: float = 60.0, interval: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise AssertionError(f"condition not reached within {timeout}s")


def count_results(db: Path, run_id: str) -> int:
    """How many effect results are committed (0 while the database or run does not exist yet, or
    while the engine holds the database to create it)."""
    if not db.exists():
        return 0
    try:
        return sum(1 for env in read_log(db, run_id) if env.type in RESULT_TYPES)
    except (RunNotFound, DatabaseLocked):
        return 0


def _strip(value: Any, roots: tuple[str, ...]) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v, roots) for k, v in value.items() if k not in VOLATILE_FIELDS}
    if isinstance(value, list):
        return [_strip(v, roots) for v in value]
    if isinstance(value, str):
        for root in roots:
            value = value.replace(root, "<ROOT>")
        return value
    return value


def comparable(log: list[Envelope], roots: tuple[str, ...] = ()) -> list[tuple[Any, ...]]:
    """A log as (type, scope, payload, causation) ignoring recorded_at, elapsed/duration fields,
    driver bookkeeping and the database's directory; causation is the index of the cause in the
    filtered log (seqs shift when bookkeeping events land elsewhere)."""
    kept = [env for env in log if env.type not in BOOKKEEPING]
    index = {env.seq: i for i, env in enumerate(kept)}
    out = []
    for env in kept:
        cause = None if env.causation_seq is None else index.get(env.causation_seq, "bookkeeping")
        out.append((env.type, env.scope, json.dumps(_strip(env.payload, roots), sort_keys=True), cause))
    return out


def send_signal_when(proc: subprocess.Popen[str], db: Path, run_id: str, results: int,
                     signum: int = signal.SIGINT, timeout: float = 60.0) -> None:
    """Signal a driver once ``results`` effect results are committed."""
    wait_for(lambda: count_results(db, run_id) >= results or proc.poll() is not None, timeout)
    assert proc.poll() is None, f"the driver ended before it could be signalled: {proc.communicate()}"
    proc.send_signal(signum)


def assert_no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stdout, proc.stdout
