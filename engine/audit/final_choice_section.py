"""The report's account of a run's held-back slice and the final chosen on it
(docs/final-choice-slice.md): what was held back or why nothing was, and every finalist's
validation score beside its held-back grade."""

from __future__ import annotations

from html import escape
from typing import Any

from engine.audit.runlog import RunLog


def _payloads(log: RunLog, type_name: str) -> list[dict[str, Any]]:
    return [e.payload for e in log.envelopes if e.type == type_name]


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.6g}"


def final_choice_section(log: RunLog) -> str | None:
    """The section's HTML; None for a run recorded before slices existed (nothing to say)."""
    drawn = _payloads(log, "HiddenSliceDrawn")
    if not drawn:
        return None
    slice_ = drawn[0]
    if not slice_.get("rows"):
        return f'<p>No rows were held back: {escape(str(slice_.get("reason", "")))}</p>'
    head = (f'<p>{slice_["rows"]:,} of the {slice_.get("of_rows", 0):,} training rows were held back from '
            "the search; the final was chosen among the finalists below by their grade on them.</p>")
    choices = _payloads(log, "FinalChoiceMade")
    if not choices:
        return head + '<p class="muted">No finalist was graded on them (yet): validation decides.</p>'
    choice = choices[-1]
    rows = "".join(
        f'<tr><td>{escape(str(f["origin"]))}</td><td>{escape(str(f["solution_id"]))}</td>'
        f'<td class="num">{_number(f.get("score"))}</td><td class="num">{_number(f.get("hidden_score"))}</td>'
        f'<td>{"chosen" if f["solution_id"] == choice["chosen"] else ""}'
        f'{" (validation pick)" if f["solution_id"] == choice["validation_best"] else ""}</td></tr>'
        for f in choice["finalists"])
    return (head + f'<p>{escape(str(choice["reason"]))}</p><table class="grid-table"><thead><tr><th>finalist</th>'
            '<th>solution</th><th>validation</th><th>held-back rows</th><th></th></tr></thead>'
            f"<tbody>{rows}</tbody></table>")


__all__ = ["final_choice_section"]
