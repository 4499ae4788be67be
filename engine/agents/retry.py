"""Which agent-call failures are worth retrying, and the backoff between tries (REQ-OR-052).

Transient: rate limits, overload and server errors from the API, and a CLI connection that
dropped. Everything else (bad request, authentication, budget exhausted, malformed output, a CLI
that crashed for its own reasons) fails at once: trying again would cost money for nothing.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from events.core import AgentCallCompleted

#: Seconds to wait before the 2nd, 3rd and 4th try.
DEFAULT_BACKOFF: tuple[float, ...] = (1.0, 2.0, 4.0)
TRANSIENT_HTTP = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
_TRANSIENT_TEXT = re.compile(
    r"rate[ _-]?limit|overloaded|too many requests|\b(?:429|529|503|502)\b|server[ _]error|"
    r"temporarily unavailable|connection (?:reset|refused|closed|error)|econnreset|etimedout|socket hang up",
    re.IGNORECASE,
)

Sleep = Callable[[float], Awaitable[Any]]


@dataclass(frozen=True)
class TryFailure:
    """One try's failure: what to report and whether another try may help."""

    message: str
    transient: bool
    cost_usd: float | None = None
    usage: Mapping[str, Any] = field(default_factory=dict)  # tokens used, the relay's reading


def add_try_usage(total: Mapping[str, Any], this_try: Mapping[str, Any]) -> dict[str, Any]:
    """The usage of a call's tries so far: counts add up (nested ones too: the relay's), anything
    else is the latest try's."""
    summed = dict(total)
    for key, value in this_try.items():
        before = summed.get(key)
        if isinstance(value, Mapping) and isinstance(before, Mapping):
            summed[key] = add_try_usage(before, value)
        elif _count(value) and _count(before):
            summed[key] = before + value
        else:
            summed[key] = value
    return summed


def with_earlier_tries(result: AgentCallCompleted, cost_usd: float | None,
                       usage: Mapping[str, Any]) -> AgentCallCompleted:
    """A call's result after failed tries: their cost and usage are the call's too."""
    if cost_usd is None and not usage:
        return result
    return result.model_copy(update={
        "cost_usd": result.cost_usd if cost_usd is None else cost_usd + (result.cost_usd or 0.0),
        "usage": add_try_usage(usage, result.usage)})


def _count(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def transient_text(text: str) -> bool:
    return bool(_TRANSIENT_TEXT.search(text or ""))


#: ``AssistantMessage.error`` values the CLI sets on the synthetic message of a failed turn.
_PERMANENT_ERRORS = {"authentication_failed": "authentication failed (check the API key / token)",
                     "billing_error": "billing error on the account", "model_not_found": "unknown model",
                     "invalid_request": "invalid request"}
_TRANSIENT_ERRORS = {"rate_limit", "server_error", "overloaded"}


def _from_assistant_error(failure: TryFailure, assistant_error: str | None) -> TryFailure:
    """Sharpen a failure with what the CLI's own message said about it."""
    if assistant_error in _PERMANENT_ERRORS:
        return TryFailure(f"{_PERMANENT_ERRORS[assistant_error]}: {failure.message}", False, failure.cost_usd)
    if assistant_error in _TRANSIENT_ERRORS:
        return TryFailure(failure.message, True, failure.cost_usd)
    return failure


def classify_exception(exc: BaseException, assistant_error: str | None = None) -> TryFailure:
    """Map an SDK exception to a ``TryFailure`` (imports the SDK lazily: engine-only)."""
    return _from_assistant_error(_classify_exception(exc), assistant_error)


def _classify_exception(exc: BaseException) -> TryFailure:
    from claude_agent_sdk import (
        ClaudeSDKError,
        CLIConnectionError,
        CLIJSONDecodeError,
        CLINotFoundError,
        ProcessError,
    )
    from claude_agent_sdk._errors import MessageParseError, ResultError

    name = type(exc).__name__
    if isinstance(exc, CLINotFoundError):
        return TryFailure(f"Claude CLI not found: {exc}", transient=False)
    if isinstance(exc, ResultError):
        status = exc.api_error_status
        transient = (status in TRANSIENT_HTTP) or transient_text(str(exc))
        cost = exc.data.get("total_cost_usd") if isinstance(exc.data, dict) else None
        return TryFailure(f"{name}: {exc}", transient=transient,
                          cost_usd=cost if isinstance(cost, (int, float)) else None)
    if isinstance(exc, ProcessError):
        return TryFailure(f"CLI exited with an error: {exc}", transient=transient_text(str(exc)))
    if isinstance(exc, (CLIJSONDecodeError, MessageParseError)):
        return TryFailure(f"malformed output from the CLI: {exc}", transient=False)
    if isinstance(exc, CLIConnectionError):
        return TryFailure(f"lost the connection to the CLI: {exc}", transient=True)
    if isinstance(exc, ClaudeSDKError):
        return TryFailure(f"{name}: {exc}", transient=transient_text(str(exc)))
    # The SDK reports control-protocol trouble (e.g. an initialize timeout) as bare Exception.
    return TryFailure(f"{name}: {exc}", transient=transient_text(str(exc)) or "timeout" in str(exc).lower())


def classify_error_result(data: dict[str, Any], assistant_error: str | None = None) -> TryFailure:
    """A ``result`` message with ``is_error``: why the run ended and whether to retry."""
    return _from_assistant_error(_classify_error_result(data), assistant_error)


def _classify_error_result(data: dict[str, Any]) -> TryFailure:
    subtype = str(data.get("subtype") or "")
    errors = data.get("errors") or []
    text = "; ".join(str(e) for e in errors if e) or str(data.get("result") or "") or subtype or "unknown error"
    status = data.get("api_error_status")
    cost = data.get("total_cost_usd")
    cost = float(cost) if isinstance(cost, (int, float)) else None
    if subtype == "error_max_budget_usd":
        return TryFailure(f"budget exhausted (max_budget_usd reached): {text}", transient=False, cost_usd=cost)
    if subtype == "error_max_turns":
        return TryFailure(f"the agent ran out of turns: {text}", transient=False, cost_usd=cost)
    transient = (isinstance(status, int) and status in TRANSIENT_HTTP) or transient_text(text)
    label = f"API error (HTTP {status})" if status else f"error result ({subtype or 'unknown'})"
    return TryFailure(f"{label}: {text}", transient=transient, cost_usd=cost)
