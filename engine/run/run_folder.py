"""Where a run's working folder may go: never overlapping the task's own folder."""

from __future__ import annotations

import shlex
from pathlib import Path

from engine.run.errors import EngineError


def refuse_run_dir_in_task(run_dir: Path, task_spec: str) -> None:
    """A run's working files must not share the task's folder: the agents' inputs are staged
    from the task folder into the run's, and a run folder inside the task (or the task inside the
    run's) would copy itself without end and mix the run's files into the task's data."""
    task_dir = Path(task_spec).expanduser()
    if not task_dir.is_dir():
        return  # a bundled task's name: prepared inside the run's folder
    run, data = run_dir.resolve(), task_dir.resolve()
    if run == data or data in run.parents or run in data.parents:
        raise EngineError(
            f"the run's folder {shlex.quote(str(run))} would overlap the task folder {shlex.quote(str(data))} "
            "(run folders go next to the --db file, named by the run id); give another --run-id, or put the "
            "database in another folder (--db)")
