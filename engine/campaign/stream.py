"""What a campaign's stream says: the plan, each cell's run and how its attempts ended."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from events.base import Envelope
from events.campaign import CampaignCell

STREAM_PREFIX = "campaign:"


def stream_id(name: str) -> str:
    return f"{STREAM_PREFIX}{name}"


@dataclass
class CellState:
    cell: CampaignCell
    run_id: str | None = None
    attempts: int = 0
    failures: list[str] = field(default_factory=list)
    ended: str | None = None  # completed | failed | abandoned, once CampaignRunEnded is recorded
    reason: str = ""
    node: str = ""

    @property
    def open(self) -> bool:
        return self.ended is None


@dataclass
class CampaignState:
    name: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    cpus_per_run: float = 1.0
    gpus_per_run: float = 0.0
    cells: dict[str, CellState] = field(default_factory=dict)  # plan order (insertion order)
    last_seq: int = 0

    @property
    def planned(self) -> bool:
        return bool(self.name)

    @property
    def finished(self) -> bool:
        return self.planned and all(not c.open for c in self.cells.values())

    def open_cells(self) -> list[CellState]:
        return [c for c in self.cells.values() if c.open]


def fold_campaign(log: Iterable[Envelope]) -> CampaignState:
    state = CampaignState()
    for env in log:
        p = env.payload
        state.last_seq = env.seq
        if env.type == "CampaignStarted":
            state.name = p["name"]
            state.settings = dict(p.get("settings", {}))
            state.cpus_per_run = p.get("cpus_per_run", 1.0)
            state.gpus_per_run = p.get("gpus_per_run", 0.0)
            for raw in p["cells"]:
                cell = CampaignCell.model_validate(raw)
                state.cells[cell.key] = CellState(cell=cell)
        elif env.type == "CampaignRunCreated":
            state.cells[p["cell"]].run_id = p["run_id"]
        elif env.type == "CampaignAttemptFailed":
            c = state.cells[p["cell"]]
            c.attempts = max(c.attempts, p["attempt"])
            c.failures.append(p["reason"])
        elif env.type == "CampaignRunEnded":
            c = state.cells[p["cell"]]
            c.ended, c.reason, c.attempts, c.node = p["status"], p.get("reason", ""), p["attempts"], p.get("node", "")
    return state
