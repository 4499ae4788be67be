"""A fast, real engine backend answering every MLE-STAR role from ``tests/replays/canned.py``.

For the crash-exactness tests (issue "Replay-based regression suite", item 7): no SDK
subprocess per call, and the scripts it writes are tiny real Python (no pandas/sklearn) that
run in well under 0.1 s, so a whole pipeline run takes seconds and many kill points fit in
the time budget. Answers depend only on the request, so a resumed run gets the same ones.
``--agent tests.crash.scripted:FastBackend``.
"""

from __future__ import annotations

from events.core import AgentCallCompleted, AgentCallRequested
from tests.replays.canned import SCENARIOS, answer


class FastBackend:
    name = "scripted-fast"

    def __init__(self, scenario: str = "fast") -> None:
        self.scenario = SCENARIOS[scenario]

    async def call(self, request: AgentCallRequested, ctx) -> AgentCallCompleted:
        text, structured = answer(request.agent_type, request.variant, request.variables,
                                  effect_id=request.effect_id, scenario=self.scenario)
        return AgentCallCompleted(effect_id=request.effect_id, text=text, structured=structured,
                                  cost_usd=0.001, usage={"input_tokens": len(request.prompt) // 4})
