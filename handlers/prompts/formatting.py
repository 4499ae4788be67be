"""Turning list-valued prompt inputs into text (REQ-P2O-002/013, REQ-P2I-010, REQ-P3-002/011).

Every helper is pure and deterministic. An empty list renders as ``""`` so the whole section,
heading included, disappears from the prompt (the specs ask for omission, not "none so far").
A failed evaluation's score (``None``) renders as ``N/A (evaluation failed)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

FAILED_SCORE = "N/A (evaluation failed)"


def format_score(score: float | int | str | None) -> str:
    if score is None:
        return FAILED_SCORE
    if isinstance(score, str):
        return score
    return repr(float(score)) if isinstance(score, float) else str(score)


def _check_pairs(plans: Sequence[Any], scores: Sequence[Any]) -> None:
    if len(plans) != len(scores):
        raise ValueError(f"plans and scores differ in length ({len(plans)} vs {len(scores)})")


def format_plan_history(
    plans: Sequence[str],
    scores: Sequence[float | None],
    *,
    heading: str = "# Improvement plans you have tried",
) -> str:
    """REQ-P2I-010: ``## Plan:`` / ``## Score:`` blocks in the order tried."""
    _check_pairs(plans, scores)
    if not plans:
        return ""
    blocks = [f"## Plan: {str(plan).strip()}\n## Score: {format_score(score)}" for plan, score in zip(plans, scores)]
    return heading + "\n\n" + "\n\n".join(blocks) + "\n"


def format_ensemble_history(plans: Sequence[str], scores: Sequence[float | None]) -> str:
    """The ensemble planner's history (Fig 17): same shape, its own heading."""
    return format_plan_history(plans, scores, heading="# Ensemble plans you have tried")


def format_previous_ablations(summaries: Sequence[str]) -> str:
    """Numbered summaries of earlier ablation studies (REQ-P2O-002)."""
    if not summaries:
        return ""
    parts = [f"## Ablation study {i}\n{str(s).strip()}" for i, s in enumerate(summaries, start=1)]
    return "# Results of earlier ablation studies\n\n" + "\n\n".join(parts) + "\n"


def format_previous_code_blocks(blocks: Sequence[str]) -> str:
    """Numbered code blocks refined in earlier outer steps (REQ-P2O-013)."""
    if not blocks:
        return ""
    parts = [f"## Code block {i}\n```python\n{str(b).strip(chr(10))}\n```" for i, b in enumerate(blocks, start=1)]
    return "# Code blocks already improved in earlier steps (prefer a different part)\n\n" + "\n\n".join(parts) + "\n"


def format_solutions(solutions: Sequence[str]) -> str:
    """The L solutions given to the ensemble agents, numbered from 1."""
    parts = [f"## Solution {i}\n```python\n{str(s).strip(chr(10))}\n```" for i, s in enumerate(solutions, start=1)]
    return "\n\n".join(parts)


def render_value(value: Any) -> str:
    """How a scalar variable appears in a prompt. Lists without a derivation are joined."""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return "\n".join(render_value(v) for v in value)
    if value is None:
        return ""
    return format_score(value) if isinstance(value, float) else str(value)


def _text_or(fn: Callable[..., str], *values: Any) -> str:
    # A caller may hand over an already-rendered section as a string; keep it as is.
    if len(values) == 1 and isinstance(values[0], str):
        return values[0]
    return fn(*values)


@dataclass(frozen=True)
class Derivation:
    fn: Callable[[dict[str, Any]], dict[str, str]]
    consumes: tuple[str, ...]
    produces: tuple[str, ...]


def _pairs(values: dict[str, Any], fn: Callable[[Sequence[str], Sequence[float | None]], str]) -> str:
    plans, scores = values["plans"], values["scores"]
    if isinstance(plans, str):
        return plans
    return fn(list(plans), list(scores))


DERIVATIONS: dict[str, Derivation] = {
    "ablation_history": Derivation(
        fn=lambda v: {"previous_ablations": _text_or(format_previous_ablations, v["previous_ablations"])},
        consumes=("previous_ablations",),
        produces=("previous_ablations",),
    ),
    "improved_blocks": Derivation(
        fn=lambda v: {"previous_code_blocks": _text_or(format_previous_code_blocks, v["previous_code_blocks"])},
        consumes=("previous_code_blocks",),
        produces=("previous_code_blocks",),
    ),
    "plan_history": Derivation(
        fn=lambda v: {"plan_history": _pairs(v, format_plan_history)},
        consumes=("plans", "scores"),
        produces=("plan_history",),
    ),
    "ensemble_planning": Derivation(
        fn=lambda v: {
            "solutions": _text_or(format_solutions, v["solutions"]),
            "plan_history": _pairs(v, format_ensemble_history),
        },
        consumes=("solutions", "plans", "scores"),
        produces=("solutions", "plan_history"),
    ),
    "ensemble_solutions": Derivation(
        fn=lambda v: {"solutions": _text_or(format_solutions, v["solutions"])},
        consumes=("solutions",),
        produces=("solutions",),
    ),
}
