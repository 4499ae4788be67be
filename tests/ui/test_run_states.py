"""What a run's page says about how the run stands: a failed run why and what next, a stopped
run how to resume, a run whose driver died that it did and how to resume; the server-side event
filter (SQLite and PostgreSQL; plain HTTP, the pages are rendered on the server)."""

from __future__ import annotations

import html
import os
import re
import urllib.request

from events.core import DriverStopped, Note
from tests.ui.browser import serve_ui
from tests.ui.writer import RunWriter


def _text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=60) as response:
        page = response.read().decode()
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def test_failed_stopped_and_crashed_runs_say_why_and_what_next(backend):
    failed = RunWriter(backend.store, "failed-run")
    failed.fail("Phase 1 produced no working solution")
    stopped = RunWriter(backend.store, "stopped-run")
    stopped.add(DriverStopped(reason="interrupted (SIGINT)", elapsed_s=3.0), scope="driver")
    RunWriter(backend.store, "crashed-run")          # running in the log, no driver holds it
    RunWriter(backend.store, "driven-run")
    token = backend.store.acquire_lease("driven-run", ttl_s=600)  # this test process is its live driver
    try:
        with serve_ui(backend.db) as url:
            page = _text(url + "run/failed-run")
            assert "The run failed: Phase 1 produced no working solution" in page
            assert f"engine rerun failed-run --db {backend.db}" in page
            page = _text(url + "run/stopped-run")
            assert "The run stopped: interrupted (SIGINT)" in page
            assert f"engine resume stopped-run --db {backend.db}" in page
            page = _text(url + "run/crashed-run")
            assert "No live driver holds this run" in page and f"engine resume crashed-run --db {backend.db}" in page
            page = _text(url + "run/driven-run")
            assert f"Driven by process {os.getpid()}" in page and "No live driver" not in page
    finally:
        backend.store.release_lease("driven-run", token)


def test_events_are_filtered_on_the_server_by_type_and_scope(backend):
    run = RunWriter(backend.store, "filter-run")
    run.solution("s1", "print(1)\n")
    run.add(Note(level="warning", message="a note in phase1"), scope="phase1")
    run.add(Note(level="info", message="a note in phase2"), scope="phase2/path-0")
    with serve_ui(backend.db) as url:
        rows = _rows(url + "run/filter-run/events?type=Note")
        assert rows == [("Note", "phase2/path-0"), ("Note", "phase1")]  # newest first
        assert _rows(url + "run/filter-run/events?type=Note&scope=phase2/path-0") == [("Note", "phase2/path-0")]
        assert len(_rows(url + "run/filter-run/events")) == 5
        assert "2 matching events of 5" in _text(url + "run/filter-run/events?type=Note")
        assert "a note in phase1" in _text(url + "run/filter-run/event/4")


def _rows(url: str) -> list[tuple[str, str]]:
    with urllib.request.urlopen(url, timeout=60) as response:
        page = response.read().decode()
    return [(html.unescape(t), html.unescape(s)) for t, s in re.findall(r'<tr data-type="([^"]*)" data-scope="([^"]*)"',
                                                                        page)]
