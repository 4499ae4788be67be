"""The ``claude`` backend: one agent call = one Claude Agent SDK ``query()`` (REQ-OR-005..011).

Each call starts its own CLI session (the prompts of MLE-STAR are self-contained, and a fresh
session per effect keeps calls independent, so resume can re-run any one of them). Per call:

* the CLI is the one bundled in claude-agent-sdk, started through a launch script
  (``setup.py``): it and every process its tools start die with the engine, it sees only
  the environment it needs, and with a sandbox it runs inside it;
* options: model (config, else ``MLE_STAR_MODEL``, else "sonnet"); permission mode (default
  ``dontAsk`` with the role's tools as the allow-list, which works under root); the shared system
  prompt (REQ-OR-007) passed *by file* (a task description of any size fits); prompts delivered
  verbatim (no ``@file`` expansion of third-party text); ``cwd`` = the call's working directory,
  where ``input/`` holds the task's public data; the 14 agent definitions (REQ-OR-006); the two
  MCP tools of REQ-OR-010; JSON-schema output when the request has a schema; the call's share of
  the run budget as ``max_budget_usd`` (``budget.py``); no user/project settings;
* hooks (``hooks.py``): PreToolUse safety that fails closed, PostToolUse progress and the call's
  deadline (REQ-OR-034: near it the agent is asked to stop; at it the call is cut,
  ``call_deadline.py``), PostToolUseFailure logging;
* result: text, the longest fenced code block, validated structured output, cost and usage from
  the ``ResultMessage``. Transient failures are retried with backoff inside a bounded window
  (the CLI's own retries included); every string that leaves the backend is redacted.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import structlog

from engine.agents.base import AgentContext, AgentResult
from engine.agents.bash_policy import DEFAULT_BLOCKED_PATTERNS, BashPolicy
from engine.agents.call_deadline import CallClock, cut_message
from engine.agents.call_deadline import wrap_up_s as default_wrap_up_s
from engine.agents.claude.hooks import CallHooks
from engine.agents.claude.launch import AgentLauncher, protected_paths, resolve_agent_sandbox
from engine.agents.claude.mcp_tools import TOOL_NAMES, build_server
from engine.agents.claude.metered import metered_failure, metered_result, metered_try, try_tag
from engine.agents.claude.outcome import Attempt, Stream, completed_attempt, result_dict
from engine.agents.claude.price_check import price_warning
from engine.agents.claude.reading import cli_tokens
from engine.agents.claude.setup import bundled_cli, check_permission_mode, is_root
from engine.agents.errors import BackendUnavailable
from engine.agents.retry import (
    DEFAULT_BACKOFF,
    Sleep,
    TryFailure,
    add_try_usage,
    classify_error_result,
    classify_exception,
    with_earlier_tries,
)
from engine.agents.roles import UnknownRole, role_settings
from engine.agents.secrets import Redactor, detect_credentials
from events.agents import AgentConfig, build_default_agent_configs
from events.core import AgentCallFailed, AgentCallRequested
from events.domain import PipelineConfig
from handlers.prompts.system import render_system_prompt

log = structlog.get_logger("engine.agents.claude.backend")

MODEL_ENV = "MLE_STAR_MODEL"
_STDERR_KEEP = 50  # lines of CLI stderr kept for error messages
#: How long one call may keep retrying transient API errors, all tries and waits together.
RETRY_WINDOW_S = 300.0


def resolve_model(config: PipelineConfig, env: Mapping[str, str]) -> str:
    """REQ-OR-046 precedence: an explicit ``config.model`` > ``MLE_STAR_MODEL`` > the default."""
    if "model" in config.model_fields_set:
        return config.model
    return (env.get(MODEL_ENV) or "").strip() or config.model


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
        retry_window_s: float = RETRY_WINDOW_S,
        blocked_patterns: tuple[tuple[str, str], ...] = DEFAULT_BLOCKED_PATTERNS,
        session_store: Any | None = None,
        agent_configs: dict[Any, AgentConfig] | None = None,
        sandbox: str | None = None,
        wrap_up_s: float | None = None,
    ) -> None:
        source = os.environ if env is None else env
        credential = detect_credentials(source)
        if credential is None:
            raise BackendUnavailable(
                "the claude backend needs credentials: set ANTHROPIC_API_KEY (or CLAUDE_CODE_OAUTH_TOKEN, "
                "ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_USE_BEDROCK=1 / CLAUDE_CODE_USE_VERTEX=1), "
                "or choose --agent builtin to run offline"
            )
        # bwrap (the default wherever bubblewrap works) or none (only when asked for explicitly)
        self.sandbox_mode = resolve_agent_sandbox(sandbox or getattr(config, "sandbox", None) or "auto")
        self.permission_mode = check_permission_mode(config.permission_mode, root=is_root(),
                                                     cli_runs_unprivileged=self.sandbox_mode == "bwrap" and is_root())
        self.config = config
        self.credential = credential  # the variable's NAME, for the start-up message
        self.model = resolve_model(config, source)
        self._source_env = dict(source)
        self._redactor = Redactor.from_env(source)
        self._launcher = AgentLauncher(source, mode=self.sandbox_mode, prices=config.model_prices,
                                       cli=str(cli_path) if cli_path is not None else bundled_cli())
        self._sleep = sleep
        self._backoff = tuple(backoff)
        self._retry_window_s = retry_window_s
        self._blocked = blocked_patterns
        self._session_store = session_store  # None: each run keeps its transcripts in <run>/transcripts.db
        self._run_stores: dict[Path, Any] = {}
        self._configs = agent_configs or build_default_agent_configs()
        self._tool_failures: Counter[str] = Counter()
        self._wrap_up_s = wrap_up_s  # None: call_deadline.wrap_up_s of each call's time limit

    @property
    def endpoint(self) -> str:
        return self._source_env.get("ANTHROPIC_BASE_URL") or "the Anthropic API"

    @property
    def base_url(self) -> str | None:
        """The HTTP endpoint the CLI talks to (None: a cloud provider's own client does)."""
        from engine.agents.claude.relay import DEFAULT_UPSTREAM
        from engine.agents.secrets import PROVIDER_FLAGS

        if any(self._source_env.get(flag) for flag in PROVIDER_FLAGS):
            return None
        return self._source_env.get("ANTHROPIC_BASE_URL") or DEFAULT_UPSTREAM

    # --- options -------------------------------------------------------------------------

    def _agent_definitions(self) -> dict[str, Any]:
        from claude_agent_sdk import AgentDefinition

        return {cfg.agent_type.value: AgentDefinition(**cfg.to_agent_definition()) for cfg in self._configs.values()}

    @property
    def binds_input(self) -> bool:
        """The sandbox shows the task's data at ``./input`` itself (no copy needed)."""
        return self.sandbox_mode == "bwrap"

    @property
    def sandbox_description(self) -> str:
        if self.sandbox_mode != "bwrap":
            return "sandbox: none (--sandbox none): the agent's tools run as host processes"
        net = ("no network; the model API through a relay that holds the key" if self._launcher.network == "none"
               else f"host network ({self._launcher.relay_problem})")
        return f"sandbox: bwrap ({net})"

    def _launch_for(self, work_dir: Path, tag: str, private: Path | None = None, *, task_dir: Path | None = None,
                    prompt_file: Path | None = None, run_dir: Path | None = None,
                    overrides: Mapping[str, str] | None = None) -> tuple[str, dict[str, str], Any]:
        """The launch script for one try and the CLI's environment. ``private`` (default: beside
        ``work_dir``) holds the CLI's home and the launch scripts, outside the agent's reach.
        The third value is the sandbox policy the CLI runs under (None: no sandbox)."""
        private = private or Path(work_dir).parent / f".{Path(work_dir).name}-private"
        protected = protected_paths(run_dir, task_dir) if run_dir is not None else []
        return self._launcher.script(work_dir=Path(work_dir), private=private, tag=tag, task_dir=task_dir,
                                     prompt_file=prompt_file, protected=protected, overrides=overrides)

    def _transcripts(self, run_dir: Path) -> Any:
        """Where the SDK mirrors each call's transcript (every tool use and intermediate message):
        beside the run's log, to audit what an agent did without bloating the events."""
        if self._session_store is not None:
            return self._session_store
        if run_dir not in self._run_stores:
            from engine.agents.claude.session_store import SQLiteSessionStore

            self._run_stores[run_dir] = SQLiteSessionStore(run_dir / "transcripts.db")
        return self._run_stores[run_dir]

    def redact(self, text: str) -> str:
        return self._redactor.text(text)

    async def preflight(self) -> Any:
        """One tiny request through the real CLI: bad credentials or endpoint fail in seconds."""
        from engine.agents.preflight import check_claude

        return await check_claude(self)

    def price_warning(self, checked: Any) -> str | None:
        """What to tell a user whose budget the relay cannot meter per request (``price_check``)."""
        if not self._launcher.metered:  # without the relay every call is priced by the CLI's own figure
            return None
        return price_warning(models=getattr(checked, "models", ()), configured=self.model,
                             prices=self.config.model_prices, budget_usd=self.config.max_budget_usd)

    def build_options(self, request: AgentCallRequested, ctx: AgentContext, hooks: CallHooks, stderr: list[str],
                      *, tag: str = "call", budget_usd: float | None = None) -> tuple[Any, Any]:
        """The SDK options of one try, and the sandbox policy its CLI runs under."""
        from claude_agent_sdk import ClaudeAgentOptions

        role = role_settings(request.agent_type, request.variant, self._configs)
        tools = list(role.tools)
        system_prompt = request.system_prompt or render_system_prompt(ctx.task, ctx.gpu_info)
        private = Path(ctx.run_dir) / "agents" / ".claude"
        prompt_file = private / "prompts" / f"{tag}.md"
        prompt_file.parent.mkdir(parents=True, exist_ok=True)
        prompt_file.write_text(system_prompt, encoding="utf-8")
        cli_path, env, policy = self._launch_for(Path(ctx.work_dir), tag, private, task_dir=Path(ctx.task_dir),
                                                 prompt_file=prompt_file, run_dir=Path(ctx.run_dir))
        mcp = build_server(Path(ctx.work_dir)) if "Bash" in tools else None  # the roles that run code
        allowed = tools + (list(TOOL_NAMES) if mcp else [])

        def keep_stderr(line: str) -> None:
            stderr.append(line)
            del stderr[:-_STDERR_KEEP]

        return ClaudeAgentOptions(
            model=self.model,
            permission_mode=self.permission_mode,
            system_prompt={"type": "file", "path": str(prompt_file)},
            tools=tools,
            allowed_tools=allowed,
            cwd=str(ctx.work_dir),
            agents=self._agent_definitions(),
            hooks=hooks.sdk_hooks(),
            mcp_servers=mcp or {},
            output_format={"type": "json_schema", "schema": request.output_schema} if request.output_schema else None,
            max_budget_usd=budget_usd if budget_usd is not None else self.config.max_budget_usd,
            max_turns=role.max_turns,
            cli_path=cli_path,
            setting_sources=[],
            env=env,
            stderr=keep_stderr,
            session_store=self._transcripts(Path(ctx.run_dir)),
            verbatim_prompts=True,
        ), policy

    # --- one call ------------------------------------------------------------------------

    async def call(self, request: AgentCallRequested, ctx: AgentContext) -> AgentResult:
        total_cost: float | None = None
        usage: dict[str, Any] = {}  # of the failed tries so far
        failure: TryFailure | None = None
        started = time.monotonic()
        clock = CallClock(ctx.time_limit_s)  # the call's deadline holds across its tries
        attempt = 0
        while True:
            attempt += 1
            outcome = await self._attempt(request, clock.for_try(ctx), attempt, spent_before=total_cost)
            if outcome.result is not None:
                return with_earlier_tries(outcome.result, total_cost, usage)
            failure = outcome.failure
            assert failure is not None
            usage = add_try_usage(usage, failure.usage)
            if failure.cost_usd is not None:
                total_cost = (total_cost or 0.0) + failure.cost_usd
            if not failure.transient or attempt > len(self._backoff):
                break
            delay = self._backoff[attempt - 1]
            if time.monotonic() - started + delay > self._retry_window_s:
                failure = TryFailure(failure.message + f" (retry window of {self._retry_window_s:g} s used up)",
                                     transient=True, cost_usd=failure.cost_usd)
                break
            if not clock.allows(delay):
                failure = TryFailure(failure.message + " (no time left before the call's deadline for another try)",
                                     transient=True, cost_usd=failure.cost_usd)
                break
            log.warning("agent_call_retry", effect_id=request.effect_id, agent_type=request.agent_type,
                        attempt=attempt, delay_s=delay, error=self._redactor.text(failure.message)[:300])
            await self._sleep(delay)
        spent = round(time.monotonic() - started, 1)
        prefix = f"gave up after {attempt} attempts in {spent:g} s: " if failure.transient and attempt > 1 else ""
        log.error("agent_call_failed", effect_id=request.effect_id, agent_type=request.agent_type, attempts=attempt)
        return AgentCallFailed(effect_id=request.effect_id, error=self._redactor.text(prefix + failure.message),
                               attempts=attempt, cost_usd=total_cost, sandbox=outcome.policy,
                               usage=self._redactor.value(usage))

    async def _attempt(self, request: AgentCallRequested, ctx: AgentContext, attempt: int,
                       spent_before: float | None = None) -> Attempt:
        stream = Stream()
        tag = try_tag(ctx.work_dir, attempt)
        if self._launcher.metered:  # the relay meters the try against what its earlier tries left
            opened = metered_try(self._launcher, ctx, tag, spent_before)
            if isinstance(opened, TryFailure):
                return Attempt(failure=opened)
            ctx = opened
        try:
            outcome = await self._try(request, ctx, attempt, stream)
        finally:
            reading = self._launcher.close_call(tag)
        if outcome.failure is not None:  # what the try used before it failed
            outcome.failure = replace(outcome.failure, usage={**stream.tokens, **outcome.failure.usage})
        # What the CLI says it used of the models the relay could not price (``reading.call_cost``).
        seen = cli_tokens(getattr(stream.result, "model_usage", None), reading.unpriced_models) if reading else None
        if reading is not None and outcome.result is not None:
            outcome.result = metered_result(outcome.result, reading, ctx.budget_usd, seen)
        elif reading is not None and outcome.failure is not None:
            outcome.failure = metered_failure(outcome.failure, reading, ctx.budget_usd, seen)
        outcome.policy = stream.policy
        if outcome.result is not None and stream.policy is not None:
            outcome.result = outcome.result.model_copy(update={"sandbox": stream.policy})
        return outcome

    async def _try(self, request: AgentCallRequested, ctx: AgentContext, attempt: int, stream: Stream) -> Attempt:
        from claude_agent_sdk import AssistantMessage, ResultMessage, TextBlock, query

        policy = BashPolicy(Path(ctx.work_dir), self._blocked, read_roots=(Path(ctx.task_dir).resolve(),))
        limit = ctx.time_limit_s  # what is left of the call's time: the hook stops it near the end,
        hooks = CallHooks(request.agent_type, request.effect_id, policy,  # fail_after cuts it at the end
                          failures=self._tool_failures, time_limit_s=limit,
                          wrap_up_s=0.0 if limit is None else self._wrap_up_s if self._wrap_up_s is not None
                          else default_wrap_up_s(limit))
        stderr: list[str] = []
        started = time.monotonic()
        tag = try_tag(ctx.work_dir, attempt)
        try:
            options, stream.policy = self.build_options(request, ctx, hooks, stderr, tag=tag, budget_usd=ctx.budget_usd)
            with anyio.fail_after(limit):
                async for message in query(prompt=request.prompt, options=options):
                    if isinstance(message, AssistantMessage) and message.parent_tool_use_id is None:
                        stream.error = message.error or stream.error
                        stream.add_usage(message.usage)
                        chunk = "".join(b.text for b in message.content if isinstance(b, TextBlock))
                        if chunk:
                            stream.texts.append(chunk)
                    elif isinstance(message, ResultMessage):
                        stream.result = message
        except anyio.get_cancelled_exc_class():
            # The engine cancelled the call (a phase ended): what it spent is reported, then it stops.
            if ctx.on_abandoned is not None:
                cost = getattr(stream.result, "total_cost_usd", None)
                ctx.on_abandoned(float(cost) if cost is not None else None, dict(stream.tokens))
            raise
        except TimeoutError:
            cost = getattr(stream.result, "total_cost_usd", None)
            return Attempt(failure=TryFailure(cut_message(limit or 0.0, (
                f"cut before the CLI reported its cost ({stream.tokens['input_tokens']} input / "
                f"{stream.tokens['output_tokens']} output tokens streamed; the relay's meter, when it "
                "is in the path, records what was spent)")), transient=False,
                cost_usd=float(cost) if cost is not None else None))
        except UnknownRole as exc:  # no try can succeed: fail at once, and say which role
            return Attempt(failure=TryFailure(str(exc), transient=False))
        except Exception as exc:  # the SDK's errors, and anything else: never raise to the engine
            result = stream.result
            if result is not None and result.is_error:
                return Attempt(failure=classify_error_result(result_dict(result), stream.error))
            if result is not None:
                # A complete answer arrived before the CLI failed on its way out: keep it.
                log.warning("cli_failed_after_result", effect_id=request.effect_id, error=self._redactor.text(str(exc))[:300])
                return completed_attempt(request, result, stream.texts, hooks, time.monotonic() - started,
                                 self._configs, self._redactor)
            failure = classify_exception(exc, stream.error)
            detail = ("\nCLI stderr: " + "\n".join(stderr[-10:])) if stderr else ""
            return Attempt(failure=TryFailure(failure.message + detail, failure.transient, failure.cost_usd))
        result = stream.result
        if result is None:
            return Attempt(failure=TryFailure("the CLI ended without a result message", transient=False))
        if result.is_error:
            return Attempt(failure=classify_error_result(result_dict(result), stream.error))
        return completed_attempt(request, result, stream.texts, hooks, time.monotonic() - started,
                                 self._configs, self._redactor)
