"""REQ-DM-032..035: every prompt template, keyed by agent type and variant.

``len(registry)`` counts agent types (14, REQ-DM-033) while the registry holds 18 templates:
leakage has "detection" (default) and "correction"; test has its default (Fig 25),
"subsampling_extract", "subsampling_remove" and "contamination".
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from events.agents import VARIANT_ALIASES
from events.enums import AgentType
from handlers.prompts import text_final, text_phase1, text_phase2, text_phase3, text_safety
from handlers.prompts.template import PromptTemplate

#: The variant ``get(agent_type)`` returns when none is named (spec leaves it open).
DEFAULT_VARIANTS: dict[AgentType, str] = {AgentType.leakage: "detection"}

ALL_TEMPLATES: tuple[PromptTemplate, ...] = (
    *text_phase1.TEMPLATES,
    *text_phase2.TEMPLATES,
    *text_phase3.TEMPLATES,
    *text_safety.TEMPLATES,
    *text_final.TEMPLATES,
)


class PromptRegistry:
    def __init__(self, templates: Iterable[PromptTemplate] = ALL_TEMPLATES) -> None:
        self._by_key: dict[tuple[AgentType, str | None], PromptTemplate] = {}
        for template in templates:
            key = (template.agent_type, template.variant)
            if key in self._by_key:
                raise ValueError(f"duplicate prompt template for {key}")
            self._by_key[key] = template

    def get(self, agent_type: AgentType | str, variant: str | None = None) -> PromptTemplate:
        """The template for a role (and variant); ``KeyError`` when there is none."""
        try:
            agent = AgentType(agent_type)
        except ValueError:
            raise KeyError(f"unknown agent type {agent_type!r}") from None
        if variant in (None, "default"):
            variant = DEFAULT_VARIANTS.get(agent)
        else:
            variant = VARIANT_ALIASES.get(variant, variant)
        try:
            return self._by_key[(agent, variant)]
        except KeyError:
            known = sorted(str(v) for a, v in self._by_key if a == agent)
            raise KeyError(f"no prompt for {agent.value!r} variant {variant!r}; known variants: {known}") from None

    def variants(self, agent_type: AgentType | str) -> list[str | None]:
        agent = AgentType(agent_type)
        return [v for a, v in self._by_key if a == agent]

    def templates(self) -> list[PromptTemplate]:
        return list(self._by_key.values())

    def __len__(self) -> int:
        return len({agent for agent, _ in self._by_key})

    def __iter__(self) -> Iterator[AgentType]:
        return iter(dict.fromkeys(agent for agent, _ in self._by_key))

    def __contains__(self, agent_type: object) -> bool:
        return any(agent == agent_type for agent, _ in self._by_key)


#: The shared, immutable default registry (built from constants; no I/O).
DEFAULT_REGISTRY = PromptRegistry()
