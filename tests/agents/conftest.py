"""Fixtures for the agent tests: the protocol-level fake ``claude`` CLI and a call context."""

from __future__ import annotations

import json
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from engine.agents.base import AgentContext
from events.domain import DataModality, MetricDirection, PipelineConfig, TaskDescription, TaskType

FAKE_CLI = Path(__file__).resolve().parents[1] / "fake_claude" / "fake_claude.py"
SECRET_KEY = "sk-ant-api03-FAKE-" + "x7Q" * 12  # looks like a key; only ever seen by the fake CLI


@dataclass
class FakeClaude:
    cli_path: Path
    script_path: Path
    record_dir: Path

    def script(self, *invocations: dict[str, Any]) -> None:
        self.script_path.write_text(json.dumps({"invocations": list(invocations)}))

    def records(self) -> list[dict[str, Any]]:
        files = sorted(self.record_dir.glob("record-*.json"), key=lambda p: int(p.stem.split("-")[1]))
        return [json.loads(p.read_text()) for p in files]

    def initialize_request(self, index: int = 0) -> dict[str, Any]:
        for message in self.records()[index]["stdin"]:
            if message.get("type") == "control_request" and message["request"]["subtype"] == "initialize":
                return message["request"]
        raise AssertionError("the SDK sent no initialize request")

    def argv(self, index: int = 0) -> list[str]:
        return self.records()[index]["argv"]

    def flag(self, name: str, index: int = 0) -> str | None:
        """The value of ``--name value`` or ``--name=value`` in the recorded argv."""
        argv = self.argv(index)
        for i, arg in enumerate(argv):
            if arg == name:
                return argv[i + 1] if i + 1 < len(argv) else ""
            if arg.startswith(name + "="):
                return arg.split("=", 1)[1]
        return None


@pytest.fixture
def fake_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeClaude:
    launcher = tmp_path / "bin" / "claude"
    launcher.parent.mkdir()
    fake = FakeClaude(launcher, tmp_path / "script.json", tmp_path / "records")
    # A launcher script made executable at test time: the SDK executes cli_path directly. The
    # fake's settings are in the script because the engine hands the CLI only the variables it needs.
    launcher.write_text(f'#!/bin/sh\nFAKE_CLAUDE_SCRIPT="{fake.script_path}" FAKE_CLAUDE_RECORD="{fake.record_dir}" '
                        f'exec "{sys.executable}" "{FAKE_CLI}" "$@"\n')
    launcher.chmod(launcher.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    monkeypatch.setenv("CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK", "1")
    return fake


@pytest.fixture
def task() -> TaskDescription:
    return TaskDescription(
        competition_id="penguins",
        task_type=TaskType.classification,
        data_modality=DataModality.tabular,
        evaluation_metric="accuracy",
        metric_direction=MetricDirection.maximize,
        description="Predict the species of each penguin from its measurements.",
    )


@pytest.fixture
def ctx(tmp_path: Path, task: TaskDescription) -> AgentContext:
    work = tmp_path / "run" / "work"
    data = tmp_path / "task" / "public"
    work.mkdir(parents=True)
    data.mkdir(parents=True)
    return AgentContext(
        run_id="run-1", run_dir=tmp_path / "run", work_dir=work, task=task, task_dir=data,
        config=PipelineConfig(), seed=0, gpu_info={"cuda_available": False, "gpu_count": 0, "gpu_names": []},
    )


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def secret_env() -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": SECRET_KEY}
