"""Backends that reject a role, as a mis-configured or out-of-date backend does (issue 27).

``--agent tests.e2e.role_rejecting:<Class>``: the offline builtin agent, except for the roles
it rejects, whose every call fails at once with the same configuration error.
"""

from __future__ import annotations

from engine.agents.base import AgentContext, AgentResult
from engine.agents.builtin import BuiltinBackend
from events.core import AgentCallFailed, AgentCallRequested
from events.domain import AgentType


class KnowsOnlyMleStarRoles(BuiltinBackend):
    """Looks each role up among MLE-STAR's ``AgentType``s, as the Claude backend did before the
    evolution roles existed: every ``evolve`` call fails with "'draft' is not a valid AgentType"."""

    async def call(self, request: AgentCallRequested, ctx: AgentContext) -> AgentResult:
        try:
            AgentType(request.agent_type)
        except ValueError as exc:
            return AgentCallFailed(effect_id=request.effect_id, error=str(exc))
        return await super().call(request, ctx)


class RejectsTheCoder(BuiltinBackend):
    """An endpoint that refuses the refinement coder's requests (Phase 2's inner loop) as
    malformed, every time: a protocol error, not a bad answer."""

    async def call(self, request: AgentCallRequested, ctx: AgentContext) -> AgentResult:
        if request.agent_type == AgentType.coder.value:
            return AgentCallFailed(effect_id=request.effect_id,
                                   error="API error (HTTP 400): tools.0.input_schema: unsupported keyword 'coder'")
        return await super().call(request, ctx)
