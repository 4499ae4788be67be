"""The web application: routes over a read-only source, the live feed, the guard.

Every page is rendered in a worker thread holding the index's lock (the poller folds new events
into the same projections), so a page never sees a run half-updated.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import TypeVar

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse
from starlette.routing import Route

from engine.audit.runlog import RunLog
from engine.campaign.stream import fold_campaign, stream_id
from engine.ui.assets import UI_JS
from engine.ui.campaign_view import CampaignCells, CampaignView
from engine.ui.layout import page
from engine.ui.live import Feed, Patch, stream
from engine.ui.pages_campaign import campaign_page, campaign_patch
from engine.ui.pages_events import event_page, events_page
from engine.ui.pages_run import driver_line, run_page, run_patch
from engine.ui.pages_runs import campaigns_page, runs_page, runs_patch
from engine.ui.pages_solution import requests_shown, solution_page
from engine.ui.runs import RunIndex
from engine.ui.security import AccessGuard
from engine.ui.source import LogSource

T = TypeVar("T")


class UiApp:
    def __init__(self, source: LogSource, *, db_arg: str, interval: float = 0.25) -> None:
        self.source = source
        self.db_arg = db_arg                 # as the user named it, for the commands the pages suggest
        self.index = RunIndex(source)
        self.feed = Feed(self.index, interval=interval)
        self.campaign_cells = CampaignCells(self.index)

    async def locked(self, work: Callable[[], T]) -> T:
        def run() -> T:
            with self.index.lock:
                return work()

        return await anyio.to_thread.run_sync(run)

    # --- pages ------------------------------------------------------------------------------

    async def runs(self, request: Request) -> Response:
        return HTMLResponse(await self.locked(lambda: runs_page(self.index, label=self.source.label,
                                                                   error=self.feed.error, note=self.source.pending())))

    async def campaigns(self, request: Request) -> Response:
        return HTMLResponse(await self.locked(lambda: campaigns_page(self.index, label=self.source.label)))

    async def run(self, request: Request) -> Response:
        run_id = request.path_params["run_id"]
        return await self._with_log(run_id, lambda log: run_page(log, label=self.source.label, db=self.db_arg,
                                                                 driver=self.source.driver(run_id)))

    async def solution(self, request: Request) -> Response:
        sid = request.path_params["solution_id"]
        return await self._with_log(request.path_params["run_id"], lambda log: solution_page(
            self.index.shown_whole(log, requests_shown(log, sid)), sid, label=self.source.label),
            missing=f"no solution {sid!r} in this run")

    async def events(self, request: Request) -> Response:
        q = request.query_params
        before = q.get("before", "")
        return await self._with_log(request.path_params["run_id"], lambda log: events_page(
            log, label=self.source.label, type_=q.get("type", ""), scope=q.get("scope", ""),
            before=int(before) if before.isdigit() else None))

    async def event(self, request: Request) -> Response:
        seq = request.path_params["seq"]
        return await self._with_log(request.path_params["run_id"],
                                    lambda log: event_page(self.index.shown_whole(log, lambda e: e.seq == seq), seq,
                                                           label=self.source.label),
                                    missing=f"no event {seq} in this run")

    async def campaign(self, request: Request) -> Response:
        name = request.path_params["name"]

        def render() -> str | None:
            view = self._campaign(name)
            return None if view is None else campaign_page(name, view, self.index, label=self.source.label)

        html = await self.locked(render)
        return HTMLResponse(html) if html is not None else self._not_found(f"no campaign {name!r} in this database")

    async def script(self, request: Request) -> Response:
        return Response(UI_JS, media_type="text/javascript")

    async def no_icon(self, request: Request) -> Response:
        return Response(status_code=204)

    async def _with_log(self, run_id: str, render: Callable[[RunLog], str | None], *,
                        missing: str = "") -> Response:
        """The page ``render`` makes of the run; 404 for an unknown run, or when it renders None."""
        def work() -> tuple[bool, str | None]:
            log = self.index.log(run_id)
            return (False, None) if log is None else (True, render(log))

        known, html = await self.locked(work)
        if not known:  # unknown, or refused: a tampered or damaged log is named as `engine verify` names it
            return self._not_found(self.index.refusal(run_id) or f"no run {run_id!r} in this database")
        return HTMLResponse(html) if html is not None else self._not_found(missing)

    def _not_found(self, message: str) -> Response:
        from html import escape

        body = f'<section class="card"><p>{escape(message)}</p><p><a href="/">all runs</a></p></section>'
        return HTMLResponse(page("not found", body, label=self.source.label, heading="<h1>Not found</h1>"),
                            status_code=404)

    # --- campaigns --------------------------------------------------------------------------

    def _campaign(self, name: str) -> CampaignView | None:
        sid = stream_id(name)
        if sid not in self.index.streams:
            self.index.refresh()
            if sid not in self.index.streams:
                return None
        return self.campaign_cells.view(fold_campaign(self.source.read(sid)))

    # --- live -------------------------------------------------------------------------------

    def _sse(self, request: Request, render: Callable[[int], Patch | None],
             watches: Callable[[set[str]], bool], idle: Callable[[], Patch | None] | None = None) -> Response:
        last = request.headers.get("last-event-id", "") or request.query_params.get("after", "")
        after = int(last) if last.isdigit() else 0

        async def patch(since: int) -> Patch | None:
            return await self.locked(lambda: render(since))

        async def on_idle() -> Patch | None:
            return None if idle is None else await self.locked(idle)

        async def body() -> AsyncIterator[str]:
            async for chunk in stream(self.feed, patch, watches, after, on_idle):
                yield chunk

        return StreamingResponse(body(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    async def live_runs(self, request: Request) -> Response:
        def render(since: int) -> Patch | None:
            return {"seq": self.feed.version, **runs_patch(self.index, self.feed.error, self.source.pending())}

        return self._sse(request, render, lambda moved: True)

    async def live_run(self, request: Request) -> Response:
        run_id = request.path_params["run_id"]

        def render(since: int) -> Patch | None:
            log = self.index.log(run_id)
            return None if log is None else run_patch(log, since, db=self.db_arg, driver=self.source.driver(run_id))

        def idle() -> Patch | None:  # a crash appends nothing: the driver's liveness is looked at anyway
            log = self.index.log(run_id)
            if log is None or log.state.finished:
                return None
            return {"replace": {"run-driver": driver_line(log, self.source.driver(run_id), self.db_arg)}}

        return self._sse(request, render, lambda moved: run_id in moved, idle=idle)

    async def live_campaign(self, request: Request) -> Response:
        name = request.path_params["name"]

        def render(since: int) -> Patch | None:
            view = self._campaign(name)
            return None if view is None or view.seq == since else campaign_patch(view, self.index)

        return self._sse(request, render, lambda moved: bool(moved))

    # --- the application --------------------------------------------------------------------

    def asgi(self, *, token: str | None, loopback: bool) -> AccessGuard:
        @contextlib.asynccontextmanager
        async def lifespan(app: Starlette) -> AsyncIterator[None]:
            await anyio.to_thread.run_sync(self.index.refresh)
            poller = asyncio.create_task(self.feed.run())
            try:
                yield
            finally:
                poller.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await poller

        routes = [
            Route("/", self.runs), Route("/campaigns", self.campaigns), Route("/run/{run_id}", self.run),
            Route("/run/{run_id}/solution/{solution_id}", self.solution), Route("/run/{run_id}/events", self.events),
            Route("/run/{run_id}/event/{seq:int}", self.event), Route("/campaign/{name}", self.campaign),
            Route("/live/runs", self.live_runs), Route("/live/run/{run_id}", self.live_run),
            Route("/live/campaign/{name}", self.live_campaign), Route("/static/ui.js", self.script),
            Route("/favicon.ico", self.no_icon),
        ]
        return AccessGuard(Starlette(routes=routes, lifespan=lifespan), token=token, loopback=loopback)
