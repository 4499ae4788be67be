"""A run recorded by the last release, stopped in the middle of Phase 2, resumes under this code.

``inflight/mle-star-iris-7ca1dbb-stopped-in-phase2.jsonl.gz`` is the export of a real run driven by
the released code at commit 7ca1dbb (``engine start --task iris --agent builtin --preset quick``),
stopped by SIGINT after Phase 2 had recorded three evaluations, then ``engine export``-ed. It is
the run a user has half-finished when they upgrade. Its paths are moved under this test's
temporary directory (the chain re-sealed, as an import on another machine would need), the
bundled task is prepared there, and ``engine resume`` must replay the recorded part through
today's handlers without a divergence, re-run no recorded agent call, and complete with a
submission for every test id.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from engine.tasks.bundled import prepare_bundled
from store.sqlite import SQLiteEventStore
from tests.core.helpers import assert_no_traceback, run_engine
from tests.replays.fixtures import reseal, write_jsonl

HERE = Path(__file__).parent
RECORDED = HERE / "inflight" / "mle-star-iris-7ca1dbb-stopped-in-phase2.jsonl.gz"
RUN_ID = "old-release-inflight"


def _moved(records: list[dict[str, Any]], root: Path) -> list[dict[str, Any]]:
    old_run_dir = records[0]["payload"]["run_dir"]

    def swap(value: Any) -> Any:
        if isinstance(value, str):
            return value.replace(old_run_dir, str(root / "run"))
        if isinstance(value, list):
            return [swap(v) for v in value]
        if isinstance(value, dict):
            return {k: swap(v) for k, v in value.items()}
        return value

    return [dict(r, payload=swap(r["payload"])) for r in records]


@pytest.mark.slow
def test_a_run_stopped_by_the_last_release_resumes_and_completes(tmp_path: Path) -> None:
    with gzip.open(RECORDED, "rt", encoding="utf-8") as fh:
        recorded = [json.loads(line) for line in fh if line.strip()]
    assert recorded[0]["version"] == 1 and recorded[-1]["type"] == "DriverStopped"
    assert any(r["scope"].startswith("phase2") and r["type"] == "EvaluationCompleted" for r in recorded)

    moved = tmp_path / "moved.jsonl"
    write_jsonl(reseal(_moved(recorded, tmp_path)), moved)
    prepare_bundled("iris", tmp_path / "run" / "task" / "iris")
    db = tmp_path / "engine.db"
    store = SQLiteEventStore(db)
    with open(moved, encoding="utf-8") as fh:
        assert store.import_jsonl(fh, allow_partial=True) == RUN_ID  # an export of a stopped run, before trailers
    store.close()

    proc = run_engine("resume", RUN_ID, "--db", db, timeout=1200)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert_no_traceback(proc)

    store = SQLiteEventStore(db, create=False)
    log = list(store.read(RUN_ID))
    store.close()
    assert [e.hash for e in log[:len(recorded)]] == [e.hash for e in reseal(_moved(recorded, tmp_path))]
    assert log[-1].type == "RunCompleted"
    calls = [e.payload["effect_id"] for e in log if e.type == "AgentCallCompleted"]
    assert len(calls) == len(set(calls)), "a recorded agent call was made again"
    submission = pd.read_csv(log[-1].payload["submission_path"])
    sample = pd.read_csv(tmp_path / "run" / "task" / "iris" / "prepared" / "public" / "sample_submission.csv")
    assert list(submission.columns) == list(sample.columns)
    assert sorted(submission.iloc[:, 0]) == sorted(sample.iloc[:, 0])
