"""Artifacts by content: the large strings of a payload (scripts, prompts, agent answers, outputs)
stored once, addressed by their sha256, beside the events.

At the store boundary every payload string longer than ``MIN_BYTES`` (UTF-8), found recursively,
is replaced in the *stored* payload by a reference ``{"$artifact": "sha256:<hex>", "bytes": n}``;
the hash chain seals that stored payload, so the chain covers the digests and ``engine verify``
checks each artifact against its digest. Reading resolves the references, so handlers, event
classes and projections see the full values. ``MIN_BYTES`` is part of the stored format: a payload
is externalised the same way whenever it is sealed (envelopes_problem recomputes the stored form).

How a backend keeps an artifact: its text is cut into chunks at line boundaries chosen by the
lines' own content (a line whose CRC-32 is a multiple of ``CHUNK_EVERY`` ends a chunk), so a
script quoted inside many prompts is cut the same way each time and its chunks are stored once;
each chunk is kept zlib-compressed under the first ``KEY_BYTES`` bytes of its sha256, and the
artifact as the list of its chunk keys (zlib-compressed too: a script quoted twice repeats keys). A chunk key only finds a chunk: the artifact's full
sha256 is checked whenever it is read back, so a wrong or changed chunk is never returned.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from store.base import ChainProblem, CorruptLog

MIN_BYTES = 1024
REF_KEY = "$artifact"
DIGEST_PREFIX = "sha256:"
CHUNK_EVERY = 16  # on average a chunk every 16 lines
MAX_CHUNK_BYTES = 16384  # text without line breaks is still cut
KEY_BYTES = 12


def digest_of(text: str) -> str:
    return DIGEST_PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()


def is_ref(value: Any) -> bool:
    return (isinstance(value, dict) and len(value) == 2 and isinstance(value.get(REF_KEY), str)
            and isinstance(value.get("bytes"), int))


def externalise(value: Any, found: dict[str, str]) -> Any:
    """``value`` with every long string replaced by its reference; ``found`` collects digest -> text."""
    if isinstance(value, str):
        size = len(value.encode("utf-8")) if len(value) * 4 > MIN_BYTES else len(value)
        if size <= MIN_BYTES:
            return value
        digest = digest_of(value)
        found[digest] = value
        return {REF_KEY: digest, "bytes": size}
    if isinstance(value, dict):
        return {k: externalise(v, found) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [externalise(v, found) for v in value]
    return value


def refs_in(value: Any) -> Iterator[str]:
    """The digests ``value`` refers to, in document order (repeats included)."""
    if is_ref(value):
        yield value[REF_KEY]
    elif isinstance(value, dict):
        for v in value.values():
            yield from refs_in(v)
    elif isinstance(value, list):
        for v in value:
            yield from refs_in(v)


def resolved(value: Any, texts: dict[str, str]) -> Any:
    """``value`` with every reference replaced by its text (``texts``: digest -> text)."""
    if is_ref(value):
        return texts[value[REF_KEY]]
    if isinstance(value, dict):
        return {k: resolved(v, texts) for k, v in value.items()}
    if isinstance(value, list):
        return [resolved(v, texts) for v in value]
    return value


def has_refs(payload_json: str) -> bool:
    """A cheap test on a stored payload's text: only these are parsed for references."""
    return f'"{REF_KEY}"' in payload_json


# --- how a backend keeps them ----------------------------------------------------------------

# The same two tables in SQLite and PostgreSQL (BLOB is BYTEA there).
ARTIFACT_TABLES_SQLITE = """
CREATE TABLE artifacts (digest TEXT PRIMARY KEY, bytes INTEGER NOT NULL, chunks BLOB NOT NULL);
CREATE TABLE artifact_chunks (key BLOB PRIMARY KEY, data BLOB NOT NULL);
"""
ARTIFACT_TABLES_POSTGRES = ARTIFACT_TABLES_SQLITE.replace("BLOB", "BYTEA")

ChunkRow = tuple[bytes, bytes]  # (key, zlib-compressed text)
ArtifactRow = tuple[str, int, bytes]  # (digest, bytes of text, zlib-compressed concatenated chunk keys)


def chunks_of(text: str) -> list[str]:
    out: list[str] = []
    current: list[str] = []
    size = 0
    for line in text.splitlines(keepends=True):
        current.append(line)
        size += len(line)
        if size >= MAX_CHUNK_BYTES or zlib.crc32(line.encode("utf-8")) % CHUNK_EVERY == 0:
            out.append("".join(current))
            current, size = [], 0
    if current:
        out.append("".join(current))
    return out


def stored_rows(texts: dict[str, str]) -> tuple[list[ArtifactRow], list[ChunkRow]]:
    """The rows that keep ``texts`` (digest -> text), in digest order (a backend inserts them
    ignoring rows already there: content-addressed, so an existing row holds the same content)."""
    artifacts: list[ArtifactRow] = []
    chunks: dict[bytes, bytes] = {}
    for digest in sorted(texts):
        keys = []
        for chunk in chunks_of(texts[digest]):
            data = chunk.encode("utf-8")
            key = hashlib.sha256(data).digest()[:KEY_BYTES]
            if key not in chunks:
                chunks[key] = zlib.compress(data, 9)
            keys.append(key)
        artifacts.append((digest, len(texts[digest].encode("utf-8")), zlib.compress(b"".join(keys), 9)))
    return artifacts, sorted(chunks.items())


@dataclass(frozen=True)
class ArtifactProblem:
    digest: str
    reason: str


def assembled(digest: str, manifest: bytes | None, chunks: dict[bytes, bytes]) -> str | ArtifactProblem:
    """An artifact's text from its stored chunks, or what is wrong with it."""
    if manifest is None:
        return ArtifactProblem(digest, "is missing from the store")
    parts = []
    for key in _keys(manifest):
        data = chunks.get(key)
        if data is None:
            return ArtifactProblem(digest, f"has lost its chunk {key.hex()}")
        try:
            parts.append(zlib.decompress(data).decode("utf-8"))
        except (zlib.error, UnicodeDecodeError):
            return ArtifactProblem(digest, f"has a damaged chunk {key.hex()} (it does not decompress)")
    text = "".join(parts)
    if digest_of(text) != digest:
        return ArtifactProblem(digest, "has stored bytes that do not match its digest (it was altered)")
    return text


def _keys(manifest: bytes) -> list[bytes]:
    """An artifact's chunk keys; a manifest that does not decompress finds no chunk (then its
    artifact does not match its digest, which is how it is named)."""
    try:
        keys = zlib.decompress(manifest)
    except zlib.error:
        return []
    return [keys[i:i + KEY_BYTES] for i in range(0, len(keys), KEY_BYTES)]


def chunk_keys(manifests: Iterable[bytes]) -> list[bytes]:
    return sorted({key for m in manifests for key in _keys(bytes(m))})


FetchManifests = Callable[[list[str]], dict[str, bytes]]  # digests -> {digest: manifest}
FetchChunks = Callable[[list[bytes]], dict[bytes, bytes]]  # keys -> {key: compressed chunk}


class ArtifactReader:
    """Reads artifacts through a backend's two queries, checking each against its digest and
    keeping what it read (one reader per read of a run: a script quoted by many events is read once)."""

    def __init__(self, manifests: FetchManifests, chunks: FetchChunks) -> None:
        self._manifests = manifests
        self._chunks = chunks
        self.texts: dict[str, str] = {}

    def load(self, digests: Iterable[str]) -> list[ArtifactProblem]:
        """Read ``digests`` not read yet; return the problems (missing, altered) found."""
        wanted = sorted(set(digests) - self.texts.keys())
        if not wanted:
            return []
        manifests = self._manifests(wanted)
        chunks = self._chunks(chunk_keys(manifests.values()))
        problems = []
        for digest in wanted:
            text = assembled(digest, manifests.get(digest), chunks)
            if isinstance(text, ArtifactProblem):
                problems.append(text)
            else:
                self.texts[digest] = text
        return problems

    def resolve(self, run_id: str, seq: int, payload: dict[str, Any]) -> dict[str, Any]:
        """``payload`` with its references resolved; CorruptLog names a missing or altered artifact."""
        problems = self.load(refs_in(payload))
        if problems:
            raise CorruptLog(describe_artifact_problem(run_id, seq, problems[0]))
        result: dict[str, Any] = resolved(payload, self.texts)
        return result


def first_artifact_problem(rows: Iterable[tuple[int, str]], reader: ArtifactReader) -> ChainProblem | None:
    """The first event (``rows``: seq and stored payload text, in seq order) referring to an
    artifact that is missing or whose stored bytes do not match its digest, naming both."""
    for seq, payload_json in rows:
        if not has_refs(payload_json):
            continue
        problems = reader.load(refs_in(json.loads(payload_json)))
        if problems:
            return ChainProblem(seq, f"the artifact {problems[0].digest} this event refers to {problems[0].reason}")
    return None


def describe_artifact_problem(run_id: str, seq: int, problem: ArtifactProblem) -> str:
    return (f"run {run_id} seq {seq}: the artifact {problem.digest} it refers to {problem.reason}; "
            "`engine verify` checks every artifact, restore the database from a copy or import the run "
            "from an export")
