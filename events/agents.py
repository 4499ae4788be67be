"""Agent definitions (REQ-DM-036..038, REQ-DM-040, REQ-OR-006/008): who the 14 roles are.

Pure pydantic: the Claude Agent SDK is referenced by *string* only (REQ-DM-050). The
``to_agent_definition()`` dict has exactly the keyword names of the SDK's ``AgentDefinition``
dataclass, so the engine can build one with ``AgentDefinition(**d)``.

``output_schema`` is stored as the pydantic model *class* (REQ-DM-036). A class is not JSON,
so when an ``AgentConfig`` is dumped (``model_dump(mode="json")``) the field serialises to
``{"name": <class name>, "schema": <its JSON schema>}``: enough to audit and to send to the
SDK, and stable across runs because the schema is derived from the class.

Tool sets follow REQ-OR-008 (the issue picks it over the phase specs' narrower lists). Two
roles change shape by *variant* (one ``AgentType``, several prompts): leakage "correction"
returns code, not JSON, and test "contamination" returns a ``DataContaminationResult``;
``agent_config_for(agent_type, variant)`` applies those overrides.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_serializer

from events.agent_outputs import (
    DataContaminationResult,
    ExtractorOutput,
    LeakageDetectionOutput,
    RetrieverOutput,
    output_format_for,
)
from events.enums import AgentType

ModelAlias = Literal["sonnet", "opus", "haiku", "inherit"]

#: Tools for agents that write or run code (REQ-OR-008).
CODE_TOOLS: tuple[str, ...] = ("Bash", "Edit", "Write", "Read")
#: Tools for agents that only read and think (REQ-OR-008).
READ_TOOLS: tuple[str, ...] = ("Read",)
WEB_TOOLS: tuple[str, ...] = ("WebSearch", "WebFetch")


class AgentConfig(BaseModel):
    """REQ-DM-036: one role's SDK configuration."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    agent_type: AgentType
    description: str
    system_prompt: str | None = None
    tools: list[str] | None = None
    model: ModelAlias | None = None
    output_schema: type[BaseModel] | None = None
    max_turns: int | None = None

    @field_serializer("output_schema")
    def _schema_as_json(self, value: type[BaseModel] | None) -> dict[str, Any] | None:
        if value is None:
            return None
        return {"name": value.__name__, "schema": value.model_json_schema()}

    def to_agent_definition(self) -> dict[str, Any]:
        """REQ-DM-037: a value usable in ``ClaudeAgentOptions.agents`` (as ``AgentDefinition(**d)``).

        ``prompt`` must never be empty for the CLI, so a config without its own system prompt
        falls back to its description (the per-call prompt is sent as the user message anyway).
        """
        definition: dict[str, Any] = {
            "description": self.description,
            "prompt": self.system_prompt or self.description,
            "tools": list(self.tools) if self.tools is not None else None,
            "model": self.model,
        }
        if self.max_turns is not None:
            definition["maxTurns"] = self.max_turns
        return definition

    def to_output_format(self) -> dict[str, Any] | None:
        """REQ-DM-038: the SDK ``output_format`` envelope, or None for free-text roles."""
        if self.output_schema is None:
            return None
        return output_format_for(self.output_schema)

    def json_schema(self) -> dict[str, Any] | None:
        """The bare JSON schema (what ``AgentCallRequested.output_schema`` carries)."""
        return None if self.output_schema is None else _json_schema_of(self.output_schema)


_SCHEMA_CACHE: dict[type[BaseModel], dict[str, Any]] = {}


def _json_schema_of(model: type[BaseModel]) -> dict[str, Any]:
    # Generating a pydantic JSON schema costs milliseconds and every agent request needs one
    # (half of a replay's time went here); the schema of a class never changes, so build it once
    # and hand out copies (callers may keep or change theirs).
    if model not in _SCHEMA_CACHE:
        _SCHEMA_CACHE[model] = model.model_json_schema()
    return _copy_json(_SCHEMA_CACHE[model])


def _copy_json(value: Any) -> Any:
    """A deep copy of JSON data (dicts, lists, scalars): ``copy.deepcopy``'s memo and dispatch
    cost a resume a tenth of its handler replay, one schema per agent request."""
    if isinstance(value, dict):
        return {k: _copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_json(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_copy_json(v) for v in value)
    return value


def _role(text: str) -> str:
    # Each role prompt is short on purpose: the task-specific instructions travel in the
    # rendered user prompt (recorded in the log); this only frames who is speaking.
    return (
        f"You are the member of an automated machine-learning engineering team who {text}. "
        "Follow the instructions of each request exactly and answer in the format it asks for."
    )


_DEFAULTS: tuple[tuple[AgentType, str, tuple[str, ...], type[BaseModel] | None], ...] = (
    (AgentType.retriever, "finds strong, recent model families for a task, with example code", WEB_TOOLS, RetrieverOutput),
    (AgentType.init, "writes a simple first solution script around one given model", CODE_TOOLS, None),
    (AgentType.merger, "merges a reference solution into a base solution as a simple ensemble", CODE_TOOLS, None),
    (AgentType.ablation, "writes ablation-study code to find the most impactful components", CODE_TOOLS, None),
    (AgentType.summarize, "condenses raw ablation output into a short summary", READ_TOOLS, None),
    (AgentType.extractor, "picks the most impactful code block and proposes a plan for it", READ_TOOLS, ExtractorOutput),
    (AgentType.coder, "applies a refinement plan to one code block", CODE_TOOLS, None),
    (AgentType.planner, "proposes the next refinement strategy from past attempts", READ_TOOLS, None),
    (AgentType.ens_planner, "proposes how to ensemble several solutions", READ_TOOLS, None),
    (AgentType.ensembler, "implements an ensemble plan as one full solution script", CODE_TOOLS, None),
    (AgentType.debugger, "fixes Python execution errors in solution scripts", CODE_TOOLS, None),
    (AgentType.leakage, "detects data leakage in preprocessing code", READ_TOOLS, LeakageDetectionOutput),
    (AgentType.data, "checks that every provided data source is used", READ_TOOLS, None),
    (AgentType.test, "turns a validation solution into a test-submission script", CODE_TOOLS, None),
)


def build_default_agent_configs() -> dict[AgentType, AgentConfig]:
    """REQ-DM-040: exactly one config per ``AgentType`` (14), ``model=None`` (inherit)."""
    configs = {
        agent_type: AgentConfig(
            agent_type=agent_type,
            description=description,
            system_prompt=_role(description),
            tools=list(tools),
            model=None,
            output_schema=schema,
        )
        for agent_type, description, tools, schema in _DEFAULTS
    }
    assert len(configs) == len(AgentType)  # a new AgentType must get a definition here
    return configs


def _default_config(agent_type: AgentType) -> AgentConfig:
    """``build_default_agent_configs()[agent_type]``, built alone: every agent request asks for one
    role's config, and building all fourteen each time was a tenth of a resume's handler replay."""
    for kind, description, tools, schema in _DEFAULTS:
        if kind == agent_type:
            return AgentConfig(agent_type=kind, description=description, system_prompt=_role(description),
                               tools=list(tools), model=None, output_schema=schema)
    raise KeyError(agent_type)


# Variant overrides: (agent type, variant) -> fields that differ from the default config.
_VARIANT_OVERRIDES: dict[tuple[AgentType, str], dict[str, Any]] = {
    (AgentType.leakage, "correction"): {
        "description": "rewrites a leaking preprocessing block so only training data shapes it",
        "output_schema": None,
    },
    # FN-026 gives this mode no tools at all; we keep it read-only instead of None because
    # None means "inherit every tool" in the SDK, the opposite of what a judge needs.
    (AgentType.test, "contamination"): {
        "description": "checks whether a solution copies a public discussion",
        "output_schema": DataContaminationResult,
        "tools": list(READ_TOOLS),
    },
    (AgentType.test, "subsampling_extract"): {
        "description": "finds the block that subsamples the training data",
        "tools": list(READ_TOOLS),
    },
    (AgentType.test, "subsampling_remove"): {
        "description": "removes training-data subsampling from a code block",
        "tools": list(READ_TOOLS),
    },
}

#: Other spellings of variant names seen in the specs (REQ-FN-026 text uses both).
VARIANT_ALIASES: dict[str, str] = {"contamination_check": "contamination", "detect": "detection", "correct": "correction"}


def agent_config_for(
    agent_type: AgentType | str,
    variant: str | None = None,
    configs: dict[AgentType, AgentConfig] | None = None,
) -> AgentConfig:
    """The config for one call: the role's default plus its variant's overrides, if any."""
    agent_type = AgentType(agent_type)
    base = configs[agent_type] if configs else _default_config(agent_type)
    if variant is None:
        return base
    overrides = _VARIANT_OVERRIDES.get((agent_type, VARIANT_ALIASES.get(variant, variant)))
    if not overrides:
        return base
    data = {**base.model_dump(exclude={"output_schema"}), "output_schema": base.output_schema, **overrides}
    if "description" in overrides:
        data["system_prompt"] = _role(overrides["description"])
    return AgentConfig(**data)
