"""The one debug loop both strategies run: while the latest version failed, ask the debugger for
a fix, leakage-check it when the strategy checks fixes, and run it.

The rules of when the loop stops live here and nowhere else:

* at most ``attempts`` debug rounds;
* no round starts once the unit's soft end has passed (``Deadline.passed``);
* a round ends the loop when the debugger has no usable fix;
* with ``late_fixes_run`` off, a fix that arrives after the soft end (or whose leakage check ends
  after it) stays on record but never runs: its evaluation would spend time the unit no longer has;
* with a ``leakage_check``, every fix passes it before it runs, so every evaluated script of the
  strategy passed the leakage check first.

What a version is, how a fix is asked for and recorded, and how one is run are the strategy's
(``DebugSteps``): MLE-STAR's sub-flow in ``handlers.evaluation``, the evolutionary search's
chained debugger in ``handlers.evolution.develop``. The evolutionary search runs late fixes and
checks no leakage: its recorded runs were made that way, and a replay must ask for what they asked.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from handlers.deadline import Deadline
from handlers.workflow import Workflow

V = TypeVar("V")


class DebugSteps(Protocol[V]):
    """A strategy's versions of a script, as the debug loop drives them."""

    def failed(self, version: V) -> bool:
        """The version ran and its run is not usable."""
        ...

    async def fix(self, version: V, attempt: int) -> V | None:
        """Debug round ``attempt`` on a failed version: the debugger's fix, recorded and not yet
        run, or None when the debugger has no usable fix."""
        ...

    async def run(self, version: V, attempt: int, previous: V) -> V:
        """Run a fix of ``previous`` and return it with its run."""
        ...


@dataclass(frozen=True)
class DebugRules(Generic[V]):
    attempts: int                      # the most debug rounds
    deadline: Deadline                 # no round starts once its soft end has passed
    late_fixes_run: bool = False       # a fix ready after the soft end still runs
    leakage_check: Callable[[V, int], Awaitable[V]] | None = None  # what every fix passes before it runs

    def too_late(self, now: float) -> bool:
        return not self.late_fixes_run and self.deadline.passed(now)


async def debug_loop(wf: Workflow, steps: DebugSteps[V], first: V, rules: DebugRules[V]) -> tuple[V, int]:
    """Debug ``first`` (a version that has run) until a version runs clean or a rule stops the
    loop; returns the last version that ran and the number of debug rounds started."""
    current, attempt = first, 0
    while steps.failed(current) and attempt < rules.attempts and not rules.deadline.passed(wf.now):
        attempt += 1
        fixed = await steps.fix(current, attempt)
        if fixed is None or rules.too_late(wf.now):
            break
        if rules.leakage_check is not None:
            fixed = await rules.leakage_check(fixed, attempt)
            if rules.too_late(wf.now):
                break
        current = await steps.run(fixed, attempt, current)
    return current, attempt


__all__ = ["DebugRules", "DebugSteps", "debug_loop"]
