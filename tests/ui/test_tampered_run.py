"""The UI checks the hash chain of what it reads (issue 61, "the log and the run directory" 1): a
run whose stored events were altered is not shown as if it were the run; its page says what
`engine verify` says (seq, what differs, what to do). Checked as the UI reads, from the last
verified event on: an event altered after the page was first shown is caught too. SQLite and
PostgreSQL, plain HTTP."""

from __future__ import annotations

import html
import re
import urllib.error
import urllib.request

from tests.ui.browser import serve_ui, wait_for
from tests.ui.writer import RunWriter


def _page(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            status, body = response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        status, body = exc.code, exc.read().decode()
    return status, " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())


def _tamper(backend, run_id: str, seq: int) -> None:
    placeholder = "?" if backend.name == "sqlite" else "%s"
    backend.store.conn.execute(f"UPDATE events SET scope='forged' WHERE run_id={placeholder} AND seq={placeholder}",
                               (run_id, seq))


def test_a_tampered_run_is_refused_with_verifys_words(backend):
    run = RunWriter(backend.store, "forged-run")
    run.notes(3)
    RunWriter(backend.store, "intact-run").notes(2)
    _tamper(backend, "forged-run", 4)
    with serve_ui(backend.db) as url:
        status, page = _page(url + "run/forged-run")
        assert status == 404
        assert "TAMPERED: run forged-run: first bad event is seq 4: hash does not match" in page, page
        assert "so the run is not shown" in page and "engine verify forged-run" in page
        status, page = _page(url + "run/intact-run")
        assert status == 200 and "TAMPERED" not in page


def _forge_next_event(backend, run_id: str, seq: int) -> None:
    """Add event ``seq`` outside the engine, in one transaction with the run's head: a copy of the
    event before it (so its prev_hash cannot chain)."""
    p = "?" if backend.name == "sqlite" else "%s"
    statements = [(f"INSERT INTO events SELECT run_id, seq + 1, type, version, scope, causation_seq, recorded_at, "
                   f"payload, prev_hash, hash, NULL FROM events WHERE run_id={p} AND seq={p}", (run_id, seq - 1)),
                  (f"UPDATE runs SET head_seq={p} WHERE run_id={p}", (seq, run_id))]
    conn = backend.store.conn
    if backend.name == "sqlite":
        conn.execute("BEGIN IMMEDIATE")
        for statement, params in statements:
            conn.execute(statement, params)
        conn.execute("COMMIT")
    else:
        with conn.transaction():
            for statement, params in statements:
                conn.execute(statement, params)


def test_an_event_added_after_the_page_was_shown_is_checked_as_it_is_read(backend):
    run = RunWriter(backend.store, "live-run")
    run.notes(2)
    with serve_ui(backend.db) as url:
        status, page = _page(url + "run/live-run")
        assert status == 200 and "TAMPERED" not in page
        _forge_next_event(backend, "live-run", 5)
        wait_for(lambda: _page(url + "run/live-run")[0] == 404, "the UI to read the forged event")
        page = _page(url + "run/live-run")[1]
        assert "TAMPERED: run live-run: first bad event is seq 5: prev_hash does not match" in page, page
