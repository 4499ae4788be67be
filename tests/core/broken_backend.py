"""A user's own agent backend (``--agent module:Class``) with a bug: it fails as it is made."""

from __future__ import annotations


class BrokenBackend:
    name = "broken"

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug in the user's backend")
