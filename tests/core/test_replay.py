"""`engine replay` (issue "Event-sourced core", Must show: "a recorded run replays
deterministically: feed a recorded log back through the handlers and fail on the first decision
that differs"). The CLI is exercised on the recorded toy run; replay.verify in-process on
handcrafted changes (a changed, a dropped and an extra decision)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from events.core import Note, PhaseStarted
from handlers.runtime import Runtime
from handlers.workflow import Workflow
from replay.verify import verify
from store.sqlite import SQLiteEventStore
from tests.core.helpers import REPO, assert_no_traceback, engine_env, run_engine
from tests.toy import strategy as toy

OLD_PROMPT = 'f"round {r} best {best} pick {pick}"'
NEW_PROMPT = 'f"round {r} best {best + 1} pick {pick}"'


def _export_pointing_at(toy_run, tmp_path: Path, module: str, source: str) -> Path:
    """Write ``source`` as module ``module`` in tmp_path and an export of the toy run whose
    RunStarted names ``module:main`` as its strategy (the hash chain is not needed by replay)."""
    (tmp_path / f"{module}.py").write_text(source)
    store = SQLiteEventStore(toy_run.db, create=False)
    buf = io.StringIO()
    store.export_jsonl(toy_run.run_id, buf)
    store.close()
    lines = buf.getvalue().splitlines()
    first = json.loads(lines[0])
    assert first["type"] == "RunStarted"
    first["payload"]["strategy"] = f"{module}:main"
    out = tmp_path / f"{module}.jsonl"
    out.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    return out


def test_replay_unchanged_log_ok(toy_run) -> None:
    proc = run_engine("replay", toy_run.run_id, "--db", toy_run.db)
    assert proc.returncode == 0, proc.stderr
    assert f"{len(toy_run.log)} events replayed, every decision matches" in proc.stdout.replace("\n", " ")


def test_replay_against_export_with_identical_strategy_copy_ok(toy_run, tmp_path: Path) -> None:
    """Control: pointing the log at an identical copy of the strategy changes nothing."""
    source = (REPO / "tests" / "toy" / "strategy.py").read_text()
    export = _export_pointing_at(toy_run, tmp_path, "strategy_same", source)
    proc = run_engine("replay", toy_run.run_id, "--against", export, env=engine_env(extra_path=tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "every decision matches" in proc.stdout


def test_replay_names_first_divergence_after_handler_change(toy_run, tmp_path: Path) -> None:
    source = (REPO / "tests" / "toy" / "strategy.py").read_text()
    assert OLD_PROMPT in source
    export = _export_pointing_at(toy_run, tmp_path, "strategy_changed", source.replace(OLD_PROMPT, NEW_PROMPT))
    proc = run_engine("replay", toy_run.run_id, "--against", export, env=engine_env(extra_path=tmp_path))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert_no_traceback(proc)
    first = next(e for e in toy_run.log if e.payload.get("effect_id") == "toy/final/round-0"
                 and e.type == "AgentCallRequested")
    text = proc.stderr
    assert "DIVERGED" in text
    assert f"first divergence at seq {first.seq}" in text
    assert "expected (recorded): AgentCallRequested [toy/final] toy/final/round-0" in text
    assert "actual (replayed):  AgentCallRequested [toy/final] toy/final/round-0" in text
    old = first.payload["prompt"]
    best = int(old.split()[3])
    new = old.replace(f"best {best}", f"best {best + 1}")
    assert f'-  "prompt": "{old}"' in text and f'+  "prompt": "{new}"' in text


# --- replay.verify in process -----------------------------------------------------------------


class _Filtered(Workflow):
    """The toy strategy's workflow with one kind of recorded event dropped (``drop``) or doubled
    (``extra``): a handler change seen from the log."""

    drop: type | None = None
    extra: type | None = None

    def __init__(self, wf: Workflow) -> None:
        super().__init__(wf._rt, wf.scope)

    def at(self, scope: str) -> Workflow:
        return type(self)(Workflow(self._rt, scope))

    def record(self, event) -> None:
        if self.drop is None or not isinstance(event, self.drop):
            super().record(event)
        if self.extra is not None and isinstance(event, self.extra):
            super().record(type(event)(**{**event.model_dump(), **self.extra_fields}))

    extra_fields: dict = {}


class _NoPhaseStarted(_Filtered):
    drop = PhaseStarted


class _ExtraPhaseStarted(_Filtered):
    extra = PhaseStarted
    extra_fields = {"phase": "extra"}


class _NoNotes(_Filtered):
    drop = Note


class _ExtraNotes(_Filtered):
    extra = Note
    extra_fields = {"message": "extra"}


class _RewordedNotes(_Filtered):
    def record(self, event) -> None:
        if isinstance(event, Note):
            Workflow.record(self, Note(level=event.level, message=f"{event.message}, worded anew", data=event.data))
        else:
            Workflow.record(self, event)


def _main_with(workflow: type[_Filtered]):
    async def main(wf: Workflow) -> None:
        await toy.main(workflow(wf))
    return main


def test_verify_same_handlers_no_divergence(toy_run) -> None:
    divergence, runtime = verify(toy_run.log, lambda: Runtime(toy.main))
    assert divergence is None and runtime.finished


def test_verify_dropped_decision(toy_run) -> None:
    divergence, _ = verify(toy_run.log, lambda: Runtime(_main_with(_NoPhaseStarted)))
    first = next(e for e in toy_run.log if e.type == "PhaseStarted")
    assert divergence is not None and divergence.seq == first.seq
    assert divergence.expected["type"] == "PhaseStarted" and divergence.actual is not None  # next decision slid up
    assert divergence.input_seq == first.causation_seq


def test_verify_extra_decision(toy_run) -> None:
    divergence, _ = verify(toy_run.log, lambda: Runtime(_main_with(_ExtraPhaseStarted)))
    first = next(e for e in toy_run.log if e.type == "PhaseStarted")
    assert divergence is not None and divergence.seq == first.seq + 1
    assert divergence.actual["payload"]["phase"] == "extra"
    assert "first divergence at seq" in divergence.describe()


@pytest.mark.parametrize("workflow", [_NoNotes, _ExtraNotes, _RewordedNotes], ids=["dropped", "extra", "reworded"])
def test_notes_are_remarks_never_compared(toy_run, workflow) -> None:
    """A release that rewords, adds or drops a note still replays (and resumes) a run recorded before it."""
    assert any(e.type == "Note" for e in toy_run.log)
    divergence, runtime = verify(toy_run.log, lambda: Runtime(_main_with(workflow)))
    assert divergence is None and runtime.finished
