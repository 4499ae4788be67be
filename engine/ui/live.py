"""Pushing the log to open pages: one poller per server, server-sent events per page.

The poller reads the store's heads (one small query: each run's last seq) every ``interval``
seconds, on SQLite as on PostgreSQL, reads what moved (engine/ui/runs.py) and wakes the pages.
Each page's stream then renders only its own fragments and sends them as one ``patch`` event,
tagged with the seq it reflects (a reconnecting browser sends it back as Last-Event-ID). A
stream holds nothing but that seq, so a page left open for hours costs no growing memory.

A page's stream ends by cancellation (the browser left: the server cancels its task, again and
again until it is gone), so waiting for the feed takes no lock: a waiter cancelled mid-wait must
leave nothing half-acquired behind (a condition variable under ``asyncio.wait_for`` did, and the
next stream failed with "cannot wait on un-acquired lock").
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import anyio
import structlog

from engine.ui.runs import RunIndex

log = structlog.get_logger(__name__)  # ENGINE_LOG_LEVEL decides what `engine ui` prints

# A page's update: element id → HTML to put there (replace) or to add (append), plus its seq.
Patch = dict[str, object]
IDLE_S = 5.0  # a ping (or the idle patch) this often keeps proxies from closing a quiet stream
MAX_REST_S = 2.0


class Feed:
    def __init__(self, index: RunIndex, *, interval: float = 0.25) -> None:
        self.index = index
        self.interval = interval
        self.version = 0
        self.moved: dict[str, int] = {}   # run or stream id → the feed version it last moved at
        self.error = ""
        self._changed = asyncio.Event()  # set once and replaced at each new version: one per version

    async def run(self) -> None:
        """Poll until cancelled; a store error is shown on the pages and retried, never fatal."""
        while True:
            try:
                moved = await anyio.to_thread.run_sync(self.index.refresh)
                self.error = ""
            except Exception as exc:  # an unreachable server: say so on every page, keep trying
                moved, self.error = set(), str(exc)
                log.warning("engine ui: reading the store failed", error=str(exc))
            if moved:
                self._advance(moved)
            await asyncio.sleep(self.interval)

    def _advance(self, moved: set[str]) -> None:
        """A new version: what moved is noted, then every waiter wakes (all on the event loop's
        thread, so a waiter sees the version and ``moved`` agree)."""
        self.version += 1
        for key in moved:
            self.moved[key] = self.version
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def wait(self, since: int, timeout: float) -> int:
        """The feed version once it is past ``since`` (or unchanged after ``timeout`` seconds)."""
        if self.version <= since:
            with anyio.move_on_after(timeout):
                await self._changed.wait()
        return self.version


async def stream(feed: Feed, render: Callable[[int], Awaitable[Patch | None]],
                 watches: Callable[[set[str]], bool], after: int,
                 idle: Callable[[], Awaitable[Patch | None]] | None = None) -> AsyncIterator[str]:
    """The server-sent events of one page: a patch whenever something it ``watches`` moved, and
    every ``IDLE_S`` seconds without one, ``idle``'s patch (what changes without an event)."""
    try:
        async for chunk in _patches(feed, render, watches, after, idle):
            yield chunk
    except anyio.get_cancelled_exc_class():
        log.info("engine ui: a live-update stream closed (its page went away)")
        raise


async def _patches(feed: Feed, render: Callable[[int], Awaitable[Patch | None]],
                   watches: Callable[[set[str]], bool], after: int,
                   idle: Callable[[], Awaitable[Patch | None]] | None) -> AsyncIterator[str]:
    seen = feed.version
    patch = await render(after)  # catch up at once (a reconnect, or a page rendered a moment ago)
    if patch is not None:
        after = int(str(patch.get("seq", after)))
        yield _event(patch)
    while True:
        version = await feed.wait(seen, IDLE_S)
        if version == seen:
            quiet = None if idle is None else await idle()
            yield ": ping\n\n" if quiet is None else _event(quiet)
            continue
        moved = {key for key, at in feed.moved.items() if at > seen}
        seen = version
        if watches(moved):
            started = time.monotonic()
            patch = await render(after)
            if patch is not None:
                after = int(str(patch.get("seq", after)))
                yield _event(patch)
            # A long log renders slowly: rest as long as the render took, so a page on a run that
            # appends without pause takes at most half a core (the next patch carries everything).
            await asyncio.sleep(min(time.monotonic() - started, MAX_REST_S))


def _event(patch: Patch) -> str:
    data = json.dumps(patch, separators=(",", ":"))
    ident = f"id: {patch['seq']}\n" if "seq" in patch else ""  # only a patch with a seq moves the resume point
    return f"{ident}event: patch\ndata: {data}\n\n"
