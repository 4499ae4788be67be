"""Errors raised while *choosing or building* a backend (never during a call: calls fail as
``AgentCallFailed`` events)."""

from __future__ import annotations


class BackendUnavailable(RuntimeError):
    """The requested backend cannot run here (no credentials, missing module, ...).

    Raised before any event is written; the CLI turns it into exit code 2.
    """
