from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

KNOWN = {"iris"}


@dataclass(frozen=True)
class Competition:
    id: str
    answers: Path


class Registry:
    def __init__(self, data_dir: Path | None = None) -> None:
        self.data_dir = data_dir

    def set_data_dir(self, data_dir: Path) -> Registry:
        return Registry(Path(data_dir))

    def get_competition(self, competition_id: str) -> Competition:
        if competition_id not in KNOWN or self.data_dir is None:
            raise ValueError(f"unknown competition {competition_id}")
        return Competition(competition_id, self.data_dir / competition_id / "prepared" / "private" / "test.csv")


registry = Registry()
