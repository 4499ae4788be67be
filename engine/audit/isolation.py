"""What a run's log proves about isolation: under which policy each evaluation and each agent
call ran, and whether any of them could reach the private answers or the engine database.

Read from the recorded ``EvaluationCompleted.sandbox`` and ``AgentCallCompleted/Failed.sandbox``
policies alone (plus the task's private directory, derived from ``RunStarted.task_dir``), so it
holds for an exported log too. Agent calls without a recorded policy are those of a backend
that runs no tools (the builtin agent writes scripts; only evaluations run them).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from engine.sandbox.policy import private_answers_of
from events.base import Envelope
from events.sandbox import SandboxPolicy


@dataclass
class SandboxAudit:
    evaluations: int = 0
    sandboxed: list[str] = field(default_factory=list)
    unsandboxed: list[str] = field(default_factory=list)
    leaking: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # effect → {protected: binds}
    unrecorded: list[str] = field(default_factory=list)
    notices: list[dict[str, Any]] = field(default_factory=list)
    agents: SandboxAudit | None = None  # the same audit over agent calls whose tools ran sandboxed or not
    noun: str = "evaluation"

    @property
    def answers_unreachable(self) -> bool:
        """True when every evaluation (and every agent call that ran tools) was under bwrap and
        none of the binds exposed a protected path."""
        own = self.evaluations == len(self.sandboxed) and not self.leaking
        return own and (self.agents is None or self.agents.answers_unreachable)

    def lines(self) -> list[str]:
        own = self._own_lines()
        return own + (self.agents._own_lines() if self.agents is not None and self.agents.evaluations else [])

    def _own_lines(self) -> list[str]:
        noun = self.noun
        if self.evaluations == 0:
            return [f"sandbox: no {noun} ran"]
        if self.evaluations == len(self.sandboxed) and not self.leaking:
            return [f"sandbox: every {noun} ({self.evaluations}) ran under bwrap; "
                    "private answers and the engine database not visible"]
        out = [f"sandbox: {len(self.sandboxed)} of {self.evaluations} {noun}s ran under bwrap with the "
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
    agents = SandboxAudit(noun="agent call")
    private: list[str] = []
    for env in envelopes:
        if env.type == "RunStarted":
            task_dir = env.payload.get("task_dir")
            private = private_answers_of(task_dir) if task_dir else []
        elif env.type == "SandboxNotice":
            audit.notices.append(dict(env.payload))
        elif env.type in ("EvaluationCompleted", "AgentCallCompleted", "AgentCallFailed"):
            raw = env.payload.get("sandbox") if env.version >= 2 else None
            target = audit if env.type == "EvaluationCompleted" else agents
            if target is agents and raw is None:
                continue  # a backend that runs no tools
            target.evaluations += 1
            effect = str(env.payload.get("effect_id", ""))
            if raw is None:
                target.unrecorded.append(effect)
                continue
            policy = SandboxPolicy.model_validate(raw)
            if policy.mode != "bwrap":
                target.unsandboxed.append(effect)
                continue
            leaks = policy.leaks()
            for path in private:
                if path not in leaks and policy.exposes(path):
                    leaks[path] = policy.exposes(path)
            if leaks:
                target.leaking[effect] = leaks
            else:
                target.sandboxed.append(effect)
    audit.agents = agents if agents.evaluations else None
    return audit
