"""The replay backend: answers agent calls with the results recorded in an earlier run.

Served by effect id, so a re-run of the same handlers asks exactly the recorded questions and
gets exactly the recorded answers. When the handlers changed and ask something the old run
never asked, the backend says so honestly (AgentCallFailed) instead of inventing an answer.
The start-up check is answered from the recording too: the re-run carries the first recorded
check's spend, so its money (and every decision made on it) is the recorded run's.
"""

from __future__ import annotations

from collections.abc import Iterable

from engine.agents.base import AgentContext, AgentResult
from engine.agents.preflight import PreflightResult
from events.base import Envelope
from events.core import AgentCallCompleted, AgentCallFailed, AgentCallRequested


class ReplayBackend:
    name = "replay"

    def __init__(self, replay_source: Iterable[Envelope], *, source_label: str = "the recorded run") -> None:
        self.source_label = source_label
        self._requests: dict[str, dict] = {}
        self._results: dict[str, Envelope] = {}
        self._checked: PreflightResult | None = None
        for env in replay_source:
            if env.type == "AgentSpendRecorded" and env.payload.get("reason") == "preflight" and self._checked is None:
                self._checked = PreflightResult(ok=True, cost_usd=env.payload.get("cost_usd"), duration_s=0.0,
                                                detail=f"the start-up check of {source_label}")
            elif env.type == "AgentCallRequested":
                self._requests[env.payload["effect_id"]] = env.payload
            elif env.type in ("AgentCallCompleted", "AgentCallFailed"):
                self._results[env.payload["effect_id"]] = env

    def __len__(self) -> int:
        return len(self._results)

    async def preflight(self) -> PreflightResult | None:
        """The recorded run's start-up check (None: it recorded no spend for one)."""
        return self._checked

    async def call(self, request: AgentCallRequested, ctx: AgentContext) -> AgentResult:
        recorded = self._results.get(request.effect_id)
        if recorded is None:
            return AgentCallFailed(effect_id=request.effect_id,
                                   error=f"replay: {self.source_label} has no answer for {request.effect_id}")
        asked = self._requests.get(request.effect_id, {})
        if asked.get("agent_type") != request.agent_type:
            return AgentCallFailed(effect_id=request.effect_id, error=(
                f"replay: {self.source_label} asked {asked.get('agent_type')} at {request.effect_id}, "
                f"not {request.agent_type}"))
        event = recorded.event()
        assert isinstance(event, (AgentCallCompleted, AgentCallFailed))
        return event.model_copy(update={"elapsed_s": 0.0})
