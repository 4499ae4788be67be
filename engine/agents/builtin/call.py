"""What every role handler receives and returns, and the honest way to refuse."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from engine.agents.base import AgentContext
from engine.agents.builtin.spec import parse_spec, task_kind_and_metric
from engine.agents.builtin.target_classes import class_count, target_columns
from events.score import Score


class CannotAnswer(Exception):
    """The builtin agent cannot do this honestly; becomes an ``AgentCallFailed``."""


@dataclass(frozen=True)
class Reply:
    text: str
    code: str | None = None
    structured: dict[str, Any] | None = None


@dataclass
class Call:
    """One agent call as a role sees it: the variables plus what the run knows."""

    agent_type: str
    variant: str | None
    variables: dict[str, Any]
    ctx: AgentContext
    effect_id: str
    kind: str = field(init=False)
    metric: str = field(init=False)

    def __post_init__(self) -> None:
        self.kind, self.metric = task_kind_and_metric(self.ctx.task)

    @property
    def score_rule(self) -> Score:
        """How this task's scores compare (its metric direction)."""
        return Score.of(self.ctx.task.metric_direction)

    @property
    def classes(self) -> int | None:
        """The target's class count on classification, read off the task's files (None when they
        do not say, and on regression): it orders which models are drafted and blended first."""
        return class_count(self.ctx.task_dir) if self.kind == "classification" else None

    @property
    def targets(self) -> tuple[str, ...]:
        """The task's target columns, when the sample submission asks for several of them (else
        empty): each solution then predicts every one (``script_blocks/multi_target_*.py``)."""
        return target_columns(self.ctx.task_dir)

    def rng(self, salt: str = "") -> random.Random:
        """Randomness from (run seed, effect id) only: same call, same answer, any order."""
        return random.Random(f"{self.ctx.seed}|{self.effect_id}|{salt}")

    def var(self, *names: str, default: Any = None) -> Any:
        """The first of ``names`` present in the variables (names differ across prompt sets)."""
        for name in names:
            if name in self.variables and self.variables[name] is not None:
                return self.variables[name]
        return default

    def text_var(self, *names: str) -> str:
        value = self.var(*names, default="")
        if not isinstance(value, str):
            value = str(value)
        return value

    def list_var(self, *names: str) -> list[Any]:
        value = self.var(*names, default=[])
        if isinstance(value, (list, tuple)):
            return list(value)
        if isinstance(value, str):
            return [value] if value.strip() else []
        return [value]


def code_reply(code: str, note: str = "") -> Reply:
    code = code.strip("\n") + "\n"
    text = (note.strip() + "\n\n" if note else "") + f"```python\n{code}```"
    return Reply(text=text, code=code)


def block_reply(block: str, note: str = "") -> Reply:
    """A replacement block: no trailing newline, so it splices exactly where the old one was."""
    block = block.strip("\n")
    text = (note.strip() + "\n\n" if note else "") + f"```python\n{block}\n```"
    return Reply(text=text, code=block)


def require_spec(script: str, role: str) -> dict[str, Any]:
    spec = parse_spec(script or "")
    if spec is None:
        raise CannotAnswer(
            f"builtin {role}: the script carries no builtin spec (or its seven gene sections are "
            "incomplete), so it was not written by this agent and cannot be regenerated safely")
    return spec


def as_float(value: Any) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return None if out != out else out
