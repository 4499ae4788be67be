"""What a resume reads: the fold its effects start from, and the check that the handlers agree.

A resume is in two parts (docs/decisions/0030-resume-beside-the-check.md):

* ``quick_state``: the fold from the run's last snapshot and the events after it, with the script
  of every pending evaluation read back. Its cost follows what was appended since the snapshot,
  not the run's length, and the driver starts the pending effects from it at once.
* ``rebuild``: read the log once, fold it, and rebuild the handlers by feeding them every recorded
  input (``replay.verify``; the decisions they make again must equal the recorded ones). This is
  the part that grows with the run; the driver runs it beside the effects and commits no result
  before it agrees. bench/bench_longrun.py times both functions.

The check reads the log as sealed and resolves the artifacts (store/artifacts.py) of every event
but the requests whose effect has ended: a finished agent call's prompt, the bulk of a long run's
log, is needed by nothing a resume does. The fold keeps only such a request's short values, and
``replay.verify`` compares the prompt the handlers build again with the recorded digest
(``same_decision``). A request still pending is resolved whole: the driver runs it again.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

from engine.run.collector import gc_paused
from engine.run.snapshots import fold_with_snapshot
from events.base import Envelope, event_class
from handlers.runtime import Runtime
from replay.meter import SPEND_RECORDED
from replay.state import REQUEST_TYPES, RESULT_TYPES, PipelineState, fold
from replay.verify import Divergence, verify
from store.artifacts import REF_KEY, describe_artifact_problem, is_ref, resolved
from store.base import CorruptLog
from store.snapshots import table_of

ENDED_BY = RESULT_TYPES | {"EffectCancelled"}  # an effect with one of these recorded is over
SEALED_FOR_EFFECTS = RESULT_TYPES | {"SolutionRecorded"}  # their long strings: the fold never reads them


@dataclass
class Rebuilt:
    """The fold of the whole log, the handlers fed every input, and the first divergence (None:
    the handlers agree with every recorded decision)."""

    state: PipelineState
    runtime: Runtime
    divergence: Divergence | None


def rebuild(store: Any, run_id: str, main: Callable[..., Any],
            store_lock: AbstractContextManager[Any] | None = None) -> Rebuilt:
    """Read, fold and replay ``run_id`` through fresh handlers running ``main``. ``store_lock``
    is held while the log is read (the driver reads it from a thread beside its own appends)."""
    with gc_paused():
        with store_lock or nullcontext():
            envelopes = read_for_resume(store, run_id)
        state = fold(envelopes)
        divergence, runtime = verify(envelopes, lambda: Runtime(main))
    assert isinstance(runtime, Runtime)
    return Rebuilt(state=state, runtime=runtime, divergence=divergence)


def caught_up(rebuilt: Rebuilt, store: Any, run_id: str) -> Rebuilt:
    """``rebuilt`` with the events appended since its log was read folded in (a driver's own
    bookkeeping while the check ran), spend fed to the handlers' meter as a replay feeds it."""
    for env in store.read(run_id, rebuilt.state.last_seq + 1):
        rebuilt.state.apply(env)
        if env.type == SPEND_RECORDED:
            rebuilt.runtime.feed(env.event())
    return rebuilt


def quick_state(store: Any, run_id: str) -> PipelineState:
    """The run's fold from its last snapshot (``engine.run.snapshots``) and the events after it,
    read without the bulk no pending effect needs (``needs_for_effects``). What the effects run is
    read from the log itself, which the chain seals (a snapshot is not sealed): each pending
    request that came from the snapshot, and the script of each solution an evaluation waits for."""
    state, since = fold_with_snapshot(table_of(store), run_id,
                                      lambda seq: read_for_resume(store, run_id, seq, needs_for_effects))
    for node in state.solutions.values():
        if not isinstance(node.content, str):  # read sealed: left out, as a snapshot leaves it out
            node.content = ""
    for eff in state.pending.values():
        if eff.seq <= since:
            eff.payload = payload_at(store, run_id, eff.seq, eff.type, "effect_id", eff.effect_id)
            state.requests[eff.effect_id] = eff
        if eff.type == "EvaluationRequested":
            node = state.solutions[eff.payload["solution_id"]]
            node.content = payload_at(store, run_id, node.seq, "SolutionRecorded", "solution_id",
                                       node.solution_id)["content"]
    return state


def payload_at(store: Any, run_id: str, seq: int, type_name: str, key: str, value: str) -> dict[str, Any]:
    """The whole payload of the event at ``seq``, which must be a ``type_name`` with that ``key``."""
    reader = store.read(run_id, seq)
    try:
        env = next(reader, None)
    finally:
        reader.close()
    if env is None or env.seq != seq or env.type != type_name or env.payload.get(key) != value:
        found = "nothing" if env is None else f"{env.type} at seq {env.seq}"
        raise CorruptLog(f"run {run_id}: seq {seq} should be the {type_name} of {value}, but is {found}; "
                         "its snapshot does not match its log")
    return dict(env.payload)


def read_for_resume(store: Any, run_id: str, from_seq: int = 1,
                    needs: Callable[[Envelope, set[Any]], bool] | None = None) -> list[Envelope]:
    """The run's log from ``from_seq``, with the artifacts resolved of the events ``needs`` names
    (default ``needs_whole``: every event but ended requests). A store without sealed reads (no
    artifacts) is read as it is."""
    read_sealed = getattr(store, "read_sealed", None)
    reader_of = getattr(store, "artifact_reader", None)
    if read_sealed is None or reader_of is None:
        return list(store.read(run_id, from_seq))
    needs = needs or needs_whole
    sealed = list(read_sealed(run_id, from_seq))
    ended = {env.payload.get("effect_id") for env in sealed if env.type in ENDED_BY}
    wanted: list[tuple[int, list[str]]] = []
    for i, env in enumerate(sealed):
        digests = digests_in(env.payload, [])
        if digests and needs(env, ended):
            wanted.append((i, digests))
    reader = reader_of()
    problems = {p.digest: p for p in reader.load(d for _, digests in wanted for d in digests)}
    for i, digests in wanted:
        env = sealed[i]
        problem = next((problems[d] for d in digests if d in problems), None)
        if problem is not None:
            raise CorruptLog(describe_artifact_problem(run_id, env.seq, problem))
        sealed[i] = env.model_copy(update={"payload": resolved(env.payload, reader.texts)})
    return sealed


def needs_for_effects(env: Envelope, ended: set[Any]) -> bool:
    """Whether the fold a resume's effects start from reads an event whole: not a result, a
    solution (``quick_state`` reads the scripts it needs) or an ended request, whose long strings
    the fold never reads; an event in an older version always (upcasting it reads it)."""
    if env.version != event_class(env.type).version:
        return True
    if env.type in REQUEST_TYPES:
        return env.payload.get("effect_id") not in ended
    return env.type not in SEALED_FOR_EFFECTS


def needs_whole(env: Envelope, ended: set[Any]) -> bool:
    """Whether a resume reads an event (one with artifacts) whole: any but a request whose effect
    has ended and which is in its type's current version (an older one is upcast by loading it)."""
    if env.type not in REQUEST_TYPES or env.payload.get("effect_id") not in ended:
        return True
    return env.version != event_class(env.type).version


def digests_in(value: Any, found: list[str]) -> list[str]:
    """The artifact digests ``value`` refers to, added to ``found`` (``store.artifacts.refs_in``
    without a generator per level: every payload of the log is walked)."""
    if isinstance(value, dict):
        if is_ref(value):
            found.append(value[REF_KEY])
        else:
            for v in value.values():
                if isinstance(v, (dict, list)):
                    digests_in(v, found)
    elif isinstance(value, list):
        for v in value:
            if isinstance(v, (dict, list)):
                digests_in(v, found)
    return found


__all__ = ["Rebuilt", "caught_up", "quick_state", "read_for_resume", "rebuild"]
