"""Isolation of untrusted code (evaluation scripts, agent tools) with bubblewrap.

* ``SandboxPolicy`` (``events.sandbox``): what a sandboxed process could see and use; recorded
  in the log with every evaluation.
* ``evaluation_policy`` / ``agent_policy`` / ``build_policy``: build one.
* ``Sandbox(policy).command(argv, cwd=, env=, pass_env=)``: the argv that runs ``argv`` under it.
* ``resolve_mode("auto"|"bwrap"|"none")``: the mode a run gets here; ``SandboxUnavailable``
  (one line naming the package to install) when bwrap is required but unusable.
"""

from engine.sandbox.modes import (
    INSTALL_HINT,
    SandboxUnavailable,
    bwrap_problem,
    describe_resolution,
    resolve_mode,
)
from engine.sandbox.policy import (
    agent_policy,
    build_policy,
    default_limits,
    evaluation_policy,
    gpu_devices,
    private_answers_of,
    python_binds,
    sandbox_uid,
    system_binds,
)
from engine.sandbox.sandbox import Sandbox, SandboxError
from events.sandbox import Bind, SandboxLimits, SandboxMode, SandboxNotice, SandboxPolicy, SandboxRequest

__all__ = [
    "INSTALL_HINT", "Bind", "Sandbox", "SandboxError", "SandboxLimits", "SandboxMode", "SandboxNotice",
    "SandboxPolicy", "SandboxRequest", "SandboxUnavailable", "agent_policy", "build_policy",
    "bwrap_problem", "default_limits", "describe_resolution",
    "evaluation_policy", "gpu_devices", "private_answers_of", "python_binds", "resolve_mode",
    "sandbox_uid", "system_binds",
]
