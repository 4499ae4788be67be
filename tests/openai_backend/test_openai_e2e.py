"""MLE-STAR and evolve through ``engine start --agent openai`` as a user runs them (issue 18).

The engine is a subprocess; the model is our Chat Completions stand-in on loopback answering the
engine's real prompts with real scikit-learn scripts (canned_chat.py). REQ-OR-005/007/008/027.
"""

from __future__ import annotations

import pytest

from engine.tasks import resolve_task
from tests.openai_backend.canned_chat import CannedChatModel
from tests.openai_backend.evolve_model import EvolutionAnswers
from tests.openai_backend.conftest import FAKE_KEY, MODEL, PRICES, engine, engine_env, events, summary_of

pytestmark = pytest.mark.slow


def _calls_answered(log: list[dict]) -> list[str]:
    requested = [e["effect_id"] for e in log if e["type"] == "AgentCallRequested"]
    completed = [e["effect_id"] for e in log if e["type"] == "AgentCallCompleted"]
    failed = [(e["effect_id"], e["error"][:300]) for e in log if e["type"] == "AgentCallFailed"]
    assert requested and not failed, failed
    assert sorted(requested) == sorted(completed)
    return requested


def test_quick_mle_star_run_with_tools_and_json_schema_completes_and_replays(tmp_path, stand_in):
    model = CannedChatModel(explore=True, fail_first={429: 1, 500: 1})
    api = stand_in(model, expected_key=FAKE_KEY)
    db = tmp_path / "runs" / "engine.db"
    env = engine_env(api.url)
    started = engine(["start", "--task", "iris", "--agent", "openai", "--preset", "quick", "--db", str(db),
                      "--run-id", "oa-mle", "--set", f"model_prices={PRICES}", "--json"], env)
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


def test_evolve_run_streaming_without_schema_support_completes(tmp_path, stand_in):
    """Streamed replies; a server that refuses JSON-schema response formats (JSON in the text is
    validated instead); no price table (cost unknown, tokens recorded)."""
    model = CannedChatModel(explore=True, evolution=EvolutionAnswers(resolve_task("iris", tmp_path / "task").description))
    api = stand_in(model, expected_key=FAKE_KEY, json_schema=False)
    db = tmp_path / "runs" / "engine.db"
    env = engine_env(api.url, ENGINE_OPENAI_STREAM="1")
    started = engine(["start", "--task", "iris", "--strategy", "evolve", "--agent", "openai", "--preset", "quick",
                      "--db", str(db), "--run-id", "oa-evo", "--json"], env)
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
