"""One call from a handler to a complete ``AgentCallRequested``: prompt rendered, schema attached.

The rendered prompt goes into the log (the audit trail shows exactly what each agent saw);
``variables`` keeps the structured inputs behind it, as given (lists stay lists), so replay and
analysis never have to parse prompts back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from events.agents import agent_config_for
from events.core import AgentCallRequested
from events.enums import AgentType
from handlers.prompts.registry import DEFAULT_REGISTRY, PromptRegistry


def _json_safe(value: Any) -> Any:
    # Event payloads are JSON; tuples become lists and pydantic values their dumps, so the
    # request compares equal after a round trip through the store.
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    return value


def build_request(
    agent_type: AgentType | str,
    variables: Mapping[str, Any],
    *,
    effect_id: str,
    variant: str | None = None,
    session_key: str | None = None,
    system_prompt: str | None = None,
    registry: PromptRegistry = DEFAULT_REGISTRY,
) -> AgentCallRequested:
    """Render the role's prompt with ``variables`` and wrap it as a request.

    ``KeyError`` if a variable the template needs is missing. ``output_schema`` is the bare
    JSON schema of the role's structured output (None for free-text roles); the backend wraps
    it in the SDK's ``{"type": "json_schema", ...}`` envelope. ``system_prompt`` None lets the
    backend use the shared persona prompt (REQ-OR-007) built from the run's task and hardware.
    """
    template = registry.get(agent_type, variant)
    prompt = template.render(**dict(variables))
    config = agent_config_for(template.agent_type, template.variant)
    return AgentCallRequested(
        effect_id=effect_id,
        agent_type=template.agent_type.value,
        variant=template.variant,
        prompt=prompt,
        system_prompt=system_prompt,
        variables=_json_safe(dict(variables)),
        output_schema=config.json_schema(),
        session_key=session_key,
    )
