"""Running several kill plans of one recipe on a small thread pool."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.crash.harness import Recipe, kill_and_resume


def run_plans(recipe: Recipe, plans: list[list[int]], reference: list, root: Path, tmp_path: Path) -> None:
    def one(i_plan):
        i, plan = i_plan
        return kill_and_resume(recipe, plan, tmp_path / f"plan-{i}", reference, root)

    with ThreadPoolExecutor(max_workers=2) as pool:
        problems = [p for p in pool.map(one, enumerate(plans)) if p]
    assert not problems, "\n".join(problems)
