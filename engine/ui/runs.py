"""Every run's projection, kept up to date by reading only what was appended since the last look.

Each run has its fold (``PipelineState``, what the runs list shows); the runs whose pages are
open also keep their envelopes (the lineage, the events table and the solution pages need them;
agent calls' prompts as sealed references, fetched when a page shows one: ``shown_whole``),
at most ``keep_logs`` of them, the least recently viewed dropped first. Memory therefore follows
the size of the logs, never how long a page stays open.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace

from engine.audit.runlog import RunLog, load_event_modules
from engine.campaign.stream import STREAM_PREFIX
from engine.ui.source import SHOWN_ON_REQUEST, Head, LogSource
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

    def take(self, new: list[Envelope], trusted: VerifiedHead = GENESIS) -> None:
        """Fold the events appended since the last look, each checked against the hash chain first
        (from the last verified head: what is read anyway, no more). ``trusted``: a head already
        verified among ``new`` (a run read whole again for its page): the events up to it are
        folded unchecked while its event still carries its hash, as ``check_chain`` starts from
        its verified head (the events before it are ``engine verify``'s to check)."""
        if not new or self.problem is not None:
            return
        start = trusted_part(new, self.verified, trusted)
        self.problem = envelopes_problem(new[start:], VerifiedHead(new[start - 1].seq, new[start - 1].hash)
                                         if start else self.verified)
        if self.problem is not None:
            return
        self.verified = VerifiedHead(new[-1].seq, new[-1].hash)
        fold(new, self.state)
        if self.envelopes is not None:
            self.envelopes.extend(new)


def trusted_part(new: list[Envelope], verified: VerifiedHead, trusted: VerifiedHead) -> int:
    """How many of ``new`` (read from the event after ``verified``) end at ``trusted``, an event
    whose hash was verified before: 0 unless that event is among them with that very hash."""
    at = trusted.seq - verified.seq
    if trusted.seq <= verified.seq or at > len(new):
        return 0
    head = new[at - 1]
    return at if head.seq == trusted.seq and head.hash == trusted.hash else 0


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
                    entry.take(self.source.read(run_id, entry.seq + 1, whole=False))
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
                envelopes = self.source.read(run_id, whole=False)
                fresh = RunEntry(head=entry.head, state=PipelineState(), envelopes=[])
                fresh.take(envelopes, trusted=entry.verified)
                self.runs[run_id] = entry = fresh
            self._hold(run_id)
            if entry.problem is not None:  # not shown as if it were the run: see refusal()
                return None
            return RunLog(run_id=run_id, envelopes=list(entry.envelopes or []), state=entry.state)

    def shown_whole(self, log: RunLog, wanted: Callable[[Envelope], bool]) -> RunLog:
        """``log`` with the envelopes ``wanted`` by a page read whole: those kept as sealed
        (``SHOWN_ON_REQUEST``: agent calls' prompts) have their artifacts fetched now."""
        picked = [i for i, env in enumerate(log.envelopes) if env.type in SHOWN_ON_REQUEST and wanted(env)]
        if not picked:
            return log
        envelopes = list(log.envelopes)
        for i, env in zip(picked, self.source.resolve(log.run_id, [envelopes[i] for i in picked])):
            envelopes[i] = env
        return replace(log, envelopes=envelopes)

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
