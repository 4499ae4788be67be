"""What the MLE-STAR run reports of itself: the diagnostics of a run that produced nothing usable
(REQ-OR-042) and the per-phase summaries of one that completed (REQ-OR-037/038, REQ-OR-030.5)."""

from __future__ import annotations

from typing import Any

from handlers.mlestar.phaserun import COMPLETED, SKIPPED, Ledger, PhaseOutcome
from handlers.timebudget import FINALIZATION, SEARCH_PHASES
from handlers.workflow import Workflow

PHASES = (*SEARCH_PHASES, FINALIZATION)


def diagnostics(wf: Workflow, ledger: Ledger, outcome: PhaseOutcome, start_s: float) -> dict[str, Any]:
    """REQ-OR-042: elapsed time, cost, last successful operation, partial results."""
    return {"failed_phase": outcome.phase, "status": outcome.status, "error": outcome.error,
            "phase_diagnostics": outcome.diagnostics, "elapsed_s": wf.now - start_s,
            "cost_usd": wf.cost_usd, "agent_calls": wf.agent_calls,
            "last_successful_operation": ledger.last_success or "run started",
            "partial_results": {"phases": {p: r.summary() for p, r in ledger.records.items()},
                                "best_solution": None}}


def summaries(wf: Workflow, ledger: Ledger, paths: int, stop_reason: str, best_score: float,
              finalization: dict[str, Any], start_s: float) -> dict[str, Any]:
    """REQ-OR-037/038 (per-phase cost and duration) and which phases ran (REQ-OR-030.5)."""
    records = ledger.records

    def rec(p: str, attr: str) -> float:
        r = records.get(p)
        return float(getattr(r, attr)) if r is not None else 0.0

    return {
        "phases": {p: records[p].summary() for p in PHASES if p in records},
        "cost_summary": {**{f"{p}_cost_usd": rec(p, "cost_usd") for p in PHASES},
                         "phase2_per_path_cost_usd": [wf.cost_in(f"phase2/path-{i}") for i in range(paths)],
                         "total_cost_usd": wf.cost_usd},
        "duration_summary": {**{f"{p}_duration_seconds": rec(p, "duration_s") for p in PHASES},
                             "total_duration_seconds": wf.now - start_s},
        "completed_phases": [p for p in PHASES if ledger.status(p) == COMPLETED],
        "skipped_phases": [p for p in PHASES if ledger.status(p) == SKIPPED],
        "stopped_early": stop_reason or None,
        "best_validation_score": best_score,
        "finalization": finalization,
    }
