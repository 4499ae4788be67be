"""The ``openai`` backend: any OpenAI-compatible Chat Completions endpoint (issue 18).

vLLM, Ollama, LiteLLM, OpenAI, OpenRouter, ...: one agent call = one conversation through the
official ``openai`` client (an optional extra: ``pip install 'mle-engine[openai]'``).

* Where and who: ``OPENAI_BASE_URL`` (default the OpenAI API), ``OPENAI_API_KEY`` (a local
  server without auth needs none); the model from config ``model`` else ``MLE_STAR_MODEL``
  (there is no sensible default across providers, so one must be named).
* The same prompts and system prompt as the claude backend (``render_system_prompt``), code
  taken from the reply the same way (``longest_fenced_block``), structured output validated by
  ``structured.validate_structured``: through ``response_format`` JSON schema where the server
  supports it, else JSON in the text (one corrective turn if it is missing); which one is
  recorded in the result's ``usage.structured_output``.
* Tools (REQ-OR-008) by function calling, bounded by the role's turn limit: ``engine.agents.openai.tools``.
  ``ENGINE_OPENAI_TOOLS=off`` turns them off; an endpoint that refuses them gets none.
* ``ENGINE_OPENAI_STREAM=1`` streams the replies (useful behind proxies that cut idle
  connections); usage is then asked for with ``stream_options``.
* Cost from ``model_prices`` in the config (US dollars per million tokens), else the gateway's
  own ``usage.cost`` if it reports one, else unknown (the tokens are recorded). The call's cap
  from the run's shared budget ledger stops the tool loop (``engine.agents.openai.chat``).
* Failures: 429/5xx, dropped connections and malformed responses retried with backoff inside a
  retry window; 401/404 fail at once; every string that leaves the backend is redacted.
* The call's deadline (REQ-OR-034, ``engine.agents.call_deadline``): no new turn once it is
  near (the last text is the answer), and a request still in flight at it is cut.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import anyio
import structlog

from engine.agents.base import AgentContext, AgentResult
from engine.agents.call_deadline import CallClock, cut_message
from engine.agents.call_deadline import wrap_up_s as default_wrap_up_s
from engine.agents.errors import BackendUnavailable
from engine.agents.openai.chat import BudgetStop, Conversation, Features
from engine.agents.openai.failures import classify, explain_for_start
from engine.agents.openai.tools import ToolBox, tool_specs
from engine.agents.retry import DEFAULT_BACKOFF, Sleep, TryFailure, add_try_usage, with_earlier_tries
from engine.agents.roles import role_settings
from engine.agents.secrets import Redactor
from engine.agents.structured import MalformedOutput, validate_structured
from events.agents import build_default_agent_configs
from events.core import AgentCallCompleted, AgentCallFailed, AgentCallRequested
from events.domain import PipelineConfig
from handlers.prompts.extract import longest_fenced_block
from handlers.prompts.system import render_system_prompt

log = structlog.get_logger("engine.agents.openai")

MODEL_ENV = "MLE_STAR_MODEL"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
RETRY_WINDOW_S = 300.0
REQUEST_TIMEOUT_S = 600.0
DEFAULT_MAX_TURNS = 12  # a role without its own limit
CLAUDE_DEFAULT_MODEL = PipelineConfig.model_fields["model"].default


def _flag(value: str | None, default: bool) -> bool:
    if value is None or not value.strip():
        return default
    return value.strip().lower() not in {"0", "false", "no", "off"}


def resolve_openai_model(config: PipelineConfig, env: Mapping[str, str]) -> str:
    """config ``model`` (when it is not the Claude default) > ``MLE_STAR_MODEL``; else refuse."""
    if config.model and config.model != CLAUDE_DEFAULT_MODEL:
        return config.model
    named = (env.get(MODEL_ENV) or "").strip()
    if named:
        return named
    raise BackendUnavailable("the openai backend needs a model name: set MLE_STAR_MODEL (e.g. "
                             "MLE_STAR_MODEL=qwen2.5-coder:32b) or --set model=NAME, or choose --agent builtin to run offline")


def openai_module() -> Any:
    """The official client, imported only when this backend is used (an optional extra)."""
    try:
        import openai
    except ImportError:
        raise BackendUnavailable("the openai backend needs the openai client: "
                                 "pip install 'mle-engine[openai]' (or pip install openai)") from None
    return openai


class OpenAIBackend:
    name = "openai"

    def __init__(self, config: PipelineConfig, *, env: Mapping[str, str] | None = None,
                 sleep: Sleep = anyio.sleep, backoff: tuple[float, ...] = DEFAULT_BACKOFF,
                 retry_window_s: float = RETRY_WINDOW_S, wrap_up_s: float | None = None) -> None:
        source = os.environ if env is None else env
        self.base_url = (source.get("OPENAI_BASE_URL") or "").strip().rstrip("/")
        key = (source.get("OPENAI_API_KEY") or "").strip()
        if not key and not self.base_url:
            raise BackendUnavailable("the openai backend needs OPENAI_API_KEY (the OpenAI API) or OPENAI_BASE_URL "
                                     "(a local or gateway endpoint such as http://localhost:8000/v1)")
        self.config = config
        self.model = resolve_openai_model(config, source)
        self.price = config.model_prices.get(self.model)
        self.credential = "OPENAI_API_KEY" if key else "no key (OPENAI_BASE_URL only)"
        self._key = key or "no-key"  # the client insists on a value; keyless local servers ignore it
        self._redactor = Redactor.from_env(source)
        self.features = Features(stream=_flag(source.get("ENGINE_OPENAI_STREAM"), False),
                                 tools=_flag(source.get("ENGINE_OPENAI_TOOLS"), True),
                                 json_schema=_flag(source.get("ENGINE_OPENAI_JSON_SCHEMA"), True))
        self._sleep = sleep
        self._backoff = tuple(backoff)
        self._retry_window_s = retry_window_s
        self._wrap_up_s = wrap_up_s  # None: call_deadline.wrap_up_s of each call's time limit
        self._configs = build_default_agent_configs()
        openai_module()  # a missing extra is said at start, not at the first call
        from engine.sandbox import SandboxUnavailable, resolve_mode

        try:  # the run's --sandbox: where bubblewrap works, the model's commands run in it
            self.sandbox_mode = resolve_mode(getattr(config, "sandbox", "auto"))
        except SandboxUnavailable as exc:
            raise BackendUnavailable(str(exc)) from None

    @property
    def endpoint(self) -> str:
        return self.base_url or DEFAULT_BASE_URL

    def describe(self) -> str:
        price = (f"${self.price.input_per_mtok:g}/${self.price.output_per_mtok:g} per M tokens" if self.price
                 else "cost unknown: no model_prices entry")
        return f"backend: openai (model {self.model} at {self.endpoint}, {price})"

    def redact(self, text: str) -> str:
        return self._redactor.text(text)

    def client(self) -> Any:
        """A new client: one per try (an HTTP connection pool belongs to one event loop, and the
        start-up check runs in another loop than the calls); the caller closes it."""
        return openai_module().AsyncOpenAI(api_key=self._key, base_url=self.endpoint, max_retries=0,
                                           timeout=REQUEST_TIMEOUT_S)

    # --- start-up check --------------------------------------------------------------------

    async def preflight(self, *, timeout_s: float | None = None) -> Any:
        """One tiny request: a bad key, an unknown model or an unreachable endpoint stops the start."""
        from engine.agents.preflight import PREFLIGHT_PROMPT, PREFLIGHT_TIMEOUT_S, PreflightResult

        timeout_s = PREFLIGHT_TIMEOUT_S if timeout_s is None else timeout_s
        started = time.monotonic()
        try:
            async with self.client() as client:
                conversation = Conversation(client, self.model, Features(stream=False), self.price, 1, None,
                                            "engine-preflight")
                with anyio.fail_after(timeout_s):
                    await conversation.run([{"role": "user", "content": PREFLIGHT_PROMPT}])
        except TimeoutError:
            raise BackendUnavailable(f"no answer from the model API at {self.endpoint} within {timeout_s:g} s; "
                                     "check OPENAI_BASE_URL and that the server is running") from None
        except Exception as exc:
            failure = classify(exc, self.endpoint, self.model)
            status = getattr(exc, "status_code", None)
            if failure.transient and isinstance(status, int):  # it answered, busy: calls retry on their own
                log.warning("preflight_transient", endpoint=self.endpoint, error=self.redact(failure.message)[:200])
                return PreflightResult(ok=True, cost_usd=None, duration_s=round(time.monotonic() - started, 3),
                                       detail="endpoint busy")
            raise BackendUnavailable(self.redact(explain_for_start(failure, self.endpoint, self.model))) from None
        cost = conversation.spend.cost(self.price)
        log.info("preflight_ok", endpoint=self.endpoint, model=self.model, cost_usd=cost)
        return PreflightResult(ok=True, cost_usd=cost, duration_s=round(time.monotonic() - started, 3))

    # --- one call ----------------------------------------------------------------------------

    async def call(self, request: AgentCallRequested, ctx: AgentContext) -> AgentResult:
        started = time.monotonic()
        clock = CallClock(ctx.time_limit_s)  # the call's deadline holds across its tries
        total_cost: float | None = None
        usage: dict[str, Any] = {}  # of the failed tries so far
        attempt = 0
        while True:
            attempt += 1
            result, failure = await self._attempt(request, clock.for_try(ctx), attempt)
            if result is not None:
                return with_earlier_tries(result, total_cost, usage)  # earlier failed tries cost money too
            assert failure is not None
            usage = add_try_usage(usage, failure.usage)
            if failure.cost_usd is not None:
                total_cost = (total_cost or 0.0) + failure.cost_usd
            if not failure.transient or attempt > len(self._backoff):
                break
            delay = self._backoff[attempt - 1]
            if time.monotonic() - started + delay > self._retry_window_s:
                failure = TryFailure(failure.message + f" (retry window of {self._retry_window_s:g} s used up)", True)
                break
            if not clock.allows(delay):
                failure = TryFailure(failure.message + " (no time left before the call's deadline for another try)",
                                     True)
                break
            log.warning("agent_call_retry", effect_id=request.effect_id, agent_type=request.agent_type,
                        attempt=attempt, delay_s=delay, error=self.redact(failure.message)[:300])
            await self._sleep(delay)
        spent = round(time.monotonic() - started, 1)
        prefix = f"gave up after {attempt} attempts in {spent:g} s: " if failure.transient and attempt > 1 else ""
        log.error("agent_call_failed", effect_id=request.effect_id, agent_type=request.agent_type, attempts=attempt,
                  error=self.redact(failure.message)[:300])
        return AgentCallFailed(effect_id=request.effect_id, error=self.redact(prefix + failure.message),
                               attempts=attempt, cost_usd=total_cost, usage=self._redactor.value(usage))

    def _conversation(self, client: Any, request: AgentCallRequested, ctx: AgentContext, attempt: int,
                      deadline: float | None) -> Conversation:
        role = role_settings(request.agent_type, request.variant, self._configs)  # UnknownRole: a ValueError
        max_turns, schema_model = role.max_turns, role.output_model
        specs = tool_specs(list(role.tools)) if self.features.tools else []
        toolbox = None
        if specs:
            work = ctx.work_dir
            roots = ((work / "input").resolve(), ctx.task_dir.resolve())
            toolbox = ToolBox(work, roots, self.redact,
                              deadline=lambda: None if deadline is None else max(0.0, deadline - time.monotonic()),
                              sandbox_mode=self.sandbox_mode)
        validate = None
        if request.output_schema:
            def validate(parsed: Any, text: str) -> Any:
                try:
                    return validate_structured(parsed, text, request.output_schema or {}, schema_model)
                except MalformedOutput as exc:
                    raise ValueError(str(exc)) from None
        conversation = Conversation(client, self.model, self.features, self.price,
                                    max_turns=max(2, max_turns or DEFAULT_MAX_TURNS) if toolbox else 2,
                                    budget_usd=ctx.budget_usd,
                                    request_id=f"{ctx.run_id}:{request.effect_id}:{attempt}"[:512],
                                    toolbox=toolbox, schema=request.output_schema or None,
                                    schema_name=str(request.agent_type), validate=validate)
        conversation.toolbox_specs = specs
        return conversation

    async def _attempt(self, request: AgentCallRequested, ctx: AgentContext,
                       attempt: int) -> tuple[AgentCallCompleted | None, TryFailure | None]:
        started = time.monotonic()
        limit = ctx.time_limit_s  # REQ-OR-034: no new turn near it, and whatever is in flight is cut at it
        deadline = None if limit is None else started + limit
        try:
            client = self.client()
            conversation = self._conversation(client, request, ctx, attempt, deadline)
        except ValueError as exc:
            return None, TryFailure(str(exc), transient=False)
        if deadline is not None and limit is not None:
            stop_at = deadline - (self._wrap_up_s if self._wrap_up_s is not None else default_wrap_up_s(limit))
            conversation.wrap_up = lambda: time.monotonic() >= stop_at
        system = request.system_prompt or render_system_prompt(ctx.task, ctx.gpu_info)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": request.prompt}]
        try:
            async with client:
                with anyio.fail_after(limit):
                    text, structured = await conversation.run(messages)
        except anyio.get_cancelled_exc_class():
            if ctx.on_abandoned is not None:  # the engine cancelled the call: say what it spent
                # A request still out when cancelled may have been billed: then the cost is unknown
                # (the ledger keeps the call's whole cap as spent), with the tokens known so far.
                spend = conversation.spend
                ctx.on_abandoned(None if spend.in_flight else spend.cost(self.price), spend.tokens())
            raise
        except TimeoutError:
            return None, self._spent(conversation, TryFailure(cut_message(limit or 0.0, f"{conversation.spend.turns} "
                                                                          "turns done"), transient=False))
        except BudgetStop as exc:
            return None, self._spent(conversation, TryFailure(str(exc), transient=False))
        except ValueError as exc:
            if type(exc).__name__ == "JSONDecodeError" or "no choices" in str(exc):
                return None, self._spent(conversation, classify(exc, self.endpoint, self.model))
            return None, self._spent(conversation, TryFailure(f"malformed output: {exc}", transient=False))
        except Exception as exc:  # the client's errors, and anything else: never raise to the engine
            return None, self._spent(conversation, classify(exc, self.endpoint, self.model))
        return self._completed(request, conversation, text, structured, time.monotonic() - started), None

    def _spent(self, conversation: Conversation, failure: TryFailure) -> TryFailure:
        """The try's failure with what it spent before it failed."""
        spend = conversation.spend
        return replace(failure, cost_usd=spend.cost(self.price),
                       usage={**spend.tokens(), "num_turns": spend.turns, "model": self.model})

    def _completed(self, request: AgentCallRequested, conversation: Conversation, text: str, structured: Any,
                   wall_s: float) -> AgentCallCompleted:
        spend = conversation.spend
        cost = spend.cost(self.price)
        usage: dict[str, Any] = {"input_tokens": spend.input_tokens, "output_tokens": spend.output_tokens,
                                 "num_turns": spend.turns, "model": self.model,
                                 "cost_source": ("model_prices" if self.price is not None else
                                                 "endpoint" if cost is not None else "unknown")}
        if conversation.stopped_for_deadline:
            usage["stopped_for_deadline"] = True
        if conversation.structured_mode:
            usage["structured_output"] = conversation.structured_mode
            usage["structured_repaired"] = conversation.repaired
        if conversation.toolbox is not None:
            usage["tool_calls"] = list(conversation.toolbox.calls)
            if conversation.toolbox.refused:
                usage["denied_tool_uses"] = list(conversation.toolbox.refused)
        usage["tools"] = ("on" if conversation.toolbox_specs and self.features.tools else
                          "off" if conversation.toolbox_specs else "none for this role")
        if self.features.notes:
            usage["endpoint_notes"] = list(self.features.notes)
        r = self._redactor
        completed = AgentCallCompleted(effect_id=request.effect_id, text=r.text(text),
                                       code=None if structured is not None else longest_fenced_block(r.text(text)),
                                       structured=r.value(structured) if structured is not None else None,
                                       cost_usd=cost, usage=r.value(usage), duration_s=round(wall_s, 3))
        log.info("agent_call_completed", effect_id=request.effect_id, agent_type=request.agent_type, cost_usd=cost,
                 num_turns=spend.turns, duration_s=completed.duration_s)
        return completed
