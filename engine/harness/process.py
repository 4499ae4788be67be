"""Running one script as a subprocess: timeout, process-group kill, memory limit (REQ-EX-007..010, 037, 038)."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

import anyio
import structlog
from anyio.abc import ByteReceiveStream, Process

from engine.harness.monitor import TreeMonitor
from engine.harness.output import DEFAULT_OUTPUT_LIMIT_BYTES, HARNESS_PREFIX, CappedBuffer
from engine.sandbox import Sandbox
from engine.sandbox.launcher import LAUNCHER_MARKER
from events.domain import ExecutionRawResult

log = structlog.get_logger(__name__)

KILL_GRACE_SECONDS = 5.0
SAMPLE_INTERVAL_SECONDS = 0.1
# After the script is gone, how long to wait for its pipes to reach EOF. A descendant that
# escaped every kill could hold them open forever; the harness must still return.
_DRAIN_GRACE_SECONDS = 2.0
_REAP_WAIT_SECONDS = 2.0


def format_seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def timeout_reason(timeout_seconds: float) -> str:
    return f"timed out after {format_seconds(timeout_seconds)} s"


def memory_reason(limit_mb: int | float) -> str:
    return f"memory limit exceeded ({format_seconds(limit_mb)} MB)"


def disk_reason(limit_mb: int | float) -> str:
    return f"disk limit exceeded ({format_seconds(limit_mb)} MB written in its directory)"


# RLIMIT_FSIZE bounds one file; the total a script writes into its directory (many files) is
# measured here by walking the tree. A script can write hundreds of MB a second into the page
# cache, so the walk runs as often as it stays cheap: the pause after a walk is DISK_CHECK_COST_RATIO
# times what the walk took (a few files: every sample; a huge tree: rarely), within these bounds.
DISK_CHECK_MIN_INTERVAL_SECONDS = 0.1
DISK_CHECK_MAX_INTERVAL_SECONDS = 2.0
DISK_CHECK_COST_RATIO = 20


def disk_check_pause(walk_seconds: float) -> float:
    """Seconds to wait before the next directory walk, given what the last one took: walking
    then costs at most 1/DISK_CHECK_COST_RATIO of one thread."""
    pause = walk_seconds * DISK_CHECK_COST_RATIO
    return min(DISK_CHECK_MAX_INTERVAL_SECONDS, max(DISK_CHECK_MIN_INTERVAL_SECONDS, pause))


def directory_usage_mb(root: str | os.PathLike[str]) -> float:
    """Disk space used under ``root`` (allocated blocks, symlinks not followed)."""
    total = 0
    stack = [os.fspath(root)]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    total += st.st_blocks * 512
                    if entry.is_dir(follow_symlinks=False) and not os.path.ismount(entry.path):
                        stack.append(entry.path)
        except OSError:
            continue
    return total / (1024 * 1024)


class DiskWatch:
    """The space used under a script's directory, measured by walks in a daemon thread.

    The watch loop only looks at the last finished walk: it never waits for one, so a slow walk
    (a huge tree, a slow file system) holds up neither a kill nor the engine's stop. An anyio
    worker thread would: cancelling ``to_thread.run_sync`` waits for the function to return, and
    the interpreter joins such (non-daemon) threads at exit.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self._root = root
        self._lock = threading.Lock()
        self._walking = False
        self._finished: float | None = None  # MB of the last walk, until read
        self._next_walk = time.monotonic()

    def poll(self) -> float | None:
        """MB used as of the walk that finished since the last poll (None: no new one); starts
        the next walk when it is due (``disk_check_pause`` after the last one)."""
        with self._lock:
            used, self._finished = self._finished, None
            due = not self._walking and time.monotonic() >= self._next_walk
            if due:
                self._walking = True
        if due:
            threading.Thread(target=self._walk, name="disk-walk", daemon=True).start()
        return used

    def _walk(self) -> None:
        started = time.monotonic()
        used = directory_usage_mb(self._root)
        now = time.monotonic()
        with self._lock:
            self._finished = used
            self._walking = False
            self._next_walk = now + disk_check_pause(now - started)


# The child first waits on a pipe, then execs the script in the same process (same pid).
# Without this gate a short script can exit, and be reaped by asyncio's child watcher, before
# the monitor has looked at it even once, leaving its memory and CPU unmeasured.
# Under a sandbox the launcher plays the gate's part (see ``_open_sandboxed``).
_GATE = "import os, sys; fd = int(sys.argv[1]); os.read(fd, 1); os.close(fd); os.execv(sys.argv[2], sys.argv[2:])"


@dataclass(frozen=True)
class ProcessOutcome:
    """``ExecutionRawResult`` plus what only the harness knows: resources and why it killed."""

    raw: ExecutionRawResult
    peak_rss_mb: float
    cpu_s: float
    kill_reason: str | None = None  # "timed out after N s" / "memory limit exceeded (N MB)"
    memory_exceeded: bool = False


# How long bwrap may take to set the sandbox up before the script is let go unwatched.
_LAUNCHER_WAIT_SECONDS = 10.0


def _sandbox_env() -> dict[str, str]:
    # bwrap and the launcher need nothing from the engine's environment; the script's own
    # environment travels in the launcher's spec, so no secret reaches the sandbox's processes.
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}


async def _await_launcher(monitor: TreeMonitor, proc: Process) -> None:
    """Wait until the monitor has seen the launcher inside the sandbox (it then waits on the
    gate), so the script is watched from its first instruction: it execs in that process."""
    with anyio.move_on_after(_LAUNCHER_WAIT_SECONDS):
        while proc.returncode is None:
            monitor.sample()
            if monitor.find(LAUNCHER_MARKER):
                return
            await anyio.sleep(0.005)
    log.warning("harness.exec.launcher_not_seen", pid=proc.pid)


async def _drain(stream: ByteReceiveStream | None, sink: CappedBuffer) -> None:
    if stream is None:
        return
    async for chunk in stream:
        sink.write(chunk)


async def _wait_gone(monitor: TreeMonitor, proc: Process, deadline_s: float) -> None:
    """Wait until the script and every known descendant are gone, or the grace runs out."""
    with anyio.move_on_after(deadline_s):
        while proc.returncode is None or monitor.alive():
            await anyio.sleep(0.05)


async def _terminate_tree(monitor: TreeMonitor, proc: Process, grace_s: float) -> None:
    """REQ-EX-009/037: SIGTERM the whole tree, wait ``grace_s``, then SIGKILL whatever is left."""
    monitor.signal_all(signal.SIGTERM)
    await _wait_gone(monitor, proc, grace_s)
    if proc.returncode is None or monitor.alive():
        monitor.signal_all(signal.SIGKILL)
        await _wait_gone(monitor, proc, 5.0)


async def _kill_tree(monitor: TreeMonitor, proc: Process) -> None:
    monitor.signal_all(signal.SIGKILL)
    await _wait_gone(monitor, proc, 5.0)


def _append_note(text: str, note: str) -> str:
    if text and not text.endswith("\n"):
        text += "\n"
    return f"{text}{HARNESS_PREFIX}{note}\n"


async def run_process(
    script_path: str | os.PathLike[str],
    working_dir: str | os.PathLike[str],
    timeout_seconds: float,
    env: dict[str, str] | None = None,
    *,
    memory_limit_mb: float | None = None,
    output_limit_bytes: int = DEFAULT_OUTPUT_LIMIT_BYTES,
    kill_grace_seconds: float = KILL_GRACE_SECONDS,
    sample_interval: float = SAMPLE_INTERVAL_SECONDS,
    python: str | None = None,
    sandbox: Sandbox | None = None,
    disk_limit_mb: float | None = None,
) -> ProcessOutcome:
    """Run ``python script_path`` in ``working_dir``, in its own session and process group.

    * timeout: SIGTERM to the group, ``kill_grace_seconds`` later SIGKILL; ``timed_out=True``,
      ``exit_code=-1`` (REQ-EX-009) and a ``[harness] timed out after N s`` line on stderr.
    * memory: when the tree's summed RSS passes ``memory_limit_mb`` the tree is SIGKILLed at
      once (no grace: it is still allocating) and stderr ends with ``[harness] memory limit
      exceeded (N MB)``; ``exit_code`` is the signal's negative number.
    * when the script ends on its own, descendants it left behind are killed (no orphans).
    * cancellation of the caller kills the tree before the cancellation propagates.

    ``python`` defaults to the interpreter running the engine, so scripts see its packages.
    ``sandbox``: run the script under it (``Sandbox.command``): its policy's namespaces, binds,
    rlimits and uid; ``env`` becomes the script's whole environment inside.
    * disk: when the space used under ``working_dir`` passes ``disk_limit_mb`` the tree is
      SIGKILLed and stderr ends with ``[harness] disk limit exceeded (N MB ...)``.
    """
    log.info("harness.exec.start", path=str(script_path), cwd=str(working_dir), timeout=timeout_seconds)
    started = time.monotonic()
    proc, monitor = await _spawn(python or sys.executable, script_path, working_dir, env, sandbox)
    limits = _Limits(memory_mb=memory_limit_mb, disk_mb=disk_limit_mb,
                     disk=DiskWatch(working_dir) if disk_limit_mb is not None else None)
    output = (CappedBuffer(output_limit_bytes), CappedBuffer(output_limit_bytes))
    run = _Supervised(proc, monitor, str(script_path), limits, sample_interval)
    await run.until_done(timeout_seconds, kill_grace_seconds, output, started)
    return run.outcome(timeout_seconds, output)


async def _spawn(interpreter: str, script_path: str | os.PathLike[str], working_dir: str | os.PathLike[str],
                 env: dict[str, str] | None, sandbox: Sandbox | None) -> tuple[Process, TreeMonitor]:
    """Start the script held at a gate, and open the gate once the monitor watches it, so the
    script is watched from its first instruction."""
    gate_read, gate_write = os.pipe()
    if sandbox is not None:
        argv = sandbox.command([interpreter, str(script_path)], cwd=working_dir,
                               env=dict(env if env is not None else os.environ), gate_fd=gate_read)
        spawn_env: dict[str, str] | None = _sandbox_env()
    else:
        argv = [interpreter, "-I", "-S", "-c", _GATE, str(gate_read), interpreter, str(script_path)]
        spawn_env = env
    try:
        proc = await anyio.open_process(argv, stdin=subprocess.DEVNULL, cwd=str(working_dir), env=spawn_env,
                                        start_new_session=True, pass_fds=(gate_read,))
    except BaseException:
        os.close(gate_write)
        raise
    finally:
        os.close(gate_read)
    try:
        monitor = TreeMonitor(proc.pid)
        monitor.sample()
        if sandbox is not None:
            await _await_launcher(monitor, proc)
    finally:
        os.close(gate_write)  # opens the gate: the script starts now, already watched
    return proc, monitor


@dataclass
class _Limits:
    """The memory and disk limits a running script is held to, and which one it passed."""

    memory_mb: float | None
    disk_mb: float | None
    disk: DiskWatch | None
    exceeded: str | None = None  # "memory" | "disk"

    def passed(self, monitor: TreeMonitor, script_path: str) -> bool:
        if self.disk is not None and self.disk_mb is not None:
            used = self.disk.poll()
            if used is not None and used > self.disk_mb:
                self.exceeded = "disk"
                log.warning("harness.exec.disk_limit", path=script_path, limit_mb=self.disk_mb, used_mb=round(used, 1))
                return True
        if self.memory_mb is not None and monitor.last_rss_mb > self.memory_mb:
            self.exceeded = "memory"
            log.warning("harness.exec.memory_limit", path=script_path, limit_mb=self.memory_mb,
                        rss_mb=round(monitor.last_rss_mb, 1))
            return True
        return False


class _Supervised:
    """One running script: its output drained, its limits watched, its tree killed at the end."""

    def __init__(self, proc: Process, monitor: TreeMonitor, script_path: str, limits: _Limits,
                 sample_interval: float) -> None:
        self.proc, self.monitor, self.script_path = proc, monitor, script_path
        self.limits, self.sample_interval = limits, sample_interval
        self.timed_out = False
        self.duration = 0.0

    async def _watch(self) -> None:
        while True:
            self.monitor.sample()
            if self.limits.passed(self.monitor, self.script_path):
                await _kill_tree(self.monitor, self.proc)
                return
            await anyio.sleep(self.sample_interval)

    async def _wait(self, timeout_seconds: float, kill_grace_seconds: float, started: float) -> None:
        async with anyio.create_task_group() as watchers:
            watchers.start_soon(self._watch)
            with anyio.move_on_after(timeout_seconds if math.isfinite(timeout_seconds) else None):
                await self.proc.wait()
            if self.proc.returncode is None:
                self.timed_out = True
                log.warning("harness.exec.timeout", path=self.script_path, timeout=timeout_seconds)
                await _terminate_tree(self.monitor, self.proc, kill_grace_seconds)
            self.duration = time.monotonic() - started
            self.monitor.sample()
            watchers.cancel_scope.cancel()

    async def until_done(self, timeout_seconds: float, kill_grace_seconds: float,
                         output: tuple[CappedBuffer, CappedBuffer], started: float) -> None:
        proc, monitor = self.proc, self.monitor
        try:
            async with anyio.create_task_group() as readers:
                readers.start_soon(_drain, proc.stdout, output[0])
                readers.start_soon(_drain, proc.stderr, output[1])
                await self._wait(timeout_seconds, kill_grace_seconds, started)
                # Whatever the script left behind dies with it; the group signal also reaches
                # members the monitor never sampled.
                await _kill_tree(monitor, proc)
                readers.cancel_scope.deadline = anyio.current_time() + _DRAIN_GRACE_SECONDS
        finally:
            # Shielded from a cancellation (the engine stopping) so that no script outlives it, and
            # bounded, so that the stop is too: a process SIGKILL cannot end at once (stuck in the
            # kernel) is left to the child watcher after _REAP_WAIT_SECONDS.
            if proc.returncode is None or monitor.alive():
                with anyio.CancelScope(shield=True):
                    await _kill_tree(monitor, proc)
            with anyio.move_on_after(_REAP_WAIT_SECONDS, shield=True):
                await proc.aclose()

    def outcome(self, timeout_seconds: float, output: tuple[CappedBuffer, CappedBuffer]) -> ProcessOutcome:
        stdout, stderr = output[0].text(), output[1].text()
        kill_reason: str | None = None
        if self.timed_out:
            kill_reason = timeout_reason(timeout_seconds)
        elif self.limits.exceeded == "memory":
            kill_reason = memory_reason(self.limits.memory_mb or 0)
        elif self.limits.exceeded == "disk":
            kill_reason = disk_reason(self.limits.disk_mb or 0)
        if kill_reason:
            stderr = _append_note(stderr, kill_reason)
        returncode = self.proc.returncode
        exit_code = -1 if self.timed_out else (returncode if returncode is not None else -1)
        raw = ExecutionRawResult(stdout=stdout, stderr=stderr, exit_code=exit_code,
                                 duration_seconds=self.duration, timed_out=self.timed_out)
        monitor = self.monitor
        log.info("harness.exec.complete", path=self.script_path, exit_code=exit_code,
                 duration=round(self.duration, 3), peak_rss_mb=round(monitor.peak_rss_mb, 1),
                 cpu_s=round(monitor.cpu_s, 3))
        return ProcessOutcome(raw=raw, peak_rss_mb=monitor.peak_rss_mb, cpu_s=monitor.cpu_s,
                              kill_reason=kill_reason, memory_exceeded=self.limits.exceeded == "memory")


async def execute_script(
    script_path: str,
    working_dir: str,
    timeout_seconds: float,
    env: dict[str, str] | None = None,
    *,
    memory_limit_mb: float | None = None,
    output_limit_bytes: int = DEFAULT_OUTPUT_LIMIT_BYTES,
    kill_grace_seconds: float = KILL_GRACE_SECONDS,
) -> ExecutionRawResult:
    """REQ-EX-007: run the script and return its ``ExecutionRawResult``; never raises on a
    non-zero exit. See ``run_process`` for timeouts, limits and resource figures."""
    outcome = await run_process(
        script_path, working_dir, timeout_seconds, env,
        memory_limit_mb=memory_limit_mb, output_limit_bytes=output_limit_bytes,
        kill_grace_seconds=kill_grace_seconds,
    )
    return outcome.raw
