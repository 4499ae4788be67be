"""The builtin offline agent: deterministic, real scikit-learn work for every agent role."""

from engine.agents.builtin.backend import BuiltinBackend

__all__ = ["BuiltinBackend"]
