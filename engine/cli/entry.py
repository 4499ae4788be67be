"""The ``engine`` command's entry point (the ``engine`` script, ``python -m engine.cli``).

It loads the command with the garbage collector kept off what is loaded (engine/run/collector.py),
then runs it."""

from __future__ import annotations

from engine.run import collector


def main() -> None:
    with collector.loading_command():
        from engine.cli.main import main as command
    command()
