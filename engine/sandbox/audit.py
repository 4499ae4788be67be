"""What a run's log proves about isolation: under which policy each evaluation ran, and whether
any of them could reach the private answers or the engine database.

Read from the recorded ``EvaluationCompleted.sandbox`` policies alone (plus the task's private
directory, derived from ``RunStarted.task_dir``), so it holds for an exported log too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from events.base import Envelope
from events.sandbox import SandboxPolicy

from .policy import private_answers_of


@dataclass
class SandboxAudit:
    evaluations: int = 0
    sandboxed: list[str] = field(default_factory=list)
    unsandboxed: list[str] = field(default_factory=list)
    leaking: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # effect → {protected: binds}
    unrecorded: list[str] = field(default_factory=list)
    notices: list[dict[str, Any]] = field(default_factory=list)

    @property
    def answers_unreachable(self) -> bool:
        """True when every evaluation ran under bwrap and none of its binds exposed a protected path."""
        return self.evaluations == len(self.sandboxed) and not self.leaking

    def lines(self) -> list[str]:
        if self.evaluations == 0:
            return ["sandbox: no evaluation ran"]
        if self.answers_unreachable:
            return [f"sandbox: every evaluation ({self.evaluations}) ran under bwrap; "
                    "private answers and the engine database not visible"]
        out = [f"sandbox: {len(self.sandboxed)} of {self.evaluations} evaluations ran under bwrap with the "
               "private answers out of reach; the others could reach them:"]
        if self.unsandboxed:
            out.append(f"  no sandbox (--sandbox none or bwrap unusable): {_ids(self.unsandboxed)}")
        for effect, leaks in self.leaking.items():
            detail = "; ".join(f"{path} via {', '.join(binds)}" for path, binds in leaks.items())
            out.append(f"  sandboxed but exposing {detail}: {effect}")
        if self.unrecorded:
            out.append(f"  policy not recorded (a log from before sandbox policies): {_ids(self.unrecorded)}")
        return out


def _ids(ids: list[str], limit: int = 8) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" … (+{len(ids) - limit})" if len(ids) > limit else "")


def audit_sandbox(envelopes: Iterable[Envelope]) -> SandboxAudit:
    audit = SandboxAudit()
    private: list[str] = []
    for env in envelopes:
        if env.type == "RunStarted":
            task_dir = env.payload.get("task_dir")
            private = private_answers_of(task_dir) if task_dir else []
        elif env.type == "SandboxNotice":
            audit.notices.append(dict(env.payload))
        elif env.type == "EvaluationCompleted":
            audit.evaluations += 1
            effect = str(env.payload.get("effect_id", ""))
            raw = env.payload.get("sandbox") if env.version >= 2 else None
            if raw is None:
                audit.unrecorded.append(effect)
                continue
            policy = SandboxPolicy.model_validate(raw)
            if policy.mode != "bwrap":
                audit.unsandboxed.append(effect)
                continue
            leaks = policy.leaks()
            for path in private:
                if path not in leaks and policy.exposes(path):
                    leaks[path] = policy.exposes(path)
            if leaks:
                audit.leaking[effect] = leaks
            else:
                audit.sandboxed.append(effect)
    return audit
