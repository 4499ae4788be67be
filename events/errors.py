"""The pipeline's own exceptions: raised by decision code, recorded as ``RunFailed``."""

from __future__ import annotations

from typing import Any


class PipelineError(Exception):
    """REQ-OR-042: the pipeline could not produce anything usable; ``diagnostics`` says why."""

    def __init__(self, message: str, diagnostics: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.diagnostics = diagnostics or {}


class PipelineTimeoutError(Exception):
    """REQ-OR-030: Phase 1 did not finish in time; ``diagnostics`` says how far the run got."""

    def __init__(self, message: str, diagnostics: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.diagnostics = diagnostics or {}


__all__ = ["PipelineError", "PipelineTimeoutError"]
