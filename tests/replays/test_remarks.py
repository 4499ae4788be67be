"""Remarks are not decisions: a release that rewords every note still replays every recorded run.

Every fixture is replayed with each ``Note`` a handler records reworded (as a changed log message in
a handler would be), and must show no divergence; the same replay with one real decision changed
must still name its first divergence, so the check is not blind.
"""

from __future__ import annotations

import pytest

from engine.run.replayer import read_export, replay_log
from events.core import Note, PhaseStarted
from handlers.workflow import Workflow
from tests.replays.fixtures import FIXTURES


def _reword_notes(monkeypatch: pytest.MonkeyPatch) -> None:
    record = Workflow.record

    def reworded(self: Workflow, event) -> None:
        if isinstance(event, Note):
            event = Note(level=event.level, message=f"{event.message} (worded anew)", data=event.data)
        record(self, event)

    monkeypatch.setattr(Workflow, "record", reworded)


@pytest.mark.parametrize("spec", FIXTURES, ids=[f.name for f in FIXTURES])
def test_fixture_replays_with_every_note_reworded(spec, monkeypatch: pytest.MonkeyPatch) -> None:
    envelopes = read_export(spec.path)
    assert any(e.type == "Note" for e in envelopes), "a fixture without notes proves nothing here"
    _reword_notes(monkeypatch)
    divergence, _ = replay_log(envelopes)
    assert divergence is None, divergence.describe()


def test_a_changed_decision_is_still_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = next(f for f in FIXTURES if f.name.startswith("mle-star-wine-builtin"))
    envelopes = read_export(spec.path)
    record = Workflow.record

    def renamed_phase(self: Workflow, event) -> None:
        if isinstance(event, PhaseStarted):
            event = PhaseStarted(**{**event.model_dump(), "phase": f"{event.phase}-renamed"})
        record(self, event)

    monkeypatch.setattr(Workflow, "record", renamed_phase)
    divergence, _ = replay_log(envelopes)
    first = next(e for e in envelopes if e.type == "PhaseStarted")
    assert divergence is not None and divergence.seq == first.seq
