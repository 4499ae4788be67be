"""What a sandboxed process could see and use: the policy recorded with every evaluation.

A ``SandboxPolicy`` is a plain value: the engine builds it (``engine/sandbox``), runs the
process under it, and records it in the log (``EvaluationCompleted.sandbox``), so an audit
can show from the log alone which host paths an evaluation could read or write. Paths are
absolute; ``source`` is the host path (resolved), ``target`` where the sandbox sees it.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from events.base import Event, EventKind, register

SandboxMode = Literal["bwrap", "none"]
SandboxRequest = Literal["auto", "bwrap", "none"]
NoticeLevel = Literal["info", "warning"]  # a SandboxNotice's log level
NetworkMode = Literal["none", "host"]

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class Bind(BaseModel):
    """One host path made visible inside the sandbox."""

    model_config = _FROZEN

    source: str
    target: str


class SandboxLimits(BaseModel):
    """Kernel resource limits (setrlimit) of every process in the sandbox; ``None`` = unlimited.

    ``memory_mb`` is per process (RLIMIT_DATA) and, for evaluations, also the limit the
    harness enforces on the summed RSS of the whole process tree. ``processes`` counts the
    sandbox's own processes and threads (RLIMIT_NPROC, enforced because the code never runs as
    root). ``tmp_mb`` is the size of the private ``/tmp``; ``disk_mb`` the space the code may
    use in its writable directory (watched by the harness; RLIMIT_FSIZE bounds each file).
    """

    model_config = _FROZEN

    memory_mb: int | None = None
    processes: int | None = None
    file_size_mb: int | None = None
    cpu_seconds: int | None = None
    open_files: int | None = None
    tmp_mb: int | None = None
    disk_mb: int | None = None


class SandboxPolicy(BaseModel):
    """Everything a sandboxed process could see and use.

    * ``mode``: ``bwrap`` (bubblewrap: a new mount namespace holding only the binds below) or
      ``none`` (a plain host process: it saw everything the engine's user sees).
    * ``read_only`` / ``writable`` / ``devices`` / ``sockets``: the host paths bound inside.
    * ``network``: ``none`` (own empty network namespace, loopback only) or ``host``.
    * ``protected``: host paths the policy was built to keep out of reach (the task's private
      answers, the engine database). ``exposes`` checks the binds against them.
    * ``uid``: the user id the code ran as (``None``: the engine's own).
    """

    model_config = _FROZEN

    mode: SandboxMode
    read_only: tuple[Bind, ...] = ()
    writable: tuple[Bind, ...] = ()
    devices: tuple[str, ...] = ()
    sockets: tuple[Bind, ...] = ()
    network: NetworkMode = "none"
    private_tmp: bool = True
    pid_namespace: bool = True
    uid: int | None = None
    cwd: str | None = None
    limits: SandboxLimits = SandboxLimits()
    protected: tuple[str, ...] = ()

    def visible_sources(self) -> list[str]:
        return [b.source for b in (*self.read_only, *self.writable, *self.sockets)] + list(self.devices)

    def exposes(self, path: str) -> list[str]:
        """The bound host paths through which ``path`` would be visible (empty: not visible).

        Under ``none`` everything is visible, reported as ``/``. A bind exposes ``path`` when
        it is the path, one of its ancestors, or lies inside it.
        """
        if self.mode == "none":
            return ["/"]
        target = PurePosixPath(path)
        hits = []
        for source in self.visible_sources():
            src = PurePosixPath(source)
            if src == target or src in target.parents or target in src.parents:
                hits.append(source)
        return hits

    def leaks(self) -> dict[str, list[str]]:
        """``{protected path: [binds exposing it]}`` for every protected path that is visible."""
        out = {}
        for path in self.protected:
            hits = self.exposes(path)
            if hits:
                out[path] = hits
        return out

    def describe(self) -> str:
        """One line for logs and CLI output."""
        if self.mode == "none":
            return "no sandbox: the script saw the whole machine as the engine's user"
        lim = self.limits
        parts = [f"bwrap, {len(self.read_only)} read-only + {len(self.writable)} writable binds",
                 f"network {self.network}", f"uid {self.uid if self.uid is not None else 'engine'}"]
        if lim.memory_mb:
            parts.append(f"memory {lim.memory_mb} MB")
        if lim.processes:
            parts.append(f"{lim.processes} processes")
        return ", ".join(parts)


@register
class SandboxNotice(Event):
    """How the engine resolved ``--sandbox`` for a run, with a warning when code runs unsandboxed.

    Bookkeeping: a fact about the machine the driver runs on, neither fed to the handlers nor
    compared on replay.
    """

    type_name: ClassVar[str] = "SandboxNotice"
    kind: ClassVar[EventKind] = "bookkeeping"

    requested: SandboxRequest
    mode: SandboxMode
    level: NoticeLevel = "info"
    message: str
