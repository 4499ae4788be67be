"""A solution's page: its script (highlighted), its diff against each parent, its evaluations
(output, score, sandbox), the checks and decisions that name it, the ablation and extracted
block behind a refinement, and the agent call that wrote it. Everything is read from the log."""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from html import escape
from typing import Any

from engine.audit.lineage import describe_decision
from engine.audit.report_sections import load_lineage
from engine.audit.runlog import RunLog, fmt_score
from engine.ui.layout import card, page, run_href, solution_href
from events.base import Envelope

MAX_TEXT = 200_000  # a prompt or output longer than this is cut on the page (the log keeps it whole)


def highlight(code: str) -> str:
    """Python highlighted by Pygments (which escapes every token)."""
    from pygments import highlight as pyg
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    return str(pyg(code[:MAX_TEXT], PythonLexer(), HtmlFormatter(cssclass="hl")))


def diff_html(old: str, new: str, old_name: str, new_name: str) -> str:
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), old_name, new_name, lineterm="", n=3))
    if not lines:
        return '<p class="muted">identical scripts</p>'
    out = []
    for line in lines:
        cls = ("hunk" if line.startswith("@@") else "add" if line.startswith("+") and not line.startswith("+++")
               else "del" if line.startswith("-") and not line.startswith("---") else "")
        out.append(f'<span class="{cls}">{escape(line)}</span>')
    return f'<pre class="diff">{"".join(out)}</pre>'


def pre(text: Any, cls: str = "out") -> str:
    value = text if isinstance(text, str) else json.dumps(text, indent=1, ensure_ascii=False, default=str)
    cut = len(value) > MAX_TEXT
    return f'<pre class="{cls}">{escape(value[:MAX_TEXT])}{"…" if cut else ""}</pre>'


def kv(rows: list[tuple[str, Any]]) -> str:
    return '<table class="kv">' + "".join(
        f"<tr><th>{escape(k)}</th><td>{v}</td></tr>" for k, v in rows) + "</table>"


def _evaluations(log: RunLog, sid: str) -> str:
    requested = {e.payload.get("effect_id"): e for e in log.envelopes
                 if e.type == "EvaluationRequested" and e.payload.get("solution_id") == sid}
    parts = []
    for env in log.envelopes:
        if env.type not in ("EvaluationCompleted", "EvaluationFailed") or env.payload.get("effect_id") not in requested:
            continue
        p = env.payload
        res = p.get("result") or {}
        req = requested[p.get("effect_id")].payload
        rows = [("effect", escape(str(p.get("effect_id")))), ("purpose", escape(str(req.get("purpose", "")))),
                ("score", escape(fmt_score(res.get("score")))), ("error", escape(str(res.get("is_error", "")))),
                ("exit code", escape(str(res.get("exit_code", "")))),
                ("duration", escape(f"{float(res.get('duration_seconds') or 0):.1f} s")),
                ("sandbox", escape(_policy(p.get("sandbox"))))]
        out = pre(res.get("stdout", "")) if res.get("stdout") else '<p class="muted">no standard output</p>'
        err = (f"<h3>standard error</h3>{pre(res['stderr'])}" if res.get("stderr") else "")
        trace = (f"<h3>traceback</h3>{pre(res['error_traceback'])}" if res.get("error_traceback") else "")
        if env.type == "EvaluationFailed":
            trace += pre(p)
        parts.append(f'<div class="eval" data-seq="{env.seq}">{kv(rows)}<h3>standard output</h3>{out}{err}{trace}</div>')
    return "".join(parts) or '<p class="muted">This solution was not evaluated (yet).</p>'


def _policy(policy: Any) -> str:
    if not isinstance(policy, dict):
        return "none recorded"
    return f"{policy.get('mode', '?')}, network {policy.get('network', '?')}"


def requests_shown(log: RunLog, sid: str) -> Callable[[Envelope], bool]:
    """Which agent call requests the page of solution ``sid`` shows whole (the one that wrote it):
    the run page reads prompts as references, fetched only for the page that shows them."""
    node = log.state.solutions.get(sid)
    recorded = next((e for e in log.envelopes if node is not None and e.seq == node.seq), None)
    cause = next((e for e in log.envelopes if recorded is not None and e.seq == recorded.causation_seq), None)
    effect = cause.payload.get("effect_id") if cause is not None and cause.type.startswith("AgentCall") else None
    return lambda env: effect is not None and env.type == "AgentCallRequested" and env.payload.get("effect_id") == effect


def _agent_call(log: RunLog, recorded: Envelope) -> str:
    by_seq = {e.seq: e for e in log.envelopes}
    cause = by_seq.get(recorded.causation_seq or -1)
    if cause is None or not cause.type.startswith("AgentCall"):
        kind = cause.type if cause is not None else "nothing recorded"
        return f'<p class="muted">Not written by an agent call (it follows {escape(kind)}).</p>'
    p = cause.payload
    effect = p.get("effect_id")
    req = next((e.payload for e in log.envelopes if e.type == "AgentCallRequested"
                and e.payload.get("effect_id") == effect), {})
    rows = [("effect", escape(str(effect))), ("agent", escape(str(req.get("agent_type", "")))),
            ("cost", escape("-" if p.get("cost_usd") is None else f"${float(p['cost_usd']):.4f}")),
            ("duration", escape(f"{float(p.get('duration_s') or 0):.2f} s")),
            ("tokens / usage", escape(json.dumps(p.get("usage", {}), ensure_ascii=False, default=str))),
            ("sandbox policy", escape(_policy(p.get("sandbox")))), ("seq", str(cause.seq))]
    parts = [kv(rows)]
    if req.get("system_prompt"):
        parts.append(f"<details><summary>system prompt</summary>{pre(req['system_prompt'])}</details>")
    parts.append(f"<details><summary>prompt ({len(str(req.get('prompt', '')))} characters)</summary>"
                 f"{pre(req.get('prompt', ''))}</details>")
    parts.append(f"<details open><summary>answer</summary>{pre(p.get('text', ''))}</details>")
    if p.get("structured"):
        parts.append(f"<details><summary>structured answer</summary>{pre(p['structured'])}</details>")
    return "".join(parts)


def _ablation(log: RunLog, sid: str) -> str:
    attempt = next((e for e in log.envelopes if e.type == "RefinementAttempted" and e.payload.get("solution_id") == sid),
                   None)
    if attempt is None:
        return ""
    step = attempt.payload.get("outer_step")
    same = [e for e in log.envelopes if e.scope == attempt.scope and e.payload.get("outer_step") == step]
    summ = next((e.payload for e in same if e.type == "AblationSummarized"), None)
    block = next((e.payload for e in same if e.type == "BlockExtracted"), None)
    parts = [kv([("outer step", escape(str(step))), ("inner step k", escape(str(attempt.payload.get("k")))),
                 ("plan", escape(str(attempt.payload.get("plan", ""))))])]
    if summ is not None:
        parts.append(f"<h3>ablation summary</h3>{pre(summ.get('summary', ''))}")
    if block is not None:
        parts.append(f"<h3>extracted block ({escape(str(block.get('match', '')))})</h3>"
                     f"{highlight(str(block.get('code_block', '')))}")
    return card("Ablation and extracted block", "".join(parts))


def solution_page(log: RunLog, sid: str, *, label: str) -> str | None:
    node = log.state.solutions.get(sid)
    if node is None:
        return None
    recorded = next(e for e in log.envelopes if e.seq == node.seq)
    lineage, _ = load_lineage(log)
    lnode = lineage.all_nodes.get(sid) if lineage else None
    parents = list(dict.fromkeys(node.parents))
    facts = kv([("origin", escape(node.origin)), ("phase", escape(node.phase)), ("scope", escape(node.scope)),
                ("score", escape(fmt_score(node.score))), ("source model", escape(node.source_model or "-")),
                ("parents", ", ".join(f'<a href="{escape(solution_href(log.run_id, p))}">{escape(p)}</a>'
                                      for p in parents) or "-"),
                ("recorded at seq", str(node.seq))])
    diffs = []
    for p in parents:
        parent = log.state.solutions.get(p)
        if parent is not None:
            diffs.append(f"<h3>against {escape(p)} ({escape(parent.origin)})</h3>"
                         + diff_html(parent.content, node.content, p, sid))
    decisions = lnode.decisions if lnode else []
    checks = [d for d in decisions if d["type"] == "SafetyCheckApplied"]
    others = [d for d in decisions if d["type"] != "SafetyCheckApplied"]

    def listing(items: list[dict[str, Any]], empty: str) -> str:
        return ("<ul>" + "".join(f"<li>{escape(describe_decision(d, 120))}</li>" for d in items) + "</ul>"
                if items else f'<p class="muted">{escape(empty)}</p>')

    body = (card("Solution", facts)
            + card("Script", highlight(node.content))
            + card("Diff against its parents", "".join(diffs) or '<p class="muted">No parent: a first draft.</p>')
            + card("Evaluations", _evaluations(log, sid))
            + card("Safety checks", listing(checks, "No safety check kept or replaced this solution."))
            + _ablation(log, sid)
            + card("The agent call that wrote it", _agent_call(log, recorded))
            + card("Decisions naming it", listing(others, "No decision names this solution.")))
    heading = (f'<h1>{escape(node.origin)} <span class="runid">{escape(sid)}</span></h1>'
               f'<div class="sub">run <a style="color:#fff" href="{escape(run_href(log.run_id))}">'
               f'{escape(log.run_id)}</a> · score {escape(fmt_score(node.score))}</div>')
    return page(f"{sid} · {log.run_id}", body, label=label, eyebrow="solution", heading=heading)
