"""Run a command so that it, and everything it starts, dies with the engine (issue "no orphans").

    python -I -S reaper.py <engine pid> [--keep-env NAME,NAME…] -- <argv...>

The Claude CLI keeps running after its stdin closes, and the tools it starts (a shell, a
training script) outlive it unless someone kills them. This launcher sits between the engine
and the command:

* it asks the kernel to send it SIGTERM when its parent (the engine) dies — SIGKILL of the
  engine included (``PR_SET_PDEATHSIG``) — and checks the parent is still the engine, for the
  case where the engine died before that was set;
* it becomes a *child subreaper*, so every process the command leaves behind (a daemon that
  double-forked, a shell's background job) is re-parented to the launcher rather than to init;
* with ``--keep-env`` the command gets only the named variables (the SDK hands its CLI the
  engine's whole environment; an agent's tools should not see what the CLI does not need);
* when the command ends, or the engine goes away, or the engine asks it to stop (SIGTERM /
  SIGINT), it signals the command's whole tree, waits a moment, SIGKILLs what is left and reaps
  it all; it exits with the command's status.

It uses only the standard library and ``/proc`` (started with ``-I -S``: fast, and nothing of
the engine's environment can change what it does). Linux only; elsewhere it just execs.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
GRACE_S = 3.0


def _prctl(option: int, value: int) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _children_of(pid: int) -> list[int]:
    found: list[int] = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read().decode("utf-8", "replace")
        except OSError:
            continue
        # "pid (comm) state ppid ..." — comm may hold spaces and parentheses: split after the last ')'.
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 1 and int(fields[1]) == pid:
            found.append(int(name))
    return found


def _descendants(root: int) -> list[int]:
    seen: list[int] = []
    frontier = [root]
    while frontier:
        nxt: list[int] = []
        for pid in frontier:
            for child in _children_of(pid):
                if child not in seen:
                    seen.append(child)
                    nxt.append(child)
        frontier = nxt
    return seen


def _signal_all(sig: int) -> None:
    for pid in _descendants(os.getpid()):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _shutdown(grace_s: float) -> None:
    """SIGTERM the whole tree, then SIGKILL whatever is still there after ``grace_s``."""
    _signal_all(signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and _descendants(os.getpid()):
        _reap()
        time.sleep(0.05)
    for _ in range(50):
        if not _descendants(os.getpid()):
            break
        _signal_all(signal.SIGKILL)
        _reap()
        time.sleep(0.02)
    _reap()


def main(argv: list[str]) -> int:
    keep: list[str] | None = None
    if len(argv) > 2 and argv[1] == "--keep-env":
        keep, argv = argv[2].split(","), [argv[0], *argv[3:]]
    if len(argv) < 3 or argv[1] != "--" or not argv[0].isdigit():
        sys.stderr.write("usage: reaper.py ENGINE_PID [--keep-env NAME,...] -- COMMAND [ARGS...]\n")
        return 2
    engine_pid, command = int(argv[0]), argv[2:]
    if keep is not None:
        for name in [n for n in os.environ if n not in keep]:
            del os.environ[name]
    if not sys.platform.startswith("linux"):
        os.execvp(command[0], command)
    stop = {"signal": 0}

    def on_signal(signum: int, _frame: object) -> None:
        stop["signal"] = signum

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    if os.getppid() != engine_pid:  # the engine died before PDEATHSIG was armed
        return 128 + signal.SIGTERM
    child = os.fork()
    if child == 0:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            sys.stderr.write(f"launcher: cannot run {command[0]}: {exc}\n")
            os._exit(127)
    # The command owns the pipes now; the launcher keeping them open would delay their EOF.
    os.close(0)
    os.close(1)
    status = 0
    while True:
        if stop["signal"] or os.getppid() != engine_pid:
            _shutdown(GRACE_S)
            return 128 + (stop["signal"] or signal.SIGTERM)
        try:
            pid, wait_status = os.waitpid(child, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == child:
            status = os.waitstatus_to_exitcode(wait_status)
            break
        time.sleep(0.05)
    _shutdown(0.5)  # what the command left behind does not outlive it
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
