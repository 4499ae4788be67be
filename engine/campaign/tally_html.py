"""The campaign report as one self-contained HTML page (no scripts, no external resources): the
per-task table, an inline SVG strip per task (each seed's test score, the mean with its ±SE band,
medal thresholds), the runs and the failures. Styles are the run report's (engine/audit)."""

from __future__ import annotations

from html import escape

from engine.audit.report_css import CSS
from engine.audit.svg_plots import fmt_seconds, fmt_tick, nice_ticks
from engine.campaign.tally import MEDALS, CampaignReport, GroupRow, fmt, mean_pm_se, varying_dimensions

_W, _H, _PAD = 560, 92, 34
_THRESHOLD_COLOURS = {"gold": "#c9a227", "silver": "#8a96a8", "bronze": "#b8733a", "median": "#6b7385"}
_EXTRA_CSS = """
.strip text{font:11px system-ui,sans-serif;fill:#6b7385}
.grid td,.grid th{padding:6px 10px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
.grid th{color:var(--muted);font-weight:600;font-size:12px;text-transform:uppercase;letter-spacing:.05em}
.num{font-variant-numeric:tabular-nums;white-space:nowrap}
.bad{color:#c0392b}
"""


def score_strip(g: GroupRow) -> str:
    """One task's scores on their own axis: a dot per seed, the mean and its ±SE band, and the
    medal thresholds that fall near the scores."""
    if not g.scores:
        return '<p class="muted">no graded run yet</p>'
    values = [v for _, v in g.scores]
    near = [t for t in g.thresholds.values() if min(values) - (max(values) - min(values) or abs(values[0]) or 1) * 2
            <= t <= max(values) + (max(values) - min(values) or abs(values[0]) or 1) * 2]
    lo, hi = min(values + near), max(values + near)
    if hi == lo:
        lo, hi = lo - (abs(lo) * 0.05 or 0.5), hi + (abs(hi) * 0.05 or 0.5)
    span = hi - lo
    lo, hi = lo - span * 0.08, hi + span * 0.08

    def x(v: float) -> float:
        return _PAD + (v - lo) / (hi - lo) * (_W - 2 * _PAD)

    parts = [f'<svg class="strip" width="{_W}" height="{_H}" viewBox="0 0 {_W} {_H}" role="img" '
             f'aria-label="test scores of {escape(g.task)}">']
    axis_y = _H - 26
    parts.append(f'<line x1="{_PAD}" y1="{axis_y}" x2="{_W - _PAD}" y2="{axis_y}" stroke="#c9ced9"/>')
    for t in nice_ticks(lo, hi, 6):
        parts.append(f'<line x1="{x(t):.1f}" y1="{axis_y}" x2="{x(t):.1f}" y2="{axis_y + 4}" stroke="#c9ced9"/>'
                     f'<text x="{x(t):.1f}" y="{axis_y + 16}" text-anchor="middle">{escape(fmt_tick(t))}</text>')
    for i, (name, t) in enumerate(g.thresholds.items()):
        if t in near:  # labels alternate in height: thresholds are often close together
            parts.append(f'<line x1="{x(t):.1f}" y1="10" x2="{x(t):.1f}" y2="{axis_y}" stroke="'
                         f'{_THRESHOLD_COLOURS[name]}" stroke-dasharray="4 3"><title>{name} threshold {fmt(t)}'
                         f'</title></line><text x="{x(t):.1f}" y="{9 + 9 * (i % 2)}" text-anchor="middle">{name}</text>')
    if g.mean is not None:
        if g.se is not None:
            left, right = x(max(lo, g.mean - g.se)), x(min(hi, g.mean + g.se))
            parts.append(f'<rect x="{left:.1f}" y="20" width="{max(right - left, 1):.1f}" height="{axis_y - 28}" '
                         f'fill="#3b5bdb" opacity=".14"><title>mean ± SE: {escape(mean_pm_se(g))}</title></rect>')
        parts.append(f'<line x1="{x(g.mean):.1f}" y1="16" x2="{x(g.mean):.1f}" y2="{axis_y}" stroke="#3b5bdb" '
                     f'stroke-width="2"><title>mean {fmt(g.mean)}</title></line>')
    for i, (seed, v) in enumerate(g.scores):
        y = 34 + (i % 3) * 10
        parts.append(f'<circle cx="{x(v):.1f}" cy="{y}" r="5" fill="#f28e2b" stroke="#fff">'
                     f'<title>seed {seed}: {fmt(v, 6)}</title></circle>')
    parts.append("</svg>")
    return "".join(parts)


def _group_rows(report: CampaignReport, dims: list[str]) -> str:
    rows = []
    for g in report.groups:
        medals = " · ".join(f"{g.medals[k]} {k.replace('_', ' ')}" for k in (*MEDALS, "above_median")) \
            if g.medals else "no thresholds"
        wall = "-" if g.mean_wall_seconds is None else fmt_seconds(g.mean_wall_seconds)
        rows.append(
            "<tr>" + f"<td><b>{escape(g.task)}</b></td>" + "".join(f"<td>{escape(getattr(g, d))}</td>" for d in dims)
            + f"<td>{escape(g.metric)}{' ↓' if g.lower_is_better else ''}</td>"
            f'<td class="num">{g.graded}/{g.runs}</td><td class="num">{escape(mean_pm_se(g))}</td>'
            f"<td>{escape(medals)}</td><td class=\"num\">{wall}</td>"
            f'<td class="num">${g.total_cost_usd:.2f}</td><td>{score_strip(g)}</td></tr>')
    head = "".join(f"<th>{h}</th>" for h in ("task", *dims, "metric", "graded", "test score mean ± SE", "medals",
                                             "mean wall", "cost", "scores by seed"))
    return f'<table class="grid"><tr>{head}</tr>{"".join(rows)}</table>'


def _run_rows(report: CampaignReport) -> str:
    head = "".join(f"<th>{h}</th>" for h in ("task", "seed", "run", "status", "test score", "medal", "wall",
                                             "cost", "agent calls", "attempts"))
    rows = []
    for r in report.runs:
        cls = ' class="bad"' if r.status in ("failed", "abandoned") else ""
        rows.append(f"<tr><td>{escape(r.task)}</td><td>{r.seed}</td><td>{escape(r.run_id or '-')}</td>"
                    f"<td{cls}>{escape(r.status)}</td><td class=\"num\">{fmt(r.test_score, 6)}</td>"
                    f"<td>{escape(r.medal or '-')}</td>"
                    f"<td class=\"num\">{'-' if r.wall_seconds is None else fmt_seconds(r.wall_seconds)}</td>"
                    f"<td class=\"num\">{'-' if r.cost_usd is None else f'${r.cost_usd:.2f}'}</td>"
                    f"<td class=\"num\">{'-' if r.agent_calls is None else r.agent_calls}</td><td>{r.attempts}</td></tr>")
    return f'<table class="grid"><tr>{head}</tr>{"".join(rows)}</table>'


def _failure_rows(report: CampaignReport) -> str:
    if not report.failures:
        return '<p class="muted">none</p>'
    rows = "".join(f"<tr><td>{escape(f.run_id or '-')}</td><td>{escape(f.task)}</td><td>{f.seed}</td>"
                   f"<td>{escape(f.kind)}</td><td>{escape(f.reason)}</td></tr>" for f in report.failures)
    return ('<table class="grid"><tr><th>run</th><th>task</th><th>seed</th><th>kind</th><th>reason</th></tr>'
            f"{rows}</table>")


def render_html(report: CampaignReport) -> str:
    dims = varying_dimensions(report)
    fixed = " · ".join(f"{d} {escape(getattr(report.groups[0], d))}" for d in ("strategy", "preset", "agent")
                       if d not in dims) if report.groups else ""
    counts = " · ".join(f"{n} {escape(s)}" for s, n in sorted(report.counts.items()))
    sections = [("Test score per task over seeds", _group_rows(report, dims)), ("Runs", _run_rows(report)),
                ("Failures", _failure_rows(report))]
    body = "".join(f'<section class="card"><h2>{escape(t)}</h2>{html}</section>' for t, html in sections)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Campaign {escape(report.name)}</title><style>{CSS}{_EXTRA_CSS}</style></head>
<body><header><div class="wrap"><div class="eyebrow">engine campaign report</div>
<h1>{escape(report.name)}</h1><div class="sub">{counts}{' · ' + fixed if fixed else ''}</div></div></header>
<main class="wrap">{body}</main>
<footer class="wrap">Test scores are graded on the tasks' private answers; ± is one standard error of the mean
over seeds. Self-contained: no scripts, no external resources.</footer>
</body></html>
"""
