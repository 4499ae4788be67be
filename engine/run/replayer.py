"""Replaying recorded logs through the current handlers (``engine replay``, the regression suite)."""

from __future__ import annotations

from pathlib import Path

from engine.run.driver import EngineError
from engine.run.strategies import load_strategy
from events.base import Envelope
from handlers.runtime import Runtime
from replay.verify import Divergence, verify
from store.base import CorruptLog
from store.jsonl import completeness_problem, parse_lines


def read_export(path: Path) -> list[Envelope]:
    """The events of an export, its hash chain unchecked (a replay names what differs). An end
    line that disagrees with the events is refused; a file without one (written before export
    format 1, or cut short) is replayed as far as it goes."""
    if not path.is_file():
        raise EngineError(f"{path}: no such file")
    with open(path, encoding="utf-8") as fh:
        try:
            envelopes, end = parse_lines(fh, label=f"{path} line")
        except CorruptLog as exc:
            raise EngineError(str(exc)) from None
    if envelopes and end is not None:
        problem = completeness_problem(envelopes, end)
        if problem:
            raise EngineError(f"{path}: {problem}")
    return envelopes


def replay_log(envelopes: list[Envelope]) -> tuple[Divergence | None, int]:
    """Replay a whole log with the strategy it names; return the first divergence and the count."""
    if not envelopes or envelopes[0].type != "RunStarted":
        raise EngineError("the log does not begin with RunStarted; it is not a complete run")
    main = load_strategy(envelopes[0].payload["strategy"])
    divergence, _ = verify(envelopes, lambda: Runtime(main))
    return divergence, len(envelopes)
