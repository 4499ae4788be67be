"""``BuiltinBackend``: routes an agent call to its role and wraps the answer as an event.

Roles are pure functions of (variables, task, config, seed, effect id): no clock, no global
randomness, no training. They run inline (each takes milliseconds), so concurrent calls cannot
influence one another and the same request always gets the same answer.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import structlog

from engine.agents.base import AgentContext, AgentResult
from engine.agents.builtin import debugger as dbg
from engine.agents.builtin import ensembling, evolution, finalization, leakage, refinement, retrieval
from engine.agents.builtin.call import Call, CannotAnswer, Reply
from events.core import AgentCallCompleted, AgentCallFailed, AgentCallRequested

log = structlog.get_logger(__name__)

Role = Callable[[Call], Reply]

# (agent_type, variant) -> role; variant None is the default for that agent type.
ROLES: dict[tuple[str, str | None], Role] = {
    ("retriever", None): retrieval.retriever,
    ("init", None): retrieval.init,
    ("merger", None): retrieval.merger,
    ("ablation", None): refinement.ablation,
    ("summarize", None): refinement.summarize,
    ("extractor", None): refinement.extractor,
    ("coder", None): refinement.coder,
    ("planner", None): refinement.planner,
    ("ens_planner", None): ensembling.ens_planner,
    ("ensembler", None): ensembling.ensembler,
    ("debugger", None): dbg.debugger,
    ("leakage", None): leakage.detection,
    ("leakage", "detection"): leakage.detection,
    ("leakage", "correction"): leakage.correction,
    ("data", None): finalization.data,
    ("test", None): finalization.test,
    ("test", "subsampling_extract"): finalization.subsampling_extract,
    ("test", "subsampling_remove"): finalization.subsampling_remove,
    ("test", "contamination"): finalization.contamination,
    ("test", "contamination_check"): finalization.contamination,
    ("draft", None): evolution.draft,
    ("merge", None): evolution.merge,
    ("mutate", None): evolution.mutate,
    ("review", None): evolution.review,
    ("profile_evolver", None): evolution.profile_evolver,
    ("evo_debug", None): dbg.evo_debug,
    ("debug", None): dbg.evo_debug,
}


def _role_for(agent_type: str, variant: str | None) -> Role | None:
    return ROLES.get((agent_type, variant)) or ROLES.get((agent_type, None))


class BuiltinBackend:
    """Deterministic offline agent writing real scikit-learn solutions for tabular tasks."""

    name = "builtin"

    def __init__(self, **_: object) -> None:
        pass

    async def call(self, request: AgentCallRequested, ctx: AgentContext) -> AgentResult:
        return self.answer(request, ctx)

    def answer(self, request: AgentCallRequested, ctx: AgentContext) -> AgentResult:
        """Synchronous core of ``call`` (handy for tests and tools)."""
        started = time.perf_counter()
        agent_type = str(getattr(request.agent_type, "value", request.agent_type))
        role = _role_for(agent_type, request.variant)
        if role is None:
            return AgentCallFailed(effect_id=request.effect_id,
                                   error=f"builtin backend has no role {agent_type!r} (variant {request.variant!r})")
        try:
            reply = role(Call(agent_type, request.variant, dict(request.variables), ctx, request.effect_id))
        except CannotAnswer as exc:
            log.info("builtin.cannot_answer", agent_type=agent_type, variant=request.variant, reason=str(exc))
            return AgentCallFailed(effect_id=request.effect_id, error=str(exc))
        except Exception as exc:  # a bug of ours must not crash the run loop: report it honestly
            log.warning("builtin.role_error", agent_type=agent_type, variant=request.variant, error=repr(exc))
            return AgentCallFailed(effect_id=request.effect_id,
                                   error=f"builtin {agent_type} failed internally: {type(exc).__name__}: {exc}")
        duration = time.perf_counter() - started
        log.debug("builtin.answered", agent_type=agent_type, variant=request.variant, seconds=round(duration, 4))
        return AgentCallCompleted(
            effect_id=request.effect_id,
            text=reply.text,
            code=reply.code,
            structured=reply.structured,
            cost_usd=0.0,
            usage={"backend": "builtin", "output_chars": len(reply.text)},
            duration_s=duration,
            session_id=None,
        )
