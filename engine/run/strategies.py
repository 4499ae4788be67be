"""Which handler set drives a run: the built-in strategies by name, or any ``module:attr``."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Coroutine
from typing import Any

from events.module_aliases import current_module

BUILTIN = {
    "mle-star": "handlers.mlestar.pipeline:main",
    "evolve": "handlers.evolution:main",
    "best-candidate": "handlers.mlestar.baselines:best_candidate",
}


class StrategyError(ValueError):
    pass


def load_strategy(name: str) -> Callable[[Any], Coroutine[Any, Any, Any]]:
    """Return the strategy's workflow entry point ``async def main(wf)``."""
    target = BUILTIN.get(name, name)
    if ":" not in target:
        raise StrategyError(f"unknown strategy {name!r}; choose one of {', '.join(BUILTIN)} (or module:function)")
    module_name, attr = target.split(":", 1)
    try:
        module = importlib.import_module(current_module(module_name))  # a name recorded before a move
        return getattr(module, attr)
    except (ImportError, AttributeError) as exc:
        raise StrategyError(f"strategy {name!r} cannot be loaded: {exc}") from None
