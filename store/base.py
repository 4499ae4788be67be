"""The event store's contract: what every backend (SQLite now, others later) must provide."""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Protocol

from events.base import Envelope, NewEvent


class StoreError(Exception):
    """Base of every store error; its message is meant for the user."""


class ConcurrencyError(StoreError):
    """Someone appended to the run since the caller read it (stale expected_seq)."""


class DuplicateResultError(StoreError):
    """A second result for an effect whose result is already recorded."""


class RunNotFound(StoreError):
    pass


class RunExists(StoreError):
    pass


class LeaseHeld(StoreError):
    """Another live driver holds the run."""

    def __init__(self, run_id: str, pid: int, host: str) -> None:
        super().__init__(
            f"run {run_id} is being driven by process {pid} on host {host}; "
            "wait for it to finish or stop it (SIGINT) before resuming"
        )
        self.pid = pid
        self.host = host


class NotAnEngineDatabase(StoreError):
    pass


class DatabaseLocked(StoreError):
    pass


class CorruptLog(StoreError):
    """A stored event cannot be read back (bad JSON, unknown type, broken chain)."""


class StoreUnavailable(StoreError):
    """The database server stayed unreachable for the whole reconnect budget; nothing committed is
    lost, and the run resumes once the server is back."""


class StorageFault(StoreError):
    """The storage under the database failed for good (retrying will not help); the message says
    what happened and what to do. The CLI exits 1 on these, as on a failed run."""


class StorageFull(StorageFault):
    """No space left where the database is written."""


class StorageReadOnly(StorageFault):
    """The database or its file system is read-only."""


class StorageDenied(StorageFault):
    """This process may not open or write the database file (permissions)."""


class StorageDamaged(StorageFault):
    """The database file is malformed (damaged bytes): some or all of it cannot be read."""


class StorageTooNew(StorageFault):
    """The database was written by a newer engine (a schema this engine does not know)."""


@dataclass(frozen=True)
class RunInfo:
    run_id: str
    created_at: str
    strategy: str
    task: str
    status: str
    last_seq: int


@dataclass(frozen=True)
class ChainProblem:
    seq: int
    reason: str
    damaged: bool = False  # the file could not be read from here (damaged storage), not altered bytes


@dataclass(frozen=True)
class ExportContents:
    """A run read from an export (store/jsonl.py); ``partial`` says why the file may not hold the
    whole run ("" if it does); ``legacy``: written before export format 1 (no end line); the
    envelopes are as sealed (payloads with artifact references), ``artifacts`` holds their texts."""

    envelopes: list[Envelope]
    partial: str = ""
    legacy: bool = False
    artifacts: dict[str, str] = field(default_factory=dict)  # digest -> text (store/artifacts.py)


class EventStore(Protocol):
    @property
    def path(self) -> Path | str:
        """Where the store is, as ``--db`` names it: the SQLite file, or the PostgreSQL URL."""
        ...

    def create_run(self, run_id: str, *, strategy: str, task: str) -> None: ...

    def append(self, run_id: str, events: Sequence[NewEvent], expected_seq: int) -> list[Envelope]:
        """Append atomically after ``expected_seq``; raise ConcurrencyError if it is stale."""
        ...

    def read(self, run_id: str, from_seq: int = 1) -> Generator[Envelope, None, None]:
        """The run's envelopes from ``from_seq`` on, read lazily; ``close()`` frees the cursor early."""
        ...

    def last_seq(self, run_id: str) -> int: ...

    def get_run(self, run_id: str) -> RunInfo: ...

    def list_runs(self) -> list[RunInfo]: ...

    def set_status(self, run_id: str, status: str) -> None: ...

    def acquire_lease(self, run_id: str, ttl_s: float = 30.0) -> str:
        """Take the run's driver lease; return a token. Raise LeaseHeld if a live driver has it."""
        ...

    def renew_lease(self, run_id: str, token: str, ttl_s: float = 30.0) -> None: ...

    def release_lease(self, run_id: str, token: str) -> None: ...

    def verify_chain(self, run_id: str) -> ChainProblem | None:
        """The first event whose stored bytes do not match the hash chain, or None (every event read)."""
        ...

    def check_chain(self, run_id: str) -> ChainProblem | None:
        """``verify_chain`` from the run's last verified head on (store.chain), recording the new head
        when the chain is intact: what opening a run costs is what was appended since the last check."""
        ...

    def export_jsonl(self, run_id: str, out: IO[str]) -> int:
        """Write the run as JSON Lines ending with its end line (store/jsonl.py); return the event count."""
        ...

    def import_jsonl(self, source: IO[str], *, allow_partial: bool = False) -> str:
        """Import an export (its chain and completeness checked, store/jsonl.py); return its run id."""
        ...

    def import_export(self, contents: ExportContents) -> str:
        """Import a run already read from an export; a partial one gets the status ``partial``."""
        ...

    def close(self) -> None: ...


# Events appended with RunStarted's own decisions (the sandbox notice, the held-back slice) are
# among a run's first events: a search for one reads no further.
EARLY_EVENTS = 500


def early_event(store: EventStore, run_id: str, type_name: str) -> Envelope | None:
    """The first ``type_name`` among the run's first ``EARLY_EVENTS`` events, read sealed where the
    store can (no artifact is resolved), or None."""
    import itertools

    reader = getattr(store, "read_sealed", store.read)(run_id)
    try:
        return next((env for env in itertools.islice(reader, EARLY_EVENTS) if env.type == type_name), None)
    finally:
        reader.close()
