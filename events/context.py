"""What a run is, read once from its ``RunStarted``: the value the handlers and the executors share.

``RunStarted`` carries the settings as plain data (``config`` is a dict, so a log stays readable
whatever ``PipelineConfig`` became); every consumer used to validate it again on each access — the
handlers on every ``wf.config``, the executors on every agent call and evaluation. A
``RunContext`` is built once (the runtime builds it when it is fed ``RunStarted``, the driver's
executors when they first need it) and is immutable, like the event it comes from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from events.config import PipelineConfig
from events.core import RunStarted
from events.values import TaskDescription


@dataclass(frozen=True)
class RunContext:
    strategy: str
    backend: str
    seed: int
    config: PipelineConfig
    task: TaskDescription
    task_dir: Path
    run_dir: Path
    deterministic_order: bool = True
    params: Mapping[str, Any] = field(default_factory=dict)
    run_id: str = ""

    @classmethod
    def of(cls, started: RunStarted, run_id: str = "") -> RunContext:
        return cls(strategy=started.strategy, backend=started.backend, seed=started.seed,
                   config=PipelineConfig.model_validate(started.config), task=started.task,
                   task_dir=Path(started.task_dir), run_dir=Path(started.run_dir),
                   deterministic_order=started.deterministic_order, params=dict(started.params), run_id=run_id)


__all__ = ["RunContext"]
