"""``--sandbox auto|bwrap|none``: is bubblewrap usable here, and which mode a run gets.

The check runs a real sandbox (``python -c pass`` under bwrap, with the uid drop when the
engine is root) once per process: a bwrap binary that cannot create namespaces here (a
container without privileges, user namespaces disabled) counts as unusable.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
import tempfile

import structlog

from events.sandbox import NoticeLevel, SandboxMode, SandboxRequest

log = structlog.get_logger(__name__)

INSTALL_HINT = "install the Debian package `bubblewrap` (apt-get install bubblewrap)"
REQUESTS: tuple[str, ...] = ("auto", "bwrap", "none")
_PROBE_TIMEOUT_S = 30.0


class SandboxUnavailable(RuntimeError):
    """A sandbox was required and cannot be had; the message is one line for the user."""


@functools.lru_cache(maxsize=1)
def bwrap_problem() -> str | None:
    """``None`` when bubblewrap works here, else one line saying why not (cached per process)."""
    binary = shutil.which("bwrap")
    if binary is None:
        return f"bubblewrap (bwrap) is not installed; {INSTALL_HINT}"
    from engine.sandbox.policy import build_policy, default_limits, sandbox_uid
    from engine.sandbox.sandbox import Sandbox

    with tempfile.TemporaryDirectory(prefix="sandbox-probe-") as tmp:
        policy = build_policy("bwrap", cwd=tmp, uid=sandbox_uid("probe"), gpus=False,
                              limits=default_limits(memory_mb=1024, timeout_s=_PROBE_TIMEOUT_S))
        argv = Sandbox(policy, bwrap=binary).command([sys.executable, "-I", "-S", "-c", "pass"],
                                                    cwd="/", env={"PATH": "/usr/bin:/bin"})
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=_PROBE_TIMEOUT_S,
                                  stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bubblewrap is installed ({binary}) but could not start a sandbox: {exc}"
    if done.returncode != 0:
        detail = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        return (f"bubblewrap is installed ({binary}) but cannot create a sandbox here ({detail}); "
                "it needs user namespaces, or root")
    return None


def resolve_mode(requested: SandboxRequest | str) -> SandboxMode:
    """``none`` → none; ``bwrap`` → bwrap or ``SandboxUnavailable``; ``auto`` → bwrap when usable."""
    if requested == "none":
        return "none"
    if requested not in REQUESTS:
        raise SandboxUnavailable(f"--sandbox {requested}: unknown mode; choose one of {', '.join(REQUESTS)}")
    problem = bwrap_problem()
    if problem is None:
        return "bwrap"
    if requested == "bwrap":
        raise SandboxUnavailable(f"--sandbox bwrap: {problem}")
    return "none"


def describe_resolution(requested: str, mode: SandboxMode) -> tuple[NoticeLevel, str]:
    """``(level, message)`` for the log: a warning whenever code will run unsandboxed."""
    if mode == "bwrap":
        return "info", "evaluations run sandboxed (bubblewrap): private answers, other runs and the database are out of reach"
    if requested == "none":
        return "warning", ("--sandbox none: evaluations run as plain host processes and can read anything "
                           "the engine's user can, including the private answers")
    return "warning", (f"no usable sandbox ({bwrap_problem()}): evaluations run as plain host processes "
                       "and can read anything the engine's user can, including the private answers")
