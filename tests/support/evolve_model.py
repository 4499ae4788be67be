"""A "model" for the evolution strategy's prompts behind a model-API stand-in (Chat
Completions or Messages).

The evolution roles' prompts (handlers/evolution/prompts.py) are rendered from six templates.
This model reads a prompt back into the values that were filled in (the inverse of ``render``),
turns the rendered parts back into the structured values (draft history, gene plan, statistics),
and lets the offline builtin agent's evolution roles write the answer: real, runnable
scikit-learn programs with the seven section markers. The stand-in then sends that answer as a
model would: prose with a fenced program, or the review's JSON.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from engine.agents.base import AgentContext
from engine.agents.builtin import BuiltinBackend
from events.core import AgentCallCompleted, AgentCallRequested
from events.domain import PipelineConfig, TaskDescription
from handlers.evolution import prompts as evo

TEMPLATES = {"draft": evo.DRAFT, "merge": evo.MERGE, "mutate": evo.MUTATE, "evo_debug": evo.DEBUG,
             "review": evo.REVIEW, "profile_evolver": evo.PROFILE_EVOLVER}
_CONSTANTS = {"structure": evo.STRUCTURE_RULES, "run_rules": evo.RUN_RULES}
_HISTORY_LINE = re.compile(r"^- \[Step (\d+)\] (.*) → metric=(.*)$", re.M)
_GENE = re.compile(r"^### # \[SECTION: (\w+)\] — from (.*?)\n```python\n(.*?)\n```", re.M | re.S)


def _pattern(template: str) -> re.Pattern[str]:
    text = template.replace("{{", "\x00").replace("}}", "\x01")
    for name, value in _CONSTANTS.items():
        text = text.replace("{" + name + "}", value.replace("{", "\x02").replace("}", "\x03"))
    parts, seen, pos = [], set(), 0
    for m in re.finditer(r"\{([a-z_]+)\}", text):
        parts.append(re.escape(text[pos:m.start()]))
        name = m.group(1)
        parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>.*?)")
        seen.add(name)
        pos = m.end()
    parts.append(re.escape(text[pos:]))
    literal = "".join(parts)
    for mark, brace in (("\x00", "{"), ("\x01", "}"), ("\x02", "{"), ("\x03", "}")):
        literal = literal.replace(mark, re.escape(brace))
    return re.compile(literal, re.S)


PATTERNS = {role: _pattern(template) for role, template in TEMPLATES.items()}


def recognise_evolution(prompt: str) -> tuple[str, dict[str, Any]] | None:
    """(role, variables) of an evolution prompt, or None if it is not one."""
    for role, pattern in PATTERNS.items():
        m = pattern.fullmatch(prompt)
        if m is None:
            continue
        values: dict[str, Any] = dict(m.groupdict())
        if role == "draft":
            values["draft_history"] = [{"step": int(s), "approach_tag": tag, "metric": _number(metric)}
                                       for s, tag, metric in _HISTORY_LINE.findall(values.pop("history_block"))]
        if role == "merge":
            values["gene_plan"] = {locus: {"source": source, "code": code}
                                   for locus, source, code in _GENE.findall(values.pop("plan_text"))}
        if role == "profile_evolver":
            values["stats"] = json.loads(values.pop("stats_text"))
        if role == "evo_debug":
            values["attempt"] = int(values["attempt"])
        return role, values
    return None


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


class EvolutionAnswers:
    """Answers evolution prompts for one task (the builtin roles need to know the task)."""

    def __init__(self, task: TaskDescription, seed: int = 0) -> None:
        self.task = task
        self.seed = seed
        self._builtin = BuiltinBackend()

    def answer(self, role: str, values: dict[str, Any], effect_id: str) -> tuple[str, dict[str, Any] | None]:
        here = Path(".")
        ctx = AgentContext(run_id="stand-in", run_dir=here, work_dir=here, task=self.task, task_dir=here,
                           config=PipelineConfig(), seed=self.seed)
        request = AgentCallRequested(effect_id=effect_id or f"stand-in/{role}", agent_type=role, prompt="",
                                     variables=values)
        result = self._builtin.answer(request, ctx)
        if not isinstance(result, AgentCallCompleted):
            raise AssertionError(f"builtin could not answer {role}: {result.error}")
        if result.structured is not None:
            return "", result.structured
        text = result.text
        if result.code and result.code not in text:
            text += f"\n\n```python\n{result.code}\n```\n"
        return text, None
