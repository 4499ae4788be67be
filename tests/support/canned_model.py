"""A "model" behind the Messages-API stand-in that answers the engine's real prompts.

It reads the prompt the real Claude CLI forwards, recognises which of our prompt templates made
it (and so the role and the values filled in), and answers like a model would, with the canned
answers of ``tests/replays/canned.py``: prose with a real script in a fenced block, or — when the
CLI offers its ``StructuredOutput`` tool (the request had a JSON schema) — a call of that tool.
With ``explore=True`` a role that has Bash first looks at ``input/`` with a tool call, so a run
proves the agent sees the task's data where the prompts say it is.

``fail_first`` maps an HTTP status to how many of the first pipeline requests get it (e.g.
``{529: 1}``), to exercise the CLI's and the backend's retries. With ``evolution`` it also
answers the evolutionary search's prompts (``tests/support/evolve_model.py``).
"""

from __future__ import annotations

import json
import re
import threading

from engine.agents.preflight import PREFLIGHT_PROMPT
from tests.replays import canned
from tests.replays.fake_cli import recognise
from tests.support.evolve_model import EvolutionAnswers, recognise_evolution
from tests.support.messages_api import Exchange, Fail, Reply, Text, ToolCall, Tools, tool_result_text
from tests.support.scripted_answer import scripted_answer

_CALL_DIR = re.compile(r"/agents/([A-Za-z0-9_.\-]+?)(?=[/\"\\\s]|$)")


def effect_of(exchange: Exchange) -> str:
    """The effect id, from the call's working directory (``<run>/agents/<safe effect id>``)."""
    for found in _CALL_DIR.findall(json.dumps(exchange.body)):
        if not found.startswith("."):
            return found.replace("__", "/").replace("-n", "#")
    return ""


class CannedModel:
    def __init__(self, scenario: str = "default", *, explore: bool = False,
                 fail_first: dict[int, int] | None = None, evolution: EvolutionAnswers | None = None) -> None:
        self.evolution = evolution
        self.scenario = canned.SCENARIOS[scenario]
        self.explore = explore
        self._failures = [status for status, n in (fail_first or {}).items() for _ in range(n)]
        self._lock = threading.Lock()
        self.prompts: list[str] = []
        self.explored: list[str] = []  # what ``ls input`` showed the agent

    def _prompt(self, exchange: Exchange) -> str:
        texts = exchange.user_texts()
        for text in texts:
            if text.strip() == PREFLIGHT_PROMPT:
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
                if self._failures:
                    status = self._failures.pop(0)
                    return Fail(status, "Overloaded" if status == 529 else f"stand-in error {status}")
        if self.explore and "Bash" in exchange.tool_names and exchange.turn() == 0:
            return Tools([ToolCall("Bash", {"command": "ls input", "description": "look at the data"})])
        if answered_structured(exchange):  # the CLI acknowledged the structured answer
            return Text("Done.")
        results = exchange.tool_results()
        if self.explore and results and exchange.turn() == 1:
            self.explored.append(tool_result_text(results[0]))
        text, structured = self._answer(prompt, effect_of(exchange))
        if structured is not None and "StructuredOutput" in exchange.tool_names:
            return Tools([ToolCall("StructuredOutput", structured)], text=text or "")
        return Text(text or json.dumps(structured))

    def _answer(self, prompt: str, effect_id: str) -> tuple[str, dict | None]:
        return scripted_answer(prompt, effect_id, evolution=self.evolution, scenario=self.scenario)


def answered_structured(exchange: Exchange) -> bool:
    return any(isinstance(b, dict) and b.get("name") == "StructuredOutput"
               for m in exchange.messages if m.get("role") == "assistant"
               for b in (m.get("content") if isinstance(m.get("content"), list) else []))

