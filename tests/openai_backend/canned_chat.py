"""A "model" behind the Chat Completions stand-in that answers the engine's real prompts.

It recognises which of our prompt templates made the user message (``tests/replays/fake_cli.
recognise``) and answers with the canned answers of ``tests/replays/canned.py``: prose with a
real scikit-learn script in a fenced block, or the structured answer — as the whole content
when the request carries a JSON-schema ``response_format``, else as a fenced JSON block inside
prose (what a model without schema support does). With ``explore=True`` a role that has tools
first looks at ``input/`` (``run_command ls input``, or ``list_files`` for read-only roles), so
a run proves the agent sees the task's data where the prompts say it is. ``fail_first`` maps an
HTTP status to how many of the first pipeline requests get it.
"""

from __future__ import annotations

import json
import threading

from engine.agents.preflight import PREFLIGHT_PROMPT
from tests.openai_backend.chat_api import Call, Exchange, Fail, Garbage, Reply, Text, Tools
from tests.replays import canned
from tests.replays.fake_cli import recognise
from tests.support.evolve_model import EvolutionAnswers, recognise_evolution
from tests.support.scripted_answer import scripted_answer


def effect_of(exchange: Exchange) -> str:
    """The effect id the backend names in ``X-Client-Request-Id`` (``run:effect:attempt``)."""
    raw = exchange.headers.get("x-client-request-id", "")
    return raw.split(":", 1)[1].rsplit(":", 1)[0] if raw.count(":") >= 2 else ""


class CannedChatModel:
    def __init__(self, scenario: str = "default", *, explore: bool = False,
                 fail_first: dict[int | str, int] | None = None, evolution: EvolutionAnswers | None = None,
                 leak_key: bool = False) -> None:
        self.evolution = evolution
        self.leak_key = leak_key  # echo the key the request carried (a careless proxy or model)
        self.scenario = canned.SCENARIOS[scenario]
        self.explore = explore
        self._failures = [status for status, n in (fail_first or {}).items() for _ in range(n)]
        self._lock = threading.Lock()
        self.prompts: list[str] = []
        self.effects: list[str] = []
        self.explored: list[str] = []

    def _prompt(self, exchange: Exchange) -> str:
        texts = exchange.user_texts()
        if texts and texts[0].strip() == PREFLIGHT_PROMPT:
            return PREFLIGHT_PROMPT
        for text in texts:
            try:
                recognise(text)
                return text
            except SystemExit:
                if self.evolution is not None and recognise_evolution(text) is not None:
                    return text
        raise AssertionError(f"no prompt of ours in this request: {[t[:120] for t in texts]}")

    def __call__(self, exchange: Exchange) -> Reply:
        prompt = self._prompt(exchange)
        if prompt == PREFLIGHT_PROMPT:
            return Text("ready")
        with self._lock:
            if exchange.turn() == 0:
                self.prompts.append(prompt)
                self.effects.append(effect_of(exchange))
                if self._failures:
                    status = self._failures.pop(0)
                    return Garbage() if status == "garbage" else Fail(int(status), f"stand-in error {status}")
        if self.explore and exchange.turn() == 0 and exchange.tool_names:
            if "run_command" in exchange.tool_names:
                return Tools([Call("run_command", {"command": "ls input"})], content="Let me look at the data.")
            return Tools([Call("list_files", {"path": "input"})])
        results = exchange.tool_results()
        if self.explore and results and exchange.turn() == 1:
            with self._lock:
                self.explored.append(results[0])
        text, structured = self._answer(prompt, effect_of(exchange))
        if self.leak_key:
            key = exchange.headers.get("authorization", "").removeprefix("Bearer ")
            text = f"(the key I was called with: {key})\n{text or ''}"
        if structured is None:
            return Text(text or "")
        if (exchange.body.get("response_format") or {}).get("type") == "json_schema":
            return Text(json.dumps(structured))
        return Text(f"{text or 'Here is the answer.'}\n\n```json\n{json.dumps(structured, indent=2)}\n```\n")

    def _answer(self, prompt: str, effect_id: str) -> tuple[str, dict | None]:
        return scripted_answer(prompt, effect_id, evolution=self.evolution, scenario=self.scenario)
