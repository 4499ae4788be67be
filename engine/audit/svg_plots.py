"""Inline SVG charts for the report: score over driven time, and per-phase bars. No JS, no CSS
files, no network: plain SVG elements with <title> tooltips."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

from engine.audit.runlog import fmt_score
from events.score import Score, Ties

PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
           "#9c755f", "#8cd17d", "#86bcb6", "#d37295")
PHASE_TINTS = {"phase1": "#eef3fb", "phase2": "#eef8f0", "phase3": "#f6effa", "finalization": "#fdf0ee",
               "evolve": "#fdf7e7"}


def colour_map(scopes: Sequence[str]) -> dict[str, str]:
    """A stable colour per scope, in order of first appearance."""
    out: dict[str, str] = {}
    for s in scopes:
        if s not in out:
            out[s] = PALETTE[len(out) % len(PALETTE)]
    return out


def nice_ticks(lo: float, hi: float, count: int = 6) -> list[float]:
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / max(1, count)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    ticks, t = [], first
    while t <= hi + step * 1e-9:
        ticks.append(round(t, 12))
        t += step
    return ticks


def fmt_tick(v: float) -> str:
    if v == 0:
        return "0"
    if abs(v) >= 1000 or abs(v) < 0.001:
        return f"{v:.3g}"
    return f"{v:.4g}"


def fmt_seconds(s: float) -> str:
    s = float(s)
    if s < 60:
        return f"{s:.0f}s" if s >= 10 else f"{s:.1f}s"
    if s < 3600:
        return f"{int(s // 60)}m{int(s % 60):02d}s"
    return f"{int(s // 3600)}h{int(s % 3600 // 60):02d}m"


@dataclass(frozen=True)
class Point:
    seq: int
    scope: str
    purpose: str
    solution_id: str
    elapsed_s: float
    score: float | None
    is_error: bool

    @property
    def scored(self) -> bool:
        return self.score is not None and not self.is_error and math.isfinite(self.score)


@dataclass(frozen=True)
class Span:
    phase: str
    start: float
    end: float


def best_so_far(points: Sequence[Point], rule: Score) -> list[tuple[float, float, int]]:
    """(elapsed, best score, seq) at every strict improvement, in driven-time order."""
    steps: list[tuple[float, float, int]] = []
    best: float | None = None
    for p in sorted((p for p in points if p.scored), key=lambda p: (p.elapsed_s, p.seq)):
        score = p.score
        if score is not None and rule.better(score, best, Ties.FIRST_WINS):
            best = score
            steps.append((p.elapsed_s, score, p.seq))
    return steps


def score_plot(points: Sequence[Point], spans: Sequence[Span], colours: dict[str, str], *, rule: Score,
               metric: str, width: int = 1120, height: int = 400) -> str:
    """Every evaluation as a dot (× in the bottom strip when it produced no score), the
    best-so-far step curve, phases as tinted bands."""
    frame = _ScoreFrame.of(points, spans, width, height)
    o: list[str] = [f'<svg class="chart" viewBox="0 0 {width} {height}" width="100%" role="img" '
                    f'aria-label="score of every evaluation over driven time">']
    o.extend(_phase_bands(frame, spans))
    o.extend(_score_axes(frame, metric, rule))
    steps = best_so_far(points, rule)
    if steps:
        d = [f"M{frame.X(steps[0][0]):.1f},{frame.Y(steps[0][1]):.1f}"]
        for t, v, _ in steps[1:]:
            d.append(f"H{frame.X(t):.1f}V{frame.Y(v):.1f}")
        d.append(f"H{frame.X(max(frame.xs)):.1f}")
        o.append(f'<path d="{"".join(d)}" class="best"/>')
    o.extend(_score_dots(frame, points, colours))
    if steps:
        t, v, _ = steps[-1]
        X, Y, top = frame.X, frame.Y, frame.top
        cy = Y(v) - 12 if Y(v) - 12 > top + 22 else Y(v) + 24
        anchor, cx = ("end", X(t) - 12) if X(t) > width - frame.right - 120 else ("start", X(t) + 12)
        o.append(f'<circle cx="{X(t):.1f}" cy="{Y(v):.1f}" r="9" class="best-ring"/>'
                 f'<text x="{cx:.1f}" y="{cy:.1f}" class="callout" text-anchor="{anchor}">best {fmt_score(v)}</text>')
    o.append("</svg>")
    return "".join(o)


@dataclass(frozen=True)
class _ScoreFrame:
    """The score plot's geometry: its margins, and driven time and score mapped to pixels."""

    width: int
    height: int
    xs: list[float]           # every evaluation's and phase end's driven time
    x_hi: float
    y_lo: float
    y_hi: float
    left: int = 74
    right: int = 24
    top: int = 30
    bottom: int = 58
    strip: int = 34           # the bottom strip of evaluations without a score

    @classmethod
    def of(cls, points: Sequence[Point], spans: Sequence[Span], width: int, height: int) -> _ScoreFrame:
        xs = [p.elapsed_s for p in points] + [s.end for s in spans]
        scored = [p.score for p in points if p.scored and p.score is not None]
        if scored:
            lo, hi = min(scored), max(scored)
            pad = (hi - lo) * 0.08 or (abs(hi) * 0.05 or 0.5)
            y_lo, y_hi = lo - pad, hi + pad
        else:
            y_lo, y_hi = 0.0, 1.0
        return cls(width, height, xs, max(xs + [1.0]) * 1.02, y_lo, y_hi)

    @property
    def plot_h(self) -> int:
        return self.height - self.top - self.bottom - self.strip

    @property
    def strip_y(self) -> float:
        return self.top + self.plot_h + self.strip / 2

    def X(self, t: float) -> float:
        return self.left + (self.width - self.left - self.right) * (t / self.x_hi)

    def Y(self, v: float) -> float:
        return self.top + self.plot_h * (1 - (v - self.y_lo) / (self.y_hi - self.y_lo))


def _phase_bands(f: _ScoreFrame, spans: Sequence[Span]) -> list[str]:
    o: list[str] = []
    for s in spans:
        x0, x1 = f.X(s.start), f.X(max(s.end, s.start))
        tint = PHASE_TINTS.get(s.phase, "#f1f2f6")
        o.append(f'<rect x="{x0:.1f}" y="{f.top}" width="{max(x1 - x0, 1):.1f}" height="{f.plot_h + f.strip}" '
                 f'fill="{tint}"><title>{escape(s.phase)}: {fmt_seconds(s.start)} → {fmt_seconds(s.end)}</title></rect>')
        if x1 - x0 > 40:
            o.append(f'<text x="{x0 + 6:.1f}" y="{f.top + 14}" class="band">{escape(s.phase)}</text>')
    return o


def _score_axes(f: _ScoreFrame, metric: str, rule: Score) -> list[str]:
    """The grid, the ticks of both axes, the no-score strip and the axis labels."""
    left, right, top, width, plot_h = f.left, f.right, f.top, f.width, f.plot_h
    o: list[str] = []
    for v in nice_ticks(f.y_lo, f.y_hi):
        y = f.Y(v)
        o.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
                 f'<text x="{left - 8}" y="{y + 4:.1f}" class="tick" text-anchor="end">{fmt_tick(v)}</text>')
    axis_y = top + plot_h + f.strip
    for v in nice_ticks(0, f.x_hi, 8):
        x = f.X(v)
        o.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{axis_y}" class="grid light"/>'
                 f'<text x="{x:.1f}" y="{axis_y + 16}" class="tick" text-anchor="middle">{fmt_seconds(v)}</text>')
    o.append(f'<line x1="{left}" x2="{width - right}" y1="{top + plot_h + 4}" y2="{top + plot_h + 4}" class="axis"/>'
             f'<text x="{left - 8}" y="{f.strip_y + 4:.1f}" class="tick muted" text-anchor="end">no score</text>'
             f'<line x1="{left}" x2="{width - right}" y1="{axis_y}" y2="{axis_y}" class="axis"/>')
    arrow = "↑ higher is better" if rule.maximize else "↓ lower is better"
    o.append(f'<text x="18" y="{top + plot_h / 2:.1f}" class="label" text-anchor="middle" '
             f'transform="rotate(-90 18 {top + plot_h / 2:.1f})">{escape(metric)} ({arrow})</text>'
             f'<text x="{(left + width - right) / 2:.1f}" y="{f.height - 8}" class="label" text-anchor="middle">'
             f'driven time</text>')
    return o


def _score_dots(f: _ScoreFrame, points: Sequence[Point], colours: dict[str, str]) -> list[str]:
    """Each evaluation: a dot at its score, or a × in the strip when it has none."""
    o: list[str] = []
    strip_y = f.strip_y
    for p in points:
        colour = colours.get(p.scope, "#888")
        tip = (f"seq {p.seq} · {p.scope} · {p.purpose or 'evaluation'} · score {fmt_score(p.score)}"
               f"{' (error)' if p.is_error else ''} · t={fmt_seconds(p.elapsed_s)} · solution {p.solution_id}")
        x = f.X(p.elapsed_s)
        if p.scored and p.score is not None:
            o.append(f'<circle class="pt" data-seq="{p.seq}" cx="{x:.1f}" cy="{f.Y(p.score):.1f}" r="5.5" '
                     f'fill="{colour}"><title>{escape(tip)}</title></circle>')
        else:
            r = 4.5
            o.append(f'<g class="pt miss" data-seq="{p.seq}"><title>{escape(tip)}</title>'
                     f'<path d="M{x - r:.1f},{strip_y - r:.1f}L{x + r:.1f},{strip_y + r:.1f}M{x - r:.1f},'
                     f'{strip_y + r:.1f}L{x + r:.1f},{strip_y - r:.1f}" stroke="{colour}"/></g>')
    return o


def legend(colours: dict[str, str], *, extra: bool = True) -> str:
    items = [f'<span class="lg"><i style="background:{c}"></i>{escape(s)}</span>' for s, c in colours.items()]
    if extra:
        items.append('<span class="lg"><i class="line"></i>best so far</span>')
        items.append('<span class="lg"><b class="x">×</b>no score / error</span>')
    return f'<div class="legend">{"".join(items)}</div>'


def bar_panel(title: str, rows: Sequence[tuple[str, float]], fmt: Callable[[float], str], colour: str, *,
              width: int = 360) -> str:
    """A small horizontal bar chart (one of the per-phase small multiples)."""
    row_h, left, top = 30, 104, 30
    height = top + row_h * max(1, len(rows)) + 10
    hi = max([v for _, v in rows] + [0.0])
    span = width - left - 70
    o = [f'<svg class="bars" viewBox="0 0 {width} {height}" width="100%" role="img" aria-label="{escape(title)}">',
         f'<text x="0" y="16" class="panel-title">{escape(title)}</text>']
    for i, (name, value) in enumerate(rows):
        y = top + i * row_h
        w = 0 if hi <= 0 else span * value / hi
        o.append(f'<text x="{left - 8}" y="{y + 17}" class="tick" text-anchor="end">{escape(name)}</text>'
                 f'<rect x="{left}" y="{y + 4}" width="{span}" height="18" rx="4" class="track"/>'
                 f'<rect x="{left}" y="{y + 4}" width="{max(w, 2 if value > 0 else 0):.1f}" height="18" rx="4" '
                 f'fill="{colour}"><title>{escape(name)}: {escape(fmt(value))}</title></rect>'
                 f'<text x="{left + max(w, 0) + 6:.1f}" y="{y + 17}" class="value">{escape(fmt(value))}</text>')
    if not rows:
        o.append(f'<text x="{left}" y="{top + 16}" class="tick muted">nothing recorded</text>')
    o.append("</svg>")
    return "".join(o)


def timeline(spans: Sequence[Span], colours: dict[str, str], status: dict[str, str], *, width: int = 1120) -> str:
    """Phases and paths as bars over driven time, one row each in order of start; a path takes
    its scope's colour (the score plot's), a phase its tint."""
    row_h, left, right, top = 26, 150, 84, 8  # the right margin holds an open phase's status
    rows = sorted(spans, key=lambda s: (s.start, s.phase))
    height = top + row_h * len(rows) + 30
    x_hi = max([s.end for s in rows] + [1.0]) * 1.02

    def X(t: float) -> float:
        return left + (width - left - right) * (t / x_hi)

    o = [f'<svg class="chart" viewBox="0 0 {width} {height}" width="100%" role="img" '
         f'aria-label="phases and paths over driven time">']
    axis_y = top + row_h * len(rows) + 4
    for v in nice_ticks(0, x_hi, 8):
        o.append(f'<line x1="{X(v):.1f}" x2="{X(v):.1f}" y1="{top}" y2="{axis_y}" class="grid light"/>'
                 f'<text x="{X(v):.1f}" y="{axis_y + 16}" class="tick" text-anchor="middle">{fmt_seconds(v)}</text>')
    for i, s in enumerate(rows):
        y = top + i * row_h
        nested = "/" in s.phase
        fill = colours.get(s.phase) or PHASE_TINTS.get(s.phase.split("/", 1)[0], "#d9dde6")
        state = status.get(s.phase, "")
        outline = "" if nested else ' stroke="#c9ceda"'
        tip = f"{s.phase}: {fmt_seconds(s.start)} → {fmt_seconds(s.end)}" + (f" ({state})" if state else "")
        o.append(f'<text x="{left - 10}" y="{y + 17}" class="tick" text-anchor="end">'
                 f'{escape(s.phase)}</text>'
                 f'<rect x="{X(s.start):.1f}" y="{y + 5}" width="{max(X(s.end) - X(s.start), 2):.1f}" height="16" rx="4" '
                 f'fill="{fill}"{outline}><title>{escape(tip)}</title></rect>')
        if state and state != "completed":
            o.append(f'<text x="{X(s.end) + 6:.1f}" y="{y + 17}" class="tick muted">{escape(state)}</text>')
    o.append(f'<line x1="{left}" x2="{width - right}" y1="{axis_y}" y2="{axis_y}" class="axis"/></svg>')
    return "".join(o)
