"""Live-update streams that close: a page that goes away cancels its stream at any point, and the
server neither fails nor prints a traceback for it; the other pages keep getting their patches
(issue 61, item 6: "RuntimeError: cannot wait on un-acquired lock" after a client left)."""

from __future__ import annotations

import random
import re
import socket
import subprocess
import time
from pathlib import Path

import anyio
import pytest

from engine.ui.live import Feed
from store.sqlite import SQLiteEventStore
from tests.ui.browser import engine_cmd, engine_env
from tests.ui.writer import RunWriter


class TickingIndex:
    """A store in which some run moves at every poll."""

    def __init__(self) -> None:
        self.polls = 0

    def refresh(self) -> set[str]:
        self.polls += 1
        return {f"run-{self.polls % 3}"}


async def _page(feed: Feed, woken: list[int]) -> None:
    seen = feed.version
    while True:
        version = await feed.wait(seen, 5.0)
        if version > seen:
            woken.append(version)
        seen = version


@pytest.mark.parametrize("plan_seed", range(8))
def test_pages_cancelled_at_any_step_leave_the_feed_working(plan_seed: int) -> None:
    """Forty pages wait on a feed that moves at every step; each is cancelled after a number of
    event-loop steps drawn from the plan (some before they first wait, some while waiting, some
    as they wake), the way the server cancels a stream whose client left, again and again until
    it ends. No page fails, and a page that stays is woken by every later version."""
    plan = random.Random(plan_seed)

    async def scenario() -> None:
        feed = Feed(TickingIndex(), interval=0)  # type: ignore[arg-type]
        survivor: list[int] = []
        async with anyio.create_task_group() as pages:
            pages.start_soon(feed.run)
            pages.start_soon(_page, feed, survivor)
            for _ in range(40):
                with anyio.CancelScope() as scope:
                    pages.start_soon(_cancel_after, scope, plan.randrange(0, 12))
                    await _page(feed, [])
            start = feed.version
            while feed.version < start + 5:
                await anyio.sleep(0.01)
            pages.cancel_scope.cancel()
        assert survivor and survivor[-1] >= start + 4, (survivor[-5:], start)

    anyio.run(scenario)


async def _cancel_after(scope: anyio.CancelScope, steps: int) -> None:
    for _ in range(steps):
        await anyio.sleep(0)
    scope.cancel()


def _serve(db: Path) -> tuple[subprocess.Popen[str], str, int]:
    proc = subprocess.Popen(engine_cmd("ui", "--db", str(db), "--port", "0"), stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, text=True, env={**engine_env(), "ENGINE_LOG_LEVEL": "INFO"})
    assert proc.stderr is not None
    line = proc.stderr.readline()
    match = re.search(r"serving http://([\d.]+):(\d+)/", line)
    if match is None:
        proc.kill()
        raise AssertionError(f"engine ui did not start: {line}{proc.stderr.read()}")
    return proc, match.group(1), int(match.group(2))


def _open_stream(host: str, port: int, path: str) -> socket.socket:
    sock = socket.create_connection((host, port), timeout=30)
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    assert sock.recv(4096).startswith(b"HTTP/1.1 200"), path
    return sock


def test_a_server_whose_clients_come_and_go_logs_closed_streams_and_no_traceback(tmp_path: Path) -> None:
    """A real `engine ui` on a run that appends all the time: a hundred live streams opened and
    dropped (a few at once), then one more still gets its patches. The server's output says the
    streams closed, and has no traceback."""
    db = tmp_path / "engine.db"
    store = SQLiteEventStore(db)
    writer = RunWriter(store, "busy")
    proc, host, port = _serve(db)
    plan = random.Random(61)
    try:
        for _round in range(25):
            socks = [_open_stream(host, port, plan.choice(["/live/runs", "/live/run/busy"])) for _ in range(4)]
            writer.notes(3)
            time.sleep(plan.random() * 0.05)
            for sock in socks:
                sock.close()
        last = _open_stream(host, port, "/live/run/busy")
        writer.notes(2)
        received = b""
        while b"event: patch" not in received:
            received += last.recv(65536)
        last.close()
    finally:
        proc.terminate()
        _, errors = proc.communicate(timeout=60)
        store.close()
    assert "Traceback" not in errors and "RuntimeError" not in errors, errors[-3000:]
    assert "a live-update stream closed" in errors, errors[-3000:]


