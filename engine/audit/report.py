"""``engine report``: one self-contained HTML page about a run (inline CSS and SVG only).

Run summary, the score of every evaluation over driven time with the best-so-far curve, cost /
agent calls / time per phase, the lineage graph and the notes. Everything is computed from the
log (the fold and the envelopes); nothing is fetched, nothing is decided.
"""

from __future__ import annotations

from html import escape
from typing import Any

from engine.audit.lineage import Lineage, build_lineage, describe_decision
from engine.audit.report_css import CSS
from engine.audit.runlog import AuditError, RunLog, fmt_score, top_phase
from engine.audit.svg_graph import lineage_svg
from engine.audit.svg_plots import Point, Span, bar_panel, best_so_far, colour_map, fmt_seconds, legend, score_plot


def phase_spans(log: RunLog) -> list[Span]:
    """Top-level phases with their driven-time start and end (the clock as the log saw it)."""
    now = 0.0
    starts: dict[str, float] = {}
    ends: dict[str, float] = {}
    for env in log.envelopes:
        t = env.payload.get("elapsed_s")
        if isinstance(t, (int, float)) and t > now:
            now = float(t)
        phase = env.payload.get("phase")
        if not isinstance(phase, str) or "/" in phase:
            continue
        name = top_phase(phase)
        if env.type == "PhaseStarted":
            starts.setdefault(name, now)
        elif env.type == "PhaseCompleted":
            ends[name] = now
    last = max(now, log.state.elapsed_seconds)
    return [Span(p, s, ends.get(p, last)) for p, s in starts.items()]


def evaluation_points(log: RunLog) -> list[Point]:
    return [Point(seq=e.seq, scope=e.scope, purpose=e.purpose, solution_id=e.solution_id, elapsed_s=e.elapsed_s,
                  score=e.score, is_error=e.is_error) for e in log.state.evaluations]


def per_phase(log: RunLog, spans: list[Span]) -> dict[str, dict[str, float]]:
    table: dict[str, dict[str, float]] = {}

    def row(scope: str) -> dict[str, float]:
        return table.setdefault(top_phase(scope), {"cost": 0.0, "calls": 0.0, "time": 0.0})

    for span in spans:
        row(span.phase)["time"] = max(0.0, span.end - span.start)
    for env in log.envelopes:
        if env.type in ("AgentCallCompleted", "AgentCallFailed"):
            row(env.scope)["calls"] += 1
    for scope, cost in log.state.cost_by_scope.items():
        row(scope)["cost"] += cost
    return {k: v for k, v in table.items() if any(v.values())}


# --- pieces of the page -----------------------------------------------------------------------


def _kpis(log: RunLog, lineage: Lineage | None) -> str:
    s = log.state
    cards = [
        ("best score", fmt_score(s.best_score), "↑ higher is better" if s.maximize else "↓ lower is better"),
        ("elapsed", fmt_seconds(s.elapsed_seconds), "driven time"),
        ("cost", f"${s.accumulated_cost_usd:.4f}", "agent calls, as reported"),
        ("agent calls", str(s.agent_call_count), f"{len(s.cost_by_scope)} scopes with cost"),
        ("evaluations", str(s.evaluation_count), f"{sum(1 for e in s.evaluations if e.is_error)} errors"),
        ("solutions", str(len(s.solutions)), f"{len(lineage.nodes)} in the final lineage" if lineage else "no lineage"),
        ("events", str(s.events), f"head {s.last_hash[:10]}…" if s.last_hash else ""),
    ]
    return '<div class="kpis">' + "".join(
        f'<div class="kpi"><div class="k-label">{escape(a)}</div><div class="k-value">{escape(b)}</div>'
        f'<div class="k-sub">{escape(c)}</div></div>' for a, b, c in cards) + "</div>"


def _facts(log: RunLog, lineage: Lineage | None) -> str:
    s = log.state
    task = s.task or {}
    rows = [
        ("task", task.get("competition_id", "")),
        ("metric", f"{task.get('evaluation_metric', '?')} ({task.get('metric_direction', 'maximize')})"),
        ("strategy", s.strategy), ("agent backend", s.backend), ("seed", str(s.seed)),
        ("status", s.status), ("submission", s.submission_path or "—"),
        ("final solution", f"{lineage.final_id} ({lineage.selected_by})" if lineage else "—"),
        ("models reached", ", ".join(lineage.models_reached()) if lineage else "—"),
    ]
    if s.error:
        rows.append(("error", s.error))
    return '<table class="facts">' + "".join(
        f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>" for k, v in rows) + "</table>"


def _score_section(log: RunLog, points: list[Point], spans: list[Span], colours: dict[str, str]) -> str:
    s = log.state
    metric = (s.task or {}).get("evaluation_metric", "score")
    steps = best_so_far(points, log.score_rule)
    scored = sum(1 for p in points if p.scored)
    caption = (f"{len(points)} evaluations, {scored} with a score; the best-so-far curve improved "
               f"{max(len(steps) - 1, 0)} times. Hover a point for its seq, scope, purpose and solution.")
    if not points:
        return '<p class="muted">No evaluation was recorded.</p>'
    return (f'<p class="caption">{escape(caption)}</p>'
            + score_plot(points, spans, colours, rule=log.score_rule, metric=metric) + legend(colours))


def _phase_section(table: dict[str, dict[str, float]]) -> str:
    rows = list(table.items())
    cost = bar_panel("cost (USD)", [(p, v["cost"]) for p, v in rows], lambda v: f"${v:.4f}", "#4e79a7")
    calls = bar_panel("agent calls", [(p, v["calls"]) for p, v in rows], lambda v: f"{v:.0f}", "#f28e2b")
    time_ = bar_panel("driven time", [(p, v["time"]) for p, v in rows], fmt_seconds, "#59a14f")
    note = ""
    if rows and not any(v["cost"] for _, v in rows):
        note = '<p class="caption">The agent backend reported no cost for this run (offline or replayed answers).</p>'
    return f'{note}<div class="panels"><div>{cost}</div><div>{calls}</div><div>{time_}</div></div>'


def _lineage_section(lineage: Lineage | None, colours: dict[str, str], problem: str) -> str:
    if lineage is None:
        return f'<p class="muted">{escape(problem)}</p>'
    svg, full = lineage_svg(lineage, colours)
    what = ("every solution of the run; the final submission's ancestry in full colour, the rest faded"
            if full else "the final submission's ancestry (the run has too many solutions to draw them all)")
    steps = sorted(lineage.nodes.values(), key=lambda n: (-n.depth, n.seq))
    rows = []
    for n in steps:
        said = []
        if n.retrieved_model:
            said.append(f"drafted from retrieved model <b>{escape(n.retrieved_model)}</b>")
        for key in ("plan", "round", "candidate", "outer_step", "k", "attempt"):
            if key in n.detail:
                said.append(f"{escape(key)}: {escape(' '.join(str(n.detail[key]).split())[:160])}")
        if n.gene_sources:
            said.append("genes: " + ", ".join(f"{escape(k)} ← {escape(v[:16])}" for k, v in n.gene_sources.items()))
        said += _decision_chips(n.decisions)
        parents = ", ".join(escape(p) for p in dict.fromkeys(n.parents)) or "—"
        rows.append(f'<tr><td><span class="pill" style="background:{colours.get(n.scope, "#888")}">'
                    f'{escape(n.origin)}</span></td><td class="mono">{escape(n.solution_id)}</td>'
                    f'<td>{escape(n.scope)}</td><td class="num">{escape(fmt_score(n.score))}</td>'
                    f'<td class="mono small">{parents}</td><td class="small">{"<br>".join(said)}</td></tr>')
    table = ('<table class="grid-table"><thead><tr><th>origin</th><th>solution</th><th>scope</th><th>score</th>'
             '<th>parents</th><th>what happened</th></tr></thead><tbody>' + "".join(rows) + "</tbody></table>")
    return (f'<p class="caption">Generations left to right, from the retrieved models to the final solution '
            f'(★); showing {escape(what)}. Hover a node for its plan, detail and decisions.</p>'
            f'<div class="scroll">{svg}</div><h3>The final submission, step by step</h3>{table}')


def _decision_chips(decisions: list[dict[str, Any]], limit: int = 5) -> list[str]:
    """Each distinct verdict once: a type chip, its scope and its telling fields."""
    seen: set[str] = set()
    out: list[str] = []
    for d in decisions:
        line = describe_decision(d, 48)
        head, _, fields = line.partition(": ")
        key = d["type"] + fields
        if key in seen:
            continue
        seen.add(key)
        fields = ", ".join(fields.split(", ")[:4])
        out.append(f'<span class="dec">{escape(d["type"])}</span> <span class="muted small">{escape(d["scope"])} '
                   f'#{d["seq"]}</span> {escape(fields)}')
    return out[:limit] + ([f'<span class="muted">… {len(out) - limit} more</span>'] if len(out) > limit else [])


def _notes_section(log: RunLog) -> str:
    notes = log.state.notes
    loud = [n for n in notes if n.get("level") not in ("info", "debug")]
    quiet = [n for n in notes if n.get("level") in ("info", "debug")]

    def table(items: list[dict[str, Any]]) -> str:
        return ('<table class="grid-table"><thead><tr><th>seq</th><th>level</th><th>scope</th><th>message</th>'
                '</tr></thead><tbody>' + "".join(
                    f'<tr><td class="num">{n.get("seq")}</td><td><span class="lvl {escape(str(n.get("level")))}">'
                    f'{escape(str(n.get("level")))}</span></td><td>{escape(str(n.get("scope")))}</td>'
                    f'<td>{escape(str(n.get("message")))}</td></tr>' for n in items) + "</tbody></table>")

    parts = []
    if log.state.error:
        parts.append(f'<div class="alert">run failed: {escape(log.state.error)}</div>')
    parts.append(table(loud) if loud else '<p class="ok">No warnings or errors were noted.</p>')
    if quiet:
        parts.append(f"<details><summary>{len(quiet)} informational notes</summary>{table(quiet)}</details>")
    return "".join(parts)


def _sandbox_section(log: RunLog) -> str:
    from engine.audit.isolation import audit_sandbox

    audit = audit_sandbox(log.envelopes)
    cls = "good" if audit.answers_unreachable else "bad"
    items = "".join(f"<li>{escape(line.strip())}</li>" for line in audit.lines())
    notices = "".join(f"<li>{escape(str(n.get('level')))}: {escape(str(n.get('message')))}</li>" for n in audit.notices)
    return f'<ul class="{cls}">{items}{notices}</ul>'


def render_report(log: RunLog) -> str:
    s = log.state
    try:
        lineage: Lineage | None = build_lineage(log)
        problem = ""
    except AuditError as exc:
        lineage, problem = None, str(exc)
    points = evaluation_points(log)
    spans = phase_spans(log)
    scopes = [p.scope for p in points] + sorted({n.scope for n in s.solutions.values()})
    colours = colour_map(scopes)
    status_cls = {"completed": "good", "failed": "bad"}.get(s.status, "warn")
    task = (s.task or {}).get("competition_id", "")
    sections = [
        ("Score over driven time", _score_section(log, points, spans, colour_map([p.scope for p in points]))),
        ("Cost, agent calls and time per phase", _phase_section(per_phase(log, spans))),
        ("Lineage of the final submission", _lineage_section(lineage, colours, problem)),
        ("Isolation of the evaluations", _sandbox_section(log)),
        ("Notes and warnings", _notes_section(log)),
    ]
    body = "".join(f'<section class="card"><h2>{escape(t)}</h2>{html}</section>' for t, html in sections)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Run {escape(log.run_id)} · {escape(task)}</title><style>{CSS}</style></head>
<body><header><div class="wrap"><div class="eyebrow">engine run report</div>
<h1>{escape(task or 'run')} <span class="runid">{escape(log.run_id)}</span>
<span class="status {status_cls}">{escape(s.status)}</span></h1>
<div class="sub">{escape(s.strategy)} · agent {escape(s.backend)} · seed {s.seed} · {s.events} events</div>
</div></header>
<main class="wrap"><section class="card summary">{_kpis(log, lineage)}{_facts(log, lineage)}</section>{body}</main>
<footer class="wrap">Generated from the event log of run {escape(log.run_id)} (last seq {s.last_seq}, hash
{escape(s.last_hash[:16])}). Self-contained: no scripts, no external resources.</footer>
</body></html>
"""
