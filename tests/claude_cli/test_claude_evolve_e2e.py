"""The evolutionary search through the REAL bundled Claude Code CLI, as a user runs it.

``engine start --strategy evolve --agent claude`` as a subprocess (as root when the suite runs as
root), with a small search; the model is the Messages-API stand-in answering the evolution
roles' real prompts with the builtin agent's runnable programs (tests/support/evolve_model.py)
and the finalization's prompts with the canned answers; one draft comes back with a bug, so the
search's debugger runs too. Every evolution role reaches the CLI with its own tools, and the
reviewer's answer comes back through the CLI's structured output.
REQ-OR-005/007/008.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from typing import Any

import pytest

from engine.agents.roles import EVOLUTION_ROLES
from engine.tasks import resolve_task
from tests.claude_cli.conftest import engine, engine_env, events
from tests.support.canned_model import CannedModel
from tests.support.evolve_model import EvolutionAnswers, recognise_evolution

pytestmark = pytest.mark.slow

SMALL_SEARCH = ["--set", "max_steps=6", "--set", "steps_per_epoch=2", "--set", "phase1_target_nodes=2"]
MISSING_IMPORT = "import numpy as np\n"


class OneBuggyDraft(EvolutionAnswers):
    """The builtin's answers, except that the first draft asked for loses its numpy import (the
    same draft each time it is asked again): a NameError the debugger knows how to fix."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lock = threading.Lock()
        self.broken: str | None = None  # the effect id of the draft that was broken

    def answer(self, role: str, values: dict[str, Any], effect_id: str) -> tuple[str, dict[str, Any] | None]:
        text, structured = super().answer(role, values, effect_id)
        if role == "draft":
            with self._lock:
                self.broken = self.broken or effect_id
            if effect_id == self.broken:
                assert MISSING_IMPORT in text, "the builtin draft no longer imports numpy: pick another bug"
                text = text.replace(MISSING_IMPORT, "", 1)
        return text, structured


def test_evolve_run_through_the_real_cli_completes_with_scored_nodes_and_a_graded_submission(tmp_path, stand_in):
    answers = OneBuggyDraft(resolve_task("iris", tmp_path / "task").description)
    model = CannedModel(explore=True, evolution=answers)
    api = stand_in(model)
    db = tmp_path / "runs" / "engine.db"
    env = engine_env(api.url)
    started = engine(["start", "--task", "iris", "--strategy", "evolve", "--agent", "claude", "--preset", "quick",
                      "--db", str(db), "--run-id", "claude-evo", "--json", *SMALL_SEARCH], env, timeout=900)
    assert started.returncode == 0, started.stdout[-3000:] + started.stderr[-3000:]
    summary = json.loads(started.stdout[started.stdout.index("{"):])
    assert summary["status"] == "completed" and summary["submission_path"]

    log = events(db, "claude-evo")
    requests = [e for e in log if e["type"] == "AgentCallRequested"]
    completed = {e["effect_id"]: e for e in log if e["type"] == "AgentCallCompleted"}
    failed = [(e["effect_id"], e["error"][:300]) for e in log if e["type"] == "AgentCallFailed"]
    assert requests and not failed, failed
    assert sorted(e["effect_id"] for e in requests) == sorted(completed)
    assert len(model.prompts) == len(requests)  # one Messages-API conversation per call: the CLI really ran
    roles = Counter(e["agent_type"] for e in requests)
    # The search's operators, its debugger and its judges all went through the CLI.
    assert set(EVOLUTION_ROLES) <= set(roles), roles
    assert set(roles) - {"test", "leakage", "data"} <= set(EVOLUTION_ROLES), roles

    nodes = [e for e in log if e["type"] == "EvoNodeAppended"]
    assert len(nodes) == 6 and any(n["score"] is not None for n in nodes)
    backend_deaths = [(n["node_id"], n["failure"]) for n in nodes if n["dead"] and "agent gave no code" in n["failure"]]
    assert not backend_deaths
    assert any(n["debug_attempts"] >= 1 and not n["dead"] for n in nodes), nodes  # the broken draft was fixed
    assert any(e["type"] == "EvoFinalNodeSelected" and e["score"] is not None for e in log)

    # The reviewer answered through the CLI's structured output, validated against the request's schema.
    reviews = [completed[e["effect_id"]] for e in requests if e["agent_type"] == "review"]
    assert reviews and all(r["structured"] and isinstance(r["structured"]["is_buggy"], bool) for r in reviews)
    # Each role was offered its own tools: writers can run code, the reviewer only reads, the
    # profile rewriter has none.
    offered: dict[str, set[str]] = {}
    for exchange in api.message_calls():
        for text in exchange.user_texts():
            recognised = recognise_evolution(text)
            if recognised is not None:
                offered.setdefault(recognised[0], set()).update(exchange.tool_names)
    assert all({"Bash", "Edit", "Write", "Read"} <= offered[role] for role in ("draft", "merge", "mutate", "evo_debug"))
    assert "Read" in offered["review"] and "Bash" not in offered["review"], offered
    assert not {"Bash", "Edit", "Write", "Read"} & offered["profile_evolver"], offered
    # The program writers looked at input/ with their Bash tool and saw the task's data.
    assert model.explored and all("train.csv" in shown for shown in model.explored)

    graded = engine(["grade", "claude-evo", "--db", str(db), "--json"], env)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    report = json.loads(graded.stdout[graded.stdout.index("{"):])
    assert report["submission_exists"] and report["valid_submission"] and report["score"] is not None, report
