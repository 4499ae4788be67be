"""A campaign's page: the grid (task × strategy/preset/agent rows, seeds as columns) with each
run's status and score, mean ± SE per task, and the failures with their reasons — the numbers
of ``engine campaign report`` (engine/campaign/tally.py, per cell: engine/ui/campaign_view.py), kept
live, each cell a link to its run."""

from __future__ import annotations

from html import escape
from typing import Any
from urllib.parse import quote

from engine.audit.runlog import fmt_score
from engine.campaign.tally import RunRow, fmt
from engine.ui.campaign_view import CampaignView, TaskScores
from engine.ui.layout import card, page, run_href, status_pill
from engine.ui.runs import RunIndex


def _cell(row: RunRow, index: RunIndex) -> str:
    if row.test_score is not None:
        score = f'<div class="score">{escape(fmt_score(row.test_score))}</div><div class="small muted">test</div>'
    else:
        entry = index.runs.get(row.run_id or "")
        best = entry.state.best_score if entry is not None else None
        score = (f'<div class="score">{escape(fmt_score(best))}</div><div class="small muted">validation</div>'
                 if best is not None else "")
    status = status_pill(row.status)
    inner = f"{status}{score}"
    if row.run_id:
        inner = f'<a href="{escape(run_href(row.run_id))}" data-run="{escape(row.run_id)}">{inner}</a>'
    return f'<td class="cell" data-status="{escape(row.status)}">{inner}</td>'


def grid(view: CampaignView, index: RunIndex) -> str:
    seeds = sorted({r.seed for r in view.rows})
    rows: dict[tuple[str, ...], dict[int, RunRow]] = {}
    for r in view.rows:
        rows.setdefault(view.key_of(r), {})[r.seed] = r
    scores = view.scores()
    head = ("<tr><th>task</th>" + "".join(f"<th>{escape(d)}</th>" for d in view.dims)
            + "".join(f"<th>seed {s}</th>" for s in seeds) + "<th>metric</th><th>test score mean ± SE</th></tr>")
    body = []
    for key, by_seed in rows.items():
        t = scores[key]
        body.append("<tr>" + "".join(f"<td>{escape(str(k))}</td>" for k in key)
                    + "".join(_cell(by_seed[s], index) if s in by_seed else "<td></td>" for s in seeds)
                    + f'<td>{_metric(t)}</td><td class="num">{escape(_mean_se(t))}</td></tr>')
    return f'<table class="grid-table grid-cells"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table>'


def _metric(t: TaskScores) -> str:
    if not t.metric:
        return '<span class="muted">not graded yet</span>'
    return escape(t.metric) + (" ↓ lower is better" if t.lower_is_better else " ↑ higher is better")


def _mean_se(t: TaskScores) -> str:
    """As ``engine campaign report`` writes it (tally.mean_pm_se)."""
    if t.mean is None:
        return "-"
    return f"{fmt(t.mean)} ± {fmt(t.se, 2)}" if t.se is not None else f"{fmt(t.mean)} (n=1, no SE)"


def failures(view: CampaignView) -> str:
    if not view.failures:
        return '<p class="ok">No failure so far.</p>'
    rows = "".join(
        f'<tr><td>{_run_link(f.run_id)}</td><td>{escape(f.task)}</td><td class="num">{f.seed}</td>'
        f'<td>{escape(f.kind)}</td><td>{escape(f.reason)}</td></tr>' for f in view.failures)
    return ('<table class="grid-table"><thead><tr><th>run</th><th>task</th><th>seed</th><th>kind</th><th>reason</th>'
            f'</tr></thead><tbody>{rows}</tbody></table>')


def _run_link(run_id: str | None) -> str:
    return f'<a href="{escape(run_href(run_id))}">{escape(run_id)}</a>' if run_id else "-"


def counts(view: CampaignView) -> str:
    return " · ".join(f"{n} {escape(s)}" for s, n in sorted(view.counts.items())) or "no cell yet"


def campaign_page(name: str, view: CampaignView, index: RunIndex, *, label: str) -> str:
    body = (card("Grid", grid(view, index), key="grid") + card("Failures", failures(view), key="failures"))
    heading = (f'<h1>{escape(name)} <span class="runid">campaign</span></h1>'
               f'<div class="sub" id="campaign-counts">{counts(view)}</div>')
    return page(f"campaign {name}", body, live=f"/live/campaign/{quote(name, safe='')}", seq=view.seq, label=label,
                eyebrow="campaign", heading=heading)


def campaign_patch(view: CampaignView, index: RunIndex) -> dict[str, Any]:
    return {"seq": view.seq, "replace": {"sec-grid": grid(view, index), "sec-failures": failures(view),
                                         "campaign-counts": counts(view)}}
