"""``engine report``: one self-contained HTML page about a run (inline CSS and SVG only).

Run summary, the score of every evaluation over driven time with the best-so-far curve, cost /
agent calls / time per phase, the lineage graph and the notes. Everything is computed from the
log (the fold and the envelopes); nothing is fetched, nothing is decided. The sections are the
renderers ``engine ui`` serves live (engine/audit/report_sections.py); this module is the page.
"""

from __future__ import annotations

from html import escape

from engine.audit.report_css import CSS
from engine.audit.report_sections import facts, kpis, load_lineage, run_sections
from engine.audit.runlog import RunLog


def status_class(status: str) -> str:
    return {"completed": "good", "failed": "bad"}.get(status, "warn")


def render_report(log: RunLog) -> str:
    s = log.state
    lineage, problem = load_lineage(log)
    task = (s.task or {}).get("competition_id", "")
    body = "".join(f'<section class="card"><h2>{escape(sec.title)}</h2>{sec.html}</section>'
                   for sec in run_sections(log, lineage, problem))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Run {escape(log.run_id)} · {escape(task)}</title><style>{CSS}</style></head>
<body><header><div class="wrap"><div class="eyebrow">engine run report</div>
<h1>{escape(task or 'run')} <span class="runid">{escape(log.run_id)}</span>
<span class="status {status_class(s.status)}">{escape(s.status)}</span></h1>
<div class="sub">{escape(s.strategy)} · agent {escape(s.backend)} · seed {s.seed} · {s.events} events</div>
</div></header>
<main class="wrap"><section class="card summary">{kpis(log, lineage)}{facts(log, lineage)}</section>{body}</main>
<footer class="wrap">Generated from the event log of run {escape(log.run_id)} (last seq {s.last_seq}, hash
{escape(s.last_hash[:16])}). Self-contained: no scripts, no external resources.</footer>
</body></html>
"""
