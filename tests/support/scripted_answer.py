"""The scripted model's answer to one prompt, the same behind every API stand-in (the
Messages-API one in ``tests.support.canned_model`` and the OpenAI one in
``tests.openai_backend.canned_chat``): an evolution prompt is answered by ``evolution`` when one
is given, every MLE-STAR role from ``tests.replays.canned``'s script."""

from __future__ import annotations

from tests.replays import canned
from tests.replays.fake_cli import recognise
from tests.support.evolve_model import EvolutionAnswers, recognise_evolution


def scripted_answer(prompt: str, effect_id: str, *, evolution: EvolutionAnswers | None,
                    scenario: str) -> tuple[str, dict | None]:
    """The text and structured output that answer ``prompt``."""
    asked = recognise_evolution(prompt) if evolution is not None else None
    if evolution is not None and asked is not None:
        return evolution.answer(*asked, effect_id)
    agent_type, variant, values = recognise(prompt)
    return canned.answer(agent_type, variant, values, effect_id=effect_id, scenario=scenario)
