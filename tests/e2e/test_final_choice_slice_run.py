"""A whole run with a held-back slice, through the real `engine` CLI (docs/final-choice-slice.md).

The builtin agent on the bundled ``wage-education`` (2,100 training rows: 210 held back), the
quick preset at its leanest, ``--set hidden_slice=true``. From the log and the files: the run recorded its slice; the search's
scripts read the view and were graded on the held-back rows; the final was chosen on them
(``FinalChoiceMade``) and is the solution finalization was given; the submitted file holds the
task's own test ids only and grades valid; the log verifies and replays. A run with the setting
at its default (off; the session's shared iris run) records why it held nothing back and decides
on validation alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.e2e.test_bundled_tasks import engine, ok
from tests.support.shared_runs import LEAN_RUN, shared_iris_quick_run

pytestmark = pytest.mark.slow
SPREAD_OVER_WORKERS = True
TASK = "wage-education"


def events_of(db: Path, run_id: str) -> list[dict]:
    return [json.loads(line) for line in ok(engine("log", run_id, "--json", db=db)).splitlines() if line.strip()]


def of(events: list[dict], kind: str) -> list[dict]:
    return [e["payload"] for e in events if e["type"] == kind]


def test_a_run_chooses_its_final_on_the_rows_it_held_back(tmp_path: Path) -> None:
    db = tmp_path / "e.db"
    summary = json.loads(ok(engine("start", "--task", TASK, "--agent", "builtin", "--preset", "quick", *LEAN_RUN,
                                   "--set", "hidden_slice=true", "--run-id", "S", "--json", db=db, timeout=900)))
    assert summary["status"] == "completed"
    events = events_of(db, "S")
    (drawn,) = of(events, "HiddenSliceDrawn")
    assert drawn["rows"] == 210 and drawn["of_rows"] == 2100 and drawn["reason"] == ""
    graded = [e for e in of(events, "EvaluationCompleted") if e.get("hidden_score") is not None]
    assert graded, "no search step was graded on the held-back rows"
    (choice,) = of(events, "FinalChoiceMade")
    assert choice["finalists"] and choice["validation_best"] in {f["solution_id"] for f in choice["finalists"]}
    chosen = next(f for f in choice["finalists"] if f["solution_id"] == choice["chosen"])
    graded_finalists = [f["hidden_score"] for f in choice["finalists"]
                        if f["hidden_score"] is not None and f["score"] is not None]
    assert chosen["hidden_score"] == max(graded_finalists)  # accuracy: higher is better
    # finalization was given the chosen solution
    (removed,) = of(events, "SubsamplingRemoved") or [None]
    if removed is not None:
        assert removed["source_solution_id"] == choice["chosen"]
    # the submission: the task's own test ids only, valid when graded
    answers = pd.read_csv(drawn["answers"], dtype=str, keep_default_na=False)
    submitted = pd.read_csv(summary["submission_path"], dtype=str, keep_default_na=False)
    id_column = answers.columns[0]
    assert not set(answers[id_column]) & set(submitted[id_column])
    report = json.loads(ok(engine("grade", "S", "--json", db=db)))
    assert report["valid_submission"] is True
    ok(engine("verify", "S", db=db))
    ok(engine("replay", "S", db=db))
    # the report says what was held back and shows every finalist's two grades
    ok(engine("report", "S", "--output", str(tmp_path / "report.html"), db=db))
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "The final chosen on held-back rows" in page and "210 of the 2,100 training rows" in page
    assert all(f["solution_id"] in page for f in choice["finalists"])


def test_by_default_nothing_is_held_back(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The session's shared quick run (iris, no ``--set hidden_slice``) is a run at the default."""
    shared = shared_iris_quick_run(tmp_path_factory)
    assert json.loads(shared.summary)["status"] == "completed"
    events = events_of(shared.db, shared.run_id)
    (drawn,) = of(events, "HiddenSliceDrawn")
    assert drawn["rows"] == 0 and "hidden_slice is off" in drawn["reason"]
    assert not of(events, "FinalChoiceMade")
    assert all(e.get("hidden_score") is None for e in of(events, "EvaluationCompleted"))
