"""A decision changed behind a named patch keeps old runs replaying; one changed without it is caught.

The planted change renames the phase every PhaseStarted announces: a decision the recorded fixture
made the old way. Unmarked, replay names the first divergence; behind ``wf.patched(...)`` the
fixture (created before the patch existed) keeps the old path and replays, while a run created
now records the patch in its RunStarted and takes the new path.
"""

from __future__ import annotations

import pytest

from engine.run.replayer import read_export, replay_log
from events.core import PhaseStarted, RunFailed, RunStarted
from handlers import patches
from handlers.runtime import Runtime
from handlers.workflow import Workflow
from replay.verify import verify
from tests.replays.fixtures import FIXTURES
from tests.toy import strategy as toy

PLANTED = "test-rename-phases"


def _plant(monkeypatch: pytest.MonkeyPatch, *, behind_patch: bool) -> None:
    record = Workflow.record

    def renaming(self: Workflow, event) -> None:
        if isinstance(event, PhaseStarted) and (not behind_patch or self.patched(PLANTED)):
            event = PhaseStarted(**{**event.model_dump(), "phase": f"{event.phase}-renamed"})
        record(self, event)

    monkeypatch.setattr(Workflow, "record", renaming)
    if behind_patch:
        monkeypatch.setattr(patches, "KNOWN", (*patches.KNOWN, PLANTED))


def _fixture():
    spec = next(f for f in FIXTURES if f.name.startswith("mle-star-wine-builtin"))
    return read_export(spec.path)


def test_unmarked_decision_change_is_caught_at_its_first_divergence(monkeypatch: pytest.MonkeyPatch) -> None:
    envelopes = _fixture()
    _plant(monkeypatch, behind_patch=False)
    divergence, _ = replay_log(envelopes)
    first = next(e for e in envelopes if e.type == "PhaseStarted")
    assert divergence is not None and divergence.seq == first.seq
    assert "PhaseStarted" in divergence.describe()


def test_marked_decision_change_keeps_the_old_fixture_replaying(monkeypatch: pytest.MonkeyPatch) -> None:
    envelopes = _fixture()
    assert envelopes[0].event().patches == []  # recorded before any patch: upcast from v1 or created empty
    _plant(monkeypatch, behind_patch=True)
    divergence, _ = replay_log(envelopes)
    assert divergence is None


def test_a_run_created_with_the_patch_takes_the_new_path(toy_run, monkeypatch: pytest.MonkeyPatch) -> None:
    _plant(monkeypatch, behind_patch=True)
    started = toy_run.log[0].event()
    assert isinstance(started, RunStarted)
    with_patch = started.model_copy(update={"patches": patches.adopted_by_new_runs()})
    decisions = Runtime(toy.main).feed(with_patch)
    phases = [d.event.phase for d in decisions if isinstance(d.event, PhaseStarted)]
    assert phases == ["toy-renamed"]
    # ...and the recorded toy run, created without it, still replays on the old path.
    divergence, _ = verify(toy_run.log, lambda: Runtime(toy.main))
    assert divergence is None


def test_an_unknown_patch_name_is_refused(toy_run) -> None:
    async def typo(wf: Workflow) -> None:
        wf.patched("no-such-patch")

    decisions = Runtime(typo).feed(toy_run.log[0].event())
    failed = [d.event for d in decisions if isinstance(d.event, RunFailed)]
    assert failed and "unknown handler patch 'no-such-patch'" in failed[0].error


def test_new_runs_record_every_known_patch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(patches, "KNOWN", ("a", "b"))
    assert patches.adopted_by_new_runs() == ["a", "b"]
