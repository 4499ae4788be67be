"""One node's life after generation: execute → chained debug (≤ ``max_chained_debug``) → review.

Plan §8 with the decisions' failure list: a version fails when its genes do not validate (it
is then not run: a script whose genes cannot be used is not worth the evaluation time), when
it raises or times out, prints no score (or NaN), or leaves no valid submission. Attempt i
gets the code AND the error/output of attempt i-1 (the chain), never the original again.
Every version is a recorded solution naming the version it came from; none is a node. The
node is the last version tried; if it still fails it is dead. No attempt starts once the
search deadline has passed (the node is then dead too: it failed and nobody fixed it).

Dead nodes are not reviewed: review only feeds approach tags (dead nodes are excluded from
the draft history) and the buggy flag (a dead node is out of every pool anyway), so a review
would be a call whose answer no decision reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from events.core import AgentCallCompleted, EvaluationCompleted, SubmissionInfo
from events.enums import SolutionPhase
from events.evolution import DebugAttempted
from events.score import usable
from handlers.debugloop import DebugRules, debug_loop
from handlers.evaluation import bug_text, note_hidden_score
from handlers.evolution.genes import parse_genes, structure_error
from handlers.evolution.prompts import debug_request, review_request
from handlers.prompts import longest_fenced_block
from handlers.toolkit import AgentReply, code_of, looks_like_code, pacing_deadline, timeout_for
from handlers.workflow import Workflow

OUTPUT_TAIL = 3000
ERROR_TAIL = 4000


@dataclass
class Version:
    code: str
    solution_id: str
    ok: bool = False
    score: float | None = None
    error: str = ""            # what is wrong, for the debugger (empty when ok)
    output: str = ""           # stdout/stderr tail of the run ("" when not run)
    submission: SubmissionInfo | None = None   # what the run left in ./final


@dataclass
class DevelopedVersion:
    version: Version
    debug_attempts: int
    dead: bool
    first_solution_id: str = ""
    is_buggy: bool = False
    approach_tag: str | None = None
    summary: str = ""
    review: dict[str, Any] = field(default_factory=dict)


def usable_code(reply: AgentReply) -> str | None:
    """The reply's code; None when the call failed, the answer is empty, or it is prose: no
    fenced block and text that does not even compile (a generation with no usable code makes a
    dead node; the debugger cannot fix an essay)."""
    code = code_of(reply)
    if code is None or not isinstance(reply, AgentCallCompleted):
        return None
    if not reply.code and longest_fenced_block(reply.text or "") is None and not looks_like_code(code):
        return None
    return code


def _tail(text: str, n: int) -> str:
    return text if len(text) <= n else "…" + text[-n:]


def failure_of(done: EvaluationCompleted, timeout_s: float) -> str:
    """'' when the run is usable, else the problem phrased for the debugger."""
    result = done.result
    if result.is_error:
        return bug_text(result, timeout_s)
    if not usable(result.score):
        return ("The script finished without an error but printed no usable score. Its last line must be "
                "exactly: Final Validation Performance: <score>")
    sub = done.submission
    if sub is not None and not sub.valid:
        reason = sub.reason or ("the file does not exist" if not sub.exists else "invalid file")
        return (f"The script did not leave a valid ./final/submission.csv ({reason}). It must write one row "
                "per test sample with the sample submission's columns.")
    return ""


async def check(wf: Workflow, version: Version, *, name: str) -> Version:
    genes = parse_genes(version.code)
    if not genes.valid:
        version.error = structure_error(genes)
        return version
    timeout = timeout_for(wf)
    done = await wf.evaluate(version.solution_id, name=name, purpose="evolve", timeout_s=timeout,
                             expect_submission=True)
    result = done.result
    version.submission = done.submission
    version.output = _tail((result.stdout or "") + ("\n" + result.stderr if result.stderr else ""), OUTPUT_TAIL)
    version.error = _tail(failure_of(done, timeout), ERROR_TAIL)
    version.ok = not version.error
    version.score = result.score if version.ok else None
    if version.ok:
        note_hidden_score(wf, version.solution_id, done.hidden_score)
    return version


async def develop(wf: Workflow, code: str, *, step: int, phase: SolutionPhase, origin: str,
                  parent_solutions: list[str], detail: dict[str, Any]) -> DevelopedVersion:
    """Run ``code`` through execution, the debug chain and (if it lives) review, under the
    workflow's deadline: no debug round starts past its soft end."""
    sid = wf.record_solution(code, phase=phase, origin=origin, parents=parent_solutions, detail=detail)
    chain = _DebugChain(wf, step, phase)
    first = await chain.check(Version(code=code, solution_id=sid), f"{chain.prefix}/eval")
    # The search's recorded runs ran a fix that came back after the deadline and checked none for
    # leakage: a replay asks for what they asked (handlers.debugloop).
    rules: DebugRules[Version] = DebugRules(attempts=wf.config.max_chained_debug, deadline=pacing_deadline(wf),
                                            late_fixes_run=True)
    current, attempts = await debug_loop(wf, chain, first, rules)
    if not current.ok:
        return DevelopedVersion(version=current, debug_attempts=attempts, dead=True, first_solution_id=sid)
    outcome = DevelopedVersion(version=current, debug_attempts=attempts, dead=False, first_solution_id=sid)
    await review(wf, outcome, step=step)
    return outcome


class _DebugChain:
    """A node's versions as the debug loop drives them (its ``DebugSteps``): attempt i gets the
    code and the error and output of attempt i-1, and each attempt is a ``DebugAttempted``."""

    def __init__(self, wf: Workflow, step: int, phase: SolutionPhase) -> None:
        self.wf, self.step, self.phase = wf, step, phase
        self.prefix = f"step-{step}"

    async def check(self, version: Version, name: str) -> Version:
        return await check(self.wf, version, name=name)

    def failed(self, version: Version) -> bool:
        return not version.ok

    async def fix(self, version: Version, attempt: int) -> Version | None:
        wf = self.wf
        reply = await wf.agent(debug_request(
            wf.effect_id(f"{self.prefix}/debug-{attempt}"), task_description=wf.start.task.description,
            code=version.code, error=version.error, output=version.output, attempt=attempt))
        fixed = usable_code(reply)
        if fixed is None:
            wf.record(DebugAttempted(step=self.step, attempt=attempt, input_solution_id=version.solution_id,
                                     input_error=version.error[:500], output_solution_id=None, ok=False,
                                     error="the debugger gave no code"))
            return None
        fid = wf.record_solution(fixed, phase=self.phase, origin="evo_debug", parents=[version.solution_id],
                                 detail={"step": self.step, "attempt": attempt})
        return Version(code=fixed, solution_id=fid)

    async def run(self, version: Version, attempt: int, previous: Version) -> Version:
        ran = await self.check(version, f"{self.prefix}/eval-{attempt}")
        self.wf.record(DebugAttempted(step=self.step, attempt=attempt, input_solution_id=previous.solution_id,
                                      input_error=previous.error[:500], output_solution_id=ran.solution_id,
                                      ok=ran.ok, error=ran.error[:500]))
        return ran


async def review(wf: Workflow, outcome: DevelopedVersion, *, step: int) -> None:
    """Approach tag, summary and the buggy flag. The score stays the harness's: a review may
    only flag a scored node buggy, never change its score. A failed review leaves the node
    valid with no tag."""
    v = outcome.version
    reply = await wf.agent(review_request(wf.effect_id(f"step-{step}/review"),
                                          task_description=wf.start.task.description, code=v.code,
                                          output=v.output))
    if not isinstance(reply, AgentCallCompleted):
        return
    data = reply.structured if isinstance(reply.structured, dict) else _json_object(reply.text or "")
    if not data:
        return
    tag = str(data.get("approach_tag") or "").strip().splitlines()
    outcome.approach_tag = tag[0].strip()[:200] if tag else None
    outcome.summary = str(data.get("summary") or "")[:1000]
    outcome.is_buggy = bool(data.get("is_buggy", data.get("is_bug", False)))
    outcome.review = {k: data[k] for k in sorted(data) if k in ("approach_tag", "summary", "is_buggy", "is_bug",
                                                               "metric")}


def _json_object(text: str) -> dict[str, Any]:
    import json

    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return {}
    try:
        value = json.loads(text[start:end + 1])
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
