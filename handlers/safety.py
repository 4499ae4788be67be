"""The safety agents (spec 03): leakage check and fix, one debugger step, the data-usage check.

Each function takes a script and returns a script; none mutates its input (REQ-SF-035) and
none raises for an agent's bad answer: a bad answer leaves the script as it was, with a
warning in the log.
"""

from __future__ import annotations

from events.agent_outputs import LeakageDetectionOutput
from events.core import AgentCallCompleted
from events.enums import AgentType
from events.values import SolutionScript
from handlers.prompts import DATA_ALL_USED, extract_code_block
from handlers.toolkit import ask, code_of, info, looks_like_code, warn
from handlers.workflow import Workflow

SCORE_PHRASE = "Final Validation Performance"


def _strip_fences(block: str) -> str:
    # Digest 03 §7.2: models often wrap the JSON code_block in fences; the script has none.
    return extract_code_block(block) if "```" in block else block


async def check_and_fix_leakage(wf: Workflow, solution: SolutionScript, *, name: str) -> SolutionScript:
    """REQ-SF-020: detect, then correct every block answered "Yes Data Leakage".

    The correction agent sees the whole script (REQ-SF-017). Its answer is spliced in place of
    the leaky block (REQ-SF-021), unless the answer is itself a whole program (it prints the
    score line the block does not have), in which case it replaces the script: splicing a
    whole program into a block would duplicate it (digest 03 §7.1).
    """
    reply = await ask(wf, AgentType.leakage, {"code": solution.content}, name=f"{name}/leak-detect",
                      variant="detection")
    if not isinstance(reply, AgentCallCompleted) or reply.structured is None:
        warn(wf, "leakage detection gave no usable answer; script kept unchanged (REQ-SF-038)",
             error=getattr(reply, "error", None) or (getattr(reply, "text", None) or "")[:200])
        return solution
    try:
        detection = LeakageDetectionOutput.model_validate(reply.structured)
    except ValueError as exc:
        warn(wf, "leakage detection answer did not parse; script kept unchanged (REQ-SF-038)",
             error=str(exc).splitlines()[0])
        return solution
    current = solution
    for i, answer in enumerate(detection.answers):
        if answer.leakage_status != "Yes Data Leakage":
            continue
        block = _strip_fences(answer.code_block)
        fix = await ask(wf, AgentType.leakage, {"code": current.content}, name=f"{name}/leak-fix-{i}",
                        variant="correction")
        fixed = code_of(fix)
        if fixed is None:
            warn(wf, "leakage correction gave no code; block kept", block=block[:200])
            continue
        if SCORE_PHRASE in fixed and SCORE_PHRASE not in block:
            current = current.model_copy(update={"content": fixed, "score": None})
            info(wf, "leakage corrected (whole script returned)", answer=i)
            continue
        try:
            current = current.replace_block(block, fixed)
            info(wf, "leakage corrected", answer=i, block_chars=len(block))
        except ValueError:
            warn(wf, "leakage block not found in the script; replacement skipped (REQ-SF-021)", answer=i)
    return current


async def debug_once(wf: Workflow, solution: SolutionScript, bug: str, *, name: str) -> SolutionScript | None:
    """REQ-SF-007: one debugger call. None when the debugger has nothing runnable to offer
    (a failed call, no code, or the same script back): re-running it would only repeat the error."""
    reply = await ask(wf, AgentType.debugger, {"code": solution.content, "bug": bug}, name=name)
    fixed = code_of(reply)
    if fixed is None or fixed.strip() == solution.content.strip():
        warn(wf, "debugger returned no new code (REQ-SF-040)", error=getattr(reply, "error", None))
        return None
    if SCORE_PHRASE not in fixed:
        # REQ-SF-010 asks to append a print of a variable that usually does not exist (digest
        # §7.3); we record the problem and let the evaluation and next debug round handle it.
        warn(wf, "debugged script no longer prints the score line (REQ-SF-010)")
    return SolutionScript(content=fixed, phase=solution.phase, source_model=solution.source_model)


async def check_data_usage(wf: Workflow, solution: SolutionScript, *, name: str) -> SolutionScript:
    """REQ-SF-028/030/039: the data agent's revised script, or the original when it confirms
    that all data is used or answers with something that is not code."""
    reply = await ask(wf, AgentType.data, {"initial solution": solution.content,
                                            "task description": wf.start.task.description}, name=name)
    if not isinstance(reply, AgentCallCompleted):
        warn(wf, "data usage check failed; script kept", error=reply.error)
        return solution
    if DATA_ALL_USED.lower() in (reply.text or "").lower() and not reply.code:
        info(wf, "data agent: all the provided information is used")
        return solution
    code = code_of(reply)
    if code is None or not looks_like_code(code) or code.strip() == solution.content.strip():
        if code is None or not looks_like_code(code):
            warn(wf, "data agent answer is neither the confirmation nor code; script kept (REQ-SF-039)",
                 raw=(reply.text or "")[:200])
        return solution
    info(wf, "data agent revised the script")
    return SolutionScript(content=code, phase=solution.phase, source_model=solution.source_model)
