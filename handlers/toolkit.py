"""Small helpers every phase uses: asking an agent, reading the run's task, naming things."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from events.core import AgentCallCompleted, AgentCallFailed, Note
from events.enums import AgentType
from events.score import Score
from events.values import SolutionScript
from handlers.deadline import MAX_EVAL_TIMEOUT_S, MIN_EVAL_TIMEOUT_S, Deadline
from handlers.prompts import build_request, extract_code_block
from handlers.workflow import Workflow

__all__ = ["MIN_EVAL_TIMEOUT_S", "AgentReply", "ask", "code_of", "info", "looks_like_code", "pacing_deadline", "past",
           "score_rule", "session_for_scope", "soft_budget_s", "timeout_for", "warn", "with_score"]

AgentReply = AgentCallCompleted | AgentCallFailed


def score_rule(wf: Workflow) -> Score:
    """How this run's scores compare (the task's metric direction)."""
    return Score(wf.start.task.metric_direction)


async def ask(wf: Workflow, agent_type: AgentType | str, variables: Mapping[str, Any], *, name: str,
              variant: str | None = None, session_key: str | None = None) -> AgentReply:
    """Render the role's prompt in the handler (so the log holds it) and await the answer.

    Calls made inside a Phase 2 path default to that path's session key (REQ-OR-021), so the
    safety agents called from the shared sub-flows stay in the path's session too.
    """
    if session_key is None:
        session_key = session_for_scope(wf.scope)
    request = build_request(agent_type, variables, effect_id=wf.effect_id(name), variant=variant,
                            session_key=session_key)
    return await wf.agent(request)


def session_for_scope(scope: str) -> str | None:
    parts = scope.split("/")
    if len(parts) >= 2 and parts[0] == "phase2" and parts[1].startswith("path-"):
        return parts[1]
    return None


def code_of(reply: AgentReply) -> str | None:
    """The code an agent answered with (longest fenced block, REQ-SF-005), or None."""
    if not isinstance(reply, AgentCallCompleted):
        return None
    code = reply.code if reply.code else extract_code_block(reply.text or "")
    code = (code or "").strip("\n")
    return code if code.strip() else None


def looks_like_code(text: str) -> bool:
    """Whether extracted text is plausibly Python rather than prose (digest 03 §7.7)."""
    if not text.strip():
        return False
    try:
        compile(text, "<agent>", "exec")
    except (SyntaxError, ValueError):
        return False
    return True


def warn(wf: Workflow, message: str, **data: Any) -> None:
    wf.record(Note(level="warning", message=message, data=data))


def info(wf: Workflow, message: str, **data: Any) -> None:
    wf.record(Note(level="info", message=message, data=data))


def with_score(solution: SolutionScript, score: float | None, *, executable: bool) -> SolutionScript:
    """A copy of ``solution`` carrying its evaluation (scripts are never mutated in place)."""
    return solution.model_copy(update={"score": score, "is_executable": executable})


def pacing_deadline(wf: Workflow) -> Deadline:
    """The deadline a unit of work paces its steps by: the workflow's (``wf.deadline``), whose
    soft end, when it has none (a strategy run without the pipeline's windows: a phase alone, a
    baseline), is the run's time limit. Requests are checked against ``wf.deadline`` itself."""
    deadline = wf.deadline
    if deadline.soft_s is None:
        return Deadline(float(wf.config.time_limit_seconds), deadline.hard_s, deadline.fit_s)
    return deadline


def past(wf: Workflow) -> bool:
    """The soft end of the unit's deadline (``pacing_deadline``) has passed: it starts no new step."""
    return pacing_deadline(wf).passed(wf.now)


def timeout_for(wf: Workflow, want_s: float = MAX_EVAL_TIMEOUT_S) -> float:
    """An evaluation's timeout from the time the unit has left (never the whole 24 h; spec
    README): ``Deadline.timeout`` of its ``pacing_deadline``."""
    return pacing_deadline(wf).timeout(wf.now, want_s)


def soft_budget_s(wf: Workflow) -> float | None:
    """A unit's time as its ``PhaseStarted`` records it: from now to the soft end of its deadline
    (None when the workflow has none of its own)."""
    soft_s = wf.deadline.soft_s
    return None if soft_s is None else soft_s - wf.now
