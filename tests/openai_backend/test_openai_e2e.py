"""MLE-STAR and evolve through ``engine start --agent openai`` as a user runs them (issue 18).

The engine is a subprocess; the model is our Chat Completions stand-in on loopback answering the
engine's real prompts with real scikit-learn scripts (canned_chat.py). REQ-OR-005/007/008/027.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from engine.tasks import resolve_task
from tests.openai_backend.canned_chat import CannedChatModel
from tests.openai_backend.chat_api import ChatAPIStandIn
from tests.openai_backend.conftest import FAKE_KEY, PRICES, engine, engine_env, events, summary_of
from tests.support.evolve_model import EvolutionAnswers

pytestmark = pytest.mark.slow


def _calls_answered(log: list[dict]) -> list[str]:
    requested = [e["effect_id"] for e in log if e["type"] == "AgentCallRequested"]
    completed = [e["effect_id"] for e in log if e["type"] == "AgentCallCompleted"]
    failed = [(e["effect_id"], e["error"][:300]) for e in log if e["type"] == "AgentCallFailed"]
    assert requested and not failed, failed
    assert sorted(requested) == sorted(completed)
    return requested


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory) -> Iterator[dict[str, Any]]:
    """One quick MLE-STAR run through the stand-in, shared by the tests below. The model answers
    the first two calls with 429 and 500, and echoes the key it was called with in every reply."""
    tmp = tmp_path_factory.mktemp("oa-mle")
    model = CannedChatModel(explore=True, fail_first={429: 1, 500: 1}, leak_key=True)
    with ChatAPIStandIn(model, expected_key=FAKE_KEY) as api:
        db = tmp / "runs" / "engine.db"
        env = engine_env(api.url)
        started = engine(["start", "--task", "iris", "--agent", "openai", "--preset", "quick", "--db", str(db),
                          "--run-id", "oa-mle", "--set", f"model_prices={PRICES}", "--json"], env)
        yield {"model": model, "api": api, "db": db, "env": env, "started": started, "tmp": tmp}


def test_quick_mle_star_run_with_tools_and_json_schema_completes_and_replays(quick_run):
    model, db, env, started = quick_run["model"], quick_run["db"], quick_run["env"], quick_run["started"]
    assert started.returncode == 0, started.stdout[-3000:] + started.stderr[-3000:]
    summary = summary_of(started.stdout)
    assert summary["status"] == "completed" and summary["submission_path"]

    log = events(db, "oa-mle")
    requested = _calls_answered(log)
    assert log[0]["backend"] == "openai"
    completed = [e for e in log if e["type"] == "AgentCallCompleted"]
    assert all(e["cost_usd"] > 0 for e in completed) and summary["cost_usd"] > 0
    # One conversation per call (+2 first requests answered 429/500 and retried), every one naming its call.
    assert len(model.prompts) == len(requested) + 2
    assert sorted(set(model.effects)) == sorted(requested)
    structured = [e for e in completed if e["structured"] is not None]
    assert structured and all(e["usage"]["structured_output"] == "json_schema" for e in structured)
    # The agents that have tools looked at input/ through them and saw the task's data.
    assert model.explored and all("train.csv" in shown for shown in model.explored)
    assert any("run_command" in e["usage"].get("tool_calls", []) for e in completed)
    assert any(e["type"] == "AgentSpendRecorded" and e["reason"] == "preflight" for e in log)

    graded = engine(["grade", "oa-mle", "--db", str(db), "--json"], env)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    report = summary_of(graded.stdout)
    assert report["valid_submission"] and report["score"] is not None, report

    replayed = engine(["replay", "oa-mle", "--db", str(db)], env)
    assert replayed.returncode == 0, replayed.stdout[-2000:] + replayed.stderr[-2000:]


def test_the_key_is_never_in_events_logs_or_report(quick_run):
    """Secrets never reach the log, the engine's output or the report, even when the model
    echoes the key back in every answer (REQ-OR-051)."""
    db, env, started, tmp = quick_run["db"], quick_run["env"], quick_run["started"], quick_run["tmp"]
    assert started.returncode == 0, started.stderr[-2000:]
    log = events(db, "oa-mle")
    assert any("[REDACTED]" in e.get("text", "") for e in log if e["type"] == "AgentCallCompleted")
    report = tmp / "report.html"
    made = engine(["report", "oa-mle", "--db", str(db), "-o", str(report)], env)
    assert made.returncode == 0, made.stderr[-2000:]
    shown = engine(["log", "oa-mle", "--db", str(db), "--json"], env)
    texts = {"stdout": started.stdout, "stderr": started.stderr, "report": report.read_text(),
             "log": shown.stdout + shown.stderr}
    for path in (tmp / "runs").rglob("*"):  # the database and every file of the run (logs, agents' work dirs)
        if path.is_file():
            texts[str(path)] = path.read_bytes().decode("utf-8", errors="replace")
    leaked = [where for where, text in texts.items() if FAKE_KEY in text]
    assert not leaked, leaked


def test_evolve_run_streaming_without_schema_support_completes(tmp_path, stand_in):
    """Streamed replies; a server that refuses JSON-schema response formats (JSON in the text is
    validated instead); no price table (cost unknown, tokens recorded)."""
    model = CannedChatModel(explore=True, evolution=EvolutionAnswers(resolve_task("iris", tmp_path / "task").description))
    api = stand_in(model, expected_key=FAKE_KEY, json_schema=False)
    db = tmp_path / "runs" / "engine.db"
    env = engine_env(api.url, ENGINE_OPENAI_STREAM="1")
    started = engine(["start", "--task", "iris", "--strategy", "evolve", "--agent", "openai", "--preset", "quick",
                      "--db", str(db), "--run-id", "oa-evo", "--json", "--set", "max_steps=6", "--set",
                      "steps_per_epoch=2", "--set", "phase1_target_nodes=2"], env)
    assert started.returncode == 0, started.stdout[-3000:] + started.stderr[-3000:]
    summary = summary_of(started.stdout)
    assert summary["status"] == "completed" and summary["submission_path"]
    log = events(db, "oa-evo")
    _calls_answered(log)
    completed = [e for e in log if e["type"] == "AgentCallCompleted"]
    assert all(e["cost_usd"] is None and e["usage"]["input_tokens"] > 0 and e["usage"]["cost_source"] == "unknown"
               for e in completed)
    assert any(e["usage"].get("structured_output") == "json_in_text" for e in completed)  # the reviews
    assert all(ex.stream for ex in api.chat_calls() if ex.user_texts()[0] != "Reply with the single word: ready")
    graded = engine(["grade", "oa-evo", "--db", str(db), "--json"], env)
    assert graded.returncode == 0 and summary_of(graded.stdout)["valid_submission"], graded.stdout + graded.stderr
    replayed = engine(["replay", "oa-evo", "--db", str(db)], env)
    assert replayed.returncode == 0, replayed.stdout[-2000:] + replayed.stderr[-2000:]
