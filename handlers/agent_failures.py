"""When the agent keeps failing the same way, the run stops with that error (issue 27).

A configuration or protocol error — a backend that rejects a role (``'draft' is not a valid
AgentType``), a key revoked mid-run, a model the endpoint does not serve — fails every call alike.
Left alone, each remaining step would ask, fail at once and become a dead node, burning the
run's step budget in a fraction of a second and ending with a message that hides the cause.

The rule, the same for every strategy (the runtime applies it to every agent result, in the
order results are recorded, so replay derives the same stop): ``REPEATS_TO_STOP`` calls of one
role failing in a row with the same error stop the run — ``RunFailed`` whose message names the
error, with ``stop_reason`` ``STOP_REASON`` in its diagnostics. Per role, because a backend that
rejects one role still answers the others, whose calls come in between; a completed call of
that role ends its streak.

Counted are only the failures that say the set-up or the protocol is wrong (``SETUP_ERROR``: the
words the engine's backends and the driver use for an unknown role, rejected credentials, an
unknown model, a request the API refuses as such, a missing CLI, a backend that raises). Any
other failure — a bad or missing answer, a script the agent cannot fix, a call cut at its
deadline, one stopped for want of money (``AgentCallFailed.stop``) — is the strategy's to handle
as it always has; it neither counts nor ends a streak, so a real streak is still seen around it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from events.core import AgentCallCompleted, AgentCallFailed, AgentCallRequested

STOP_REASON = "agent_failing_repeatedly"
#: Identical failures in a row that stop the run: more than one bad moment of a healthy backend,
#: few enough that a broken one costs seconds, not the run's whole step budget.
REPEATS_TO_STOP = 4

#: A set-up or protocol error, in the words of the engine's backends (engine/agents/): a role the
#: backend does not know (an enum lookup, ``roles.UnknownRole``, the builtin's "has no role"),
#: credentials rejected, a model or path not served, an API refusing the request itself (4xx other
#: than rate limits), no CLI, and a backend that raised (the driver's "agent backend error").
SETUP_ERROR = re.compile(
    r"is not a valid AgentType|\bno agent role '|\bhas no role '|authentication failed|^billing error|"
    r"^unknown model|^invalid request|\bHTTP (?:400|401|403|404|422)\b|Claude CLI not found|^agent backend error:",
    re.IGNORECASE)
# Numbers (attempts, seconds, ids) differ between two reports of one cause.
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def same_cause(error: str) -> str:
    """The part of an error message that names its cause (numbers blanked out)."""
    return _NUMBER.sub("#", error.strip())


def counts(result: AgentCallFailed) -> bool:
    """Whether this failure is a set-up or protocol error (see the module's note)."""
    return not result.stop and SETUP_ERROR.search(result.error) is not None


@dataclass(frozen=True)
class AgentFailingRepeatedly:
    """Why the run stops: the error, how often in a row, and the calls that failed with it."""

    error: str
    effect_ids: tuple[str, ...]

    @property
    def message(self) -> str:
        return (f"the agent failed {len(self.effect_ids)} times in a row with the same error, so the run stops "
                f"(a configuration or protocol problem, not a bad answer): {self.error}")

    def diagnostics(self) -> dict[str, object]:
        return {"stop_reason": STOP_REASON, "error": self.error, "effect_ids": list(self.effect_ids)}


@dataclass
class _Streak:
    cause: str = ""
    effect_ids: list[str] = field(default_factory=list)


@dataclass
class FailureStreak:
    """Each role's current run of identical failures: told every request (``asked``), fed
    every agent result in recorded order (``observe``)."""

    repeats_to_stop: int = REPEATS_TO_STOP
    _roles: dict[str, str] = field(default_factory=dict)       # effect id -> role, while in flight
    _streaks: dict[str, _Streak] = field(default_factory=dict)  # role -> its streak (looked up, never iterated)

    def asked(self, request: AgentCallRequested) -> None:
        self._roles[request.effect_id] = request.agent_type

    def observe(self, result: AgentCallCompleted | AgentCallFailed) -> AgentFailingRepeatedly | None:
        """Count ``result``; the reason to stop when it completes a streak, else None."""
        role = self._roles.pop(result.effect_id, "")
        streak = self._streaks.setdefault(role, _Streak())
        if isinstance(result, AgentCallCompleted):
            streak.cause, streak.effect_ids = "", []
            return None
        if not counts(result):
            return None
        cause = same_cause(result.error)
        if cause != streak.cause:
            streak.cause, streak.effect_ids = cause, []
        streak.effect_ids.append(result.effect_id)
        if len(streak.effect_ids) < self.repeats_to_stop:
            return None
        return AgentFailingRepeatedly(error=result.error, effect_ids=tuple(streak.effect_ids))


__all__ = ["REPEATS_TO_STOP", "SETUP_ERROR", "STOP_REASON", "AgentFailingRepeatedly", "FailureStreak", "counts", "same_cause"]
