"""The ``claude`` backend: one agent call = one Claude Agent SDK ``query()`` (REQ-OR-005..011).

Each call starts its own CLI session (the prompts of MLE-STAR are self-contained, and a fresh
session per effect keeps calls independent, so resume can re-run any one of them). Per call:

* options: model (config, else ``MLE_STAR_MODEL``, else "sonnet"), permission mode, the shared
  system prompt (REQ-OR-007), the role's tools as both the available and the auto-allowed set
  (REQ-OR-008), ``cwd`` = the call's working directory, the 14 agent definitions (REQ-OR-006),
  JSON-schema output when the request has a schema, ``max_budget_usd``, and no user/project
  settings (``setting_sources=[]``) so a stray ``.claude/`` directory cannot add hooks;
* hooks: PreToolUse safety, PostToolUse progress, PostToolUseFailure logging (``hooks.py``);
* result: text, the longest fenced code block, validated structured output, cost and usage
  from the ``ResultMessage``; transient failures retried with 1/2/4 s backoff; every string
  that leaves the backend is passed through the secret redactor.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path
from typing import Any, Mapping

import anyio
import structlog

from engine.agents.base import AgentContext, AgentResult
from engine.agents.errors import BackendUnavailable
from engine.agents.hooks import DEFAULT_BLOCKED_PATTERNS, BashPolicy, CallHooks
from engine.agents.retry import DEFAULT_BACKOFF, Failure, Sleep, classify_error_result, classify_exception
from engine.agents.secrets import Redactor, credential_env, detect_credentials
from engine.agents.structured import MalformedOutput, validate_structured
from events.agents import AgentConfig, agent_config_for, build_default_agent_configs
from events.core import AgentCallCompleted, AgentCallFailed, AgentCallRequested
from events.domain import PipelineConfig
from handlers.prompts.extract import longest_fenced_block
from handlers.prompts.system import render_system_prompt

log = structlog.get_logger("engine.agents.claude")

MODEL_ENV = "MLE_STAR_MODEL"
_STDERR_KEEP = 50  # lines of CLI stderr kept for error messages


def resolve_model(config: PipelineConfig, env: Mapping[str, str]) -> str:
    """REQ-OR-046 precedence: an explicit ``config.model`` > ``MLE_STAR_MODEL`` > the default."""
    if "model" in config.model_fields_set:
        return config.model
    return (env.get(MODEL_ENV) or "").strip() or config.model


class _Attempt:
    """What one try produced: a result, or a failure (with the cost it still incurred)."""

    def __init__(self, result: AgentCallCompleted | None = None, failure: Failure | None = None) -> None:
        self.result, self.failure = result, failure


class ClaudeBackend:
    name = "claude"

    def __init__(
        self,
        config: PipelineConfig,
        *,
        env: Mapping[str, str] | None = None,
        cli_path: str | Path | None = None,
        sleep: Sleep = anyio.sleep,
        backoff: tuple[float, ...] = DEFAULT_BACKOFF,
        blocked_patterns: tuple[tuple[str, str], ...] = DEFAULT_BLOCKED_PATTERNS,
        session_store: Any | None = None,
        agent_configs: dict[Any, AgentConfig] | None = None,
    ) -> None:
        source = os.environ if env is None else env
        credential = detect_credentials(source)
        if credential is None:
            raise BackendUnavailable(
                "the claude backend needs credentials: set ANTHROPIC_API_KEY (or CLAUDE_CODE_OAUTH_TOKEN, "
                "ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_USE_BEDROCK=1 / CLAUDE_CODE_USE_VERTEX=1), "
                "or choose --backend builtin to run offline"
            )
        self.config = config
        self.credential = credential  # the variable's NAME, for the start-up message
        self.model = resolve_model(config, source)
        self._cli_env = credential_env(source)
        self._redactor = Redactor.from_env(source)
        self._cli_path = str(cli_path) if cli_path is not None else None
        self._sleep = sleep
        self._backoff = tuple(backoff)
        self._blocked = blocked_patterns
        self._session_store = session_store
        self._configs = agent_configs or build_default_agent_configs()
        self._tool_failures: Counter[str] = Counter()

    # --- options -------------------------------------------------------------------------

    def _agent_definitions(self) -> dict[str, Any]:
        from claude_agent_sdk import AgentDefinition

        return {cfg.agent_type.value: AgentDefinition(**cfg.to_agent_definition()) for cfg in self._configs.values()}

    def build_options(self, request: AgentCallRequested, ctx: AgentContext, hooks: CallHooks, stderr: list[str]) -> Any:
        from claude_agent_sdk import ClaudeAgentOptions

        role = agent_config_for(request.agent_type, request.variant, self._configs)
        tools = list(role.tools or [])
        system_prompt = request.system_prompt or render_system_prompt(ctx.task, ctx.gpu_info)

        def keep_stderr(line: str) -> None:
            stderr.append(line)
            del stderr[:-_STDERR_KEEP]

        return ClaudeAgentOptions(
            model=self.model,
            permission_mode=self.config.permission_mode,  # type: ignore[arg-type]
            system_prompt=system_prompt,
            tools=tools,
            allowed_tools=tools,
            cwd=str(ctx.work_dir),
            add_dirs=[str(ctx.task_dir)],
            agents=self._agent_definitions(),
            hooks=hooks.sdk_hooks(),  # type: ignore[arg-type]
            output_format={"type": "json_schema", "schema": request.output_schema} if request.output_schema else None,
            max_budget_usd=self.config.max_budget_usd,
            max_turns=role.max_turns,
            cli_path=self._cli_path,
            setting_sources=[],
            env=dict(self._cli_env),
            stderr=keep_stderr,
            session_store=self._session_store,
        )

    # --- one call ------------------------------------------------------------------------

    async def call(self, request: AgentCallRequested, ctx: AgentContext) -> AgentResult:
        total_cost: float | None = None
        attempts = len(self._backoff) + 1
        failure: Failure | None = None
        for attempt in range(1, attempts + 1):
            outcome = await self._attempt(request, ctx)
            if outcome.result is not None:
                cost = outcome.result.cost_usd
                if total_cost is not None:  # earlier failed tries cost money too
                    outcome.result = outcome.result.model_copy(update={"cost_usd": total_cost + (cost or 0.0)})
                return outcome.result
            failure = outcome.failure
            assert failure is not None
            if failure.cost_usd is not None:
                total_cost = (total_cost or 0.0) + failure.cost_usd
            if not failure.transient or attempt == attempts:
                break
            delay = self._backoff[attempt - 1]
            log.warning("agent_call_retry", effect_id=request.effect_id, agent_type=request.agent_type,
                        attempt=attempt, delay_s=delay, error=self._redactor.text(failure.message)[:300])
            await self._sleep(delay)
        assert failure is not None
        prefix = f"gave up after {attempt} attempts: " if failure.transient and attempt > 1 else ""
        log.error("agent_call_failed", effect_id=request.effect_id, agent_type=request.agent_type, attempts=attempt)
        return AgentCallFailed(
            effect_id=request.effect_id,
            error=self._redactor.text(prefix + failure.message),
            attempts=attempt,
            cost_usd=total_cost,
        )

    async def _attempt(self, request: AgentCallRequested, ctx: AgentContext) -> _Attempt:
        from claude_agent_sdk import AssistantMessage, ResultMessage, TextBlock, query

        hooks = CallHooks(request.agent_type, request.effect_id, BashPolicy(Path(ctx.work_dir), self._blocked),
                          failures=self._tool_failures)
        stderr: list[str] = []
        texts: list[str] = []
        assistant_error: str | None = None
        result: Any = None
        started = time.monotonic()
        try:
            options = self.build_options(request, ctx, hooks, stderr)
            async for message in query(prompt=request.prompt, options=options):
                if isinstance(message, AssistantMessage) and message.parent_tool_use_id is None:
                    assistant_error = message.error or assistant_error
                    chunk = "".join(b.text for b in message.content if isinstance(b, TextBlock))
                    if chunk:
                        texts.append(chunk)
                elif isinstance(message, ResultMessage):
                    result = message
        except Exception as exc:  # the SDK's errors, and anything else: never raise to the engine
            if result is not None and result.is_error:
                return _Attempt(failure=classify_error_result(_result_dict(result)))
            if result is not None:
                # A complete answer arrived before the CLI failed on its way out: keep it.
                log.warning("cli_failed_after_result", effect_id=request.effect_id, error=self._redactor.text(str(exc))[:300])
                return self._completed(request, result, texts, hooks, time.monotonic() - started)
            failure = classify_exception(exc)
            transient = failure.transient or assistant_error in {"rate_limit", "server_error"}
            detail = ("\nCLI stderr: " + "\n".join(stderr[-10:])) if stderr else ""
            return _Attempt(failure=Failure(failure.message + detail, transient, failure.cost_usd))
        if result is None:
            return _Attempt(failure=Failure("the CLI ended without a result message", transient=False))
        if result.is_error:
            return _Attempt(failure=classify_error_result(_result_dict(result)))
        return self._completed(request, result, texts, hooks, time.monotonic() - started)

    def _completed(self, request: AgentCallRequested, result: Any, texts: list[str], hooks: CallHooks,
                   wall_s: float) -> _Attempt:
        text = result.result if isinstance(result.result, str) and result.result.strip() else (texts[-1] if texts else "")
        cost = float(result.total_cost_usd) if result.total_cost_usd is not None else None
        structured = None
        if request.output_schema:
            model = agent_config_for(request.agent_type, request.variant, self._configs).output_schema
            try:
                structured = validate_structured(result.structured_output, text, request.output_schema, model)
            except MalformedOutput as exc:
                return _Attempt(failure=Failure(f"malformed output: {exc}", transient=False, cost_usd=cost))
        usage: dict[str, Any] = dict(result.usage or {})
        usage.update(num_turns=result.num_turns, duration_api_ms=result.duration_api_ms)
        if hooks.denied:
            usage["denied_tool_uses"] = list(hooks.denied)
        r = self._redactor
        completed = AgentCallCompleted(
            effect_id=request.effect_id,
            text=r.text(text),
            code=None if structured is not None else _code(r.text(text)),
            structured=r.value(structured) if structured is not None else None,
            cost_usd=cost,
            usage=r.value(usage),
            duration_s=round((result.duration_ms or 0) / 1000.0, 3) or round(wall_s, 3),
            session_id=result.session_id,
        )
        log.info("agent_call_completed", effect_id=request.effect_id, agent_type=request.agent_type,
                 cost_usd=cost, num_turns=result.num_turns, duration_s=completed.duration_s)
        return _Attempt(result=completed)


def _code(text: str) -> str | None:
    return longest_fenced_block(text)


def _result_dict(result: Any) -> dict[str, Any]:
    return {
        "subtype": result.subtype,
        "errors": result.errors,
        "result": result.result,
        "api_error_status": result.api_error_status,
        "total_cost_usd": result.total_cost_usd,
    }
