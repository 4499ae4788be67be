"""``Sandbox``: run a command under a ``SandboxPolicy``.

``Sandbox(policy).command(argv, cwd=..., env=...)`` returns a complete argv: bwrap with the
policy's namespaces and binds, then the launcher (limits, uid drop when the engine is root,
environment), then ``argv``. Whoever spawns it (``subprocess``, anyio, an SDK running a
wrapper script that ``exec``s it) gets the same sandbox.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import structlog

from engine.sandbox.bwrap import bwrap_argv
from engine.sandbox.launcher import launcher_argv, rlimit_triples
from events.sandbox import SandboxPolicy

log = structlog.get_logger(__name__)

# Inside the sandbox HOME and TMPDIR point at the private /tmp: the host's home is not there.
SANDBOX_HOME = "/tmp"


class SandboxError(RuntimeError):
    """The sandbox could not be set up (the message says what to do)."""


class Sandbox:
    """A policy and the means to run commands under it.

    ``python`` is the interpreter that runs the launcher (default: the engine's own, which
    every policy binds read-only); ``bwrap`` the bubblewrap binary (default: found on PATH).
    """

    def __init__(self, policy: SandboxPolicy, *, python: str | None = None, bwrap: str | None = None) -> None:
        self._policy = policy
        self._python = python or sys.executable
        self._bwrap = bwrap
        self._as_root = hasattr(os, "geteuid") and os.geteuid() == 0

    @property
    def policy(self) -> SandboxPolicy:
        return self._policy

    @property
    def uid(self) -> int | None:
        """The uid the code runs as, when it differs from the engine's."""
        return self._policy.uid if self._policy.mode == "bwrap" and self._as_root else None

    def _bwrap_binary(self) -> str:
        found = self._bwrap or shutil.which("bwrap")
        if not found:
            raise SandboxError("bubblewrap (bwrap) is not installed: install the Debian package `bubblewrap` "
                               "(apt-get install bubblewrap), or run with --sandbox none")
        return found

    def prepare(self) -> None:
        """Make the host side ready: writable binds exist and belong to the sandbox's uid (when
        the engine is root and the code runs as another uid), socket and mount points exist."""
        uid = self.uid
        for bind in self._policy.writable:
            Path(bind.source).mkdir(parents=True, exist_ok=True)
            if uid is not None:
                _chown_tree(Path(bind.source), uid, uid)

    def command(self, argv: Sequence[str], *, cwd: str | os.PathLike[str], env: Mapping[str, str],
                pass_env: Sequence[str] = (), gate_fd: int | None = None) -> list[str]:
        """The argv running ``argv`` in ``cwd`` under the policy, with exactly ``env`` (plus
        ``pass_env``) as its environment.

        ``env`` values appear on the command line (visible to other users in ``ps``): put a
        secret's NAME in ``pass_env`` instead; its value is then copied from the environment
        the returned argv is executed with. ``gate_fd``: an inherited pipe the launcher reads
        one byte from before it starts ``argv`` (the harness uses it to watch a script from its
        first instruction). Calls ``prepare()`` first.
        """
        if not argv:
            raise ValueError("Sandbox.command needs a command to run")
        self.prepare()
        policy = self._policy
        lim = policy.limits
        rlimits = rlimit_triples(memory_mb=lim.memory_mb, processes=lim.processes, file_size_mb=lim.file_size_mb,
                                 cpu_seconds=lim.cpu_seconds, open_files=lim.open_files)
        full_env = dict(env)
        if policy.mode == "bwrap":
            full_env.setdefault("HOME", SANDBOX_HOME)
            full_env["TMPDIR"] = "/tmp"
            if self.uid is not None:
                full_env.update(USER="sandbox", LOGNAME="sandbox")
        uid = self.uid
        inner = launcher_argv(self._python, argv, rlimits=rlimits, env=full_env, pass_env=pass_env,
                              uid=uid, gid=uid, gate_fd=gate_fd, cwd=os.path.abspath(os.fspath(cwd)))
        if policy.mode == "none":
            return inner
        # bwrap itself starts in "/": the launcher enters ``cwd`` once it runs as the code's uid.
        outer = bwrap_argv(policy, bwrap=self._bwrap_binary(), cwd="/", as_root=self._as_root)
        return [*outer, "--", *inner]


def _chown_tree(root: Path, uid: int, gid: int) -> None:
    # Symlinks are changed themselves (lchown), never followed: a link left by an earlier
    # script must not hand a host file to the sandbox's uid.
    os.lchown(root, uid, gid)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in (*dirnames, *filenames):
            try:
                os.lchown(os.path.join(dirpath, name), uid, gid)
            except FileNotFoundError:
                pass
