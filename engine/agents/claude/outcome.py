"""What one try of a ``claude`` call produced: the stream of its messages, and the answer built
from the CLI's ``ResultMessage`` (``engine.agents.claude.backend`` runs the tries)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import structlog

from engine.agents.claude.hooks import CallHooks
from engine.agents.retry import TryFailure
from engine.agents.roles import role_settings
from engine.agents.secrets import Redactor
from engine.agents.structured import MalformedOutput, validate_structured
from events.agents import AgentConfig
from events.core import AgentCallCompleted, AgentCallRequested
from handlers.prompts.extract import longest_fenced_block

log = structlog.get_logger("engine.agents.claude.backend")


class Attempt:
    """What one try produced: a result, or a failure (with the cost it still incurred)."""

    def __init__(self, result: AgentCallCompleted | None = None, failure: TryFailure | None = None) -> None:
        self.result, self.failure = result, failure
        self.policy: Any = None  # the sandbox the try's CLI ran in


class Stream:
    """What the messages of one try said so far (kept for a cancelled or failed try)."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.error: str | None = None
        self.result: Any = None
        self.tokens = {"input_tokens": 0, "output_tokens": 0}
        self.policy: Any = None  # the sandbox the CLI ran in

    def add_usage(self, usage: Mapping[str, Any] | None) -> None:
        for key in self.tokens:
            value = (usage or {}).get(key)
            if isinstance(value, int):
                self.tokens[key] += value


def completed_attempt(request: AgentCallRequested, result: Any, texts: list[str], hooks: CallHooks, wall_s: float,
                      configs: dict[Any, AgentConfig] | None, redactor: Redactor) -> Attempt:
    """The try's answer from the CLI's ``ResultMessage``: text, code or validated structured output,
    cost and usage, every string redacted; a structured answer that does not validate is a failure."""
    text = result.result if isinstance(result.result, str) and result.result.strip() else (texts[-1] if texts else "")
    cost = float(result.total_cost_usd) if result.total_cost_usd is not None else None
    structured = None
    if request.output_schema:
        model = role_settings(request.agent_type, request.variant, configs).output_model
        try:
            structured = validate_structured(result.structured_output, text, request.output_schema, model)
        except MalformedOutput as exc:
            return Attempt(failure=TryFailure(f"malformed output: {exc}", transient=False, cost_usd=cost))
    usage: dict[str, Any] = dict(result.usage or {})
    usage.update(num_turns=result.num_turns, duration_api_ms=result.duration_api_ms)
    if hooks.denied:
        usage["denied_tool_uses"] = list(hooks.denied)
    if hooks.stopped_for_deadline:
        usage["stopped_for_deadline"] = True
    r = redactor
    completed = AgentCallCompleted(
        effect_id=request.effect_id,
        text=r.text(text),
        code=None if structured is not None else longest_fenced_block(r.text(text)),
        structured=r.value(structured) if structured is not None else None,
        cost_usd=cost,
        usage=r.value(usage),
        duration_s=round((result.duration_ms or 0) / 1000.0, 3) or round(wall_s, 3),
        session_id=result.session_id,
    )
    log.info("agent_call_completed", effect_id=request.effect_id, agent_type=request.agent_type,
             cost_usd=cost, num_turns=result.num_turns, duration_s=completed.duration_s)
    return Attempt(result=completed)


def result_dict(result: Any) -> dict[str, Any]:
    """The fields of an error ``ResultMessage`` that classify it (``engine.agents.retry``)."""
    return {
        "subtype": result.subtype,
        "errors": result.errors,
        "result": result.result,
        "api_error_status": result.api_error_status,
        "total_cost_usd": result.total_cost_usd,
    }
