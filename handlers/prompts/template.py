"""REQ-DM-030/031: a prompt template and its loud, brace-safe rendering.

Why not ``str.format``: the prompts contain literal braces (``{final_validation_score}`` inside
an instruction, JSON examples such as ``{"model_name": ...}``) and some variable names contain
spaces (``{task description}``). Rendering therefore replaces ONLY the declared ``{name}``
placeholders, in a single pass (so a value that itself contains ``{plan}`` is never expanded
again), and leaves every other brace alone.

List-valued inputs (plan histories, previous ablations, solutions) are turned into text by a
named *derivation* (see ``formatting.DERIVATIONS``), so the template stays a plain string and
the structured values can be recorded as they are in ``AgentCallRequested.variables``.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from events.enums import AgentType
from handlers.prompts.formatting import DERIVATIONS, render_value


class PromptTemplate(BaseModel):
    model_config = ConfigDict(frozen=True)

    agent_type: AgentType
    figure_ref: str
    template: str
    variables: list[str]
    variant: str | None = None
    derive: str | None = None  # name of a DERIVATIONS entry producing extra placeholder values

    @model_validator(mode="after")
    def _placeholders_declared(self) -> PromptTemplate:
        # A declared variable that appears nowhere is almost always a typo in the template.
        if self.derive is not None and self.derive not in DERIVATIONS:
            raise ValueError(f"unknown derivation {self.derive!r}")
        consumed = set(DERIVATIONS[self.derive].consumes) if self.derive else set()
        for name in self.variables:
            if "{" + name + "}" not in self.template and name not in consumed:
                raise ValueError(f"variable {name!r} does not occur in the {self.figure_ref} template")
        return self

    @property
    def placeholders(self) -> list[str]:
        produced = list(DERIVATIONS[self.derive].produces) if self.derive else []
        return list(dict.fromkeys([*self.variables, *produced]))

    def render(self, **kwargs: Any) -> str:
        """Substitute the placeholders; a missing variable raises ``KeyError`` naming it."""
        missing = [name for name in self.variables if name not in kwargs]
        if missing:
            raise KeyError(
                f"{self.agent_type.value}{'/' + self.variant if self.variant else ''} prompt needs "
                f"variable {missing[0]!r} (missing: {', '.join(repr(m) for m in missing)})"
            )
        values = {name: kwargs[name] for name in self.variables}
        if self.derive is not None:
            values.update(DERIVATIONS[self.derive].fn(values))
        text_values = {name: render_value(value) for name, value in values.items()}
        names = sorted(text_values, key=len, reverse=True)  # longest first: no prefix shadowing
        pattern = re.compile(r"\{(" + "|".join(re.escape(n) for n in names) + r")\}")
        return pattern.sub(lambda m: text_values[m.group(1)], self.template)
