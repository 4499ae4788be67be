"""Replaying recorded logs through the current handlers (``engine replay``, the regression suite)."""

from __future__ import annotations

from pathlib import Path

from engine.run.errors import EngineError
from engine.run.strategies import load_strategy
from events.base import Envelope
from handlers.runtime import Runtime
from replay.verify import Divergence, verify
from store.base import CorruptLog
from store.jsonl import completeness_problem, missing_artifact, parse_export, resolved_envelopes


def read_export(path: Path) -> list[Envelope]:
    """The events of an export with its artifacts resolved, its hash chain unchecked (a replay
    names what differs). An end line that disagrees with the events, or an event referring to an
    artifact the file lacks, is refused; a file without an end line (written before export
    format 1, or cut short) is replayed as far as it goes."""
    if not path.is_file():
        raise EngineError(f"{path}: no such file")
    with open(path, encoding="utf-8") as fh:
        try:
            envelopes, end, artifacts = parse_export(fh, label=f"{path} line")
        except CorruptLog as exc:
            raise EngineError(str(exc)) from None
    if envelopes and end is not None:
        problem = completeness_problem(envelopes, end)
        if problem:
            raise EngineError(f"{path}: {problem}")
    missing = missing_artifact(envelopes, artifacts)
    if missing:
        raise EngineError(f"{path}: {missing}")
    return resolved_envelopes(envelopes, artifacts)


def replay_log(envelopes: list[Envelope]) -> tuple[Divergence | None, int]:
    """Replay a whole log with the strategy it names; return the first divergence and the count."""
    if not envelopes or envelopes[0].type != "RunStarted":
        raise EngineError("the log does not begin with RunStarted; it is not a complete run")
    main = load_strategy(envelopes[0].payload["strategy"])
    divergence, _ = verify(envelopes, lambda: Runtime(main))
    return divergence, len(envelopes)
