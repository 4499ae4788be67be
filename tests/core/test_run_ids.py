"""One rule for run ids (issue 61, "the log and the run directory" 2): `engine start --run-id`,
imports, campaigns and the library's create_run refuse an id that is not one safe path component;
`--run-id '../../etc/x'` is refused before any database or directory exists."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.campaign.plan import run_id_for
from engine.run import lifecycle as runs_mod
from events.campaign import CampaignCell
from events.domain import PipelineConfig
from store.run_ids import MAX_RUN_ID_LENGTH, InvalidRunId, check_run_id
from tests.core.helpers import TOY_STRATEGY, TOY_TASK, assert_no_traceback, run_engine, start_toy


@given(st.text(max_size=200))
def test_an_accepted_id_is_one_safe_path_component(run_id: str) -> None:
    try:
        check_run_id(run_id)
    except InvalidRunId as exc:
        assert "is not usable" in str(exc)
        return
    assert 0 < len(run_id) <= MAX_RUN_ID_LENGTH
    assert shlex.quote(run_id) == run_id  # printed commands need no quoting for it
    root = Path("/srv/runs")
    assert (root / run_id).parent == root and (root / run_id).resolve().parent == root


@pytest.mark.parametrize("bad, says", [("../../etc/x", "path separator"), ("a/b", "path separator"),
                                       ("..", "begin with a letter"), ("-rf", "begin with a letter"),
                                       ("x y", "only letters"), ("", "empty"), ("x" * 161, "161 characters")])
def test_unsafe_ids_are_named(bad: str, says: str) -> None:
    with pytest.raises(InvalidRunId, match=says):
        check_run_id(bad)


def test_engine_start_refuses_a_traversing_run_id(tmp_path: Path) -> None:
    db = tmp_path / "deep" / "e.db"
    proc = run_engine(*start_toy(db, "../../escaped"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "run id '../../escaped' is not usable: it holds a path separator" in " ".join(proc.stderr.split())
    assert_no_traceback(proc)
    assert not (tmp_path / "escaped").exists() and not db.exists()


def test_the_library_create_run_refuses_it_before_any_file(tmp_path: Path) -> None:
    store = runs_mod.open_store(tmp_path / "e.db")
    try:
        with pytest.raises(InvalidRunId):
            runs_mod.create_run(store, db=tmp_path / "e.db", task_spec=str(TOY_TASK), strategy=TOY_STRATEGY,
                                backend_name="toy", config=PipelineConfig(), seed=0, run_id="../outside")
        assert store.list_runs() == []
    finally:
        store.close()
    assert not [p for p in tmp_path.iterdir() if p.is_dir()], "no run directory, no task copy"
    assert not (tmp_path.parent / "outside").exists()


def test_campaign_run_ids_pass_the_rule_even_for_long_task_names() -> None:
    cell = CampaignCell(task="/data/" + "a-very-long-task-name-" * 12, seed=123456)
    run_id = run_id_for("c" * 64, cell)
    assert check_run_id(run_id) == run_id and len(run_id) <= MAX_RUN_ID_LENGTH
    assert run_id != run_id_for("c" * 64, cell.model_copy(update={"task": cell.task + "b"}))
