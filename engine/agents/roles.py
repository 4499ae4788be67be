"""What one agent call may do, by the role it names: tools, turn limit, output model.

Two strategies name their roles differently. MLE-STAR's are the fourteen ``AgentType`` members,
configured in ``events.agents`` (REQ-OR-008, with per-variant overrides). The evolutionary
search's (``handlers/evolution/prompts.py``) are plain strings the recorded runs already carry,
so they stay outside the enum and get their settings here: the roles that write or fix a
program get the coding tools, the reviewer reads only (its JSON answer is fixed by the request's
schema), the profile rewriter works on the text it is given and needs no tool.

Every model backend asks ``role_settings`` and nothing else, so a role added to either strategy
is given its tools in one place and works on every backend.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from events.agents import CODE_TOOLS, READ_TOOLS, AgentConfig, agent_config_for
from events.domain import AgentType


@dataclass(frozen=True)
class RoleSettings:
    """The part of a role a backend needs for one call."""

    tools: tuple[str, ...]
    #: None: no limit of the role's own (the call's budget and time limit still bound it).
    max_turns: int | None = None
    #: A pydantic model the structured answer must also satisfy (beyond the request's JSON schema).
    output_model: type[BaseModel] | None = None


#: The evolution strategy's roles, by the ``agent_type`` its requests carry.
EVOLUTION_ROLES: dict[str, RoleSettings] = {
    "draft": RoleSettings(CODE_TOOLS),
    "merge": RoleSettings(CODE_TOOLS),
    "mutate": RoleSettings(CODE_TOOLS),
    "evo_debug": RoleSettings(CODE_TOOLS),
    "review": RoleSettings(READ_TOOLS),
    "profile_evolver": RoleSettings(()),
}


class UnknownRole(ValueError):
    """A request names a role no strategy defines (a bug in a handler, not a model failure)."""


def role_settings(agent_type: AgentType | str, variant: str | None = None,
                  configs: dict[AgentType, AgentConfig] | None = None) -> RoleSettings:
    """The settings of one call's role; ``configs`` replaces MLE-STAR's default role configs."""
    name = str(getattr(agent_type, "value", agent_type))
    if name in AgentType._value2member_map_:
        config = agent_config_for(name, variant, configs)
        return RoleSettings(tuple(config.tools or ()), config.max_turns, config.output_schema)
    if name in EVOLUTION_ROLES:
        return EVOLUTION_ROLES[name]
    known = sorted([*AgentType._value2member_map_, *EVOLUTION_ROLES])
    raise UnknownRole(f"no agent role {name!r} (known roles: {', '.join(known)})")
