"""Replaying recorded logs through the current handlers (``engine replay``, the regression suite)."""

from __future__ import annotations

import json
from pathlib import Path

from engine.run.driver import EngineError
from engine.run.strategies import load_strategy
from events.base import Envelope
from handlers.runtime import Runtime
from replay.verify import Divergence, verify


def read_export(path: Path) -> list[Envelope]:
    if not path.is_file():
        raise EngineError(f"{path}: no such file")
    envelopes = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if line.strip():
                try:
                    envelopes.append(Envelope.model_validate(json.loads(line)))
                except (ValueError, TypeError) as exc:
                    raise EngineError(f"{path}:{lineno}: not an exported event ({str(exc).splitlines()[0]})") from None
    return envelopes


def replay_log(envelopes: list[Envelope]) -> tuple[Divergence | None, int]:
    """Replay a whole log with the strategy it names; return the first divergence and the count."""
    if not envelopes or envelopes[0].type != "RunStarted":
        raise EngineError("the log does not begin with RunStarted; it is not a complete run")
    main = load_strategy(envelopes[0].payload["strategy"])
    divergence, _ = verify(envelopes, lambda: Runtime(main))
    return divergence, len(envelopes)
