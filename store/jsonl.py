"""Runs as JSON Lines: one sealed envelope per line, exactly as stored (hashes included), then one
end line saying what a complete file holds, so that a file cut short is refused, not imported.

The end line (export format 1) is ``{"export_end": {...}}`` with ``format`` (this layout's version;
a reader refuses a newer one), ``run_id``, ``events`` (how many envelope lines), ``head_seq`` and
``head_hash`` (the last event's); newer formats add keys inside ``export_end``.

Format 2 carries artifacts (store/artifacts.py): events are exported as sealed (payloads with
artifact references, as the chain covers them), and each artifact is one line
``{"artifact": {"digest": "sha256:…", "text": "…"}}`` before the first event that refers to it;
the end line adds ``artifacts`` (how many artifact lines). Format 1 and older files hold no
references and are read as before.

Files written before format 1 have no end line. Such a file is imported when its last event ends
the run (RunCompleted or RunFailed): nothing is ever appended after it, so nothing can be missing.
Any other file without a valid end line may have lost its last lines: it is refused, unless the
caller accepts a partial run (``engine import --allow-partial``), which is then imported and named
as partial.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import IO, Any

from events.base import GENESIS_HASH, EffectResult, Envelope, canonical_json, event_class
from store.artifacts import ArtifactReader, digest_of, refs_in, resolved
from store.base import CorruptLog, ExportContents
from store.run_ids import check_run_id

EXPORT_FORMAT = 2
END_KEY = "export_end"
ARTIFACT_KEY = "artifact"
RUN_ENDS = ("RunCompleted", "RunFailed")
PARTIAL_STATUS = "partial"  # the status of a run imported from a file that may lack its last events


def end_line(run_id: str, count: int, last: Envelope | None, artifacts: int = 0) -> str:
    return canonical_json({END_KEY: {"format": EXPORT_FORMAT, "run_id": run_id, "events": count,
                                     "head_seq": last.seq if last else 0,
                                     "head_hash": last.hash if last else GENESIS_HASH, "artifacts": artifacts}})


def write_jsonl(run_id: str, envelopes: Iterable[Envelope], out: IO[str], reader: ArtifactReader | None = None) -> int:
    """Write the run's events (as sealed) with the artifacts they refer to (read by ``reader``)
    and the end line; return how many events."""
    count, last = 0, None
    written: set[str] = set()
    for env in envelopes:
        if reader is not None:
            _write_artifacts(env, reader, written, out)
        out.write(canonical_json(env.model_dump(mode="json")) + "\n")
        count, last = count + 1, env
    out.write(end_line(run_id, count, last, len(written)) + "\n")
    return count


def _write_artifacts(env: Envelope, reader: ArtifactReader, written: set[str], out: IO[str]) -> None:
    new = [d for d in dict.fromkeys(refs_in(env.payload)) if d not in written]
    if not new:
        return
    reader.resolve(env.run_id, env.seq, env.payload)  # raises on a missing or altered artifact
    for digest in new:
        out.write(canonical_json({ARTIFACT_KEY: {"digest": digest, "text": reader.texts[digest]}}) + "\n")
        written.add(digest)


def parse_lines(lines: Iterable[str], *, label: str = "line") -> tuple[list[Envelope], dict[str, Any] | None]:
    """The envelopes of an export (as sealed) and its end line's fields (None: no end line)."""
    envelopes, end, _ = parse_export(lines, label=label)
    return envelopes, end


def parse_export(lines: Iterable[str], *,
                 label: str = "line") -> tuple[list[Envelope], dict[str, Any] | None, dict[str, str]]:
    """The envelopes of an export (as sealed), its end line's fields (None: no end line) and its
    artifacts (digest -> text, each checked against its digest), in file order; CorruptLog names
    the first line that is none of these (``label``: how a line is named in it)."""
    envelopes: list[Envelope] = []
    end: dict[str, Any] | None = None
    artifacts: dict[str, str] = {}
    for lineno, line in _numbered(lines):
        if end is not None:
            raise CorruptLog(f"{label} {lineno}: text after the export's end line; the file was altered")
        end = _end_fields(line)
        if end is not None:
            continue
        if line.startswith('{"' + ARTIFACT_KEY + '"'):
            digest, text = _artifact_fields(line, f"{label} {lineno}")
            artifacts[digest] = text
            continue
        try:
            envelopes.append(Envelope.model_validate_json(line))
        except ValueError as exc:
            raise CorruptLog(f"{label} {lineno}: not an exported event ({str(exc).splitlines()[0]})") from None
    return envelopes, end, artifacts


def _artifact_fields(line: str, where: str) -> tuple[str, str]:
    try:
        fields = json.loads(line)[ARTIFACT_KEY]
        digest, text = fields["digest"], fields["text"]
    except (ValueError, KeyError, TypeError):
        raise CorruptLog(f"{where}: not an exported artifact (it needs a digest and a text)") from None
    if not isinstance(digest, str) or not isinstance(text, str) or digest_of(text) != digest:
        raise CorruptLog(f"{where}: the artifact's text does not match its digest {digest}; the export was altered")
    return digest, text


def missing_artifact(envelopes: list[Envelope], artifacts: dict[str, str]) -> str:
    """The first event referring to an artifact the file lacks, named ("" when none is missing)."""
    for env in envelopes:
        for digest in refs_in(env.payload):
            if digest not in artifacts:
                return f"event {env.seq} refers to the artifact {digest}, which the file lacks"
    return ""


def resolved_envelopes(envelopes: list[Envelope], artifacts: dict[str, str]) -> list[Envelope]:
    """Envelopes as read by the handlers: artifact references replaced by their texts."""
    if not artifacts:
        return envelopes
    return [env.model_copy(update={"payload": resolved(env.payload, artifacts)}) for env in envelopes]


def read_jsonl(source: IO[str], *, check_chain: bool = True, allow_partial: bool = False) -> ExportContents:
    """Parse an export; refuse a file whose hash chain is broken (``check_chain``) and, unless
    ``allow_partial``, one that cannot be shown complete (see the module's doc)."""
    envelopes, end, artifacts = parse_export(source)
    if not envelopes:
        raise CorruptLog("the file holds no events")
    if check_chain:
        _check_chain(envelopes)
    missing = missing_artifact(envelopes, artifacts)
    if missing:
        raise CorruptLog(f"{missing}; the export was altered or cut, it is not imported")
    partial = completeness_problem(envelopes, end)
    if partial and not allow_partial:
        raise CorruptLog(f"{partial}; it is not imported (`engine import --allow-partial` imports its "
                         f"{len(envelopes)} events as a partial run)")
    return ExportContents(envelopes, partial=partial, legacy=end is None, artifacts=artifacts)


def completeness_problem(envelopes: list[Envelope], end: dict[str, Any] | None) -> str:
    """Why the file may not hold the whole run, or "" when it does."""
    last = envelopes[-1]
    if end is None:
        if last.type in RUN_ENDS:
            return ""  # an export from before format 1 of a finished run: nothing follows its end
        return (f"the file has no end line and its last event (seq {last.seq}, {last.type}) does not end the "
                "run: it was cut short, or written by an engine before export format 1")
    version = end.get("format")
    if not isinstance(version, int) or version > EXPORT_FORMAT:
        raise CorruptLog(f"the export's end line is of format {version!r}; this engine reads format "
                         f"{EXPORT_FORMAT} and older: import it with the engine that wrote it, or a newer one")
    said = (end.get("run_id"), end.get("events"), end.get("head_seq"), end.get("head_hash"))
    if said != (last.run_id, len(envelopes), last.seq, last.hash):
        return (f"the export's end line says {end.get('events')} events of run {end.get('run_id')} ending at seq "
                f"{end.get('head_seq')}, but the file holds {len(envelopes)} ending at seq {last.seq}: events are "
                "missing (the file was cut short or altered)")
    return ""


def imported_rows(envelopes: list[Envelope]) -> list[tuple[Any, ...]]:
    """The stored rows of imported envelopes, as the stores' events table holds them."""
    return [(e.run_id, e.seq, e.type, e.version, e.scope, e.causation_seq, e.recorded_at, canonical_json(e.payload),
             e.prev_hash, e.hash, e.payload.get("effect_id") if issubclass(event_class(e.type), EffectResult) else None)
            for e in envelopes]


def imported_status(contents: ExportContents) -> str:
    """The status an imported log gets: partial, or what its last event implies."""
    if contents.partial:
        return PARTIAL_STATUS
    return {"RunCompleted": "completed", "RunFailed": "failed"}.get(contents.envelopes[-1].type, "stopped")


def _check_chain(envelopes: list[Envelope]) -> None:
    run_id, prev = envelopes[0].run_id, GENESIS_HASH
    for i, env in enumerate(envelopes, start=1):
        if env.run_id != run_id or env.seq != i or env.prev_hash != prev or env.compute_hash() != env.hash:
            raise CorruptLog(f"event {i} of the file breaks the hash chain; the export was altered")
        prev = env.hash


def _numbered(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    for lineno, line in enumerate(lines, start=1):
        if line.strip():
            yield lineno, line


def _end_fields(line: str) -> dict[str, Any] | None:
    """The end line's fields, or None when ``line`` is not the end line."""
    if not line.lstrip().startswith('{"' + END_KEY + '"'):
        return None
    try:
        fields = json.loads(line)[END_KEY]
    except (ValueError, KeyError, TypeError):
        return None  # then parsed as an event, and named as not one
    return fields if isinstance(fields, dict) else None


def imported_run_row(contents: ExportContents) -> tuple[Any, ...]:
    """The runs-table row of an imported run: (run_id, created_at, strategy, task, status, head_seq,
    head_hash); the run id passes the one run-id rule (a file names its own run)."""
    first, last = contents.envelopes[0], contents.envelopes[-1]
    strategy = str(first.payload.get("strategy", "?"))
    task = str((first.payload.get("task") or {}).get("competition_id", "?"))
    return (check_run_id(first.run_id), first.recorded_at, strategy, task, imported_status(contents), last.seq,
            last.hash)
