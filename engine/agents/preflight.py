"""Fail fast on credentials and endpoints: one tiny real request before a run starts or resumes.

A bad key, an unknown model or an unreachable ``ANTHROPIC_BASE_URL`` would otherwise surface
as a failure of every agent call, each after the CLI's own retries. The check goes through the
same CLI, launcher and environment as the real calls (so Bedrock, Vertex, proxies and gateways
are checked as they will be used), with no retries and a short timeout, and turns the answer
into one line that says what is wrong and what to do. Rate limits and overload at this moment
do not stop the start: the endpoint answered, and calls retry those on their own.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import structlog

from engine.agents.errors import BackendUnavailable

log = structlog.get_logger("engine.agents.preflight")

PREFLIGHT_TIMEOUT_S = 30.0
PREFLIGHT_PROMPT = "Reply with the single word: ready"


@dataclass(frozen=True)
class PreflightResult:
    ok: bool
    cost_usd: float | None
    duration_s: float
    detail: str = ""
    models: tuple[str, ...] = ()  # the model ids the check's requests asked for (the CLI resolves aliases)


def _explain(backend: Any, kind: str, message: str) -> str:
    where = backend.endpoint
    model = backend.model
    if kind == "authentication_failed" or "401" in message or "invalid api key" in message.lower():
        return (f"the model API at {where} rejected the credentials in {backend.credential} "
                f"({message.strip()[:160]}); check the key, or unset it to run with --agent builtin")
    if kind == "model_not_found" or "404" in message:
        return (f"model {model!r} is not available at {where} ({message.strip()[:160]}); "
                "choose another with --set model=NAME or MLE_STAR_MODEL")
    if kind == "billing_error":
        return f"the account behind {backend.credential} cannot be billed at {where}: {message.strip()[:160]}"
    return f"cannot use the model API at {where}: {message.strip()[:200]}"


async def _reachable(url: str, timeout_s: float) -> str | None:
    """Why a TCP connection to ``url``'s host cannot be made (None: it can). The cheapest
    answer to "is the endpoint there at all", before the CLI spends its own time on it."""
    from engine.agents.claude.relay import Upstream

    try:
        upstream = Upstream.parse(url)
    except ValueError as exc:
        return str(exc)
    try:
        with anyio.fail_after(timeout_s):
            stream = await anyio.connect_tcp(upstream.host, upstream.port)
            await stream.aclose()
    except (OSError, TimeoutError) as exc:
        return f"cannot connect to {upstream.host}:{upstream.port} ({exc or type(exc).__name__})"
    return None


async def check_claude(backend: Any, *, timeout_s: float = PREFLIGHT_TIMEOUT_S) -> PreflightResult:
    """Raise ``BackendUnavailable`` (one clear line) unless the CLI can reach its model."""
    from claude_agent_sdk import AssistantMessage, ClaudeAgentOptions, ResultMessage, query

    from engine.agents.claude.metered import metered_block

    started = time.monotonic()
    base_url = backend.base_url
    if base_url is not None:
        problem = await _reachable(base_url, timeout_s / 3)
        if problem is not None:
            raise BackendUnavailable(f"cannot use the model API at {backend.endpoint}: {problem}; "
                                     "check ANTHROPIC_BASE_URL and the network")
    # The check's own requests are metered too (issue 26), against the run's whole budget.
    with tempfile.TemporaryDirectory(prefix="engine-preflight-") as tmp, \
            metered_block(backend._launcher, "preflight", backend.config.max_budget_usd) as metered:
        os.chmod(tmp, 0o755)  # the sandboxed CLI runs as another uid: it must be able to get in
        work = Path(tmp) / "work"
        work.mkdir()
        no_retries = {"CLAUDE_CODE_MAX_RETRIES": "0", "API_TIMEOUT_MS": str(int(timeout_s * 1000 * 0.8))}
        cli_path, env, _ = backend._launch_for(work, "preflight", Path(tmp) / "private", overrides=no_retries)
        stderr: list[str] = []
        options = ClaudeAgentOptions(model=backend.model, permission_mode="dontAsk", tools=[], system_prompt="",
                                     max_turns=1, cwd=str(work), cli_path=cli_path, env=env, setting_sources=[],
                                     stderr=stderr.append, verbatim_prompts=True)
        error_kind: str | None = None
        texts: list[str] = []
        result: Any = None
        try:
            with anyio.fail_after(timeout_s):
                async for message in query(prompt=PREFLIGHT_PROMPT, options=options):
                    if isinstance(message, AssistantMessage):
                        error_kind = message.error or error_kind
                        texts += [getattr(b, "text", "") for b in message.content]
                    elif isinstance(message, ResultMessage):
                        result = message
        except TimeoutError:
            raise BackendUnavailable(f"no answer from the model API at {backend.endpoint} within {timeout_s:g} s; "
                                     "check ANTHROPIC_BASE_URL and the network") from None
        except Exception as exc:
            if result is None or not result.is_error:
                detail = "; ".join(stderr[-3:]) or str(exc)
                raise BackendUnavailable(_explain(backend, error_kind or "", backend.redact(detail))) from None
    duration = round(time.monotonic() - started, 3)
    cost = metered.cost(float(result.total_cost_usd) if result is not None and result.total_cost_usd is not None
                        else None)
    models = metered.models or tuple(getattr(result, "model_usage", None) or {})
    if result is not None and result.is_error:
        message = backend.redact(" ".join(t for t in texts if t) or str(result.result or result.subtype))
        if error_kind in ("rate_limit", "server_error", "overloaded") and "ECONN" not in message \
                and "Connection" not in message:
            log.warning("preflight_transient", endpoint=backend.endpoint, error=message[:200])
            return PreflightResult(ok=True, cost_usd=cost, duration_s=duration, detail=f"endpoint busy: {message[:120]}",
                                   models=models)
        raise BackendUnavailable(_explain(backend, error_kind or "", message))
    if result is None:
        raise BackendUnavailable(f"the Claude CLI ended without answering the start-up check ({backend.endpoint})")
    log.info("preflight_ok", endpoint=backend.endpoint, model=backend.model, cost_usd=cost, duration_s=duration)
    return PreflightResult(ok=True, cost_usd=cost, duration_s=duration, models=models)
