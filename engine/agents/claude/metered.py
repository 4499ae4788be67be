"""A sandboxed call's recorded cost is what the API relay metered (issue 26).

The CLI reports what *it* spent; the relay sees every request the call's sandbox sent, the CLI's
and anything its tools sent, so its figure is the one recorded (``cost_usd``, and so the run's
ledger, the one meter of ``replay/meter.py`` and the handlers' budget decisions) whenever it
could price every request. When a request's model has no price, the call is priced by the CLI's
own figure, else charged its cap (``reading.call_cost``); ``usage["cost_source"]`` says which.
The CLI's own figure stays in the call's usage beside it (``usage["relay"]["cli_cost_usd"]``),
with the number of requests and every refusal. A try the relay refused for want of money fails
as a budget stop (``budget exhausted: …``, which the ledger's ``budget_stop`` recognises).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from engine.agents.base import AgentContext
from engine.agents.claude.reading import MeterReading, call_cost
from engine.agents.ledger import CUT_MESSAGE_START, MIN_CALL_USD
from engine.agents.retry import TryFailure
from events.core import AgentCallCompleted


def try_tag(work_dir: Path, attempt: int) -> str:
    """The name of one try of a call: its launch script, CLI home and relay socket."""
    return f"{Path(work_dir).name}-{attempt}"


def metered_result(result: AgentCallCompleted, reading: MeterReading, cap_usd: float | None,
                   cli_tokens_seen: int | None = None) -> AgentCallCompleted:
    cost, source = call_cost(reading, result.cost_usd, cap_usd, cli_tokens_seen)
    usage = dict(result.usage)
    usage.update(cost_source=source, relay=reading.usage(result.cost_usd))
    return result.model_copy(update={"cost_usd": cost, "usage": usage})


def metered_failure(failure: TryFailure, reading: MeterReading, cap_usd: float | None,
                    cli_tokens_seen: int | None = None) -> TryFailure:
    message = failure.message
    if reading.budget_refused and cap_usd is not None and not message.startswith(CUT_MESSAGE_START):
        message = (f"{CUT_MESSAGE_START}: the engine's relay refused this call's model requests once its cap of "
                   f"${cap_usd:.4f} was spent (${reading.cost_usd or 0.0:.4f} metered): {message}")
    elif reading.refusals and not reading.budget_refused:
        message += f" (the engine's relay refused {reading.refused} request(s): {reading.refusals[0]})"
    cost, source = call_cost(reading, failure.cost_usd, cap_usd, cli_tokens_seen)
    usage = {**failure.usage, "cost_source": source, "relay": reading.usage(failure.cost_usd)}
    return TryFailure(message, transient=failure.transient and not reading.budget_refused, cost_usd=cost, usage=usage)


def spent_so_far(before_usd: float | None, reading: MeterReading | None, cli_cost_usd: float | None,
                 cap_usd: float | None = None) -> float | None:
    """What a call cancelled in this try had spent, its earlier tries included (None: unknown)."""
    cost = call_cost(reading, cli_cost_usd, cap_usd)[0]
    return None if cost is None else (before_usd or 0.0) + cost


def metered_try(launcher: Any, ctx: AgentContext, tag: str, spent_before: float | None) -> AgentContext | TryFailure:
    """Open the relay socket of one try, capped at what the call's earlier tries left of its cap:
    the try's context (its cap, and a cancellation report of what the relay metered), or the
    budget stop when nothing is left."""
    cap = ctx.budget_usd if ctx.budget_usd is None else ctx.budget_usd - (spent_before or 0.0)
    if cap is not None and cap < MIN_CALL_USD:
        return TryFailure(f"{CUT_MESSAGE_START}: the earlier tries of this call spent "
                          f"${spent_before or 0.0:.4f} of its cap", transient=False, cost_usd=0.0)
    abandoned = ctx.on_abandoned

    def report(cost: float | None, tokens: dict[str, Any]) -> None:
        if abandoned is not None:
            reading = launcher.close_call(tag)
            relay = {} if reading is None else {"relay": reading.usage(cost)}
            abandoned(spent_so_far(spent_before, reading, cost, cap), {**tokens, **relay})

    launcher.open_call(tag, cap)
    return replace(ctx, budget_usd=cap, on_abandoned=report if abandoned is not None else None)


@dataclass
class Metered:
    """What a metered block's relay socket metered, once the block is over (None: not metered)."""

    reading: MeterReading | None = None
    cap_usd: float | None = None

    def cost(self, cli_cost_usd: float | None) -> float | None:
        return call_cost(self.reading, cli_cost_usd, self.cap_usd)[0]

    @property
    def models(self) -> tuple[str, ...]:
        """The models the block's requests asked for (none known without the relay)."""
        return self.reading.models if self.reading is not None else ()


@contextmanager
def metered_block(launcher: Any, tag: str, cap_usd: float | None) -> Iterator[Metered]:
    """A relay socket for ``tag`` while the block runs (the start-up check)."""
    box = Metered(cap_usd=cap_usd)
    launcher.open_call(tag, cap_usd)
    try:
        yield box
    finally:
        box.reading = launcher.close_call(tag)
