"""``engine rerun``: run a recorded run again and name the first decision that differs.

The new run gets the recorded run's task (its prepared public directory), config, seed and
strategy, and the replay backend (``replay:<run>``): every agent answer comes from the recorded
run, every evaluation is executed again. When it ends, the two logs' decision sequences are
compared position by position (type, scope, payload), ignoring fields that only measure time
(``*_s``, ``*_seconds``, ``created_at``…) and the runs' own directories in paths.
"""

from __future__ import annotations

import difflib
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.audit.runlog import AuditError, kind_of
from events.base import Envelope
from replay.verify import current_payload  # old event versions compare in today's shape

if TYPE_CHECKING:
    from engine.run.lifecycle import DatabaseUrl

VOLATILE_KEYS = frozenset({"created_at", "recorded_at", "peak_rss_mb", "cpu_s"})
RUN_DIR = "<run_dir>"


def is_volatile(key: str) -> bool:
    """Fields that measure the clock (driven time, durations, deadlines derived from it)."""
    return key in VOLATILE_KEYS or key.endswith(("_s", "_seconds"))


def normalise(value: Any, run_dir: str, *, strict: bool = False) -> Any:
    if isinstance(value, dict):
        return {k: normalise(v, run_dir, strict=strict) for k, v in value.items() if strict or not is_volatile(k)}
    if isinstance(value, list):
        return [normalise(v, run_dir, strict=strict) for v in value]
    if isinstance(value, str) and run_dir and run_dir in value:
        return value.replace(run_dir, RUN_DIR)
    return value


def decisions(envelopes: list[Envelope]) -> list[Envelope]:
    return [e for e in envelopes if kind_of(e.type) == "decision"]


@dataclass(frozen=True)
class Difference:
    index: int                    # position in the decision sequence (0-based)
    old: Envelope | None
    new: Envelope | None
    diff: str

    def describe(self) -> str:
        def head(env: Envelope | None) -> str:
            if env is None:
                return "(no such decision: the log ended)"
            p = env.payload
            key = p.get("effect_id") or p.get("solution_id") or p.get("phase") or p.get("message") or ""
            return f"seq {env.seq} {env.type} [{env.scope}] {str(key)[:80]}".rstrip()

        return (f"first difference at decision #{self.index}\n  recorded: {head(self.old)}\n"
                f"  rerun:    {head(self.new)}\n{self.diff}").rstrip()

    def to_json(self) -> dict[str, Any]:
        def side(env: Envelope | None) -> dict[str, Any] | None:
            return None if env is None else {"seq": env.seq, "type": env.type, "scope": env.scope}

        return {"index": self.index, "recorded": side(self.old), "rerun": side(self.new), "diff": self.diff}


def _record(env: Envelope, run_dir: str, strict: bool) -> dict[str, Any]:
    return {"type": env.type, "scope": env.scope, "payload": normalise(current_payload(env), run_dir, strict=strict)}


def _run_dir(envelopes: list[Envelope]) -> str:
    return str(envelopes[0].payload.get("run_dir", "")) if envelopes and envelopes[0].type == "RunStarted" else ""


def compare_decisions(old: list[Envelope], new: list[Envelope], *, strict: bool = False,
                      max_lines: int = 40) -> Difference | None:
    """The first position where the two runs' decisions differ, or None."""
    old_dir, new_dir = _run_dir(old), _run_dir(new)
    a, b = decisions(old), decisions(new)
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else None
        y = b[i] if i < len(b) else None
        rx = _record(x, old_dir, strict) if x else None
        ry = _record(y, new_dir, strict) if y else None
        if rx == ry:
            continue
        lines = list(difflib.unified_diff(_flat(rx), _flat(ry), "recorded", "rerun", lineterm="", n=1))
        if len(lines) > max_lines:
            lines = lines[:max_lines] + [f"… {len(lines) - max_lines} more diff lines"]
        return Difference(index=i, old=x, new=y, diff="\n".join(lines))
    return None


def _flat(value: Any, path: str = "") -> list[str]:
    """One line per leaf (``payload.score = 0.5``); long strings one line per line of text, so a
    diff of a changed prompt shows the changed lines, not the whole prompt."""
    if value is None and not path:
        return []
    if isinstance(value, dict):
        return [line for k in sorted(value) for line in _flat(value[k], f"{path}.{k}" if path else k)]
    if isinstance(value, list) and value and any(isinstance(v, (dict, list)) for v in value):
        return [line for i, v in enumerate(value) for line in _flat(v, f"{path}[{i}]")]
    if isinstance(value, str) and "\n" in value:
        return [f"{path} | {line}" for line in value.splitlines()]
    return [f"{path} = {json.dumps(value, default=str)}"]


def first_evaluation_change(old: list[Envelope], new: list[Envelope]) -> str | None:
    """The first re-executed evaluation whose outcome (score, error) differs from the recording:
    an input that changed, so the handlers may be deciding correctly on different facts."""
    def outcomes(envs: list[Envelope]) -> dict[str, tuple[Any, Any, int]]:
        return {e.payload["effect_id"]: (e.payload["result"].get("score"), e.payload["result"].get("is_error"), e.seq)
                for e in envs if e.type == "EvaluationCompleted"}

    was, now = outcomes(old), outcomes(new)
    for effect, (score, error, seq) in sorted(was.items(), key=lambda kv: kv[1][2]):
        if effect in now and now[effect][:2] != (score, error):
            n_score, n_error, n_seq = now[effect]
            return (f"evaluation {effect} gave score {score} (error {error}) at seq {seq} in the recorded run, "
                    f"score {n_score} (error {n_error}) at seq {n_seq} in the rerun")
    return None


@dataclass
class RerunOutcome:
    source_run_id: str
    new_run_id: str
    status: str
    strategy: str
    recorded_decisions: int
    rerun_decisions: int
    difference: Difference | None
    best_score: float | None = None
    evaluation_change: str | None = None

    def describe(self) -> str:
        head = (f"rerun of {self.source_run_id}: new run {self.new_run_id} {self.status} "
                f"(strategy {self.strategy}, best score {self.best_score}); decisions recorded "
                f"{self.recorded_decisions}, rerun {self.rerun_decisions}")
        if self.difference is None:
            return f"{head}\nno difference"
        why = ""
        if self.evaluation_change:
            why = ("\nan evaluation re-executed differently (an input, not a handler, changed): "
                   f"{self.evaluation_change}")
        return f"{head}\n{self.difference.describe()}{why}"

    def to_json(self) -> dict[str, Any]:
        return {"source_run_id": self.source_run_id, "new_run_id": self.new_run_id, "status": self.status,
                "strategy": self.strategy, "recorded_decisions": self.recorded_decisions,
                "rerun_decisions": self.rerun_decisions, "best_score": self.best_score,
                "identical": self.difference is None, "evaluation_change": self.evaluation_change,
                "difference": None if self.difference is None else self.difference.to_json()}


def rerun(db: Path | DatabaseUrl, run_id: str, *, new_run_id: str | None = None, strategy: str | None = None,
          strict: bool = False, handle_signals: bool = True,
          progress: Callable[[str], None] | None = None) -> RerunOutcome:
    """Start the rerun, drive it to its end, compare its decisions with the recorded run's."""
    from engine.run import lifecycle as runs_mod
    from events.domain import PipelineConfig, TaskDescription

    store = runs_mod.open_store(db, create=False)
    old = list(store.read(run_id))
    if not old or old[0].type != "RunStarted":
        raise AuditError(f"run {run_id} does not begin with RunStarted; there is nothing to rerun")
    started = old[0].payload
    public_dir = Path(started["task_dir"])
    if not public_dir.is_dir():
        raise AuditError(f"the recorded run's task directory {public_dir} is gone; cannot rerun {run_id}")
    description = TaskDescription.model_validate(started["task"])
    task = runs_mod.PreparedTask(description=description, public_dir=public_dir, label=description.competition_id)
    config = PipelineConfig.model_validate(started["config"])
    backend_name = f"replay:{run_id}"
    backend = runs_mod.make_backend(backend_name, config, db=db)
    new_id = new_run_id or f"{run_id}-rerun-{secrets.token_hex(3)}"
    chosen = strategy or started["strategy"]
    if started.get("params"):
        raise AuditError(f"run {run_id} was started with strategy params {sorted(started['params'])}; "
                         "rerun does not carry them yet")
    runs_mod.create_run(store, db=db, task=task, strategy=chosen, backend_name=backend_name, config=config,
                        seed=int(started["seed"]), run_id=new_id,
                        deterministic_order=bool(started.get("deterministic_order", True)))
    if progress:
        progress(f"rerun {new_id} started ({chosen}, answers from {run_id}, evaluations re-executed)")
    final = runs_mod.drive(store, new_id, backend=backend, handle_signals=handle_signals)
    new = list(store.read(new_id))
    difference = compare_decisions(old, new, strict=strict)
    return RerunOutcome(source_run_id=run_id, new_run_id=new_id, status=final.status, strategy=chosen,
                        recorded_decisions=len(decisions(old)), rerun_decisions=len(decisions(new)),
                        difference=difference, best_score=final.best_score,
                        evaluation_change=first_evaluation_change(old, new) if difference else None)
