"""Fixtures for the builtin agent: synthetic tasks, a context, and running scripts for real."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from datasets import make_task

from engine.agents.base import AgentContext
from engine.agents.builtin import BuiltinBackend
from events.core import AgentCallCompleted, AgentCallFailed, AgentCallRequested
from events.domain import PipelineConfig

SCORE_RE = re.compile(r"Final Validation Performance:\s*([-+\d.eE]+)")


@dataclass
class Run:
    rc: int
    stdout: str
    stderr: str
    workdir: Path

    @property
    def score(self) -> float | None:
        found = SCORE_RE.findall(self.stdout)
        return float(found[-1]) if found else None

    @property
    def submission(self) -> pd.DataFrame:
        return pd.read_csv(self.workdir / "final" / "submission.csv")


class Env:
    """One synthetic task plus helpers to ask the builtin agent and run what it writes."""

    def __init__(self, name: str, root: Path, config: PipelineConfig | None = None) -> None:
        self.name = name
        self.root = root
        self.data_dir, self.task = make_task(name, root / "data")
        self.config = config or PipelineConfig(subsample_limit=30000)
        self.backend = BuiltinBackend()
        self.runs = 0

    def ctx(self, seed: int = 7) -> AgentContext:
        return AgentContext(run_id="t", run_dir=self.root, work_dir=self.root, task=self.task,
                            task_dir=self.data_dir, config=self.config, seed=seed)

    def ask(self, agent_type: str, variant: str | None = None, effect_id: str = "e-1", seed: int = 7, **variables):
        request = AgentCallRequested(effect_id=effect_id, agent_type=agent_type, variant=variant,
                                     prompt="(rendered prompt)", variables=variables)
        return self.backend.answer(request, self.ctx(seed))

    def ok(self, agent_type: str, variant: str | None = None, **variables) -> AgentCallCompleted:
        result = self.ask(agent_type, variant, **variables)
        assert isinstance(result, AgentCallCompleted), getattr(result, "error", result)
        return result

    def fails(self, agent_type: str, variant: str | None = None, **variables) -> AgentCallFailed:
        result = self.ask(agent_type, variant, **variables)
        assert isinstance(result, AgentCallFailed), result
        return result

    def run(self, code: str, timeout: int = 1800, env: dict[str, str | None] | None = None) -> Run:
        """The script run in a fresh working directory; ``env`` is laid over this process's
        environment, a None value unsetting its variable."""
        self.runs += 1
        workdir = self.root / f"run-{self.runs}"
        workdir.mkdir()
        (workdir / "final").mkdir()
        shutil.copytree(self.data_dir, workdir / "input")
        (workdir / "solution.py").write_text(code)
        proc = subprocess.run([sys.executable, "solution.py"], cwd=workdir, capture_output=True,
                              text=True, timeout=timeout, env=None if env is None else _laid_over(env))
        return Run(proc.returncode, proc.stdout, proc.stderr, workdir)

    def train(self) -> pd.DataFrame:
        return pd.read_csv(self.data_dir / "train.csv")


def _laid_over(env: dict[str, str | None]) -> dict[str, str]:
    merged = {**os.environ, **env}
    return {name: value for name, value in merged.items() if value is not None}


@pytest.fixture(scope="module")
def binary(tmp_path_factory) -> Env:
    # A cap below the 960 training rows, so the subsampling block really runs.
    return Env("binary", tmp_path_factory.mktemp("binary"), PipelineConfig(subsample_limit=800))


@pytest.fixture(scope="module")
def multiclass(tmp_path_factory) -> Env:
    return Env("multiclass", tmp_path_factory.mktemp("multiclass"))


@pytest.fixture(scope="module")
def regression(tmp_path_factory) -> Env:
    return Env("regression", tmp_path_factory.mktemp("regression"))
