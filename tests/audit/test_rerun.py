"""``engine rerun``: the recorded answers, re-executed evaluations, the first differing decision."""

from __future__ import annotations

import json
import secrets

import pytest

from engine.audit.rerun import compare_decisions, decisions
from engine.audit.runlog import kind_of
from store.sqlite import SQLiteEventStore
from tests.audit.helpers import ECHO_AGENT, TOY_TASK, engine, write_threshold_strategy


def read(db, run_id):
    return list(SQLiteEventStore(db, create=False).read(run_id))


@pytest.fixture
def threshold_run(tmp_path):
    """A run of a temp strategy (verdict by threshold 0.4 on a score of 0.5), recorded by the CLI."""
    module = f"audit_tmp_strategy_{secrets.token_hex(4)}"
    strategy = write_threshold_strategy(tmp_path, module, 0.4)
    db = tmp_path / "e.db"
    proc = engine("start", "--task", TOY_TASK, "--strategy", strategy, "--agent", ECHO_AGENT, "--db", db,
                  "--run-id", "A", "--seed", "3", extra_path=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return tmp_path, module, db


def test_rerun_of_an_unchanged_run_reports_no_difference(threshold_run):
    where, _, db = threshold_run
    proc = engine("rerun", "A", "--db", db, "--run-id", "A-again", extra_path=where)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no difference" in proc.stdout and "A-again" in proc.stdout
    old, new = read(db, "A"), read(db, "A-again")
    assert new[0].payload["backend"] == "replay:A"
    assert new[0].payload["seed"] == 3 and new[0].payload["config"] == old[0].payload["config"]
    assert new[0].payload["task_dir"] == old[0].payload["task_dir"]
    # the evaluation really ran again; the agent answer came from the recorded run
    assert [e.type for e in new].count("EvaluationCompleted") == 1
    answer = [e for e in new if e.type == "AgentCallCompleted"][0].payload["text"]
    assert answer == [e for e in old if e.type == "AgentCallCompleted"][0].payload["text"]


def test_rerun_after_a_handler_change_names_the_first_differing_decision(threshold_run):
    where, module, db = threshold_run
    write_threshold_strategy(where, module, 0.6)  # the same module now rejects the 0.5 candidate
    proc = engine("rerun", "A", "--db", db, "--run-id", "A-changed", "--json", extra_path=where)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = json.loads(proc.stdout)
    assert out["new_run_id"] == "A-changed" and out["identical"] is False
    recorded = decisions(read(db, "A"))
    # The note saying the verdict is a remark, never compared; the phase's result is the decision.
    first = next(i for i, e in enumerate(recorded) if e.type == "PhaseCompleted")
    diff = out["difference"]
    assert diff["index"] == first
    assert diff["recorded"]["type"] == diff["rerun"]["type"] == "PhaseCompleted"
    assert diff["recorded"]["scope"] == "tmp" and diff["recorded"]["seq"] == recorded[first].seq
    assert '-payload.result.verdict = "accepted"' in diff["diff"]
    assert '+payload.result.verdict = "rejected"' in diff["diff"]
    assert out["evaluation_change"] is None  # the evaluation gave the same score: the handlers changed

    text = engine("rerun", "A", "--db", db, "--run-id", "A-changed-2", extra_path=where)
    assert text.returncode == 1
    assert f"first difference at decision #{first}" in text.stdout
    assert "recorded: seq" in text.stdout and "PhaseCompleted [tmp]" in text.stdout and "A-changed-2" in text.stdout


def test_rerun_of_an_unknown_run_exits_2(threshold_run):
    _, _, db = threshold_run
    proc = engine("rerun", "nope", "--db", db)
    assert proc.returncode == 2 and "no run 'nope'" in proc.stderr


def test_comparison_ignores_clock_fields_and_run_directories(threshold_run):
    _, _, db = threshold_run
    old = read(db, "A")

    def shifted(env, extra):
        return env.model_copy(update={"payload": {**env.payload, **extra}})

    new = []
    for env in old:
        if env.type == "RunStarted":
            env = shifted(env, {"run_dir": "/elsewhere/B"})
        elif "elapsed_s" in env.payload or env.type == "PhaseStarted":
            env = shifted(env, {"elapsed_s": 99.0, "budget_s": 7.0})
        new.append(env)
    assert compare_decisions(old, new) is None
    assert compare_decisions(old, new, strict=True) is not None
    dropped = [e for e in new if not (e.type == "PhaseCompleted")]
    diff = compare_decisions(old, dropped)
    assert diff is not None and diff.old is not None and diff.old.type == "PhaseCompleted"
    assert all(kind_of(e.type) == "decision" for e in decisions(old))


def test_rerun_of_a_real_mle_star_run_with_scripted_answers(scripted_run):
    proc = engine("rerun", scripted_run.run_id, "--db", scripted_run.db, "--run-id", "SCRIPTED-rerun", timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no difference" in proc.stdout


def test_a_changed_evaluation_outcome_is_named(threshold_run):
    from engine.audit.rerun import first_evaluation_change

    _, _, db = threshold_run
    old = read(db, "A")
    new = [e.model_copy(update={"payload": {**e.payload, "result": {**e.payload["result"], "score": 0.1}}})
           if e.type == "EvaluationCompleted" else e for e in old]
    assert first_evaluation_change(old, old) is None
    change = first_evaluation_change(old, new)
    assert change is not None and "tmp/eval" in change and "score 0.5" in change and "score 0.1" in change


@pytest.mark.slow
def test_rerun_of_a_real_mle_star_builtin_run_reports_no_difference(iris_run, tmp_path):
    from tests.support.shared_runs import SharedRun, copy_run

    mine = copy_run(SharedRun(db=iris_run.db, run_id=iris_run.run_id, summary=""), tmp_path / "copy")
    proc = engine("rerun", mine.run_id, "--db", mine.db, "--run-id", "IRIS-rerun", "--json", timeout=900)
    out = json.loads(proc.stdout)
    assert out["status"] == "completed"
    if out["identical"]:
        assert proc.returncode == 0
    else:  # scikit-learn on a loaded machine can time out: then an evaluation, not a handler, changed
        assert proc.returncode == 1 and out["evaluation_change"], out
