"""The regression suite catches a changed decision in every phase, and says where (issue "Replay-based
regression suite", item 5; ARCHITECTURE "fail on the first decision that differs").

Each case monkeypatches ONE decision function of a phase handler so that it decides otherwise
(Phase 1's candidate ranking π reversed, Phase 2's inner-loop comparison negated, Phase 3's
argbest turned into argworst, finalization rejecting a valid submission, evolution's tournament
won by the weakest entrant), replays a recorded fixture and expects ``replay_log`` to return a
divergence whose seq lies in that phase's scope, with a readable ``describe()``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import handlers.evolution.steps as evo_steps
import handlers.finalization as finalization
import handlers.mlestar.phase1 as phase1
import handlers.mlestar.phase2_inner as phase2_inner
import handlers.mlestar.phase3 as phase3
from engine.run.replayer import replay_log
from events.base import Envelope
from events.score import Score
from tests.replays.fixtures import BY_NAME, read_fixture


def _rank_reversed(orig: Callable) -> Callable:
    return lambda scores, rule: list(reversed(orig(scores, rule)))


class _NegatedScore(Score):
    def at_least(self, new: float | None, old: float | None) -> bool:
        return not super().at_least(new, old)


def _comparison_negated(orig: Callable) -> Callable:
    return lambda wf: _NegatedScore(orig(wf).direction)


def _argworst(orig: Callable) -> Callable:
    return lambda scores, rule: orig([None if s is None else -s for s in scores], rule)


def _submission_rejected(orig: Callable) -> Callable:
    return lambda ev: orig(ev) or "the submission's id column is not sorted (changed decision)"


def _weakest_wins(orig: Callable) -> Callable:
    def select(pool: Any, k: int, rng: Any) -> Any:
        _, entrants = orig(pool, k, rng)
        return min(entrants, key=lambda n: (n.fitness if n.fitness is not None else float("inf"), n.index)), entrants
    return select


CASES = [
    # (phase scope prefix, fixture, module, function name, patch)
    ("phase1", "mle-star-iris-builtin", phase1, "rank_candidates", _rank_reversed),
    ("phase1", "mle-star-wine-claude", phase1, "rank_candidates", _rank_reversed),
    ("phase2/path-", "mle-star-wine-claude", phase2_inner, "score_rule", _comparison_negated),
    ("phase2/path-", "mle-star-wine-builtin", phase2_inner, "score_rule", _comparison_negated),
    ("phase3", "mle-star-penguins-claude-merge-crash", phase3, "best_index", _argworst),
    ("final", "mle-star-wine-claude", finalization, "submission_problem", _submission_rejected),
    ("final", "evolve-wine-builtin", finalization, "submission_problem", _submission_rejected),
    ("evolve", "evolve-iris-builtin", evo_steps, "tournament_select", _weakest_wins),
    ("evolve", "evolve-wine-builtin", evo_steps, "tournament_select", _weakest_wins),
]


def _scope_of(log: list[Envelope], divergence: Any) -> str:
    by_seq = {e.seq: e for e in log}
    if divergence.expected is not None:
        return divergence.expected["scope"]
    if divergence.actual is not None:
        return divergence.actual["scope"]
    return by_seq[divergence.input_seq].scope


@pytest.mark.parametrize("prefix,fixture,module,name,patch", CASES,
                         ids=[f"{c[0].rstrip('/-')}-{c[3]}-{c[1]}" for c in CASES])
def test_changed_decision_is_the_first_divergence(prefix, fixture, module, name, patch, monkeypatch) -> None:
    log = read_fixture(BY_NAME[fixture].path)
    assert replay_log(log)[0] is None, "the fixture must replay cleanly before the change"
    monkeypatch.setattr(module, name, patch(getattr(module, name)))
    divergence, _ = replay_log(log)
    assert divergence is not None, f"changing {module.__name__}.{name} went unnoticed on {fixture}"
    text = divergence.describe()
    print(f"\n--- {module.__name__}.{name} changed, replaying {fixture} ---\n{text}")
    scope = _scope_of(log, divergence)
    assert scope.startswith(prefix), f"the divergence is in scope {scope!r}, not {prefix!r}:\n{text}"
    assert text.startswith(f"first divergence at seq {divergence.seq} (caused by input seq {divergence.input_seq})")
    assert "expected (recorded):" in text and "actual (replayed):" in text
    recorded = next((e for e in log if e.seq == divergence.seq), None)
    if recorded is not None and divergence.expected is not None:
        assert divergence.expected["type"] == recorded.type
    # Everything before the divergence still agrees: the failure names the FIRST changed decision.
    cause = next(e for e in log if e.seq == divergence.input_seq)
    assert cause.type in ("RunStarted", "AgentCallCompleted", "AgentCallFailed", "EvaluationCompleted", "TimerFired")
