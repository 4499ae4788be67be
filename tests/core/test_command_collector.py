"""The garbage collector in an ``engine`` process (engine/run/collector.py): what the command
loaded is frozen and the collector is on again once it runs; a run freezes again before it drives;
a program that imports the engine keeps its collector as it set it; the entry point turns it back
on whoever calls it."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Run as the console script runs: the installed entry point in __main__, then the command. At exit,
# the collector's state and how many objects were frozen; a drive prints it as it starts as well.
PROBE = """
import atexit, gc, json, sys
seen = []
freeze = gc.freeze
def watched():  # the entry point and the run call gc.freeze through the module: both are seen
    freeze()
    seen.append(gc.get_freeze_count())
gc.freeze = watched
from {module} import {name} as main
atexit.register(lambda: print(json.dumps({{"enabled": gc.isenabled(), "frozen": gc.get_freeze_count(),
                                           "drive_frozen": seen}})))
sys.argv = ["engine", *sys.argv[1:]]
main()
"""


def run_as_command(tmp_path: Path, *args: str) -> dict:
    module, _, name = entry_points(group="console_scripts")["engine"].value.partition(":")
    done = subprocess.run([sys.executable, "-c", PROBE.format(module=module, name=name), *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
                          env={**os.environ, "PYTHONPATH": str(REPO), "ENGINE_LOG_LEVEL": "WARNING"})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_command_runs_with_what_it_loaded_frozen_and_the_collector_on(tmp_path):
    seen = run_as_command(tmp_path, "tasks", "list")
    assert seen["enabled"] is True
    assert seen["frozen"] > 20_000  # the command's modules: typer, rich, pydantic's event models


def test_a_run_freezes_its_strategy_and_backend_before_it_drives(tmp_path):
    seen = run_as_command(tmp_path, "start", "--task", "iris", "--agent", "builtin", "--preset", "quick",
                          "--db", str(tmp_path / "e.db"), "--run-id", "r", "--json")
    assert seen["enabled"] is True
    assert len(seen["drive_frozen"]) == 3  # the entry point's, the drive's, then the command's end
    entry, drive, _ = seen["drive_frozen"]
    assert drive > entry  # the handlers and the builtin agent were loaded between the two


def test_a_program_that_imports_the_engine_keeps_its_collector():
    from engine.run import collector

    frozen = gc.get_freeze_count()
    collector.run_loaded()
    assert gc.get_freeze_count() == frozen
    assert gc.isenabled()


def test_only_a_process_s_first_run_freezes(monkeypatch):
    from engine.run import collector

    freezes: list[int] = []
    monkeypatch.setattr(collector, "_run_frozen", False)
    monkeypatch.setattr(collector, "started_as_command", lambda: True)
    monkeypatch.setattr(collector.gc, "freeze", lambda: freezes.append(1))
    for _ in range(3):
        collector.run_loaded()
    assert freezes == [1]


def test_the_entry_point_turns_the_collector_on_again_whoever_calls_it(tmp_path):
    """Called from a program's own code (its ``__main__`` holds no ``main``), the collector is on."""
    code = ("import atexit, gc, sys\n"
            "from engine.cli.entry import main as run\n"
            "atexit.register(lambda: print(gc.isenabled()))\n"
            "sys.argv = ['engine', 'tasks', 'list']\n"
            "run()\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "True"
