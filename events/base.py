"""The event vocabulary's foundation: typed, frozen, named, versioned events and their envelope.

Every event type is a frozen pydantic model registered under a stable ``type_name`` with a
schema ``version``. Its ``kind`` says where it comes from:

* ``input``: from the world (the run's start, effect results, deadlines, cancellations). Replay
  feeds these to the handlers.
* ``decision``: decided by the handlers from the inputs. Replay re-derives and compares these.
* ``bookkeeping``: facts about the driver itself (a driver started or stopped); neither fed to
  the handlers nor compared on replay.

Upcasters turn the stored payload of an old version into the payload of the next one, so old
logs keep loading after an event's shape changes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

# input: from the world, fed to the handlers; decision: derived by the handlers, compared on replay;
# remark: said by the handlers for people (a note, a warning), recorded and shown but never compared,
# so rewording one never strands a recorded run; bookkeeping: the engine's own records (drivers, spend).
EventKind = Literal["input", "decision", "remark", "bookkeeping"]


class Event(BaseModel):
    """Base of every event. Subclasses set ``type_name``, ``version`` and ``kind``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type_name: ClassVar[str] = ""
    version: ClassVar[int] = 1
    kind: ClassVar[EventKind] = "decision"

    def payload(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class EffectRequest(Event):
    """A decision that asks the engine to do something in the world, named by ``effect_id``."""

    effect_id: str


class EffectResult(Event):
    """An input carrying the outcome of one effect. ``elapsed_s`` is the run's driven time
    when the result was recorded: the only clock the handlers ever see."""

    kind: ClassVar[EventKind] = "input"
    effect_id: str
    elapsed_s: float = 0.0


_REGISTRY: dict[str, type[Event]] = {}
# A function turning a payload of one version into the next version's
Upcaster = Callable[[dict[str, Any]], dict[str, Any]]
# (type_name, from_version) -> the upcaster from from_version to from_version+1
_UPCASTERS: dict[tuple[str, int], Upcaster] = {}


class UnknownEventType(ValueError):
    pass


def register(cls: type[Event]) -> type[Event]:
    """Class decorator: make an event type loadable by name."""
    name = cls.type_name
    if not name:
        raise TypeError(f"{cls.__name__} has no type_name")
    existing = _REGISTRY.get(name)
    if existing is not None and existing is not cls:
        raise TypeError(f"event type name {name!r} is already used by {existing.__qualname__}")
    _REGISTRY[name] = cls
    return cls


def upcaster(type_name: str, from_version: int) -> Callable[[Upcaster], Upcaster]:
    """Decorator registering a payload upgrade from ``from_version`` to ``from_version + 1``."""

    def wrap(fn: Upcaster) -> Upcaster:
        _UPCASTERS[(type_name, from_version)] = fn
        return fn

    return wrap


def event_class(type_name: str) -> type[Event]:
    try:
        return _REGISTRY[type_name]
    except KeyError:
        raise UnknownEventType(f"unknown event type {type_name!r}") from None


def load_event(type_name: str, version: int, payload: dict[str, Any]) -> Event:
    """Build the current-version event from a stored payload, upcasting old versions."""
    cls = event_class(type_name)
    if version > cls.version:
        raise ValueError(
            f"{type_name} v{version} is newer than this engine understands (v{cls.version}); "
            "upgrade the engine to read this log"
        )
    return cls.model_validate(upcast(type_name, version, payload))


def upcast(type_name: str, version: int, payload: dict[str, Any]) -> dict[str, Any]:
    """A stored payload in its type's current shape: the upcasters applied in turn, nothing
    validated (what a projection folds; ``load_event`` validates it too). A payload already
    current is returned as it is."""
    data = payload
    for v in range(version, event_class(type_name).version):
        step = _UPCASTERS.get((type_name, v))
        if step is None:
            raise ValueError(f"no upcaster for {type_name} from v{v} to v{v + 1}")
        data = step(dict(data))
    return data


def canonical_json(value: Any) -> str:
    """Deterministic JSON: sorted keys, no whitespace, UTF-8 kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=True)


GENESIS_HASH = "0" * 64


class Envelope(BaseModel):
    """An event as stored: its place in the run's log and the hash chain that seals it."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    seq: int
    type: str
    version: int
    scope: str
    causation_seq: int | None
    recorded_at: str
    payload: dict[str, Any]
    prev_hash: str
    hash: str

    def hashed_fields(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "seq": self.seq,
            "type": self.type,
            "version": self.version,
            "scope": self.scope,
            "causation_seq": self.causation_seq,
            "recorded_at": self.recorded_at,
            "payload": self.payload,
        }

    def compute_hash(self) -> str:
        return chain_hash(self.prev_hash, self.hashed_fields())

    def event(self) -> Event:
        return load_event(self.type, self.version, self.payload)

    def current_payload(self) -> dict[str, Any]:
        """The payload in its type's current shape (``upcast``), without validating it: what the
        projections fold. A type this engine does not know, or a version newer than it knows,
        is left as stored (a projection folds the types it knows)."""
        cls = _REGISTRY.get(self.type)
        if cls is None or self.version >= cls.version:
            return self.payload
        return upcast(self.type, self.version, self.payload)

    @property
    def kind(self) -> EventKind:
        return event_class(self.type).kind


def chain_hash(prev_hash: str, fields: dict[str, Any]) -> str:
    """hash = sha256(prev_hash ‖ canonical JSON of the envelope)."""
    return chain_hash_of_text(prev_hash, canonical_json(fields))


def chain_hash_of_text(prev_hash: str, canonical_text: str) -> str:
    """``chain_hash`` of fields already in their canonical JSON text."""
    h = hashlib.sha256()
    h.update(prev_hash.encode("ascii"))
    h.update(canonical_text.encode("utf-8"))
    return h.hexdigest()


class NewEvent(BaseModel):
    """An event on its way into the store: the event, its scope and what caused it."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    event: Event
    scope: str = "run"
    causation_seq: int | None = None
