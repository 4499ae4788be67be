"""One try of one agent call over Chat Completions: the turns of a conversation.

A turn is one ``chat.completions.create`` (streamed or not). When the model calls tools, their
answers go back as ``tool`` messages and the next turn starts, up to the role's turn limit; the
last allowed turn offers no tools, so the model has to answer. Before each further turn the
conversation checks the call's budget cap (``AgentContext.budget_usd``, the run's shared
ledger): if the next turn, estimated from the last one, would pass it, the call stops there.

Features an endpoint may lack are learnt on the way (``Features``, shared by the backend's
calls): a 400 that names ``response_format`` turns JSON-schema output off (the answer's JSON is
then taken from the text and validated), one that names tools turns tools off; the turn is
asked again without it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import structlog

from engine.agents.openai.failures import unsupported_feature
from engine.agents.openai.tools import ToolBox
from events.domain import ModelPrice

log = structlog.get_logger("engine.agents.openai")

REPAIR_NOTE = ("Your previous reply did not contain a JSON object matching the required schema ({error}). "
               "Reply with only that JSON object, no prose, matching this JSON schema:\n{schema}")


class BudgetStop(Exception):
    """The next turn would pass the call's budget cap."""


@dataclass
class Features:
    """What the endpoint accepts (learnt during the run; ``None`` = not known yet)."""

    stream: bool = False
    tools: bool | None = True       # False: off by configuration or because the endpoint refused them
    json_schema: bool | None = True
    notes: list[str] = field(default_factory=list)


@dataclass
class Spend:
    input_tokens: int = 0
    output_tokens: int = 0
    reported_cost_usd: float | None = None  # a gateway's own figure (OpenRouter/LiteLLM ``usage.cost``)
    turns: int = 0
    streamed_chars: int = 0  # text received in the turn under way (for a cancelled call)
    last_prompt_tokens: int = 0
    last_completion_tokens: int = 0
    in_flight: bool = False  # a request is out: what it costs is not known until it answers

    def cost(self, price: ModelPrice | None) -> float | None:
        if price is not None:
            return round((self.input_tokens * price.input_per_mtok + self.output_tokens * price.output_per_mtok) / 1e6, 8)
        return self.reported_cost_usd

    def tokens(self) -> dict[str, int]:
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens + self.streamed_chars // 4}

    def add(self, usage: Any) -> None:
        if usage is None:
            return
        prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion = int(getattr(usage, "completion_tokens", 0) or 0)
        self.input_tokens += prompt
        self.output_tokens += completion
        self.last_prompt_tokens, self.last_completion_tokens = prompt, completion
        extra = getattr(usage, "model_extra", None) or {}
        cost = extra.get("cost")
        if isinstance(cost, (int, float)) and not isinstance(cost, bool):
            self.reported_cost_usd = (self.reported_cost_usd or 0.0) + float(cost)


@dataclass
class ChatReply:
    content: str
    tool_calls: list[dict[str, Any]]
    finish_reason: str | None


@dataclass
class Conversation:
    client: Any
    model: str
    features: Features
    price: ModelPrice | None
    max_turns: int
    budget_usd: float | None
    request_id: str
    toolbox: ToolBox | None = None
    schema: dict[str, Any] | None = None
    schema_name: str = "answer"
    validate: Callable[[Any, str], Any] | None = None  # (parsed JSON or None, text) -> value; raises ValueError
    spend: Spend = field(default_factory=Spend)
    structured_mode: str | None = None
    repaired: bool = False
    wrap_up: Callable[[], bool] | None = None  # True once the call's deadline is near: no new turn
    stopped_for_deadline: bool = False

    async def run(self, messages: list[dict[str, Any]]) -> tuple[str, Any]:
        """(final text, validated structured output or None). Raises client errors and BudgetStop."""
        text = ""
        for turn in range(self.max_turns):
            if turn > 0:
                if self.wrap_up is not None and self.wrap_up():  # REQ-OR-034: end with what there is
                    return self._stopped(text)
                self._check_budget(messages)
            last = turn == self.max_turns - 1
            reply = await self._turn(messages, offer_tools=not last)
            self.spend.turns += 1
            text = reply.content or text
            if reply.tool_calls and self.toolbox is not None and not last:
                messages.append({"role": "assistant", "content": reply.content or None, "tool_calls": [
                    {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                    for c in reply.tool_calls]})
                for call in reply.tool_calls:
                    answer = await self.toolbox.run(call["name"], call["arguments"])
                    messages.append({"role": "tool", "tool_call_id": call["id"], "content": answer})
                continue
            text = reply.content
            if self.schema is None or self.validate is None:
                return text, None
            try:
                return text, self.validate(self._parsed(text), text)
            except ValueError as exc:
                if self.repaired or last:
                    raise
                self.repaired = True  # one corrective turn, as a careful user would ask
                messages += [{"role": "assistant", "content": text},
                             {"role": "user", "content": REPAIR_NOTE.format(error=str(exc)[:300],
                                                                            schema=json.dumps(self.schema))}]
        if self.schema is not None and self.validate is not None:
            raise ValueError(f"no final answer within {self.max_turns} turns")
        return text, None

    def _stopped(self, text: str) -> tuple[str, Any]:
        """The call's deadline is near: no new turn; the answer is the last text the model gave."""
        self.stopped_for_deadline = True
        log.warning("agent_call_deadline", request_id=self.request_id, turns=self.spend.turns)
        if self.schema is None or self.validate is None:
            return text, None
        try:
            return text, self.validate(self._parsed(text), text)
        except ValueError:
            raise ValueError(f"stopped near the call's deadline after {self.spend.turns} turns, "
                             "before a final answer") from None

    def _parsed(self, text: str) -> Any:
        if self.structured_mode != "json_schema":
            return None
        try:
            return json.loads(text)
        except (json.JSONDecodeError, TypeError):
            return None  # the validator then looks for JSON in the text

    def _check_budget(self, messages: list[dict[str, Any]]) -> None:
        if self.budget_usd is None or self.price is None:
            return
        spent = self.spend.cost(self.price) or 0.0
        added = sum(len(str(m.get("content") or "")) for m in messages[-4:]) // 4
        estimate = ((self.spend.last_prompt_tokens + self.spend.last_completion_tokens + added) * self.price.input_per_mtok
                    + max(self.spend.last_completion_tokens, 1) * self.price.output_per_mtok) / 1e6
        if spent + estimate > self.budget_usd:
            raise BudgetStop(f"budget exhausted: the next turn (about ${estimate:.4f}) would pass this call's cap of "
                             f"${self.budget_usd:.4f} (${spent:.4f} spent in {self.spend.turns} turns)")

    async def _turn(self, messages: list[dict[str, Any]], *, offer_tools: bool) -> ChatReply:
        while True:
            asked: set[str] = set()
            kwargs: dict[str, Any] = {"model": self.model, "messages": messages,
                                      "extra_headers": {"X-Client-Request-Id": self.request_id}}
            if offer_tools and self.toolbox is not None and self.features.tools:
                kwargs["tools"] = self.toolbox_specs
                asked.add("tools")
            if self.schema is not None and self.features.json_schema:
                kwargs["response_format"] = {"type": "json_schema", "json_schema": {
                    "name": self.schema_name, "schema": self.schema, "strict": False}}
                asked.add("json_schema")
                self.structured_mode = "json_schema"
            elif self.schema is not None:
                self.structured_mode = "json_in_text"
            self.spend.in_flight = True
            try:
                reply = await (self._streamed(kwargs) if self.features.stream else self._whole(kwargs))
                self.spend.in_flight = False
                return reply
            except Exception as exc:
                self.spend.in_flight = False
                feature = unsupported_feature(exc, asked)
                if feature is None:
                    raise
                setattr(self.features, feature, False)
                note = f"the endpoint refused {feature}; continuing without ({str(exc)[:160]})"
                self.features.notes.append(note)
                log.warning("openai_feature_off", feature=feature, model=self.model)

    toolbox_specs: list[dict[str, Any]] = field(default_factory=list)

    async def _whole(self, kwargs: dict[str, Any]) -> ChatReply:
        response = await self.client.chat.completions.create(**kwargs)
        if not getattr(response, "choices", None):
            raise ValueError("the response has no choices")
        self.spend.add(response.usage)
        choice = response.choices[0]
        message = choice.message
        calls = [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments or "{}"}
                 for c in (message.tool_calls or []) if getattr(c, "function", None) is not None]
        return ChatReply(message.content or "", calls, choice.finish_reason)

    async def _streamed(self, kwargs: dict[str, Any]) -> ChatReply:
        stream = await self.client.chat.completions.create(**kwargs, stream=True,
                                                           stream_options={"include_usage": True})
        parts: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        finish: str | None = None
        usage = None
        self.spend.streamed_chars = 0
        async with stream:
            async for chunk in stream:
                if getattr(chunk, "usage", None) is not None:
                    usage = chunk.usage
                for choice in chunk.choices or []:
                    delta = choice.delta
                    if delta is not None and delta.content:
                        parts.append(delta.content)
                        self.spend.streamed_chars += len(delta.content)
                    for piece in (delta.tool_calls or []) if delta is not None else []:
                        slot = calls.setdefault(piece.index, {"id": "", "name": "", "arguments": ""})
                        slot["id"] = piece.id or slot["id"]
                        if piece.function is not None:
                            slot["name"] = piece.function.name or slot["name"]
                            slot["arguments"] += piece.function.arguments or ""
                    finish = choice.finish_reason or finish
        self.spend.streamed_chars = 0
        if usage is None:  # a server that does not report usage in streams: estimate, and say so
            usage_note = "estimated from characters (the stream carried no usage)"
            if usage_note not in self.features.notes:
                self.features.notes.append(usage_note)
            prompt = len(json.dumps(kwargs["messages"])) // 4
            usage = _Usage(prompt, sum(map(len, parts)) // 4)
        self.spend.add(usage)
        ordered = [calls[i] for i in sorted(calls)]
        for i, call in enumerate(ordered):
            call["id"] = call["id"] or f"call_{i}"
        return ChatReply("".join(parts), ordered, finish)


@dataclass
class _Usage:
    prompt_tokens: int
    completion_tokens: int
    model_extra: dict[str, Any] = field(default_factory=dict)
