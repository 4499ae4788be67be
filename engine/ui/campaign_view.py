"""A campaign as its page shows it, kept current cell by cell.

Each cell's row and failures are ``engine campaign report``'s own (engine/campaign/tally.py,
``build_report`` over that one cell: its run read and folded, graded once it completed), and
are worked out again only when the cell or its run moved; a live campaign page therefore costs
the runs that changed, not the whole grid, on every update.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.campaign.stream import CampaignState, CellState
from engine.campaign.tally import FailedRun, RunRow, build_report, mean_and_se
from engine.ui.runs import RunIndex


@dataclass(frozen=True)
class TaskScores:
    """One grid row's test scores over seeds (those graded so far)."""

    metric: str
    lower_is_better: bool
    mean: float | None
    se: float | None
    graded: int


@dataclass
class CampaignView:
    name: str
    rows: list[RunRow]
    failures: list[FailedRun]
    counts: dict[str, int]
    seq: int                      # moves whenever the campaign's stream or one of its runs does
    dims: list[str] = field(default_factory=list)   # strategy/preset/agent when the grid has several

    def key_of(self, row: RunRow) -> tuple[str, ...]:
        return (row.task, *(getattr(row, d) for d in self.dims))

    def scores(self) -> dict[tuple[str, ...], TaskScores]:
        by_key: dict[tuple[str, ...], list[RunRow]] = {}
        for r in self.rows:
            by_key.setdefault(self.key_of(r), []).append(r)
        out = {}
        for key, rows in by_key.items():
            graded = [r for r in rows if r.test_score is not None]
            mean, se = mean_and_se([r.test_score for r in graded if r.test_score is not None])
            out[key] = TaskScores(metric=next((r.metric for r in graded), ""),
                                  lower_is_better=any(r.lower_is_better for r in graded), mean=mean, se=se,
                                  graded=len(graded))
        return out


class CampaignCells:
    """The cached rows of the campaigns shown; one entry per cell ever shown (bounded by the plans)."""

    def __init__(self, index: RunIndex) -> None:
        self.index = index
        self._cells: dict[tuple[str, str], tuple[tuple[object, ...], RunRow, list[FailedRun]]] = {}

    def view(self, state: CampaignState) -> CampaignView:
        rows: list[RunRow] = []
        failures: list[FailedRun] = []
        seq = state.last_seq
        for cell in state.cells.values():
            run_seq = self.index.runs[cell.run_id].seq if cell.run_id in self.index.runs else 0
            seq += run_seq
            key = (cell.run_id, run_seq, cell.ended, cell.attempts, len(cell.failures))
            cached = self._cells.get((state.name, cell.cell.key))
            if cached is None or cached[0] != key:
                cached = (key, *self._one(state, cell))
                self._cells[(state.name, cell.cell.key)] = cached
            rows.append(cached[1])
            failures.extend(cached[2])
        counts: dict[str, int] = {}
        for r in rows:
            counts[r.status] = counts.get(r.status, 0) + 1
        dims = [k for k in ("strategy", "preset", "agent") if len({getattr(r, k) for r in rows}) > 1]
        return CampaignView(name=state.name, rows=rows, failures=failures, counts=counts, seq=seq, dims=dims)

    def _one(self, state: CampaignState, cell: CellState) -> tuple[RunRow, list[FailedRun]]:
        report = build_report(self.index.source, CampaignState(name=state.name, cells={cell.cell.key: cell}))
        return report.runs[0], list(report.failures)
