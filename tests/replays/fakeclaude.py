"""The Claude backend wired to the protocol-level fake CLI, selectable for a recorded run.

``engine start --agent tests.replays.fakeclaude:backend`` builds the REAL ``ClaudeBackend`` (SDK,
options, hooks, structured output, retries, redaction) with ``cli_path`` pointing at a launcher
for ``tests/replays/fake_cli.py`` and a fake ``ANTHROPIC_API_KEY``: no network, no key, but every
agent call goes through the SDK's subprocess protocol exactly as with the real CLI.
``backend_merge_crash`` is the same model in the scenario where the Phase 1 merge crashes.
The recorded backend name is this dotted path, so ``engine resume`` rebuilds the same backend.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path

from events.domain import PipelineConfig

FAKE_CLI = Path(__file__).resolve().with_name("fake_cli.py")
FAKE_KEY = "sk-ant-api03-FAKE-replay-fixture-key-0000000000"


def launcher(scenario: str) -> Path:
    """An executable ``claude`` for ``scenario`` (the SDK executes ``cli_path`` directly)."""
    root = Path(tempfile.gettempdir()) / f"fake-claude-{os.getuid()}" / scenario
    root.mkdir(parents=True, exist_ok=True)
    path = root / "claude"
    text = f'#!/bin/sh\nCANNED_SCENARIO="{scenario}" exec "{sys.executable}" "{FAKE_CLI}" "$@"\n'
    if not path.exists() or path.read_text() != text:
        tmp = root / f".claude-{os.getpid()}"
        tmp.write_text(text)
        tmp.chmod(tmp.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        os.replace(tmp, path)
    return path


def _make(config: PipelineConfig, scenario: str):
    from engine.agents.claude.backend import ClaudeBackend

    class FakeCliBackend(ClaudeBackend):
        @property
        def base_url(self) -> str | None:
            """The fake CLI answers from its script and opens no connection: the start-up check
            has no endpoint to probe (recording works without a network)."""
            return None

    os.environ.setdefault("CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK", "1")
    # A scripted stand-in for the CLI (a script of this repository): run unsandboxed.
    return FakeCliBackend(config, env={"ANTHROPIC_API_KEY": FAKE_KEY}, cli_path=launcher(scenario), backoff=(),
                          sandbox="none")


def backend(config: PipelineConfig):
    return _make(config, "default")


def backend_merge_crash(config: PipelineConfig):
    return _make(config, "merge-crash")
