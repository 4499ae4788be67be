"""Phase 2's extractor (Algorithm 2, line 8): the code block to refine and its plan, verbatim in
s_t, with the recovery ladder of REQ-P2O-018/034 (re-ask once on an unparseable answer, up to two
corrective re-asks for a block not in the script, then the list's other plans)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from events.agent_outputs import ExtractorOutput
from events.core import AgentCallCompleted
from events.enums import AgentType
from events.phase2 import BlockMatch
from events.values import SolutionScript
from handlers.mlestar.phase2_inner import locate_block
from handlers.prompts import build_request, extract_code_block
from handlers.toolkit import AgentReply, info, warn
from handlers.workflow import Workflow

MAX_PARSE_RETRIES = 1   # REQ-P2O-034
MAX_REASKS = 2          # REQ-P2O-018


def parse_extractor(reply: AgentReply) -> ExtractorOutput | None:
    """REQ-P2O-014: the structured answer, else JSON in the text (a bare list of plans accepted)."""
    if not isinstance(reply, AgentCallCompleted):
        return None
    data: Any = reply.structured
    if data is None:
        text = reply.text or ""
        try:
            data = json.loads(extract_code_block(text) if "```" in text else text)
        except ValueError:
            return None
    if isinstance(data, list):
        data = {"plans": data}
    try:
        return ExtractorOutput.model_validate(data)
    except ValueError:
        return None


def reask_note(bad_block: str) -> str:
    return ("\n\nIMPORTANT: the code block you chose last time is not in the current solution:\n"
            f"```python\n{bad_block[:1000]}\n```\n"
            "Copy the code block exactly as it appears in the current solution, character for "
            "character, with the same indentation and line breaks.")


@dataclass(frozen=True)
class Extraction:
    code_block: str
    plan: str
    match: BlockMatch
    calls: int
    plan_index: int = 0


@dataclass(frozen=True)
class NoBlock:
    reason: str
    calls: int


async def _ask_extractor(wf: Workflow, variables: dict[str, Any], *, name: str, note: str | None,
                         session_key: str | None) -> AgentReply:
    request = build_request(AgentType.extractor, variables, effect_id=wf.effect_id(name), session_key=session_key)
    if note:  # the corrective note is part of the logged prompt and of its variables
        request = request.model_copy(update={"prompt": request.prompt + note,
                                             "variables": {**request.variables, "corrective_note": note}})
    return await wf.agent(request)


async def extract_block(wf: Workflow, t: int, s_t: SolutionScript, summary: str, previous_blocks: list[str],
                        session_key: str | None) -> Extraction | NoBlock:
    """A_extractor with the recovery ladder of REQ-P2O-018/034: the block, or why there is none."""
    variables = {"solution_script": s_t.content, "ablation_summary": summary,
                 "previous_code_blocks": previous_blocks}
    answers: list[ExtractorOutput] = []
    calls = parse_failures = reasks = 0
    note: str | None = None
    while True:
        calls += 1
        reply = await _ask_extractor(wf, variables, name=f"t{t}/extractor" + (f"-{calls}" if calls > 1 else ""),
                                     note=note, session_key=session_key)
        answer = parse_extractor(reply)
        if answer is None:                                        # REQ-P2O-034: re-ask once
            warn(wf, "extractor answer is not a valid ExtractorOutput", outer_step=t, call=calls,
                 raw=str(getattr(reply, "text", None) or getattr(reply, "error", ""))[:500])
            if parse_failures >= MAX_PARSE_RETRIES:
                break
            parse_failures += 1
            continue
        answers.append(answer)
        first = answer.plans[0]
        found = locate_block(first.code_block, s_t.content) if first.plan.strip() else None
        if found is not None:                                     # rungs 0-1 (exact, normalised)
            info(wf, "code block validated", outer_step=t, method=found[1], reasks=reasks)
            return Extraction(found[0], first.plan.strip(), "reasked" if reasks else found[1], calls)
        warn(wf, "extractor's code block is not in the solution", outer_step=t, block=first.code_block[:100],
             reask=reasks + 1 if reasks < MAX_REASKS else None)
        if reasks >= MAX_REASKS:
            break
        reasks += 1                                               # rung 2: corrective re-ask
        note = reask_note(first.code_block)
    for answer in answers:                                        # rung 3: the other plans
        for i, alt in enumerate(answer.plans[1:], start=1):
            found = locate_block(alt.code_block, s_t.content) if alt.plan.strip() else None
            if found is not None:
                return Extraction(found[0], alt.plan.strip(), "alternative", calls, plan_index=i)
    if not answers:                                               # rung 4: skip the step
        return NoBlock("the extractor gave no parseable answer (REQ-P2O-034)", calls)
    return NoBlock("no proposed code block occurs in the solution (REQ-P2O-018)", calls)
