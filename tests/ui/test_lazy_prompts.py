"""The run page does not fetch what it does not show (issue 63): agent calls' prompts, most of a
long run's stored bytes, stay sealed references in the UI's copy of the log; the solution page
that shows the call that wrote a solution, and the event's own page, fetch them whole (SQLite and
PostgreSQL)."""

from __future__ import annotations

import html
import json
import re
import urllib.request
from pathlib import Path

from engine.ui.runs import RunIndex
from engine.ui.source import SQLiteSource
from store.artifacts import is_ref
from tests.core.test_resume_reads import _recorded, record_wine
from tests.ui.browser import serve_ui


def _text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=60) as response:
        body = response.read().decode()
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())


def _words(text: str, n: int = 200) -> str:
    return " ".join(text[:n].split()[:-1])  # whole words only: the page may cut the last


def test_prompts_are_read_as_references_and_fetched_for_the_page_that_shows_them(tmp_path: Path) -> None:
    store, run = _recorded(tmp_path / "engine.db")
    whole = {e.seq: e for e in store.read(run)}
    store.close()
    source = SQLiteSource(tmp_path / "engine.db")
    try:
        index = RunIndex(source)
        log = index.log(run)
        assert log is not None
        sealed = [e for e in log.envelopes if e.type == "AgentCallRequested" and is_ref(e.payload["prompt"])]
        assert sealed and all(e.payload != whole[e.seq].payload for e in sealed)
        assert [e for e in log.envelopes if e not in sealed] == [e for e in whole.values() if e.seq
                                                                    not in {s.seq for s in sealed}]
        shown = index.shown_whole(log, lambda e: e.seq == sealed[0].seq)
        assert [e.payload for e in shown.envelopes if e.seq == sealed[0].seq] == [whole[sealed[0].seq].payload]
        assert log.envelopes[sealed[0].seq - 1] is sealed[0]  # the kept copy stays sealed
    finally:
        source.close()


def test_the_solution_and_event_pages_show_the_prompt_the_run_page_leaves_out(backend) -> None:
    run = record_wine(backend.store)
    envelopes = list(backend.store.read(run))
    by_seq = {e.seq: e for e in envelopes}
    written = next(e for e in envelopes if e.type == "SolutionRecorded"
                   and by_seq[e.causation_seq or 0].type == "AgentCallCompleted")
    effect = by_seq[written.causation_seq or 0].payload["effect_id"]
    request = next(e for e in envelopes if e.type == "AgentCallRequested" and e.payload["effect_id"] == effect)
    prompt = _words(request.payload["prompt"])
    with serve_ui(backend.db) as url:
        run_page = _text(url + f"run/{run}")
        assert prompt not in run_page and "bytes, on the event's page" in run_page
        assert prompt in _text(url + f"run/{run}/solution/{written.payload['solution_id']}")
        first_line = json.dumps(request.payload["prompt"].splitlines()[0])[1:-1]  # the event page shows JSON
        assert " ".join(first_line.split()) in _text(url + f"run/{run}/event/{request.seq}")
