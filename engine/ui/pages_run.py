"""A run's page: the report's sections (engine/audit/report_sections.py, the renderers of
``engine report``) kept live, the run's solutions, and its events filterable by type and scope.
A failed or stopped run says why and what to do next."""

from __future__ import annotations

import json
import socket
from html import escape
from typing import Any
from urllib.parse import quote

from engine.audit.lineage import Lineage
from engine.audit.report_sections import Section, facts, kpis, load_lineage, run_sections
from engine.audit.runlog import RunLog, fmt_score, short
from engine.ui.layout import card, page, run_href, solution_href, status_pill
from engine.ui.source import LeaseHolder
from events.base import Envelope
from store.artifacts import is_ref

SECTION_LIMIT = 150   # lineage steps and notes on a page: the nearest / latest (the report has them all)
EVENT_ROWS = 500      # events kept in the live table (newest first); older ones: the events page
SOLUTION_ROWS = 400


def _db_arg(db: str) -> str:
    return f" --db {db}" if db else ""


def advice(log: RunLog, db: str) -> str:
    """Why a run ended other than completed, and the command that goes on from there."""
    s = log.state
    if s.status == "failed":
        return (f'<div class="alert">The run failed: {escape(s.error or "no message was recorded")}</div>'
                f'<p class="advice">A failed run is over (resume refuses it). To see whether it fails again with '
                f'the same answers: <code>engine rerun {escape(log.run_id)}{escape(_db_arg(db))}</code>; '
                f'or start a new run.</p>')
    if s.status == "stopped":
        why = next((e.payload.get("reason", "") for e in reversed(log.envelopes) if e.type == "DriverStopped"), "")
        return (f'<p class="advice">The run stopped{": " + escape(str(why)) if why else ""}. It continues exactly '
                f'where it stopped with <code>engine resume {escape(log.run_id)}{escape(_db_arg(db))}</code>.</p>')
    return ""


def in_flight(log: RunLog) -> str:
    """The effects requested and not answered yet: what a running run is waiting for right now."""
    pending = sorted(log.state.pending.values(), key=lambda p: p.seq)
    if not pending or log.state.finished:
        return ""
    items = "".join(f'<li><span class="dec">{escape(p.type)}</span> <span class="mono">{escape(p.effect_id)}</span> '
                    f'<span class="muted small">{escape(p.scope)} · requested at seq {p.seq}</span></li>'
                    for p in pending[:12])
    more = f'<li class="muted">… {len(pending) - 12} more</li>' if len(pending) > 12 else ""
    return f'<p class="caption">In flight ({len(pending)}):</p><ul class="small">{items}{more}</ul>'


def driver_line(log: RunLog, driver: LeaseHolder | None, db: str) -> str:
    """Who drives a running run; a run the log calls running whose driver is gone crashed or was
    killed (nothing recorded why): it says so, and how to go on."""
    if log.state.status != "running":
        return ""
    if driver is not None and driver.expires_in_s > 0 and not _dead_here(driver):
        return (f'<p class="caption">Driven by process {driver.pid} on {escape(driver.host)} '
                f'(its lease is renewed while it lives).</p>')
    return (f'<p class="advice">No live driver holds this run: the process that drove it ended without recording '
            f'why (crashed, killed, or its machine went down). It continues exactly where the log ends with '
            f'<code>engine resume {escape(log.run_id)}{escape(_db_arg(db))}</code>.</p>')


def _dead_here(driver: LeaseHolder) -> bool:
    from store.leases import pid_alive

    return driver.host == socket.gethostname() and not pid_alive(driver.pid)


def summary(log: RunLog, lineage: Lineage | None, db: str, driver: LeaseHolder | None) -> str:
    return (advice(log, db) + f'<div id="run-driver">{driver_line(log, driver, db)}</div>' + kpis(log, lineage)
            + in_flight(log) + facts(log, lineage))


def solutions_table(log: RunLog) -> str:
    sols = sorted(log.state.solutions.values(), key=lambda n: n.seq, reverse=True)
    hidden = max(0, len(sols) - SOLUTION_ROWS)
    rows = "".join(
        f'<tr><td class="mono"><a href="{escape(solution_href(log.run_id, n.solution_id))}">'
        f'{escape(n.solution_id)}</a></td><td>{escape(n.origin)}</td><td>{escape(n.phase)}</td>'
        f'<td>{escape(n.scope)}</td><td class="num" data-v="{"" if n.score is None else repr(n.score)}">'
        f'{escape(fmt_score(n.score))}</td><td class="mono small">'
        + ", ".join(f'<a href="{escape(solution_href(log.run_id, p))}">{escape(p)}</a>' for p in dict.fromkeys(n.parents))
        + f'</td><td class="num">{n.seq}</td></tr>' for n in sols[:SOLUTION_ROWS])
    more = f'<p class="muted">the {SOLUTION_ROWS} latest of {len(sols)} solutions</p>' if hidden else ""
    if not sols:
        return '<p class="muted">No solution recorded yet.</p>'
    return (f'{more}<table class="grid-table" data-sortable><thead><tr><th data-col="0">solution</th>'
            '<th data-col="1">origin</th><th data-col="2">phase</th><th data-col="3">scope</th>'
            '<th data-col="4">score</th><th>parents</th><th data-col="6">seq</th></tr></thead>'
            f'<tbody>{rows}</tbody></table>')


def event_summary(env: Envelope, limit: int = 260) -> str:
    text = json.dumps(short(without_refs(env.payload), 80), ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def without_refs(value: Any) -> Any:
    """A payload with each artifact left as sealed (a prompt: fetched on the event's page) named by
    its size, not its digest."""
    if is_ref(value):
        return f"‹{value['bytes']:,} bytes, on the event's page›"
    if isinstance(value, dict):
        return {k: without_refs(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_refs(v) for v in value]
    return value


def event_rows(run_id: str, envelopes: list[Envelope]) -> str:
    """Newest first."""
    base = run_href(run_id)
    return "".join(
        f'<tr data-type="{escape(e.type)}" data-scope="{escape(e.scope)}" data-seq="{e.seq}">'
        f'<td class="num"><a href="{escape(base)}/event/{e.seq}">{e.seq}</a></td>'
        f'<td class="mono small">{escape(e.recorded_at[11:23])}</td><td>{escape(e.type)}</td>'
        f'<td>{escape(e.scope)}</td><td class="payload">{escape(event_summary(e))}</td></tr>'
        for e in reversed(envelopes))


def _options(values: set[str], any_label: str) -> str:
    return f'<option value="">{escape(any_label)}</option>' + "".join(
        f'<option value="{escape(v)}">{escape(v)}</option>' for v in sorted(values))


def events_caption(log: RunLog) -> str:
    return (f"The {min(EVENT_ROWS, len(log.envelopes))} latest of {len(log.envelopes)} events, newest first; new "
            "events appear on top as they are appended.")


def events_card(log: RunLog) -> str:
    types = {e.type for e in log.envelopes}
    scopes = {e.scope for e in log.envelopes}
    shown = log.envelopes[-EVENT_ROWS:]
    toolbar = ('<div class="toolbar">'
               f'<select id="event-types" data-filter="events-body" data-attr="type">{_options(types, "any type")}'
               f'</select><select id="event-scopes" data-filter="events-body" data-attr="scope">'
               f'{_options(scopes, "any scope")}</select><input type="search" placeholder="text in the payload" '
               f'data-filter="events-body" data-attr=""><a href="{escape(run_href(log.run_id))}/events">'
               f'every event, filtered on the server</a></div>')
    table = ('<table class="grid-table events"><thead><tr><th>seq</th><th>time</th><th>type</th><th>scope</th>'
             f'<th>payload</th></tr></thead><tbody id="events-body" data-max="{EVENT_ROWS}">'
             f'{event_rows(log.run_id, shown)}</tbody></table>')
    note = f'<p class="caption" id="events-caption">{events_caption(log)}</p>'
    return card("Events", note + toolbar + table)


def _sections(log: RunLog) -> tuple[list[Section], Lineage | None]:
    lineage, problem = load_lineage(log)
    href = lambda sid: solution_href(log.run_id, sid)
    return run_sections(log, lineage, problem, solution_href=href, limit=SECTION_LIMIT), lineage


def _heading(log: RunLog) -> tuple[str, str, str, str]:
    s = log.state
    best = fmt_score(s.best_score)
    return status_pill(s.status), escape(s.current_phase or "-"), escape(best), str(s.events)


def run_page(log: RunLog, *, label: str, db: str, driver: LeaseHolder | None) -> str:
    s = log.state
    task = str((s.task or {}).get("competition_id", ""))
    sections, lineage = _sections(log)
    status, phase, best, events = _heading(log)
    heading = (f'<h1>{escape(task or "run")} <span class="runid">{escape(log.run_id)}</span>'
               f'<span id="run-status">{status}</span></h1>'
               f'<div class="sub">{escape(s.strategy)} · agent {escape(s.backend)} · seed {s.seed} · phase '
               f'<b id="run-phase">{phase}</b> · best <b id="run-best">{best}</b> · '
               f'<span id="run-events">{events}</span> events</div>')
    body = (card("Summary", summary(log, lineage, db, driver), key="summary")
            + "".join(card(sec.title, sec.html, key=sec.key) for sec in sections)
            + card("Solutions", solutions_table(log), key="solutions") + events_card(log))
    return page(f"{task} · {log.run_id}", body, live=f"/live/run/{quote(log.run_id, safe='')}", seq=s.last_seq,
                label=label, eyebrow="run", heading=heading)


def run_patch(log: RunLog, after: int, *, db: str, driver: LeaseHolder | None) -> dict[str, object] | None:
    """Everything that changed since ``after``: the sections re-rendered, the new events on top."""
    s = log.state
    if s.last_seq <= after:
        return None
    sections, lineage = _sections(log)
    status, phase, best, events = _heading(log)
    replace = {"run-status": status, "run-phase": phase, "run-best": best, "run-events": events,
               "sec-summary": summary(log, lineage, db, driver), "sec-solutions": solutions_table(log),
               "events-caption": events_caption(log),
               "event-types": _options({e.type for e in log.envelopes}, "any type"),
               "event-scopes": _options({e.scope for e in log.envelopes}, "any scope")}
    replace.update({f"sec-{sec.key}": sec.html for sec in sections})
    new = [e for e in log.envelopes[-EVENT_ROWS:] if e.seq > after]
    return {"seq": s.last_seq, "replace": replace, "prepend": {"events-body": event_rows(log.run_id, new)}}
