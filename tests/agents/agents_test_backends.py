"""Backends for the selection tests, loaded through ``package.module:Attr`` paths."""

from __future__ import annotations

from events.core import AgentCallCompleted


class EchoBackend:
    name = "echo"

    def __init__(self, config=None) -> None:
        self.config = config

    async def call(self, request, ctx):
        return AgentCallCompleted(effect_id=request.effect_id, text=request.prompt)


def make_echo(**kwargs):
    backend = EchoBackend(kwargs.get("config"))
    backend.kwargs = kwargs
    return backend


class NotABackend:
    pass


class SourceBackend:
    name = "source"

    def __init__(self, source, *, config=None) -> None:
        self.source, self.config = source, config

    async def call(self, request, ctx):  # pragma: no cover - never called
        raise NotImplementedError
