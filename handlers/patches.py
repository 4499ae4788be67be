"""Named changes to what the handlers decide, so a run recorded by an earlier release still resumes.

A run is replayed through today's handlers before it goes on (resume, replay, rerun), and a
decision they no longer make stops it. A change to a decision is therefore made behind a name:

    if wf.patched("phase2-skip-equal-ablations"):
        ...the new decision...
    else:
        ...the old one, kept for runs created before the change...

and the name is added to ``KNOWN`` below. Every run records in its ``RunStarted`` the names its
code knew, so a new run takes the new path and a run recorded before the change keeps the old
one, on every later release. A name is never reused or removed while runs recorded without it
may still be resumed; once no such run matters, the old branch and the name go together.
Wording changes need none of this: notes are remarks, never compared (``replay/verify.py``).
"""

from __future__ import annotations

# The named handler changes this code knows, oldest first.
KNOWN: tuple[str, ...] = (
    "run-error-names-root-cause",  # a Phase 1 whose candidates all fail names their common cause (failure_cause.py)
    "run-without-submission-fails",  # no valid submission at the end is a failure, not a completion (run_end.py)
    "phase1-drafts-sized-to-window",  # Phase 1's evaluations are told the first choice's wait as their deadline (mlestar/pipeline.py)
)


def adopted_by_new_runs() -> list[str]:
    """What a run created now records: every change this code knows."""
    return list(KNOWN)


def is_adopted(name: str, recorded: list[str], known: tuple[str, ...] = KNOWN) -> bool:
    """Whether a run whose ``RunStarted`` recorded ``recorded`` takes the path named ``name``."""
    if name not in known:
        raise ValueError(f"unknown handler patch {name!r}: add it to handlers/patches.py KNOWN")
    return name in recorded
