"""The recorded-run fixtures of the replay regression suite: what each one is and how it is read.

Each fixture is ``tests/replays/<name>.jsonl``: the JSON Lines export (``engine export``) of one
complete run recorded by ``python -m tests.replays.record`` with a fixed run id and seed. They
are never edited by hand. ``NOTE_V1`` fixtures are the one exception to "as recorded": they are
a fresh recording rewritten to the v1 schema of ``Note`` (the ``refs`` field dropped, version 1)
and re-sealed, i.e. exactly what an engine from before Note v2 would have written; they prove
that an old log still loads and replays through the upcaster (issue item 3). ``BEFORE_ROWS``
fixtures are rewritten the same way to the schema from before ``scored_rows`` (EvaluationCompleted
v3, SolutionEvaluated v1, EnsembleRoundCompleted v1): none of their scores is on fewer than all
rows, so each rewritten event loads through its upcasters to the event recorded.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from events.base import GENESIS_HASH, Envelope, canonical_json, chain_hash

HERE = Path(__file__).resolve().parent
FAKE_CLAUDE = "tests.replays.fakeclaude:backend"
FAKE_CLAUDE_MERGE_CRASH = "tests.replays.fakeclaude:backend_merge_crash"


@dataclass(frozen=True)
class FixtureSpec:
    name: str
    task: str
    strategy: str
    agent: str
    settings: tuple[str, ...] = ()
    seed: int = 0
    note_v1: bool = False  # stored in the pre-v2 schema of Note (see the module docstring)
    before_rows: bool = False  # stored in the schema from before ``scored_rows`` (the module docstring)
    about: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def run_id(self) -> str:
        return f"fixture-{self.name}"

    @property
    def path(self) -> Path:
        return HERE / f"{self.name}.jsonl"


SMALL_MLE_STAR = ("ensemble_rounds=1", "inner_loop_steps=1")
FIXTURES: tuple[FixtureSpec, ...] = (
    FixtureSpec("mle-star-iris-builtin", "iris", "mle-star", "builtin", SMALL_MLE_STAR, seed=0, before_rows=True,
                about="MLE-STAR, builtin scikit-learn agent, iris (log loss, minimised)"),
    FixtureSpec("mle-star-wine-builtin", "wine", "mle-star", "builtin", SMALL_MLE_STAR, seed=1, before_rows=True,
                about="MLE-STAR, builtin scikit-learn agent, wine (accuracy)"),
    FixtureSpec("evolve-iris-builtin", "iris", "evolve", "builtin", ("max_steps=9", "steps_per_epoch=3"), seed=0,
                about="evolutionary strategy, builtin agent, iris"),
    FixtureSpec("evolve-wine-builtin", "wine", "evolve", "builtin", ("max_steps=9", "steps_per_epoch=3"), seed=2,
                about="evolutionary strategy, builtin agent, wine"),
    FixtureSpec("mle-star-wine-claude", "wine", "mle-star", FAKE_CLAUDE, ("ensemble_rounds=1",), seed=0,
                about="MLE-STAR through the Claude backend and the protocol-level fake CLI: a debug round, a "
                      "leakage correction, a rejected (worse) merge"),
    FixtureSpec("mle-star-penguins-claude-merge-crash", "penguins", "mle-star", FAKE_CLAUDE_MERGE_CRASH,
                ("ensemble_rounds=2",), seed=3,
                about="MLE-STAR through the Claude backend: the merged script crashes and the debugger cannot fix it"),
    FixtureSpec("mle-star-breast-cancer-claude-note-v1", "breast-cancer", "mle-star", FAKE_CLAUDE_MERGE_CRASH,
                ("ensemble_rounds=1",), seed=4, note_v1=True,
                about="an OLD log: Note events in schema v1 (before `refs`), loaded through the upcaster"),
)
BY_NAME = {f.name: f for f in FIXTURES}


def read_fixture(path: Path) -> list[Envelope]:
    with open(path, encoding="utf-8") as fh:
        return [Envelope.model_validate_json(line) for line in fh if line.strip()]


def reseal(records: Iterable[dict[str, Any]]) -> list[Envelope]:
    """Re-chain exported envelopes (as dicts) after a rewrite: every prev_hash/hash recomputed."""
    out: list[Envelope] = []
    prev = GENESIS_HASH
    for rec in records:
        fields = {k: rec[k] for k in ("run_id", "seq", "type", "version", "scope", "causation_seq",
                                      "recorded_at", "payload")}
        digest = chain_hash(prev, fields)
        out.append(Envelope(**fields, prev_hash=prev, hash=digest))
        prev = digest
    return out


def downgrade(envelopes: list[Envelope], old: dict[str, tuple[int, str]], *,
              check: bool = True) -> list[Envelope]:
    """What the same run looks like written by an engine from before the versions that added
    ``old``'s fields: ``{event type: (old version, the field it lacked)}``. With ``check``, each
    rewritten event must load through the upcasters to the event recorded (an old engine could
    have written it)."""
    records = []
    for env in envelopes:
        rec = env.model_dump(mode="json")
        if env.type in old:
            version, dropped = old[env.type]
            rec["version"] = version
            rec["payload"] = {k: v for k, v in rec["payload"].items() if k != dropped}
            if check and Envelope(**rec).event() != env.event():
                raise ValueError(f"seq {env.seq}: {env.type} v{version} cannot say what was recorded "
                                 f"({dropped}={env.payload.get(dropped)!r})")
        records.append(rec)
    return reseal(records)


def downgrade_notes_to_v1(envelopes: list[Envelope]) -> list[Envelope]:
    """What the same run looks like written by an engine from before Note v2."""
    return downgrade(envelopes, {"Note": (1, "refs")}, check=False)


def downgrade_to_before_rows(envelopes: list[Envelope]) -> list[Envelope]:
    """What the same run looks like written by an engine from before ``scored_rows``."""
    return downgrade(envelopes, {"EvaluationCompleted": (3, "scored_rows"), "SolutionEvaluated": (1, "scored_rows"),
                                 "EnsembleRoundCompleted": (1, "scored_rows")})


def write_jsonl(envelopes: list[Envelope], path: Path) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for env in envelopes:
            fh.write(canonical_json(env.model_dump(mode="json")) + "\n")


def describe(path: Path) -> dict[str, Any]:
    envs = read_fixture(path)
    return {"events": len(envs), "bytes": path.stat().st_size, "last": envs[-1].type,
            "strategy": envs[0].payload.get("strategy"), "backend": envs[0].payload.get("backend")}


def dumps(obj: Any) -> str:
    return json.dumps(obj, indent=1, sort_keys=True, default=str)
