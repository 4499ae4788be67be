"""The pieces of a run's report, each an HTML fragment computed from the log (the fold and the
envelopes): the summary cards and facts, the score over driven time, cost / calls / time per
phase, the lineage graph with its step table, the isolation audit and the notes.

One set of renderers for both views of a run: ``engine report`` puts them in one static page
(engine/audit/report.py) and ``engine ui`` serves the same fragments live (engine/ui/), so a chart
or the lineage graph exists once. Everything taken from the log is escaped here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from html import escape
from typing import Any

from engine.audit.final_choice_section import final_choice_section
from engine.audit.lineage import Lineage, build_lineage, describe_decision
from engine.audit.runlog import AuditError, RunLog, fmt_score, top_phase
from engine.audit.svg_graph import lineage_svg
from engine.audit.svg_plots import (
    Point,
    Span,
    bar_panel,
    best_so_far,
    colour_map,
    fmt_seconds,
    legend,
    score_plot,
    timeline,
)
from replay.state import PipelineState

# A link to a solution's own page (the UI's), or None for the static report (no links at all).
SolutionHref = Callable[[str], str] | None


@dataclass(frozen=True)
class Section:
    key: str     # a stable id (the UI replaces a section by it when the run moves on)
    title: str
    html: str


def phase_spans(log: RunLog, *, nested: bool = False) -> list[Span]:
    """Top-level phases (with ``nested``: also their paths, e.g. ``phase2/path-1``) with their
    driven-time start and end (the clock as the log saw it)."""
    now = 0.0
    starts: dict[str, float] = {}
    ends: dict[str, float] = {}
    for env in log.envelopes:
        t = env.payload.get("elapsed_s")
        if isinstance(t, (int, float)) and t > now:
            now = float(t)
        phase = env.payload.get("phase")
        if not isinstance(phase, str) or ("/" in phase and not nested):
            continue
        name = phase if "/" in phase else top_phase(phase)
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


def cost_caption(s: PipelineState) -> str:
    """How the run's money was counted: every call priced, or how many were not (replay.meter)."""
    apart = [f"{n} {what}" for n, what in ((s.unknown_cost_calls, "of unknown cost"),
                                           (s.spend.priced_by_cli, "priced by the CLI's own figure"),
                                           (s.spend.charged_at_cap, "charged at their cap")) if n]
    return "agent calls: " + ", ".join(apart) if apart else "agent calls, as reported"


def kpis(log: RunLog, lineage: Lineage | None) -> str:
    s = log.state
    cards = [
        ("best score", fmt_score(s.best_score), "↑ higher is better" if s.maximize else "↓ lower is better"),
        ("elapsed", fmt_seconds(s.elapsed_seconds), "driven time"),
        ("cost", f"${s.accumulated_cost_usd:.4f}", cost_caption(s)),
        ("agent calls", str(s.agent_call_count), f"{len(s.cost_by_scope)} scopes with cost"),
        ("evaluations", str(s.evaluation_count), f"{sum(1 for e in s.evaluations if e.is_error)} errors"),
        ("solutions", str(len(s.solutions)), f"{len(lineage.nodes)} in the final lineage" if lineage else "no lineage"),
        ("events", str(s.events), f"head {s.last_hash[:10]}…" if s.last_hash else ""),
    ]
    return '<div class="kpis">' + "".join(
        f'<div class="kpi"><div class="k-label">{escape(a)}</div><div class="k-value">{escape(b)}</div>'
        f'<div class="k-sub">{escape(c)}</div></div>' for a, b, c in cards) + "</div>"


def facts(log: RunLog, lineage: Lineage | None) -> str:
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


def score_section(log: RunLog, points: list[Point], spans: list[Span], colours: dict[str, str]) -> str:
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


def timeline_section(log: RunLog, colours: dict[str, str]) -> str:
    spans = phase_spans(log, nested=True)
    if not spans:
        return '<p class="muted">No phase has started yet.</p>'
    ended = log.state.finished  # a phase still "running" in a finished run never completed
    status = {top_phase(k) if "/" not in k else k: ("unfinished" if ended and v == "running" else v)
              for k, v in log.state.phase_status.items()}
    return ('<p class="caption">Each phase and path from its start to its end in driven time (still open: '
            'to the last event); hover a bar for its times and status.</p>' + timeline(spans, colours, status))


def phase_section(table: dict[str, dict[str, float]]) -> str:
    rows = list(table.items())
    cost = bar_panel("cost (USD)", [(p, v["cost"]) for p, v in rows], lambda v: f"${v:.4f}", "#4e79a7")
    calls = bar_panel("agent calls", [(p, v["calls"]) for p, v in rows], lambda v: f"{v:.0f}", "#f28e2b")
    time_ = bar_panel("driven time", [(p, v["time"]) for p, v in rows], fmt_seconds, "#59a14f")
    note = ""
    if rows and not any(v["cost"] for _, v in rows):
        note = '<p class="caption">The agent backend reported no cost for this run (offline or replayed answers).</p>'
    return f'{note}<div class="panels"><div>{cost}</div><div>{calls}</div><div>{time_}</div></div>'


def lineage_section(lineage: Lineage | None, colours: dict[str, str], problem: str, *,
                    solution_href: SolutionHref = None, step_limit: int | None = None) -> str:
    """The graph, then the final submission's steps. With ``step_limit`` (a page that must open
    fast on a long run) the graph and the table keep the final's ``step_limit`` nearest ancestors;
    the static report shows them all."""
    if lineage is None:
        return f'<p class="muted">{escape(problem)}</p>'
    drawn = nearest(lineage, step_limit) if step_limit is not None else lineage
    svg, full = lineage_svg(drawn, colours)
    what = ("every solution of the run; the final submission's ancestry in full colour, the rest faded"
            if full else "the final submission's ancestry (the run has too many solutions to draw them all)")
    if drawn is not lineage:
        what = (f"the {len(drawn.nodes)} nearest of the final submission's {len(lineage.nodes)} ancestors "
                "(engine report draws them all)")
    steps = sorted(drawn.nodes.values(), key=lambda n: (-n.depth, n.seq))
    hidden = len(lineage.nodes) - len(drawn.nodes)
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
                    f'{escape(n.origin)}</span></td><td class="mono">{_solution_cell(n.solution_id, solution_href)}</td>'
                    f'<td>{escape(n.scope)}</td><td class="num">{escape(fmt_score(n.score))}</td>'
                    f'<td class="mono small">{parents}</td><td class="small">{"<br>".join(said)}</td></tr>')
    more = (f'<p class="muted">{hidden} earlier steps are not shown here (the static report, '
            f'engine report, lists them all).</p>' if hidden else "")
    table = (more + '<table class="grid-table"><thead><tr><th>origin</th><th>solution</th><th>scope</th>'
             '<th>score</th><th>parents</th><th>what happened</th></tr></thead><tbody>' + "".join(rows)
             + "</tbody></table>")
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


def notes_section(log: RunLog, limit: int | None = None) -> str:
    """Warnings and errors, then the informational notes (the ``limit`` latest of each when given)."""
    notes = log.state.notes
    loud = [n for n in notes if n.get("level") not in ("info", "debug")]
    quiet = [n for n in notes if n.get("level") in ("info", "debug")]
    cut = ""
    if limit is not None and (len(loud) > limit or len(quiet) > limit):
        cut = (f'<p class="muted">The {limit} latest of each kind are shown here (engine report lists '
               f'all {len(notes)}).</p>')
        loud, quiet = loud[-limit:], quiet[-limit:]

    def table(items: list[dict[str, Any]]) -> str:
        return ('<table class="grid-table"><thead><tr><th>seq</th><th>level</th><th>scope</th><th>message</th>'
                '</tr></thead><tbody>' + "".join(
                    f'<tr><td class="num">{n.get("seq")}</td><td><span class="lvl {escape(str(n.get("level")))}">'
                    f'{escape(str(n.get("level")))}</span></td><td>{escape(str(n.get("scope")))}</td>'
                    f'<td>{escape(str(n.get("message")))}</td></tr>' for n in items) + "</tbody></table>")

    parts = [cut]
    if log.state.error:
        parts.append(f'<div class="alert">run failed: {escape(log.state.error)}</div>')
    parts.append(table(loud) if loud else '<p class="ok">No warnings or errors were noted.</p>')
    if quiet:
        parts.append(f"<details><summary>{len(quiet)} informational notes</summary>{table(quiet)}</details>")
    return "".join(parts)


def sandbox_section(log: RunLog) -> str:
    from engine.audit.isolation import audit_sandbox

    audit = audit_sandbox(log.envelopes)
    cls = "good" if audit.answers_unreachable else "bad"
    items = "".join(f"<li>{escape(line.strip())}</li>" for line in audit.lines())
    notices = "".join(f"<li>{escape(str(n.get('level')))}: {escape(str(n.get('message')))}</li>" for n in audit.notices)
    return f'<ul class="{cls}">{items}{notices}</ul>'


def nearest(lineage: Lineage, limit: int) -> Lineage:
    """The lineage cut to the final solution's ``limit`` nearest ancestors (itself when smaller)."""
    if len(lineage.nodes) <= limit:
        return lineage
    keep = sorted(lineage.nodes.values(), key=lambda n: (n.depth, -n.seq))[:limit]
    nodes = {n.solution_id: n for n in keep}
    return replace(lineage, nodes=nodes, all_nodes=nodes)


def _solution_cell(solution_id: str, solution_href: SolutionHref) -> str:
    if solution_href is None:
        return escape(solution_id)
    return f'<a href="{escape(solution_href(solution_id))}">{escape(solution_id)}</a>'


def load_lineage(log: RunLog) -> tuple[Lineage | None, str]:
    """The run's lineage, or None and why there is none (a run that recorded no solution yet)."""
    try:
        return build_lineage(log), ""
    except AuditError as exc:
        return None, str(exc)


def run_sections(log: RunLog, lineage: Lineage | None, problem: str, *, solution_href: SolutionHref = None,
                 limit: int | None = None) -> list[Section]:
    """The report's sections in page order. ``limit``: the page keeps the final's ``limit`` nearest
    ancestors and the ``limit`` latest notes of each kind (a live page that must open fast on a
    long run); the static report has no limit."""
    s = log.state
    points = evaluation_points(log)
    spans = phase_spans(log)
    scopes = [p.scope for p in points] + sorted({n.scope for n in s.solutions.values()})
    colours = colour_map(scopes)
    held_back = final_choice_section(log)
    return [
        Section("score", "Score over driven time",
                score_section(log, points, spans, colour_map([p.scope for p in points]))),
        Section("timeline", "Phases and paths on a timeline", timeline_section(log, colours)),
        Section("phases", "Cost, agent calls and time per phase", phase_section(per_phase(log, spans))),
        Section("lineage", "Lineage of the final submission",
                lineage_section(lineage, colours, problem, solution_href=solution_href, step_limit=limit)),
        *([Section("final-choice", "The final chosen on held-back rows", held_back)] if held_back else []),
        Section("isolation", "Isolation of the evaluations", sandbox_section(log)),
        Section("notes", "Notes and warnings", notes_section(log, limit)),
    ]
