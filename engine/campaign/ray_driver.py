"""The Ray side of a campaign: one task drives one run to its end from the shared store.

Nothing a run needs travels with the task but its id and the database address: the run's log
says what it is (task, strategy, backend, config, its directory), and the driver resumes it
exactly where the log ends — on whichever node Ray picked, after whatever died before.
"""

from __future__ import annotations

import os
import socket
import time
from typing import Any


def drive_run(db: str, run_id: str, lease_wait_s: float) -> dict[str, Any]:
    """Drive ``run_id`` to its end; the run's outcome and where it ran.

    A run whose previous driver died on another host keeps its lease until the lease expires:
    wait for that (up to ``lease_wait_s``) rather than fail the attempt."""
    from engine.run import lifecycle as runs
    from engine.run.errors import RunFinished
    from replay.state import fold
    from store.base import LeaseHeld

    store = runs.open_store(runs.db_path(db), create=False)
    try:
        check_run_dir(store, run_id)
        give_up = time.monotonic() + lease_wait_s
        while True:
            try:
                state = runs.drive(store, run_id, handle_signals=False)
                break
            except RunFinished:
                state = fold(store.read(run_id))
                break
            except LeaseHeld:
                if time.monotonic() > give_up:
                    raise
                time.sleep(1.0)
        return {"status": state.status, "error": state.error or "", "where": where()}
    finally:
        store.close()


class RunDirUnreachable(RuntimeError):
    pass


def check_run_dir(store: Any, run_id: str) -> None:
    """The run's directory (task copy, evaluations, submission) must be here: it is kept, not
    re-created, so every node must mount ``$ENGINE_RUNS_DIR`` at the same path."""
    reader = store.read(run_id)
    try:
        first = next(reader, None)
    finally:
        reader.close()
    run_dir = (first.payload.get("run_dir") if first is not None else None) or ""
    if not run_dir or not os.path.isdir(run_dir) or not os.access(run_dir, os.W_OK):
        raise RunDirUnreachable(f"run directory {run_dir or '(none recorded)'} is not writable on host "
                                f"{socket.gethostname()}: ENGINE_RUNS_DIR must be a directory every node mounts "
                                "at the same path")


def where() -> str:
    """This worker's node, host and process, for the campaign's record."""
    try:
        import ray

        node = ray.get_runtime_context().get_node_id()[:12]
    except Exception:  # outside Ray (tests of the function itself)
        node = "-"
    return f"node {node} host {socket.gethostname()} pid {os.getpid()}"
