"""The runs list and the campaigns list: one row per run (campaign), sortable and filterable in
the page, its body replaced live as runs move on."""

from __future__ import annotations

from html import escape

from engine.audit.runlog import fmt_score
from engine.audit.svg_plots import fmt_seconds
from engine.campaign.stream import STREAM_PREFIX
from engine.ui.layout import campaign_href, page, run_href, status_pill
from engine.ui.runs import RunEntry, RunIndex

RUN_COLUMNS = ("run", "task", "strategy", "agent", "status", "phase", "best score", "cost", "elapsed", "events",
               "created")


def run_row(entry: RunEntry) -> str:
    s = entry.state
    task = str((s.task or {}).get("competition_id") or entry.head.task)
    best = s.best_score
    cells = [
        (entry.head.run_id, f'<a href="{escape(run_href(entry.head.run_id))}">{escape(entry.head.run_id)}</a>'),
        (task, escape(task)),
        (s.strategy or entry.head.strategy, escape(s.strategy or entry.head.strategy)),
        (s.backend, escape(s.backend)),
        (s.status, status_pill(s.status)),
        (s.current_phase, escape(s.current_phase or "-")),
        ("" if best is None else repr(float(best)), escape(fmt_score(best))),
        (repr(float(s.accumulated_cost_usd)), f"${s.accumulated_cost_usd:.4f}"),
        (repr(float(s.elapsed_seconds)), escape(fmt_seconds(s.elapsed_seconds))),
        (str(s.events), str(s.events)),
        (entry.head.created_at, escape(entry.head.created_at[5:16].replace("T", " "))),
    ]
    tds = "".join(f'<td data-v="{escape(v)}">{html}</td>' for v, html in cells)
    return (f'<tr data-status="{escape(s.status)}" data-run="{escape(entry.head.run_id)}" '
            f'data-seq="{s.last_seq}">{tds}</tr>')


def runs_rows(index: RunIndex) -> str:
    entries = sorted(index.runs.values(), key=lambda e: e.head.created_at, reverse=True)
    return "".join(run_row(e) for e in entries)


def runs_page(index: RunIndex, *, label: str, error: str = "", note: str = "") -> str:
    statuses = sorted({e.state.status for e in index.runs.values()} | {"running", "completed", "failed", "stopped"})
    head = "".join(f'<th data-col="{i}">{escape(c)}</th>' for i, c in enumerate(RUN_COLUMNS))
    toolbar = ('<div class="toolbar"><input type="search" placeholder="filter: task, run, strategy…" '
               'data-filter="runs-body" data-attr="" id="runs-filter">'
               '<select data-filter="runs-body" data-attr="status" id="runs-status"><option value="">any status</option>'
               + "".join(f'<option value="{escape(s)}">{escape(s)}</option>' for s in statuses) + "</select>"
               f'<span class="muted" id="runs-count">{len(index.runs)} runs</span></div>')
    table = (f'<table class="grid-table" id="runs-table" data-sortable data-sort-col="10" data-sort-dir="desc">'
             f'<thead><tr>{head}</tr></thead><tbody id="runs-body">{runs_rows(index)}</tbody></table>')
    body = (f'<div id="store-error">{_error(error)}</div><div id="runs-note">{_note(index, note)}</div>'
            f'<section class="card"><h2>Runs</h2>{toolbar}<div class="scroll-x">{table}</div></section>')
    return page("engine ui · runs", body, live="/live/runs", label=label,
                heading=f'<h1>Runs <span class="runid">{escape(label)}</span></h1>')


def runs_patch(index: RunIndex, error: str = "", note: str = "") -> dict[str, object]:
    return {"replace": {"runs-body": runs_rows(index), "runs-count": f"{len(index.runs)} runs",
                        "store-error": _error(error), "runs-note": _note(index, note)}}


def _note(index: RunIndex, pending: str) -> str:
    """An empty store says so: the database not created yet (``pending``), or no run in it yet."""
    if pending:
        return f'<p class="muted">{escape(pending)}</p>'
    return "" if index.runs else '<p class="muted">No runs in this database yet: they appear here as they start.</p>'


def campaigns_page(index: RunIndex, *, label: str) -> str:
    rows = "".join(
        f'<tr><td><a href="{escape(campaign_href(sid[len(STREAM_PREFIX):]))}">{escape(sid[len(STREAM_PREFIX):])}</a>'
        f'</td><td class="num">{h.last_seq}</td><td>{escape(h.created_at[:19].replace("T", " "))}</td></tr>'
        for sid, h in sorted(index.streams.items()))
    table = ('<table class="grid-table"><thead><tr><th>campaign</th><th>events</th><th>created</th></tr></thead>'
             f'<tbody>{rows}</tbody></table>' if rows else '<p class="muted">No campaign in this database.</p>')
    return page("engine ui · campaigns", f'<section class="card"><h2>Campaigns</h2>{table}</section>', label=label,
                heading="<h1>Campaigns</h1>")


def _error(error: str) -> str:
    return f'<div class="alert">the store cannot be read right now: {escape(error)}</div>' if error else ""
