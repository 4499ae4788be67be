"""Where an effect's files go: the directory named after its id, and the tests' trace of the effects a
process starts (the driver, the agent-call executor and Ray's evaluations name them the same way)."""

from __future__ import annotations

import os

# Test hook: append every effect id to this file when its execution starts, so crash tests
# can prove that no effect whose result was recorded ran again after a resume.
EFFECT_TRACE_ENV = "ENGINE_EFFECT_TRACE"


def effect_trace_path(run_id: str) -> str | None:
    """Tests' record of every effect this process starts; {run} and {pid} in the path give each
    run and process its own file (campaign workers share one environment)."""
    trace = os.environ.get(EFFECT_TRACE_ENV)
    return trace.replace("{run}", run_id).replace("{pid}", str(os.getpid())) if trace else None


def safe_name(effect_id: str) -> str:
    """A readable, unique directory name for an effect id (ids contain '/' and '#')."""
    return effect_id.replace("/", "__").replace("#", "-n")


__all__ = ["EFFECT_TRACE_ENV", "effect_trace_path", "safe_name"]
