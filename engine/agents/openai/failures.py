"""What an OpenAI-compatible endpoint's errors mean for a call (REQ-OR-052, issue 18).

Transient (retried with backoff inside the call's retry window): 408/409/429/5xx, a connection
or timeout error, and a response the client cannot parse (a proxy that cut the body short).
Permanent (fails at once): 400 (bad request), 401/403 (credentials), 404 (unknown model or
path), 422. A 400 that says the server does not support a *feature* we asked for
(``response_format`` with a JSON schema, or tools) is not a failure of the call: the backend
turns that feature off and asks again (``unsupported_feature``).
"""

from __future__ import annotations

import re

from engine.agents.retry import TRANSIENT_HTTP, TryFailure, transient_text

_FEATURE_HINTS = {
    "tools": re.compile(r"\btools?\b|tool[_ ]choice|function[_ ]call|\bfunctions?\b", re.IGNORECASE),
    "json_schema": re.compile(r"response[_ ]format|json[_ ]schema|structured output|guided[_ ]json", re.IGNORECASE),
}


def _status_and_message(exc: BaseException) -> tuple[int | None, str]:
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    message = ""
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = str(inner.get("message") if isinstance(inner, dict) else inner) if inner else ""
    return (status if isinstance(status, int) else None), (message or str(exc))


def unsupported_feature(exc: BaseException, asked: set[str]) -> str | None:
    """The feature (``tools`` / ``json_schema``) a 400/422 says the endpoint cannot do, if any."""
    status, message = _status_and_message(exc)
    if status not in (400, 404, 422, 501):
        return None
    for feature in ("json_schema", "tools"):  # response_format first: its messages mention "tool" less
        if feature in asked and _FEATURE_HINTS[feature].search(message):
            return feature
    return None


def classify(exc: BaseException, endpoint: str, model: str) -> TryFailure:
    """Map an ``openai`` client exception (imported lazily by the caller) to a ``TryFailure``."""
    import openai

    status, message = _status_and_message(exc)
    message = message.strip()[:500]
    if isinstance(exc, openai.AuthenticationError) or status in (401, 403):
        return TryFailure(f"authentication failed (HTTP {status}): {message} "
                          f"(the key in OPENAI_API_KEY, at {endpoint})", transient=False)
    if isinstance(exc, openai.NotFoundError) or status == 404:
        return TryFailure(f"model {model!r} or the Chat Completions path is not available at {endpoint} "
                          f"(HTTP 404): {message}", transient=False)
    if isinstance(exc, openai.APIStatusError) and status is not None:
        transient = status in TRANSIENT_HTTP or status >= 500
        return TryFailure(f"API error (HTTP {status}) from {endpoint}: {message}", transient=transient)
    if isinstance(exc, openai.APITimeoutError):
        return TryFailure(f"no answer from {endpoint} in time: {message}", transient=True)
    if isinstance(exc, openai.APIConnectionError):
        cause = type(exc.__cause__).__name__ if exc.__cause__ else "connection error"
        return TryFailure(f"cannot connect to {endpoint}: {message} ({cause})", transient=True)
    if isinstance(exc, (openai.APIResponseValidationError, ValueError)):
        # ValueError covers json.JSONDecodeError: the body was not the JSON the protocol promises.
        return TryFailure(f"malformed response from {endpoint}: {type(exc).__name__}: {message[:300]}", transient=True)
    return TryFailure(f"{type(exc).__name__} talking to {endpoint}: {message}", transient=transient_text(message))


def explain_for_start(failure: TryFailure, endpoint: str, model: str) -> str:
    """The one line ``engine start`` prints when the start-up check fails."""
    text = failure.message
    if text.startswith("authentication failed"):
        reason = text.split(": ", 1)[-1].split(" (the key in")[0]
        return (f"the model API at {endpoint} rejected the key in OPENAI_API_KEY ({reason[:200]}); "
                "check the key, or choose --agent builtin to run offline")
    if "404" in text:
        return (f"model {model!r} is not served at {endpoint}; choose another with --set model=NAME or "
                f"MLE_STAR_MODEL (or check OPENAI_BASE_URL, which usually ends in /v1)")
    if text.startswith(("cannot connect", "no answer")):
        return f"{text[:240]}; check OPENAI_BASE_URL and that the server is running"
    return f"cannot use the model API at {endpoint}: {text[:240]}"
