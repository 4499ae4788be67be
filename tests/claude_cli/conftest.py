"""Tests that run the REAL Claude Code CLI bundled in claude-agent-sdk against the Messages-API
stand-in on loopback (tests/support/messages_api.py). Nothing here talks to the internet."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.messages_api import MessagesAPIStandIn, Responder

REPO = Path(__file__).resolve().parents[2]
FAKE_KEY = "sk-ant-api03-standin-" + "k3y" * 10
MODEL = "claude-sonnet-4-5"  # a model the CLI knows the price of, so calls cost something


@pytest.fixture
def stand_in() -> Iterator[Any]:
    servers: list[MessagesAPIStandIn] = []

    def start(responder: Responder, **kwargs: Any) -> MessagesAPIStandIn:
        server = MessagesAPIStandIn(responder, **kwargs).__enter__()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.__exit__(None, None, None)


def engine_env(api_url: str, **extra: str) -> dict[str, str]:
    """The environment a user would have: a key, an endpoint, a model; nothing test-specific."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_", "ENGINE_"))}
    env.update(ANTHROPIC_API_KEY=FAKE_KEY, ANTHROPIC_BASE_URL=api_url, MLE_STAR_MODEL=MODEL,
               PYTHONPATH=str(REPO), NO_COLOR="1", **extra)
    return env


def engine(args: list[str], env: dict[str, str], *, timeout: float = 600, cwd: Path | None = None
           ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine.cli", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)


def events(db: Path, run_id: str) -> list[dict[str, Any]]:
    from store.sqlite import SQLiteEventStore

    store = SQLiteEventStore(db, create=False)
    return [{"type": e.type, "scope": e.scope, "seq": e.seq, **json.loads(json.dumps(e.payload))}
            for e in store.read(run_id)]
