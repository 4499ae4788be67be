"""Every run's projection, kept up to date by reading only what was appended since the last look.

Each run has its fold (``PipelineState``, what the runs list shows); the runs whose pages are
open also keep their envelopes (the lineage, the events table and the solution pages need them),
at most ``keep_logs`` of them, the least recently viewed dropped first. Memory therefore follows
the size of the logs, never how long a page stays open.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from engine.audit.runlog import RunLog, load_event_modules
from engine.campaign.stream import STREAM_PREFIX
from engine.ui.source import Head, LogSource
from events.base import Envelope
from replay import snapshot as codec
from replay.state import PipelineState, fold
from store.base import ChainProblem
from store.chain import GENESIS, VerifiedHead, describe_problem, envelopes_problem


@dataclass
class RunEntry:
    head: Head
    state: PipelineState
    envelopes: list[Envelope] | None = None
    verified: VerifiedHead = GENESIS      # the last event the chain check found intact
    problem: ChainProblem | None = None   # where the chain broke: the run is not shown from then on

    @property
    def seq(self) -> int:
        return self.state.last_seq

    def take(self, new: list[Envelope]) -> None:
        """Fold the events appended since the last look, each checked against the hash chain first
        (from the last verified head: what is read anyway, no more)."""
        if not new or self.problem is not None:
            return
        self.problem = envelopes_problem(new, self.verified)
        if self.problem is not None:
            return
        self.verified = VerifiedHead(new[-1].seq, new[-1].hash)
        fold(new, self.state)
        if self.envelopes is not None:
            self.envelopes.extend(new)


class RunIndex:
    """The runs of one store (campaign streams apart). Thread-safe: one lock around every change."""

    def __init__(self, source: LogSource, *, keep_logs: int = 4) -> None:
        load_event_modules()
        self.source = source
        self.keep_logs = keep_logs
        self.runs: dict[str, RunEntry] = {}
        self.streams: dict[str, Head] = {}          # campaign streams: "campaign:NAME" → head
        self._held: OrderedDict[str, None] = OrderedDict()
        self.lock = threading.RLock()

    def refresh(self, heads: dict[str, Head] | None = None) -> set[str]:
        """Read what each run appended since the last refresh; return the ids that moved."""
        heads = self.source.heads() if heads is None else heads
        moved: set[str] = set()
        with self.lock:
            for run_id, head in heads.items():
                if run_id.startswith(STREAM_PREFIX):
                    if self.streams.get(run_id) != head:
                        self.streams[run_id] = head
                        moved.add(run_id)
                    continue
                entry = self.runs.get(run_id)
                if entry is None:
                    entry = self.runs[run_id] = self._first_look(run_id, head)
                entry.head = head
                if head.last_seq > entry.seq and entry.problem is None:
                    entry.take(self.source.read(run_id, entry.seq + 1))
                    moved.add(run_id)
        return moved

    def _first_look(self, run_id: str, head: Head) -> RunEntry:
        """A run seen for the first time starts from its last snapshot (engine/run/snapshots.py):
        the list then reads only the events after it, and the run's envelopes are read when its
        page opens. Without one it is read whole, and its envelopes are kept (the latest runs'
        stay, as if just viewed), so its page opens without reading the log a second time. The
        snapshot's event is the chain's verified head from then on, as ``check_chain``'s is."""
        stored = self.source.snapshot(run_id, codec.FORMAT)
        state = codec.restore(stored) if stored is not None else None
        if state is not None:
            return RunEntry(head=head, state=state, verified=VerifiedHead(state.last_seq, state.last_hash))
        self._hold(run_id)
        return RunEntry(head=head, state=PipelineState(), envelopes=[])

    def entry(self, run_id: str) -> RunEntry | None:
        with self.lock:
            return self.runs.get(run_id)

    def log(self, run_id: str) -> RunLog | None:
        """The run with its envelopes (read whole once, then kept up to date while it is held)."""
        with self.lock:
            entry = self.runs.get(run_id)
            if entry is None:
                self.refresh()
                entry = self.runs.get(run_id)
                if entry is None:
                    return None
            if entry.envelopes is None:
                envelopes = self.source.read(run_id)
                fresh = RunEntry(head=entry.head, state=PipelineState(), envelopes=[])
                fresh.take(envelopes)
                self.runs[run_id] = entry = fresh
            self._hold(run_id)
            if entry.problem is not None:  # not shown as if it were the run: see refusal()
                return None
            return RunLog(run_id=run_id, envelopes=list(entry.envelopes or []), state=entry.state)

    def refusal(self, run_id: str) -> str | None:
        """Why the run is not shown (its chain is broken, in verify's words), or None."""
        with self.lock:
            entry = self.runs.get(run_id)
            if entry is None or entry.problem is None:
                return None
            return describe_problem(run_id, entry.problem, refused="shown")

    def _hold(self, run_id: str) -> None:
        """Mark the run's envelopes as the most recently used; drop the least recent beyond the limit."""
        self._held[run_id] = None
        self._held.move_to_end(run_id)
        while len(self._held) > self.keep_logs:
            dropped, _ = self._held.popitem(last=False)
            if dropped in self.runs:
                self.runs[dropped].envelopes = None
