"""Watching and killing a script's whole process tree with psutil.

A script may start workers (joblib, multiprocessing, a shell command) that outlive it or
escape its process group. The monitor remembers every process it has seen descend from the
script, so it can both account for their resources and make sure none survives (REQ-EX-037).
"""

from __future__ import annotations

import os
import signal
import sys
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

import psutil

_GONE = (psutil.NoSuchProcess, psutil.AccessDenied)
_PROC = "/proc"


def _linux_table() -> Iterator[tuple[int, int, int, int]]:
    # One read of /proc/<pid>/stat gives parent, group and session together. The monitor scans
    # the table ten times a second per running script: done with psutil's process_iter and two
    # syscalls a process, the scans were a seventh of the engine's own CPU in a quick run.
    with os.scandir(_PROC) as entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                with open(f"{_PROC}/{entry.name}/stat", "rb") as f:
                    stat = f.read()
            except OSError:  # gone since the directory was listed
                continue
            # "pid (comm) state ppid pgrp session ...": comm may hold spaces and parentheses.
            fields = stat[stat.rfind(b")") + 2:].split(None, 4)
            if len(fields) >= 4:
                yield int(entry.name), int(fields[1]), int(fields[2]), int(fields[3])


def _portable_table() -> Iterator[tuple[int, int, int, int]]:
    for proc in psutil.process_iter(["ppid"]):
        try:
            yield proc.pid, proc.info.get("ppid") or 0, os.getpgid(proc.pid), os.getsid(proc.pid)
        except OSError:
            continue


_READS_PROC = sys.platform.startswith("linux") and os.path.isdir(_PROC)


def process_table() -> Iterator[tuple[int, int, int, int]]:
    """(pid, parent pid, process group, session) of every process this one can see."""
    return _linux_table() if _READS_PROC else _portable_table()


@dataclass
class _Seen:
    proc: psutil.Process
    parent_pid: int | None
    cpu_total: float = 0.0  # own user+system plus its reaped children's, at last sight


@dataclass
class TreeMonitor:
    """Samples the tree rooted at ``root_pid`` (started in its own session/process group).

    * ``peak_rss_mb``: the largest sum of RSS over the live tree seen at one sample.
    * ``cpu_s``: CPU seconds of the tree, including processes that already exited. psutil
      reports a process's own time plus that of children it has waited for, so a live process
      accounts for its reaped children; a process whose parent is no longer in the tree (the
      script itself, or an orphan reaped by init) is kept at its last sampled value. The result
      is therefore exact up to one sampling interval of work per vanished process.
    """

    root_pid: int
    own_session: bool = True  # the root was started with start_new_session=True
    peak_rss_mb: float = 0.0
    last_rss_mb: float = 0.0
    cpu_s: float = 0.0
    _seen: dict[tuple[int, float], _Seen] = field(default_factory=dict)
    _lost_cpu: float = 0.0

    def __post_init__(self) -> None:
        # With a new session the script leads its own session and process group, both numbered
        # by its pid. Without one, group and session are the engine's own and must never be
        # signalled or scanned.
        self._pgid = self.root_pid
        self._sid = self.root_pid
        self._own_group = self.own_session
        self._adopt(self.root_pid)
        roots = [s.proc for s in self._seen.values()]
        self._root: psutil.Process | None = roots[0] if roots else None

    def _in_our_session(self, pgid: int, sid: int) -> bool:
        return self._own_group and (pgid == self._pgid or sid == self._sid)

    def _adopt(self, pid: int) -> None:
        try:
            proc = psutil.Process(pid)
            key = (proc.pid, proc.create_time())
            if key not in self._seen:
                self._seen[key] = _Seen(proc=proc, parent_pid=proc.ppid())
        except _GONE:
            pass

    def _root_exists(self) -> bool:
        try:
            return self._root is not None and self._root.is_running()
        except _GONE:
            return False

    @staticmethod
    def _alive(proc: psutil.Process) -> bool:
        try:
            return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
        except _GONE:
            return False

    def _discover(self) -> None:
        # One scan of the process table per call, however large the tree is.
        children_of: dict[int, list[int]] = defaultdict(list)
        known = {seen.proc.pid for seen in self._seen.values()}
        for pid, ppid, pgid, sid in process_table():
            children_of[ppid].append(pid)
            if pid not in known and self._in_our_session(pgid, sid):
                # An orphan (its parent exited, init adopted it) is invisible to the parent
                # links but keeps the script's process group or session.
                self._adopt(pid)
        frontier: list[int] = []
        for seen in self._seen.values():
            try:
                if seen.proc.is_running():
                    frontier.append(seen.proc.pid)
            except _GONE:
                continue
        visited: set[int] = set()
        while frontier:
            pid = frontier.pop()
            if pid in visited:
                continue
            visited.add(pid)
            for child in children_of.get(pid, ()):
                self._adopt(child)
                frontier.append(child)

    def sample(self) -> None:
        """Discover new descendants and update peak RSS and CPU time."""
        self._discover()
        rss = 0
        live_cpu = 0.0
        running_pids = set()
        for seen in self._seen.values():
            try:
                if seen.proc.is_running():
                    running_pids.add(seen.proc.pid)
            except _GONE:
                pass
        for key, seen in list(self._seen.items()):
            proc = seen.proc
            if proc.pid in running_pids:
                try:
                    with proc.oneshot():
                        times = proc.cpu_times()
                        seen.cpu_total = times.user + times.system + times.children_user + times.children_system
                        if proc.status() != psutil.STATUS_ZOMBIE:
                            rss += proc.memory_info().rss
                    live_cpu += seen.cpu_total
                    continue
                except _GONE:
                    pass
            # Gone since the last sample: its time moved into its parent's "children" counters
            # if the parent is still in the tree to reap it; otherwise it would be lost.
            if seen.parent_pid not in running_pids:
                self._lost_cpu += seen.cpu_total
            del self._seen[key]
        self.last_rss_mb = rss / (1024 * 1024)
        self.peak_rss_mb = max(self.peak_rss_mb, self.last_rss_mb)
        self.cpu_s = max(self.cpu_s, live_cpu + self._lost_cpu)

    def find(self, marker: str) -> bool:
        """True when a live process of the tree runs ``python -I -S -c <code with marker>``
        (the sandbox launcher; bwrap's own command line merely carries that code further on)."""
        for seen in list(self._seen.values()):
            try:
                cmd = seen.proc.cmdline()
                if len(cmd) > 4 and cmd[3] == "-c" and marker in cmd[4]:
                    return True
            except _GONE:
                continue
        return False

    def alive(self) -> list[psutil.Process]:
        """Processes of the tree that still run (zombies count as dead)."""
        self._discover()
        return [s.proc for s in self._seen.values() if self._alive(s.proc)]

    def signal_all(self, sig: signal.Signals) -> None:
        """Send ``sig`` to the process group and to every known descendant.

        The group covers processes the monitor has not sampled yet; the per-process signal
        covers those that left the group with ``setsid``. psutil checks each process's start
        time, so a recycled pid never receives the signal.
        """
        # killpg only while the script's own process exists (alive or zombie): until it is
        # reaped its pid, hence the group id, cannot be reused by an unrelated process. Later,
        # group members are still found by ``alive()``, which adopts them by group and session.
        if self._own_group and self._root_exists():
            try:
                os.killpg(self._pgid, sig)
            except (ProcessLookupError, PermissionError):
                pass
        for proc in self.alive():
            try:
                proc.send_signal(sig)
            except _GONE:
                pass
