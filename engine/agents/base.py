"""What every agent backend is: something that answers an ``AgentCallRequested``.

A backend never decides anything about the run; it only turns a request into a result
(``AgentCallCompleted``) or an honest failure (``AgentCallFailed``). The engine stamps the
result's ``elapsed_s``; backends leave it at 0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from events.core import AgentCallCompleted, AgentCallFailed, AgentCallRequested
from events.domain import PipelineConfig, TaskDescription


@dataclass(frozen=True)
class AgentContext:
    """Where and for what an agent call runs."""

    run_id: str
    run_dir: Path          # <runs>/<run-id>/
    work_dir: Path         # the call's own working directory (cwd), created by the engine
    task: TaskDescription
    task_dir: Path         # the task's public data directory (what scripts see as ./input)
    config: PipelineConfig
    seed: int
    gpu_info: dict[str, Any] = field(default_factory=dict)
    budget_usd: float | None = None      # this call's share of the run budget (None: no budget)
    time_limit_s: float | None = None    # wall-clock seconds the call may take (its phase deadline)
    # Called when the engine cancels the call: (cost if the CLI reported one, tokens streamed).
    on_abandoned: Callable[[float | None, dict[str, int]], None] | None = None


AgentResult = AgentCallCompleted | AgentCallFailed


@runtime_checkable
class AgentBackend(Protocol):
    name: str

    async def call(self, request: AgentCallRequested, ctx: AgentContext) -> AgentResult:
        """Answer one agent call. Must not raise for model-side problems: return AgentCallFailed."""
        ...
